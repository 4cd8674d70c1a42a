//! Snapshot files of `loadsim test`. Owns what a snapshot holds (every model metric of one run of
//! a scenario at its own seed, floats rounded to a number of significant digits, counts exact;
//! never `engine.*`, which is what the run cost rather than what the model did), its file format,
//! reading it back with every problem located, and the difference of two snapshots metric by
//! metric.
//!
//! The format is insta's `.snap` layout, so a reviewer who knows insta reads it at a glance and
//! insta's tooling can open it: a YAML header between two `---` lines (`source`, `expression`,
//! and an `info` map with the loadsim version, [`crate::MODEL_VERSION`], the scenario, seed,
//! digits and a SHA-256 digest of the body), then one `metric: value` line per metric in the run
//! JSON's order. The digest makes a hand-edited or damaged snapshot an error instead of a silent
//! pass; snapshots are written by `loadsim test` only.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::config::source::Document;
use crate::metrics::RunSummary;
use crate::report::flat::{EngineColumns, flatten};
use crate::scenario::{ConfigError, Diagnostic, Origin};

/// Significant digits kept when `snapshot: true` does not say.
pub const DEFAULT_DIGITS: u32 = 6;
/// The folder, beside the scenario file, that holds its snapshot.
pub const FOLDER: &str = "snapshots";

/// `snapshot:` settings of a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Significant digits kept of each float metric.
    pub digits: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            digits: DEFAULT_DIGITS,
        }
    }
}

/// `x` rounded to `digits` significant digits (correctly rounded, through its decimal form).
pub fn round_sig(x: f64, digits: u32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let prec = digits.clamp(1, 17) as usize - 1;
    format!("{x:.prec$e}").parse().unwrap_or(x)
}

/// `x` rounded to `digits` significant digits as short text: `3`, `0.998765`, `1.5e-7`; never
/// `-0`.
pub fn number_text(x: f64, digits: u32) -> String {
    let r = round_sig(x, digits);
    if r == 0.0 {
        "0".into()
    } else if r.fract() == 0.0 && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        serde_json::Number::from_f64(r).map_or_else(|| r.to_string(), |n| n.to_string())
    }
}

/// Where the snapshot of `scenario_file` lives: `<folder>/snapshots/<stem>.snap`.
pub fn path_for(scenario_file: &Path) -> PathBuf {
    let stem = scenario_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    scenario_file
        .parent()
        .unwrap_or(Path::new(""))
        .join(FOLDER)
        .join(format!("{stem}.snap"))
}

/// The pending snapshot beside `snap`: `<stem>.snap.new`.
pub fn pending_path(snap: &Path) -> PathBuf {
    let mut s = snap.as_os_str().to_owned();
    s.push(".new");
    PathBuf::from(s)
}

/// What a snapshot records about how it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotHeader {
    /// The loadsim version that wrote it.
    pub loadsim: String,
    /// [`crate::MODEL_VERSION`] of that loadsim.
    pub model_version: u32,
    /// The scenario's name (its file stem).
    pub scenario: String,
    /// The file name of the scenario, as insta's `source`.
    pub source: String,
    /// The seed of the run snapshotted.
    pub seed: u64,
    /// Significant digits kept of each float metric (`snapshot.digits`, default 6).
    pub digits: u32,
}

/// A snapshot: its header and `(metric, value text)` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Who wrote it, for which scenario, seed and precision.
    pub header: SnapshotHeader,
    /// `(metric path, value as text)`, in the order of the flattened run summary (engine columns
    /// excluded).
    pub metrics: Vec<(String, String)>,
}

/// One metric that differs between two snapshots; `None` where a side lacks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The metric's dotted path.
    pub metric: String,
    /// Its value in the stored snapshot.
    pub old: Option<String>,
    /// Its value in this run's snapshot.
    pub new: Option<String>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
        write!(
            f,
            "{}: {} → {}",
            self.metric,
            side(&self.old),
            side(&self.new)
        )
    }
}

#[derive(Deserialize, JsonSchema)]
struct HeaderRaw {
    source: String,
    #[allow(dead_code)]
    expression: Option<String>,
    info: InfoRaw,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct InfoRaw {
    loadsim: String,
    model_version: u32,
    scenario: String,
    seed: u64,
    digits: u32,
    digest: String,
}

impl Snapshot {
    /// The snapshot of `run`, a run of the scenario in file `source` (a file name).
    pub fn of_run(run: &RunSummary, source: &str, digits: u32) -> Snapshot {
        // `metrics.recovered` is derived from `recovery_s` and the fault window: it adds nothing
        // to pin, and leaving it out keeps snapshots written before it existed valid.
        let mut metrics = Vec::new();
        for (k, v) in flatten(run, EngineColumns::Exclude) {
            if k != "metrics.recovered" {
                scalar_lines(k, v, digits, &mut metrics);
            }
        }
        Snapshot {
            header: SnapshotHeader {
                loadsim: env!("CARGO_PKG_VERSION").into(),
                model_version: crate::MODEL_VERSION,
                scenario: run.scenario.clone(),
                source: source.into(),
                seed: run.seed,
                digits,
            },
            metrics,
        }
    }

    fn body(&self) -> String {
        self.metrics
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect()
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let body = self.body();
        let h = &self.header;
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
        format!(
            "---\nsource: {}\nexpression: {}\ninfo:\n  loadsim: {}\n  model_version: {}\n  scenario: {}\n  seed: {}\n  digits: {}\n  digest: {}\n---\n{body}",
            quote(&h.source),
            quote(&format!(
                "metrics of scenario {} at seed {}, floats to {} significant digits",
                h.scenario, h.seed, h.digits
            )),
            quote(&h.loadsim),
            h.model_version,
            quote(&h.scenario),
            h.seed,
            h.digits,
            quote(&digest(&body)),
        )
    }

    /// Reads a snapshot file's text. A damaged or hand-edited file, or a snapshot of another
    /// scenario than `scenario`, is an error at its line.
    pub fn parse(path: &Path, text: &str, scenario: &str) -> Result<Snapshot, ConfigError> {
        let text = text.replace("\r\n", "\n");
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let at = |line: usize, message: String| {
            ConfigError::one(Diagnostic {
                origin: Origin::File {
                    path: path.to_owned(),
                    line: Some(line),
                    column: Some(1),
                    source_line: lines.get(line - 1).map(|l| l.trim_end().to_owned()),
                },
                key: String::new(),
                message,
            })
        };
        let redo = "snapshots are written by `loadsim test`; delete the file and run `loadsim test --accept` to write it again";
        if lines.first().map(|l| l.trim_end()) != Some("---") {
            return Err(at(
                1,
                format!("is not a loadsim snapshot: it must start with a `---` line; {redo}"),
            ));
        }
        let Some(end) = lines.iter().skip(1).position(|l| l.trim_end() == "---") else {
            return Err(at(
                1,
                format!("the header has no closing `---` line; {redo}"),
            ));
        };
        let end = end + 1; // index of the closing line
        // The header as its own YAML document, with line 1 left blank so its lines keep their
        // numbers in diagnostics.
        let header_text = format!("\n{}", lines[1..end].concat());
        let doc = Document::from_text(path, &header_text)?;
        let raw: HeaderRaw = crate::config::deserialize(&doc)?;
        let info = raw.info;
        if info.scenario != scenario {
            return Err(ConfigError::one(doc.diagnostic(
                "info.scenario",
                format!(
                    "is a snapshot of scenario `{}`, not of `{scenario}`; each scenario keeps its own `snapshots/<stem>.snap`",
                    info.scenario
                ),
            )));
        }
        let body = lines[end + 1..].concat();
        if digest(&body) != info.digest {
            return Err(ConfigError::one(doc.diagnostic(
                "info.digest",
                format!("does not match the metrics below the header: the file was edited by hand or damaged; {redo}"),
            )));
        }
        let mut metrics = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, line) in lines[end + 1..].iter().enumerate() {
            let number = end + 2 + i;
            let line = line.trim_end_matches('\n');
            let Some((metric, value)) = split_line(line) else {
                let message = match line.rsplit_once(": ") {
                    Some((_, value)) => format!(
                        "`{value}` is not a number, `true`, `false`, `null` or a quoted string; {redo}"
                    ),
                    None => format!("expected `metric: value`; {redo}"),
                };
                return Err(at(number, message));
            };
            if !seen.insert(metric.to_owned()) {
                return Err(at(number, format!("`{metric}` appears twice; {redo}")));
            }
            metrics.push((metric.to_owned(), value.to_owned()));
        }
        Ok(Snapshot {
            header: SnapshotHeader {
                loadsim: info.loadsim,
                model_version: info.model_version,
                scenario: info.scenario,
                source: raw.source,
                seed: info.seed,
                digits: info.digits,
            },
            metrics,
        })
    }

    /// The metrics that differ from `old`, in this snapshot's order, then those only `old` has.
    pub fn changes_from(&self, old: &Snapshot) -> Vec<Change> {
        let before: std::collections::HashMap<&str, &str> = old
            .metrics
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let now: std::collections::HashSet<&str> =
            self.metrics.iter().map(|(k, _)| k.as_str()).collect();
        let mut changes: Vec<Change> = self
            .metrics
            .iter()
            .filter(|(k, v)| before.get(k.as_str()) != Some(&v.as_str()))
            .map(|(k, v)| Change {
                metric: k.clone(),
                old: before.get(k.as_str()).map(|s| s.to_string()),
                new: Some(v.clone()),
            })
            .collect();
        changes.extend(
            old.metrics
                .iter()
                .filter(|(k, _)| !now.contains(k.as_str()))
                .map(|(k, v)| Change {
                    metric: k.clone(),
                    old: Some(v.clone()),
                    new: None,
                }),
        );
        changes
    }

    /// What else differs in how the two were made: seed, digits, model version, loadsim version.
    pub fn header_notes(&self, old: &Snapshot) -> Vec<String> {
        let (o, n) = (&old.header, &self.header);
        let mut notes = Vec::new();
        if o.seed != n.seed {
            notes.push(format!("seed {} → {}", o.seed, n.seed));
        }
        if o.digits != n.digits {
            notes.push(format!("digits {} → {}", o.digits, n.digits));
        }
        if o.model_version != n.model_version {
            notes.push(format!(
                "model version {} → {}: this loadsim changes results on purpose (see its changelog)",
                o.model_version, n.model_version
            ));
        }
        if o.loadsim != n.loadsim {
            notes.push(format!(
                "written by loadsim {}, now {}",
                o.loadsim, n.loadsim
            ));
        }
        notes
    }
}

/// One `(metric, value text)` line per scalar of `value`: a list (a service's `replica_stats`,
/// an autoscaler's `timeline`) or a map inside it is spelled out by index and key
/// (`services.api.replica_stats.0.utilization`), so that its floats are rounded like every other
/// and a change names the element that moved. Floats keep `digits` significant digits, whole
/// numbers are exact, and `true`, `false`, `null` and strings (JSON-quoted, so one line) are
/// written as JSON spells them; [`value_is_scalar`] reads each of them back.
fn scalar_lines(key: String, value: Value, digits: u32, out: &mut Vec<(String, String)>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.into_iter().enumerate() {
                scalar_lines(format!("{key}.{i}"), item, digits, out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                scalar_lines(format!("{key}.{k}"), item, digits, out);
            }
        }
        Value::Number(n) if n.is_u64() || n.is_i64() => out.push((key, n.to_string())),
        Value::Number(n) => out.push((key, number_text(n.as_f64().unwrap_or(f64::NAN), digits))),
        other => out.push((key, other.to_string())),
    }
}

/// Whether `text` is a value [`scalar_lines`] writes: a number, `true`, `false`, `null` or a
/// JSON-quoted string.
fn value_is_scalar(text: &str) -> bool {
    text.parse::<f64>().is_ok()
        || matches!(
            serde_json::from_str::<Value>(text),
            Ok(Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_))
        )
}

/// Splits a body line into metric and value. A metric name may itself hold `": "` (an edge of a
/// class, `calls.a->b: x.retries`) and so may a string value, so the split is the rightmost
/// `": "` whose right side is a whole value: a JSON string's own `": "` is never followed by a
/// complete value, as its closing quote would be left over.
fn split_line(line: &str) -> Option<(&str, &str)> {
    line.rmatch_indices(": ")
        .map(|(i, _)| (&line[..i], &line[i + 2..]))
        .find(|(_, value)| value_is_scalar(value))
}

/// The digest of a snapshot body.
fn digest(body: &str) -> String {
    crate::util::sha256([body.as_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_significant_digits_and_prints_short() {
        assert_eq!(round_sig(0.99876543, 6), 0.998765);
        assert_eq!(round_sig(123456789.0, 3), 123000000.0);
        assert_eq!(round_sig(-0.000123456, 2), -0.00012);
        assert_eq!(number_text(2.0, 6), "2");
        assert_eq!(number_text(0.1 + 0.2, 6), "0.3");
        assert_eq!(number_text(-1e-12, 6), "-1e-12");
        assert_eq!(number_text(-0.0, 6), "0");
        assert_eq!(number_text(2.5000004, 6), "2.5");
        assert_eq!(number_text(2.500004, 6), "2.5");
        assert_eq!(number_text(2.50004, 6), "2.50004");
    }

    fn sample() -> Snapshot {
        Snapshot {
            header: SnapshotHeader {
                loadsim: "0.1.0".into(),
                model_version: 1,
                scenario: "checkout".into(),
                source: "checkout.yaml".into(),
                seed: 7,
                digits: 6,
            },
            metrics: vec![
                ("metrics.recovery_s".into(), "3".into()),
                ("calls.a->b: x.retries".into(), "12".into()),
                ("metrics.success_rate".into(), "null".into()),
            ],
        }
    }

    #[test]
    fn every_kind_of_value_reads_back() {
        // Booleans, null, strings (one holding `": "`, like a metric name of a class edge) and
        // the spelled-out elements of a list, as `scalar_lines` writes them from a run's JSON.
        let run = serde_json::json!({
            "classes": {"checkout": {"recovered": true, "recovery_s": null}},
            "metrics": {"recovery_measurable": false, "note": "a: \"b\": c", "p": 0.1234567},
            "replica_stats": [{"arrivals": 3, "utilization": 0.666666666}, {"arrivals": 0}],
        });
        let mut metrics = Vec::new();
        for (k, v) in run.as_object().unwrap() {
            scalar_lines(k.clone(), v.clone(), 6, &mut metrics);
        }
        // A class edge's name holds `": "` too.
        metrics.push(("calls.a->b: x.note".into(), "\"y: z\"".into()));
        let lines: Vec<String> = metrics.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        assert_eq!(
            lines,
            [
                "classes.checkout.recovered: true",
                "classes.checkout.recovery_s: null",
                "metrics.recovery_measurable: false",
                r#"metrics.note: "a: \"b\": c""#,
                "metrics.p: 0.123457",
                "replica_stats.0.arrivals: 3",
                "replica_stats.0.utilization: 0.666667",
                "replica_stats.1.arrivals: 0",
                r#"calls.a->b: x.note: "y: z""#,
            ]
        );
        let mut s = sample();
        s.metrics = metrics;
        let p = Path::new("snapshots/checkout.snap");
        assert_eq!(Snapshot::parse(p, &s.to_text(), "checkout").unwrap(), s);
        // A value that is none of them is still an error at its line, naming what it may be.
        let mut bad = sample();
        bad.metrics.push(("metrics.x".into(), "yes".into()));
        let e = Snapshot::parse(p, &bad.to_text(), "checkout")
            .unwrap_err()
            .to_string();
        assert!(e.contains("checkout.snap:15:"), "{e}");
        assert!(
            e.contains("`yes` is not a number, `true`, `false`, `null` or a quoted string"),
            "{e}"
        );
    }

    #[test]
    fn text_reads_back_and_edits_are_caught_at_their_line() {
        let s = sample();
        let text = s.to_text();
        assert!(
            text.starts_with("---\nsource: \"checkout.yaml\"\n"),
            "{text}"
        );
        let p = Path::new("snapshots/checkout.snap");
        assert_eq!(Snapshot::parse(p, &text, "checkout").unwrap(), s);
        // CRLF line ends (a Windows checkout) read the same.
        assert_eq!(
            Snapshot::parse(p, &text.replace('\n', "\r\n"), "checkout").unwrap(),
            s
        );
        // A value edited by hand: the digest line is named.
        let edited = text.replace("recovery_s: 3", "recovery_s: 2");
        let e = Snapshot::parse(p, &edited, "checkout")
            .unwrap_err()
            .to_string();
        assert!(e.contains("checkout.snap:10:"), "{e}");
        assert!(e.contains("edited by hand"), "{e}");
        // Another scenario's snapshot.
        let e = Snapshot::parse(p, &text, "payments")
            .unwrap_err()
            .to_string();
        assert!(e.contains("checkout.snap:7:"), "{e}");
        assert!(e.contains("not of `payments`"), "{e}");
        // No header; a header that never closes; a header key of the wrong type.
        for (bad, want) in [
            (
                "metrics.x: 1\n".to_owned(),
                ":1:1: is not a loadsim snapshot",
            ),
            ("---\nsource: x\n".to_owned(), "no closing `---`"),
            (text.replace("seed: 7", "seed: seven"), "checkout.snap:8:"),
        ] {
            let e = Snapshot::parse(p, &bad, "checkout")
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{want} in {e}");
        }
    }

    #[test]
    fn changes_name_each_metric_old_and_new() {
        let old = sample();
        let mut new = sample();
        new.metrics[0].1 = "5".into();
        new.metrics.remove(2);
        new.metrics
            .push(("services.c.arrivals".into(), "40".into()));
        let changes: Vec<String> = new
            .changes_from(&old)
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(
            changes,
            [
                "metrics.recovery_s: 3 → 5",
                "services.c.arrivals: (absent) → 40",
                "metrics.success_rate: null → (absent)"
            ]
        );
        assert!(sample().changes_from(&old).is_empty());
        new.header.model_version = 2;
        assert!(new.header_notes(&old)[0].starts_with("model version 1 → 2"));
    }
}
