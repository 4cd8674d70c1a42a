//! The generated reference of a sweep's `results.csv` columns (docs/results-columns.md). Owns
//! turning the run report's JSON Schema ([`super::schema::run_report`], itself generated from the
//! summary types and their doc comments) into one Markdown table per scope, so the page cannot
//! drift from the code: a test compares the committed file with [`markdown`].

use std::fmt::Write;

use serde_json::Value;

use super::markdown::MarkdownTable;

/// Where the generated page lives in the repository.
pub const FILE: &str = "docs/results-columns.md";

/// The page, as committed.
pub fn markdown() -> String {
    let schema = super::schema::run_report();
    let defs = &schema["definitions"];
    let mut out = String::new();
    out.push_str(
        "<!-- Generated from loadsim's summary types by `LOADSIM_UPDATE_DOCS=1 cargo test --locked --test outputs results_columns`; do not edit by hand. -->\n\n",
    );
    out.push_str("# The columns of a sweep's `results.csv`\n\n");
    out.push_str(
        "One row per finished cell, in cell order. The same metric columns, with `engine.*` besides, \
are those of `loadsim run --format csv`; `--format csv-long` has one row per metric with these names \
in its `metric` column. Definitions of the metrics: [model.md](model.md) §3. An empty cell is an \
undefined value (`null` in the run JSON): a ratio over zero, `recovery_s` of a run that never \
recovers, `recovered` where recovery is not measurable, or a column of another topology. Types: \
`integer`, `number` (a float in shortest round-trip form), `boolean` (`true`/`false`; `1`/`0` in \
the `value` column of `--format csv-long`, which is numeric throughout), `string`. Every cell is one \
value: a list (like `replica_stats`) has a column per element, indexed from 0.\n\n",
    );
    out.push_str("## Cell columns\n\n");
    let mut t = MarkdownTable::new(["column", "type", "meaning"]);
    t.row(
        [
            "`scenario`",
            "string",
            "the scenario's name (its file stem)",
        ]
        .map(String::from),
    );
    t.row(["`seed`", "integer", "the seed of the run"].map(String::from));
    t.row(
        [
            "`<grid key>`",
            "as written",
            "one column per grid key other than `seed`, in the order of `grid`: the value as written in the sweep file",
        ]
        .map(String::from),
    );
    t.row(
        [
            "`<grid key>_s`",
            "number",
            "after a duration axis (every value a duration such as `2s`): the same value in seconds, so that it sorts and plots as a number (`faults.slow_b.duration_s`)",
        ]
        .map(String::from),
    );
    let _ = writeln!(out, "{t}\n");
    for (heading, prefix, def) in [
        ("User-facing metrics", "metrics.", "RunMetrics"),
        ("Per service", "services.<service>.", "ServiceMetrics"),
        ("Per call edge", "calls.<caller>-><callee>.", "CallMetrics"),
    ] {
        let _ = writeln!(out, "## {heading}: `{prefix}*`\n");
        let mut t = MarkdownTable::new(["column", "type", "meaning"]);
        for (name, prop) in properties(&defs[def]) {
            // An object (like an autoscaled service's `autoscale`) is flattened one level deeper.
            if let Some(inner) = object_def(defs, &prop) {
                for (sub, p) in properties(inner) {
                    let desc = p
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("see docs/model.md §3")
                        .replace('\n', " ")
                        .replace('|', "\\|");
                    t.row([format!("`{prefix}{name}.{sub}`"), type_of(&p), desc]);
                }
                continue;
            }
            rows(&mut t, defs, &format!("{prefix}{name}"), &prop, "");
        }
        let _ = writeln!(out, "{t}\n");
        if def == "RunMetrics" {
            let _ = writeln!(
                out,
                "## Per request class: `classes.<class>.*`\n\nWith `clients:` of more than one \
                 class (docs/model.md §2.3.4): every `metrics.*` column above again as \
                 `classes.<class>.<name>`, over that class's user requests only; the classes' \
                 counts add up to `metrics.*`. Cells of scenarios without these classes leave \
                 them empty.\n"
            );
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// The rows of one property: itself, or for a map (an object with `additionalProperties`, like
/// `metrics.windows`) one row per column it expands to, its keys written `<key>` (`<key>.<field>`
/// for a map of objects). `within` is the description of the map holding it, if any.
fn rows(t: &mut MarkdownTable, defs: &Value, column: &str, prop: &Value, within: &str) {
    let desc = prop
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or(if within.is_empty() {
            "see docs/model.md §3"
        } else {
            within
        })
        .replace('\n', " ")
        .replace('|', "\\|");
    let nullable_map = type_of(prop).ends_with(", or empty");
    // A list of objects (like `replica_stats`): a column per element and field, `<k>` from 0.
    if let Some(def) = prop
        .get("items")
        .and_then(|i| i.get("$ref"))
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/definitions/"))
    {
        let note = format!("{desc} (one column per element `<k>`, from 0)");
        for (name, p) in properties(&defs[def]) {
            rows(t, defs, &format!("{column}.<k>.{name}"), &p, &note);
        }
        return;
    }
    match prop.get("additionalProperties") {
        Some(inner) => {
            let mut note = desc;
            if nullable_map {
                note.push_str(" (absent otherwise: the columns are empty)");
            }
            match inner
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/definitions/"))
            {
                Some(def) => {
                    for (name, p) in properties(&defs[def]) {
                        rows(t, defs, &format!("{column}.<key>.{name}"), &p, &note);
                    }
                }
                None => {
                    let mut kind = type_of(inner);
                    if !kind.ends_with(", or empty") {
                        kind.push_str(", or empty");
                    }
                    t.row([format!("`{column}.<key>`"), kind, note]);
                }
            }
        }
        None => {
            let mut kind = type_of(prop);
            if !within.is_empty() && !kind.ends_with(", or empty") {
                // Inside an optional map: empty where the map is absent.
                kind.push_str(", or empty");
            }
            t.row([format!("`{column}`"), kind, desc]);
        }
    }
}

/// The properties of an object schema, in order, including those of flattened parts (`allOf`).
fn properties(def: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Some(Value::Object(p)) = def.get("properties") {
        out.extend(p.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if let Some(Value::Array(parts)) = def.get("allOf") {
        for part in parts {
            out.extend(properties(part));
        }
    }
    out
}

/// The definition of an object-valued property (`$ref`, possibly nullable), if it is one.
fn object_def<'a>(defs: &'a Value, prop: &Value) -> Option<&'a Value> {
    let reference = prop.get("$ref").or_else(|| {
        prop.get("anyOf")?
            .as_array()?
            .iter()
            .find_map(|v| v.get("$ref"))
    })?;
    let name = reference.as_str()?.rsplit('/').next()?;
    defs.get(name).filter(|d| d.get("properties").is_some())
}

/// The CSV type of a property: its JSON type, `null` left out (an empty cell).
fn type_of(prop: &Value) -> String {
    let types: Vec<&str> = match prop.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let mut types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    if types.is_empty() {
        types.push("number");
    }
    let nullable = prop
        .get("type")
        .and_then(Value::as_array)
        .is_some_and(|ts| ts.iter().any(|t| t == "null"));
    let mut s = types.join(", ");
    if nullable {
        s.push_str(", or empty");
    }
    s
}

/// Whether a results.csv metric column (`metrics.requests`, `services.svc_b.max_queue`,
/// `calls.a->b.retries`) is an integer in the run report's schema: a count.
pub fn is_integer(column: &str) -> bool {
    let (def, name) = if let Some(name) = column.strip_prefix("metrics.") {
        ("RunMetrics", name)
    } else if let Some(rest) = column.strip_prefix("services.") {
        match rest.rsplit_once('.') {
            Some((_, name)) => ("ServiceMetrics", name),
            None => return false,
        }
    } else if let Some(rest) = column.strip_prefix("calls.") {
        match rest.rsplit_once('.') {
            Some((_, name)) => ("CallMetrics", name),
            None => return false,
        }
    } else {
        return false;
    };
    let schema = super::schema::run_report();
    properties(&schema["definitions"][def])
        .iter()
        .find(|(k, _)| k == name)
        .is_some_and(|(_, prop)| type_of(prop).starts_with("integer"))
}
