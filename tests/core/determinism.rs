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

/// The shop example: two request classes, an api of 3 replicas fanning out to a catalog of 2.
fn shop(sets: &[&str], seed: u64) -> loadsim::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/shop/shop.yaml");
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    loadsim::Scenario::load(&path, &sets, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the buffers have held before a later run: a longer, bigger run (a fleet of three
/// replicas with a concurrency limit and retries), a run that ends with events pending, a full
/// scan over three replicas and over more than get a series each, and two classes over
/// replicated services.
fn earlier_runs() -> Vec<loadsim::Scenario> {
    vec![
        load("naive", &["duration=40s"], 7),
        load("protected", &["drain=10ms"], 11),
        load("fleet/slow_replica_least_request_all", &[], 7),
        load(
            "fleet/slow_replica_least_request_all",
            &["services.backend.replicas=20"],
            7,
        ),
        shop(&["duration=16s"], 11),
    ]
}

#[test]
fn a_run_in_an_earlier_runs_buffers_equals_a_fresh_run() {
    // Each later run, of another topology than some earlier ones, must match the same run in
    // fresh buffers, whatever the buffers held before.
    let later = [
        load("protected", &[], 7),
        load("fleet/slow_replica_least_request", &[], 11),
        shop(&[], 7),
    ];
    let options = loadsim::model::RunOptions::default();
    for sc in &later {
        let fresh = without_wall_clock(loadsim::model::run_with(sc, options).unwrap());
        let mut buffers = loadsim::model::Buffers::default();
        for before in &earlier_runs() {
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

/// Every span a run hands over, as text.
#[derive(Default)]
struct Spans(Vec<String>);

impl loadsim::model::spans::SpanSink for Spans {
    fn span(&mut self, s: &loadsim::model::spans::SpanRecord) {
        self.0.push(format!("{s:?}"));
    }
}

/// Runs `sc` with its time series (per class and per replica among them) and every request's
/// spans, in `buffers` when given (leaving its own there) or in fresh ones.
fn traced(
    sc: &loadsim::Scenario,
    buffers: Option<&mut loadsim::model::Buffers>,
) -> (
    String,
    loadsim::metrics::timeseries::TimeSeries,
    Vec<String>,
) {
    use loadsim::model::{Buffers, RunOptions, Simulation};
    let resolution = loadsim::time::SimDuration::from_millis(250);
    let mut spans = Spans::default();
    let out = match buffers {
        Some(buffers) => Simulation::new_in(sc, RunOptions::default(), std::mem::take(buffers))
            .with_series(resolution)
            .with_spans(1.0, &mut spans)
            .run_output_into(buffers),
        None => Simulation::new_in(sc, RunOptions::default(), Buffers::default())
            .with_series(resolution)
            .with_spans(1.0, &mut spans)
            .run_output(),
    }
    .unwrap();
    let series = out.series.expect("series were asked for");
    (without_wall_clock(out.summary), series, spans.0)
}

#[test]
fn a_traced_run_with_class_and_replica_series_in_reused_buffers_equals_a_fresh_one() {
    // The span tracer and the class and replica series (per replica up to 16, min/mean/max
    // beyond) are the run's own, not the buffers': in buffers earlier runs left, traced or
    // not, the summary, every series and every span are those of a fresh run.
    let later = [
        shop(&["duration=15s"], 7),
        load(
            "fleet/slow_replica_least_request_all",
            &["services.backend.replicas=20", "duration=40s"],
            11,
        ),
    ];
    for sc in &later {
        let fresh = traced(sc, None);
        assert!(
            fresh.1.names().any(|n| n.contains(".replica.")),
            "{}",
            sc.name
        );
        assert!(!fresh.2.is_empty(), "{}", sc.name);
        let mut buffers = loadsim::model::Buffers::default();
        for (i, before) in earlier_runs().iter().enumerate() {
            if i % 2 == 0 {
                traced(before, Some(&mut buffers));
            } else {
                let options = loadsim::model::RunOptions::default();
                loadsim::model::run_with_buffers(before, options, &mut buffers).unwrap();
            }
            let reused = traced(sc, Some(&mut buffers));
            let case = format!("{} after {}", sc.name, before.name);
            assert_eq!(reused.0, fresh.0, "summary: {case}");
            assert!(reused.1 == fresh.1, "series: {case}");
            assert_eq!(reused.2.len(), fresh.2.len(), "spans: {case}");
            if let Some(k) = (0..fresh.2.len()).find(|&k| reused.2[k] != fresh.2[k]) {
                panic!("span {k}: {case}\n{}\n{}", reused.2[k], fresh.2[k]);
            }
        }
    }
    // The shop's series include its classes.
    let shop_series = traced(&later[0], None).1;
    assert!(shop_series.names().any(|n| n.starts_with("classes.")));
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
