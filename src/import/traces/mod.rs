//! Distributed traces → a commented scenario (`loadsim import traces`). Owns reading OTLP, Jaeger
//! and Zipkin v2 JSON into one span model ([`read`]), turning the spans into services, calls,
//! stages, own work, classes and arrivals with a coverage count ([`analyse`]), and writing the
//! scenario with every default marked ([`render`]). Invalid input (malformed JSON, an unknown
//! shape, an empty file, a span cycle, a time that does not parse) is a [`ConfigError`] naming
//! the file, the key path and the line, every problem of every file at once. docs/import.md
//! gives the rules and the specifications they follow.

pub mod analyse;
pub mod read;
pub mod render;

use std::path::{Path, PathBuf};

pub use read::TraceFormat;

use crate::config::error::{ConfigError, Diagnostic, Origin};
use crate::config::read::read_text_up_to;
use crate::config::yaml::{self, Parsed};

/// The largest trace file read (trace files are data, far larger than a scenario).
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

/// The scenario built from traces, and what to say on stderr: the coverage report, the defaults
/// applied, errors and retries seen.
#[derive(Clone, Debug)]
pub struct TraceImport {
    /// The scenario, as YAML text.
    pub yaml: String,
    /// Lines for stderr: coverage, defaults applied, errors and retries seen.
    pub report: Vec<String>,
}

/// Reads `files` (each in `format`, or the format its shape says) and builds the scenario;
/// `samples` writes each service's own work as `{dist: empirical, samples: […]}` instead of
/// quantiles; the root CLIENT spans of the services in `clients` are a client's requests.
pub fn import(
    files: &[PathBuf],
    format: Option<TraceFormat>,
    samples: bool,
    clients: &[String],
) -> Result<TraceImport, ConfigError> {
    let mut diagnostics = Vec::new();
    let mut problems = Vec::new();
    let mut texts: Vec<Option<String>> = Vec::new();
    let mut spans = Vec::new();
    let mut formats = Vec::new();
    for (i, path) in files.iter().enumerate() {
        match read_text_up_to(path, MAX_TRACE_BYTES) {
            Ok(text) => {
                let r = read::read(i, &text, format, &mut problems);
                let file_spans = if r.formats == [TraceFormat::Zipkin] {
                    read::merge_shared(r.spans)
                } else {
                    r.spans
                };
                spans.extend(file_spans);
                for f in r.formats {
                    if !formats.contains(&f) {
                        formats.push(f);
                    }
                }
                texts.push(Some(text));
            }
            Err(e) => {
                diagnostics.extend(e.diagnostics);
                texts.push(None);
            }
        }
    }
    let graph = analyse::analyse(&spans, clients, &mut problems);
    if graph.coverage.spans == 0 && problems.is_empty() && diagnostics.is_empty() {
        for (i, _) in files.iter().enumerate() {
            problems.push(read::Problem {
                file: i,
                key: String::new(),
                line: None,
                message: "holds no span; give files of traces".into(),
            });
        }
    }
    if !problems.is_empty() || !diagnostics.is_empty() {
        diagnostics.extend(locate(files, &texts, problems));
        return Err(ConfigError { diagnostics });
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let kinds: Vec<&str> = formats.iter().map(|f| f.name()).collect();
    let sources = format!("{} ({})", names.join(", "), kinds.join(", "));
    let rendered = render::render(&graph, &sources, samples);
    let mut report = coverage_lines(&graph.coverage);
    report.extend(rendered.notes);
    Ok(TraceImport {
        yaml: rendered.yaml,
        report,
    })
}

/// The coverage report: traces, spans read and used, and each reason a span was not used.
fn coverage_lines(c: &analyse::Coverage) -> Vec<String> {
    let mut out = vec![format!(
        "coverage: {} traces, {} spans read, {} used, {} not used",
        c.traces,
        c.spans,
        c.used,
        c.spans - c.used
    )];
    for (why, n) in &c.unused {
        out.push(format!("coverage: {n} spans not used: {}", why.describe()));
    }
    if c.skew_corrected > 0 {
        out.push(format!(
            "coverage: {} spans used after a clock-skew correction (a server span outside its \
             caller's, centred in it with the spans under it)",
            c.skew_corrected
        ));
    }
    if c.client_without_callee > 0 {
        out.push(format!(
            "coverage: {} client spans name no callee (no server span under them, no peer \
             service): counted as the caller's own work",
            c.client_without_callee
        ));
    }
    out
}

/// The problems as diagnostics, each located at its line and column: the parser's position for
/// malformed JSON, else the key path looked up in the file read with key positions (JSON is
/// YAML), or its nearest ancestor written.
fn locate(
    files: &[PathBuf],
    texts: &[Option<String>],
    problems: Vec<read::Problem>,
) -> Vec<Diagnostic> {
    let mut parsed: Vec<Option<Option<Parsed>>> = vec![None; files.len()];
    let mut out = Vec::new();
    for p in problems {
        let path = files.get(p.file).cloned().unwrap_or_default();
        let text = texts.get(p.file).and_then(|t| t.as_deref());
        let line_of = |line: usize| {
            text.and_then(|t| t.lines().nth(line.saturating_sub(1)))
                .map(|l| l.chars().take(200).collect())
        };
        let origin = match p.line {
            Some((line, column)) => Origin::File {
                path: path.clone(),
                line: Some(line),
                column: Some(column),
                source_line: line_of(line),
            },
            None => {
                let keys =
                    parsed[p.file].get_or_insert_with(|| text.and_then(|t| yaml::parse(t).ok()));
                let mut probe = p.key.clone();
                let mut found = None;
                while let Some(k) = keys.as_ref().filter(|_| !probe.is_empty()) {
                    if let Some(pos) = k.keys.get(&probe) {
                        found = Some(*pos);
                        break;
                    }
                    match probe.rfind(['.', '[']) {
                        Some(cut) => probe.truncate(cut),
                        None => break,
                    }
                }
                match found {
                    Some(pos) => Origin::File {
                        path: path.clone(),
                        line: Some(pos.line),
                        column: Some(pos.column),
                        source_line: line_of(pos.line),
                    },
                    None => file_origin(&path),
                }
            }
        };
        out.push(Diagnostic {
            origin,
            key: p.key,
            message: p.message,
        });
    }
    out.sort_by_key(|d| match &d.origin {
        Origin::File {
            path, line, column, ..
        } => (
            files.iter().position(|f| f == path).unwrap_or(0),
            line.unwrap_or(0),
            column.unwrap_or(0),
        ),
        _ => (0, 0, 0),
    });
    out
}

fn file_origin(path: &Path) -> Origin {
    Origin::File {
        path: path.to_owned(),
        line: None,
        column: None,
        source_line: None,
    }
}
