//! What an import gives and how the readers of [`super::grpc`] and [`super::envoy`] read a source
//! file: the edge keys with the fields they came from ([`Entry`]), the fields with no loadsim
//! meaning ([`Unsupported`]), the result rendered as commented YAML ([`Imported::to_yaml`]), and
//! the value readers both formats share ([`Source`], `*_at`).

use std::fmt::Write as _;
use std::path::Path;

use yaml_serde::{Mapping, Value};

use crate::config::error::{ConfigError, Diagnostic, Origin};
use crate::config::read::read_text;
use crate::config::source::Document;
use crate::time::SimDuration;

/// One loadsim edge key produced by an import, with the source fields it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The loadsim key under the edge (`attempt_timeout`, `retries`, `backoff`, …).
    pub key: &'static str,
    /// Its value, as YAML.
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
    /// The loadsim keys it gives, each with where it came from.
    pub entries: Vec<Entry>,
    /// The source's fields loadsim cannot model.
    pub unsupported: Vec<Unsupported>,
    /// Further comment lines (defaults applied, hints).
    pub notes: Vec<String>,
}

impl Imported {
    pub(super) fn push(
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

    pub(super) fn unsupported(&mut self, field: impl Into<String>, why: impl Into<String>) {
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
pub(super) fn unsupported_line(file: &Path, u: &Unsupported) -> String {
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
    pub(crate) fn read(path: &Path, json: bool) -> Result<Source, ConfigError> {
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
    pub(crate) fn problem(&mut self, key: &str, message: impl Into<String>) {
        let d = self.doc.diagnostic(key, message);
        self.problems.push(d);
    }

    /// The problems so far, as an error, or `out` with every unsupported field located.
    pub(crate) fn done(self, mut out: Imported) -> Result<Imported, ConfigError> {
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
    pub(crate) fn finish<T>(self, ok: T) -> Result<T, ConfigError> {
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
