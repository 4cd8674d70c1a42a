//! The figures of a sweep's results.md, drawn beside it: a sensitivity table as a line chart, a
//! two-axis table as a heatmap. [`super::render`] decides which figures results.md embeds and
//! names their files; a figure draws itself as an SVG document ([`crate::plot`]), and the
//! exporter writes it ([`crate::runner::export::SWEEP`]).

use crate::plot::{ChartStyle, Line};

/// A figure of results.md, drawn beside it.
#[derive(Clone, Debug)]
pub enum Figure {
    /// A sensitivity table as a line chart: one line per scenario, with a band over seeds
    /// (min–max, or the mean's 95 % confidence interval). When no point has a value, the figure
    /// says `empty_note` instead.
    Sensitivity {
        /// The SVG's file name in the output folder.
        file: String,
        /// The table's heading, drawn as the figure's title.
        title: String,
        /// Axis labels and kinds, and what the band is.
        style: ChartStyle,
        /// The metric's results.csv column.
        metric_label: String,
        /// One line per scenario, in the order of the sweep's `scenarios`.
        lines: Vec<Line>,
        /// What the figure says when no point has a value ("no finite value", …).
        empty_note: &'static str,
    },
    /// A two-axis grid as a heatmap of the mean over seeds; `None` cells show `never_label`.
    Heatmap {
        /// The SVG's file name in the output folder.
        file: String,
        /// The table's heading and the scenario, drawn as the figure's title.
        title: String,
        /// The label of the sensitivity table's axis ("fault slow_b duration"), across.
        x_label: String,
        /// Its values as the tables show them, left to right.
        x_values: Vec<String>,
        /// The label of the grid's other axis, down.
        y_label: String,
        /// Its values as the tables show them, top to bottom.
        y_values: Vec<String>,
        /// The mean over seeds, a row per `y_values` entry and a column per `x_values` entry;
        /// `None` where it is not finite.
        cells: Vec<Vec<Option<f64>>>,
        /// What a `None` cell shows: "never" for a recovery time, "—" otherwise.
        never_label: &'static str,
    },
}

impl Figure {
    /// The figure's file name in the output folder.
    pub fn file(&self) -> &str {
        match self {
            Figure::Sensitivity { file, .. } | Figure::Heatmap { file, .. } => file,
        }
    }

    /// The figure's title.
    pub fn title(&self) -> &str {
        match self {
            Figure::Sensitivity { title, .. } | Figure::Heatmap { title, .. } => title,
        }
    }

    /// Draws the figure as an SVG document (a placeholder that says why, when there is nothing
    /// to draw).
    pub fn svg(&self) -> Result<String, crate::plot::PlotError> {
        match self {
            Figure::Sensitivity {
                title,
                lines,
                metric_label,
                empty_note,
                ..
            } if !lines
                .iter()
                .flat_map(|l| &l.points)
                .any(|p| p.0.is_finite() && !p.1.is_nan()) =>
            {
                crate::plot::placeholder_svg(
                    title,
                    &format!("{empty_note}: no run has a value of `{metric_label}` to draw"),
                )
            }
            Figure::Sensitivity {
                title,
                style,
                lines,
                ..
            } => crate::plot::sensitivity_svg_styled(title, style, lines),
            Figure::Heatmap {
                title,
                x_label,
                x_values,
                y_label,
                y_values,
                cells,
                never_label,
                ..
            } => crate::plot::heatmap_svg(
                title,
                x_label,
                x_values,
                y_label,
                y_values,
                cells,
                never_label,
            ),
        }
    }
}
