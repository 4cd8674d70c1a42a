//! Flattening a summary into dotted `(column, value)` pairs — `metrics.recovery_s`,
//! `services.svc_b.max_queue`, `calls.svc_a->svc_b.retries` — in the summary's field order. Owns
//! the column naming that the CSV formats and the sweep tables share.

use serde_json::Value;

use crate::metrics::RunSummary;

/// Which parts of a summary to flatten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Include `engine.*` (wall-clock dependent: not for byte-identical outputs).
    Include,
    /// Leave `engine.*` out.
    Exclude,
}

/// The scalar fields of `run` below `metrics`, `services`, `calls` (and `engine` if asked), as
/// dotted names and JSON values (`null` for undefined ratios).
pub fn flatten(run: &RunSummary, engine: Engine) -> Vec<(String, Value)> {
    let value = serde_json::to_value(run).expect("summaries serialize");
    let mut out = Vec::new();
    if let Value::Object(top) = value {
        for (k, v) in top {
            match k.as_str() {
                "scenario" | "seed" => {}
                "engine" if engine == Engine::Exclude => {}
                _ => walk(&k, v, &mut out),
            }
        }
    }
    out
}

fn walk(prefix: &str, v: Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                walk(&format!("{prefix}.{k}"), v, out);
            }
        }
        other => out.push((prefix.to_owned(), other)),
    }
}

/// A JSON scalar as CSV/markdown text: numbers in Rust's shortest round-trip form, `null` empty.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Columns of several flattened runs: each name once, in order of first appearance.
pub fn union_columns<'a>(rows: impl IntoIterator<Item = &'a Vec<(String, Value)>>) -> Vec<String> {
    let mut seen = indexmap::IndexSet::new();
    for row in rows {
        for (k, _) in row {
            seen.insert(k.clone());
        }
    }
    seen.into_iter().collect()
}
