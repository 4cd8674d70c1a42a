//! The fleet (issue 13): replicas behind a balancer, faults on some replicas, network delay. Effect
//! tests on seeds 7, 11 and 13 against the shipped `scenarios/fleet/` files, and exact mechanics
//! on tiny scenarios.

use super::common::{SEEDS, run, run_text};

#[test]
fn least_request_beats_round_robin_with_one_slow_replica() {
    for seed in SEEDS {
        let rr = run("fleet/slow_replica", &[], seed);
        let p2c = run("fleet/slow_replica_least_request", &[], seed);
        let all = run("fleet/slow_replica_least_request_all", &[], seed);
        let during = |s: &loadsim::RunSummary| s.metrics.success_rate_during.unwrap();
        let (r, p, a) = (during(&rr), during(&p2c), during(&all));
        // Round robin keeps sending a third of the calls to the slow replica.
        assert!(r < 0.99, "seed {seed}: round robin {r}");
        assert!(
            p > r + 0.02,
            "seed {seed}: least_request {p} vs round robin {r}"
        );
        assert!(a >= p, "seed {seed}: full scan {a} vs two choices {p}");
        // The balancer moves calls away from the slow replica 0.
        let share0 = |s: &loadsim::RunSummary| {
            let stats = &s.services["backend"].replica_stats;
            assert_eq!(stats.len(), 3);
            stats[0].counts.arrivals as f64
                / stats.iter().map(|x| x.counts.arrivals).sum::<u64>() as f64
        };
        assert!(share0(&rr) > 0.32, "seed {seed}: {}", share0(&rr));
        assert!(share0(&p2c) < 0.25, "seed {seed}: {}", share0(&p2c));
    }
}

#[test]
fn a_slow_fault_on_one_replica_slows_only_that_replica() {
    let stats = run("fleet/slow_replica", &[], 7).services["backend"]
        .replica_stats
        .clone();
    // Equal arrivals under round robin; the slow replica is far busier and its queue fills.
    assert!(stats[0].counts.arrivals.abs_diff(stats[1].counts.arrivals) <= 1);
    assert!(stats[0].utilization > stats[1].utilization + 0.1);
    assert!(stats[0].counts.max_queue > 3 * stats[1].counts.max_queue);
}

fn delayed(latency: &str, seed: u64) -> String {
    format!(
        "duration: 30s\nseed: {seed}\narrivals: {{rate: 200}}\nclient: {{entry: a, attempt_timeout: 5s}}\n\
         services:\n  a:\n    slots: 1000\n    calls:\n      b:\n        attempt_timeout: 5s\n{latency}\
         \x20 b:\n    replicas: 2\n    slots: 100\n    service_time: {{dist: exponential, mean: 10ms}}\n"
    )
}

#[test]
fn a_constant_delay_shifts_latency_quantiles_by_twice_the_delay() {
    for seed in SEEDS {
        let base = run_text(&delayed("", seed));
        let slow = run_text(&delayed(
            "        latency: {dist: constant, value: 30ms}\n",
            seed,
        ));
        let p50 = |s: &loadsim::RunSummary| s.metrics.success_latency_p50_s.unwrap();
        let p99 = |s: &loadsim::RunSummary| s.metrics.success_latency_p99_s.unwrap();
        for (name, q) in [
            ("p50", &p50 as &dyn Fn(&loadsim::RunSummary) -> f64),
            ("p99", &p99),
        ] {
            // 30 ms out and 30 ms back; the service times are the same draws (own streams), and
            // nothing queues at 200/s on 200 slots, so the shift is 60 ms up to the histogram's
            // 0.1 % resolution.
            let shift = q(&slow) - q(&base);
            assert!(
                (shift - 0.060).abs() < 0.001 + 0.002 * q(&slow),
                "seed {seed} {name}: {} → {}",
                q(&base),
                q(&slow)
            );
        }
    }
}

#[test]
fn a_timeout_counts_the_network_delay() {
    // 30 ms each way and 10 ms of work (70 ms) never fit a 50 ms attempt timeout; without the
    // delay they would all fit.
    let text = delayed("        latency: {dist: constant, value: 30ms}\n", 7)
        .replace("attempt_timeout: 5s\n", "attempt_timeout: 50ms\n")
        .replace("exponential, mean: 10ms", "constant, value: 10ms");
    let s = run_text(&text);
    let c = &s.calls["a->b"];
    assert_eq!(c.successes, 0);
    assert_eq!(c.timeouts, c.attempts);
    let fast = run_text(&text.replace("        latency: {dist: constant, value: 30ms}\n", ""));
    assert_eq!(fast.calls["a->b"].timeouts, 0);
}

#[test]
fn ejection_beats_least_request_and_round_robin_with_one_slow_replica() {
    for seed in SEEDS {
        let during = |s: &loadsim::RunSummary| s.metrics.success_rate_during.unwrap();
        let p99 = |s: &loadsim::RunSummary| s.metrics.success_latency_p99_s.unwrap();
        let rr = run("fleet/slow_replica", &[], seed);
        let p2c = run("fleet/slow_replica_least_request", &[], seed);
        let od = run("fleet/slow_replica_ejection", &[], seed);
        assert!(
            during(&od) > during(&p2c) && during(&p2c) > during(&rr),
            "seed {seed}: ejection {} least_request {} round robin {}",
            during(&od),
            during(&p2c),
            during(&rr)
        );
        // Without the slow replica in the choice, the tail is the healthy replicas' (about
        // 0.11 s against 0.34 s: the 300 ms timeout and a retry).
        assert!(
            p99(&od) < 0.6 * p99(&p2c),
            "seed {seed}: p99 {} vs {}",
            p99(&od),
            p99(&p2c)
        );
        // Only the slow replica is ejected, and for most of the 30 s window (an ejection lasts
        // 5 s × its backoff; it ends at a 1 s sweep).
        let stats = &od.services["backend"].replica_stats;
        let (n0, t0) = (stats[0].ejections.unwrap(), stats[0].ejected_s.unwrap());
        assert!(n0 >= 2 && t0 > 20.0 && t0 < 60.0, "seed {seed}: {n0} {t0}");
        for r in &stats[1..] {
            assert_eq!((r.ejections, r.ejected_s), (Some(0), Some(0.0)));
        }
        // The other files carry no ejection fields.
        assert!(p2c.services["backend"].replica_stats[0].ejections.is_none());
    }
}

#[test]
fn an_ejected_replica_gets_nothing_until_a_sweep_returns_it() {
    // Replica 0 refuses everything from 0 s to 10 s (an outage on it alone); five rejects in a
    // row eject it; it returns at the first 2 s sweep at least 4 s after (backoff 1), and is
    // ejected again at once while the outage lasts (backoff 2: 8 s, …).
    let text = "duration: 20s\nseed: 7\narrivals: {rate: 100, process: constant}\n\
        client: {entry: a, attempt_timeout: 5s}\nservices:\n  a:\n    slots: 1000\n    calls:\n      b:\n\
        \x20       attempt_timeout: 1s\n        retries: 1\n\
        \x20       outlier_detection: {consecutive_failures: 5, interval: 2s, base_ejection_time: 4s}\n\
        \x20 b:\n    replicas: 2\n    slots: 100\n    service_time: {dist: constant, value: 1ms}\n\
        faults:\n  down:\n    kind: outage\n    service: b\n    replicas: [0]\n    from: 0s\n    duration: 10s\n";
    let s = run_text(text);
    let stats = &s.services["b"].replica_stats;
    // Round robin from replica 0, and a rejected call is retried at once on the next pick, so
    // every user call tries replica 0 first: the 5th reject (user 4, at 40 ms + the 0.5 ms reject
    // delay) ejects it. The 2 s sweeps return it at 6 s (5.96 s ≥ 4 s); its count restarts; the
    // pick counter then sends user 600 to replica 1 and users 601..605 to replica 0 first: 5
    // more rejects, ejected again at 6.0505 s with backoff 2 (8 s), returned at the 16 s sweep
    // (9.95 s ≥ 8 s; 7.95 s at 14 s is not), after the outage.
    assert_eq!(stats[0].ejections, Some(2));
    let t = stats[0].ejected_s.unwrap();
    let want = (6.0 - 0.0405) + (16.0 - 6.0505);
    assert!((t - want).abs() < 1e-6, "{t} vs {want}");
    // Every call succeeded (each reject was retried on replica 1); replica 0 saw only the 10
    // rejected calls before 16 s, then every other one of the last 400 users.
    assert_eq!(s.services["a"].counts.completed, 2000);
    assert_eq!(
        (stats[0].counts.arrivals, stats[0].counts.admitted),
        (10 + 200, 200)
    );
}

#[test]
fn contention_turns_a_short_surge_into_a_collapse_that_outlasts_it() {
    for seed in SEEDS {
        let after = |s: &loadsim::RunSummary| s.metrics.success_rate_after.unwrap();
        let collapse = run("fleet/contention_collapse", &[], seed);
        // The system stays down for the 95 s after the surge ended.
        assert!(
            after(&collapse) < 0.8 && collapse.metrics.recovered == Some(false),
            "seed {seed}: {}",
            after(&collapse)
        );
        // Without the surge, or with a coherency cost low enough that a full backend still
        // serves 700/s, every request after 25 s succeeds.
        for sets in [
            &["faults.surge.factor=1"][..],
            &["services.backend.contention.kappa=0.001"],
            &["services.backend.contention=null"],
            &["services.backend.slots=22"],
        ] {
            let ok = run("fleet/contention_collapse", sets, seed);
            assert_eq!(after(&ok), 1.0, "seed {seed} {sets:?}");
            assert_eq!(ok.metrics.recovered, Some(true), "seed {seed} {sets:?}");
        }
    }
}

#[test]
fn contention_stretches_work_by_the_busy_slots_counting_its_own() {
    // Constant 15 ms work every 10 ms with sigma 0.1: the first job runs alone (n = 1, 15 ms);
    // each later one starts while its predecessor still works (n = 2: 16.5 ms, and the one
    // before ended at +6.5 ms), so every latency but the first is 16.5 ms.
    let text = "duration: 10s\nseed: 7\narrivals: {rate: 100, process: constant}\n\
        client: {entry: a, attempt_timeout: 1s}\nservices:\n  a:\n    slots: 10\n\
        \x20   service_time: {dist: constant, value: 15ms}\n    contention: {sigma: 0.1}\n";
    let s = run_text(text);
    let m = &s.metrics;
    assert_eq!(m.succeeded, 1000);
    assert!(
        (m.success_latency_p50_s.unwrap() - 0.0165).abs() < 2e-5,
        "{m:?}"
    );
    assert!(
        (m.success_latency_p99_s.unwrap() - 0.0165).abs() < 2e-5,
        "{m:?}"
    );
    // kappa counts ordered pairs: n = 2 adds 2·kappa.
    let s = run_text(&text.replace("{sigma: 0.1}", "{kappa: 0.05}"));
    assert!((s.metrics.success_latency_p50_s.unwrap() - 0.0165).abs() < 2e-5);
}
