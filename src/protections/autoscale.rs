//! Horizontal autoscaling of a service's replicas (`services.<s>.autoscale`), after the Kubernetes
//! Horizontal Pod Autoscaler. Owns the YAML form, its validation, the defaults, and the HPA's
//! decision rule as pure functions of what the controller reads, so that they can be tested
//! against cases computed by hand from the source:
//!
//! - [`metric_replicas`]: the replica count the metric asks for — kubernetes/kubernetes
//!   `pkg/controller/podautoscaler/replica_calculator.go` (`GetResourceReplicas`, `groupPods`)
//!   and `pkg/controller/podautoscaler/metrics/utilization.go` (`GetResourceUtilizationRatio`:
//!   utilization in *whole percent*, truncated): no change within the tolerance of 0.1
//!   (`--horizontal-pod-autoscaler-tolerance`), else `ceil(ratio × ready replicas)`; replicas still
//!   warming up count as using 0 % when the ratio asks to scale up, and the answer is then dropped
//!   when that reverses the direction.
//! - [`Hpa::reconcile`]: what the controller makes of it — `pkg/controller/podautoscaler/
//!   horizontal.go` (`reconcileAutoscaler`, `stabilizeRecommendationWithBehaviors`,
//!   `convertDesiredReplicasWithBehaviorRate`, `calculateScaleUpLimitWithScalingRules`,
//!   `calculateScaleDownLimitWithBehaviors`, `recordInitialRecommendation`) with the default
//!   scaling rules of `pkg/apis/autoscaling/v2/defaults.go`: scale up by at most
//!   max(4 pods, 100 %) per 15 s period (policy `Max`) with no scale-up stabilization; scale down
//!   to the highest recommendation of the last `scale_down_cooldown` (the scale-down
//!   `stabilizationWindowSeconds`), by at most 100 % per 15 s; clamped to
//!   `[min_replicas, max_replicas]`. Setting `scale_down_cooldown` is setting a `behavior`, so
//!   the controller takes its behavior path (with a nil `behavior` it would take the legacy
//!   path, whose scale-up limit is max(2 × current, 4) per sync).
//!
//! The simulation (`model::autoscale`) measures the utilization, adds and drains replicas and
//! calls this rule every `interval`.

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::time::{SimDuration, SimTime};

/// Default target utilization (busy slots / slots of the ready replicas).
pub(crate) const DEFAULT_TARGET_UTILIZATION: f64 = 0.7;
/// Default lower bound (the HPA's default `minReplicas`).
pub(crate) const DEFAULT_MIN_REPLICAS: u32 = 1;
/// Default evaluation period (`--horizontal-pod-autoscaler-sync-period`).
pub(crate) const DEFAULT_INTERVAL: SimDuration = SimDuration::from_secs(15);
/// Default time before a new replica serves.
pub(crate) const DEFAULT_WARMUP: SimDuration = SimDuration::from_secs(60);
/// Default scale-down stabilization window
/// (`--horizontal-pod-autoscaler-downscale-stabilization`).
pub(crate) const DEFAULT_SCALE_DOWN_COOLDOWN: SimDuration = SimDuration::from_secs(300);
/// No change while |1 − ratio| is at most this (`--horizontal-pod-autoscaler-tolerance`).
pub(crate) const TOLERANCE: f64 = 0.1;
/// Default scale-up policies: `{type: Pods, value: 4, periodSeconds: 15}` and
/// `{type: Percent, value: 100, periodSeconds: 15}`, the larger one wins.
pub(crate) const SCALE_UP_PODS: u32 = 4;
/// The `Percent` scale-up policy's value: at most 100 % more replicas per period.
pub(crate) const SCALE_UP_PERCENT: u32 = 100;
/// Default scale-down policy: `{type: Percent, value: 100, periodSeconds: 15}`.
pub(crate) const SCALE_DOWN_PERCENT: u32 = 100;
/// The period of every default policy.
pub(crate) const POLICY_PERIOD: SimDuration = SimDuration::from_secs(15);

/// `services.<s>.autoscale`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoscaleRaw {
    /// Target of busy slots / slots of the ready replicas, averaged over the `interval`; a whole
    /// percent in (0, 1] (Kubernetes' `averageUtilization` is an integer percentage).
    #[schemars(extend("default" = DEFAULT_TARGET_UTILIZATION))]
    pub target_utilization: Option<f64>,
    /// Fewest replicas the controller keeps.
    #[schemars(extend("default" = DEFAULT_MIN_REPLICAS))]
    pub min_replicas: Option<u32>,
    /// Most replicas the controller starts. Required.
    pub max_replicas: u32,
    /// How often the controller evaluates (the first time one interval after 0).
    #[schemars(extend("default" = DEFAULT_INTERVAL.to_string()))]
    pub interval: Option<DurationText>,
    /// Time from a replica's start to its first request (it takes no traffic before).
    #[schemars(extend("default" = DEFAULT_WARMUP.to_string()))]
    pub warmup: Option<DurationText>,
    /// Scale-down stabilization window: scale down only to the highest recommendation of this
    /// trailing window.
    #[schemars(extend("default" = DEFAULT_SCALE_DOWN_COOLDOWN.to_string()))]
    pub scale_down_cooldown: Option<DurationText>,
}

/// A validated `autoscale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Autoscale {
    /// Target utilization in whole percent (1–100).
    pub target_percent: u32,
    /// `min_replicas`: fewest replicas the controller keeps (default 1).
    pub min_replicas: u32,
    /// `max_replicas`: most replicas the controller starts.
    pub max_replicas: u32,
    /// `interval`: time between evaluations (default 15 s).
    pub interval: SimDuration,
    /// `warmup`: time from a replica's start to its first request (default 60 s).
    pub warmup: SimDuration,
    /// `scale_down_cooldown`: the scale-down stabilization window (default 300 s).
    pub scale_down_cooldown: SimDuration,
}

/// Events one evaluation of the controller schedules: the next evaluation (`AutoscaleTick`).
pub(crate) const EVENTS_PER_TICK: u32 = 1;

impl Autoscale {
    /// How long what happened stays in its state: a decision at the next `interval`, the
    /// replicas it starts serving after `warmup`, and scaling down only after
    /// `scale_down_cooldown`. A pilot run watches the regime after a fault at least this long
    /// ([`crate::guard::settling_time`]).
    pub fn memory(&self) -> SimDuration {
        self.interval + self.warmup + self.scale_down_cooldown
    }

    /// Most events this autoscaler schedules in a run whose arrivals end at `arrivals_end`: its
    /// evaluations (one each `interval` before the end of arrivals, [`EVENTS_PER_TICK`] each) and,
    /// with a `warmup`, the end of each replica's warm-up (`ReplicaReady`; an evaluation starts
    /// at most `max_replicas`). Summed by [`crate::guard::fixed_events`].
    pub fn events_scheduled(&self, arrivals_end: SimDuration) -> f64 {
        let ticks = arrivals_end.0.saturating_sub(1) / self.interval.0.max(1);
        let warmups = if self.warmup.0 > 0 {
            ticks.saturating_mul(self.max_replicas as u64)
        } else {
            0
        };
        ticks as f64 * EVENTS_PER_TICK as f64 + warmups as f64
    }
}

/// Checks `autoscale` at `key`; `most` is the largest replica count loadsim accepts.
pub(crate) fn validate(
    key: &str,
    raw: &AutoscaleRaw,
    most: u64,
    p: &mut impl Problems,
) -> Option<Autoscale> {
    let mut ok = true;
    let target = raw.target_utilization.unwrap_or(DEFAULT_TARGET_UTILIZATION);
    let percent = (target * 100.0).round();
    if !(target.is_finite() && target > 0.0 && target <= 1.0) {
        p.problem(
            &format!("{key}.target_utilization"),
            format!("is {target}; it must be in (0, 1], e.g. 0.7 for 70 %"),
        );
        ok = false;
    } else if (target * 100.0 - percent).abs() > 1e-9 || percent < 1.0 {
        p.problem(
            &format!("{key}.target_utilization"),
            format!(
                "is {target}; it must be a whole percent (0.01 steps, as Kubernetes' \
                 averageUtilization is an integer percentage), e.g. {}",
                (percent.max(1.0)) / 100.0
            ),
        );
        ok = false;
    }
    let min = raw.min_replicas.unwrap_or(DEFAULT_MIN_REPLICAS);
    if min == 0 {
        p.problem(
            &format!("{key}.min_replicas"),
            "must be at least 1 (scaling to zero is not modelled)".into(),
        );
        ok = false;
    }
    if raw.max_replicas == 0 {
        p.problem(&format!("{key}.max_replicas"), "must be at least 1".into());
        ok = false;
    } else if raw.max_replicas as u64 > most {
        p.problem(
            &format!("{key}.max_replicas"),
            format!("must be at most {most}"),
        );
        ok = false;
    } else if min > raw.max_replicas {
        p.problem(
            &format!("{key}.min_replicas"),
            format!(
                "is {min}, above `max_replicas` ({}); lower it or raise `max_replicas`",
                raw.max_replicas
            ),
        );
        ok = false;
    }
    let interval = super::positive(
        &format!("{key}.interval"),
        raw.interval.map_or(DEFAULT_INTERVAL, |d| d.0),
        p,
    )
    .and_then(|d| super::controller_interval(&format!("{key}.interval"), d, p));
    let interval = interval?;
    ok.then_some(Autoscale {
        target_percent: percent as u32,
        min_replicas: min,
        max_replicas: raw.max_replicas,
        interval,
        warmup: raw.warmup.map_or(DEFAULT_WARMUP, |d| d.0),
        scale_down_cooldown: raw
            .scale_down_cooldown
            .map_or(DEFAULT_SCALE_DOWN_COOLDOWN, |d| d.0),
    })
}

/// What the controller reads at one evaluation: each ready replica's mean busy slots over the
/// window in thousandths of a slot (Kubernetes reads milli-CPU), and how many replicas are still
/// warming up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reading {
    /// Σ over the ready replicas of their mean busy milli-slots.
    pub usage_milli: u64,
    /// Ready replicas with a reading.
    pub ready: u32,
    /// Replicas started but not ready yet (the HPA's "ignored" pods).
    pub warming: u32,
}

/// Utilization in whole percent, truncated, of `usage` over `pods` pods of `request` each
/// (`GetResourceUtilizationRatio`: `metricsTotal * 100 / requestsTotal` in integers).
fn utilization_percent(usage_milli: u64, pods: u32, request_milli: u64) -> u64 {
    (usage_milli as u128 * 100 / (pods as u128 * request_milli as u128)) as u64
}

/// The replica count the metric asks for (`GetResourceReplicas`), for `current` replicas
/// (started, not draining), a target of `target_percent`, and a request of `request_milli`
/// (the slots of one replica, in thousandths). `None` when no ready replica has a reading (the
/// controller then does not scale).
pub(crate) fn metric_replicas(
    current: u32,
    r: &Reading,
    request_milli: u64,
    target_percent: u32,
) -> Option<u32> {
    if r.ready == 0 {
        return None;
    }
    let target = target_percent as f64;
    let ratio = utilization_percent(r.usage_milli, r.ready, request_milli) as f64 / target;
    let rebalance = r.warming > 0 && ratio > 1.0;
    if !rebalance {
        if (1.0 - ratio).abs() <= TOLERANCE {
            return Some(current);
        }
        return Some((ratio * r.ready as f64).ceil() as u32);
    }
    // On a scale-up, replicas still warming up count as using nothing.
    let pods = r.ready + r.warming;
    let new_ratio = utilization_percent(r.usage_milli, pods, request_milli) as f64 / target;
    if (1.0 - new_ratio).abs() <= TOLERANCE || new_ratio < 1.0 {
        // Too small a change, or the direction would reverse (ratio > 1 here).
        return Some(current);
    }
    let n = (new_ratio * pods as f64).ceil() as u32;
    if n < current {
        return Some(current);
    }
    Some(n)
}

/// The controller's memory for one service: its recommendations and its scale events, each kept
/// so that an evaluation costs O(1) amortized however long the window (issue 30: a deque scanned
/// whole made `interval: 1us` quadratic).
#[derive(Clone, Debug)]
pub(crate) struct Hpa {
    spec: Autoscale,
    /// Whether the first evaluation happened (`recordInitialRecommendation`).
    started: bool,
    /// The recommendations (before stabilization) that can still be the highest of the
    /// scale-down window: a monotonic deque, times increasing and recommendations strictly
    /// decreasing from the front, so the front is the window's highest.
    recommendations: VecDeque<(SimTime, u32)>,
    /// Replicas added / removed by each rescale in the last policy period, with its time.
    ups: PeriodSum,
    downs: PeriodSum,
}

/// Scale events with their times and the running sum of those still kept.
#[derive(Clone, Debug, Default)]
struct PeriodSum {
    events: VecDeque<(SimTime, u32)>,
    sum: u32,
}

impl PeriodSum {
    fn push(&mut self, t: SimTime, n: u32) {
        self.events.push_back((t, n));
        self.sum += n;
    }

    /// The sum of the events after `cutoff` (ns, maybe negative), dropping the older ones.
    fn after(&mut self, cutoff: i128) -> u32 {
        while let Some(&(t, n)) = self.events.front() {
            if t.0 as i128 > cutoff {
                break;
            }
            self.events.pop_front();
            self.sum -= n;
        }
        self.sum
    }
}

impl Hpa {
    /// A controller that has not run yet.
    pub(crate) fn new(spec: Autoscale) -> Self {
        Hpa {
            spec,
            started: false,
            recommendations: VecDeque::new(),
            ups: PeriodSum::default(),
            downs: PeriodSum::default(),
        }
    }

    /// One evaluation at `now` with `current` replicas (started, not draining) and the metric's
    /// count `metric` (`None`: no reading). Returns the replica count to run.
    pub(crate) fn reconcile(&mut self, now: SimTime, current: u32, metric: Option<u32>) -> u32 {
        let a = self.spec;
        // recordInitialRecommendation: the first evaluation remembers the current count.
        if !self.started {
            self.started = true;
            self.recommendations.push_back((now, current));
        }
        let desired = if current > a.max_replicas {
            a.max_replicas
        } else if current < a.min_replicas {
            a.min_replicas
        } else {
            let Some(metric) = metric else {
                return current;
            };
            let stabilized = self.stabilize(now, current, metric);
            self.limit_rate(now, current, stabilized)
        };
        if desired > current {
            self.ups.push(now, desired - current);
        } else if desired < current {
            self.downs.push(now, current - desired);
        }
        desired
    }

    /// `stabilizeRecommendationWithBehaviors`: toward a scale-up the lowest recommendation of the
    /// scale-up window (0 s by default: none), toward a scale-down the highest of the last
    /// `scale_down_cooldown`; recommendations strictly inside the window count.
    /// The window's highest is the front of the monotonic deque once the recommendations at or
    /// before `now − window` are gone (evaluations come at increasing times, so one gone from
    /// this window is gone from every later one).
    fn stabilize(&mut self, now: SimTime, current: u32, desired: u32) -> u32 {
        let cutoff = now.0 as i128 - self.spec.scale_down_cooldown.0 as i128;
        while self
            .recommendations
            .front()
            .is_some_and(|&(t, _)| t.0 as i128 <= cutoff)
        {
            self.recommendations.pop_front();
        }
        let mut out = desired;
        if desired < current
            && let Some(&(_, highest)) = self.recommendations.front()
        {
            out = out.max(highest);
        }
        // A newer recommendation at least as high makes every older lower-or-equal one
        // irrelevant for every later window.
        while self
            .recommendations
            .back()
            .is_some_and(|&(_, r)| r <= desired)
        {
            self.recommendations.pop_back();
        }
        self.recommendations.push_back((now, desired));
        out
    }

    /// `convertDesiredReplicasWithBehaviorRate` with the default policies.
    fn limit_rate(&mut self, now: SimTime, current: u32, desired: u32) -> u32 {
        let a = self.spec;
        let cutoff = now.0 as i128 - POLICY_PERIOD.0 as i128;
        if desired > current {
            let start = current.saturating_sub(self.ups.after(cutoff));
            let pods = start + SCALE_UP_PODS;
            let percent = (start as f64 * (1.0 + SCALE_UP_PERCENT as f64 / 100.0)).ceil() as u32;
            let limit = pods.max(percent).max(current);
            desired.min(a.max_replicas.min(limit))
        } else if desired < current {
            let start = current + self.downs.after(cutoff);
            let limit =
                ((start as f64 * (1.0 - SCALE_DOWN_PERCENT as f64 / 100.0)) as u32).min(current);
            desired.max(a.min_replicas.max(limit))
        } else {
            desired
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        check(
            At::Service,
            &[
                (
                    "autoscale: {min_replicas: 5, max_replicas: 3}",
                    "autoscale.min_replicas",
                    "is 5, above `max_replicas` (3); lower it or raise `max_replicas`",
                ),
                (
                    "autoscale: {max_replicas: 3, target_utilization: 0}",
                    "autoscale.target_utilization",
                    "is 0; it must be in (0, 1], e.g. 0.7 for 70 %",
                ),
                (
                    "autoscale: {max_replicas: 3, target_utilization: 1.5}",
                    "autoscale.target_utilization",
                    "is 1.5; it must be in (0, 1], e.g. 0.7 for 70 %",
                ),
                (
                    "autoscale: {max_replicas: 3, target_utilization: 0.7051}",
                    "autoscale.target_utilization",
                    "is 0.7051; it must be a whole percent (0.01 steps, as Kubernetes' \
                     averageUtilization is an integer percentage), e.g. 0.71",
                ),
                (
                    "autoscale: {max_replicas: 3, interval: 0s}",
                    "autoscale.interval",
                    "must be longer than 0s",
                ),
                (
                    "autoscale: {max_replicas: 0}",
                    "autoscale.max_replicas",
                    "must be at least 1",
                ),
                (
                    "autoscale: {max_replicas: 3, min_replicas: 0}",
                    "autoscale.min_replicas",
                    "must be at least 1 (scaling to zero is not modelled)",
                ),
                (
                    "autoscale: {max_replicas: 20000}",
                    "autoscale.max_replicas",
                    "must be at most 10000",
                ),
            ],
        );
        accepted(
            At::Service,
            &[
                "autoscale: {max_replicas: 3}",
                "autoscale: {max_replicas: 1, target_utilization: 1}",
                "autoscale: {max_replicas: 4, min_replicas: 2, target_utilization: 0.35, interval: 30s, warmup: 0s, scale_down_cooldown: 0s}",
            ],
        );
    }

    fn spec(min: u32, max: u32) -> Autoscale {
        Autoscale {
            target_percent: 50,
            min_replicas: min,
            max_replicas: max,
            interval: DEFAULT_INTERVAL,
            warmup: DEFAULT_WARMUP,
            scale_down_cooldown: DEFAULT_SCALE_DOWN_COOLDOWN,
        }
    }

    const SEC: u64 = 1_000_000_000;

    fn at(s: u64) -> SimTime {
        SimTime(s * SEC)
    }

    /// Ready replicas of 1 slot (1000 milli) with a total usage.
    fn reading(usage_milli: u64, ready: u32, warming: u32) -> Reading {
        Reading {
            usage_milli,
            ready,
            warming,
        }
    }

    #[test]
    fn the_metric_rule_is_ceil_of_ratio_times_ready_outside_the_tolerance() {
        // 4 ready at 80 % against 50 %: ratio 1.6, ceil(6.4) = 7.
        assert_eq!(metric_replicas(4, &reading(3200, 4, 0), 1000, 50), Some(7));
        // 4 ready at 54 %: ratio 1.08 is within the tolerance (|1 − 1.08| ≤ 0.1): no change.
        assert_eq!(metric_replicas(4, &reading(2160, 4, 0), 1000, 50), Some(4));
        // 55 %: ratio 1.1 sits on the tolerance, but in binary floating point (as in the Go
        // source) |1.0 − 55/50| = 0.10000000000000009 > 0.1: ceil(4.4) = 5.
        assert_eq!(metric_replicas(4, &reading(2200, 4, 0), 1000, 50), Some(5));
        // 56 %: ratio 1.12, outside: ceil(4.48) = 5.
        assert_eq!(metric_replicas(4, &reading(2240, 4, 0), 1000, 50), Some(5));
        // 45 %: ratio 0.9, inside; 44 %: ratio 0.88, ceil(3.52) = 4 (no change by rounding up).
        assert_eq!(metric_replicas(4, &reading(1800, 4, 0), 1000, 50), Some(4));
        assert_eq!(metric_replicas(4, &reading(1760, 4, 0), 1000, 50), Some(4));
        // 20 %: ratio 0.4, ceil(1.6) = 2.
        assert_eq!(metric_replicas(4, &reading(800, 4, 0), 1000, 50), Some(2));
        // Idle: ceil(0) = 0 (the controller then clamps to min_replicas).
        assert_eq!(metric_replicas(4, &reading(0, 4, 0), 1000, 50), Some(0));
        // Utilization is truncated to a whole percent first: 54.9 % reads 54 %, inside.
        assert_eq!(metric_replicas(4, &reading(2196, 4, 0), 1000, 50), Some(4));
        // No ready replica: no reading, no decision.
        assert_eq!(metric_replicas(4, &reading(0, 0, 4), 1000, 50), None);
    }

    #[test]
    fn warming_replicas_count_as_idle_on_a_scale_up() {
        // 2 ready at 100 % (ratio 2), 2 warming: rebalanced over 4 pods, 50 %: ratio 1.0 is in
        // the tolerance, so no change (the warming pods will absorb it).
        assert_eq!(metric_replicas(4, &reading(2000, 2, 2), 1000, 50), Some(4));
        // 2 ready at 100 %, 1 warming: over 3 pods 66 % → ratio 1.32, ceil(3.96) = 4.
        assert_eq!(metric_replicas(3, &reading(2000, 2, 1), 1000, 50), Some(4));
        // 2 ready at 60 % (ratio 1.2), 2 warming: over 4 pods 30 %, ratio 0.6 < 1: the direction
        // would reverse, no change.
        assert_eq!(metric_replicas(4, &reading(1200, 2, 2), 1000, 50), Some(4));
        // On a scale-down warming replicas are simply left out: 2 ready at 10 % → ceil(0.4) = 1.
        assert_eq!(metric_replicas(4, &reading(200, 2, 2), 1000, 50), Some(1));
    }

    #[test]
    fn scale_up_is_limited_to_max_of_four_pods_and_double_per_15s() {
        let mut h = Hpa::new(spec(1, 100));
        // From 1: max(1 + 4, 2 × 1) = 5.
        assert_eq!(h.reconcile(at(15), 1, Some(40)), 5);
        // 15 s later the event at 15 s is not inside (15 s, 30 s]: from 5, max(9, 10) = 10.
        assert_eq!(h.reconcile(at(30), 5, Some(40)), 10);
        // 10 s later (period from 25 s holds the +5 of 30 s): start 10 − 5 = 5, limit 10: no
        // more this period.
        assert_eq!(h.reconcile(at(40), 10, Some(40)), 10);
        // From 10 at 45 s: max(14, 20) = 20; from 20 at 60 s: 40 > 40? desired 40 reached.
        assert_eq!(h.reconcile(at(45), 10, Some(40)), 20);
        assert_eq!(h.reconcile(at(60), 20, Some(40)), 40);
        // max_replicas caps it.
        let mut h = Hpa::new(spec(1, 6));
        assert_eq!(h.reconcile(at(15), 3, Some(40)), 6);
    }

    #[test]
    fn scale_down_takes_the_highest_recommendation_of_the_window() {
        let mut h = Hpa::new(spec(1, 20));
        // First evaluation records the current count (8) as a recommendation: 3 is held at 8.
        assert_eq!(h.reconcile(at(15), 8, Some(3)), 8);
        // Up to 10 at 30 s (within the limits).
        assert_eq!(h.reconcile(at(30), 8, Some(10)), 10);
        // A lower recommendation within 5 min of the 10 keeps 10.
        assert_eq!(h.reconcile(at(100), 10, Some(2)), 10);
        assert_eq!(h.reconcile(at(329), 10, Some(2)), 10);
        // At 330 s the 10 of 30 s is exactly 300 s old: out of the window (strictly after the
        // cutoff counts); the highest left is 2 (100 s, 329 s): scale down at once to 2.
        assert_eq!(h.reconcile(at(330), 10, Some(2)), 2);
        // min_replicas bounds a scale-down.
        let mut h = Hpa::new(Autoscale {
            scale_down_cooldown: SimDuration::ZERO,
            ..spec(3, 20)
        });
        assert_eq!(h.reconcile(at(15), 8, Some(0)), 3);
    }

    #[test]
    fn counts_outside_the_bounds_are_brought_in_without_a_reading() {
        let mut h = Hpa::new(spec(2, 5));
        assert_eq!(h.reconcile(at(15), 1, None), 2);
        assert_eq!(h.reconcile(at(30), 9, None), 5);
        // Inside the bounds, no reading: no change.
        assert_eq!(h.reconcile(at(45), 4, None), 4);
    }

    /// The controller as it was before issue 30 (every recommendation kept and scanned, every
    /// scale event summed at each evaluation): the reference the O(1) structures must match.
    struct Scanned {
        spec: Autoscale,
        recommendations: VecDeque<(SimTime, u32)>,
        ups: VecDeque<(SimTime, u32)>,
        downs: VecDeque<(SimTime, u32)>,
    }

    impl Scanned {
        fn reconcile(&mut self, now: SimTime, current: u32, metric: Option<u32>) -> u32 {
            let a = self.spec;
            if self.recommendations.is_empty() {
                self.recommendations.push_back((now, current));
            }
            let desired = if current > a.max_replicas {
                a.max_replicas
            } else if current < a.min_replicas {
                a.min_replicas
            } else {
                let Some(metric) = metric else {
                    return current;
                };
                let window = a.scale_down_cooldown;
                let mut out = metric;
                if metric < current {
                    let cutoff = now.0 as i128 - window.0 as i128;
                    for &(t, r) in &self.recommendations {
                        if t.0 as i128 > cutoff {
                            out = out.max(r);
                        }
                    }
                }
                while self
                    .recommendations
                    .front()
                    .is_some_and(|&(t, _)| (t.0 as i128) < now.0 as i128 - window.0 as i128)
                {
                    self.recommendations.pop_front();
                }
                self.recommendations.push_back((now, metric));
                let cutoff = now.0 as i128 - POLICY_PERIOD.0 as i128;
                let in_period = |events: &mut VecDeque<(SimTime, u32)>| -> u32 {
                    while events.front().is_some_and(|&(t, _)| t.0 as i128 <= cutoff) {
                        events.pop_front();
                    }
                    events.iter().map(|&(_, n)| n).sum()
                };
                let stabilized = out;
                if stabilized > current {
                    let start = current.saturating_sub(in_period(&mut self.ups));
                    let pods = start + SCALE_UP_PODS;
                    let percent =
                        (start as f64 * (1.0 + SCALE_UP_PERCENT as f64 / 100.0)).ceil() as u32;
                    stabilized.min(a.max_replicas.min(pods.max(percent).max(current)))
                } else if stabilized < current {
                    let start = current + in_period(&mut self.downs);
                    let limit = ((start as f64 * (1.0 - SCALE_DOWN_PERCENT as f64 / 100.0)) as u32)
                        .min(current);
                    stabilized.max(a.min_replicas.max(limit))
                } else {
                    stabilized
                }
            };
            if desired > current {
                self.ups.push_back((now, desired - current));
            } else if desired < current {
                self.downs.push_back((now, current - desired));
            }
            desired
        }
    }

    proptest::proptest! {
        /// Issue 30: the monotonic deque and the running sums decide exactly as the scans did,
        /// on random metric sequences, intervals and windows (ties of the window's edge included:
        /// the window is a multiple of the interval half the time).
        #[test]
        fn o1_controller_matches_the_scanning_one(
            interval_s in 1u64..40,
            window_s in proptest::prop_oneof![proptest::strategy::Just(0u64), 1u64..400],
            metrics in proptest::collection::vec(proptest::option::of(0u32..30), 1..200),
        ) {
            let spec = Autoscale {
                interval: SimDuration::from_secs(interval_s),
                scale_down_cooldown: SimDuration::from_secs(window_s),
                ..spec(1, 25)
            };
            let mut fast = Hpa::new(spec);
            let mut reference = Scanned {
                spec,
                recommendations: VecDeque::new(),
                ups: VecDeque::new(),
                downs: VecDeque::new(),
            };
            let mut current = 3;
            for (i, m) in metrics.iter().enumerate() {
                let now = at(interval_s * (i as u64 + 1));
                let a = fast.reconcile(now, current, *m);
                let b = reference.reconcile(now, current, *m);
                proptest::prop_assert_eq!(a, b, "evaluation {}", i);
                current = a;
            }
        }
    }
}
