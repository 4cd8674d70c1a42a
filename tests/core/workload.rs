//! Load profiles (issue 14): the non-homogeneous Poisson stream matches its rate function, the
//! constant process follows it exactly, a profile keeps every existing scenario's draws, and a
//! fault that leaves no 3 s span after it makes recovery "not measurable" rather than "never".

use std::path::Path;

use loadsim::model::{RunOptions, run_with_series};
use loadsim::report::Render;
use loadsim::scenario::{Document, Scenario};
use loadsim::time::SimDuration;

use crate::common::run;

fn scenario(yaml: &str, seed: u64) -> Scenario {
    let doc = Document::from_text(Path::new("test.yaml"), yaml).unwrap_or_else(|e| panic!("{e}"));
    let mut sc = Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{e}"));
    sc.seed = seed;
    sc
}

/// Arrivals per 1 s bin.
fn arrivals_per_second(sc: &Scenario) -> Vec<f64> {
    let (_, series) = run_with_series(sc, RunOptions::default(), SimDuration::from_secs(1))
        .unwrap_or_else(|e| panic!("{e}"));
    series
        .get("users.arrivals")
        .expect("users.arrivals is a series")
        .iter()
        .map(|v| v.unwrap_or(0.0))
        .collect()
}

fn profiled(process: &str) -> String {
    format!(
        "duration: 20s\narrivals:\n  process: {process}\n  profile:\n    - {{at: 0s, rate: 50}}\n    \
         - {{at: 5s, to: 15s, rate: 50, to_rate: 250}}\n    - {{at: 15s, rate: 10}}\n\
         client: {{entry: a, attempt_timeout: 1s}}\n\
         services:\n  a: {{slots: 10000, service_time: {{dist: constant, value: 1ms}}}}\n"
    )
}

/// Λ over bin `k` of [`profiled`], by hand: 50/s for 5 s, a ramp 50 → 250 over 10 s (20/s per
/// second, so bin 5 + i holds 50 + 20 i + 10), then 10/s.
fn expected_in_bin(k: usize) -> f64 {
    match k {
        0..5 => 50.0,
        5..15 => 60.0 + 20.0 * (k - 5) as f64,
        _ => 10.0,
    }
}

#[test]
fn nhpp_counts_per_bin_lie_within_their_poisson_bounds_over_many_seeds() {
    let seeds = 40u64;
    let mut sums = [0.0f64; 20];
    for seed in 1..=seeds {
        let counts = arrivals_per_second(&scenario(&profiled("poisson"), seed));
        for (k, c) in counts.iter().take(20).enumerate() {
            sums[k] += c;
        }
        assert!(
            counts.iter().skip(20).all(|&c| c == 0.0),
            "arrivals stop at 20 s"
        );
    }
    let mut chi2 = 0.0;
    for (k, &o) in sums.iter().enumerate() {
        let e = expected_in_bin(k) * seeds as f64;
        // Each bin's total over the seeds is Poisson(e): 4.5 σ on 20 bins fails by chance with
        // probability about 1e-4.
        assert!(
            (o - e).abs() <= 4.5 * e.sqrt(),
            "bin {k}: {o} arrivals over {seeds} seeds, expected {e}"
        );
        chi2 += (o - e) * (o - e) / e;
    }
    // χ² with 20 degrees of freedom: the 99.9 % quantile is 45.3.
    assert!(chi2 < 45.3, "χ² = {chi2} over 20 bins");
}

#[test]
fn a_constant_profile_puts_an_arrival_at_each_integer_of_the_integrated_rate() {
    let counts = arrivals_per_second(&scenario(&profiled("constant"), 1));
    let mut cumulative = 0.0;
    let mut seen = 0.0;
    for (k, c) in counts.iter().take(20).enumerate() {
        cumulative += expected_in_bin(k);
        seen += c;
        // Arrivals at Λ = 0, 1, 2, …: by the end of bin k, floor(Λ) + 1 of them (± 1 for the
        // rounding of an arrival on a bin edge).
        assert!(
            (seen - (cumulative.floor() + 1.0)).abs() <= 1.0,
            "bin {k}: {seen} arrivals by its end, Λ = {cumulative}"
        );
    }
}

#[test]
fn the_shorthand_rate_and_a_one_step_profile_bring_the_same_load() {
    // Not the same draws (the profile has its own stream), but the same mean over seeds.
    let mut a = 0u64;
    let mut b = 0u64;
    for seed in 1..=10 {
        a += run("naive", &["faults=null"], seed).metrics.requests;
        b += run(
            "naive",
            &[
                "faults=null",
                "arrivals.rate=null",
                "arrivals.profile=[{at: 0s, rate: 400}]",
            ],
            seed,
        )
        .metrics
        .requests;
    }
    let e = 10.0 * 400.0 * 60.0;
    for n in [a, b] {
        assert!(
            (n as f64 - e).abs() < 4.0 * e.sqrt(),
            "{n} arrivals, expected {e}"
        );
    }
}

#[test]
fn a_late_surge_leaves_recovery_not_measurable_and_a_profile_leaves_it_measured() {
    // Issue 14's case: a harmless 1.01× surge in the last two seconds of `protected`'s run opens a
    // fault window that ends with no 3 s span left to measure recovery in.
    let surged = run(
        "protected",
        &["faults.late={kind: surge, factor: 1.01, from: 58s, to: 60s}"],
        7,
    );
    assert_eq!(surged.metrics.recovery_s, None);
    assert!(!surged.metrics.recovery_measurable);
    let json = serde_json::to_string(&surged).unwrap();
    assert!(json.contains("\"recovery_measurable\":false"), "{json}");
    let table = loadsim::report::table::Table.render(std::slice::from_ref(&surged));
    assert!(table.contains("not measurable"), "{table}");
    assert!(!table.contains("never"), "{table}");

    // The same rise as a load profile is not a fault: the slow window alone defines recovery.
    let shaped = run(
        "protected",
        &[
            "arrivals.rate=null",
            "arrivals.profile=[{at: 0s, rate: 400}, {at: 58s, rate: 404}]",
        ],
        7,
    );
    assert!(shaped.metrics.recovery_measurable);
    assert!(shaped.metrics.recovery_s.is_some(), "{:?}", shaped.metrics);
    let plain = run("protected", &[], 7);
    assert!(plain.metrics.recovery_measurable);
    let json = serde_json::to_string(&plain).unwrap();
    assert!(
        !json.contains("recovery_measurable"),
        "written only when false, so existing outputs stay byte-identical"
    );
}

fn closed(users: u32, think: &str, service: &str, duration: &str) -> String {
    format!(
        "duration: {duration}\narrivals: {{process: closed, users: {users}, think_time: {think}}}\n\
         client: {{entry: a, attempt_timeout: 100s}}\n\
         services:\n  a: {{slots: 1, service_time: {service}}}\n"
    )
}

#[test]
fn closed_users_without_think_time_keep_exactly_n_in_flight() {
    let sc = scenario(
        &closed(
            5,
            "{dist: constant, value: 0s}",
            "{dist: constant, value: 10ms}",
            "10s",
        ),
        1,
    );
    let r = loadsim::model::run(&sc).unwrap();
    let a = &r.services["a"];
    // Five requests in the service at every instant: one in the slot, four queued.
    assert!(
        (a.mean_in_system - 5.0).abs() < 1e-9,
        "{}",
        a.mean_in_system
    );
    assert!(
        (a.mean_queue_len - 4.0).abs() < 1e-9,
        "{}",
        a.mean_queue_len
    );
    // Five at 0, then one at each completion (every 10 ms) before 10 s: 5 + 999.
    assert_eq!(r.metrics.requests, 1004);
    assert_eq!(r.metrics.succeeded, 1004);
}

/// Mean response time of the machine-repairman model (N users, exponential think `z`, one
/// exponential server of mean `s`): `R = N / X − z` with `X = (1 − p0) / s` and
/// `1 / p0 = Σ_{k=0..N} N! / (N − k)! · (s / z)^k`.
fn repairman_response(n: u32, s: f64, z: f64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..=n {
        term *= (n - k + 1) as f64 * s / z;
        sum += term;
    }
    let x = (1.0 - 1.0 / sum) / s;
    n as f64 / x - z
}

#[test]
fn a_closed_loop_mm1_agrees_with_the_machine_repairman_mean_response_time() {
    let want = repairman_response(5, 0.020, 0.100);
    assert!((want - 0.03983).abs() < 1e-4, "hand value: {want}");
    let yaml = closed(
        5,
        "{dist: exponential, mean: 100ms}",
        "{dist: exponential, mean: 20ms}",
        "300s",
    );
    let means: Vec<f64> = (1..=10)
        .map(|seed| {
            let r = loadsim::model::run(&scenario(&yaml, seed)).unwrap();
            r.services["a"].sojourn_mean_s.unwrap()
        })
        .collect();
    let n = means.len() as f64;
    let mean = means.iter().sum::<f64>() / n;
    let var = means.iter().map(|m| (m - mean) * (m - mean)).sum::<f64>() / (n - 1.0);
    // 99 % Student interval over the per-seed means (t(9, 0.995) = 3.25).
    let half = 3.25 * (var / n).sqrt();
    assert!(
        (mean - want).abs() <= half,
        "measured {mean} ± {half}, closed form {want}"
    );
    assert!(
        half < 0.002,
        "the interval is tight enough to mean something: ±{half}"
    );
}
