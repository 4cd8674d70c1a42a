//! Rendering run summaries. Owns the output formats of `loadsim run`, one file per format: `table`
//! (metrics as rows, scenarios as columns, like the article's table), `json` (one document, an
//! array of summaries), `csv` (one row per scenario, flattened dotted column names), `csv-long`
//! (one row per scenario × metric, for pandas and R). All formats render the same [`RunSummary`]
//! values; none computes metrics of its own. `timeseries` renders the per-bin series of
//! `--timeseries` (long CSV), outside the [`Render`] trait since it reads
//! [`crate::metrics::TimeSeries`], not summaries. `html` renders a whole page (tables, figures,
//! sources) for `run --html` and a sweep's report.html.

pub mod columns;
pub mod csv;
pub mod csv_long;
pub mod diagnostics;
pub mod flat;
pub mod format;
pub mod html;
pub mod json;
pub mod markdown;
pub mod otlp;
pub mod schema;
pub mod table;
pub mod timeseries;
pub mod verdict;

use crate::metrics::RunSummary;
pub use format::Format;

/// The version of loadsim's machine-read outputs: the run JSON and NDJSON objects, a sweep's
/// `manifest.json` and its journal carry it as `schema_version`. It goes up when a field changes
/// meaning or goes away, or when a reader of the old files would take wrong values from them
/// (version 1 added `metrics.recovered`, which a journal of before cannot hold); readers refuse
/// folders of another version with what to do. Files written before it existed have none.
pub const SCHEMA_VERSION: u32 = 1;

/// An output format for a list of run summaries.
pub trait Render {
    /// Renders `runs` as text (ending with a newline).
    fn render(&self, runs: &[RunSummary]) -> String;
}
