//! The figures of `loadsim run --plot DIR`, from each run's summary and time series:
//!
//! - `success_rate.svg`: the share of user requests that succeeded, by the bin they *arrived* in,
//!   one line per scenario, the fault window shaded — the article's story in one picture;
//! - `queue_length.svg`: the highest queue length in each bin at every service, one panel per
//!   scenario (small multiples on one shared logarithmic axis, so panels compare);
//! - `amplification.svg`: arrivals at each service per user request arriving in the same bin,
//!   one panel per service, one line per scenario;
//! - `concurrency_limit.svg`, only when some run has a concurrency limiter: each limiter's limit
//!   at the end of each bin, one line per scenario and limiter.
//!
//! Values are drawn as steps over their bins (a bin's value holds from its start to its end), so
//! a change at a fault boundary is drawn exactly at the boundary. Time is in s, min or h by the
//! span shown ([`super::time_axis`]), and under every chart a strip shows the offered load —
//! user arrivals per second in each bin, from the run's own `users.arrivals` — on the same time
//! axis, which carries the axis title.
//!
//! `run --html` adds, from the same runs, a success-rate figure per request class
//! ([`class_success_rate_svg`]) and per service of more than one replica a figure of each
//! replica's requests in flight and queued ([`replica_levels_svg`]).

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::time_axis::TimeAxis;
use super::{
    Area, DrawResult, Entry, Marker, PlotError, chart_height, dashed, draw_marker_at, font,
    legend_height, legend_row, line_style, nice_max, render, scenario_color, service_color,
    short_number,
};
use crate::metrics::{RunSummary, TimeSeries};

/// One scenario's run, as the figures read it.
pub type RunData<'a> = (&'a RunSummary, &'a TimeSeries);

const TITLE_H: u32 = 44;
const SHADE: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// The figures of `run --plot` as SVG documents (their files are named by the exporter's
/// [`crate::runner::export::RUN_PLOT`]).
#[derive(Debug, Clone)]
pub struct RunFigures {
    /// `success_rate.svg`: the share of user requests that succeeded, by arrival bin.
    pub success_rate: String,
    /// `queue_length.svg`: each service's highest queue length per bin, a panel per scenario.
    pub queue_length: String,
    /// `amplification.svg`: arrivals at each service per user request, a panel per service.
    pub amplification: String,
    /// Drawn only when some run has a concurrency limiter.
    pub concurrency_limit: Option<String>,
}

/// Draws the figures of `run --plot`.
pub fn run_figures(runs: &[RunData<'_>]) -> Result<RunFigures, PlotError> {
    Ok(RunFigures {
        success_rate: success_rate_svg(runs)?,
        queue_length: queue_length_svg(runs)?,
        amplification: amplification_svg(runs)?,
        concurrency_limit: if runs.iter().any(|(_, ts)| !limit_columns(ts).is_empty()) {
            Some(concurrency_limit_svg(runs)?)
        } else {
            None
        },
    })
}

/// The concurrency-limit columns of a run (`services.<s>.limit`, `calls.<a>-><b>.limit`).
fn limit_columns(ts: &TimeSeries) -> Vec<&str> {
    ts.names().filter(|n| n.ends_with(".limit")).collect()
}

/// Each concurrency limiter's limit at the end of each bin, one line per scenario and limiter.
pub fn concurrency_limit_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "concurrency limit over time";
    check_nonempty(what, runs)?;
    let axis = TimeAxis::for_span(run_span(runs));
    let peak = runs
        .iter()
        .flat_map(|(_, ts)| {
            limit_columns(ts)
                .into_iter()
                .filter_map(|c| ts.get(c))
                .flat_map(|c| c.iter().flatten().copied())
        })
        .fold(0.0, f64::max);
    let top_y = nice_max(peak, 10.0);
    let shaded = windows(runs, &axis);
    let lines: Vec<(usize, String)> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, (s, ts))| {
            limit_columns(ts).into_iter().map(move |c| {
                let name = c.trim_end_matches(".limit");
                (i, format!("{}: {name}", s.scenario))
            })
        })
        .collect();
    let entries: Vec<Entry<'_>> = lines
        .iter()
        .enumerate()
        .map(|(k, (i, name))| Entry {
            name,
            color: service_color(k),
            marker: Some(Marker::of(*i)),
            dashed: dashed(*i),
        })
        .collect();
    let legend_h = legend_height(&entries);
    let height = chart_height(legend_h) + STRIP_H;
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, rest) = rest.split_vertically(height - TITLE_H - legend_h - STRIP_H);
        let (strip, bottom) = rest.split_vertically(STRIP_H);
        title(
            &top,
            "Concurrency limit of each limiter (at the end of each bin)",
        )?;
        let mut chart = ChartBuilder::on(&body)
            .margin_right(24)
            .margin_left(8)
            .x_label_area_size(TICKS_H)
            .y_label_area_size(64)
            .build_cartesian_2d(axis.range(), 0.0..top_y)?;
        mesh_style(&mut chart)
            .y_desc("limit (requests in flight)")
            .y_label_formatter(&|v| short_number(*v))
            .draw()?;
        shade_windows(&mut chart, &shaded, (0.0, top_y), true)?;
        let mut k = 0;
        for (i, (_, ts)) in runs.iter().enumerate() {
            for c in limit_columns(ts) {
                let seg = steps(ts, c, 1.0, f64::INFINITY, &axis);
                let (color, marker) = (service_color(k), Some(Marker::of(i)));
                draw_steps(&mut chart, &seg, color, marker, dashed(i), (k, lines.len()))?;
                k += 1;
            }
        }
        let desc = format!("simulated time ({})", time_desc(runs, &axis));
        arrival_strip(&strip, runs, &axis, &desc)?;
        legend_row(&bottom, &entries)
    })
}

/// Bins of a column as step segments `(t, v)` (`t` on `axis`), split where the value is
/// undefined, up to `until_s` seconds, with values multiplied by `scale`.
fn steps(
    ts: &TimeSeries,
    column: &str,
    scale: f64,
    until_s: f64,
    axis: &TimeAxis,
) -> Vec<Vec<(f64, f64)>> {
    let Some(values) = ts.get(column) else {
        return Vec::new();
    };
    let width = ts.resolution().as_secs_f64();
    let mut segments = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for (k, v) in values.iter().enumerate() {
        let t = ts.bin_start_s(k);
        match v {
            Some(v) if t < until_s => {
                let end = (t + width).min(until_s);
                current.push((axis.x(t), v * scale));
                current.push((axis.x(end), v * scale));
            }
            _ => {
                if !current.is_empty() {
                    segments.push(std::mem::take(&mut current));
                }
            }
        }
    }
    if !current.is_empty() {
        segments.push(current);
    }
    segments
}

/// Fault windows of the runs, each distinct one once, on `axis`.
fn windows(runs: &[RunData<'_>], axis: &TimeAxis) -> Vec<(f64, f64)> {
    let mut w: Vec<(f64, f64)> = runs
        .iter()
        .filter_map(|(s, _)| {
            Some((
                axis.x(s.metrics.fault_start_s?),
                axis.x(s.metrics.fault_end_s?),
            ))
        })
        .collect();
    w.sort_by(|a, b| a.partial_cmp(b).expect("finite window bounds"));
    w.dedup();
    w
}

fn mesh_style<'a, 'b, X, Y>(
    chart: &'b mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
) -> MeshStyle<'a, 'b, X, Y, SVGBackend<'a>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    mesh.axis_desc_style(font(14.0))
        .x_label_formatter(&|v| short_number(*v))
        .label_style(font(13.0))
        .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD));
    mesh
}

/// Shades each fault window over `[y0, y1]` and labels the first.
fn shade_windows<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    windows: &[(f64, f64)],
    (y0, y1): (f64, f64),
    label: bool,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, &(from, to)) in windows.iter().enumerate() {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, y0), (to, y1)],
            SHADE.mix(0.18).filled(),
        )))?;
        if label && i == 0 {
            chart.draw_series(std::iter::once(
                EmptyElement::at((from, y1))
                    + Text::new(
                        "fault window",
                        (6, 4),
                        font(13.0)
                            .color(&RGBColor(0x55, 0x55, 0x55))
                            .pos(Pos::new(HPos::Left, VPos::Top)),
                    ),
            ))?;
        }
    }
    Ok(())
}

/// Draws step segments of one series with markers spread over them (offset by `slot` of
/// `slots`, so overlapping lines show each marker).
#[allow(clippy::too_many_arguments)]
fn draw_steps<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    segments: &[Vec<(f64, f64)>],
    color: RGBColor,
    marker: Option<Marker>,
    dashed: bool,
    (slot, slots): (usize, usize),
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for seg in segments {
        if dashed {
            chart.draw_series(DashedLineSeries::new(
                seg.iter().copied(),
                6,
                5,
                line_style(color),
            ))?;
        } else {
            chart.draw_series(LineSeries::new(seg.iter().copied(), line_style(color)))?;
        }
    }
    let Some(marker) = marker else {
        return Ok(());
    };
    // Steps come in pairs (bin start, bin end); a marker sits at the middle of every `stride`-th
    // bin, bins numbered across all segments.
    let mids: Vec<(f64, f64)> = segments
        .iter()
        .flat_map(|seg| seg.chunks(2).map(|p| ((p[0].0 + p[1].0) / 2.0, p[0].1)))
        .collect();
    let stride = (mids.len() / 10).max(1);
    let offset = slot * stride / slots.max(1);
    for &p in mids.iter().skip(offset).step_by(stride) {
        draw_marker_at(chart, marker, color, p)?;
    }
    Ok(())
}

fn title(area: &Area<'_>, text: &str) -> DrawResult {
    area.draw(&Text::new(
        text.to_owned(),
        (14, (TITLE_H / 2) as i32),
        font(18.0).pos(Pos::new(HPos::Left, VPos::Center)),
    ))?;
    Ok(())
}

fn scenario_entries<'a>(runs: &'a [RunData<'_>]) -> Vec<Entry<'a>> {
    runs.iter()
        .enumerate()
        .map(|(i, (s, _))| Entry {
            name: s.scenario.as_str(),
            color: scenario_color(i),
            marker: Some(Marker::of(i)),
            dashed: dashed(i),
        })
        .collect()
}

fn check_nonempty(what: &str, runs: &[RunData<'_>]) -> Result<(), PlotError> {
    if runs.is_empty() {
        return Err(PlotError::Input {
            what: what.to_owned(),
            why: "no runs to plot".to_owned(),
        });
    }
    Ok(())
}

/// The arrival period to show, in seconds: up to the longest one among the runs.
fn arrival_span(runs: &[RunData<'_>]) -> f64 {
    runs.iter()
        .map(|(_, ts)| ts.arrivals_end_s())
        .fold(0.0, f64::max)
        .max(1e-9)
}

/// The whole span of the runs' bins, in seconds (arrivals and drain).
fn run_span(runs: &[RunData<'_>]) -> f64 {
    runs.iter()
        .map(|(_, ts)| ts.bin_start_s(ts.bins()))
        .fold(0.0, f64::max)
        .max(1e-9)
}

fn resolution_text(runs: &[RunData<'_>]) -> String {
    let res = runs[0].1.resolution();
    format!("{} bins", crate::time::SimDuration(res.0))
}

/// The unit and bin width of a time axis title: `s; 1s bins`, `h; 1m bins`.
fn time_desc(runs: &[RunData<'_>], axis: &TimeAxis) -> String {
    format!("{}; {}", axis.unit.symbol(), resolution_text(runs))
}

/// Height of the offered-load strip under each time chart, its time axis included.
pub const STRIP_H: u32 = 120;
/// Height of the tick labels of a time axis whose title is on the strip below it.
const TICKS_H: u32 = 22;
/// The strip's fill and its line where every run has the same arrivals.
const STRIP_GREY: RGBColor = RGBColor(0x77, 0x77, 0x77);
/// The label of the strip (tests look for it).
pub const STRIP_LABEL: &str = "offered load: user arrivals per second";

/// Draws the offered load on `axis` in `area`: each run's `users.arrivals` per second of bin, as
/// one grey area where every run has the same arrivals (common random numbers make that the
/// rule for open-loop arrivals), else one line per run in its scenario colour. The strip carries
/// the time axis's title `x_desc`.
fn arrival_strip(
    area: &Area<'_>,
    runs: &[RunData<'_>],
    axis: &TimeAxis,
    x_desc: &str,
) -> DrawResult {
    let rates: Vec<Vec<Vec<(f64, f64)>>> = runs
        .iter()
        .map(|(_, ts)| {
            let per_s = 1.0 / ts.resolution().as_secs_f64();
            steps(ts, "users.arrivals", per_s, ts.arrivals_end_s(), axis)
        })
        .collect();
    let same = rates.windows(2).all(|w| w[0] == w[1]);
    let shown = if same { &rates[..1] } else { &rates[..] };
    let peak = shown
        .iter()
        .flatten()
        .flatten()
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let top_y = nice_max(peak, 1.0);
    let mut chart = ChartBuilder::on(area)
        .margin_right(24)
        .margin_left(8)
        .margin_top(18)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(axis.range(), 0.0..top_y)?;
    mesh_style(&mut chart)
        .x_desc(x_desc)
        .y_desc("arrivals/s")
        .y_labels(3)
        .y_label_formatter(&|v| short_number(*v))
        .draw()?;
    for (i, segments) in shown.iter().enumerate() {
        let color = if same { STRIP_GREY } else { scenario_color(i) };
        for seg in segments {
            let mut outline = seg.clone();
            if let (Some(first), Some(last)) = (seg.first(), seg.last()) {
                outline.push((last.0, 0.0));
                outline.push((first.0, 0.0));
            }
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                color.mix(if same { 0.3 } else { 0.08 }).filled(),
            )))?;
        }
        draw_steps(
            &mut chart,
            segments,
            color,
            None,
            !same && dashed(i),
            (i, shown.len()),
        )?;
    }
    let label = if same {
        STRIP_LABEL.to_owned()
    } else {
        format!("{STRIP_LABEL} (one line per scenario)")
    };
    // Above the plotting area (which starts after the left margin and the y labels).
    area.draw(&Text::new(
        label,
        (8 + 64 + 4, 3),
        font(12.0)
            .color(&RGBColor(0x44, 0x44, 0x44))
            .pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    Ok(())
}

/// Success rate by arrival time, one line per scenario, the fault window shaded.
pub fn success_rate_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    share_svg(
        runs,
        "users.success_rate",
        "success rate over time",
        "Share of user requests that succeeded, by arrival time",
    )
}

/// The request classes of the runs (those with more than one), each once, in order of
/// appearance: the classes [`class_success_rate_svg`] can draw.
pub fn classes(runs: &[RunData<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, ts) in runs {
        for name in ts.names() {
            if let Some(c) = name
                .strip_prefix("classes.")
                .and_then(|n| n.strip_suffix(".success_rate"))
                && !out.iter().any(|x| x == c)
            {
                out.push(c.to_owned());
            }
        }
    }
    out
}

/// Request class `class`'s success rate by arrival time (`classes.<class>.success_rate`), one
/// line per scenario that has the class, the fault window shaded.
pub fn class_success_rate_svg(runs: &[RunData<'_>], class: &str) -> Result<String, PlotError> {
    let column = format!("classes.{class}.success_rate");
    let with: Vec<RunData<'_>> = runs
        .iter()
        .filter(|(_, ts)| ts.get(&column).is_some())
        .copied()
        .collect();
    share_svg(
        &with,
        &column,
        &format!("success rate of class {class} over time"),
        &format!("Share of class `{class}`'s requests that succeeded, by arrival time"),
    )
}

/// A share (`column`, in [0, 1]) by arrival time, one line per scenario, the fault window
/// shaded.
fn share_svg(
    runs: &[RunData<'_>],
    column: &str,
    what: &str,
    heading: &str,
) -> Result<String, PlotError> {
    check_nonempty(what, runs)?;
    let axis = TimeAxis::for_span(arrival_span(runs));
    let shaded = windows(runs, &axis);
    let legend_h = legend_height(&scenario_entries(runs));
    let height = chart_height(legend_h) + STRIP_H;
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, rest) = rest.split_vertically(height - TITLE_H - legend_h - STRIP_H);
        let (strip, bottom) = rest.split_vertically(STRIP_H);
        title(&top, heading)?;
        let mut chart = ChartBuilder::on(&body)
            .margin_right(24)
            .margin_left(8)
            .x_label_area_size(TICKS_H)
            .y_label_area_size(64)
            .build_cartesian_2d(axis.range(), -2.0..102.0)?;
        mesh_style(&mut chart)
            .y_desc("requests that succeeded (%)")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        shade_windows(&mut chart, &shaded, (-2.0, 102.0), true)?;
        // Last scenario first, so that a dashed line lies on the solid one it may coincide with.
        for (i, (_, ts)) in runs.iter().enumerate().rev() {
            let seg = steps(ts, column, 100.0, ts.arrivals_end_s(), &axis);
            let (color, marker) = (scenario_color(i), Some(Marker::of(i)));
            draw_steps(&mut chart, &seg, color, marker, dashed(i), (i, runs.len()))?;
        }
        let desc = format!(
            "arrival time of the user request ({})",
            time_desc(runs, &axis)
        );
        arrival_strip(&strip, runs, &axis, &desc)?;
        legend_row(&bottom, &scenario_entries(runs))
    })
}

/// Highest queue length per bin at each service, one panel per scenario.
pub fn queue_length_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "queue length over time";
    check_nonempty(what, runs)?;
    let axis = TimeAxis::for_span(run_span(runs));
    let mut services: Vec<&str> = Vec::new();
    for (_, ts) in runs {
        for s in ts.services() {
            if !services.contains(&s.as_str()) {
                services.push(s);
            }
        }
    }
    let peak = runs
        .iter()
        .flat_map(|(_, ts)| {
            ts.services()
                .iter()
                .filter_map(|s| ts.get(&format!("services.{s}.queue_max")))
                .flat_map(|c| c.iter().flatten().copied())
        })
        .fold(0.0, f64::max);
    let top_y = nice_max(peak, 10.0) * 2.0;
    const FLOOR: f64 = 0.7;
    const PANEL_H: u32 = 210;
    let service_entries: Vec<Entry<'_>> = services
        .iter()
        .enumerate()
        .map(|(k, s)| Entry {
            name: s,
            color: service_color(k),
            marker: None,
            dashed: false,
        })
        .collect();
    let height = TITLE_H + PANEL_H * runs.len() as u32 + STRIP_H + legend_height(&service_entries);
    // One panel per scenario: each shades its own scenario's fault window, labelled in the
    // first panel that has one.
    let labelled = runs
        .iter()
        .position(|r| !windows(std::slice::from_ref(r), &axis).is_empty());
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, rest) = rest.split_vertically(PANEL_H * runs.len() as u32);
        let (strip, bottom) = rest.split_vertically(STRIP_H);
        title(
            &top,
            "Requests waiting in each service's queue (highest in each bin)",
        )?;
        let panels = body.split_evenly((runs.len(), 1));
        for (p, ((summary, ts), panel)) in runs.iter().zip(&panels).enumerate() {
            let mut chart = ChartBuilder::on(panel)
                .margin_right(24)
                .margin_left(8)
                .margin_top(6)
                .x_label_area_size(TICKS_H)
                .y_label_area_size(64)
                .build_cartesian_2d(axis.range(), (FLOOR..top_y).log_scale())?;
            let mut mesh = mesh_style(&mut chart);
            mesh.y_desc("queued (log)").y_label_formatter(&|v| {
                if *v < 1.0 {
                    "0".into()
                } else {
                    short_number(*v)
                }
            });
            mesh.draw()?;
            let shaded = windows(&runs[p..=p], &axis);
            shade_windows(&mut chart, &shaded, (FLOOR, top_y), labelled == Some(p))?;
            let end = axis.x(ts.arrivals_end_s());
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(end, FLOOR), (end, top_y)],
                RGBColor(0x77, 0x77, 0x77).stroke_width(1),
            )))?;
            for (k, s) in ts.services().iter().enumerate() {
                let color = service_color(services.iter().position(|x| x == s).unwrap_or(k));
                let mut seg = steps(
                    ts,
                    &format!("services.{s}.queue_max"),
                    1.0,
                    f64::INFINITY,
                    &axis,
                );
                for part in &mut seg {
                    for pt in part.iter_mut() {
                        pt.1 = pt.1.max(FLOOR);
                    }
                }
                draw_steps(
                    &mut chart,
                    &seg,
                    color,
                    None,
                    false,
                    (k, ts.services().len()),
                )?;
            }
            chart.draw_series(std::iter::once(
                EmptyElement::at((axis.end, top_y))
                    + Text::new(
                        summary.scenario.clone(),
                        (-8, 4),
                        font(15.0).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))?;
        }
        let desc = format!(
            "simulated time ({}); the line marks where arrivals stop",
            time_desc(runs, &axis)
        );
        arrival_strip(&strip, runs, &axis, &desc)?;
        legend_row(&bottom, &service_entries)
    })
}

/// Arrivals at each service per user request arriving in the same bin, one panel per service.
pub fn amplification_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "amplification over time";
    check_nonempty(what, runs)?;
    let axis = TimeAxis::for_span(arrival_span(runs));
    let mut services: Vec<&str> = Vec::new();
    for (_, ts) in runs {
        for s in ts.services() {
            if !services.contains(&s.as_str()) {
                services.push(s);
            }
        }
    }
    const PANEL_H: u32 = 200;
    let height = TITLE_H
        + PANEL_H * services.len().max(1) as u32
        + STRIP_H
        + legend_height(&scenario_entries(runs));
    let shaded = windows(runs, &axis);
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, rest) = rest.split_vertically(PANEL_H * services.len().max(1) as u32);
        let (strip, bottom) = rest.split_vertically(STRIP_H);
        title(
            &top,
            "Attempts arriving at each service per user request (same bin)",
        )?;
        let panels = body.split_evenly((services.len().max(1), 1));
        for (p, (service, panel)) in services.iter().zip(&panels).enumerate() {
            let column = format!("services.{service}.attempts_per_request");
            let peak = runs
                .iter()
                .filter_map(|(_, ts)| ts.get(&column))
                .flat_map(|c| c.iter().flatten().copied())
                .fold(0.0, f64::max);
            let top_y = nice_max(peak, 1.0);
            let mut chart = ChartBuilder::on(panel)
                .margin_right(24)
                .margin_left(8)
                .margin_top(6)
                .x_label_area_size(TICKS_H)
                .y_label_area_size(64)
                .build_cartesian_2d(axis.range(), 0.0..top_y)?;
            let mut mesh = mesh_style(&mut chart);
            mesh.y_desc("attempts / request")
                .y_label_formatter(&|v| short_number(*v));
            mesh.draw()?;
            shade_windows(&mut chart, &shaded, (0.0, top_y), p == 0)?;
            for (i, (_, ts)) in runs.iter().enumerate().rev() {
                let seg = steps(ts, &column, 1.0, ts.arrivals_end_s(), &axis);
                let (color, marker) = (scenario_color(i), Some(Marker::of(i)));
                draw_steps(&mut chart, &seg, color, marker, dashed(i), (i, runs.len()))?;
            }
            chart.draw_series(std::iter::once(
                EmptyElement::at((axis.end, top_y))
                    + Text::new(
                        format!("at {service}"),
                        (-8, 4),
                        font(15.0).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))?;
        }
        let desc = format!("simulated time ({})", time_desc(runs, &axis));
        arrival_strip(&strip, runs, &axis, &desc)?;
        legend_row(&bottom, &scenario_entries(runs))
    })
}

/// The services of the runs that have replica series (`services.<s>.replica.<k>.busy_mean`),
/// each once, in order of appearance: the services [`replica_levels_svg`] can draw.
pub fn replicated_services(runs: &[RunData<'_>]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, ts) in runs {
        for s in ts.services() {
            if !replica_labels(ts, s).is_empty() && !out.contains(s) {
                out.push(s.clone());
            }
        }
    }
    out
}

/// The replica labels of service `s` in a run's series: `0`, `1`, … or `min`, `mean`, `max`.
fn replica_labels(ts: &TimeSeries, s: &str) -> Vec<String> {
    let prefix = format!("services.{s}.replica.");
    ts.names()
        .filter_map(|n| n.strip_prefix(&prefix)?.strip_suffix(".busy_mean"))
        .map(str::to_owned)
        .collect()
}

/// Each replica of `service`: requests in flight (in service or queued, the time average over
/// each bin: `busy_mean + queue_mean`) and queued (`queue_mean`), two panels per run that has
/// the service's replica series, one line per replica (or the lowest, mean and highest over
/// replicas for a service of more than
/// [`MAX_REPLICA_SERIES`](crate::metrics::timeseries::MAX_REPLICA_SERIES)).
pub fn replica_levels_svg(runs: &[RunData<'_>], service: &str) -> Result<String, PlotError> {
    let what = format!("replicas of {service} over time");
    let with: Vec<RunData<'_>> = runs
        .iter()
        .filter(|(_, ts)| !replica_labels(ts, service).is_empty())
        .copied()
        .collect();
    check_nonempty(&what, &with)?;
    let runs = &with[..];
    let axis = TimeAxis::for_span(run_span(runs));
    let mut labels: Vec<String> = Vec::new();
    for (_, ts) in runs {
        for l in replica_labels(ts, service) {
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
    }
    let names: Vec<String> = labels
        .iter()
        .map(|l| match l.as_str() {
            "min" | "mean" | "max" => format!("{l} over replicas"),
            k => format!("replica {k}"),
        })
        .collect();
    let entries: Vec<Entry<'_>> = names
        .iter()
        .enumerate()
        .map(|(k, name)| Entry {
            name,
            color: service_color(k),
            marker: Some(Marker::of(k)),
            dashed: k >= 8,
        })
        .collect();
    // Per run and replica: [in flight, queued], each as step segments.
    let series: Vec<Vec<[Segments; 2]>> = runs
        .iter()
        .map(|(_, ts)| {
            labels
                .iter()
                .map(|l| {
                    let base = format!("services.{service}.replica.{l}");
                    let busy = ts.get(&format!("{base}.busy_mean"));
                    let queue = ts.get(&format!("{base}.queue_mean"));
                    let in_flight = match (busy, queue) {
                        (Some(b), Some(q)) => in_flight_steps(ts, b, q, &axis),
                        _ => Vec::new(),
                    };
                    let queued =
                        steps(ts, &format!("{base}.queue_mean"), 1.0, f64::INFINITY, &axis);
                    [in_flight, queued]
                })
                .collect()
        })
        .collect();
    let peak = |k: usize| {
        series
            .iter()
            .flatten()
            .flat_map(|pair| pair[k].iter().flatten().map(|p| p.1))
            .fold(0.0, f64::max)
    };
    let tops = [nice_max(peak(0), 1.0), nice_max(peak(1), 1.0)];
    const PANEL_H: u32 = 180;
    let legend_h = legend_height(&entries);
    let panels_n = 2 * runs.len() as u32;
    let height = TITLE_H + PANEL_H * panels_n + STRIP_H + legend_h;
    render(&what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, rest) = rest.split_vertically(PANEL_H * panels_n);
        let (strip, bottom) = rest.split_vertically(STRIP_H);
        title(
            &top,
            &format!("Requests in flight and queued at each replica of {service} (bin means)"),
        )?;
        let panels = body.split_evenly((panels_n as usize, 1));
        for (p, panel) in panels.iter().enumerate() {
            let (run, level) = (p / 2, p % 2);
            let (summary, _) = runs[run];
            let top_y = tops[level];
            let mut chart = ChartBuilder::on(panel)
                .margin_right(24)
                .margin_left(8)
                .margin_top(6)
                .x_label_area_size(TICKS_H)
                .y_label_area_size(64)
                .build_cartesian_2d(axis.range(), 0.0..top_y)?;
            let mut mesh = mesh_style(&mut chart);
            mesh.y_desc(if level == 0 { "in flight" } else { "queued" })
                .y_label_formatter(&|v| short_number(*v));
            mesh.draw()?;
            let shaded = windows(std::slice::from_ref(&runs[run]), &axis);
            shade_windows(&mut chart, &shaded, (0.0, top_y), p == 0)?;
            for (k, pair) in series[run].iter().enumerate() {
                let e = &entries[k];
                draw_steps(
                    &mut chart,
                    &pair[level],
                    e.color,
                    e.marker,
                    e.dashed,
                    (k, labels.len()),
                )?;
            }
            chart.draw_series(std::iter::once(
                EmptyElement::at((axis.end, top_y))
                    + Text::new(
                        format!(
                            "{}: {}",
                            summary.scenario,
                            if level == 0 { "in flight" } else { "queued" }
                        ),
                        (-8, 4),
                        font(15.0).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))?;
        }
        let desc = format!("simulated time ({})", time_desc(runs, &axis));
        arrival_strip(&strip, runs, &axis, &desc)?;
        legend_row(&bottom, &entries)
    })
}

/// A series drawn as steps: segments of `(t, value)` points, split where it is undefined.
type Segments = Vec<Vec<(f64, f64)>>;

/// `busy + queue` bin by bin as step segments on `axis` (undefined where either is).
fn in_flight_steps(
    ts: &TimeSeries,
    busy: &[Option<f64>],
    queue: &[Option<f64>],
    axis: &TimeAxis,
) -> Vec<Vec<(f64, f64)>> {
    let width = ts.resolution().as_secs_f64();
    let mut segments = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for (k, (b, q)) in busy.iter().zip(queue).enumerate() {
        match (b, q) {
            (Some(b), Some(q)) => {
                let t = ts.bin_start_s(k);
                current.push((axis.x(t), b + q));
                current.push((axis.x(t + width), b + q));
            }
            _ => {
                if !current.is_empty() {
                    segments.push(std::mem::take(&mut current));
                }
            }
        }
    }
    if !current.is_empty() {
        segments.push(current);
    }
    segments
}
