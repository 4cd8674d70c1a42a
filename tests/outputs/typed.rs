//! Typed, versioned outputs: every run output of the shipped scenarios validates against
//! `loadsim schema report` (JSON and each NDJSON line), the schema is strict enough to catch a
//! wrong version or a mistyped field, the committed results.csv files read back with numeric
//! columns where docs/results-columns.md says number, and that page is the generated one.

use std::process::Command;

use serde_json::Value;

use super::{loadsim_ok, repo};

fn shipped_scenarios() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["scenarios", "scenarios/protections"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".yaml") && name != "base.yaml" {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    files
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn every_run_output_validates_against_the_report_schema() {
    let schema: Value = serde_json::from_str(&loadsim_ok(&["schema", "report"])).unwrap();
    assert_eq!(schema, loadsim::report::schema::run_report());
    let v = jsonschema::draft7::new(&schema).expect("a valid draft-7 schema");
    let mut line_schema = schema.clone();
    line_schema["type"] = "object".into();
    line_schema.as_object_mut().unwrap().remove("items");
    line_schema["$ref"] = "#/definitions/RunDocument".into();
    let line_v = jsonschema::draft7::new(&line_schema).unwrap();

    let files = shipped_scenarios();
    assert!(files.len() > 10, "{files:?}");
    let mut args = vec!["run"];
    args.extend(files.iter().map(String::as_str));
    let json: Value =
        serde_json::from_str(&loadsim_ok(&[&args[..], &["--format", "json"]].concat())).unwrap();
    assert_eq!(json.as_array().unwrap().len(), files.len());
    let e = errors(&v, &json);
    assert!(e.is_empty(), "run JSON against the schema: {e:#?}");

    let ndjson = loadsim_ok(&[&args[..], &["--format", "ndjson"]].concat());
    let lines: Vec<&str> = ndjson.lines().collect();
    assert_eq!(lines.len(), files.len());
    for (line, doc) in lines.iter().zip(json.as_array().unwrap()) {
        let mut parsed: Value = serde_json::from_str(line).unwrap();
        let e = errors(&line_v, &parsed);
        assert!(e.is_empty(), "an NDJSON line against the schema: {e:#?}");
        // The same object as in the JSON array, wall-clock numbers aside.
        let mut doc = doc.clone();
        for d in [&mut parsed, &mut doc] {
            d["engine"]["wall_s"] = Value::Null;
            d["engine"]["events_per_s"] = Value::Null;
        }
        assert_eq!(parsed, doc);
    }

    // The schema is not a formality: a wrong version, a missing count, a string for a number
    // and an unknown `recovered` value are all refused.
    let first = json[0].clone();
    let bad = |edit: &dyn Fn(&mut Value)| {
        let mut d = first.clone();
        edit(&mut d);
        !errors(&line_v, &d).is_empty()
    };
    assert!(bad(&|d| d["schema_version"] = 0.into()));
    assert!(bad(&|d| {
        d["metrics"].as_object_mut().unwrap().remove("requests");
    }));
    assert!(bad(&|d| d["metrics"]["requests"] = "many".into()));
    assert!(bad(&|d| d["metrics"]["recovered"] = "yes".into()));
    assert!(!bad(&|_| {}));
}

#[test]
fn recovered_is_null_without_a_fault_and_follows_recovery_s_with_one() {
    let out = loadsim_ok(&[
        "run",
        "scenarios/naive.yaml",
        "scenarios/protected.yaml",
        "scenarios/protected.yaml",
        "--set",
        "faults={}",
        "--format",
        "ndjson",
    ]);
    for line in out.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["metrics"]["recovered"], Value::Null, "{line}");
        assert_eq!(v["metrics"]["recovery_s"], Value::Null);
    }
    let out = loadsim_ok(&[
        "run",
        "scenarios/naive.yaml",
        "scenarios/protected.yaml",
        "--format",
        "ndjson",
    ]);
    let got: Vec<(Value, Value)> = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["metrics"]["recovered"].clone(),
                v["metrics"]["recovery_s"].clone(),
            )
        })
        .collect();
    // naive never recovers (README's table); protected is back at once.
    assert_eq!(got[0], (Value::Bool(false), Value::Null));
    assert_eq!(got[1].0, Value::Bool(true));
    assert!(got[1].1.is_number());
    // A window that ends 2 s before arrivals stop leaves no 3-second span: not measurable.
    let out = loadsim_ok(&[
        "run",
        "scenarios/protected.yaml",
        "--set",
        "faults.slow_b.duration=48s",
        "--format",
        "ndjson",
    ]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["metrics"]["recovered"], Value::Null, "{out}");
}

#[test]
fn the_results_columns_page_is_the_generated_one() {
    let generated = loadsim::report::columns::markdown();
    let path = repo().join(loadsim::report::columns::FILE);
    if std::env::var_os("LOADSIM_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date; regenerate it with LOADSIM_UPDATE_DOCS=1 cargo test --locked --test outputs results_columns",
        loadsim::report::columns::FILE
    );
    for column in [
        "`metrics.recovered`",
        "`metrics.recovery_s`",
        "`<grid key>_s`",
    ] {
        assert!(committed.contains(column), "{column} documented");
    }
}

/// The committed results.csv files read back typed: every column the page documents as a number
/// or integer parses as one (or is empty where it may be), every `_s` grid companion is a number,
/// and `recovered` is a boolean.
#[test]
fn committed_results_csv_columns_parse_as_their_documented_types() {
    let page = loadsim::report::columns::markdown();
    let mut types: Vec<(String, String)> = Vec::new();
    for line in page.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        types.push((name, cells[2].to_owned()));
    }
    let pattern = |col: &str| -> Option<&str> {
        types.iter().find_map(|(name, ty)| {
            (placeholder_match(name, col) && !name.starts_with("<grid")).then_some(ty.as_str())
        })
    };
    for sweep in ["blog37", "protections", "timeouts"] {
        let path = repo().join("evidence").join(sweep).join("results.csv");
        let mut r = csv::Reader::from_path(&path).unwrap();
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let mut checked = 0;
        for (i, col) in header.iter().enumerate() {
            let ty = if col.ends_with("_s")
                && header
                    .get(i.wrapping_sub(1))
                    .is_some_and(|p| format!("{p}_s") == *col)
            {
                "number"
            } else {
                match pattern(col) {
                    Some(t) => t,
                    None => continue,
                }
            };
            checked += 1;
            for row in &rows {
                let cell = &row[i];
                let ok = if cell.is_empty() {
                    ty.ends_with("or empty")
                } else if ty.starts_with("integer") {
                    cell.parse::<i64>().is_ok()
                } else if ty.starts_with("number") {
                    cell.parse::<f64>().is_ok()
                } else if ty.starts_with("boolean") {
                    cell == "true" || cell == "false"
                } else {
                    true
                };
                assert!(ok, "{sweep}: column {col} ({ty}) holds `{cell}`");
            }
        }
        assert!(
            checked + 3 >= header.len(),
            "{sweep}: only {checked} of {} columns typed",
            header.len()
        );
    }
}

fn loadsim_any(args: &[&str]) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_loadsim"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}\n{text}"));
    (out.status.code(), v)
}

/// `check --format json`: the linter's findings as annotations; a refused file gives its errors
/// with file, line, column and key on stdout (exit 2), as CI annotations need.
#[test]
fn check_json_annotates_findings_and_refusals() {
    let (code, v) = loadsim_any(&["check", "scenarios/naive.yaml", "--format", "json"]);
    assert_eq!(code, Some(0));
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["ok"], true);
    assert_eq!(
        v["files"][0]["worst_case_attempts_per_request"]["svc_b"],
        48
    );
    let notes = v["annotations"].as_array().unwrap();
    assert_eq!(
        v["warnings"],
        notes.iter().filter(|a| a["level"] == "warning").count()
    );
    assert!(
        notes.iter().any(|a| a["key"] == "svc_a->svc_b"
            && a["check"] == "budget"
            && a["fix"].as_str().is_some_and(|f| f.contains("retries: 0"))),
        "{v:#}"
    );
    let (code, v) = loadsim_any(&[
        "check",
        "scenarios/naive.yaml",
        "--format",
        "json",
        "--deny-warnings",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(v["ok"], false);

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "duration: 10s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 0, colour: red}\n",
    )
    .unwrap();
    let (code, v) = loadsim_any(&["check", bad.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, Some(2));
    assert_eq!(v["ok"], false);
    let errs = v["annotations"].as_array().unwrap();
    assert_eq!(v["errors"], errs.len());
    let unknown = errs
        .iter()
        .find(|a| a["key"].as_str().is_some_and(|k| k.contains("colour")))
        .unwrap_or_else(|| panic!("the unknown key is reported: {v:#}"));
    assert_eq!(unknown["level"], "error");
    assert_eq!(unknown["line"], 5, "{unknown:#}");
    assert_eq!(unknown["file"], bad.to_str().unwrap());
}

/// `sweep --dry-run --format json`: the plan (axes with seconds, every cell of the shard), or the
/// refusal as annotations.
#[test]
fn sweep_dry_run_json_lists_the_plan_or_the_errors() {
    let (code, v) = loadsim_any(&[
        "sweep",
        "sweeps/blog37.yaml",
        "--dry-run",
        "--format",
        "json",
        "--shard",
        "2/3",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(v["cells_total"], 48);
    assert_eq!(v["shard"], "2/3");
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 16);
    assert!(cells.iter().all(|c| c["index"].as_u64().unwrap() % 3 == 1));
    let axis = v["axes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "faults.slow_b.duration")
        .unwrap();
    assert_eq!(axis["values_s"], serde_json::json!([2.0, 5.0, 10.0, 20.0]));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "name: x\nscenarios: [nowhere.yaml]\ngird: {seed: [1]}\n",
    )
    .unwrap();
    let (code, v) = loadsim_any(&[
        "sweep",
        bad.to_str().unwrap(),
        "--dry-run",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(2));
    assert_eq!(v["ok"], false);
    assert!(
        v["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["line"] == 3),
        "{v:#}"
    );
}

/// Whether `col` is a column of the documented `name`, where each `<placeholder>` of the name
/// stands for one non-empty key segment (no `.` in it): `services.<service>.latency_quantiles.<key>`
/// matches `services.api.latency_quantiles.p99_s` but not `services.a.calls.b.attempt_timeout`.
fn placeholder_match(name: &str, col: &str) -> bool {
    let mut parts = name.split('<');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = col.strip_prefix(first) else {
        return false;
    };
    for part in parts {
        let literal = part.split_once('>').map_or("", |(_, lit)| lit);
        // The placeholder takes a non-empty run without `.`, up to where the literal follows.
        let segment = rest.find('.').unwrap_or(rest.len());
        let end = if literal.is_empty() {
            Some(segment)
        } else {
            (1..=segment).find(|&i| rest[i..].starts_with(literal))
        };
        match end {
            Some(e) if e > 0 => rest = &rest[e + literal.len()..],
            _ => return false,
        }
    }
    rest.is_empty()
}

#[test]
fn placeholders_match_one_segment_each() {
    let n = "services.<service>.latency_quantiles.<key>";
    assert!(placeholder_match(n, "services.api.latency_quantiles.p99_s"));
    assert!(!placeholder_match(
        n,
        "services.svc_a.calls.svc_b.attempt_timeout"
    ));
    assert!(placeholder_match(
        "services.<service>.arrivals",
        "services.db.arrivals"
    ));
    assert!(!placeholder_match(
        "services.<service>.arrivals",
        "services.db.x.arrivals"
    ));
    assert!(placeholder_match("metrics.requests", "metrics.requests"));
    assert!(placeholder_match(
        "calls.<caller>-><callee>.retries",
        "calls.gateway->svc_a.retries"
    ));
    assert!(placeholder_match(
        "services.<service>.replica_stats.<k>.arrivals",
        "services.b.replica_stats.0.arrivals"
    ));
}
