//! Sweep figures, for `loadsim sweep` (beside its `results.md`) and for phase diagrams:
//!
//! - [`sensitivity_svg`]: one sensitivity table as a line chart — a metric against the swept
//!   axis value, one line per scenario (the mean over seeds) with a shaded min–max band over seeds;
//! - [`heatmap_svg`]: a metric over a two-axis grid, each cell coloured on the viridis scale and
//!   labelled with its value; a cell without a value (a recovery that never happened) is hatched
//!   grey and labelled with `never_label`, so it never reads as a small or large number;
//! - [`placeholder_svg`]: a figure that has nothing to draw (every value undefined, like a
//!   recovery time where nothing recovered) says so in words, in place of the chart.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    AxisKind, Entry, Marker, PlotError, dashed, draw_marker_at, draw_title, font, legend_height,
    legend_row, line_style, nice_max, render, scenario_color, short_number, title_height,
};

/// One line of a sensitivity chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend entry (usually the scenario name).
    pub scenario: String,
    /// `(x, mean, min, max)` per axis value: the axis value, then the metric's mean, minimum and
    /// maximum over seeds. Any order (drawn sorted by x). A point whose mean is not finite breaks
    /// the line and the band there; a mean of `+∞` means "never" (no seed recovered) and is drawn
    /// as a mark in a "never" row above the plotted values, so the worst case stays visible.
    pub points: Vec<(f64, f64, f64, f64)>,
}

const TITLE_H: u32 = 44;
const NOTE_H: u32 = 22;

/// What the shaded band around each line of a sensitivity chart is (the caller puts its bounds
/// in [`Line::points`]); the chart's note line says it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Band {
    /// From the lowest to the highest seed.
    #[default]
    MinMax,
    /// The 95 % confidence interval of the mean over seeds (Student's t).
    Ci95,
    /// No band is drawn (each point is one value); the note line says what the points are.
    None {
        /// What the points are, for the chart's note line.
        note: &'static str,
    },
}

/// The axes of a sensitivity chart: their labels (with units) and kinds, and the band's meaning.
#[derive(Clone, Debug, Default)]
pub struct ChartStyle {
    /// The x axis label, e.g. "fault slow_b duration (s)".
    pub x_label: String,
    /// The y axis label, e.g. "success after the fault window (%)".
    pub y_label: String,
    /// The x axis: numbers, integers (integer ticks) or named categories at 0, 1, 2, ….
    pub x_kind: AxisKind,
    /// The y axis: numbers, integers (integer ticks), or a share (0 to 100 %).
    pub y_kind: AxisKind,
    /// What the band around each line shows (the spread over seeds), or that none is drawn.
    pub band: Band,
}

/// A metric against a swept axis: x is `axis_label` (give the unit, e.g. "arrival rate (req/s)"),
/// y is `metric_label` (e.g. "recovery time (s)"); one line per entry of `lines` with its min–max
/// band. Both axes are plain numbers ([`sensitivity_svg_styled`] says more).
pub fn sensitivity_svg(
    title: &str,
    axis_label: &str,
    metric_label: &str,
    lines: &[Line],
) -> Result<String, PlotError> {
    let style = ChartStyle {
        x_label: axis_label.to_owned(),
        y_label: metric_label.to_owned(),
        ..ChartStyle::default()
    };
    sensitivity_svg_styled(title, &style, lines)
}

/// Most characters of a y axis label on one line; a longer one is drawn on two lines.
const Y_LABEL_CHARS: usize = 40;

/// A metric against a swept axis, with the axes `style` describes: a share axis runs from 0 to
/// exactly 100 % (ticks in per cent) unless a value lies outside [0, 1]; an integer axis has
/// ticks only at integers; a categorical x axis labels positions 0, 1, … with their names. The
/// title wraps onto more lines rather than run off the figure, and a long y label onto two.
pub fn sensitivity_svg_styled(
    title: &str,
    style: &ChartStyle,
    lines: &[Line],
) -> Result<String, PlotError> {
    let what = format!("sensitivity chart `{title}`");
    // A share's band (a confidence interval may reach past 100 %) is cut to [0, 1] when every
    // mean lies there.
    let clipped: Vec<Line>;
    let lines = if style.y_kind == AxisKind::Share
        && lines
            .iter()
            .flat_map(|l| &l.points)
            .all(|p| !p.1.is_finite() || (0.0..=1.0).contains(&p.1))
    {
        clipped = lines
            .iter()
            .map(|l| Line {
                scenario: l.scenario.clone(),
                points: l
                    .points
                    .iter()
                    .map(|&(x, m, lo, hi)| (x, m, lo.clamp(0.0, 1.0), hi.clamp(0.0, 1.0)))
                    .collect(),
            })
            .collect();
        &clipped[..]
    } else {
        lines
    };
    let finite: Vec<(f64, f64, f64, f64)> = lines
        .iter()
        .flat_map(|l| l.points.iter().copied())
        .filter(|p| p.0.is_finite() && (p.1.is_finite() || p.1 == f64::INFINITY))
        .collect();
    if finite.is_empty() {
        return Err(PlotError::Input {
            what,
            why: "no line has a point with a finite axis value and mean".to_owned(),
        });
    }
    let has_never = finite.iter().any(|p| p.1 == f64::INFINITY);
    let x_lo = finite.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_hi = finite.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    // One x value: a margin of 5 % of it (1 at 0), so a positive axis never reaches below 0.
    let pad = if x_hi > x_lo {
        (x_hi - x_lo) * 0.04
    } else if x_lo != 0.0 {
        x_lo.abs() * 0.05
    } else {
        0.5
    };
    let y_of = |p: &(f64, f64, f64, f64)| [p.1, p.2, p.3].into_iter().filter(|v| v.is_finite());
    let finite: Vec<(f64, f64, f64, f64)> = if finite.iter().all(|p| p.1 == f64::INFINITY) {
        // Only "never" marks: an empty value range from 0 to 1 under them.
        finite
            .iter()
            .map(|p| (p.0, 0.0, f64::NAN, f64::NAN))
            .collect()
    } else {
        finite
    };
    let y_lo = finite.iter().flat_map(y_of).fold(0.0, f64::min);
    let y_hi = finite
        .iter()
        .flat_map(y_of)
        .fold(f64::NEG_INFINITY, f64::max);
    // A share whose values all lie in [0, 1] runs from 0 to 100 %; otherwise it is a number.
    let share = style.y_kind == AxisKind::Share && y_lo >= 0.0 && y_hi <= 1.0;
    let y_integer = style.y_kind == AxisKind::Integer;
    let y_top = if share {
        1.0
    } else if y_hi > 0.0 {
        let top = nice_max(y_hi, 1e-9);
        if y_integer { top.ceil() } else { top }
    } else {
        1.0
    };
    let y_bottom = if y_lo < 0.0 {
        let b = -nice_max(-y_lo, 1e-9);
        if y_integer { b.floor() } else { b }
    } else {
        0.0
    };
    // The "never" row sits above the values, past a gap, with no tick labels of its own.
    let (y_never, y_plot_top) = if has_never {
        let h = y_top - y_bottom;
        (y_top + 0.1 * h, y_top + 0.16 * h)
    } else {
        (f64::NAN, y_top)
    };
    // Integer axes: at most one label per unit, so plotters' 1-2-5 steps land on integers.
    let x_integer = matches!(style.x_kind, AxisKind::Integer | AxisKind::Categories(_));
    let x_labels = if x_integer {
        ((x_hi - x_lo).round() as usize + 1).clamp(2, 10)
    } else {
        10
    };
    let y_labels = if y_integer {
        ((y_top - y_bottom).round() as usize + 1).clamp(2, 10)
    } else {
        10
    };
    let entries: Vec<Entry<'_>> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| Entry {
            name: &l.scenario,
            color: scenario_color(i),
            marker: Some(Marker::of(i)),
            dashed: dashed(i),
        })
        .collect();
    let legend_h = legend_height(&entries);
    let title_h = title_height(title);
    let height = 500 - 36 + legend_h + (title_h - TITLE_H);
    let mut note_text = match style.band {
        Band::MinMax => "line: mean over seeds; shaded band: min–max over seeds".to_owned(),
        Band::Ci95 => {
            "line: mean over seeds; shaded band: 95 % confidence interval of the mean (Student's t)"
                .to_owned()
        }
        Band::None { note } => note.to_owned(),
    };
    if has_never {
        note_text.push_str("; a mark at “never”: no seed recovered");
    }
    let y_lines = wrap_label(&style.y_label, Y_LABEL_CHARS);
    let y_area = 64 + 18 * (y_lines.len() as u32 - 1);
    let categories = match &style.x_kind {
        AxisKind::Categories(names) => Some(names.clone()),
        _ => None,
    };
    let x_format = |v: &f64| -> String {
        let whole = (*v - v.round()).abs() < 1e-9;
        match &categories {
            Some(names) => {
                if whole && *v >= 0.0 {
                    names.get(v.round() as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
            None if x_integer && !whole => String::new(),
            None => short_number(*v),
        }
    };
    let y_format = |v: &f64| -> String {
        let whole = (*v - v.round()).abs() < 1e-9;
        if *v > y_top + (y_top - y_bottom) * 1e-9 || (y_integer && !whole) {
            String::new()
        } else if share {
            format!("{} %", short_number((*v * 100.0 * 1e6).round() / 1e6))
        } else {
            short_number(*v)
        }
    };
    render(&what, height, |root| {
        let (top, rest) = root.split_vertically(title_h);
        let (note, rest) = rest.split_vertically(NOTE_H);
        let (body, bottom) = rest.split_vertically(height - title_h - NOTE_H - legend_h);
        draw_title(&top, title)?;
        note.draw(&Text::new(
            note_text.clone(),
            (14, (NOTE_H / 2) as i32),
            font(13.0)
                .color(&RGBColor(0x55, 0x55, 0x55))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        let mut chart = ChartBuilder::on(&body)
            .margin_right(24)
            .margin_left(8)
            .margin_top(8)
            .x_label_area_size(44)
            .y_label_area_size(y_area)
            .build_cartesian_2d((x_lo - pad)..(x_hi + pad), y_bottom..y_plot_top)?;
        let mut mesh = chart.configure_mesh();
        mesh.axis_desc_style(font(14.0))
            .label_style(font(13.0))
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .x_labels(x_labels)
            .y_labels(y_labels)
            .x_desc(style.x_label.as_str())
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format);
        if y_lines.len() == 1 {
            mesh.y_desc(style.y_label.as_str());
        }
        mesh.draw()?;
        if y_lines.len() > 1 {
            // A long y label: two rotated lines, centred on the plot's height.
            let (_, body_h) = body.dim_in_pixel();
            let cy = (8 + (body_h as i32 - 8 - 44)) / 2;
            for (k, line) in y_lines.iter().enumerate() {
                body.draw(&Text::new(
                    line.clone(),
                    (12 + 18 * k as i32, cy),
                    font(14.0)
                        .transform(FontTransform::Rotate270)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }
        if has_never {
            let x_left = x_lo - pad;
            chart.draw_series(DashedLineSeries::new(
                [(x_left, y_never), (x_hi + pad, y_never)],
                4,
                4,
                RGBColor(0x99, 0x99, 0x99).stroke_width(1),
            ))?;
            chart.draw_series(std::iter::once(
                EmptyElement::at((x_left, y_never))
                    + Text::new(
                        "never".to_owned(),
                        (-8, 0),
                        font(13.0).pos(Pos::new(HPos::Right, VPos::Center)),
                    ),
            ))?;
            // Lines that never recover at the same x stand side by side, centred on it.
            let never_at = |x: f64| -> Vec<usize> {
                (0..lines.len())
                    .filter(|&k| {
                        lines[k]
                            .points
                            .iter()
                            .any(|p| p.0 == x && p.1 == f64::INFINITY)
                    })
                    .collect()
            };
            for (i, line) in lines.iter().enumerate() {
                let color = scenario_color(i);
                for p in line
                    .points
                    .iter()
                    .filter(|p| p.0.is_finite() && p.1 == f64::INFINITY)
                {
                    let group = never_at(p.0);
                    let k = group.iter().position(|&g| g == i).unwrap_or(0) as i32;
                    let dx = (2 * k - (group.len() as i32 - 1)) * 6;
                    let at = EmptyElement::at((p.0, y_never));
                    let filled = color.filled();
                    match Marker::of(i) {
                        Marker::Circle => chart
                            .draw_series(std::iter::once(at + Circle::new((dx, 0), 5, filled)))?,
                        Marker::Triangle => chart.draw_series(std::iter::once(
                            at + TriangleMarker::new((dx, 0), 6, filled),
                        ))?,
                        Marker::Square => chart.draw_series(std::iter::once(
                            at + Rectangle::new([(dx - 5, -5), (dx + 5, 5)], filled),
                        ))?,
                        Marker::Cross => chart.draw_series(std::iter::once(
                            at + Cross::new((dx, 0), 5, color.stroke_width(2)),
                        ))?,
                    };
                }
            }
        }
        // Last line first, so that a dashed line lies on the solid one it may coincide with.
        for (i, line) in lines.iter().enumerate().rev() {
            let color = scenario_color(i);
            let mut pts: Vec<_> = line
                .points
                .iter()
                .copied()
                .filter(|p| p.0.is_finite())
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            for run in pts.split(|p| !p.1.is_finite()) {
                if run.is_empty() {
                    continue;
                }
                let band: Vec<(f64, f64)> = run
                    .iter()
                    .map(|p| (p.0, finite_or(p.3, p.1)))
                    .chain(run.iter().rev().map(|p| (p.0, finite_or(p.2, p.1))))
                    .collect();
                if !matches!(style.band, Band::None { .. }) {
                    chart.draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.18).filled(),
                    )))?;
                }
                let mean = run.iter().map(|p| (p.0, p.1));
                if dashed(i) {
                    chart.draw_series(DashedLineSeries::new(mean, 6, 5, line_style(color)))?;
                } else {
                    chart.draw_series(LineSeries::new(mean, line_style(color)))?;
                }
                for p in run {
                    draw_marker_at(&mut chart, Marker::of(i), color, (p.0, p.1))?;
                }
            }
        }
        legend_row(&bottom, &entries)
    })
}

/// A figure with `title` and, in place of a chart, `message` (why there is nothing to draw).
pub fn placeholder_svg(title: &str, message: &str) -> Result<String, PlotError> {
    let title_h = title_height(title);
    let height = 200 + (title_h - TITLE_H);
    render(&format!("figure `{title}`"), height, |root| {
        let (top, body) = root.split_vertically(title_h);
        draw_title(&top, title)?;
        let (w, h) = body.dim_in_pixel();
        body.draw(&Text::new(
            message.to_owned(),
            ((w / 2) as i32, (h / 2) as i32),
            font(16.0)
                .color(&RGBColor(0x55, 0x55, 0x55))
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
        Ok(())
    })
}

/// `label` in lines of at most `room` characters, broken at spaces (at most two lines; the
/// second holds the rest).
fn wrap_label(label: &str, room: usize) -> Vec<String> {
    if label.chars().count() <= room {
        return vec![label.to_owned()];
    }
    let cut = label
        .char_indices()
        .filter(|&(i, c)| c == ' ' && label[..i].chars().count() <= room)
        .map(|(i, _)| i)
        .next_back();
    match cut {
        Some(i) => vec![label[..i].to_owned(), label[i + 1..].to_owned()],
        None => vec![label.to_owned()],
    }
}

fn finite_or(v: f64, fallback: f64) -> f64 {
    if v.is_finite() { v } else { fallback }
}

/// The viridis colour scale (perceptually uniform, colour-blind safe) at `t` in [0, 1].
pub fn viridis(t: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 9] = [
        (68.0, 1.0, 84.0),
        (71.0, 44.0, 122.0),
        (59.0, 81.0, 139.0),
        (44.0, 113.0, 142.0),
        (33.0, 144.0, 141.0),
        (39.0, 173.0, 129.0),
        (92.0, 200.0, 99.0),
        (170.0, 220.0, 50.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |u: f64, v: f64| (u + (v - u) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A metric over a two-axis grid. `cells[j][i]` is the value at `x_values[i]` (columns, left to
/// right) and `y_values[j]` (rows, bottom to top); `None` is drawn as a hatched grey cell labelled
/// `never_label` (e.g. "never" for a recovery that did not happen). The axis values are labels,
/// already formatted with their units (e.g. "400/s", "20s"); the metric and its unit belong in
/// `title`.
#[allow(clippy::too_many_arguments)]
pub fn heatmap_svg(
    title: &str,
    x_label: &str,
    x_values: &[String],
    y_label: &str,
    y_values: &[String],
    cells: &[Vec<Option<f64>>],
    never_label: &str,
) -> Result<String, PlotError> {
    let what = format!("heatmap `{title}`");
    let (nx, ny) = (x_values.len(), y_values.len());
    if nx == 0 || ny == 0 {
        return Err(PlotError::Input {
            what,
            why: "both axes need at least one value".to_owned(),
        });
    }
    if cells.len() != ny || cells.iter().any(|row| row.len() != nx) {
        return Err(PlotError::Input {
            what,
            why: format!(
                "cells must be {ny} rows (one per y value) of {nx} values (one per x value)"
            ),
        });
    }
    let values: Vec<f64> = cells
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let any_never = cells
        .iter()
        .flatten()
        .any(|c| !c.is_some_and(f64::is_finite));
    let scale = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let cell_h = 44u32;
    let title_h = title_height(title);
    let height = (title_h + 70 + cell_h * ny as u32).clamp(360 + (title_h - TITLE_H), 900);
    let longest = y_values
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(1) as u32;
    let y_area = (longest * 8 + 40).clamp(60, 220);
    render(&what, height, |root| {
        let (top, rest) = root.split_vertically(title_h);
        let (grid, bar) = rest.split_horizontally(WIDTH_MINUS_BAR);
        draw_title(&top, title)?;
        let mut chart = ChartBuilder::on(&grid)
            .margin_right(12)
            .margin_left(8)
            .margin_top(6)
            .x_label_area_size(56)
            .y_label_area_size(y_area)
            .build_cartesian_2d(0.0..nx as f64, 0.0..ny as f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .axis_desc_style(font(14.0))
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()?;
        let label_style = font(13.0);
        for (i, x) in x_values.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            root.draw(&Text::new(
                x.clone(),
                (px, py + 6),
                label_style.clone().pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        }
        for (j, y) in y_values.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(0.0, j as f64 + 0.5));
            root.draw(&Text::new(
                y.clone(),
                (px - 8, py),
                label_style.clone().pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }
        let never_fill = RGBColor(0xE4, 0xE4, 0xE4);
        let hatch = RGBColor(0x99, 0x99, 0x99);
        for (j, row) in cells.iter().enumerate() {
            for (i, cell) in row.iter().enumerate() {
                let (x0, y0) = (i as f64, j as f64);
                let corners = [(x0 + 0.02, y0 + 0.02), (x0 + 0.98, y0 + 0.98)];
                let centre = (x0 + 0.5, y0 + 0.5);
                match cell.filter(|v| v.is_finite()) {
                    Some(v) => {
                        let t = scale(v);
                        chart.draw_series(std::iter::once(Rectangle::new(
                            corners,
                            viridis(t).filled(),
                        )))?;
                        let ink = if t > 0.6 { BLACK } else { WHITE };
                        chart.draw_series(std::iter::once(Text::new(
                            short_number(v),
                            centre,
                            font(13.0)
                                .color(&ink)
                                .pos(Pos::new(HPos::Center, VPos::Center)),
                        )))?;
                    }
                    None => {
                        chart.draw_series(std::iter::once(Rectangle::new(
                            corners,
                            never_fill.filled(),
                        )))?;
                        for k in 1..6 {
                            let f = k as f64 / 6.0 * 0.96;
                            chart.draw_series(std::iter::once(PathElement::new(
                                vec![(x0 + 0.02, y0 + 0.02 + f), (x0 + 0.02 + f, y0 + 0.02)],
                                hatch.stroke_width(1),
                            )))?;
                            chart.draw_series(std::iter::once(PathElement::new(
                                vec![(x0 + 0.02 + f, y0 + 0.98), (x0 + 0.98, y0 + 0.02 + f)],
                                hatch.stroke_width(1),
                            )))?;
                        }
                        chart.draw_series(std::iter::once(Text::new(
                            never_label.to_owned(),
                            centre,
                            font(13.0).pos(Pos::new(HPos::Center, VPos::Center)),
                        )))?;
                    }
                }
            }
        }
        // Colour bar: low at the bottom, high at the top, then the "never" swatch.
        let (_, bar_h) = bar.dim_in_pixel();
        let (bx, by0, by1) = (16, 24, (bar_h as i32 - 110).max(60));
        let steps = 40;
        for k in 0..steps {
            let t0 = k as f64 / steps as f64;
            let ya = by1 - ((by1 - by0) as f64 * t0) as i32;
            let yb = by1 - ((by1 - by0) as f64 * (k + 1) as f64 / steps as f64) as i32;
            bar.draw(&Rectangle::new(
                [(bx, yb), (bx + 18, ya)],
                viridis(t0).filled(),
            ))?;
        }
        if !values.is_empty() {
            for (t, v) in [(0.0, lo), (0.5, (lo + hi) / 2.0), (1.0, hi)] {
                if hi <= lo && t != 0.5 {
                    continue;
                }
                let y = by1 - ((by1 - by0) as f64 * t) as i32;
                bar.draw(&Text::new(
                    short_number(v),
                    (bx + 24, y),
                    font(12.0).pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
        }
        if any_never {
            let y = by1 + 20;
            bar.draw(&Rectangle::new(
                [(bx, y), (bx + 18, y + 18)],
                never_fill.filled(),
            ))?;
            bar.draw(&PathElement::new(
                vec![(bx, y + 18), (bx + 18, y)],
                hatch.stroke_width(1),
            ))?;
            bar.draw(&Text::new(
                never_label.to_owned(),
                (bx + 24, y + 9),
                font(12.0).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    })
}

/// Width left for the grid; the colour bar takes the rest.
const WIDTH_MINUS_BAR: u32 = super::WIDTH - 90;
