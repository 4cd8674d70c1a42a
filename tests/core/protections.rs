//! The protections beyond the article, each against its baseline on the article's fault, on seeds
//! 7, 11 and 13: the direction and a margin. Scenario files live in `scenarios/protections/`,
//! `scenarios/faults/` and `scenarios/topologies/`.

use super::common::{SEEDS, run, run_text};

fn both(a: &str, b: &str, sets: &[&str], seed: u64) -> (loadsim::RunSummary, loadsim::RunSummary) {
    (run(a, sets, seed), run(b, sets, seed))
}

#[test]
fn retry_budget_cuts_retries_of_the_naive_policy() {
    for seed in SEEDS {
        let (naive, budget) = both("naive", "protections/retry_budget", &[], seed);
        for edge in ["gateway->svc_a", "svc_a->svc_b"] {
            let (n, b) = (naive.calls[edge].retries, budget.calls[edge].retries);
            assert!(b * 3 <= n, "seed {seed}: {edge} retries {b} vs naive {n}");
            assert!(
                budget.calls[edge].retries_budget_denied > 0,
                "seed {seed}: {edge}"
            );
        }
    }
}

#[test]
fn queue_time_shedding_bounds_queueing_time_where_a_count_cap_does_not() {
    for seed in SEEDS {
        let (cap, time) = both("protected", "protections/queue_time", &[], seed);
        let calm_cap = run("protected", &["faults={}"], seed);
        let (c, t) = (
            cap.services["svc_b"].queue_wait_p99_s.unwrap(),
            time.services["svc_b"].queue_wait_p99_s.unwrap(),
        );
        let calm = calm_cap.services["svc_b"].queue_wait_p99_s.unwrap();
        // The count cap: queueing time grows with the 10× service time (16 × 200 ms / 16 slots).
        assert!(
            c > 0.15 && c > 4.0 * calm,
            "seed {seed}: cap p99 wait {c}, without fault {calm}"
        );
        // The time bound holds whatever the service time (HDR bucket edge: +0.1 %).
        assert!(
            t <= 0.050 * 1.001,
            "seed {seed}: max_queue_time p99 wait {t}"
        );
        assert!(time.services["svc_b"].counts.dropped_queue_time > 0);
        assert!(
            time.metrics.recovery_s.is_some_and(|r| r <= 2.0),
            "seed {seed}"
        );
    }
}

#[test]
fn codel_sheds_and_recovers_faster_than_an_unbounded_queue() {
    for seed in SEEDS {
        let (fifo, codel) = both("deadline_budget", "protections/codel", &[], seed);
        assert!(
            codel.services["svc_b"].counts.dropped_codel > 1000,
            "seed {seed}"
        );
        let (f, c) = (
            fifo.metrics.recovery_s.unwrap(),
            codel.metrics.recovery_s.unwrap(),
        );
        assert!(
            c + 3.0 <= f,
            "seed {seed}: codel recovery {c}, unbounded FIFO {f}"
        );
        let (fd, cd) = (
            fifo.metrics.success_rate_during.unwrap(),
            codel.metrics.success_rate_during.unwrap(),
        );
        assert!(
            cd >= 1.5 * fd,
            "seed {seed}: in-window success codel {cd}, FIFO {fd}"
        );
    }
}

#[test]
fn adaptive_throttling_raises_in_window_success_and_speeds_recovery() {
    for seed in SEEDS {
        let (base, thr) = both("deadline", "protections/adaptive_throttle", &[], seed);
        assert!(
            thr.calls["svc_a->svc_b"].throttled_locally > 1000,
            "seed {seed}"
        );
        let (b, t) = (
            base.metrics.success_rate_during.unwrap(),
            thr.metrics.success_rate_during.unwrap(),
        );
        assert!(t >= 2.0 * b, "seed {seed}: in-window success {t} vs {b}");
        let (rb, rt) = (
            base.metrics.recovery_s.unwrap(),
            thr.metrics.recovery_s.unwrap(),
        );
        assert!(rt + 3.0 <= rb, "seed {seed}: recovery {rt} vs {rb}");
    }
}

#[test]
fn cancellation_removes_wasted_work_and_lets_naive_recover() {
    for seed in SEEDS {
        let (naive, cancel) = both("naive", "protections/cancellation", &[], seed);
        assert_eq!(naive.metrics.recovery_s, None, "seed {seed}");
        assert!(
            cancel.metrics.recovery_s.is_some_and(|r| r <= 2.0),
            "seed {seed}: {:?}",
            cancel.metrics.recovery_s
        );
        for s in ["gateway", "svc_a"] {
            let (n, c) = (
                naive.services[s].wasted_ratio.unwrap(),
                cancel.services[s].wasted_ratio.unwrap(),
            );
            assert!(
                n > 0.3 && c < 0.05,
                "seed {seed}: {s} wasted {c} vs naive {n}"
            );
            assert!(
                cancel.services[s].counts.cancelled > 1000,
                "seed {seed}: {s}"
            );
        }
    }
}

#[test]
fn pushback_spreads_retries_and_cuts_load_on_the_rejecting_service() {
    for seed in SEEDS {
        let (none, push) = both(
            "protections/pushback_none",
            "protections/pushback",
            &[],
            seed,
        );
        let (n, p) = (
            none.services["svc_b"]
                .arrivals_during_fault_per_request
                .unwrap(),
            push.services["svc_b"]
                .arrivals_during_fault_per_request
                .unwrap(),
        );
        assert!(
            p <= 0.5 * n,
            "seed {seed}: svc_b arrivals per request in window {p} vs {n}"
        );
        assert!(
            push.calls["svc_a->svc_b"].pushback_honored > 1000,
            "seed {seed}"
        );
        let (sn, sp) = (
            none.metrics.success_rate_during.unwrap(),
            push.metrics.success_rate_during.unwrap(),
        );
        assert!(
            sp >= 0.9 * sn,
            "seed {seed}: in-window success {sp} vs {sn}"
        );
    }
}

#[test]
fn pushback_no_retry_stops_retries_when_honoured() {
    let r = run(
        "protections/pushback",
        &["services.svc_b.pushback={no_retry: true}"],
        7,
    );
    let c = &r.calls["svc_a->svc_b"];
    assert!(c.pushback_no_retry > 1000);
    assert_eq!(c.pushback_honored, 0);
}

#[test]
fn circuit_breaker_fails_fast_and_lets_naive_recover() {
    for seed in SEEDS {
        let (naive, cb) = both("naive", "protections/circuit_breaker", &[], seed);
        let c = &cb.calls["svc_a->svc_b"];
        assert!(
            c.circuit_opened >= 1 && c.circuit_open_s > 1.0,
            "seed {seed}"
        );
        assert!(c.rejected_circuit_open > 1000, "seed {seed}");
        assert!(
            cb.metrics.recovery_s.is_some_and(|r| r <= 2.0),
            "seed {seed}: {:?}",
            cb.metrics.recovery_s
        );
        let (n, b) = (
            naive.metrics.failed_latency_p50_s.unwrap(),
            cb.metrics.failed_latency_p50_s.unwrap(),
        );
        assert!(
            b < 0.5 && n > 2.0,
            "seed {seed}: failed median {b} vs naive {n}"
        );
    }
}

#[test]
fn hedging_cuts_tail_latency_and_stops_under_the_a6_bucket() {
    for seed in SEEDS {
        let (none, hedge) = both(
            "protections/hedging_none",
            "protections/hedging",
            &["faults={}"],
            seed,
        );
        let (n, h) = (
            none.metrics.success_latency_p99_s.unwrap(),
            hedge.metrics.success_latency_p99_s.unwrap(),
        );
        assert!(h <= 0.6 * n, "seed {seed}: p99 {h} vs {n}");
        let extra = hedge.services["svc_b"].attempts_per_request.unwrap();
        assert!(
            extra < 1.2,
            "seed {seed}: hedges cost {extra} svc_b attempts per request"
        );
        let slow = run("protections/hedging", &[], seed);
        assert!(
            slow.calls["svc_a->svc_b"].hedges_throttled > 1000,
            "seed {seed}"
        );
    }
}

#[test]
fn adaptive_lifo_recovers_where_fifo_lingers() {
    for seed in SEEDS {
        let (fifo, alifo) = both("deadline_budget", "protections/adaptive_lifo", &[], seed);
        let (f, a) = (
            fifo.metrics.recovery_s.unwrap(),
            alifo.metrics.recovery_s.unwrap(),
        );
        assert!(
            a <= 1.0 && f >= 4.0,
            "seed {seed}: adaptive LIFO {a}, FIFO {f}"
        );
        // Without a fault adaptive LIFO never switches: identical to FIFO.
        let calm_f = run("deadline_budget", &["faults={}"], seed);
        let calm_a = run("protections/adaptive_lifo", &["faults={}"], seed);
        assert_eq!(calm_f.metrics, calm_a.metrics, "seed {seed}");
    }
}

#[test]
fn faults_do_what_they_say() {
    for seed in SEEDS {
        let outage = run("faults/outage", &[], seed);
        assert!(
            outage.metrics.success_rate_during.unwrap() < 0.05,
            "seed {seed}"
        );
        assert!(outage.services["svc_b"].counts.rejected_outage > 10_000);
        assert_eq!(
            outage.metrics.recovery_s,
            Some(0.0),
            "protected recovers at once from an outage"
        );

        let error = run("faults/error", &[], seed);
        let b = &error.services["svc_b"];
        // Half of svc_b's in-window arrivals fail: binomial, n ≈ 14 000, sd ≈ 0.004.
        let share = b.counts.failed_by_fault as f64 / b.counts.arrivals_during_fault as f64;
        assert!((share - 0.5).abs() < 0.02, "seed {seed}: {share}");

        let surge = run("faults/surge", &[], seed);
        // 20 s at 1200/s instead of 400/s: 24 000 expected arrivals, Poisson sd ≈ 155.
        let n = surge.metrics.requests_during_fault as f64;
        assert!((n - 24_000.0).abs() < 5.0 * 155.0, "seed {seed}: {n}");

        let cap = run("faults/capacity", &[], seed);
        let calm = run("faults/capacity", &["faults={}"], seed);
        assert!(
            cap.services["svc_b"].counts.rejected_full > 5_000
                && calm.services["svc_b"].counts.rejected_full < 100,
            "seed {seed}"
        );
        assert_eq!(cap.metrics.recovery_s, Some(0.0), "seed {seed}");
    }
}

#[test]
fn fanout_counts_both_branches_and_the_r1_bound() {
    let r = run("topologies/fanout", &["faults={}"], 7);
    let g = r.services["gateway"].counts.arrivals;
    assert_eq!(r.services["svc_a"].counts.arrivals, g);
    assert_eq!(r.services["svc_c"].counts.arrivals, g);
    assert_eq!(r.services["svc_c"].worst_case_attempts_per_request, 3);
    assert_eq!(r.services["svc_b"].worst_case_attempts_per_request, 9);
    assert!(r.metrics.success_rate.unwrap() > 0.99);
}

/// Gateway calls `a` (100 ms) and `b` (200 ms): in parallel the request takes the longer, in
/// sequence the sum.
fn two_calls(parallel: bool) -> String {
    format!(
        "duration: 100ms\ndrain: 10s\narrivals: {{ rate: 10, process: constant }}\n\
         client: {{ entry: g, attempt_timeout: 5s }}\n\
         services:\n  g:\n    slots: 1\n    parallel: {parallel}\n    calls:\n      a: {{ attempt_timeout: 1s }}\n      b: {{ attempt_timeout: 1s }}\n\
         \x20 a:\n    slots: 1\n    service_time: {{ dist: constant, value: 100ms }}\n\
         \x20 b:\n    slots: 1\n    service_time: {{ dist: constant, value: 200ms }}\n"
    )
}

#[test]
fn parallel_calls_take_the_longest_branch() {
    let par = run_text(&two_calls(true));
    let seq = run_text(&two_calls(false));
    let p = par.metrics.success_latency_p50_s.unwrap();
    let s = seq.metrics.success_latency_p50_s.unwrap();
    assert!((p - 0.2).abs() < 0.001, "parallel {p}");
    assert!((s - 0.3).abs() < 0.001, "sequential {s}");
}

#[test]
fn a_failed_parallel_branch_fails_the_request_and_cancels_its_sibling() {
    // `b` times out after 50 ms; `a` is still working and is cancelled (cancel_on_abandon).
    let yaml = two_calls(true)
        .replace(
            "a: { attempt_timeout: 1s }",
            "a: { attempt_timeout: 1s, cancel_on_abandon: true }",
        )
        .replace("b: { attempt_timeout: 1s }", "b: { attempt_timeout: 50ms }")
        .replace("value: 100ms", "value: 400ms");
    let r = run_text(&yaml);
    assert_eq!(r.metrics.failed, 1);
    assert_eq!(r.services["a"].counts.cancelled, 1);
    assert_eq!(r.services["a"].counts.completed, 0);
    let p = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p - 0.05).abs() < 0.001, "{p}");
}

#[test]
fn gradient2_at_svc_b_cuts_queue_wait_and_recovers_after_the_window() {
    for seed in SEEDS {
        let (cap, g2) = both("protected", "admission/svc_b_gradient2", &[], seed);
        let (c, g) = (
            cap.services["svc_b"].queue_wait_p99_s.unwrap(),
            g2.services["svc_b"].queue_wait_p99_s.unwrap(),
        );
        // The count cap lets the p99 wait grow to ≈ 16 × 200 ms / 16 slots; the adaptive limit
        // refuses before the queue forms.
        assert!(g * 4.0 < c, "seed {seed}: p99 wait {g} vs protected {c}");
        let limited = g2.services["svc_b"].counts.limited.unwrap();
        assert!(limited > 1000, "seed {seed}: limited {limited}");
        assert!(cap.services["svc_b"].counts.limited.is_none());
        let m = &g2.metrics;
        assert!(
            m.recovery_s.is_some_and(|r| r <= 1.0),
            "seed {seed}: recovery {:?}",
            m.recovery_s
        );
        assert!(m.success_rate_after.unwrap() >= 0.99, "seed {seed}");
        assert!(
            m.success_rate_during.unwrap() > cap.metrics.success_rate_during.unwrap() + 0.02,
            "seed {seed}: in-window success {:?} vs {:?}",
            m.success_rate_during,
            cap.metrics.success_rate_during
        );
        // No cost in healthy load.
        assert!(m.success_rate_before.unwrap() >= 0.999, "seed {seed}");
    }
}

#[test]
fn envoy_gradient_at_svc_b_cuts_queue_wait_and_recovers_after_the_window() {
    for seed in SEEDS {
        let (cap, env) = both("protected", "admission/svc_b_envoy_gradient", &[], seed);
        let (c, e) = (
            cap.services["svc_b"].queue_wait_mean_s.unwrap(),
            env.services["svc_b"].queue_wait_mean_s.unwrap(),
        );
        assert!(e < c, "seed {seed}: mean wait {e} vs protected {c}");
        assert!(
            env.metrics.recovery_s.is_some_and(|r| r <= 1.0),
            "seed {seed}"
        );
        assert!(
            env.metrics.success_rate_after.unwrap() >= 0.99,
            "seed {seed}"
        );
    }
}

#[test]
fn a_rate_limit_admits_what_its_bucket_allows() {
    // svc_b alone behind a gateway, constant arrivals at 1000/s for 2 s, no fault: the bucket
    // (50 tokens, 50 per 100 ms) admits 50 + 50 × 19 = 1000 of the 2000 arrivals at svc_b.
    let yaml = "duration: 2s\ndrain: 1s\narrivals: {rate: 1000, process: constant}\n\
                client: {entry: b, attempt_timeout: 1s, retries: 0}\nservices:\n  b:\n    slots: 1000\n    \
                service_time: {dist: constant, value: 1ms}\n    \
                rate_limit: {max_tokens: 50, tokens_per_fill: 50, fill_interval: 100ms}\n";
    let r = run_text(yaml);
    let b = &r.services["b"].counts;
    assert_eq!(b.arrivals, 2000);
    assert_eq!(b.admitted, 1000);
    assert_eq!(b.rate_limited, Some(1000));
}
