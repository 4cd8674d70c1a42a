//! What faults do to a run, precomputed per service so that the hot path asks cheap questions:
//! which service-time sampler is in force, whether an arrival is rejected by an outage or failed by
//! an error fault, how many slots a service has now, and the arrival rate at an instant (surges).
//! Overlapping faults compose: the last-listed slow fault wins, error fractions apply one after
//! another, capacities take the smallest, surge factors multiply.

use super::dist::Sampler;
use crate::rng::Stream;
use crate::scenario::{FaultKind, Scenario};
use crate::time::SimTime;

/// One fault window on a service.
#[derive(Clone, Debug)]
pub struct Window<T> {
    pub from: SimTime,
    pub to: SimTime,
    pub what: T,
}

impl<T> Window<T> {
    #[inline]
    fn active(&self, now: SimTime) -> bool {
        self.from <= now && now < self.to
    }
}

/// The faults acting on one service.
#[derive(Debug, Default)]
pub struct ServiceFaults {
    pub slow: Vec<Window<Sampler>>,
    /// Error fraction and the fault's own stream.
    pub error: Vec<Window<(f64, Stream)>>,
    pub outage: Vec<Window<()>>,
    pub capacity: Vec<Window<u32>>,
}

impl ServiceFaults {
    /// Whether any fault acts on the service.
    pub fn is_empty(&self) -> bool {
        self.slow.is_empty()
            && self.error.is_empty()
            && self.outage.is_empty()
            && self.capacity.is_empty()
    }

    /// The slow-fault sampler in force at `now`, if any.
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

    /// Whether an error fault fails this arrival (one draw per active error fault).
    #[inline]
    pub fn error(&mut self, now: SimTime) -> bool {
        self.error
            .iter_mut()
            .filter(|w| w.active(now))
            .any(|w| w.what.1.unit() < w.what.0)
    }

    /// Slots in force at `now`.
    #[inline]
    pub fn slots(&self, now: SimTime, normal: u32) -> u32 {
        self.capacity
            .iter()
            .filter(|w| w.active(now))
            .map(|w| w.what)
            .fold(normal, u32::min)
    }
}

/// Builds each service's fault list.
pub fn per_service(sc: &Scenario) -> Vec<ServiceFaults> {
    let mut out: Vec<ServiceFaults> = (0..sc.services.len())
        .map(|_| ServiceFaults::default())
        .collect();
    for f in &sc.faults {
        let (from, to) = (f.from, f.to);
        match &f.kind {
            FaultKind::Slow {
                service,
                service_time,
            } => out[*service].slow.push(Window {
                from,
                to,
                what: Sampler::new(service_time),
            }),
            FaultKind::Error { service, fraction } => out[*service].error.push(Window {
                from,
                to,
                what: (
                    *fraction,
                    Stream::new(sc.seed, &format!("fault/{}", f.name)),
                ),
            }),
            FaultKind::Outage { service } => {
                out[*service].outage.push(Window { from, to, what: () })
            }
            FaultKind::Capacity { service, slots } => out[*service].capacity.push(Window {
                from,
                to,
                what: *slots,
            }),
            FaultKind::Surge { .. } => {}
        }
    }
    out
}

/// The arrival rate as a step function of time (surge faults).
#[derive(Debug)]
pub struct RatePlan {
    base: f64,
    surges: Vec<Window<f64>>,
    /// Instants where the rate changes, sorted.
    breaks: Vec<SimTime>,
}

impl RatePlan {
    /// The plan for `sc`.
    pub fn new(sc: &Scenario) -> Self {
        let surges: Vec<Window<f64>> = sc
            .faults
            .iter()
            .filter_map(|f| match f.kind {
                FaultKind::Surge { factor } => Some(Window {
                    from: f.from,
                    to: f.to,
                    what: factor,
                }),
                _ => None,
            })
            .collect();
        let mut breaks: Vec<SimTime> = surges.iter().flat_map(|w| [w.from, w.to]).collect();
        breaks.sort_unstable();
        breaks.dedup();
        RatePlan {
            base: sc.rate,
            surges,
            breaks,
        }
    }

    /// Requests per second at `t`.
    #[inline]
    pub fn rate_at(&self, t: SimTime) -> f64 {
        self.surges
            .iter()
            .filter(|w| w.active(t))
            .fold(self.base, |r, w| r * w.what)
    }

    /// The first instant after `t` where the rate changes.
    #[inline]
    pub fn next_break(&self, t: SimTime) -> SimTime {
        self.breaks
            .iter()
            .copied()
            .find(|&b| b > t)
            .unwrap_or(SimTime::NEVER)
    }
}
