//! The time series agree with the run's totals, bin by bin summed, for users, every service and
//! every call edge; levels stay within what the scenario allows; the CSV is snapshotted.

use loadsim::metrics::counters::{Counter, CounterKind};
use loadsim::metrics::{EdgeCounters, RunSummary, ServiceCounters, TimeSeries};
use loadsim::model::run;
use loadsim::report::timeseries::render_long;
use loadsim::time::SimDuration;

use super::common::{POLICIES, SHORT, load, run as run_series};

fn total(ts: &TimeSeries, name: &str) -> u64 {
    let t = ts
        .total(name)
        .unwrap_or_else(|| panic!("series `{name}` missing"));
    assert_eq!(t, t.round(), "{name} sums to a whole count");
    t as u64
}

fn max(ts: &TimeSeries, name: &str) -> f64 {
    ts.get(name)
        .unwrap_or_else(|| panic!("series `{name}` missing"))
        .iter()
        .flatten()
        .copied()
        .fold(0.0, f64::max)
}

/// Each counter of `family` declared with a series has one under `scope.entity.`, and it sums to
/// the summary's total; the others have none.
fn assert_series_sum_to_totals(
    ts: &TimeSeries,
    json: &serde_json::Value,
    scope: &str,
    entity: &str,
    family: &[Counter],
    ctx: &str,
) {
    for c in family {
        let name = format!("{scope}.{entity}.{}", c.name);
        let reported = &json[scope][entity][c.name];
        if c.kind == CounterKind::Gated && reported.is_null() {
            // A gated counter is reported only where its protection is configured, and then has
            // no series either.
            assert!(ts.get(&name).is_none(), "{ctx}: {name} has a series");
            continue;
        }
        assert!(
            !reported.is_null(),
            "{ctx}: {name} missing from the summary"
        );
        if c.in_series() {
            assert_eq!(Some(total(ts, &name)), reported.as_u64(), "{ctx}: {name}");
        } else {
            assert!(ts.get(&name).is_none(), "{ctx}: {name} has no series");
        }
    }
}

/// Every counted series sums to the summary's total; peaks and time averages agree too.
fn assert_consistent(policy: &str, s: &RunSummary, ts: &TimeSeries) {
    let m = &s.metrics;
    let ctx = format!("{policy} at {}", ts.resolution());
    assert_eq!(total(ts, "users.arrivals"), m.requests, "{ctx}");
    assert_eq!(total(ts, "users.succeeded"), m.succeeded, "{ctx}");
    assert_eq!(total(ts, "users.failed"), m.failed, "{ctx}");
    let attempts = total(ts, "users.client_attempts") as f64;
    let expected = m.client_attempts_per_request.unwrap() * m.requests as f64;
    assert!((attempts - expected).abs() < 1e-6, "{ctx}: client attempts");
    let json = serde_json::to_value(s).unwrap();
    for (name, sm) in &s.services {
        assert_series_sum_to_totals(ts, &json, "services", name, ServiceCounters::COUNTERS, &ctx);
        assert_eq!(
            max(ts, &format!("services.{name}.queue_max")),
            sm.counts.max_queue as f64,
            "{ctx}: {name}: the highest per-bin queue is the run's max_queue"
        );
        // Time averages over the arrival period: the bins covering it, weighted by their width.
        let bins_in_period = (ts.arrivals_end_s() / ts.resolution().as_secs_f64()).round() as usize;
        let width = ts.resolution().as_secs_f64();
        let avg = |what: &str| -> f64 {
            ts.get(&format!("services.{name}.{what}")).unwrap()[..bins_in_period]
                .iter()
                .flatten()
                .sum::<f64>()
                * width
                / ts.arrivals_end_s()
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(
            close(avg("queue_mean"), sm.mean_queue_len),
            "{ctx}: {name}: mean queue {} vs {}",
            avg("queue_mean"),
            sm.mean_queue_len
        );
        assert!(
            close(avg("queue_mean") + avg("busy_mean"), sm.mean_in_system),
            "{ctx}: {name}: mean in system"
        );
        for (mean, peak) in [("queue_mean", "queue_max"), ("busy_mean", "busy_max")] {
            let means = ts.get(&format!("services.{name}.{mean}")).unwrap();
            let peaks = ts.get(&format!("services.{name}.{peak}")).unwrap();
            for (a, b) in means.iter().zip(peaks) {
                assert!(a.unwrap() <= b.unwrap() + 1e-9, "{ctx}: {name}: mean ≤ max");
            }
        }
    }
    let sc = load(policy, &SHORT);
    for (e, name) in s.calls.keys().enumerate() {
        assert_series_sum_to_totals(ts, &json, "calls", name, EdgeCounters::COUNTERS, &ctx);
        let tokens = ts.get(&format!("calls.{name}.tokens"));
        match sc.edges[e].throttle {
            Some(t) => {
                let max_tokens = t.max_milli as f64 / 1000.0;
                for v in tokens.expect("a throttled edge has a tokens series") {
                    let v = v.unwrap();
                    assert!((0.0..=max_tokens).contains(&v), "{ctx}: {name}.tokens {v}");
                }
            }
            None => assert!(tokens.is_none(), "{ctx}: {name} has no bucket"),
        }
    }
    for (k, s) in ts.services().iter().enumerate() {
        let slots = sc.services[k].slots as f64;
        assert!(
            max(ts, &format!("services.{s}.busy_max")) <= slots,
            "{ctx}: {s} slots"
        );
    }
}

#[test]
fn per_bin_sums_agree_with_the_run_totals_for_every_policy_and_resolution() {
    for policy in POLICIES {
        for res in [SimDuration::from_secs(1), SimDuration::from_millis(100)] {
            let (s, ts) = run_series(policy, &SHORT, res);
            assert_consistent(policy, &s, &ts);
        }
    }
}

#[test]
fn recording_series_changes_no_metric() {
    for policy in ["naive", "protected"] {
        let (with, _) = run_series(policy, &SHORT, SimDuration::from_millis(250));
        let mut without = run(&load(policy, &SHORT)).unwrap();
        let mut with = with;
        for s in [&mut with, &mut without] {
            s.engine.wall_s = 0.0;
            s.engine.events_per_s = 0.0;
        }
        assert_eq!(with, without, "{policy}");
    }
}

#[test]
fn success_rate_collapses_in_the_window_and_only_naive_stays_down() {
    for policy in POLICIES {
        let (_, ts) = run_series(policy, &SHORT, SimDuration::from_secs(1));
        let rate = ts.get("users.success_rate").unwrap();
        assert_eq!(rate.len(), ts.bins());
        assert!(
            rate[..5].iter().all(|r| r.unwrap() > 0.99),
            "{policy} before"
        );
        assert!(rate[6].unwrap() < 0.5, "{policy} in the window");
        let last = rate[19].unwrap();
        if policy == "naive" {
            assert!(last < 0.01, "naive never comes back: {last}");
        } else {
            assert!(last > 0.99, "{policy} comes back: {last}");
        }
        // Arrivals stop at 20 s: later bins have no success rate.
        assert!(rate[20..].iter().all(Option::is_none), "{policy}");
    }
}

#[test]
fn bins_cover_the_run_and_are_labelled_by_their_start() {
    let (s, ts) = run_series("naive", &SHORT, SimDuration::from_millis(500));
    // naive drains after arrivals stop at 20 s; bins run to the end of the run.
    assert!(s.engine.simulated_s > 20.5);
    assert_eq!(ts.bins(), (s.engine.simulated_s / 0.5).ceil() as usize);
    assert_eq!(ts.bin_start_s(3), 1.5);
    let csv = render_long(&[("naive", &ts)]);
    assert!(csv.starts_with("scenario,t_s,series,value\nnaive,0.0,users.arrivals,"));
    assert!(csv.contains("\nnaive,1.5,services.svc_b.queue_max,"));
    let (s, ts) = run_series(
        "protected",
        &["duration=3500ms", "faults={}"],
        SimDuration::from_secs(1),
    );
    // Bins are whole: the arrival period's last, partial second has a bin of its own.
    assert_eq!(ts.bins(), s.engine.simulated_s.max(3.5).ceil() as usize);
    assert!(ts.get("users.arrivals").unwrap()[3].unwrap() > 0.0);
}

#[test]
fn timeseries_csv_of_a_short_run() {
    let sets = [
        "duration=4s",
        "drain=2s",
        "arrivals.rate=40",
        "faults.slow_b.from=1s",
        "faults.slow_b.duration=2s",
    ];
    let (_, ts) = run_series("protected", &sets, SimDuration::from_secs(1));
    let csv = render_long(&[("protected", &ts)]);
    insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!("timeseries_short_run", csv);
    });
}

/// The protections' decisions are binned too (rejects and drops by reason, cancellations, hedges,
/// local throttling, breaker refusals, pushback): every such series sums to the run's total.
#[test]
fn protection_series_sum_to_the_run_totals() {
    let service_counts = [
        "rejected_outage",
        "failed_by_fault",
        "dropped_queue_time",
        "dropped_codel",
        "cancelled",
    ];
    let edge_counts = [
        "retries_budget_denied",
        "throttled_locally",
        "rejected_circuit_open",
        "hedges",
        "hedges_throttled",
        "cancels_sent",
        "pushback_honored",
        "pushback_no_retry",
    ];
    let cases: [(&str, &[&str]); 10] = [
        ("protections/cancellation", &SHORT),
        ("protections/codel", &SHORT),
        ("protections/queue_time", &SHORT),
        ("protections/circuit_breaker", &[]),
        ("protections/hedging", &SHORT),
        ("protections/retry_budget", &SHORT),
        ("protections/adaptive_throttle", &SHORT),
        ("protections/pushback", &SHORT),
        ("faults/outage", &[]),
        ("faults/error", &[]),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (name, sets) in cases {
        let (s, ts) = run_series(name, sets, SimDuration::from_secs(1));
        let json = serde_json::to_value(&s).unwrap();
        let ctx = name.to_string();
        for (scope, family) in [
            ("services", ServiceCounters::COUNTERS),
            ("calls", EdgeCounters::COUNTERS),
        ] {
            for (entity, m) in json[scope].as_object().unwrap() {
                assert_series_sum_to_totals(&ts, &json, scope, entity, family, &ctx);
                for what in service_counts.iter().chain(&edge_counts) {
                    if m.get(*what).and_then(|v| v.as_u64()).is_some_and(|v| v > 0) {
                        seen.insert(*what);
                    }
                }
            }
        }
    }
    // The cases exercise every counter at least once, so the sums above are not all 0 = 0.
    for what in service_counts.iter().chain(&edge_counts) {
        if *what != "pushback_no_retry" {
            assert!(seen.contains(what), "no case made `{what}` non-zero");
        }
    }
}

/// Bin `b` of a series (0 where undefined).
fn at(ts: &TimeSeries, name: &str, b: usize) -> f64 {
    ts.get(name)
        .unwrap_or_else(|| panic!("series `{name}` missing"))[b]
        .unwrap_or(0.0)
}

#[test]
fn class_series_add_up_to_each_class_and_to_the_users() {
    let (s, ts) = run_series("workload/classes_fifo", &[], SimDuration::from_millis(500));
    assert!(s.classes.len() > 1, "a scenario of several classes");
    for (name, m) in &s.classes {
        assert_eq!(total(&ts, &format!("classes.{name}.arrivals")), m.requests);
        assert_eq!(
            total(&ts, &format!("classes.{name}.succeeded")),
            m.succeeded
        );
        assert_eq!(total(&ts, &format!("classes.{name}.failed")), m.failed);
        let rate = ts.get(&format!("classes.{name}.success_rate")).unwrap();
        for (b, r) in rate.iter().enumerate() {
            let arrivals = at(&ts, &format!("classes.{name}.arrivals"), b);
            match r {
                Some(r) => {
                    let ok = at(&ts, &format!("classes.{name}.succeeded"), b);
                    assert_eq!(*r, ok / arrivals, "{name} bin {b}");
                }
                None => assert_eq!(
                    arrivals, 0.0,
                    "{name} bin {b}: a rate where requests arrived"
                ),
            }
        }
    }
    for b in 0..ts.bins() {
        let by_class: f64 = s
            .classes
            .keys()
            .map(|c| at(&ts, &format!("classes.{c}.arrivals"), b))
            .sum();
        assert_eq!(by_class, at(&ts, "users.arrivals", b), "bin {b}");
    }
    // One class is the users: no class series.
    let (_, single) = run_series("naive", &SHORT, SimDuration::from_secs(1));
    assert!(!single.names().any(|n| n.starts_with("classes.")));
}

#[test]
fn replica_series_add_up_to_the_service_and_to_each_replica_summary() {
    let sc = load("fleet/slow_replica", &[]);
    let resolution = SimDuration::from_millis(500);
    let (s, ts) = run_series("fleet/slow_replica", &[], resolution);
    let replicas = s.services["backend"].replica_stats.len();
    assert_eq!(replicas, 3);
    for level in ["busy_mean", "queue_mean"] {
        for b in 0..ts.bins() {
            let sum: f64 = (0..replicas)
                .map(|k| at(&ts, &format!("services.backend.replica.{k}.{level}"), b))
                .sum();
            let service = at(&ts, &format!("services.backend.{level}"), b);
            assert!(
                (sum - service).abs() <= 1e-9 * service.max(1.0),
                "{level} bin {b}: replicas {sum} vs service {service}"
            );
        }
    }
    // Over the arrival period, a replica's queue_mean weighted by bin width is its summary's
    // mean_queue_len; and the slow replica 0 queues most.
    let period_bins = (sc.duration.0 / resolution.0) as usize;
    let width = resolution.as_secs_f64() / sc.duration.as_secs_f64();
    for (k, r) in s.services["backend"].replica_stats.iter().enumerate() {
        let mean: f64 = (0..period_bins)
            .map(|b| at(&ts, &format!("services.backend.replica.{k}.queue_mean"), b) * width)
            .sum();
        assert!(
            (mean - r.mean_queue_len).abs() <= 1e-9 * r.mean_queue_len.max(1.0),
            "replica {k}: {mean} vs {}",
            r.mean_queue_len
        );
    }
    let peak = |k: usize| max(&ts, &format!("services.backend.replica.{k}.queue_mean"));
    assert!(peak(0) > 10.0 * peak(1).max(peak(2)).max(0.1));
    // A service of one replica has no replica series.
    assert!(!ts.names().any(|n| n.starts_with("services.api.replica.")));
}

#[test]
fn a_service_of_many_replicas_has_the_lowest_mean_and_highest_over_them() {
    let many = loadsim::metrics::timeseries::MAX_REPLICA_SERIES + 4;
    let set = format!("services.backend.replicas={many}");
    let resolution = SimDuration::from_secs(1);
    let (_, ts) = run_series("fleet/slow_replica", &[&set], resolution);
    assert!(
        !ts.names()
            .any(|n| n.starts_with("services.backend.replica.0."))
    );
    for level in ["busy_mean", "queue_mean"] {
        for b in 0..ts.bins() {
            let [lo, mean, hi] = ["min", "mean", "max"]
                .map(|stat| at(&ts, &format!("services.backend.replica.{stat}.{level}"), b));
            assert!(
                lo <= mean && mean <= hi,
                "{level} bin {b}: {lo} {mean} {hi}"
            );
            let service = at(&ts, &format!("services.backend.{level}"), b);
            assert!(
                (mean * many as f64 - service).abs() <= 1e-9 * service.max(1.0),
                "{level} bin {b}: the mean over replicas is the service's share"
            );
        }
    }
    // The slow replica stands out in the window: ten times the work of the others.
    let window = 20;
    assert!(
        at(&ts, "services.backend.replica.max.busy_mean", window)
            > 3.0 * at(&ts, "services.backend.replica.mean.busy_mean", window)
    );
}

#[test]
fn recording_class_and_replica_series_changes_no_metric() {
    for name in ["workload/classes_fifo", "fleet/slow_replica"] {
        let (mut with, _) = run_series(name, &[], SimDuration::from_millis(250));
        let mut without = run(&load(name, &[])).unwrap();
        for s in [&mut with, &mut without] {
            s.engine.wall_s = 0.0;
            s.engine.events_per_s = 0.0;
        }
        assert_eq!(with, without, "{name}");
    }
}
