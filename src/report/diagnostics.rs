//! Machine-read reports of `loadsim check --format json` and `loadsim sweep --dry-run --format
//! json`, for CI annotations. Owns the JSON shape of a problem or finding ([`Annotation`]: level,
//! file, line, column, key, message, fix) — the same for configuration errors (from
//! [`ConfigError`]'s diagnostics) and for the linter's findings — and the `--format text|json`
//! choice of those commands. Every document opens with `schema_version`
//! ([`super::SCHEMA_VERSION`]).

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{ConfigError, Origin};

/// `--format` of `check` and `sweep --dry-run`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Text for people (Markdown tables).
    #[default]
    Text,
    /// One JSON document on stdout, also when the input is refused (exit 2).
    Json,
}

/// One problem or finding, located as precisely as loadsim knows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Annotation {
    /// `error` (the input is refused), `warning` or `note` (the linter's findings).
    pub level: &'static str,
    /// The file, when the problem is in one (a flag's problem has none).
    pub file: Option<String>,
    /// 1-based line and column in `file`, when known.
    pub line: Option<usize>,
    /// 1-based column in `file`, when known.
    pub column: Option<usize>,
    /// The dotted key path (`services.svc_b.slots`); empty for the whole file.
    pub key: String,
    /// The `--set` argument or the flag the problem comes from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument: Option<String>,
    /// The linter's check (`budget`, `queue`, `deadline`, `load`) for findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<&'static str>,
    /// The problem, as one sentence that says what to do.
    pub message: String,
    /// What to do about a warning, when the linter knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The annotations of a refused input: one per diagnostic, in order.
pub fn errors(e: &ConfigError) -> Vec<Annotation> {
    e.diagnostics
        .iter()
        .map(|d| {
            let (file, line, column, argument) = match &d.origin {
                Origin::File {
                    path, line, column, ..
                } => (Some(path.display().to_string()), *line, *column, None),
                Origin::Set { argument, file } => (
                    Some(file.display().to_string()),
                    None,
                    None,
                    Some(format!("--set {argument}")),
                ),
                Origin::Flag { flag } => (None, None, None, Some(flag.clone())),
            };
            Annotation {
                level: "error",
                file,
                line,
                column,
                key: d.key.clone(),
                argument,
                check: None,
                message: d.message.clone(),
                fix: None,
            }
        })
        .collect()
}

/// `{"schema_version", "ok": false, "errors": n, "annotations": […]}` for a refused input.
pub fn refused(e: &ConfigError) -> String {
    let annotations = errors(e);
    text(&json!({
        "schema_version": super::SCHEMA_VERSION,
        "ok": false,
        "errors": annotations.len(),
        "annotations": annotations,
    }))
}

/// A path as the documents show it.
pub fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// Pretty JSON with a final newline.
pub fn text(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("reports serialize");
    s.push('\n');
    s
}
