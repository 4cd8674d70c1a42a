//! What faults do to a run, precomputed per replica of each service (a fault's `replicas` say
//! which) so that the hot path asks cheap questions:
//! which service-time sampler is in force, whether an arrival is rejected by an outage or failed by
//! an error fault, and how many slots a service has now. What each kind means, and how
//! overlapping faults compose, is [`crate::scenario::faults`]'s; this module only lays it out for
//! fast lookup (the arrival rate over time is [`crate::scenario::rate::RatePlan`]).

use super::dist::Sampler;
use crate::ix::{ReplicaIx, ServiceIx};
use crate::rng::Stream;
use crate::scenario::Scenario;
use crate::scenario::faults::capacity_slots;
use crate::time::SimTime;

/// One fault window on a service.
#[derive(Clone, Debug)]
pub(crate) struct FaultSpan<T> {
    pub from: SimTime,
    pub to: SimTime,
    pub what: T,
}

impl<T> FaultSpan<T> {
    #[inline]
    fn active(&self, now: SimTime) -> bool {
        self.from <= now && now < self.to
    }
}

/// An error fault on one service.
#[derive(Debug)]
pub(crate) struct ErrorFault {
    /// Share of arrivals failed, drawn from `stream`.
    pub fraction: f64,
    pub stream: Stream,
    /// With `retryable_fraction` below 1: that share, and the stream that draws which errors
    /// may be retried (its own, so the failure draws stay where they were).
    pub retryable: Option<(f64, Stream)>,
}

/// A slow fault: its sampler, and for a `fraction` below 1 that share and its own stream.
#[derive(Clone, Debug)]
pub(crate) struct Slow {
    pub sampler: Sampler,
    pub share: Option<(f64, Stream)>,
}

/// The faults acting on one replica of a service (on the service, for one replica).
#[derive(Debug, Default)]
pub(crate) struct ServiceFaults {
    pub slow: Vec<FaultSpan<Slow>>,
    /// Error fraction and the fault's own stream.
    pub error: Vec<FaultSpan<ErrorFault>>,
    pub outage: Vec<FaultSpan<()>>,
    /// Slot limits.
    pub capacity: Vec<FaultSpan<u32>>,
}

impl ServiceFaults {
    /// Whether any fault acts on the service.
    pub(crate) fn is_empty(&self) -> bool {
        self.slow.is_empty()
            && self.error.is_empty()
            && self.outage.is_empty()
            && self.capacity.is_empty()
    }

    /// The slow-fault sampler in force at `now` for work starting now, if any: the last-listed
    /// slow fault in force decides; with a `fraction`, one draw of its stream says whether this
    /// work is slow (if not, the normal service time applies).
    #[inline]
    pub(crate) fn slow_sampler(&mut self, now: SimTime) -> Option<&Sampler> {
        let w = self.slow.iter_mut().rev().find(|w| w.active(now))?;
        if let Some((fraction, stream)) = &mut w.what.share
            && stream.unit() >= *fraction
        {
            return None;
        }
        Some(&w.what.sampler)
    }

    /// Whether an outage rejects arrivals at `now`.
    #[inline]
    pub(crate) fn outage(&self, now: SimTime) -> bool {
        self.outage.iter().any(|w| w.active(now))
    }

    /// Whether an error fault fails this arrival (one draw per active error fault, up to the
    /// first that fails it): `Some(retryable)` when one does.
    #[inline]
    pub(crate) fn error(&mut self, now: SimTime) -> Option<bool> {
        let w = self
            .error
            .iter_mut()
            .filter(|w| w.active(now))
            .find_map(|w| (w.what.stream.unit() < w.what.fraction).then_some(w))?;
        Some(
            w.what
                .retryable
                .as_mut()
                .is_none_or(|(share, s)| s.unit() < *share),
        )
    }

    /// Slots in force at `now`.
    #[inline]
    pub(crate) fn slots(&self, now: SimTime, normal: u32) -> u32 {
        self.capacity
            .iter()
            .filter(|w| w.active(now))
            .fold(normal, |n, w| capacity_slots(n, w.what))
    }
}

/// Builds the fault list of each replica, given as `(service, replica)` in the simulation's
/// layout. A fault's streams are per replica: replica 0 keeps the fault's own label
/// (`fault/<name>`, `fault/<name>/slow`), replica `r` adds `/replica/<r>`.
pub(crate) fn per_unit(sc: &Scenario, units: &[(ServiceIx, ReplicaIx)]) -> Vec<ServiceFaults> {
    let mut out: Vec<ServiceFaults> = units.iter().map(|_| ServiceFaults::default()).collect();
    for f in &sc.faults {
        let Some(s) = f.kind.service() else { continue };
        for (u, &(us, r)) in units.iter().enumerate() {
            if us != s || !f.acts_on_replica(r) {
                continue;
            }
            let label =
                |what: &str| super::fleet::replica_label(&format!("fault/{}{what}", f.name), r);
            let retryable_label =
                super::fleet::replica_label(&format!("fault-retryable/{}", f.name), r);
            add_fault(
                &mut out[u],
                f,
                s,
                (f.from, f.to),
                (&label, &retryable_label),
                sc.seed,
            );
        }
    }
    out
}

/// Adds fault `f` on service `s` to one replica's list; `label` names its streams.
fn add_fault(
    faults: &mut ServiceFaults,
    f: &crate::scenario::Fault,
    s: ServiceIx,
    (from, to): (SimTime, SimTime),
    (label, retryable_label): (&dyn Fn(&str) -> String, &str),
    seed: u64,
) {
    {
        if let Some(dist) = f.kind.service_time_of(s) {
            let fraction = f.kind.slow_fraction();
            faults.slow.push(FaultSpan {
                from,
                to,
                what: Slow {
                    sampler: Sampler::new(dist),
                    share: (fraction < 1.0).then(|| (fraction, Stream::new(seed, &label("/slow")))),
                },
            });
        }
        if let Some(fraction) = f.kind.error_fraction_of(s) {
            let retryable = f.kind.retryable_fraction_of(s).unwrap_or(1.0);
            faults.error.push(FaultSpan {
                from,
                to,
                what: ErrorFault {
                    fraction,
                    stream: Stream::new(seed, &label("")),
                    retryable: (retryable < 1.0)
                        .then(|| (retryable, Stream::new(seed, retryable_label))),
                },
            });
        }
        if f.kind.rejects_all_of(s) {
            faults.outage.push(FaultSpan { from, to, what: () });
        }
        if let Some(limit) = f.kind.slot_limit_of(s) {
            faults.capacity.push(FaultSpan {
                from,
                to,
                what: limit,
            });
        }
    }
}
