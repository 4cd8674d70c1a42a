//! The `metrics:` section of a scenario (issue 19 item 5): the recovery rule, the reported latency
//! quantiles and named measurement windows, each checked against a number computed another way
//! (the per-second time series, the fixed quantile fields, the run's totals), the defaults giving
//! the very same JSON as no section, and the new fields valid under `loadsim schema report`.

use std::path::Path;

use serde_json::Value;

use super::{loadsim_ok, repo};

/// A scenario extending `scenarios/<base>.yaml` with `metrics` (YAML lines under `metrics:`).
fn scenario(dir: &Path, base: &str, metrics: &str) -> String {
    let path = dir.join(format!("{base}_metrics.yaml"));
    let body: String = metrics.lines().map(|l| format!("  {l}\n")).collect();
    std::fs::write(
        &path,
        format!(
            "extends: {}\nmetrics:\n{body}",
            repo()
                .join("scenarios")
                .join(format!("{base}.yaml"))
                .display()
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

fn json(file: &str, seed: &str) -> Value {
    let v: Value = serde_json::from_str(&loadsim_ok(&[
        "run", file, "--seed", seed, "--format", "json",
    ]))
    .unwrap();
    v.as_array().map_or(v.clone(), |a| a[0].clone())
}

/// Today's values spelled out give byte-for-byte the JSON of no section (wall-clock aside).
#[test]
fn the_defaults_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let with = scenario(
        dir.path(),
        "deadline",
        "recovery: {threshold: 0.99, span: 3s}",
    );
    let mut a = json(&with, "7");
    let mut b = json("scenarios/deadline.yaml", "7");
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("engine");
        v.as_object_mut().unwrap().remove("scenario");
    }
    assert_eq!(a, b);
    assert!(a["metrics"].get("latency_quantiles").is_none());
    assert!(a["metrics"].get("windows").is_none());
}

/// R2 under another rule equals the rule applied by hand to the 1-second time series: the first
/// whole second from the window's end (30 s) whose `span` seconds have at least `threshold` of
/// their arrivals succeeding.
#[test]
fn the_recovery_rule_is_the_one_written() {
    let dir = tempfile::tempdir().unwrap();
    for (threshold, span) in [(0.5, 1usize), (0.9, 2), (0.99, 3), (1.0, 5)] {
        let file = scenario(
            dir.path(),
            "deadline",
            &format!("recovery: {{threshold: {threshold}, span: {span}s}}"),
        );
        let ts = dir.path().join("ts.csv");
        let out = loadsim_ok(&[
            "run",
            &file,
            "--seed",
            "11",
            "--format",
            "json",
            "--timeseries",
            ts.to_str().unwrap(),
        ]);
        let v: Value = serde_json::from_str(&out).unwrap();
        let v = v.as_array().map_or(v.clone(), |a| a[0].clone());
        let mut arrivals = vec![0u64; 60];
        let mut ok = vec![0u64; 60];
        for line in std::fs::read_to_string(&ts).unwrap().lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let t = f[1].parse::<f64>().unwrap() as usize;
            if t >= 60 {
                continue;
            }
            match f[2] {
                "users.arrivals" => arrivals[t] = f[3].parse().unwrap(),
                "users.succeeded" => ok[t] = f[3].parse().unwrap(),
                _ => {}
            }
        }
        let want = (30..=60 - span).find(|&s| {
            let a: u64 = arrivals[s..s + span].iter().sum();
            let k: u64 = ok[s..s + span].iter().sum();
            a > 0 && k as f64 >= threshold * a as f64
        });
        let got = v["metrics"]["recovery_s"].as_f64();
        assert_eq!(
            got,
            want.map(|s| s as f64 - 30.0),
            "threshold {threshold}, span {span}s"
        );
    }
}

/// `quantiles` adds `latency_quantiles`: at 0.5 and 0.99 the fixed fields' values, higher
/// quantiles never lower; windows count what arrives in them: the whole arrival period is the
/// run's totals, the fault window is `requests_during_fault` and `success_rate_during`.
#[test]
fn quantiles_and_windows_agree_with_the_fixed_fields() {
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        "protected",
        "quantiles: [0.5, 0.95, 0.99, 0.999]\nwindows:\n  all: [0s, 60s]\n  fault: [10s, 30s]\n  warmup: [0s, 10s]",
    );
    for seed in ["7", "13"] {
        let v = json(&file, seed);
        let m = &v["metrics"];
        let q = &m["latency_quantiles"];
        assert_eq!(q["success_p50_s"], m["success_latency_p50_s"]);
        assert_eq!(q["success_p99_s"], m["success_latency_p99_s"]);
        assert_eq!(q["failed_p50_s"], m["failed_latency_p50_s"]);
        let f = |k: &str| q[k].as_f64().unwrap();
        assert!(f("success_p50_s") <= f("success_p95_s"));
        assert!(f("success_p95_s") <= f("success_p99_s"));
        assert!(f("success_p99_s") <= f("success_p99_9_s"));
        let names: Vec<&String> = q.as_object().unwrap().keys().collect();
        assert_eq!(names.len(), 8, "{names:?}");
        let w = &m["windows"];
        assert_eq!(
            w.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["all", "fault", "warmup"]
        );
        assert_eq!(w["all"]["requests"], m["requests"]);
        assert_eq!(w["all"]["succeeded"], m["succeeded"]);
        assert_eq!(
            w["all"]["success_latency"]["p99_s"],
            m["success_latency_p99_s"]
        );
        assert_eq!(w["all"]["success_latency"]["p99_9_s"], q["success_p99_9_s"]);
        assert_eq!(w["fault"]["requests"], m["requests_during_fault"]);
        assert_eq!(w["fault"]["success_rate"], m["success_rate_during"]);
        assert_eq!(w["fault"]["from_s"], 10.0);
        assert_eq!(w["fault"]["to_s"], 30.0);
        // Before the fault, protected serves everything.
        assert_eq!(w["warmup"]["success_rate"], 1.0);
        let sum =
            w["warmup"]["succeeded"].as_u64().unwrap() + w["warmup"]["failed"].as_u64().unwrap();
        assert_eq!(sum, w["warmup"]["requests"].as_u64().unwrap());
    }
}

/// The new fields are part of the report schema: a run with them validates, and a window whose
/// `requests` is a string does not.
#[test]
fn the_new_fields_validate_against_the_report_schema() {
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        "naive",
        "quantiles: [0.9]\nwindows: {peak: [20s, 40s]}",
    );
    let schema: Value = serde_json::from_str(&loadsim_ok(&["schema", "report"])).unwrap();
    let v = jsonschema::draft7::new(&schema).unwrap();
    let mut doc: Value =
        serde_json::from_str(&loadsim_ok(&["run", &file, "--format", "json"])).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    doc[0]["metrics"]["windows"]["peak"]["requests"] = "many".into();
    assert!(!v.is_valid(&doc));
}

/// The latency series: one `users.success_latency_<p>_s` per quantile (p50 and p99 by default,
/// `metrics.quantiles` otherwise), each bin within 1 % of the bin's nearest-rank latency — here
/// a constant chain, where every request takes the same time.
#[test]
fn latency_quantiles_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("constant.yaml");
    std::fs::write(
        &path,
        "duration: 5s\narrivals: {rate: 20, process: constant}\nclient: {entry: a, attempt_timeout: 1s}\n\
         services:\n  a:\n    slots: 100\n    service_time: {dist: constant, value: 40ms}\n\
         metrics:\n  quantiles: [0.5, 0.999]\n",
    )
    .unwrap();
    let ts = dir.path().join("ts.csv");
    loadsim_ok(&[
        "run",
        path.to_str().unwrap(),
        "--timeseries",
        ts.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&ts).unwrap();
    for name in [
        "users.success_latency_p50_s",
        "users.success_latency_p99_9_s",
    ] {
        let values: Vec<f64> = text
            .lines()
            .filter(|l| l.split(',').nth(2) == Some(name))
            .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(values.len(), 5, "{name}: one per arrival second");
        for v in values {
            assert!((0.040..=0.0404).contains(&v), "{name}: {v}");
        }
    }
    assert!(
        !text.contains("users.success_latency_p99_s"),
        "the quantiles asked for only"
    );
    // Without `metrics:` the series are p50 and p99.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace("metrics:\n  quantiles: [0.5, 0.999]\n", ""),
    )
    .unwrap();
    loadsim_ok(&[
        "run",
        path.to_str().unwrap(),
        "--timeseries",
        ts.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&ts).unwrap();
    assert!(text.contains("users.success_latency_p50_s"));
    assert!(text.contains("users.success_latency_p99_s"));
}
