//! Production retry configurations → loadsim edge keys. Owns `loadsim import` and the scenario
//! key `calls.<callee>.import`: reading a gRPC service config ([`grpc`], gRFC A6) or an Envoy
//! route and cluster ([`envoy`]), translating each field that has an exact loadsim meaning into
//! the edge key that carries it, and naming every field that has none ([`Unsupported`]) — nothing
//! is dropped silently. Invalid input is a [`ConfigError`] naming the file, the JSON/YAML path
//! and the line. The result is rendered as commented YAML to paste ([`Imported::to_yaml`]) or
//! merged under the edge like a file named by `extends` ([`resolve_imports`]).

pub mod envoy;
pub mod grpc;
pub mod traces;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use yaml_serde::{Mapping, Value};

use crate::config::error::{ConfigError, Diagnostic, Origin};
use crate::config::source::{Document, Pos, SourceFile, read_text};
use crate::time::SimDuration;

/// One loadsim edge key produced by an import, with the source fields it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: &'static str,
    pub value: Value,
    /// The source fields and rule, for the comment beside the key.
    pub from: String,
    /// The path in the source file of the field it came from (`methodConfig[0].timeout`), so that
    /// a problem with the value names the source's line.
    pub field: String,
    /// Where [`Entry::field`] is written (filled when the import finishes).
    pub origin: Option<Origin>,
}

/// A source field with no exact loadsim meaning: reported, never dropped silently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The field's path in the source file (`methodConfig[0].waitForReady`).
    pub field: String,
    /// Why loadsim cannot model it, and what it does instead.
    pub why: String,
    /// Where the field is written (filled when the import finishes).
    pub origin: Option<Origin>,
}

/// The edge policy read from one source.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Imported {
    /// What was read, for the header comment (`methodConfig[0] (service "a.B", method "C")`).
    pub source: String,
    pub entries: Vec<Entry>,
    pub unsupported: Vec<Unsupported>,
    /// Further comment lines (defaults applied, hints).
    pub notes: Vec<String>,
}

impl Imported {
    fn push(
        &mut self,
        key: &'static str,
        value: Value,
        field: impl Into<String>,
        from: impl Into<String>,
    ) {
        self.entries.push(Entry {
            key,
            value,
            from: from.into(),
            field: field.into(),
            origin: None,
        });
    }

    fn unsupported(&mut self, field: impl Into<String>, why: impl Into<String>) {
        self.unsupported.push(Unsupported {
            field: field.into(),
            why: why.into(),
            origin: None,
        });
    }

    /// The edge keys as one YAML mapping, in the order of [`Imported::entries`].
    pub fn mapping(&self) -> Mapping {
        let mut m = Mapping::new();
        for e in &self.entries {
            m.insert(Value::String(e.key.to_owned()), e.value.clone());
        }
        m
    }

    /// The policy as commented YAML to paste under `calls.<callee>`: a header naming `file` and
    /// what was read, one line per key with its source fields, and the unsupported fields as
    /// comments at the end (they also go to stderr).
    pub fn to_yaml(&self, file: &Path) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# loadsim edge policy imported from {}, {}",
            file.display(),
            self.source
        );
        out.push_str("# paste under services.<caller>.calls.<callee>:\n");
        for n in &self.notes {
            let _ = writeln!(out, "# {n}");
        }
        let lines: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("{}: {}", e.key, flow(&e.value)))
            .collect();
        let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        for (line, e) in lines.iter().zip(&self.entries) {
            let pad = width - line.chars().count();
            let _ = writeln!(out, "{line}{}  # {}", " ".repeat(pad), e.from);
        }
        if self.entries.is_empty() {
            out.push_str("# (no edge key: the source sets nothing loadsim models)\n");
        }
        for u in &self.unsupported {
            let _ = writeln!(out, "# unsupported: {}: {}", u.field, u.why);
        }
        out
    }

    /// The unsupported fields as diagnostics (for `--strict`, which makes them exit 2).
    pub fn strict_error(&self, file: &Path) -> Option<ConfigError> {
        if self.unsupported.is_empty() {
            return None;
        }
        Some(ConfigError {
            diagnostics: self
                .unsupported
                .iter()
                .map(|u| Diagnostic {
                    origin: u.origin.clone().unwrap_or(Origin::File {
                        path: file.to_owned(),
                        line: None,
                        column: None,
                        source_line: None,
                    }),
                    key: u.field.clone(),
                    message: format!("unsupported (--strict): {}", u.why),
                })
                .collect(),
        })
    }

    /// One stderr line per unsupported field.
    pub fn unsupported_lines(&self, file: &Path) -> Vec<String> {
        self.unsupported
            .iter()
            .map(|u| unsupported_line(file, u))
            .collect()
    }
}

/// The stderr line of one unsupported field.
fn unsupported_line(file: &Path, u: &Unsupported) -> String {
    format!("{}: unsupported `{}`: {}", file.display(), u.field, u.why)
}

/// A value in YAML flow style, on one line: `{base: 25ms, cap: 250ms}`, `[timeout, reject]`.
pub fn flow(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Sequence(items) => {
            let parts: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Mapping(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", flow(k), flow(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Tagged(t) => flow(&t.value),
    }
}

/// A duration as loadsim writes it (`100ms`, `1s 500ms`).
pub(crate) fn duration_value(d: SimDuration) -> Value {
    Value::String(d.to_string())
}

/// A number as YAML: an integer when it is whole.
pub(crate) fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        Value::Number((x as i64).into())
    } else {
        Value::Number(x.into())
    }
}

/// The `retry_on` kinds named by a source's conditions, each once, in loadsim's order.
pub(crate) fn retry_on_kinds(named: &[&str]) -> Vec<&'static str> {
    ["timeout", "reject", "error"]
        .into_iter()
        .filter(|k| named.contains(k))
        .collect()
}

/// A `retry_on` list as YAML.
pub(crate) fn retry_on_value(kinds: &[&str]) -> Value {
    Value::Sequence(
        kinds
            .iter()
            .map(|k| Value::String((*k).to_owned()))
            .collect(),
    )
}

/// A flow mapping from pairs.
pub(crate) fn map_of(pairs: Vec<(&str, Value)>) -> Value {
    let mut m = Mapping::new();
    for (k, v) in pairs {
        m.insert(Value::String(k.to_owned()), v);
    }
    Value::Mapping(m)
}

/// A source file read with the position of every key, and the problems found in it so far.
pub(crate) struct Source {
    pub doc: Document,
    pub problems: Vec<Diagnostic>,
}

impl Source {
    /// Reads `path`: JSON when `json` (checked as JSON first, for its line and column), else
    /// YAML; both through loadsim's YAML reader (JSON is YAML), which indexes every key.
    pub fn read(path: &Path, json: bool) -> Result<Source, ConfigError> {
        let text = read_text(path)?;
        let at = |line: usize, column: usize, message: String| {
            ConfigError::one(Diagnostic {
                origin: Origin::File {
                    path: path.to_owned(),
                    line: Some(line),
                    column: Some(column),
                    source_line: text.lines().nth(line.saturating_sub(1)).map(str::to_owned),
                },
                key: String::new(),
                message,
            })
        };
        if text.trim().is_empty() {
            return Err(ConfigError::file(path, "is empty"));
        }
        if json && let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
            return Err(at(e.line(), e.column(), format!("is not valid JSON: {e}")));
        }
        let doc = Document::from_text(path, &text)?;
        Ok(Source {
            doc,
            problems: Vec::new(),
        })
    }

    /// Records a problem at `key` (a dotted/indexed path into the file).
    pub fn problem(&mut self, key: &str, message: impl Into<String>) {
        let d = self.doc.diagnostic(key, message);
        self.problems.push(d);
    }

    /// The problems so far, as an error, or `out` with every unsupported field located.
    pub fn done(self, mut out: Imported) -> Result<Imported, ConfigError> {
        for u in &mut out.unsupported {
            let field = u.field.split(": ").next().unwrap_or_default();
            u.origin = Some(self.doc.locate(field));
        }
        for e in &mut out.entries {
            e.origin = Some(self.doc.locate(&e.field));
        }
        self.finish(out)
    }

    /// The problems so far, as an error, or `ok`.
    pub fn finish<T>(self, ok: T) -> Result<T, ConfigError> {
        if self.problems.is_empty() {
            Ok(ok)
        } else {
            Err(self.doc.sorted(self.problems))
        }
    }
}

/// `a.b` + `c` → `a.b.c`; `` + `c` → `c`.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The protobuf JSON form of a `google.protobuf.Duration` (`"1.5s"`, `".1s"`, `"-2s"`): decimal
/// seconds with up to nine fractional digits and an `s`, read exactly. `Err` says what is wrong;
/// a negative duration is refused (every duration imported is a timeout or a backoff).
pub fn proto_duration(text: &str) -> Result<SimDuration, String> {
    let what = || {
        format!(
            "`{text}` is not a protobuf duration: decimal seconds with an `s`, like \"0.1s\" or \
             \"2s\""
        )
    };
    let body = text.strip_suffix('s').ok_or_else(what)?;
    if body.starts_with('-') {
        return Err(format!(
            "`{text}` is negative; a duration must be at least 0s"
        ));
    }
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 9
    {
        return Err(what());
    }
    let secs: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| what())?
    };
    let nanos: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().map_err(|_| what())?
    };
    secs.checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(nanos))
        .map(SimDuration)
        .ok_or_else(|| format!("`{text}` is too long"))
}

/// Reads a duration field at `key` of `v` (a protobuf JSON duration string); records a problem
/// and returns `None` when it is not one.
pub(crate) fn duration_at(src: &mut Source, key: &str, v: &Value) -> Option<SimDuration> {
    match v.as_str() {
        Some(s) => match proto_duration(s) {
            Ok(d) => Some(d),
            Err(m) => {
                src.problem(key, m);
                None
            }
        },
        None => {
            src.problem(
                key,
                "must be a duration string, like \"0.1s\" (protobuf JSON form)",
            );
            None
        }
    }
}

/// Reads a `uint32` (or `google.protobuf.UInt32Value`) at `key`: a JSON number, or a `{value: N}`
/// wrapper. Every integer field imported is one, and the source's protobuf parser refuses a value
/// above 4294967295, so loadsim does too.
pub(crate) fn uint_at(src: &mut Source, key: &str, v: &Value) -> Option<u64> {
    let v = match v {
        Value::Mapping(m) if m.len() == 1 && m.contains_key("value") => &m["value"],
        v => v,
    };
    match v.as_u64() {
        Some(n) if n <= u64::from(u32::MAX) => Some(n),
        Some(n) => {
            src.problem(
                key,
                format!(
                    "{n} is above 4294967295, the largest uint32 (the field's protobuf type); \
                     the source refuses it"
                ),
            );
            None
        }
        None => {
            src.problem(
                key,
                "must be a whole number from 0 to 4294967295 (a uint32)",
            );
            None
        }
    }
}

/// Reads a number at `key`.
pub(crate) fn number_at(src: &mut Source, key: &str, v: &Value) -> Option<f64> {
    match v.as_f64().filter(|x| x.is_finite()) {
        Some(x) => Some(x),
        None => {
            src.problem(key, "must be a number");
            None
        }
    }
}

/// Reads a protobuf `float` at `key`: a finite number within ±3.4028235e38 (`f32::MAX`), the
/// range protobuf's JSON parser accepts for a `float` field.
pub(crate) fn float_at(src: &mut Source, key: &str, v: &Value) -> Option<f64> {
    let x = number_at(src, key, v)?;
    if x.abs() > f64::from(f32::MAX) {
        src.problem(
            key,
            format!(
                "{x:e} is out of the range of a protobuf `float` (at most 3.4028235e38 in \
                 size); the source refuses it"
            ),
        );
        return None;
    }
    Some(x)
}

/// The `import:` key of a scenario edge: `{grpc: FILE, service: S, method: M}` or `{envoy: FILE,
/// route: R, cluster: C}`, the file relative to the scenario file that names it.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportRaw {
    /// A gRPC service config (JSON), read as `loadsim import grpc` reads it.
    pub grpc: Option<String>,
    /// With `grpc`: the service of the methodConfig to use (`package.Service`).
    pub service: Option<String>,
    /// With `grpc`: the method of the methodConfig to use.
    pub method: Option<String>,
    /// An Envoy configuration (YAML), read as `loadsim import envoy` reads it.
    pub envoy: Option<String>,
    /// With `envoy`: the route whose `timeout` and `retry_policy` to use.
    pub route: Option<String>,
    /// With `envoy`: the cluster whose `circuit_breakers`, `lb_policy` and `outlier_detection` to
    /// use.
    pub cluster: Option<String>,
    /// Unsupported source fields this edge acknowledges, by the name `loadsim import` prints
    /// (`methodConfig[0].waitForReady`, `routes[0].route.retry_policy.retry_on: reset`): their
    /// notes are no longer printed by `loadsim check`. A name the import does not report is an
    /// error.
    pub acknowledge: Option<Vec<String>>,
}

/// What reading the `calls.<callee>.import` keys of one file gives: the notes of unsupported
/// fields not acknowledged, the files read (with their text), where each imported value is
/// written in its source file, and the problems found — kept, so that they are reported with the
/// problems of the rest of the scenario in one pass.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    pub notes: Vec<String>,
    pub read: Vec<(PathBuf, String)>,
    /// Each imported file, its `keys` being the scenario keys its values became, with the index
    /// of the file that imports it (in [`Document::files`]).
    pub sources: Vec<(usize, SourceFile)>,
    pub problems: Vec<Diagnostic>,
    /// The edges (`services.<s>.calls.<c>`) whose import failed: their keys are incomplete.
    pub failed: Vec<String>,
}

impl Resolved {
    pub fn extend(&mut self, other: Resolved) {
        self.notes.extend(other.notes);
        self.read.extend(other.read);
        self.sources.extend(other.sources);
        self.problems.extend(other.problems);
        self.failed.extend(other.failed);
    }
}

/// Replaces each `services.<s>.calls.<c>.import` in `value` (one file's own document, read from
/// `path`) by the imported edge keys, with the keys written beside `import` merged over them as
/// a file is merged over the one it `extends`. Problems name `path` and the key, or the imported
/// file and its field.
pub(crate) fn resolve_imports(
    path: &Path,
    index: usize,
    value: &mut Value,
    keys: &HashMap<String, Pos>,
    text: &str,
) -> Resolved {
    let mut done = Resolved::default();
    let Some(services) = value.get_mut("services").and_then(Value::as_mapping_mut) else {
        return done;
    };
    let diag = |key: &str, message: String| {
        let pos: Option<&Pos> = keys.get(key);
        Diagnostic {
            origin: Origin::File {
                path: path.to_owned(),
                line: pos.map(|p| p.line),
                column: pos.map(|p| p.column),
                source_line: pos
                    .and_then(|p| text.lines().nth(p.line.saturating_sub(1)))
                    .map(str::to_owned),
            },
            key: key.to_owned(),
            message,
        }
    };
    for (sname, service) in services.iter_mut() {
        let Some(calls) = service.get_mut("calls").and_then(Value::as_mapping_mut) else {
            continue;
        };
        for (cname, call) in calls.iter_mut() {
            let Some(edge) = call.as_mapping_mut() else {
                continue;
            };
            let Some(spec) = edge.shift_remove("import") else {
                continue;
            };
            let at = format!(
                "services.{}.calls.{}",
                sname.as_str().unwrap_or_default(),
                cname.as_str().unwrap_or_default()
            );
            let key = format!("{at}.import");
            let problem = |message: String| diag(&key, message);
            let raw: ImportRaw = match ImportRaw::deserialize_value(&spec) {
                Ok(r) => r,
                Err(m) => {
                    done.problems.push(problem(m));
                    done.failed.push(at);
                    continue;
                }
            };
            let base = path.parent().unwrap_or(Path::new("."));
            let read = match (&raw.grpc, &raw.envoy) {
                (Some(_), None) if raw.route.is_some() || raw.cluster.is_some() => Err(problem(
                    "`route` and `cluster` go with `envoy`, not `grpc`".into(),
                )),
                (Some(g), None) => {
                    let file = base.join(g);
                    Ok(grpc::import(
                        &file,
                        &grpc::Select {
                            service: raw.service.clone(),
                            method: raw.method.clone(),
                        },
                    )
                    .map(|i| (file, i)))
                }
                (None, Some(_)) if raw.service.is_some() || raw.method.is_some() => Err(problem(
                    "`service` and `method` go with `grpc`, not `envoy`".into(),
                )),
                (None, Some(_)) if raw.route.is_none() && raw.cluster.is_none() => Err(problem(
                    "name the `route` or the `cluster` (or both) to import".into(),
                )),
                (None, Some(e)) => {
                    let file = base.join(e);
                    Ok(envoy::import(
                        &file,
                        &envoy::Select {
                            route: raw.route.clone(),
                            cluster: raw.cluster.clone(),
                        },
                    )
                    .map(|i| (file, i)))
                }
                _ => Err(problem(
                    "give one source: `{grpc: FILE, method: NAME}` or `{envoy: FILE, route: NAME}`"
                        .into(),
                )),
            };
            let (file, imported) = match read {
                Ok(Ok(read)) => read,
                Ok(Err(e)) => {
                    for mut d in e.diagnostics {
                        d.message = format!("{} (imported by `{key}`)", d.message);
                        done.problems.push(d);
                    }
                    done.failed.push(at);
                    continue;
                }
                Err(d) => {
                    done.problems.push(d);
                    done.failed.push(at);
                    continue;
                }
            };
            let acknowledged = raw.acknowledge.unwrap_or_default();
            let reported: Vec<&str> = imported
                .unsupported
                .iter()
                .map(|u| u.field.as_str())
                .collect();
            for (i, name) in acknowledged.iter().enumerate() {
                if !reported.contains(&name.as_str()) {
                    let hint = crate::config::suggest::did_you_mean(name, reported.iter().copied());
                    let ikey = format!("{key}.acknowledge[{i}]");
                    done.problems.push(diag(
                        if keys.contains_key(&ikey) {
                            &ikey
                        } else {
                            &key
                        },
                        format!(
                            "`{name}` is not a field this import reports unsupported (it \
                             reports: {}){hint}",
                            if reported.is_empty() {
                                "none".to_owned()
                            } else {
                                reported.join(", ")
                            }
                        ),
                    ));
                }
            }
            for u in &imported.unsupported {
                if !acknowledged.contains(&u.field) {
                    done.notes
                        .push(format!("{key}: {}", unsupported_line(&file, u)));
                }
            }
            let Ok(source_text) = read_text(&file) else {
                continue;
            };
            let mut located = HashMap::new();
            for e in &imported.entries {
                if let Some(Origin::File {
                    line: Some(line),
                    column: Some(column),
                    ..
                }) = &e.origin
                {
                    located.insert(
                        join(&at, e.key),
                        Pos {
                            line: *line,
                            column: *column,
                        },
                    );
                }
            }
            done.sources.push((
                index,
                SourceFile {
                    path: file.clone(),
                    text: source_text.clone(),
                    keys: located,
                },
            ));
            done.read.push((file, source_text));
            // The keys written beside `import` over the imported ones, as over a file named by
            // `extends`; a `null` stays, so that it also removes the key from what this file
            // extends.
            let mut merged = imported.mapping();
            for (k, v) in std::mem::take(edge) {
                match (merged.get_mut(&k), v) {
                    (_, Value::Null) => {
                        merged.insert(k, Value::Null);
                    }
                    (Some(slot), v) => {
                        crate::config::source::deep_merge(slot, v, &mut Vec::new(), &mut Vec::new())
                    }
                    (None, v) => {
                        merged.insert(k, v);
                    }
                }
            }
            *edge = merged;
        }
    }
    done
}

impl ImportRaw {
    fn deserialize_value(v: &Value) -> Result<ImportRaw, String> {
        use serde::Deserialize;
        ImportRaw::deserialize(v).map_err(|e| {
            format!(
                "{e}; write `import: {{grpc: FILE, method: NAME}}` or `import: {{envoy: FILE, \
                 route: NAME}}`"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_durations_are_read_exactly() {
        assert_eq!(proto_duration("1s"), Ok(SimDuration(1_000_000_000)));
        assert_eq!(proto_duration(".1s"), Ok(SimDuration(100_000_000)));
        assert_eq!(proto_duration("0.000000001s"), Ok(SimDuration(1)));
        assert_eq!(proto_duration("2.5s"), Ok(SimDuration(2_500_000_000)));
        assert_eq!(proto_duration("0s"), Ok(SimDuration::ZERO));
        for bad in ["1", "s", ".s", "1.0000000001s", "1ms", "a s", "1.2.3s"] {
            assert!(proto_duration(bad).is_err(), "{bad}");
        }
        assert!(proto_duration("-1s").unwrap_err().contains("negative"));
    }

    #[test]
    fn flow_style_is_one_line() {
        let v = map_of(vec![
            ("base", duration_value(SimDuration(25_000_000))),
            (
                "on",
                Value::Sequence(vec!["timeout".into(), "reject".into()]),
            ),
        ]);
        assert_eq!(flow(&v), "{base: 25ms, on: [timeout, reject]}");
    }
}
