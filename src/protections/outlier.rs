//! Outlier detection on one edge (`services.<caller>.calls.<callee>.outlier_detection`): Envoy's
//! passive health checking by consecutive failures, which ejects a replica of the callee from
//! this caller's balancer and returns it later. Owns the YAML form, its defaults and validation,
//! the per-replica ejection state machine (driven by attempt results and interval ticks), and its
//! bad snippets.
//!
//! The rules follow envoyproxy/envoy `api/envoy/config/cluster/v3/outlier_detection.proto` (names
//! and defaults: `consecutive_5xx` 5, `interval` 10 s, `base_ejection_time` 30 s,
//! `max_ejection_percent` 10, `max_ejection_time` 300 s or `base_ejection_time` if larger) and
//! `source/common/upstream/outlier_detection_impl.cc` (`putHttpResponseCode`, `ejectHost`,
//! `checkHostForUneject`, `unejectHost`, `onIntervalTimer`):
//! - every failed attempt result of a replica (error, reject, fatal error, or the caller's attempt
//!   timeout — Envoy maps a local timeout to 504, all 5xx) adds one to its consecutive-failure
//!   count, every success sets it to 0; when the count *equals* `consecutive_failures` and the
//!   replica is not already ejected, the detector tries to eject it and sets the count to 0
//!   whether or not the ejection was allowed;
//! - an ejection is allowed while `100 × (ejected + 1) / replicas ≤ max_ejection_percent`
//!   (a real-valued comparison, no rounding; with `autoscale`, `replicas` is the count serving
//!   at the caller's latest pick, as Envoy counts the hosts in the set now), and always when no replica is ejected (Envoy's
//!   `always_eject_one_host`, which the proto's text "will eject at least one host regardless of
//!   the value" promises: without it a fleet of fewer than 10 replicas at the default 10 % ejects
//!   nothing);
//! - an ejection increments the replica's ejection count and its backoff `b` (only while
//!   `b × base < max + base`), and lasts `min(base × b, max)`;
//! - the interval timer ticks every `interval` from the start of the run; at each tick an ejected
//!   replica whose time is up returns (its consecutive count reset), and then every replica not
//!   ejected, whose last return is at least `interval` old, has its backoff decremented (not
//!   below 0). So a replica ejected again soon after it returned stays out longer each time.
//!
//! Not modelled: Envoy's success-rate and failure-percentage detectors (off for fewer than 5
//! hosts by their `*_minimum_hosts` defaults), `enforcing_*` below 100, ejection-time jitter
//! (default 0), and the cluster's panic routing (`healthy_panic_threshold`): an ejected replica
//! gets nothing from this caller, unless every replica is ejected (possible only with
//! `max_ejection_percent: 100`), when the caller balances over all of them. Ticks are computed
//! lazily: before the detector reads or changes its state at time `t`, it runs every tick at or
//! before `t`, so a tick at the same instant as an event runs first. With `autoscale`, a replica
//! scaled in while ejected stays ejected, and counted, until its time is up (Envoy drops the
//! host's monitor with the host).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{DurationText, Problems, positive};
use crate::ix::ReplicaIx;
use crate::time::{SimDuration, SimTime};

/// Default failures in a row that eject a replica (Envoy's `consecutive_5xx`).
pub(crate) const DEFAULT_CONSECUTIVE_FAILURES: u32 = 5;
/// Default time between ejection sweeps.
pub(crate) const DEFAULT_INTERVAL: SimDuration = SimDuration::from_secs(10);
/// Default base ejection time.
pub(crate) const DEFAULT_BASE_EJECTION_TIME: SimDuration = SimDuration::from_secs(30);
/// Default share of the replicas that may be ejected at once, in percent.
pub(crate) const DEFAULT_MAX_EJECTION_PERCENT: u32 = 10;
/// Shortest `interval` (Envoy's unit: a millisecond).
pub(crate) const MIN_INTERVAL: SimDuration = super::MIN_CONTROLLER_INTERVAL;
/// Default cap of the ejection time (or `base_ejection_time`, if larger).
pub(crate) const DEFAULT_MAX_EJECTION_TIME: SimDuration = SimDuration::from_secs(300);

/// Envoy's passive outlier detection by consecutive failures.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlierDetectionRaw {
    /// Failed attempts in a row (errors, rejects, timeouts) that eject a replica (Envoy's
    /// `consecutive_5xx`).
    #[schemars(extend("default" = DEFAULT_CONSECUTIVE_FAILURES))]
    pub consecutive_failures: Option<u32>,
    /// Time between sweeps that return ejected replicas and decay ejection backoffs.
    #[schemars(extend("default" = DEFAULT_INTERVAL.to_string()))]
    pub interval: Option<DurationText>,
    /// An ejection lasts this times the replica's ejection backoff.
    #[schemars(extend("default" = DEFAULT_BASE_EJECTION_TIME.to_string()))]
    pub base_ejection_time: Option<DurationText>,
    /// Most replicas ejected at once, in percent of the callee's replicas (0 to 100); one
    /// replica may always be ejected.
    #[schemars(extend("default" = DEFAULT_MAX_EJECTION_PERCENT))]
    pub max_ejection_percent: Option<u32>,
    /// Longest ejection (default 300 s, or `base_ejection_time` if larger).
    pub max_ejection_time: Option<DurationText>,
}

/// Validated outlier detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutlierDetection {
    /// `consecutive_failures`: failed attempts in a row that eject a replica (default 5).
    pub consecutive_failures: u32,
    /// `interval`: time between ejection sweeps (default 10 s).
    pub interval: SimDuration,
    /// `base_ejection_time`: an ejection lasts this times the replica's ejection backoff
    /// (default 30 s).
    pub base_ejection_time: SimDuration,
    /// `max_ejection_percent`: most replicas ejected at once, in percent (default 10; one may
    /// always be).
    pub max_ejection_percent: u32,
    /// `max_ejection_time`: longest ejection (default 300 s, or `base_ejection_time` if larger).
    pub max_ejection_time: SimDuration,
}

impl OutlierDetection {
    /// How long what happened stays in its state: an ejection lasts up to `max_ejection_time`,
    /// found at an `interval` tick. A pilot run watches the regime after a fault at least this
    /// long ([`crate::guard::settling_time`]).
    pub fn memory(&self) -> SimDuration {
        self.max_ejection_time + self.interval
    }
}

/// Checks `outlier_detection` at `key`.
pub(crate) fn validate(
    key: &str,
    raw: &OutlierDetectionRaw,
    p: &mut impl Problems,
) -> Option<OutlierDetection> {
    let consecutive_failures = raw
        .consecutive_failures
        .unwrap_or(DEFAULT_CONSECUTIVE_FAILURES);
    let mut ok = true;
    if consecutive_failures == 0 {
        p.problem(
            &format!("{key}.consecutive_failures"),
            "must be at least 1; remove `outlier_detection` to never eject".into(),
        );
        ok = false;
    }
    let interval = positive(
        &format!("{key}.interval"),
        raw.interval.map_or(DEFAULT_INTERVAL, |d| d.0),
        p,
    )
    .and_then(|d| {
        // Envoy counts the interval in milliseconds; a finer one would only add sweeps.
        if d < MIN_INTERVAL {
            p.problem(
                &format!("{key}.interval"),
                format!("is {d}; it must be at least {MIN_INTERVAL} (Envoy counts it in ms)"),
            );
            return None;
        }
        Some(d)
    });
    let base = positive(
        &format!("{key}.base_ejection_time"),
        raw.base_ejection_time
            .map_or(DEFAULT_BASE_EJECTION_TIME, |d| d.0),
        p,
    );
    let max_ejection_percent = raw
        .max_ejection_percent
        .unwrap_or(DEFAULT_MAX_EJECTION_PERCENT);
    if max_ejection_percent > 100 {
        p.problem(
            &format!("{key}.max_ejection_percent"),
            format!("is {max_ejection_percent}; a percentage must be between 0 and 100"),
        );
        ok = false;
    }
    let max = match raw.max_ejection_time {
        Some(d) => positive(&format!("{key}.max_ejection_time"), d.0, p),
        None => base.map(|b| b.max(DEFAULT_MAX_EJECTION_TIME)),
    };
    let (interval, base_ejection_time, max_ejection_time) = (interval?, base?, max?);
    if max_ejection_time < base_ejection_time {
        p.problem(
            &format!("{key}.max_ejection_time"),
            format!(
                "is {max_ejection_time}, shorter than `base_ejection_time` \
                 ({base_ejection_time}); Envoy refuses this: make it at least the base"
            ),
        );
        return None;
    }
    ok.then_some(OutlierDetection {
        consecutive_failures,
        interval,
        base_ejection_time,
        max_ejection_percent,
        max_ejection_time,
    })
}

/// One replica's detector state (Envoy's `DetectorHostMonitorImpl`).
#[derive(Clone, Copy, Debug, Default)]
struct Host {
    consecutive: u32,
    ejected: bool,
    /// Envoy's `eject_time_backoff_`: the multiplier of `base_ejection_time`.
    backoff: u32,
    last_ejection: SimTime,
    last_unejection: Option<SimTime>,
    /// Times ejected.
    ejections: u64,
    /// Time ejected, over the ejections that ended.
    ejected_ns: u64,
}

/// The outlier detector of one caller toward one replicated callee.
#[derive(Clone, Debug)]
pub(crate) struct Detector {
    p: OutlierDetection,
    hosts: Vec<Host>,
    /// Replicas ejected now.
    active: u32,
    next_tick: SimTime,
    /// Per replica, whether it is ejected (what the balancer reads).
    ejected: Vec<bool>,
    /// The callee's replicas present now (its serving replicas when autoscaled): the
    /// denominator of `max_ejection_percent`, as Envoy's count of host monitors.
    present: u32,
}

impl Detector {
    /// A detector over `replicas` replicas, none ejected; the first tick is at `interval`.
    pub(crate) fn new(p: OutlierDetection, replicas: u32) -> Self {
        Detector {
            p,
            hosts: vec![Host::default(); replicas as usize],
            active: 0,
            next_tick: SimTime::ZERO + p.interval,
            ejected: vec![false; replicas as usize],
            present: replicas,
        }
    }

    /// Runs every interval tick at or before `now`.
    #[inline]
    pub(crate) fn advance(&mut self, now: SimTime) {
        while self.next_tick <= now {
            let at = self.next_tick;
            self.tick(at);
            self.next_tick = at + self.p.interval;
        }
    }

    /// The callee now has `n` replicas present (an autoscaler's serving replicas).
    #[inline]
    pub(crate) fn set_present(&mut self, n: u32) {
        self.present = n;
    }

    /// Whether any replica is ejected now (call [`Detector::advance`] first).
    #[inline]
    pub(crate) fn any_ejected(&self) -> bool {
        self.active > 0
    }

    /// Per replica, whether it is ejected.
    pub(crate) fn ejected(&self) -> &[bool] {
        &self.ejected
    }

    /// An attempt to replica `r` ended at `now`: success (`ok`) or a failure (error, reject,
    /// timeout).
    pub(crate) fn on_result(&mut self, now: SimTime, r: ReplicaIx, ok: bool) {
        self.advance(now);
        let h = &mut self.hosts[r.index()];
        if ok {
            h.consecutive = 0;
            return;
        }
        h.consecutive = h.consecutive.saturating_add(1);
        if h.consecutive == self.p.consecutive_failures && !h.ejected {
            self.try_eject(r.index(), now);
            self.hosts[r.index()].consecutive = 0;
        }
    }

    /// Envoy's `ejectHost`: eject unless over `max_ejection_percent` (one may always go).
    fn try_eject(&mut self, r: usize, now: SimTime) {
        let n = self.present as f64;
        let percent = 100.0 * (self.active + 1) as f64 / n;
        if !(self.active == 0 || percent <= self.p.max_ejection_percent as f64) {
            return;
        }
        self.active += 1;
        self.ejected[r] = true;
        let (base, max) = (self.p.base_ejection_time.0, self.p.max_ejection_time.0);
        let h = &mut self.hosts[r];
        h.ejected = true;
        h.ejections += 1;
        h.last_ejection = now;
        if (h.backoff as u64).saturating_mul(base) < max + base {
            h.backoff += 1;
        }
    }

    /// How long replica `r`'s current ejection lasts.
    fn ejection_time(&self, r: usize) -> u64 {
        (self.p.base_ejection_time.0)
            .saturating_mul(self.hosts[r].backoff as u64)
            .min(self.p.max_ejection_time.0)
    }

    /// Envoy's `onIntervalTimer`: return the replicas whose time is up, then decay the backoff of
    /// those healthy for at least an interval.
    fn tick(&mut self, at: SimTime) {
        for r in 0..self.hosts.len() {
            let h = self.hosts[r];
            if h.ejected && self.ejection_time(r) <= at.0 - h.last_ejection.0 {
                let h = &mut self.hosts[r];
                h.ejected = false;
                h.consecutive = 0;
                h.last_unejection = Some(at);
                h.ejected_ns += at.0 - h.last_ejection.0;
                self.ejected[r] = false;
                self.active -= 1;
            }
        }
        let interval = self.p.interval.0;
        for h in &mut self.hosts {
            if !h.ejected
                && h.last_unejection.is_some_and(|u| at.0 - u.0 >= interval)
                && h.backoff > 0
            {
                h.backoff -= 1;
            }
        }
    }

    /// Times replica `r` was ejected.
    pub(crate) fn ejections(&self, r: ReplicaIx) -> u64 {
        self.hosts[r.index()].ejections
    }

    /// Time replica `r` spent ejected until `end`, for a detector advanced to `end`.
    pub(crate) fn ejected_time(&self, r: ReplicaIx, end: SimTime) -> SimDuration {
        let h = &self.hosts[r.index()];
        let open = if h.ejected {
            end.0 - h.last_ejection.0
        } else {
            0
        };
        SimDuration(h.ejected_ns + open)
    }

    /// Replica `r`'s ejection backoff (Envoy's `eject_time_backoff_`).
    #[cfg(test)]
    fn backoff(&self, r: u32) -> u32 {
        self.hosts[r as usize].backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests name replicas by number: the detector's typed calls, numbered.
    trait Numbered {
        fn result(&mut self, now: SimTime, r: u32, ok: bool);
        fn ejections_of(&self, r: u32) -> u64;
        fn ejected_time_of(&self, r: u32, end: SimTime) -> SimDuration;
    }

    impl Numbered for Detector {
        fn result(&mut self, now: SimTime, r: u32, ok: bool) {
            self.on_result(now, ReplicaIx::new(r as usize), ok);
        }
        fn ejections_of(&self, r: u32) -> u64 {
            self.ejections(ReplicaIx::new(r as usize))
        }
        fn ejected_time_of(&self, r: u32, end: SimTime) -> SimDuration {
            self.ejected_time(ReplicaIx::new(r as usize), end)
        }
    }
    use crate::protections::bad_snippets::{At, accepted, check};

    fn secs(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    fn detector(replicas: u32, max_ejection_percent: u32) -> Detector {
        Detector::new(
            OutlierDetection {
                consecutive_failures: 3,
                interval: SimDuration::from_secs(10),
                base_ejection_time: SimDuration::from_secs(30),
                max_ejection_percent,
                max_ejection_time: SimDuration::from_secs(300),
            },
            replicas,
        )
    }

    fn fail(d: &mut Detector, at: SimTime, r: u32, n: u32) {
        for _ in 0..n {
            d.result(at, r, false);
        }
    }

    #[test]
    fn the_percentage_counts_the_replicas_present_now() {
        // 4 replicas at 50 %: two may go; with 2 present (an autoscaler scaled in), only one.
        let mut d = detector(4, 50);
        d.set_present(2);
        fail(&mut d, secs(1), 0, 3);
        fail(&mut d, secs(1), 1, 3);
        assert_eq!(d.ejected(), [true, false, false, false]);
        d.set_present(4);
        fail(&mut d, secs(1), 1, 3);
        assert_eq!(d.ejected(), [true, true, false, false]);
    }

    #[test]
    fn the_nth_failure_in_a_row_ejects_and_a_success_resets_the_run() {
        let mut d = detector(3, 10);
        fail(&mut d, secs(1), 0, 2);
        d.result(secs(1), 0, true);
        fail(&mut d, secs(1), 0, 2);
        assert!(!d.any_ejected(), "a success between resets the count");
        fail(&mut d, secs(2), 0, 1);
        assert_eq!(d.ejected(), [true, false, false]);
        assert_eq!((d.ejections_of(0), d.backoff(0)), (1, 1));
        // Results still arriving from the ejected replica do not eject it again.
        fail(&mut d, secs(3), 0, 7);
        assert_eq!(d.ejections_of(0), 1);
    }

    #[test]
    fn one_replica_may_always_go_and_the_percentage_is_not_rounded() {
        // 3 replicas at 10 %: the first ejection is allowed (always one), the second would be
        // 66.7 % > 10 %: refused, and that replica's count restarts from 0.
        let mut d = detector(3, 10);
        fail(&mut d, secs(1), 0, 3);
        fail(&mut d, secs(1), 1, 3);
        assert_eq!(d.ejected(), [true, false, false]);
        fail(&mut d, secs(1), 1, 2);
        assert_eq!(
            d.ejected(),
            [true, false, false],
            "count restarted after the refusal"
        );
        // 3 replicas at 66 %: 2/3 = 66.67 % > 66 % is refused; at 67 % it is allowed.
        let mut d = detector(3, 66);
        fail(&mut d, secs(1), 0, 3);
        fail(&mut d, secs(1), 1, 3);
        assert_eq!(d.ejected(), [true, false, false]);
        let mut d = detector(3, 67);
        fail(&mut d, secs(1), 0, 3);
        fail(&mut d, secs(1), 1, 3);
        assert_eq!(d.ejected(), [true, true, false]);
        // 4 replicas at 50 %: exactly 50 % is allowed (≤), the third is not.
        let mut d = detector(4, 50);
        for r in 0..3 {
            fail(&mut d, secs(1), r, 3);
        }
        assert_eq!(d.ejected(), [true, true, false, false]);
        // 0 % still ejects one.
        let mut d = detector(4, 0);
        fail(&mut d, secs(1), 2, 3);
        fail(&mut d, secs(1), 3, 3);
        assert_eq!(d.ejected(), [false, false, true, false]);
    }

    #[test]
    fn an_ejection_ends_at_the_first_tick_after_base_times_backoff() {
        // Ejected at 12 s for 30 s: ticks at 20, 30, 40 see 8, 18, 28 s; the tick at 50 s sees
        // 38 s >= 30 s and returns it.
        let mut d = detector(3, 10);
        fail(&mut d, secs(12), 0, 3);
        d.advance(secs(49));
        assert!(d.any_ejected());
        d.advance(secs(50));
        assert!(!d.any_ejected());
        assert_eq!(d.ejected_time_of(0, secs(50)), SimDuration::from_secs(38));
        // Ejected again at 55 s, before the tick at 60 s could decay the backoff (the return at
        // 50 s is not an interval old yet): backoff 2, out for 60 s, back at the tick at 120 s
        // (65 s >= 60 s; at 110 s, 55 s is not enough).
        fail(&mut d, secs(55), 0, 3);
        assert_eq!(d.backoff(0), 2);
        d.advance(secs(119));
        assert!(d.any_ejected());
        d.advance(secs(120));
        assert!(!d.any_ejected());
        assert_eq!(
            d.ejected_time_of(0, secs(120)),
            SimDuration::from_secs(38 + 65)
        );
        // Had it failed at 60 s, the tick at 60 s would have decayed the backoff to 0 first.
        let mut d = detector(3, 10);
        fail(&mut d, secs(12), 0, 3);
        fail(&mut d, secs(60), 0, 3);
        assert_eq!(d.backoff(0), 1);
    }

    #[test]
    fn the_backoff_decays_once_per_tick_while_healthy_and_is_capped() {
        let mut d = detector(3, 10);
        fail(&mut d, secs(5), 1, 3); // backoff 1, out until the tick at 40 s (35 s >= 30 s)
        d.advance(secs(40));
        assert_eq!((d.ejected(), d.backoff(1)), ([false; 3].as_slice(), 1));
        // At 50 s the return is 10 s old (>= interval): decay to 0.
        d.advance(secs(50));
        assert_eq!(d.backoff(1), 0);
        // Cap: backoff grows while b·30 < 300 + 30, so up to 11; the ejection time is capped at
        // 300 s from b = 10.
        let mut d = detector(3, 10);
        let mut t = 1;
        for _ in 0..14 {
            fail(&mut d, secs(t), 2, 3);
            // Stay ejected until returned, then fail again at once (no decay: the return is not
            // an interval old at the next failure).
            let out = d.ejection_time(2) / 1_000_000_000;
            t = (t + out).div_ceil(10) * 10;
            d.advance(secs(t));
            assert!(!d.any_ejected(), "returned by {t}");
        }
        assert_eq!((d.backoff(2), d.ejections_of(2)), (11, 14));
        assert_eq!(d.ejection_time(2), 300_000_000_000);
    }

    #[test]
    fn every_replica_can_be_ejected_at_100_percent() {
        let mut d = detector(2, 100);
        fail(&mut d, secs(1), 0, 3);
        fail(&mut d, secs(1), 1, 3);
        assert_eq!(d.ejected(), [true, true]);
        d.advance(secs(11));
        assert_eq!(d.ejected_time_of(1, secs(11)), SimDuration::from_secs(10));
    }

    #[test]
    fn bad_snippets() {
        let od = |body: &str| format!("outlier_detection: {{{body}}}");
        check(
            At::Edge,
            &[
                (
                    &od("max_ejection_percent: 101"),
                    "outlier_detection.max_ejection_percent",
                    "is 101; a percentage must be between 0 and 100",
                ),
                (
                    &od("consecutive_failures: 0"),
                    "outlier_detection.consecutive_failures",
                    "must be at least 1; remove `outlier_detection` to never eject",
                ),
                (
                    &od("interval: 0s"),
                    "outlier_detection.interval",
                    "must be longer than 0s",
                ),
                (
                    &od("interval: 500us"),
                    "outlier_detection.interval",
                    "is 500us; it must be at least 1ms (Envoy counts it in ms)",
                ),
                (
                    &od("base_ejection_time: 0s"),
                    "outlier_detection.base_ejection_time",
                    "must be longer than 0s",
                ),
                (
                    &od("base_ejection_time: 40s, max_ejection_time: 30s"),
                    "outlier_detection.max_ejection_time",
                    "is 30s, shorter than `base_ejection_time` (40s); Envoy refuses this: make it \
                     at least the base",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "outlier_detection: {}",
                "outlier_detection: {consecutive_failures: 3, interval: 1s, \
                 base_ejection_time: 5s, max_ejection_percent: 0, max_ejection_time: 20s}",
                // A base above the default cap raises the cap to the base.
                "outlier_detection: {base_ejection_time: 400s}",
            ],
        );
    }
}
