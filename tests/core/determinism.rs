//! A run is a pure function of its scenario: same seed, same output; a policy change never moves
//! the arrival sequence.

use super::common::{POLICIES, SEEDS, run};

fn without_wall_clock(mut r: loadsim::RunSummary) -> String {
    r.engine.wall_s = 0.0;
    r.engine.events_per_s = 0.0;
    serde_json::to_string(&r).unwrap()
}

#[test]
fn same_scenario_and_seed_give_identical_json() {
    for name in POLICIES {
        let a = without_wall_clock(run(name, &[], 11));
        let b = without_wall_clock(run(name, &[], 11));
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn different_seeds_give_different_runs() {
    let a = without_wall_clock(run("protected", &[], 7));
    let b = without_wall_clock(run("protected", &[], 8));
    assert_ne!(a, b);
}

#[test]
fn arrivals_are_identical_across_policies() {
    for seed in SEEDS {
        let runs: Vec<_> = POLICIES.iter().map(|p| run(p, &[], seed)).collect();
        for r in &runs[1..] {
            assert_eq!(
                r.metrics.requests, runs[0].metrics.requests,
                "seed {seed}: {}",
                r.scenario
            );
            assert_eq!(
                r.metrics.requests_during_fault, runs[0].metrics.requests_during_fault,
                "seed {seed}"
            );
        }
        // And the first attempt of every user request reaches the gateway in every policy:
        // before the window nothing fails, so gateway arrivals before the window match too.
        assert!(
            runs.iter()
                .all(|r| r.metrics.success_rate_before == Some(1.0))
        );
    }
}
