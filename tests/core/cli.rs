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
