//! The article's claims (docs/model.md §1), checked on seeds 7, 11 and 13.

use super::common::{POLICIES, SEEDS, run};

#[test]
fn naive_does_not_recover_after_the_window() {
    for seed in SEEDS {
        let r = run("naive", &[], seed);
        assert_eq!(r.metrics.recovery_s, None, "seed {seed}");
        let after = r.metrics.success_rate_after.unwrap();
        assert!(
            after < 0.05,
            "seed {seed}: naive success after window {after}"
        );
        // The self-sustaining backlog sits in svc_a's unbounded queue (article: 9850).
        assert!(r.services["svc_a"].counts.max_queue > 2000, "seed {seed}");
    }
}

#[test]
fn deadline_policies_recover() {
    for seed in SEEDS {
        for name in ["deadline", "deadline_budget"] {
            let r = run(name, &[], seed);
            let rec = r.metrics.recovery_s;
            assert!(rec.is_some(), "seed {seed}: {name} never recovers");
            // Strict FIFO reading (docs/model.md §5.1): a few seconds, not the whole after-window.
            assert!(rec.unwrap() <= 15.0, "seed {seed}: {name} recovery {rec:?}");
        }
    }
}

#[test]
fn deadline_budget_with_lifo_svc_a_recovers_at_once_like_the_article() {
    for seed in SEEDS {
        let r = run(
            "deadline_budget",
            &["services.svc_a.queue_discipline=lifo"],
            seed,
        );
        assert_eq!(r.metrics.recovery_s, Some(0.0), "seed {seed}");
        // The article's signature of this reading: a huge svc_a queue, svc_b arrivals ≈ 1 per request.
        assert!(r.services["svc_a"].counts.max_queue > 5000, "seed {seed}");
        let b = r.services["svc_b"]
            .arrivals_during_fault_per_request
            .unwrap();
        assert!(
            b < 1.3,
            "seed {seed}: svc_b arrivals per request in window {b}"
        );
    }
}

#[test]
fn protected_recovers_fast_with_bounded_queues_and_fails_fast() {
    for seed in SEEDS {
        let r = run("protected", &[], seed);
        let rec = r.metrics.recovery_s.expect("protected recovers");
        assert!(rec <= 2.0, "seed {seed}: recovery {rec}");
        assert!(r.services["svc_b"].counts.max_queue <= 16, "seed {seed}");
        assert!(r.services["svc_a"].counts.max_queue <= 64, "seed {seed}");
        let failed_p50 = r.metrics.failed_latency_p50_s.unwrap();
        // R4: the median failure is far below the 1 s deadline (article: 0.10 s).
        assert!(failed_p50 < 0.25, "seed {seed}: failed median {failed_p50}");
        assert!(
            r.services["svc_b"].counts.rejected_full > 0,
            "seed {seed}: fast rejects expected"
        );
    }
}

#[test]
fn without_a_fault_every_policy_is_healthy() {
    for seed in SEEDS {
        for name in POLICIES {
            let r = run(name, &["faults={}"], seed);
            let ok = r.metrics.success_rate.unwrap();
            assert!(ok >= 0.99, "seed {seed}: {name} success {ok}");
            let b = r.services["svc_b"].attempts_per_request.unwrap();
            assert!(
                b < 1.02,
                "seed {seed}: {name} svc_b arrivals per request {b}"
            );
        }
    }
}

#[test]
fn r1_bounds_are_48_and_9() {
    let want = [
        ("naive", 48),
        ("deadline", 48),
        ("deadline_budget", 9),
        ("protected", 9),
    ];
    for (name, bound) in want {
        let sc = super::common::load(name, &[], 7);
        let b = sc.service_id("svc_b").unwrap();
        assert_eq!(sc.worst_case_attempts()[b], bound, "{name}");
    }
}

#[test]
fn the_a6_throttle_refuses_retries_only_where_configured() {
    for seed in SEEDS {
        for name in POLICIES {
            let r = run(name, &[], seed);
            let throttled = r.calls["svc_a->svc_b"].retries_throttled
                + r.calls["gateway->svc_a"].retries_throttled;
            match name {
                "deadline_budget" | "protected" => {
                    assert!(throttled > 100, "seed {seed}: {name} throttled {throttled}")
                }
                _ => assert_eq!(throttled, 0, "seed {seed}: {name}"),
            }
        }
    }
}

#[test]
fn observed_attempts_never_exceed_the_r1_bound() {
    for seed in SEEDS {
        for name in POLICIES {
            let r = run(name, &[], seed);
            for (svc, m) in &r.services {
                let per_request = m.attempts_per_request.unwrap();
                assert!(
                    per_request <= m.worst_case_attempts_per_request as f64,
                    "seed {seed}: {name} {svc} {per_request}"
                );
            }
        }
    }
}

#[test]
fn protected_spends_svc_b_on_successes_and_naive_does_not() {
    for seed in SEEDS {
        let naive = run("naive", &[], seed).services["svc_b"]
            .goodput_ratio
            .unwrap();
        let protected = run("protected", &[], seed).services["svc_b"]
            .goodput_ratio
            .unwrap();
        assert!(naive < 0.3, "seed {seed}: naive goodput {naive}");
        assert!(
            protected > 0.85,
            "seed {seed}: protected goodput {protected}"
        );
    }
}
