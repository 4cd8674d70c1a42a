//! The numbers of a finished run, under docs/model.md §3's names, and how each is estimated. Owns the
//! [`RunSummary`] that every report format renders. Ratios whose denominator is zero are `None`
//! (JSON `null`), never NaN.
//!
//! Estimators: latency and queueing-time quantiles are nearest-rank over an HDR histogram with 1 µs
//! resolution and 3 significant digits (the reported value is the upper edge of the bucket holding
//! the nearest-rank sample, so at most 0.1 % above it). Time averages (`utilization`,
//! `mean_in_system`, `mean_queue_len`) integrate over the arrival period `[0, duration)`.
//!
//! Little's law. Every service starts empty at time 0, so over the window `[0, duration)` it holds
//! as an identity (not only in the limit) when both sides use that window:
//! `mean_in_system = admitted_in_period_per_s × sojourn_in_period_mean_s`, where the rate counts
//! requests admitted in the window and the mean is their time in the service *inside* the window
//! (a request still queued or in a slot at `duration` counts up to `duration`). The whole-run
//! `sojourn_mean_s` includes requests admitted during the drain and sojourns past `duration`, so
//! `admitted / duration × sojourn_mean_s` is only a consistent estimator of `mean_in_system` for a
//! stationary system, off by end effects; under a fault that never clears it can be far off.
//! In-system means queued or holding a slot: admitted, not yet completed nor dropped.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

pub use super::counters::CallMetrics;
use super::counters::{ReplicaCounts, ServiceCounts};
use super::levels::LevelAreas;
use super::recorder::{ArrivalWindow, Recorder, UserCounters};
use crate::scenario::Scenario;
use crate::scenario::metrics::{RecoveryRule, quantile_name};
use crate::time::{NANOS_PER_SEC, SimTime};

/// State at the end of a run that the recorder does not hold.
#[derive(Debug)]
pub struct FinalState {
    /// The simulated instant the run ended (`simulated_s`).
    pub end: SimTime,
    /// Per service, admitted jobs not yet done (queued or holding a slot): `in_flight_at_end`.
    pub in_flight: Vec<u64>,
    /// Per service, its level integrals over the arrival period.
    pub levels: Vec<LevelAreas>,
    /// User requests still open at the end (every class together).
    pub unfinished_users: u64,
    /// Per request class (with more than one class; empty otherwise): user requests still open.
    pub unfinished_by_class: Vec<u64>,
    /// Per service of more than one replica, its replicas' metrics (empty otherwise).
    pub replica_stats: Vec<Vec<ReplicaMetrics>>,
    /// Per service, what its autoscaler did (`None` without `autoscale`).
    pub autoscale: Vec<Option<AutoscaleMetrics>>,
    /// Events the engine ran.
    pub events: u64,
    /// Most events pending in the engine's queue at once.
    pub peak_pending: u64,
    /// Most jobs alive at once (`peak_in_flight_requests`).
    pub peak_jobs: u64,
    /// Wall-clock time the run took (machine-dependent).
    pub wall: std::time::Duration,
}

impl FinalState {
    /// The state of a run of `services` services that did nothing (for the summary's layout).
    pub fn empty(services: usize) -> Self {
        FinalState {
            end: SimTime::ZERO,
            in_flight: vec![0; services],
            levels: vec![LevelAreas::default(); services],
            unfinished_users: 0,
            unfinished_by_class: Vec::new(),
            replica_stats: vec![Vec::new(); services],
            autoscale: vec![None; services],
            events: 0,
            peak_pending: 0,
            peak_jobs: 0,
            wall: std::time::Duration::ZERO,
        }
    }
}

/// One run: scenario, seed and every metric.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RunSummary {
    /// The scenario's name.
    pub scenario: String,
    /// The seed the run used.
    pub seed: u64,
    /// User-facing outcomes of every request class together.
    pub metrics: RunMetrics,
    /// Per request class, by name, the same outcomes (only with more than one class, i.e. with
    /// `clients:`; absent for the shorthand).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub classes: IndexMap<String, RunMetrics>,
    /// Per service, by name, in the scenario's order.
    pub services: IndexMap<String, ServiceMetrics>,
    /// Per call edge, keyed `<caller>-><callee>`.
    pub calls: IndexMap<String, CallMetrics>,
    /// What the run cost the simulator.
    pub engine: EngineMetrics,
}

/// User-facing outcomes (docs/model.md §3.2).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct RunMetrics {
    /// Succeeded / arrived, for user requests arriving before the fault window.
    pub success_rate_before: Option<f64>,
    /// … arriving inside the fault window.
    pub success_rate_during: Option<f64>,
    /// … arriving after the fault window.
    pub success_rate_after: Option<f64>,
    /// R2: first whole second s ≥ window end with ≥ 99 % success over arrivals in [s, s+3), minus
    /// the window end; `None` if no such second before arrivals stop (or no fault).
    pub recovery_s: Option<f64>,
    /// Whether the run recovered (R2): `true` when `recovery_s` has a value, `false` when it has
    /// none although a 3-second span fits between the window's end and the end of arrivals;
    /// `None` when recovery is not measurable (no fault window, or no such span fits).
    pub recovered: Option<bool>,
    /// Whether a whole 3 s span of arrivals follows the fault window, so that R2 can be measured
    /// at all: `false` makes a `null` `recovery_s` "not measurable" rather than "never". Written
    /// only when `false` (absent means `true`, and runs without faults are `true`).
    #[serde(default = "measurable", skip_serializing_if = "is_measurable")]
    pub recovery_measurable: bool,
    /// User requests that arrived (`succeeded + failed + unfinished`).
    pub requests: u64,
    /// User requests that arrived inside the fault window.
    pub requests_during_fault: u64,
    /// User requests that ended with success.
    pub succeeded: u64,
    /// User requests that ended with failure.
    pub failed: u64,
    /// User requests still open at the horizon.
    pub unfinished: u64,
    /// Succeeded / requests, over the whole run (an unfinished request counts as not succeeded).
    pub success_rate: Option<f64>,
    /// Client attempts (first tries and client retries) per user request.
    pub client_attempts_per_request: Option<f64>,
    /// Median end − arrival of failed user requests, client retries included, in seconds.
    pub failed_latency_p50_s: Option<f64>,
    /// Median end − arrival of succeeded user requests, client retries included, in seconds.
    pub success_latency_p50_s: Option<f64>,
    /// 99th percentile of end − arrival of succeeded user requests, in seconds.
    pub success_latency_p99_s: Option<f64>,
    /// Start of the fault window, in seconds (`None` without faults).
    pub fault_start_s: Option<f64>,
    /// End of the fault window (excluded), in seconds (`None` without faults).
    pub fault_end_s: Option<f64>,
    /// With `metrics.quantiles` only: the latency of succeeded and of failed user requests at
    /// each quantile, as `success_<p>_s` and `failed_<p>_s` (`p50`, `p99_9`, …), nearest-rank over
    /// the same histograms as the fixed fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_quantiles: Option<IndexMap<String, Option<f64>>>,
    /// With `metrics.windows` only: each named window of arrival time, in the order written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows: Option<IndexMap<String, WindowMetrics>>,
}

/// The user requests arriving in one named measurement window `[from_s, to_s)`
/// (`metrics.windows`), independent of faults.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct WindowMetrics {
    /// Where the window starts, seconds of arrival time.
    pub from_s: f64,
    /// Where it ends (excluded).
    pub to_s: f64,
    /// User requests arriving in the window.
    pub requests: u64,
    /// Of those, how many succeeded.
    pub succeeded: u64,
    /// Of those, how many failed (the rest were unfinished at the end of the run).
    pub failed: u64,
    /// `succeeded / requests`.
    pub success_rate: Option<f64>,
    /// Latency of the window's succeeded requests at each quantile of `metrics.quantiles`
    /// (default p50 and p99), keyed `<p>_s`.
    pub success_latency: IndexMap<String, Option<f64>>,
}

/// Per-service counters and ratios.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ServiceMetrics {
    /// The declared counters ([`super::counters`]), first in the JSON object.
    #[serde(flatten)]
    pub counts: ServiceCounts,
    /// `arrivals_during_fault` / user requests arriving in the fault window.
    pub arrivals_during_fault_per_request: Option<f64>,
    /// Arrivals / user requests.
    pub attempts_per_request: Option<f64>,
    /// Completions in the call tree of a succeeded user request / completions.
    pub goodput_ratio: Option<f64>,
    /// `completed_abandoned` / completions.
    pub wasted_ratio: Option<f64>,
    /// R1 bound, from the policies alone.
    pub worst_case_attempts_per_request: u64,
    /// Admitted requests still queued or in a slot at the end of the run.
    pub in_flight_at_end: u64,
    /// Mean queueing time of requests that started work (zero for those that found a free slot).
    pub queue_wait_mean_s: Option<f64>,
    /// Median queueing time of requests that started work, in seconds.
    pub queue_wait_p50_s: Option<f64>,
    /// 99th percentile of the same queueing times, in seconds.
    pub queue_wait_p99_s: Option<f64>,
    /// Admitted requests that had to queue / admitted (Erlang C's probability of waiting).
    pub waited_fraction: Option<f64>,
    /// Mean busy slots / slots over the arrival period.
    pub utilization: f64,
    /// Mean number queued or in a slot over the arrival period.
    pub mean_in_system: f64,
    /// Mean number queued over the arrival period.
    pub mean_queue_len: f64,
    /// Mean time from admission to leaving (completion or drop).
    pub sojourn_mean_s: Option<f64>,
    /// Requests admitted during the arrival period `[0, duration)` / `duration`, per second:
    /// Little's λ on that window.
    pub admitted_in_period_per_s: f64,
    /// Mean time in the service within `[0, duration)` of the requests admitted in it (cut at
    /// `duration`): Little's W on that window, so that `mean_in_system` equals
    /// `admitted_in_period_per_s × sojourn_in_period_mean_s`.
    pub sojourn_in_period_mean_s: Option<f64>,
    /// With `metrics.quantiles` only: for each quantile, `<p>_s`, the nearest-rank (§3.5) time
    /// in the service, admission to reply, of the requests it completed — the server-side
    /// latency a dashboard shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_quantiles: Option<IndexMap<String, Option<f64>>>,
    /// Per replica, for a service of more than one replica (absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replica_stats: Vec<ReplicaMetrics>,
    /// What the autoscaler did, for a service with `autoscale` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<AutoscaleMetrics>,
}

/// What a service's autoscaler did (docs/model.md §2.13.1).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct AutoscaleMetrics {
    /// Evaluations of the controller (every `interval` before `duration`).
    pub evaluations: u64,
    /// Evaluations that added replicas.
    pub scale_ups: u64,
    /// Evaluations that removed replicas (they drain).
    pub scale_downs: u64,
    /// Most replicas started at once (warming up or ready; draining ones not counted).
    pub replicas_peak: u32,
    /// Replicas started, time average over the arrival period.
    pub replicas_mean: f64,
    /// ∫ replicas started dt over the arrival period, in replica-seconds.
    pub replica_seconds: f64,
    /// Every change: from `at_s` on, `replicas` started, of which `ready` take traffic.
    pub timeline: Vec<ReplicaChange>,
}

/// One change of an autoscaled service's replicas.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ReplicaChange {
    /// When the change happened, in simulated seconds.
    pub at_s: f64,
    /// Replicas started from then on (warming up or ready; draining ones not counted).
    pub replicas: u32,
    /// Of those, replicas ready to take traffic.
    pub ready: u32,
}

/// One replica of a replicated service: its counters and levels.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct ReplicaMetrics {
    /// The declared counters ([`super::counters::ReplicaCounters`]).
    #[serde(flatten)]
    pub counts: ReplicaCounts,
    /// Mean busy slots / slots over the arrival period.
    pub utilization: f64,
    /// Mean number queued at this replica over the arrival period.
    pub mean_queue_len: f64,
    /// Times callers' outlier detection ejected this replica, summed over the calls with
    /// `outlier_detection` toward the service (absent when none has it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ejections: Option<u64>,
    /// Seconds this replica spent ejected until the end of the run, summed like `ejections`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ejected_s: Option<f64>,
}

/// What the run cost.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct EngineMetrics {
    /// Events run (a settled timeout the queue dropped is not one).
    pub events: u64,
    /// Wall-clock seconds the run took (depends on the machine).
    pub wall_s: f64,
    /// `events / wall_s` (depends on the machine).
    pub events_per_s: f64,
    /// Most events pending in the engine's queue at once.
    pub peak_pending_events: u64,
    /// Most requests admitted at services (queued or in a slot) at once.
    pub peak_in_flight_requests: u64,
    /// Simulated seconds until the run ended.
    pub simulated_s: f64,
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

fn quantile_s(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1e6)
}

fn measurable() -> bool {
    true
}

fn is_measurable(m: &bool) -> bool {
    *m
}

/// Whether `seconds` whole seconds of arrivals leave a 3 s span from the first whole second at or
/// after `window_end` (the span R2 needs).
pub fn recovery_measurable(seconds: usize, window_end: SimTime) -> bool {
    let first = window_end.0.div_ceil(NANOS_PER_SEC) as usize;
    first + 3 <= seconds
}

/// [`recovery_measurable`] for a span of `span` whole seconds (`metrics.recovery.span`).
pub fn recovery_measurable_with(seconds: usize, window_end: SimTime, span: usize) -> bool {
    let first = window_end.0.div_ceil(NANOS_PER_SEC) as usize;
    first + span <= seconds
}

/// R2 recovery time from per-second counters.
pub fn recovery_seconds(arrivals: &[u32], succeeded: &[u32], window_end: SimTime) -> Option<f64> {
    recovery_seconds_with(arrivals, succeeded, window_end, RecoveryRule::default())
}

/// R2 recovery time from per-second counters under `rule` (`metrics.recovery`): the first whole
/// second s at or after the window's end whose `rule.span_s` seconds of arrivals meet the
/// threshold, minus the window's end.
pub fn recovery_seconds_with(
    arrivals: &[u32],
    succeeded: &[u32],
    window_end: SimTime,
    rule: RecoveryRule,
) -> Option<f64> {
    let first = window_end.0.div_ceil(NANOS_PER_SEC) as usize;
    let seconds = arrivals.len();
    let span = rule.span_s;
    (first..(seconds + 1).saturating_sub(span)).find_map(|s| {
        let a: u64 = arrivals[s..s + span].iter().map(|&x| x as u64).sum();
        let ok: u64 = succeeded[s..s + span].iter().map(|&x| x as u64).sum();
        rule.met(ok, a).then(|| s as f64 - window_end.as_secs_f64())
    })
}

/// `metrics.latency_quantiles`, when `metrics.quantiles` asks for it.
fn latency_quantiles(
    quantiles: Option<&[f64]>,
    success: &hdrhistogram::Histogram<u64>,
    failed: &hdrhistogram::Histogram<u64>,
) -> Option<IndexMap<String, Option<f64>>> {
    let qs = quantiles?;
    let mut out = IndexMap::new();
    for (what, h) in [("success", success), ("failed", failed)] {
        for &q in qs {
            out.insert(format!("{what}_{}_s", quantile_name(q)), quantile_s(h, q));
        }
    }
    Some(out)
}

/// `metrics.windows`, when the scenario names windows.
fn window_metrics(sc: &Scenario, rec: &mut Recorder) -> Option<IndexMap<String, WindowMetrics>> {
    if rec.windows.is_empty() {
        return None;
    }
    let qs = sc.metrics.series_quantiles();
    Some(
        rec.windows
            .iter_mut()
            .map(|w| {
                let h = w.success_latency.histogram();
                let m = WindowMetrics {
                    from_s: w.window.from.as_secs_f64(),
                    to_s: w.window.to.as_secs_f64(),
                    requests: w.arrivals,
                    succeeded: w.succeeded,
                    failed: w.failed,
                    success_rate: ratio(w.succeeded, w.arrivals),
                    success_latency: qs
                        .iter()
                        .map(|&q| (format!("{}_s", quantile_name(q)), quantile_s(h, q)))
                        .collect(),
                };
                (w.window.name.clone(), m)
            })
            .collect(),
    )
}

/// The user-facing outcomes of the user requests `u` counts (of one class, or of all), of which
/// `unfinished` were still open at the horizon.
fn user_metrics(sc: &Scenario, u: &mut UserCounters, unfinished: u64) -> RunMetrics {
    let requests: u64 = u.by_window.iter().sum();
    let window = sc.fault_window();
    let rate = |w: ArrivalWindow| ratio(u.succeeded_by_window[w as usize], u.by_window[w as usize]);
    let (during, after) = match window {
        Some(_) => (rate(ArrivalWindow::During), rate(ArrivalWindow::After)),
        None => (None, None),
    };
    let rule = sc.metrics.recovery;
    let recovery_s = window.and_then(|(_, end)| {
        recovery_seconds_with(&u.per_second_arrivals, &u.per_second_succeeded, end, rule)
    });
    let measurable =
        |end: SimTime| recovery_measurable_with(u.per_second_arrivals.len(), end, rule.span_s);
    let requests_during_fault = u.by_window[ArrivalWindow::During as usize];
    let (success_latency, failed_latency) =
        (u.success_latency.histogram(), u.failed_latency.histogram());
    RunMetrics {
        success_rate_before: rate(ArrivalWindow::Before),
        success_rate_during: during,
        success_rate_after: after,
        recovery_s,
        recovered: window
            .filter(|&(_, end)| measurable(end))
            .map(|_| recovery_s.is_some()),
        recovery_measurable: window.is_none_or(|(_, end)| measurable(end)),
        requests,
        requests_during_fault,
        succeeded: u.succeeded,
        failed: u.failed,
        unfinished,
        success_rate: ratio(u.succeeded, requests),
        client_attempts_per_request: ratio(u.client_attempts, requests),
        failed_latency_p50_s: quantile_s(failed_latency, 0.5),
        success_latency_p50_s: quantile_s(success_latency, 0.5),
        success_latency_p99_s: quantile_s(success_latency, 0.99),
        fault_start_s: window.map(|w| w.0.as_secs_f64()),
        fault_end_s: window.map(|w| w.1.as_secs_f64()),
        latency_quantiles: latency_quantiles(
            sc.metrics.quantiles.as_deref(),
            success_latency,
            failed_latency,
        ),
        // The named windows are the run's, not a class's: set by `summarize`.
        windows: None,
    }
}

/// Builds the summary of a finished run. The recorder is borrowed mutably only because reading
/// a latency histogram moves its exact counts into it ([`super::histogram::MicrosHistogram::histogram`]).
pub fn summarize(sc: &Scenario, rec: &mut Recorder, fin: &FinalState) -> RunSummary {
    let u = &mut rec.users;
    let requests: u64 = u.by_window.iter().sum();
    let requests_during_fault = u.by_window[ArrivalWindow::During as usize];
    let mut metrics = user_metrics(sc, u, fin.unfinished_users);
    metrics.windows = window_metrics(sc, rec);
    // Per class only with several (the recorder counts them then); an empty run (the column
    // layout) lists every class all the same.
    let classes = if sc.has_classes() {
        sc.classes
            .iter()
            .enumerate()
            .map(|(i, class)| {
                let m = match rec.classes.get_mut(i) {
                    Some(c) => {
                        user_metrics(sc, c, fin.unfinished_by_class.get(i).copied().unwrap_or(0))
                    }
                    None => user_metrics(sc, &mut UserCounters::new(0), 0),
                };
                (class.name.clone(), m)
            })
            .collect()
    } else {
        IndexMap::new()
    };
    let worst = sc.worst_case_attempts();
    let period = sc.duration.0 as f64;
    let services = sc
        .services
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (c, levels) = (&mut rec.services[i], fin.levels[i]);
            let queue_wait = c.queue_wait.histogram();
            let queue_wait_p = (quantile_s(queue_wait, 0.5), quantile_s(queue_wait, 0.99));
            let m = ServiceMetrics {
                counts: c.summary_gated(&|name| super::counters::service_shows(s, name)),
                arrivals_during_fault_per_request: ratio(
                    c.arrivals_during_fault,
                    requests_during_fault,
                ),
                attempts_per_request: ratio(c.arrivals, requests),
                goodput_ratio: ratio(c.useful, c.completed),
                wasted_ratio: ratio(c.completed_abandoned, c.completed),
                worst_case_attempts_per_request: worst[i],
                in_flight_at_end: fin.in_flight[i],
                queue_wait_mean_s: (c.started > 0)
                    .then(|| c.wait_sum_ns as f64 / c.started as f64 / 1e9),
                queue_wait_p50_s: queue_wait_p.0,
                queue_wait_p99_s: queue_wait_p.1,
                waited_fraction: ratio(c.enqueued, c.admitted),
                utilization: levels.busy as f64
                    / (period
                        * (s.slots as f64
                            * fin.autoscale[i]
                                .as_ref()
                                .map_or(s.replicas as f64, |a| a.replicas_mean))),
                mean_in_system: (levels.busy + levels.queue) as f64 / period,
                mean_queue_len: levels.queue as f64 / period,
                sojourn_mean_s: (c.departed > 0)
                    .then(|| c.sojourn_sum_ns as f64 / c.departed as f64 / 1e9),
                admitted_in_period_per_s: c.admitted_in_period as f64 / (period / 1e9),
                sojourn_in_period_mean_s: (c.admitted_in_period > 0).then(|| {
                    c.sojourn_in_period_ns(SimTime(sc.duration.0)) as f64
                        / c.admitted_in_period as f64
                        / 1e9
                }),
                latency_quantiles: match (&mut c.completed_latency, sc.metrics.quantiles.as_deref())
                {
                    (Some(h), Some(qs)) => {
                        let h = h.histogram();
                        Some(
                            qs.iter()
                                .map(|&q| (format!("{}_s", quantile_name(q)), quantile_s(h, q)))
                                .collect(),
                        )
                    }
                    _ => None,
                },
                replica_stats: fin.replica_stats[i].clone(),
                autoscale: fin.autoscale[i].clone(),
            };
            (s.name.clone(), m)
        })
        .collect();
    let calls = sc
        .edges
        .iter()
        .zip(&rec.edges)
        .map(|(e, c)| {
            let shown = |name: &'static str| super::counters::edge_shows(e, name);
            (e.name.clone(), c.summary_gated(&shown))
        })
        .collect();
    let wall_s = fin.wall.as_secs_f64();
    RunSummary {
        scenario: sc.name.clone(),
        seed: sc.seed,
        metrics,
        classes,
        services,
        calls,
        engine: EngineMetrics {
            events: fin.events,
            wall_s,
            events_per_s: if wall_s > 0.0 {
                fin.events as f64 / wall_s
            } else {
                0.0
            },
            peak_pending_events: fin.peak_pending,
            peak_in_flight_requests: fin.peak_jobs,
            simulated_s: fin.end.as_secs_f64(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_cost_fields_keep_their_json_names() {
        // Issue 5 names these fields; scripts and the sweep manifest read them.
        let e = EngineMetrics {
            events: 1,
            wall_s: 0.5,
            events_per_s: 2.0,
            peak_pending_events: 3,
            peak_in_flight_requests: 4,
            simulated_s: 60.0,
        };
        let v = serde_json::to_value(&e).unwrap();
        for key in [
            "events",
            "wall_s",
            "events_per_s",
            "peak_pending_events",
            "peak_in_flight_requests",
        ] {
            assert!(v.get(key).is_some(), "engine.{key} missing from {v}");
        }
    }

    #[test]
    fn recovery_is_the_first_good_three_second_span_after_the_window() {
        let arrivals = vec![100; 10];
        let mut ok = vec![100; 10];
        ok[5] = 50; // bad second right after a window ending at t=5
        ok[6] = 100;
        // [5,8) = 250/300 < 99 %; [6,9) = 300/300.
        assert_eq!(
            recovery_seconds(&arrivals, &ok, SimTime(5 * NANOS_PER_SEC)),
            Some(1.0)
        );
        // A window ending mid-second starts the search at the next whole second.
        assert_eq!(
            recovery_seconds(&arrivals, &ok, SimTime(5_500_000_000)),
            Some(0.5)
        );
        // Never recovers.
        let none = vec![0; 10];
        assert_eq!(
            recovery_seconds(&arrivals, &none, SimTime(5 * NANOS_PER_SEC)),
            None
        );
    }

    #[test]
    fn recovery_is_measurable_only_when_a_whole_span_fits() {
        // 10 s of arrivals: spans may start at 0..=7.
        assert!(recovery_measurable(10, SimTime(7 * NANOS_PER_SEC)));
        assert!(!recovery_measurable(10, SimTime(8 * NANOS_PER_SEC)));
        // 6.5 s starts the search at 7.
        assert!(recovery_measurable(10, SimTime(6_500_000_000)));
        assert!(!recovery_measurable(10, SimTime(7_000_000_001)));
    }
}
