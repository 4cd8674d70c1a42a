//! The binary as users call it: exit codes, formats, stdout versus stderr.

use assert_cmd::Command;

use super::common::scenario_path;

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

#[test]
fn run_prints_the_table_with_one_column_per_scenario() {
    let out = loadsim()
        .arg("run")
        .arg(scenario_path("naive"))
        .arg(scenario_path("protected"))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.lines().next().unwrap().contains("naive"));
    assert!(text.lines().next().unwrap().contains("protected"));
    assert!(text.contains("recovery time (s)"));
    assert!(text.contains("never"), "naive never recovers");
}

#[test]
fn json_is_one_document_with_the_documented_fields() {
    let out = loadsim()
        .args(["run", "--format", "json", "--seed", "11"])
        .arg(scenario_path("deadline_budget"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let r = &v[0];
    assert_eq!(r["scenario"], "deadline_budget");
    assert_eq!(r["seed"], 11);
    for k in [
        "success_rate_before",
        "success_rate_during",
        "success_rate_after",
        "recovery_s",
        "requests",
        "requests_during_fault",
        "succeeded",
        "failed_latency_p50_s",
        "success_latency_p50_s",
        "success_latency_p99_s",
    ] {
        assert!(r["metrics"].get(k).is_some(), "metrics.{k}");
    }
    for k in [
        "arrivals",
        "admitted",
        "completed",
        "completed_abandoned",
        "rejected_full",
        "dropped_expired",
        "max_queue",
        "arrivals_during_fault",
        "attempts_per_request",
        "goodput_ratio",
        "wasted_ratio",
        "worst_case_attempts_per_request",
    ] {
        assert!(
            r["services"]["svc_b"].get(k).is_some(),
            "services.svc_b.{k}"
        );
    }
    for k in ["attempts", "retries", "retries_throttled", "timeouts"] {
        assert!(
            r["calls"]["svc_a->svc_b"].get(k).is_some(),
            "calls.svc_a->svc_b.{k}"
        );
    }
    for k in ["events", "wall_s"] {
        assert!(r["engine"].get(k).is_some(), "engine.{k}");
    }
    assert_eq!(r["services"]["svc_b"]["worst_case_attempts_per_request"], 9);
}

#[test]
fn csv_has_one_row_per_scenario_and_dotted_columns() {
    let out = loadsim()
        .args(["run", "--format", "csv"])
        .arg(scenario_path("naive"))
        .arg(scenario_path("deadline"))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let headers = rdr.headers().unwrap().clone();
    assert!(headers.iter().any(|h| h == "services.svc_b.max_queue"));
    assert!(headers.iter().any(|h| h == "metrics.recovery_s"));
    assert_eq!(rdr.records().count(), 2);
}

#[test]
fn set_overrides_change_the_run() {
    let out = loadsim()
        .args([
            "run",
            "--format",
            "json",
            "--set",
            "faults.slow_b.duration=2s",
        ])
        .arg(scenario_path("protected"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v[0]["metrics"]["fault_end_s"], 12.0);
}

#[test]
fn arrivals_scale_is_set_beside_clients_without_a_top_level_arrivals_map() {
    // examples/shop has only `clients:`; `--set arrivals.scale=…` creates `arrivals: {scale}`.
    let shop = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shop/shop.yaml");
    let classes = |scale: &str| {
        let out = loadsim()
            .args(["run", "--format", "json", "--set"])
            .arg(format!("arrivals.scale={scale}"))
            .arg(&shop)
            .assert()
            .success();
        let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let mut counts = Vec::new();
        for class in ["browse", "checkout"] {
            counts.push(v[0]["classes"][class]["requests"].as_f64().unwrap());
        }
        counts
    };
    let (one, two) = (classes("1"), classes("2"));
    for (a, b) in one.iter().zip(&two) {
        let ratio = b / a;
        assert!((1.9..2.1).contains(&ratio), "{one:?} → {two:?}");
    }
}

#[test]
fn check_prints_the_r1_chain() {
    let out = loadsim()
        .arg("check")
        .arg(scenario_path("naive"))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("48"), "{text}");
    assert!(text.contains("3·4·4"), "{text}");
    let out = loadsim()
        .arg("check")
        .arg(scenario_path("deadline_budget"))
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("3·1·3"), "{text}");
}

#[test]
fn bad_input_exits_2_with_the_file_and_line_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.yaml");
    std::fs::write(&f, "extends: ").unwrap();
    let base = std::fs::read_to_string(scenario_path("base")).unwrap();
    std::fs::write(&f, base.replace("slots: 16", "slots: many")).unwrap();
    let out = loadsim().arg("run").arg(&f).assert().code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("bad.yaml:"), "{err}");
    assert!(err.contains("services.svc_b.slots"), "{err}");
    assert!(out.get_output().stdout.is_empty());
}

#[test]
fn missing_file_exits_2() {
    loadsim()
        .args(["run", "does/not/exist.yaml"])
        .assert()
        .code(2);
    loadsim()
        .args(["check", "does/not/exist.yaml"])
        .assert()
        .code(2);
}

/// A scenario whose event bound exceeds `--max-events` is refused before it runs (exit 2); the
/// run-time ceiling behind it (exit 1) is tested in `tests/trust/limits.rs`.
#[test]
fn oversized_runs_are_refused_with_exit_2() {
    let out = loadsim()
        .args(["run", "--max-events", "1000"])
        .arg(scenario_path("naive"))
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("--max-events"), "{err}");
}

/// A copy of the shipped `base.yaml` and `naive.yaml` (which extends it) in `dir`, shortened.
fn scenario_copy(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let base = dir.join("base.yaml");
    let naive = dir.join("naive.yaml");
    std::fs::copy(scenario_path("base"), &base).unwrap();
    std::fs::copy(scenario_path("naive"), &naive).unwrap();
    (naive, base)
}

/// Issue 18: `--output`, `--timeseries` or `--plot` naming an input (the scenario, the base it
/// extends, either through a symlink) or another output is refused with exit 2 before anything
/// runs, and the input is left as it was.
#[test]
fn outputs_onto_inputs_or_onto_each_other_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (naive, base) = scenario_copy(dir.path());
    let link = dir.path().join("link.yaml");
    std::os::unix::fs::symlink(&base, &link).unwrap();
    let before = (
        std::fs::read(&naive).unwrap(),
        std::fs::read(&base).unwrap(),
    );
    let out = dir.path().join("out.csv");
    let cases: Vec<(Vec<&str>, &std::path::Path, &str)> = vec![
        (vec!["--output"], &naive, "an input of this command"),
        (vec!["--output"], &base, "an input of this command"),
        (vec!["--timeseries"], &link, "an input of this command"),
        (
            vec!["--output", "OUT", "--timeseries"],
            &out,
            "also written by --output",
        ),
    ];
    for (flags, path, words) in cases {
        let mut cmd = loadsim();
        cmd.arg("run")
            .arg(&naive)
            .args(["--set", "duration=2s", "--set", "faults={}"]);
        for f in &flags {
            if *f == "OUT" {
                cmd.arg(&out);
            } else {
                cmd.arg(f);
            }
        }
        let a = cmd.arg(path).assert().code(2);
        let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
        assert!(err.contains(words), "{flags:?} {}: {err}", path.display());
    }
    let after = (
        std::fs::read(&naive).unwrap(),
        std::fs::read(&base).unwrap(),
    );
    assert!(before == after, "no input was touched");
    assert!(!out.exists(), "nothing was written");
}

/// Issue 18: every output flag creates its folder the same way, before the run (the time series
/// in a missing folder used to fail after the simulation).
#[test]
fn every_output_flag_creates_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("a/series.csv");
    let report = dir.path().join("b/report.json");
    let plots = dir.path().join("c/d");
    loadsim()
        .args([
            "run",
            "--set",
            "duration=3s",
            "--set",
            "faults={}",
            "--format",
            "json",
        ])
        .arg(scenario_path("protected"))
        .arg("--timeseries")
        .arg(&series)
        .arg("--output")
        .arg(&report)
        .arg("--plot")
        .arg(&plots)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(&series)
            .unwrap()
            .starts_with("scenario,t_s,series,value")
    );
    serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(plots.join("success_rate.svg").is_file());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

/// Issue 18: `loadsim new` never overwrites a file it did not write without `--force`: an
/// existing, different `scenario.schema.json` is refused before anything is written; an
/// identical one (from an earlier `new`) is kept.
#[test]
fn new_does_not_overwrite_a_schema_it_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("scenario.schema.json");
    std::fs::write(&schema, "{\"mine\": true}\n").unwrap();
    let a = loadsim()
        .current_dir(dir.path())
        .args(["new", "checkout"])
        .assert()
        .code(2);
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("scenario.schema.json") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&schema).unwrap(),
        "{\"mine\": true}\n"
    );
    assert!(
        !dir.path().join("checkout.yaml").exists(),
        "nothing written"
    );
    // --force overwrites it; a second scenario then finds the same schema and keeps it.
    loadsim()
        .current_dir(dir.path())
        .args(["new", "checkout", "--force"])
        .assert()
        .success();
    let written = std::fs::read_to_string(&schema).unwrap();
    assert!(written.contains("\"$schema\""), "{written}");
    loadsim()
        .current_dir(dir.path())
        .args(["new", "payments"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&schema).unwrap(), written);
}
