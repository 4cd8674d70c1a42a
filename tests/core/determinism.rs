//! A run is a pure function of its scenario: same seed, same output; a policy change never moves
//! the arrival sequence.

use super::common::{POLICIES, SEEDS, load, run};

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
fn a_run_in_an_earlier_runs_buffers_equals_a_fresh_run() {
    // The buffers of a longer, bigger run (a fleet of three replicas with a concurrency limit and
    // retries), then of a run that ends with events pending, then a run of another topology in
    // them: each must match the same run in fresh buffers, whatever the buffers held before.
    let earlier = [
        load("naive", &["duration=40s"], 7),
        load("protected", &["drain=10ms"], 11),
        load("fleet/slow_replica_least_request_all", &[], 7),
    ];
    let later = [
        load("protected", &[], 7),
        load("fleet/slow_replica_least_request", &[], 11),
    ];
    let options = loadsim::model::RunOptions::default();
    for sc in &later {
        let fresh = without_wall_clock(loadsim::model::run_with(sc, options).unwrap());
        let mut buffers = loadsim::model::Buffers::default();
        for before in &earlier {
            loadsim::model::run_with_buffers(before, options, &mut buffers).unwrap();
            let reused = loadsim::model::run_with_buffers(sc, options, &mut buffers).unwrap();
            assert_eq!(
                without_wall_clock(reused),
                fresh,
                "{} after {}",
                sc.name,
                before.name
            );
        }
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

/// A progress bar's view of a run: every call it got.
#[derive(Default)]
struct Seen(std::sync::Mutex<Vec<(loadsim::time::SimTime, u64)>>);

impl loadsim::model::Watch for Seen {
    fn at(&self, now: loadsim::time::SimTime, events: u64) {
        self.0.lock().unwrap().push((now, events));
    }
}

#[test]
fn a_watched_run_is_told_its_progress_and_computes_the_same() {
    use loadsim::model::{RunOptions, WATCH_EVERY, run_watched, run_watched_with_series};
    let sc = super::common::load("naive", &[], 7);
    let seen = Seen::default();
    let watched = run_watched(&sc, RunOptions::default(), Some(&seen)).unwrap();
    let plain = run("naive", &[], 7);
    assert_eq!(
        without_wall_clock(watched.clone()),
        without_wall_clock(plain)
    );
    let calls = seen.0.into_inner().unwrap();
    let events = watched.engine.events;
    assert_eq!(
        calls.len() as u64,
        events / WATCH_EVERY,
        "one call every {WATCH_EVERY} events of {events}"
    );
    let horizon = sc.duration.0 + sc.drain.0;
    for (i, &(at, n)) in calls.iter().enumerate() {
        assert_eq!(n, (i as u64 + 1) * WATCH_EVERY);
        assert!(at.0 <= horizon, "{at:?} beyond the horizon");
        if i > 0 {
            assert!(at >= calls[i - 1].0, "simulated time never goes back");
        }
    }
    // The time series too, and the event limit stops a watched run where it stops a plain one.
    let series = |w: Option<&dyn loadsim::model::Watch>| {
        let (s, t) = run_watched_with_series(
            &sc,
            RunOptions::default(),
            loadsim::time::SimDuration::from_secs(1),
            w,
        )
        .unwrap();
        (
            without_wall_clock(s),
            loadsim::report::timeseries::render_long(&[("naive", &t)]),
        )
    };
    assert_eq!(series(Some(&Seen::default())), series(None));
    let limit = RunOptions {
        max_events: 3 * WATCH_EVERY + 17,
        ..RunOptions::default()
    };
    let stopped = run_watched(&sc, limit, Some(&Seen::default())).unwrap_err();
    assert_eq!(stopped, run_watched(&sc, limit, None).unwrap_err());
    assert!(
        stopped
            .to_string()
            .contains(&format!("after {} events", limit.max_events + 1)),
        "{stopped}"
    );
}
