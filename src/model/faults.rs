//! What faults do to a run, precomputed per service so that the hot path asks cheap questions:
//! which service-time sampler is in force, whether an arrival is rejected by an outage or failed by
//! an error fault, and how many slots a service has now. What each kind means, and how
//! overlapping faults compose, is [`crate::scenario::faults`]'s; this module only lays it out for
//! fast lookup (the arrival rate over time is [`crate::scenario::faults::RatePlan`]).

use super::dist::Sampler;
use crate::rng::Stream;
use crate::scenario::Scenario;
use crate::scenario::faults::capacity_slots;
use crate::time::SimTime;

/// One fault window on a service.
#[derive(Clone, Debug)]
pub struct FaultSpan<T> {
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
pub struct ErrorFault {
    /// Share of arrivals failed, drawn from `stream`.
    pub fraction: f64,
    pub stream: Stream,
    /// With `retryable_fraction` below 1: that share, and the stream that draws which errors
    /// may be retried (its own, so the failure draws stay where they were).
    pub retryable: Option<(f64, Stream)>,
}

/// The faults acting on one service.
#[derive(Debug, Default)]
pub struct ServiceFaults {
    pub slow: Vec<FaultSpan<Sampler>>,
    /// Error fraction and the fault's own stream.
    pub error: Vec<FaultSpan<ErrorFault>>,
    pub outage: Vec<FaultSpan<()>>,
    /// Slot limits.
    pub capacity: Vec<FaultSpan<u32>>,
}

impl ServiceFaults {
    /// Whether any fault acts on the service.
    pub fn is_empty(&self) -> bool {
        self.slow.is_empty()
            && self.error.is_empty()
            && self.outage.is_empty()
            && self.capacity.is_empty()
    }

    /// The slow-fault sampler in force at `now`, if any (the last-listed wins).
    #[inline]
    pub fn slow_sampler(&self, now: SimTime) -> Option<&Sampler> {
        self.slow
            .iter()
            .rev()
            .find(|w| w.active(now))
            .map(|w| &w.what)
    }

    /// Whether an outage rejects arrivals at `now`.
    #[inline]
    pub fn outage(&self, now: SimTime) -> bool {
        self.outage.iter().any(|w| w.active(now))
    }

    /// Whether an error fault fails this arrival (one draw per active error fault, up to the
    /// first that fails it): `Some(retryable)` when one does.
    #[inline]
    pub fn error(&mut self, now: SimTime) -> Option<bool> {
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
    pub fn slots(&self, now: SimTime, normal: u32) -> u32 {
        self.capacity
            .iter()
            .filter(|w| w.active(now))
            .fold(normal, |n, w| capacity_slots(n, w.what))
    }
}

/// Builds each service's fault list.
pub fn per_service(sc: &Scenario) -> Vec<ServiceFaults> {
    let mut out: Vec<ServiceFaults> = (0..sc.services.len())
        .map(|_| ServiceFaults::default())
        .collect();
    for f in &sc.faults {
        let Some(s) = f.kind.service() else { continue };
        let (from, to) = (f.from, f.to);
        let faults = &mut out[s];
        if let Some(dist) = f.kind.service_time_of(s) {
            faults.slow.push(FaultSpan {
                from,
                to,
                what: Sampler::new(dist),
            });
        }
        if let Some(fraction) = f.kind.error_fraction_of(s) {
            let retryable = f.kind.retryable_fraction_of(s).unwrap_or(1.0);
            faults.error.push(FaultSpan {
                from,
                to,
                what: ErrorFault {
                    fraction,
                    stream: Stream::new(sc.seed, &format!("fault/{}", f.name)),
                    retryable: (retryable < 1.0).then(|| {
                        (
                            retryable,
                            Stream::new(sc.seed, &format!("fault-retryable/{}", f.name)),
                        )
                    }),
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
    out
}
