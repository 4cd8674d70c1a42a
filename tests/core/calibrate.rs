//! `loadsim calibrate` end to end. The "truth" is a small shop (api → db) whose database has 12
//! slots; its observed figures are read off runs of the truth itself, so a calibration that fits
//! `services.db.slots` must find 12: exactly when it runs on the seed the figures came from (no
//! noise: common random numbers make the run at 12 reproduce every figure), and within the range
//! it reports as good as the best when the figures come from other seeds.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

const SHOP: &str = "description: api in front of a database with 12 slots
duration: 20s
drain: 5s
seed: 1
arrivals: { rate: 300 }
client: { entry: api, attempt_timeout: 2s, retries: 0 }
services:
  api:
    slots: 256
    service_time: { dist: exponential, mean: 2ms }
    calls:
      db: { attempt_timeout: 1s, retries: 0 }
  db:
    slots: 12
    service_time: { dist: lognormal, mean: 30ms, sigma: 0.6 }
";

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

/// Runs the truth on `seeds` with latency quantiles and returns each run's JSON.
fn truth_runs(sc: &Path, seeds: &[u64]) -> Vec<Value> {
    seeds
        .iter()
        .map(|s| {
            let out = loadsim()
                .arg("run")
                .arg(sc)
                .args(["--format", "json", "--seed", &s.to_string()])
                .args(["--set", "metrics={quantiles: [0.5, 0.99]}"])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            v[0].clone()
        })
        .collect()
}

fn mean(runs: &[Value], f: impl Fn(&Value) -> f64) -> f64 {
    runs.iter().map(f).sum::<f64>() / runs.len() as f64
}

/// The observed file: the db's utilization, busy slots and latency p50/p99, and user success,
/// as the mean over `runs` (latencies written in whole nanoseconds).
fn observed(runs: &[Value]) -> String {
    let db = |r: &Value, k: &str| r["services"]["db"][k].as_f64().unwrap();
    let lat = |r: &Value, k: &str| {
        r["services"]["db"]["latency_quantiles"][k]
            .as_f64()
            .unwrap()
    };
    let ns = |s: f64| format!("{}ns", (s * 1e9).round() as u64);
    format!(
        "description: the truth's own figures
tolerance: 0.05
user:
  success: {}
services:
  db:
    utilization: {}
    busy_slots: {}
    latency: {{ p50: {}, p99: {{ value: {}, tolerance: 0.2 }} }}
",
        mean(runs, |r| r["metrics"]["success_rate"].as_f64().unwrap()),
        mean(runs, |r| db(r, "utilization")),
        mean(runs, |r| db(r, "mean_in_system") - db(r, "mean_queue_len")),
        ns(mean(runs, |r| lat(r, "p50_s"))),
        ns(mean(runs, |r| lat(r, "p99_s"))),
    )
}

fn setup(dir: &Path, truth_seeds: &[u64]) -> (PathBuf, PathBuf) {
    let sc = dir.join("shop.yaml");
    std::fs::write(&sc, SHOP).unwrap();
    let runs = truth_runs(&sc, truth_seeds);
    let obs = dir.join("observed.yaml");
    std::fs::write(&obs, observed(&runs)).unwrap();
    (sc, obs)
}

fn calibrate(sc: &Path, obs: &Path, seeds: &str, extra: &[&str]) -> std::process::Output {
    loadsim()
        .arg("calibrate")
        .arg(sc)
        .arg("--observed")
        .arg(obs)
        // The model starts from a wrong guess: 40 slots.
        .args(["--set", "services.db.slots=40"])
        .args(["--fit", "services.db.slots=2..64"])
        .args(["--seeds", seeds, "--quiet", "--format", "json"])
        .args(extra)
        .output()
        .unwrap()
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn calibrate_recovers_the_slots_exactly_without_noise() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, obs) = setup(dir.path(), &[1]);
    let out = calibrate(&sc, &obs, "1", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out);
    let fitted = &r["fitted_values"][0];
    assert_eq!(fitted["key"], "services.db.slots");
    assert_eq!(fitted["value"], "12", "{r:#}");
    // No noise: nothing else is as good.
    assert_eq!(fitted["as_good_from"], "12");
    assert_eq!(fitted["as_good_to"], "12");
    assert_eq!(fitted["identified"], true);
    // As written (40 slots) the utilization is off by far; fitted, every figure is within.
    let before_util = r["before"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == "services.db.utilization")
        .unwrap();
    assert_eq!(before_util["within"], false);
    assert!(
        r["fitted"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["within"] == true),
        "{r:#}"
    );
    assert!(r["loss_after"].as_f64().unwrap() < 1e-12, "{r:#}");
    assert!(r["loss_before"].as_f64().unwrap() > 0.5, "{r:#}");
}

#[test]
fn calibrate_over_other_seeds_reports_a_range_that_holds_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, obs) = setup(dir.path(), &[101, 102, 103]);
    let out = calibrate(&sc, &obs, "1..3", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out);
    let f = &r["fitted_values"][0];
    let v = |k: &str| f[k].as_str().unwrap().parse::<i64>().unwrap();
    assert!(v("as_good_from") <= 12 && 12 <= v("as_good_to"), "{r:#}");
    assert!((v("value") - 12).abs() <= 1, "{r:#}");
}

#[test]
fn write_emits_an_overlay_that_extends_the_scenario_and_reproduces_the_fit() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, obs) = setup(dir.path(), &[1]);
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let overlay = dir.path().join("out").join("shop.calibrated.yaml");
    let out = calibrate(&sc, &obs, "1", &["--write", overlay.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&overlay).unwrap();
    assert!(text.contains("extends: ../shop.yaml"), "{text}");
    // The overlay runs, and says 12 slots.
    let run = loadsim()
        .arg("run")
        .arg(&overlay)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
    assert_eq!(doc["services"]["db"]["slots"].as_i64(), Some(12), "{text}");
    // --write never overwrites an input.
    let again = calibrate(&sc, &obs, "1", &["--write", sc.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&sc).unwrap(), SHOP);
}

#[test]
fn a_figure_out_of_reach_exits_1_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, _) = setup(dir.path(), &[1]);
    // Success of 0.5 cannot be reached by any number of database slots.
    let obs = dir.path().join("impossible.yaml");
    std::fs::write(
        &obs,
        "user: { success: 0.5 }\nservices: { db: { utilization: 0.5 } }\n",
    )
    .unwrap();
    let out = calibrate(&sc, &obs, "1", &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out);
    let unmatched: Vec<&str> = r["unmatched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(unmatched, ["user.success"], "{r:#}");
}

#[test]
fn resume_runs_only_what_is_missing_and_gives_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, obs) = setup(dir.path(), &[1]);
    let out_dir = dir.path().join("cal");
    let d = out_dir.to_str().unwrap();
    let full = calibrate(&sc, &obs, "1", &["--out", d]);
    assert!(full.status.success());
    let stopped = calibrate(&sc, &obs, "1", &["--out", d, "--max-runs", "3"]);
    assert_eq!(stopped.status.code(), Some(1));
    let resumed = calibrate(&sc, &obs, "1", &["--out", d, "--resume"]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert_eq!(json(&full), json(&resumed));
    // A changed observed file is another calibration: --resume refuses it.
    std::fs::write(&obs, "services: { db: { utilization: 0.3 } }\n").unwrap();
    let changed = calibrate(&sc, &obs, "1", &["--out", d, "--resume"]);
    assert_eq!(changed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&changed.stderr).contains("cannot resume"));
}

#[test]
fn every_problem_of_the_observed_file_is_reported_at_once_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("shop.yaml");
    std::fs::write(&sc, SHOP).unwrap();
    let obs = dir.path().join("bad.yaml");
    std::fs::write(
        &obs,
        "tolerance: 0.1
user:
  success: 1.5
services:
  dbb:
    utilization: 0.5
  db:
    latency: { p50: 30ms, p99: 10ms, p0: 1ms }
    throughput: -3
    colour: blue
",
    )
    .unwrap();
    let out = calibrate(&sc, &obs, "1", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "bad.yaml:3",  // success 1.5
        "bad.yaml:10", // unknown key colour
    ] {
        assert!(err.contains(needle), "{needle} missing in:\n{err}");
    }
    // The shape problem (colour) stops the meaning checks of that file only where it must; the
    // scenario-dependent check runs once the file's own problems are fixed.
    std::fs::write(
        &obs,
        "user:\n  success: 1.5\nservices:\n  dbb:\n    utilization: 0.5\n  db:\n    latency: { p50: 30ms, p99: 10ms, p0: 1ms }\n    throughput: -3\n",
    )
    .unwrap();
    let out = calibrate(&sc, &obs, "1", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "bad.yaml:2", // success 1.5
        "p99",        // p99 below p50
        "p0",         // not a quantile
        "bad.yaml:8", // throughput -3
    ] {
        assert!(err.contains(needle), "{needle} missing in:\n{err}");
    }
}

#[test]
fn an_observed_service_the_scenario_lacks_is_named_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("shop.yaml");
    std::fs::write(&sc, SHOP).unwrap();
    let obs = dir.path().join("obs.yaml");
    std::fs::write(&obs, "services:\n  dbb:\n    utilization: 0.5\n").unwrap();
    let out = calibrate(&sc, &obs, "1", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("obs.yaml:2") && err.contains("dbb") && err.contains("`db`"),
        "{err}"
    );
}

/// The truth of the two-window tests: a database whose work slows with its busy slots (USL
/// `kappa` 0.003 on 32 slots), observed at its usual load and at half of it.
const CONTENDED: &str = "description: api in front of a database with contention
duration: 20s
drain: 5s
seed: 1
arrivals: { rate: 250 }
client: { entry: api, attempt_timeout: 2s, retries: 0 }
services:
  api:
    slots: 256
    service_time: { dist: exponential, mean: 2ms }
    calls:
      db: { attempt_timeout: 1s, retries: 0 }
  db:
    slots: 32
    service_time: { dist: lognormal, mean: 20ms, sigma: 0.6 }
    contention: { sigma: 0, kappa: 0.003 }
";

/// Writes `peak.yaml` (load 1) and `quiet.yaml` (load 0.5) from the truth's runs on seed 1.
fn two_windows(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let sc = dir.join("db.yaml");
    std::fs::write(&sc, CONTENDED).unwrap();
    let mut files = Vec::new();
    for (name, load) in [("peak", "1"), ("quiet", "0.5")] {
        let out = loadsim()
            .arg("run")
            .arg(&sc)
            .args(["--format", "json", "--seed", "1"])
            .args(["--set", "metrics={quantiles: [0.5, 0.99]}"])
            .args(["--set", &format!("arrivals.scale={load}")])
            .output()
            .unwrap();
        assert!(out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = observed(&[v[0].clone()]).replace(
            "tolerance: 0.05\n",
            &format!("tolerance: 0.05\nload: {load}\n"),
        );
        let f = dir.join(format!("{name}.yaml"));
        std::fs::write(&f, text).unwrap();
        files.push(f);
    }
    (sc, files[0].clone(), files[1].clone())
}

#[test]
fn two_windows_at_two_loads_recover_contention_and_scale_exactly_without_noise() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, peak, quiet) = two_windows(dir.path());
    let out = loadsim()
        .arg("calibrate")
        .arg(&sc)
        .args(["--observed", peak.to_str().unwrap()])
        .args(["--observed", quiet.to_str().unwrap()])
        // The model starts from a wrong guess: almost no contention, slower work.
        .args(["--set", "services.db.contention.kappa=0.0003"])
        .args(["--set", "services.db.service_time.scale=1.25"])
        .args(["--fit", "services.db.contention.kappa=0.0003..0.03"])
        .args(["--fit", "services.db.service_time.scale=0.5..1.5"])
        .args(["--seeds", "1", "--steps", "5", "--rounds", "0"])
        .args(["--quiet", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json(&out);
    // 0.003 is on the coarse log grid of 0.0003..0.03 and 1 on the linear grid of 0.5..1.5.
    assert_eq!(r["fitted_values"][0]["value"], "0.003", "{r:#}");
    assert_eq!(r["fitted_values"][1]["value"], "1", "{r:#}");
    assert!(r["loss_after"].as_f64().unwrap() < 1e-12, "{r:#}");
    // Each window's figures are named by its file and read off a run at its load: the quiet
    // window's busy slots, as written, are about half the peak's.
    let before = |k: &str| {
        r["before"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["figure"] == k)
            .unwrap_or_else(|| panic!("{k} in {r:#}"))["model"]
            .as_f64()
            .unwrap()
    };
    let ratio = before("quiet: services.db.busy_slots") / before("peak: services.db.busy_slots");
    assert!((0.4..0.6).contains(&ratio), "{ratio}");
    assert!(
        r["observed_file"].as_str().unwrap().contains("(load 0.5)"),
        "{r:#}"
    );
}

#[test]
fn a_load_that_is_not_a_positive_multiple_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (sc, peak, _) = two_windows(dir.path());
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "load: 0\nservices: { db: { utilization: 0.1 } }\n").unwrap();
    let out = loadsim()
        .arg("calibrate")
        .arg(&sc)
        .args(["--observed", peak.to_str().unwrap()])
        .args(["--observed", bad.to_str().unwrap()])
        .args(["--fit", "services.db.slots=2..64", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:1") && err.contains("load"), "{err}");
}
