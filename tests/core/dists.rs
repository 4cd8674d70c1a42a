//! Distributions people have (docs/model.md §2.2.1): quantiles, empirical samples, Prometheus
//! histograms, `scale`, a `slow` fault's `slowdown` and `arrivals.scale`, through the scenario
//! file and the binary. The quantile functions themselves are tested beside their code
//! (`scenario::dist`, `model::dist`).

use assert_cmd::Command;

use super::common::{run_text, scenario_path, scenario_text};

/// The article's base scenario with `svc_b`'s service time replaced by `service_time`.
fn base_with(service_time: &str) -> String {
    std::fs::read_to_string(scenario_path("base"))
        .unwrap()
        .replace(
            "service_time: { dist: exponential, mean: 20ms }",
            &format!("service_time: {service_time}"),
        )
}

#[test]
fn every_new_form_loads_and_runs() {
    for st in [
        "{ p50: 15ms, p99: 60ms }",
        "{ p50: 15ms, p90: 25ms, p999: 120ms, min: 1ms, max: 1s }",
        "{ dist: empirical, samples: [12ms, 15ms, 18ms, 30ms] }",
        "{ dist: histogram, buckets: [{le: 10ms, count: 40}, {le: 25ms, count: 90}, {le: +Inf, count: 100}] }",
        "{ dist: exponential, mean: 10ms, scale: 2 }",
    ] {
        let s = run_text(&base_with(st));
        assert!(s.metrics.requests > 20_000, "{st}: {}", s.metrics.requests);
    }
}

#[test]
fn scale_two_is_the_mean_doubled_for_a_constant() {
    let a = run_text(&base_with("{ dist: constant, value: 10ms, scale: 2 }"));
    let b = run_text(&base_with("{ dist: constant, value: 20ms }"));
    assert_eq!(a.metrics, b.metrics);
}

#[test]
fn slowdown_multiplies_the_services_own_distribution() {
    let base = std::fs::read_to_string(scenario_path("base")).unwrap();
    let fault = "service_time: { dist: exponential, mean: 200ms }  # capacity ≈ 80/s";
    assert!(base.contains(fault));
    let by_slowdown = run_text(&base.replace(fault, "slowdown: 10"));
    let restated = run_text(&base.replace(
        fault,
        "service_time: { dist: exponential, mean: 20ms, scale: 10 }",
    ));
    assert_eq!(by_slowdown.metrics, restated.metrics);
    // And it is slow: the success rate falls as with the article's 200 ms fault.
    let none = run_text(&base.replace(fault, "slowdown: 1"));
    assert!(by_slowdown.metrics.success_rate.unwrap() < none.metrics.success_rate.unwrap() - 0.05);
}

#[test]
fn arrivals_scale_multiplies_the_rate_and_the_profile() {
    let base = std::fs::read_to_string(scenario_path("base")).unwrap();
    let doubled = run_text(&base.replace("rate: 400", "rate: 200\n  scale: 2"));
    let plain = run_text(&base);
    assert_eq!(doubled.metrics, plain.metrics);
    let profile = |rate: u32, scale: &str| {
        base.replace(
            "rate: 400",
            &format!("profile: [{{at: 0s, rate: {rate}}}, {{at: 20s, to: 40s, rate: {rate}, to_rate: {}}}]{scale}", rate * 2),
        )
    };
    let a = scenario_text(&profile(100, "\n  scale: 3"));
    let b = scenario_text(&profile(300, ""));
    assert_eq!(a.classes[0].arrivals, b.classes[0].arrivals);
}

#[test]
fn arrivals_scale_beside_clients_scales_every_class() {
    let text = |scale: &str, r1: u32, r2: u32| {
        format!(
            "duration: 10s\n{scale}clients:\n  a:\n    arrivals: {{rate: {r1}}}\n    entry: s\n    \
             attempt_timeout: 1s\n  b:\n    arrivals: {{rate: {r2}, scale: 2}}\n    entry: s\n    \
             attempt_timeout: 1s\nservices:\n  s:\n    slots: 4\n    service_time: {{ p50: 5ms, p99: 20ms }}\n"
        )
    };
    let scaled = scenario_text(&text("arrivals: { scale: 3 }\n", 10, 20));
    let rates: Vec<f64> = scaled.classes.iter().map(|c| c.arrivals.rate).collect();
    assert_eq!(rates, vec![30.0, 120.0]);
}

#[test]
fn arrivals_scale_thins_or_repeats_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..10).map(|i| format!("{}\n", i as f64 * 0.5)).collect();
    std::fs::write(dir.path().join("t.csv"), format!("time\n{rows}")).unwrap();
    let write = |scale: &str| {
        let p = dir.path().join("s.yaml");
        std::fs::write(
            &p,
            format!(
                "duration: 10s\narrivals: {{trace: t.csv{scale}}}\nclient: {{entry: s, attempt_timeout: 1s}}\n\
                 services:\n  s:\n    slots: 4\n    service_time: {{dist: constant, value: 1ms}}\n"
            ),
        )
        .unwrap();
        loadsim::scenario::Scenario::load(&p, &[], None).unwrap_or_else(|e| panic!("{e}"))
    };
    let times = |sc: &loadsim::scenario::Scenario| -> Vec<u64> {
        sc.classes[0]
            .arrivals
            .trace
            .as_ref()
            .unwrap()
            .iter()
            .map(|t| t.0 / 1_000_000)
            .collect()
    };
    // Half: arrival j at recorded ⌈2j⌉ — the 2nd, 4th, … (0.5 s, 1.5 s, …).
    assert_eq!(
        times(&write(", scale: 0.5")),
        vec![500, 1500, 2500, 3500, 4500]
    );
    // Double: each recorded arrival twice.
    let doubled = times(&write(", scale: 2"));
    assert_eq!(doubled.len(), 20);
    assert_eq!(&doubled[..4], &[0, 0, 500, 500]);
    assert_eq!(write(", scale: 2").classes[0].arrivals.rate, 2.0);
}

#[test]
fn empirical_reads_one_duration_per_line_or_a_named_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("lat.txt"),
        "# recorded\n12ms\n\n15ms\n30ms\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("lat.csv"),
        "id,latency\n1,12ms\n2,15ms\n3,30ms\n",
    )
    .unwrap();
    let load = |dist: &str| {
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, base_with(dist)).unwrap();
        loadsim::scenario::Scenario::load(&p, &[], None)
    };
    let lines = load("{ dist: empirical, file: lat.txt }").unwrap();
    let column = load("{ dist: empirical, file: lat.csv, column: latency }").unwrap();
    let inline = load("{ dist: empirical, samples: [30ms, 12ms, 15ms] }").unwrap();
    assert_eq!(lines.services, inline.services);
    assert_eq!(column.services, inline.services);
    // A bad value is named with its file and line.
    std::fs::write(dir.path().join("bad.txt"), "12ms\n15\n").unwrap();
    let err = load("{ dist: empirical, file: bad.txt }")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.txt:2:") && err.contains("no unit"),
        "{err}"
    );
    let err = load("{ dist: empirical, file: lat.csv, column: nope }")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no column `nope`") && err.contains("`latency`"),
        "{err}"
    );
}

#[test]
fn bad_distributions_exit_2_with_every_problem_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let text = base_with("{ p50: 20ms, p99: 10ms }").replace(
        "service_time: { dist: exponential, mean: 200ms }",
        "service_time: { dist: histogram, buckets: [{le: 10ms, count: 5}, {le: 5ms, count: 9}] }",
    );
    let f = dir.path().join("bad.yaml");
    std::fs::write(&f, text).unwrap();
    let out = Command::cargo_bin("loadsim")
        .unwrap()
        .arg("run")
        .arg(&f)
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("services.svc_b.service_time.p99"), "{err}");
    assert!(
        err.contains("faults.slow_b.service_time.buckets[1].le"),
        "{err}"
    );
    assert!(err.contains("bad.yaml:"), "{err}");
}
