//! `loadsim tune` end to end, on a scenario whose feasible set is known by construction: one
//! server at 200 req/s with capacity 100/s, so its queue is always full — `max_queue` equals
//! `queue_cap` — and every admitted request is served during the drain, so in healthy load
//! `rejected_full` falls by exactly one per extra queue slot (common random numbers: the same
//! arrivals for every candidate). The requirement `services.svc.max_queue <= 12` under a slow
//! fault therefore holds iff `queue_cap <= 12`, and the cheapest feasible setting is 12.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

const SCENARIO: &str = "description: overloaded single server; the queue is always full
duration: 23s
drain: 10s
seed: 1
arrivals: { rate: 200 }
client: { entry: svc, attempt_timeout: 10s, retries: 0 }
services:
  svc:
    slots: 1
    queue_cap: 4
    reject_delay: 1ms
    service_time: { dist: constant, value: 10ms }
";

const FAULTS: &str = "faults:
  slow: { kind: slow, slowdown: 10, from: 1s, duration: 2s }
";

fn files(dir: &Path) -> (PathBuf, PathBuf) {
    let sc = dir.join("cap.yaml");
    std::fs::write(&sc, SCENARIO).unwrap();
    let f = dir.join("faults.yaml");
    std::fs::write(&f, FAULTS).unwrap();
    (sc, f)
}

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

/// `loadsim tune` on the capped server with `extra` arguments.
fn tune(sc: &Path, faults: &Path, extra: &[&str]) -> Command {
    let mut c = loadsim();
    c.arg("tune")
        .arg(sc)
        .arg("--faults")
        .arg(faults)
        .args(["--target", "svc"])
        .args(["--vary", "services.svc.queue_cap=1..40"])
        .args(["--vary", "services.svc.reject_delay=1ms..9ms"])
        .args(["--objective", "services.svc.rejected_full"])
        .args(["--require", "services.svc.max_queue <= 12"])
        .args(["--seeds", "2", "--quiet"])
        .args(extra);
    c
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(out)))
}

#[test]
fn tune_finds_exactly_the_boundary_known_by_construction() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, f) = files(dir.path());
    let out = tune(&sc, &f, &["--format", "json"]).assert().success();
    let j = json(&out.get_output().stdout);
    let rec = &j["recommended"];
    assert_eq!(rec["set"][0], "services.svc.queue_cap=12", "{rec}");
    assert_eq!(rec["feasible"], true);
    // Every candidate tried is feasible iff its queue cap is at most 12.
    let candidates = j["candidates"].as_array().unwrap();
    assert!(candidates.len() > 25, "the grid and its refinements");
    for c in candidates {
        let cap: u64 = c["settings"][0]["value"].as_str().unwrap().parse().unwrap();
        assert_eq!(c["feasible"], cap <= 12, "{c}");
    }
    assert!(
        candidates.iter().any(|c| c["settings"][0]["value"] == "13"),
        "the search tried the first infeasible value"
    );
    assert_eq!(j["regions"][0]["ranges"][0], serde_json::json!(["1", "12"]));
    let why = &j["rejections"][0];
    assert_eq!(why["fault"], "slow");
    assert_eq!(why["requirement"], "services.svc.max_queue <= 12");
    assert_eq!(why["ranges"][0][0], "13");
    assert!(
        j["recommended_yaml"]
            .as_str()
            .unwrap()
            .contains("services:\n  svc:\n    queue_cap: 12\n")
    );
}

#[test]
fn the_recommendation_meets_every_requirement_when_rerun_with_loadsim_run() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, f) = files(dir.path());
    let out = tune(&sc, &f, &["--format", "json"]).assert().success();
    let j = json(&out.get_output().stdout);
    for region in j["regions"].as_array().unwrap() {
        let mut run = loadsim();
        run.arg("run").arg(&sc);
        for s in j["recommended"]["set"].as_array().unwrap() {
            run.args(["--set", s.as_str().unwrap()]);
        }
        for s in region["reproduce"].as_array().unwrap() {
            run.args(["--set", s.as_str().unwrap()]);
        }
        let ran = run
            .args(["--seeds", "1..2", "--format", "json"])
            .assert()
            .success();
        let r = json(&ran.get_output().stdout);
        let values = &r[0]["metrics"]["services.svc.max_queue"]["values"];
        assert_eq!(
            values,
            &serde_json::json!([12.0, 12.0]),
            "{}",
            region["fault"]
        );
        let rate = &r[0]["metrics"]["services.svc.max_queue"]["n"];
        assert_eq!(rate, 2);
    }
}

#[test]
fn tune_is_the_same_on_one_thread_and_many() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, f) = files(dir.path());
    let one = tune(&sc, &f, &["--format", "json", "--jobs", "1"])
        .assert()
        .success();
    let four = tune(&sc, &f, &["--format", "json", "--jobs", "4"])
        .assert()
        .success();
    assert_eq!(one.get_output().stdout, four.get_output().stdout);
}

#[test]
fn an_interrupted_tune_resumes_to_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, f) = files(dir.path());
    let whole = tune(&sc, &f, &[]).assert().success();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let stopped = tune(&sc, &f, &["--out", out_s, "--max-runs", "30"])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&stopped.get_output().stderr).to_string();
    assert!(err.contains("--resume"), "{err}");
    let journaled = std::fs::read_to_string(out.join("journal.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(journaled, 1 + 30, "the header and every run that finished");
    let resumed = tune(&sc, &f, &["--out", out_s, "--resume", "--max-runs", "200"])
        .assert()
        .success();
    assert_eq!(resumed.get_output().stdout, whole.get_output().stdout);
    assert_eq!(
        std::fs::read(out.join("tune.md")).unwrap(),
        whole.get_output().stdout
    );
    // Resuming a finished search runs nothing.
    tune(&sc, &f, &["--out", out_s, "--resume", "--max-runs", "0"])
        .assert()
        .success();
}

#[test]
fn an_impossible_requirement_exits_1_with_the_closest_setting() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, f) = files(dir.path());
    let out = tune(&sc, &f, &["--require", "services.svc.max_queue <= 0"])
        .assert()
        .code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("no setting in the range meets every requirement"),
        "{text}"
    );
    assert!(
        text.contains(
            "the closest is services.svc.queue_cap = 12, services.svc.reject_delay = 1ms"
        ),
        "caps up to 12 fail one requirement on both seeds, larger caps both; of those the best \
         objective is the largest cap: {text}"
    );
    assert!(
        text.contains("under `slow`: `services.svc.max_queue <= 0` on 2 of 2 seeds"),
        "{text}"
    );
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("no setting in the range meets"), "{err}");
}

#[test]
fn bad_input_exits_2_with_the_place_and_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, f) = files(dir.path());
    let bad_faults = dir.path().join("bad.yaml");
    std::fs::write(
        &bad_faults,
        "faults:\n  ok: {kind: outage, from: 1s, duration: 1s}\n  gone: {kind: outage, service: svc_x, from: 1s, duration: 1s}\n",
    )
    .unwrap();
    let cases: [(Vec<String>, &str); 9] = [
        (
            vec!["--vary".into(), "services.svc.queue_cpa=1..4".into()],
            "queue_cap",
        ),
        (
            vec!["--vary".into(), "services.svc.slots=5..2".into()],
            "LOW must be below HIGH",
        ),
        (
            vec!["--vary".into(), "services.svc.slots=0.5..2.5".into()],
            "services.svc.slots",
        ),
        (
            vec!["--vary".into(), "services.svc.slots=1s..2s".into()],
            "services.svc.slots",
        ),
        (
            vec!["--objective".into(), "services.svc.rejectd_full".into()],
            "did you mean `services.svc.rejected_full`",
        ),
        (
            vec!["--require".into(), "services.svc.max_queu <= 3".into()],
            "did you mean `services.svc.max_queue`",
        ),
        (
            vec!["--require".into(), "services.svc.max_queue about 3".into()],
            "METRIC OP NUMBER",
        ),
        (vec!["--target".into(), "svx".into()], "did you mean `svc`"),
        (
            vec!["--faults".into(), bad_faults.to_str().unwrap().into()],
            "bad.yaml:3",
        ),
    ];
    for (args, expected) in cases {
        let mut c = loadsim();
        c.arg("tune").arg(&sc).args(["--quiet", "--seeds", "1"]);
        if !args.iter().any(|a| a == "--faults") {
            c.arg("--faults").arg(&f);
        }
        if !args.iter().any(|a| a == "--target") {
            c.args(["--target", "svc"]);
        }
        if !args.iter().any(|a| a == "--vary") {
            c.args(["--vary", "services.svc.queue_cap=1..4"]);
        }
        let out = c.args(&args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            err.contains(expected),
            "{args:?}: expected `{expected}` in:\n{err}"
        );
    }
    let out = loadsim()
        .arg("tune")
        .arg(&sc)
        .args(["--faults", bad_faults.to_str().unwrap(), "--target", "svc"])
        .args(["--vary", "services.svc.queue_cap=1..4", "--quiet"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("faults.gone.service"), "{err}");
}

#[test]
fn the_standard_fault_set_applies_to_a_shipped_scenario() {
    // Every fault of the built-in set validates on the article's chain (exit 0 or 1, never 2).
    let out = loadsim()
        .arg("tune")
        .arg(super::common::scenario_path("protected"))
        .args([
            "--target", "svc_b", "--seeds", "1", "--steps", "2", "--rounds", "0",
        ])
        .args(["--vary", "services.svc_b.queue_cap=8..9", "--quiet"])
        .args(["--set", "arrivals.rate=40"])
        .output()
        .unwrap();
    assert!(
        out.status.code() != Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    for f in [
        "slow_x2_5s",
        "slow_x10_60s",
        "error_50pct",
        "outage_10s",
        "surge_x3",
        "capacity_half",
    ] {
        assert!(text.contains(f), "{f} in\n{text}");
    }
}
