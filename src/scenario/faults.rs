//! The fault kinds: what each does, stated once. The simulation (`model::faults`), the linter
//! (`analysis::lint`) and the guard's event bound (`guard`) all ask this module what a fault
//! means, never the enum's fields directly:
//!
//! | kind | keys | effect while in force |
//! |---|---|---|
//! | `slow` | `service`, `service_time` or `slowdown`, optional `fraction` | the service's own work, when it starts, follows `service_time`, or with `slowdown: K` the service's own distribution with every draw × K ([`FaultKind::service_time_of`]); with `fraction`, only that share of the work started in the window, drawn from the fault's stream `fault/<name>/slow` |
//! | `error` | `service`, `fraction`, optional `retryable_fraction` | that share of the service's arrivals fail at once ([`FaultKind::error_fraction_of`]); `retryable_fraction` of those errors may be retried ([`FaultKind::retryable_fraction_of`]) |
//! | `outage` | `service` | every arrival at the service is rejected ([`FaultKind::rejects_all_of`]) |
//! | `capacity` | `service`, `slots` | the service has at most `slots` slots ([`FaultKind::slots_of`]); work already started goes on, and the end of the window wakes the queue ([`FaultKind::wakes_at_end`]) |
//! | `surge` | `factor` | user arrivals come `factor` times faster ([`FaultKind::rate_factor`], [`RatePlan`]) |
//!
//! Every fault on a service takes `replicas: [0, 2]` (default all): it acts only on those replicas
//! ([`Fault::acts_on_replica`]).
//!
//! Overlapping faults compose: the last-listed slow fault wins, error fractions apply one after
//! another, capacities take the smallest, surge factors multiply — but only where the windows
//! overlap in time ([`RatePlan`] integrates the rate over time).

#[cfg(test)]
use super::Scenario;
use super::raw::FaultKindRaw;
use super::{Dist, ReplicaIx, ServiceIx};
use crate::time::SimTime;

/// A fault in force during `[from, to)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// How reports and diagnostics name the fault.
    pub name: String,
    /// When it starts (included).
    pub from: SimTime,
    /// When it ends (excluded).
    pub to: SimTime,
    /// What it does, and to which service.
    pub kind: FaultKind,
    /// The replicas of the service it acts on (`None`: all).
    pub replicas: Option<Vec<u32>>,
}

impl Fault {
    /// Whether the fault acts on replica `r` of its service.
    pub fn acts_on_replica(&self, r: ReplicaIx) -> bool {
        self.replicas
            .as_ref()
            .is_none_or(|rs| rs.iter().any(|&x| x as usize == r.index()))
    }
}

/// What a fault does.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// The service's own work follows `service_time` instead of its normal distribution.
    /// With `fraction` below 1, only that share of the work started in the window is slow.
    Slow {
        /// The service whose work is slow.
        service: ServiceIx,
        /// The distribution of its work while the fault holds.
        service_time: Dist,
        /// Share in [0, 1] of the work started in the window that is slow (1: all).
        fraction: f64,
    },
    /// A share of the service's arrivals fail at once (reply `error` after its reject delay);
    /// `retryable` of those errors may be retried, the rest are non-retryable.
    Error {
        /// The service whose arrivals fail.
        service: ServiceIx,
        /// Share in [0, 1] of its arrivals that fail.
        fraction: f64,
        /// Share in [0, 1] of those errors a caller may retry.
        retryable: f64,
    },
    /// Every arrival at the service is rejected.
    Outage {
        /// The service that rejects.
        service: ServiceIx,
    },
    /// The service has only `slots` slots (work already started goes on).
    Capacity {
        /// The service whose slots shrink.
        service: ServiceIx,
        /// The slots in force while the fault holds.
        slots: u32,
    },
    /// User arrivals come `factor` times faster.
    Surge {
        /// Multiplies the user arrival rate (2: twice as many).
        factor: f64,
    },
}

/// The keys a fault of `kind` takes besides `kind` and its window (`from`, `to`, `duration`).
pub fn keys(kind: FaultKindRaw) -> &'static [&'static str] {
    match kind {
        FaultKindRaw::Slow => &["service"],
        FaultKindRaw::Error => &["service", "fraction"],
        FaultKindRaw::Outage => &["service"],
        FaultKindRaw::Capacity => &["service", "slots"],
        FaultKindRaw::Surge => &["factor"],
    }
}

impl FaultKind {
    /// The service the fault acts on (`None` for faults on arrivals).
    pub fn service(&self) -> Option<ServiceIx> {
        match self {
            FaultKind::Slow { service, .. }
            | FaultKind::Error { service, .. }
            | FaultKind::Outage { service }
            | FaultKind::Capacity { service, .. } => Some(*service),
            FaultKind::Surge { .. } => None,
        }
    }

    /// The distribution of `s`'s own work while the fault is in force, if it changes it.
    pub fn service_time_of(&self, s: ServiceIx) -> Option<&Dist> {
        match self {
            FaultKind::Slow {
                service,
                service_time,
                ..
            } if *service == s => Some(service_time),
            _ => None,
        }
    }

    /// The share of `s`'s work started in the window that a slow fault makes slow (1: all).
    pub fn slow_fraction(&self) -> f64 {
        match *self {
            FaultKind::Slow { fraction, .. } => fraction,
            _ => 1.0,
        }
    }

    /// The share of `s`'s arrivals the fault fails at once, if it does.
    pub fn error_fraction_of(&self, s: ServiceIx) -> Option<f64> {
        match *self {
            FaultKind::Error {
                service, fraction, ..
            } if service == s => Some(fraction),
            _ => None,
        }
    }

    /// The share of the fault's errors at `s` that callers may retry, if it fails arrivals there.
    pub fn retryable_fraction_of(&self, s: ServiceIx) -> Option<f64> {
        match *self {
            FaultKind::Error {
                service, retryable, ..
            } if service == s => Some(retryable),
            _ => None,
        }
    }

    /// Whether the fault rejects every arrival at `s`.
    pub fn rejects_all_of(&self, s: ServiceIx) -> bool {
        matches!(*self, FaultKind::Outage { service } if service == s)
    }

    /// The most slots `s` has while the fault is in force, if the fault limits them.
    pub fn slot_limit_of(&self, s: ServiceIx) -> Option<u32> {
        match *self {
            FaultKind::Capacity { service, slots } if service == s => Some(slots),
            _ => None,
        }
    }

    /// The slots of `s` while the fault is in force, when `s` otherwise has `slots` (capacities
    /// of overlapping faults take the smallest).
    pub fn slots_of(&self, s: ServiceIx, slots: u32) -> u32 {
        self.slot_limit_of(s)
            .map_or(slots, |limit| capacity_slots(slots, limit))
    }

    /// The factor on the user arrival rate while the fault is in force (1 for faults on services).
    pub fn rate_factor(&self) -> f64 {
        match *self {
            FaultKind::Surge { factor } => factor,
            _ => 1.0,
        }
    }

    /// The service whose slots come back when the fault ends (a capacity fault): its queue must
    /// be served at that instant, which costs the run one event.
    pub fn wakes_at_end(&self) -> Option<ServiceIx> {
        match *self {
            FaultKind::Capacity { service, .. } => Some(service),
            _ => None,
        }
    }

    /// Events a fault of this kind schedules in a run: one at its end when that wakes a service
    /// (`CapacityRestored`, [`FaultKind::wakes_at_end`]), none otherwise (the others take effect
    /// at the events that meet them). Summed by [`crate::guard::fixed_events`].
    pub fn events_scheduled(&self) -> u32 {
        u32::from(self.wakes_at_end().is_some())
    }
}

/// Slots in force under a capacity fault of `reduced` slots on a service that has `slots`.
#[inline]
pub fn capacity_slots(slots: u32, reduced: u32) -> u32 {
    slots.min(reduced)
}

/// Faults for tests.
#[cfg(test)]
pub(crate) mod test_support {
    /// Issue 18's case: nine one-minute surges of ×2 … ×10 from 0 s, one after another, as the
    /// entries of a `faults:` map.
    pub(crate) fn one_minute_surge_steps() -> String {
        (0..9)
            .map(|i| {
                format!(
                    "  s{i}: {{kind: surge, factor: {}, from: {}s, duration: 60s}}\n",
                    i + 2,
                    60 * i
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Document;
    use crate::scenario::rate::RatePlan;
    use std::path::Path;

    fn scenario(faults: &str) -> Scenario {
        let text = format!(
            "duration: 600s\narrivals: {{rate: 100}}\nclient: {{entry: a, attempt_timeout: 1s}}\n\
             services:\n  a: {{slots: 4, service_time: {{dist: constant, value: 1ms}}}}\n\
             faults:\n{faults}"
        );
        let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
        Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn bad_snippets() {
        use crate::protections::bad_snippets::{At, check};
        check(
            At::Faults,
            &[
                (
                    "f: {kind: outage, service: b, from: 1s}",
                    "f",
                    "needs an end: `to` (an instant) or `duration` (a length)",
                ),
                (
                    "f: {kind: outage, service: b, from: 1s, to: 2s, duration: 1s}",
                    "f.duration",
                    "give either `to` or `duration`, not both",
                ),
                (
                    "f: {kind: outage, service: b, from: 2s, to: 1s}",
                    "f.to",
                    "must be after `from` (2s)",
                ),
                (
                    "f: {kind: outage, service: b, from: 9s, duration: 2s}",
                    "f.duration",
                    "the window [9s, 11s) lies outside the arrival period [0s, 10s)",
                ),
                (
                    "f: {kind: surge, service: b, factor: 2, from: 1s, duration: 1s}",
                    "f.service",
                    "is not a key of a `surge` fault (it takes `factor`)",
                ),
                (
                    "f: {kind: slow, service: b, from: 1s, duration: 1s}",
                    "f",
                    "a `slow` fault needs `service_time` (the distribution in the window) or `slowdown` (a multiple of the service's own, like `slowdown: 5`)",
                ),
                (
                    "f: {kind: error, service: b, fraction: 1.5, from: 1s, duration: 1s}",
                    "f.fraction",
                    "must be a share in [0, 1]",
                ),
                (
                    "f: {kind: surge, factor: 0, from: 1s, duration: 1s}",
                    "f.factor",
                    "must be a number in (0, 1000]",
                ),
                (
                    "f: {kind: outage, service: b, replicas: [1], from: 1s, duration: 1s}",
                    "f.replicas",
                    "names replica 1, but the service has 1 (replicas are numbered from 0 to 0)",
                ),
                (
                    "f: {kind: outage, service: b, replicas: [], from: 1s, duration: 1s}",
                    "f.replicas",
                    "must name at least one replica; remove it for all replicas",
                ),
                (
                    "f: {kind: surge, factor: 2, replicas: [0], from: 1s, duration: 1s}",
                    "f.replicas",
                    "is not a key of a `surge` fault (it acts on no service)",
                ),
                (
                    "f: {kind: slow, service: b, fraction: 0, from: 1s, duration: 1s, \
                     service_time: {dist: constant, value: 1s}}",
                    "f.fraction",
                    "must be a share in (0, 1]",
                ),
                (
                    "f: {kind: outage, service: b, fraction: 0.5, from: 1s, duration: 1s}",
                    "f.fraction",
                    "is not a key of a `outage` fault (it takes `service`)",
                ),
            ],
        );
        crate::protections::bad_snippets::accepted(
            At::Faults,
            &[
                "f: {kind: outage, service: b, replicas: [0], from: 1s, duration: 1s}",
                "f: {kind: slow, service: b, fraction: 0.5, from: 1s, duration: 1s, \
                 service_time: {dist: constant, value: 1s}}",
            ],
        );
    }

    #[test]
    fn disjoint_surges_do_not_multiply() {
        // Nine one-minute steps of ×2 … ×10, one after another: never more than one in force.
        let sc = scenario(&test_support::one_minute_surge_steps());
        let plan = RatePlan::new(&sc.classes[0].arrivals, &sc.faults);
        // 60 s at each of 200 … 1000/s, then 60 s at 100/s: 60 × (2 + … + 10) × 100 + 6000.
        let want = 60.0 * 54.0 * 100.0 + 60.0 * 100.0;
        assert!((plan.expected_arrivals(sc.duration) - want).abs() < 1e-6);
        assert_eq!(plan.rate_at(SimTime::ZERO), 200.0);
        assert_eq!(plan.rate_at(SimTime(540 * 1_000_000_000)), 100.0);
    }

    #[test]
    fn overlapping_surges_multiply_only_while_both_are_in_force() {
        // ×2 over [10 s, 30 s), ×3 over [20 s, 40 s): 10 s at 200, 10 s at 600, 10 s at 300.
        let sc = scenario(
            "  a: {kind: surge, factor: 2, from: 10s, to: 30s}\n  \
             b: {kind: surge, factor: 3, from: 20s, to: 40s}\n",
        );
        let plan = RatePlan::new(&sc.classes[0].arrivals, &sc.faults);
        let want = 100.0 * 570.0 + 10.0 * (200.0 + 600.0 + 300.0);
        assert!((plan.expected_arrivals(sc.duration) - want).abs() < 1e-6);
        assert_eq!(plan.rate_at(SimTime(25 * 1_000_000_000)), 600.0);
    }

    #[test]
    fn each_kind_acts_on_its_service_only() {
        let sc = scenario(
            "  c: {kind: capacity, service: a, slots: 2, from: 1s, duration: 1s}\n  \
             o: {kind: outage, service: a, from: 1s, duration: 1s}\n  \
             e: {kind: error, service: a, fraction: 0.25, from: 1s, duration: 1s}\n",
        );
        let [c, o, e] = [&sc.faults[0].kind, &sc.faults[1].kind, &sc.faults[2].kind];
        let (s0, s1) = (ServiceIx::new(0), ServiceIx::new(1));
        assert_eq!(c.slots_of(s0, 4), 2);
        assert_eq!(c.slots_of(s0, 1), 1, "a capacity fault never adds slots");
        assert_eq!(c.slots_of(s1, 4), 4);
        assert_eq!(c.wakes_at_end(), Some(s0));
        assert!(o.rejects_all_of(s0) && !c.rejects_all_of(s0));
        assert_eq!(e.error_fraction_of(s0), Some(0.25));
        assert_eq!(o.wakes_at_end(), None);
        assert_eq!(c.rate_factor(), 1.0);
    }
}
