//! The JSON format: one document on stdout, an array with one object per scenario, fields named
//! as in docs/model.md §3 (jq-friendly).

use super::Render;
use crate::metrics::RunSummary;

/// Pretty-printed JSON array of summaries.
pub struct Json;

impl Render for Json {
    fn render(&self, runs: &[RunSummary]) -> String {
        let mut s = serde_json::to_string_pretty(runs).expect("summaries serialize");
        s.push('\n');
        s
    }
}
