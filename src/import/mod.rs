//! Production retry configurations → loadsim edge keys. Owns `loadsim import` and the scenario
//! key `calls.<callee>.import`: reading a gRPC service config ([`grpc`], gRFC A6) or an Envoy
//! route and cluster ([`envoy`]), translating each field that has an exact loadsim meaning into
//! the edge key that carries it, and naming every field that has none ([`Unsupported`]) — nothing
//! is dropped silently. Invalid input is a [`ConfigError`] naming the file, the JSON/YAML path
//! and the line. The result is rendered as commented YAML to paste ([`Imported::to_yaml`]) or
//! merged under the edge like a file named by `extends` ([`resolve_imports`], which [`load`]
//! hands to the reader of scenario files).

pub mod envoy;
pub mod grpc;
pub mod imported;
pub mod traces;

use std::collections::HashMap;
use std::path::Path;

use yaml_serde::Value;

use crate::config::error::{ConfigError, Diagnostic, Origin};
use crate::config::read::read_text;
use crate::config::source::{Document, Pos, Resolved, SourceFile};

pub use imported::{Entry, Imported, Unsupported, flow, proto_duration};
use imported::{join, unsupported_line};

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

/// Reads the scenario file at `path` with its `extends` chain, each file's
/// `calls.<callee>.import` replaced by the keys it imports ([`resolve_imports`]); a problem with
/// an imported file is an error.
pub fn load(path: &Path) -> Result<Document, ConfigError> {
    Document::load_with(path, resolve_imports)
}

/// Like [`load`], but the problems of the imported files are kept in [`Document::deferred`], for
/// validation to report with the rest of the scenario's problems in one pass.
pub fn load_all(path: &Path) -> Result<Document, ConfigError> {
    Document::load_all_with(path, resolve_imports)
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
    use crate::time::SimDuration;
    use imported::{duration_value, map_of};

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
