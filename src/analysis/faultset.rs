//! Fault sets, for `loadsim tune`: a YAML file whose `faults:` maps names to faults written as
//! under a scenario's `faults:`, applied one at a time to a target service named on the command
//! line. Owns the file's shape (top-level `description` and `faults` only), the two things a
//! fault set may leave out or add — `service` (the `--target` when missing), `slowdown` (a
//! `slow` fault whose `service_time` is the target's own with every duration multiplied) and
//! `slot_share` (a `capacity` fault keeping that share of the target's own slots) — and
//! turning one fault into a scenario document with only that fault in force. Each fault is
//! checked by the scenario's own validation; its problems are reported at the fault set's file,
//! key and line.

use std::path::{Path, PathBuf};

use yaml_serde::{Mapping, Value};

use crate::config::duration::parse_duration;
use crate::config::suggest::did_you_mean;
use crate::config::{ConfigError, Diagnostic, Document, Origin};
use crate::scenario::Scenario;

/// Seconds the run goes on after the longest fault window ends, at least (the scenario's
/// `duration` is lengthened when shorter), so a recovery can be seen.
pub const AFTER_FAULT_S: u64 = 20;

/// A fault set read from a file.
#[derive(Clone, Debug)]
pub struct FaultSet {
    /// The file read.
    pub file: PathBuf,
    /// Its YAML, with the key positions diagnostics point at.
    pub doc: Document,
    /// `(name, fault as written)`, in file order.
    pub faults: Vec<(String, Value)>,
}

fn str_key(k: &Value) -> String {
    k.as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{k:?}"))
}

impl FaultSet {
    /// Reads `file`: a mapping with `faults` (a mapping of names to mappings) and optionally
    /// `description`.
    pub fn load(file: &Path) -> Result<FaultSet, ConfigError> {
        FaultSet::from_document(file, crate::import::load(file)?)
    }

    /// A fault set from a document already read (the built-in standard set).
    pub fn from_document(file: &Path, doc: Document) -> Result<FaultSet, ConfigError> {
        let mut problems: Vec<Diagnostic> = Vec::new();
        let mut faults = Vec::new();
        match doc.value.as_mapping() {
            None => problems.push(doc.diagnostic(
                "",
                "a fault set is a mapping with `faults:` (names to faults, as under a scenario's `faults:`)",
            )),
            Some(top) => {
                for k in top.keys() {
                    let k = str_key(k);
                    if k != "faults" && k != "description" {
                        problems.push(doc.diagnostic(
                            &k,
                            format!(
                                "is not a key of a fault set (it takes `description` and `faults`){}",
                                did_you_mean(&k, ["faults", "description"])
                            ),
                        ));
                    }
                }
                match top.get("faults").and_then(Value::as_mapping) {
                    None => problems.push(doc.diagnostic(
                        "faults",
                        "a fault set needs `faults:`, a mapping of names to faults (at least one)",
                    )),
                    Some(m) if m.is_empty() => problems.push(
                        doc.diagnostic("faults", "holds no fault; name at least one"),
                    ),
                    Some(m) => {
                        for (name, body) in m {
                            let name = str_key(name);
                            if body.as_mapping().is_none() {
                                problems.push(doc.diagnostic(
                                    &format!("faults.{name}"),
                                    "must be a fault, a mapping like `{kind: outage, from: 10s, duration: 10s}`",
                                ));
                            } else {
                                faults.push((name, body.clone()));
                            }
                        }
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(FaultSet {
                file: file.to_owned(),
                doc,
                faults,
            })
        } else {
            Err(doc.sorted(problems))
        }
    }

    /// The scenario document `base` with only fault `i` in force, on `target`, its `duration`
    /// lengthened to at least the window's end plus [`AFTER_FAULT_S`]. Problems are the fault
    /// set's (file, key, line).
    pub fn apply(&self, i: usize, base: &Document, target: &str) -> Result<Document, ConfigError> {
        let (name, body) = &self.faults[i];
        let key = format!("faults.{name}");
        let here = |k: &str, message: String| -> ConfigError {
            ConfigError::one(self.doc.diagnostic(k, message))
        };
        let mut fault: Mapping = body.as_mapping().cloned().unwrap_or_default();
        let is_surge = fault.get("kind").and_then(Value::as_str) == Some("surge");
        if !is_surge && !fault.contains_key("service") {
            fault.insert(
                Value::String("service".into()),
                Value::String(target.into()),
            );
        }
        if let Some(factor) = fault.shift_remove("slowdown") {
            let k = format!("{key}.slowdown");
            let factor = factor
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1000.0)
                .ok_or_else(|| here(&k, "must be a number in (0, 1000]".into()))?;
            if fault.get("kind").and_then(Value::as_str) != Some("slow") {
                return Err(here(&k, "only a `slow` fault takes `slowdown`".into()));
            }
            if fault.contains_key("service_time") {
                return Err(here(
                    &k,
                    "give either `slowdown` or `service_time`, not both".into(),
                ));
            }
            let service = fault
                .get("service")
                .and_then(Value::as_str)
                .unwrap_or(target)
                .to_owned();
            let own = base
                .value
                .get("services")
                .and_then(|s| s.get(service.as_str()))
                .and_then(|s| s.get("service_time"))
                .ok_or_else(|| {
                    here(
                        &k,
                        format!(
                            "the service `{service}` has no `service_time` of its own to slow down (or does not exist); give the fault a `service_time`"
                        ),
                    )
                })?;
            let scaled = scale_dist(own, factor)
                .map_err(|m| here(&k, format!("cannot slow `{service}` down: {m}")))?;
            fault.insert(Value::String("service_time".into()), scaled);
        }
        if let Some(share) = fault.shift_remove("slot_share") {
            let k = format!("{key}.slot_share");
            let share = share
                .as_f64()
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1.0)
                .ok_or_else(|| here(&k, "must be a share in (0, 1]".into()))?;
            if fault.get("kind").and_then(Value::as_str) != Some("capacity") {
                return Err(here(
                    &k,
                    "only a `capacity` fault takes `slot_share`".into(),
                ));
            }
            if fault.contains_key("slots") {
                return Err(here(
                    &k,
                    "give either `slot_share` or `slots`, not both".into(),
                ));
            }
            let service = fault
                .get("service")
                .and_then(Value::as_str)
                .unwrap_or(target)
                .to_owned();
            let own = base
                .value
                .get("services")
                .and_then(|s| s.get(service.as_str()))
                .and_then(|s| s.get("slots"))
                .and_then(Value::as_u64)
                .ok_or_else(|| {
                    here(
                        &k,
                        format!("the service `{service}` has no `slots` of its own (or does not exist); give the fault `slots`"),
                    )
                })?;
            let slots = ((own as f64 * share).round() as u64).max(1);
            fault.insert(Value::String("slots".into()), Value::Number(slots.into()));
        }
        let mut doc = base.clone();
        let mut faults = Mapping::new();
        faults.insert(Value::String(name.clone()), Value::Mapping(fault));
        if let Some(m) = doc.value.as_mapping_mut() {
            m.insert(Value::String("faults".into()), Value::Mapping(faults));
        }
        // Lengthen the run when the window ends too late to see a recovery.
        let end = window_end_s(body);
        let mut lengthened = None;
        if let Some(end) = end {
            let want = end.ceil() as u64 + AFTER_FAULT_S;
            let have = doc
                .value
                .get("duration")
                .and_then(Value::as_str)
                .and_then(|t| parse_duration(t).ok())
                .map(|d| d.as_secs_f64());
            if have.is_some_and(|h| h < want as f64)
                && let Some(m) = doc.value.as_mapping_mut()
            {
                m.insert(
                    Value::String("duration".into()),
                    Value::String(format!("{want}s")),
                );
                lengthened = Some(format!("{want}s"));
            }
        }
        // Check it now, so every problem of the fault points at the fault set.
        match Scenario::from_document(&doc) {
            Ok(_) => Ok(doc),
            Err(e) => Err(self.rehome(e, &key, lengthened.map(|d| (body, d)))),
        }
    }

    /// Diagnostics about `faults.<name>` point at the fault set's file and line; so does a
    /// problem with the `duration` the fault's window lengthened (`window`: the fault as
    /// written and that `duration`, when it did), at the key that ends the window.
    fn rehome(&self, e: ConfigError, key: &str, window: Option<(&Value, String)>) -> ConfigError {
        ConfigError {
            diagnostics: e
                .diagnostics
                .into_iter()
                .map(|d| {
                    if let Some((body, lengthened)) = &window
                        && d.key == "duration"
                    {
                        let end = ["to", "duration", "from"]
                            .into_iter()
                            .find(|k| body.get(*k).is_some())
                            .unwrap_or_default();
                        let at = format!("{key}.{end}");
                        return self.doc.diagnostic(
                            &at,
                            format!(
                                "the window ends too late: tune runs {AFTER_FAULT_S}s past a \
                                 fault's end to see a recovery, and the scenario's `duration`, \
                                 lengthened to {lengthened}, {}",
                                d.message
                            ),
                        );
                    }
                    if d.key == key || d.key.starts_with(&format!("{key}.")) {
                        let origin = match self.doc.locate(&d.key) {
                            o @ Origin::File { .. } => o,
                            _ => Origin::File {
                                path: self.file.clone(),
                                line: None,
                                column: None,
                                source_line: None,
                            },
                        };
                        Diagnostic { origin, ..d }
                    } else {
                        d
                    }
                })
                .collect(),
        }
    }

    /// The fault's document as JSON (valid YAML), for a `--set faults=…` that reproduces a run.
    pub fn faults_json(doc: &Document) -> String {
        doc.value
            .get("faults")
            .map(|f| serde_json::to_string(f).unwrap_or_default())
            .unwrap_or_default()
    }
}

/// The end of a fault's window in seconds (`from` plus `duration`, or `to`), when written.
fn window_end_s(body: &Value) -> Option<f64> {
    let secs = |k: &str| {
        body.get(k)
            .and_then(Value::as_str)
            .and_then(|t| parse_duration(t).ok())
            .map(|d| d.as_secs_f64())
    };
    match (secs("to"), secs("from"), secs("duration")) {
        (Some(to), _, _) => Some(to),
        (None, Some(from), Some(d)) => Some(from + d),
        _ => None,
    }
}

/// A service-time distribution with every duration (`mean`, `value`, `min`, `max`) multiplied
/// by `factor`; shapes (`sigma`, `alpha`) unchanged.
fn scale_dist(dist: &Value, factor: f64) -> Result<Value, String> {
    let mut m = dist
        .as_mapping()
        .cloned()
        .ok_or("its `service_time` is not a distribution")?;
    for k in ["mean", "value", "min", "max"] {
        if let Some(v) = m.get(k) {
            let t = v
                .as_str()
                .ok_or_else(|| format!("its `service_time.{k}` is not a duration"))?;
            let d = parse_duration(t).map_err(|e| format!("its `service_time.{k}`: {e}"))?;
            let ns = (d.0 as f64 * factor).round() as u64;
            m.insert(Value::String(k.into()), Value::String(format!("{ns}ns")));
        }
    }
    Ok(Value::Mapping(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const SCENARIO: &str = "duration: 30s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\nservices:\n  a:\n    slots: 2\n    service_time: {dist: uniform, min: 10ms, max: 30ms}\n";

    #[test]
    fn slowdown_scales_the_targets_own_service_time_and_the_run_is_lengthened() {
        let dir = tempfile::tempdir().unwrap();
        let sc = write(dir.path(), "s.yaml", SCENARIO);
        let fs = write(
            dir.path(),
            "f.yaml",
            "faults:\n  slow: {kind: slow, slowdown: 10, from: 10s, duration: 60s}\n",
        );
        let set = FaultSet::load(&fs).unwrap();
        let base = crate::import::load(&sc).unwrap();
        let doc = set.apply(0, &base, "a").unwrap();
        let s = Scenario::from_document(&doc).unwrap();
        assert_eq!(s.duration.as_secs_f64(), 90.0, "10 s + 60 s + 20 s");
        assert_eq!(s.faults.len(), 1);
        let json = FaultSet::faults_json(&doc);
        assert!(json.contains("\"min\":\"100000000ns\""), "{json}");
        assert!(json.contains("\"max\":\"300000000ns\""), "{json}");
    }

    #[test]
    fn bad_fault_sets_name_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let sc = write(dir.path(), "s.yaml", SCENARIO);
        let base = crate::import::load(&sc).unwrap();
        let fs = write(
            dir.path(),
            "f.yaml",
            "faults:\n  o: {kind: outage, service: nope, from: 1s, duration: 1s}\n  e: {kind: error, fraction: 2, from: 1s, duration: 1s}\n",
        );
        let set = FaultSet::load(&fs).unwrap();
        let e = set.apply(0, &base, "a").unwrap_err().to_string();
        assert!(
            e.contains("f.yaml:2") && e.contains("faults.o.service"),
            "{e}"
        );
        let e = set.apply(1, &base, "a").unwrap_err().to_string();
        assert!(
            e.contains("f.yaml:3") && e.contains("faults.e.fraction"),
            "{e}"
        );
        let fs = write(dir.path(), "g.yaml", "falts:\n  o: {kind: outage}\n");
        let e = FaultSet::load(&fs).unwrap_err().to_string();
        assert!(e.contains("did you mean `faults`"), "{e}");
    }
}
