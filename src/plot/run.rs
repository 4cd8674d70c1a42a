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
//! a change at a fault boundary is drawn exactly at the boundary.

use std::path::{Path, PathBuf};

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Area, DrawResult, Entry, Marker, PlotError, chart_height, dashed, draw_marker_at, font,
    legend_height, legend_row, line_style, nice_max, render, scenario_color, service_color,
    short_number, write,
};
use crate::metrics::{RunSummary, TimeSeries};

/// One scenario's run, as the figures read it.
pub type RunData<'a> = (&'a RunSummary, &'a TimeSeries);

const TITLE_H: u32 = 44;
const SHADE: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// The files [`run_plots`] writes, in order.
pub const FIGURES: [&str; 3] = ["success_rate.svg", "queue_length.svg", "amplification.svg"];

/// Writes the three run figures into `dir` (created if missing); returns the files written.
pub fn run_plots(dir: &Path, runs: &[RunData<'_>]) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Write {
        path: dir.to_owned(),
        source,
    })?;
    let figures = [
        (FIGURES[0], success_rate_svg(runs)?),
        (FIGURES[1], queue_length_svg(runs)?),
        (FIGURES[2], amplification_svg(runs)?),
    ];
    let mut written = Vec::new();
    for (name, svg) in figures {
        let path = dir.join(name);
        write(&path, &svg)?;
        written.push(path);
    }
    if runs.iter().any(|(_, ts)| !limit_columns(ts).is_empty()) {
        let path = dir.join(LIMIT_FIGURE);
        write(&path, &concurrency_limit_svg(runs)?)?;
        written.push(path);
    }
    Ok(written)
}

/// The figure [`run_plots`] adds when some run has a concurrency limiter.
pub const LIMIT_FIGURE: &str = "concurrency_limit.svg";

/// The concurrency-limit columns of a run (`services.<s>.limit`, `calls.<a>-><b>.limit`).
fn limit_columns(ts: &TimeSeries) -> Vec<&str> {
    ts.names().filter(|n| n.ends_with(".limit")).collect()
}

/// Each concurrency limiter's limit at the end of each bin, one line per scenario and limiter.
pub fn concurrency_limit_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "concurrency limit over time";
    check_nonempty(what, runs)?;
    let span = runs
        .iter()
        .map(|(_, ts)| ts.bin_start_s(ts.bins()))
        .fold(0.0, f64::max)
        .max(1e-9);
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
    let shaded = windows(runs);
    let bins = resolution_text(runs);
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
    let height = chart_height(legend_h);
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, bottom) = rest.split_vertically(height - TITLE_H - legend_h);
        title(
            &top,
            "Concurrency limit of each limiter (at the end of each bin)",
        )?;
        let mut chart = ChartBuilder::on(&body)
            .margin_right(24)
            .margin_left(8)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..span, 0.0..top_y)?;
        mesh_style(&mut chart)
            .x_desc(format!("simulated time (s; {bins})"))
            .y_desc("limit (requests in flight)")
            .y_label_formatter(&|v| short_number(*v))
            .draw()?;
        shade_windows(&mut chart, &shaded, (0.0, top_y), true)?;
        let mut k = 0;
        for (i, (_, ts)) in runs.iter().enumerate() {
            for c in limit_columns(ts) {
                let seg = steps(ts, c, 1.0, f64::INFINITY);
                let (color, marker) = (service_color(k), Some(Marker::of(i)));
                draw_steps(&mut chart, &seg, color, marker, dashed(i), (k, lines.len()))?;
                k += 1;
            }
        }
        legend_row(&bottom, &entries)
    })
}

/// Bins of a column as step segments `(t, v)`, split where the value is undefined, up to
/// `until_s`, with values multiplied by `scale`.
fn steps(ts: &TimeSeries, column: &str, scale: f64, until_s: f64) -> Vec<Vec<(f64, f64)>> {
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
                current.push((t, v * scale));
                current.push((end, v * scale));
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

/// Fault windows of the runs, each distinct one once.
fn windows(runs: &[RunData<'_>]) -> Vec<(f64, f64)> {
    let mut w: Vec<(f64, f64)> = runs
        .iter()
        .filter_map(|(s, _)| Some((s.metrics.fault_start_s?, s.metrics.fault_end_s?)))
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

/// The arrival period to show: up to the longest one among the runs.
fn arrival_span(runs: &[RunData<'_>]) -> f64 {
    runs.iter()
        .map(|(_, ts)| ts.arrivals_end_s())
        .fold(0.0, f64::max)
        .max(1e-9)
}

fn resolution_text(runs: &[RunData<'_>]) -> String {
    let res = runs[0].1.resolution();
    format!("{} bins", crate::time::SimDuration(res.0))
}

/// Success rate by arrival time, one line per scenario, the fault window shaded.
pub fn success_rate_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "success rate over time";
    check_nonempty(what, runs)?;
    let span = arrival_span(runs);
    let shaded = windows(runs);
    let bins = resolution_text(runs);
    let legend_h = legend_height(&scenario_entries(runs));
    let height = chart_height(legend_h);
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, bottom) = rest.split_vertically(height - TITLE_H - legend_h);
        title(
            &top,
            "Share of user requests that succeeded, by arrival time",
        )?;
        let mut chart = ChartBuilder::on(&body)
            .margin_right(24)
            .margin_left(8)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..span, -2.0..102.0)?;
        mesh_style(&mut chart)
            .x_desc(format!("arrival time of the user request (s; {bins})"))
            .y_desc("requests that succeeded (%)")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()?;
        shade_windows(&mut chart, &shaded, (-2.0, 102.0), true)?;
        // Last scenario first, so that a dashed line lies on the solid one it may coincide with.
        for (i, (_, ts)) in runs.iter().enumerate().rev() {
            let seg = steps(ts, "users.success_rate", 100.0, ts.arrivals_end_s());
            let (color, marker) = (scenario_color(i), Some(Marker::of(i)));
            draw_steps(&mut chart, &seg, color, marker, dashed(i), (i, runs.len()))?;
        }
        legend_row(&bottom, &scenario_entries(runs))
    })
}

/// Highest queue length per bin at each service, one panel per scenario.
pub fn queue_length_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "queue length over time";
    check_nonempty(what, runs)?;
    let span = runs
        .iter()
        .map(|(_, ts)| ts.bin_start_s(ts.bins()))
        .fold(0.0, f64::max)
        .max(1e-9);
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
    let height = TITLE_H + PANEL_H * runs.len() as u32 + legend_height(&service_entries);
    // One panel per scenario: each shades its own scenario's fault window, labelled in the
    // first panel that has one.
    let labelled = runs
        .iter()
        .position(|r| !windows(std::slice::from_ref(r)).is_empty());
    let bins = resolution_text(runs);
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, bottom) = rest.split_vertically(PANEL_H * runs.len() as u32);
        title(
            &top,
            "Requests waiting in each service's queue (highest in each bin)",
        )?;
        let panels = body.split_evenly((runs.len(), 1));
        for (p, ((summary, ts), panel)) in runs.iter().zip(&panels).enumerate() {
            let last = p + 1 == runs.len();
            let mut chart = ChartBuilder::on(panel)
                .margin_right(24)
                .margin_left(8)
                .margin_top(6)
                .x_label_area_size(if last { 44 } else { 22 })
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..span, (FLOOR..top_y).log_scale())?;
            let mut mesh = mesh_style(&mut chart);
            mesh.y_desc("queued (log)").y_label_formatter(&|v| {
                if *v < 1.0 {
                    "0".into()
                } else {
                    short_number(*v)
                }
            });
            if last {
                mesh.x_desc(format!(
                    "simulated time (s; {bins}); the line marks where arrivals stop"
                ));
            }
            mesh.draw()?;
            let shaded = windows(&runs[p..=p]);
            shade_windows(&mut chart, &shaded, (FLOOR, top_y), labelled == Some(p))?;
            let end = ts.arrivals_end_s();
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(end, FLOOR), (end, top_y)],
                RGBColor(0x77, 0x77, 0x77).stroke_width(1),
            )))?;
            for (k, s) in ts.services().iter().enumerate() {
                let color = service_color(services.iter().position(|x| x == s).unwrap_or(k));
                let mut seg = steps(ts, &format!("services.{s}.queue_max"), 1.0, f64::INFINITY);
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
                EmptyElement::at((span, top_y))
                    + Text::new(
                        summary.scenario.clone(),
                        (-8, 4),
                        font(15.0).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))?;
        }
        legend_row(&bottom, &service_entries)
    })
}

/// Arrivals at each service per user request arriving in the same bin, one panel per service.
pub fn amplification_svg(runs: &[RunData<'_>]) -> Result<String, PlotError> {
    let what = "amplification over time";
    check_nonempty(what, runs)?;
    let span = arrival_span(runs);
    let mut services: Vec<&str> = Vec::new();
    for (_, ts) in runs {
        for s in ts.services() {
            if !services.contains(&s.as_str()) {
                services.push(s);
            }
        }
    }
    const PANEL_H: u32 = 200;
    let height =
        TITLE_H + PANEL_H * services.len().max(1) as u32 + legend_height(&scenario_entries(runs));
    let shaded = windows(runs);
    let bins = resolution_text(runs);
    render(what, height, |root| {
        let (top, rest) = root.split_vertically(TITLE_H);
        let (body, bottom) = rest.split_vertically(PANEL_H * services.len().max(1) as u32);
        title(
            &top,
            "Attempts arriving at each service per user request (same bin)",
        )?;
        let panels = body.split_evenly((services.len().max(1), 1));
        for (p, (service, panel)) in services.iter().zip(&panels).enumerate() {
            let last = p + 1 == services.len();
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
                .x_label_area_size(if last { 44 } else { 22 })
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..span, 0.0..top_y)?;
            let mut mesh = mesh_style(&mut chart);
            mesh.y_desc("attempts / request")
                .y_label_formatter(&|v| short_number(*v));
            if last {
                mesh.x_desc(format!("simulated time (s; {bins})"));
            }
            mesh.draw()?;
            shade_windows(&mut chart, &shaded, (0.0, top_y), p == 0)?;
            for (i, (_, ts)) in runs.iter().enumerate().rev() {
                let seg = steps(ts, &column, 1.0, ts.arrivals_end_s());
                let (color, marker) = (scenario_color(i), Some(Marker::of(i)));
                draw_steps(&mut chart, &seg, color, marker, dashed(i), (i, runs.len()))?;
            }
            chart.draw_series(std::iter::once(
                EmptyElement::at((span, top_y))
                    + Text::new(
                        format!("at {service}"),
                        (-8, 4),
                        font(15.0).pos(Pos::new(HPos::Right, VPos::Top)),
                    ),
            ))?;
        }
        legend_row(&bottom, &scenario_entries(runs))
    })
}
