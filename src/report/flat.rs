//! Flattening a summary into dotted `(column, value)` pairs — `metrics.recovery_s`,
//! `services.svc_b.max_queue`, `calls.svc_a->svc_b.retries` — in the summary's field order. Owns
//! the column naming that the CSV formats and the sweep tables share. A list is flattened by its
//! index like a key (`services.api.replica_stats.0.arrivals`), so every cell is a scalar: no JSON
//! inside a CSV cell.

use serde_json::Value;

use crate::metrics::RunSummary;

/// Which parts of a summary to flatten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineColumns {
    /// Include `engine.*` (wall-clock dependent: not for byte-identical outputs).
    Include,
    /// Leave `engine.*` out.
    Exclude,
}

/// The scalar fields of `run` below `metrics`, `services`, `calls` (and `engine` if asked), as
/// dotted names and JSON values (`null` for undefined ratios).
pub fn flatten(run: &RunSummary, engine: EngineColumns) -> Vec<(String, Value)> {
    let value = serde_json::to_value(run).expect("summaries serialize");
    let mut out = Vec::new();
    if let Value::Object(top) = value {
        for (k, v) in top {
            match k.as_str() {
                "scenario" | "seed" => {}
                "engine" if engine == EngineColumns::Exclude => {}
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
        Value::Array(items) => {
            for (i, v) in items.into_iter().enumerate() {
                walk(&format!("{prefix}.{i}"), v, out);
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

/// A JSON scalar as a number for a numeric column (the long CSV's `value`): a boolean is `1` or
/// `0`, `null` empty, a number as [`cell`] writes it. A summary has no text below its top level,
/// so nothing else reaches here; were it to, it would be written as [`cell`] writes it.
pub fn numeric_cell(v: &Value) -> String {
    match v {
        Value::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
        other => cell(other),
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

/// One scalar of a summary, with its place split out for long ("tidy") tables.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatMetric {
    /// `metrics`, `services`, `calls` or `engine`.
    pub scope: String,
    /// The service (`svc_b`) or edge (`svc_a->svc_b`) for `services` and `calls`; `None` otherwise.
    pub entity: Option<String>,
    /// The metric's own name (`max_queue`).
    pub name: String,
    /// The value as the JSON summary holds it, in the unit its name states.
    pub value: Value,
}

impl FlatMetric {
    /// The dotted name, as in [`flatten`] and the wide CSV's header (`services.svc_b.max_queue`).
    pub fn dotted(&self) -> String {
        match &self.entity {
            Some(e) => format!("{}.{e}.{}", self.scope, self.name),
            None => format!("{}.{}", self.scope, self.name),
        }
    }
}

/// The same scalars as [`flatten`], in the same order, with scope, entity and name kept apart (a
/// service name may itself contain dots, so splitting the dotted name would be ambiguous).
pub fn cells(run: &RunSummary, engine: EngineColumns) -> Vec<FlatMetric> {
    fn walk(path: &mut Vec<String>, v: Value, out: &mut Vec<FlatMetric>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    path.push(k);
                    walk(path, v, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.into_iter().enumerate() {
                    path.push(i.to_string());
                    walk(path, v, out);
                    path.pop();
                }
            }
            value => {
                let scope = path[0].clone();
                let keyed = matches!(scope.as_str(), "services" | "calls") && path.len() > 2;
                let (entity, rest) = if keyed {
                    (Some(path[1].clone()), &path[2..])
                } else {
                    (None, &path[1..])
                };
                out.push(FlatMetric {
                    scope,
                    entity,
                    name: rest.join("."),
                    value,
                });
            }
        }
    }
    let value = serde_json::to_value(run).expect("summaries serialize");
    let mut out = Vec::new();
    if let Value::Object(top) = value {
        for (k, v) in top {
            match k.as_str() {
                "scenario" | "seed" => {}
                "engine" if engine == EngineColumns::Exclude => {}
                _ => walk(&mut vec![k], v, &mut out),
            }
        }
    }
    out
}

/// The metric columns of results.csv that a scenario's runs have, in order.
pub fn metric_columns(sc: &crate::scenario::Scenario) -> Vec<String> {
    let mut rec =
        crate::metrics::Recorder::new(sc.classes.len(), sc.services.len(), sc.edges.len(), 0);
    let fin = crate::metrics::summary::FinalState::empty(sc.services.len());
    let empty = crate::metrics::summary::summarize(sc, &mut rec, &fin);
    flatten(&empty, EngineColumns::Exclude)
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}
