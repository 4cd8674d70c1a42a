//! The JSON formats: `json`, one document on stdout, an array with one object per scenario; and
//! `ndjson`, the same objects one per line (for streaming tools and log pipelines). Fields are
//! named as in docs/model.md §3 (jq-friendly); every object opens with `schema_version`
//! ([`super::SCHEMA_VERSION`]), and `loadsim schema report` prints the JSON Schema of one object
//! ([`RunDocument`]).

use schemars::JsonSchema;
use serde::Serialize;

use super::Render;
use crate::metrics::RunSummary;

/// One scenario's object in the run JSON: the schema version, then the summary's fields.
#[derive(Serialize, JsonSchema)]
pub struct RunDocument<'a> {
    /// The version of loadsim's output formats (see `loadsim schema report`).
    pub schema_version: u32,
    // The summary's fields, inlined. Left without a doc comment so that the generated schema
    // (schema/*.json) keeps its shape.
    #[allow(missing_docs)]
    #[serde(flatten)]
    pub summary: &'a RunSummary,
}

impl<'a> RunDocument<'a> {
    /// The document for one run's summary, at the current [`super::SCHEMA_VERSION`].
    pub fn new(summary: &'a RunSummary) -> Self {
        RunDocument {
            schema_version: super::SCHEMA_VERSION,
            summary,
        }
    }
}

/// Pretty-printed JSON array of summaries.
pub struct Json;

impl Render for Json {
    fn render(&self, runs: &[RunSummary]) -> String {
        let docs: Vec<RunDocument> = runs.iter().map(RunDocument::new).collect();
        let mut s = serde_json::to_string_pretty(&docs).expect("summaries serialize");
        s.push('\n');
        s
    }
}

/// One compact JSON object per line, per scenario, in argument order.
pub struct Ndjson;

impl Render for Ndjson {
    fn render(&self, runs: &[RunSummary]) -> String {
        let mut s = String::new();
        for r in runs {
            s.push_str(&serde_json::to_string(&RunDocument::new(r)).expect("summaries serialize"));
            s.push('\n');
        }
        s
    }
}
