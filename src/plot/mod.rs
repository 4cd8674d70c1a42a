//! Plots as SVG files, drawn with `plotters`' SVG backend. Owns the figures of `loadsim run --plot
//! DIR` ([`run`]: success rate, queue length and amplification over time, on a time axis in s,
//! min or h by the run's length — [`time_axis`] — over a strip of the offered load; `run --html`
//! adds per-class success and per-replica levels) and the sweep figures ([`sweep`]: a sensitivity
//! line chart with a min–max band, and a heatmap for two-axis grids; their x axis is a grid value,
//! never time).
//!
//! Every figure is 800 px wide, with axis labels that carry units, a legend below the plot (never
//! over the data) and the Okabe–Ito colour-blind-safe palette; lines of different scenarios also
//! differ by marker shape, so they stay apart in grey print and where they overlap. Text is SVG
//! `<text>` in the generic `sans-serif` family: no font file is read at build or run time (the
//! `ttf` feature of plotters is off; its layout uses a fixed width estimate per character).
//!
//! Each figure has a `*_svg` function returning the document as a string (what the tests parse);
//! the plot code only draws: the caller hands the string to the exporter
//! ([`crate::runner::export`]), which names and writes the file.

pub mod labels;
pub mod run;
pub mod sweep;
pub mod time_axis;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

pub use labels::AxisKind;
pub use run::{
    RunFigures, amplification_svg, class_success_rate_svg, concurrency_limit_svg, queue_length_svg,
    replica_levels_svg, run_figures, success_rate_svg,
};
pub use sweep::{
    Band, ChartStyle, Line, heatmap_svg, placeholder_svg, sensitivity_svg, sensitivity_svg_styled,
    viridis,
};
pub use time_axis::{TimeAxis, TimeUnit};

/// Why a figure could not be made.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The data cannot be drawn as asked (a caller's mistake, e.g. a grid of the wrong shape).
    #[error("cannot plot {what}: {why}")]
    Input {
        /// The figure, as its errors name it.
        what: String,
        /// What is wrong with the data ("no runs to plot").
        why: String,
    },
    /// plotters failed while drawing.
    #[error("cannot draw {what}: {why}")]
    Draw {
        /// The figure, as its errors name it.
        what: String,
        /// plotters' error, as text.
        why: String,
    },
}

/// Width of every figure, in pixels.
pub const WIDTH: u32 = 800;
/// The font family of every text element (resolved by whatever displays the SVG).
pub const FONT: &str = "sans-serif";

/// Okabe–Ito colours for scenarios (or sweep lines), in order: vermillion, blue, bluish green,
/// reddish purple, orange, sky blue, black, yellow.
pub const SCENARIO_COLORS: [RGBColor; 8] = [
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xF0, 0xE4, 0x42),
];

/// Okabe–Ito colours for services inside one scenario's panel (a different dimension from
/// scenarios, so a different order): black, orange, sky blue, then the rest.
pub const SERVICE_COLORS: [RGBColor; 8] = [
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xF0, 0xE4, 0x42),
];

/// The colour of the `i`-th scenario.
pub fn scenario_color(i: usize) -> RGBColor {
    SCENARIO_COLORS[i % SCENARIO_COLORS.len()]
}

/// The colour of the `i`-th service.
pub fn service_color(i: usize) -> RGBColor {
    SERVICE_COLORS[i % SERVICE_COLORS.len()]
}

/// "#rrggbb" of a colour, as the SVG backend writes it (for tests and docs).
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Marker shapes, cycled by series index after the colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Triangle,
    Square,
    Cross,
}

impl Marker {
    pub(crate) fn of(i: usize) -> Marker {
        [
            Marker::Circle,
            Marker::Triangle,
            Marker::Square,
            Marker::Cross,
        ][i % 4]
    }
}

/// One legend entry: a name, its colour, marker and whether its line is dashed.
pub(crate) struct Entry<'a> {
    pub name: &'a str,
    pub color: RGBColor,
    pub marker: Option<Marker>,
    pub dashed: bool,
}

/// Whether the `i`-th series is dashed: every other one, so that two series that coincide (drawn
/// with the dashed one on top) both stay visible.
pub(crate) fn dashed(i: usize) -> bool {
    i % 2 == 1
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Renders an SVG of `height` px with `draw`, naming the figure `what` in errors.
pub(crate) fn render(
    what: &str,
    height: u32,
    draw: impl FnOnce(&Area<'_>) -> DrawResult,
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.into())
            .and_then(|_| draw(&root))
            .and_then(|_| root.present().map_err(|e| e.into()));
        drawn.map_err(|e| PlotError::Draw {
            what: what.to_owned(),
            why: e.to_string(),
        })?;
    }
    Ok(svg)
}

/// Text style of `size` px (plotters divides the given size by 1.24 when writing the SVG).
pub(crate) fn font(size: f64) -> TextStyle<'static> {
    (FONT, size * 1.24).into_font().color(&BLACK)
}

/// The line style of a series.
pub(crate) fn line_style(c: RGBColor) -> ShapeStyle {
    ShapeStyle {
        color: c.to_rgba(),
        filled: false,
        stroke_width: 2,
    }
}

/// Draws a marker centred on pixel `(x, y)` of `area`.
pub(crate) fn draw_marker_px(
    area: &Area<'_>,
    m: Marker,
    c: RGBColor,
    (x, y): (i32, i32),
) -> DrawResult {
    let filled = c.filled();
    let stroke = c.stroke_width(2);
    match m {
        Marker::Circle => area.draw(&Circle::new((x, y), 4, filled))?,
        Marker::Triangle => area.draw(&TriangleMarker::new((x, y), 5, filled))?,
        Marker::Square => area.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], filled))?,
        Marker::Cross => area.draw(&Cross::new((x, y), 4, stroke))?,
    }
    Ok(())
}

/// Draws a marker centred on the data point `p`.
pub(crate) fn draw_marker_at<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    m: Marker,
    c: RGBColor,
    p: (f64, f64),
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let at = EmptyElement::at(p);
    let filled = c.filled();
    match m {
        Marker::Circle => {
            chart.draw_series(std::iter::once(at + Circle::new((0, 0), 4, filled)))?
        }
        Marker::Triangle => {
            chart.draw_series(std::iter::once(at + TriangleMarker::new((0, 0), 5, filled)))?
        }
        Marker::Square => chart.draw_series(std::iter::once(
            at + Rectangle::new([(-4, -4), (4, 4)], filled),
        ))?,
        Marker::Cross => chart.draw_series(std::iter::once(
            at + Cross::new((0, 0), 4, c.stroke_width(2)),
        ))?,
    };
    Ok(())
}

/// Height of a one-row legend, in pixels (the charts' historical legend band).
pub(crate) const LEGEND_H: u32 = 36;

/// Height of each further legend row, in pixels.
pub(crate) const LEGEND_ROW_H: u32 = 24;

/// Height of a 480-pixel single-chart figure whose legend needs `legend_h` (its legend band grows,
/// the chart keeps its size).
pub(crate) fn chart_height(legend_h: u32) -> u32 {
    480 - LEGEND_H + legend_h
}

/// A legend entry's width: line and marker, the name (estimated at 9.5 px a character, the
/// 14-point font's average, so that the layout is known before drawing), and a gap.
fn legend_entry_width(name: &str) -> i32 {
    34 + (name.chars().count() as f64 * 9.5).ceil() as i32 + 18
}

/// The entries of each legend row: as many as fit in the figure's width, in order.
pub(crate) fn legend_layout(names: &[&str]) -> Vec<std::ops::Range<usize>> {
    let room = WIDTH as i32 - 8;
    let mut rows = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, name) in names.iter().enumerate() {
        let w = legend_entry_width(name);
        if i > start && used + w > room {
            rows.push(start..i);
            start = i;
            used = 0;
        }
        used += w;
    }
    if start < names.len() || rows.is_empty() {
        rows.push(start..names.len());
    }
    rows
}

/// The height a legend of these entries needs: [`LEGEND_H`] for one row, [`LEGEND_ROW_H`] more
/// for each further row.
pub(crate) fn legend_height(entries: &[Entry<'_>]) -> u32 {
    let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
    LEGEND_H + LEGEND_ROW_H * (legend_layout(&names).len() as u32 - 1)
}

/// Draws the legend centred in `area`, wrapping into rows ([`legend_layout`]) so that any number
/// of series stays inside the figure.
pub(crate) fn legend_row(area: &Area<'_>, entries: &[Entry<'_>]) -> DrawResult {
    let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
    let rows = legend_layout(&names);
    let (w, h) = area.dim_in_pixel();
    let first_y = h as i32 / 2 - (LEGEND_ROW_H as i32 * (rows.len() as i32 - 1)) / 2;
    for (r, range) in rows.into_iter().enumerate() {
        legend_line(
            area,
            &entries[range],
            w,
            first_y + r as i32 * LEGEND_ROW_H as i32,
        )?;
    }
    Ok(())
}

fn legend_line(area: &Area<'_>, entries: &[Entry<'_>], w: u32, y: i32) -> DrawResult {
    let style = font(14.0);
    // Within a row, the drawn widths come from the backend's text metrics, as they always did
    // (a one-row legend is unchanged); only the row breaks use the estimate.
    let widths: Vec<i32> = entries
        .iter()
        .map(|e| {
            34 + area
                .estimate_text_size(e.name, &style)
                .map(|s| s.0 as i32)
                .unwrap_or(80)
                + 18
        })
        .collect();
    let total: i32 = widths.iter().sum();
    let mut x = ((w as i32 - total) / 2).max(4);
    for (e, width) in entries.iter().zip(widths) {
        if e.dashed {
            for k in 0..3 {
                let x0 = x + k * 11;
                area.draw(&PathElement::new(
                    vec![(x0, y), (x0 + 6, y)],
                    line_style(e.color),
                ))?;
            }
        } else {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 28, y)],
                line_style(e.color),
            ))?;
        }
        if let Some(m) = e.marker {
            draw_marker_px(area, m, e.color, (x + 14, y))?;
        }
        area.draw(&Text::new(
            e.name.to_owned(),
            (x + 34, y),
            style.clone().pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        x += width;
    }
    Ok(())
}

/// Estimated width of a title character at 18 px, in pixels: the widest average of a
/// sans-serif face (DejaVu Sans, the widest common default) so that an estimate never falls short.
const TITLE_CHAR_W: f64 = 11.0;

/// Height of one title line, in pixels; a one-line title keeps the historical 44-pixel band.
pub(crate) const TITLE_LINE_H: u32 = 24;

/// A figure title broken into lines that fit the figure's width (at word boundaries; a word
/// longer than a line is cut), so that no title runs off the canvas.
pub fn title_lines(title: &str) -> Vec<String> {
    let room = ((WIDTH - 28) as f64 / TITLE_CHAR_W).floor() as usize;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in title.split_whitespace() {
        let mut word: String = word.to_owned();
        loop {
            let len = line.chars().count();
            let wlen = word.chars().count();
            if len == 0 && wlen > room {
                let head: String = word.chars().take(room).collect();
                word = word.chars().skip(room).collect();
                lines.push(head);
                continue;
            }
            if len > 0 && len + 1 + wlen > room {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            if len > 0 {
                line.push(' ');
            }
            line.push_str(&word);
            break;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The height of the title band for `title`: 44 px for one line, [`TITLE_LINE_H`] more per
/// further line.
pub(crate) fn title_height(title: &str) -> u32 {
    44 + TITLE_LINE_H * (title_lines(title).len() as u32 - 1)
}

/// Draws `title` in `area` (made [`title_height`] tall), one line under the other.
pub(crate) fn draw_title(area: &Area<'_>, title: &str) -> DrawResult {
    let lines = title_lines(title);
    let (_, h) = area.dim_in_pixel();
    let first = h as i32 / 2 - (TITLE_LINE_H as i32 * (lines.len() as i32 - 1)) / 2;
    for (k, line) in lines.into_iter().enumerate() {
        area.draw(&Text::new(
            line,
            (14, first + k as i32 * TITLE_LINE_H as i32),
            font(18.0).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// Nice upper bound for an axis holding values up to `max` (at least `floor`).
pub(crate) fn nice_max(max: f64, floor: f64) -> f64 {
    let m = if max.is_finite() {
        max.max(floor)
    } else {
        floor
    };
    let p = 10f64.powf(m.log10().floor());
    for k in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0] {
        if k * p >= m * 1.02 {
            return k * p;
        }
    }
    12.0 * p
}

/// A number for a label: up to 3 significant digits, no trailing zeros.
pub fn short_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_nan() {
            "–".into()
        } else {
            format!("{v}")
        };
    }
    let digits = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    crate::util::number::trimmed(v, digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_labels_keep_three_significant_digits() {
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(1.0), "1");
        assert_eq!(short_number(12.345), "12.3");
        assert_eq!(short_number(0.01234), "0.0123");
        assert_eq!(short_number(15000.0), "15000");
        assert_eq!(nice_max(0.0, 1.0), 1.2);
        assert_eq!(nice_max(9909.0, 1.0), 10000.0 * 1.2);
    }
}
