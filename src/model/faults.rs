//! What faults do to a run, precomputed per replica of each service (a fault's `replicas` say
//! which) so that the hot path asks cheap questions:
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

/// A slow fault: its sampler, and for a `fraction` below 1 that share and its own stream.
#[derive(Clone, Debug)]
pub struct Slow {
    pub sampler: Sampler,
    pub share: Option<(f64, Stream)>,
}

/// The faults acting on one replica of a service (on the service, for one replica).
#[derive(Debug, Default)]
pub struct ServiceFaults {
    pub slow: Vec<Window<Slow>>,
    /// Error fraction and the fault's own stream.
    pub error: Vec<Window<(f64, Stream)>>,
    pub outage: Vec<Window<()>>,
    /// Slot limits.
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

    /// The slow-fault sampler in force at `now` for work starting now, if any: the last-listed
    /// slow fault in force decides; with a `fraction`, one draw of its stream says whether this
    /// work is slow (if not, the normal service time applies).
    #[inline]
    pub fn slow_sampler(&mut self, now: SimTime) -> Option<&Sampler> {
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
            .fold(normal, |n, w| capacity_slots(n, w.what))
    }
}

/// Builds the fault list of each replica, given as `(service, replica)` in the simulation's
/// layout. A fault's streams are per replica: replica 0 keeps the fault's own label
/// (`fault/<name>`, `fault/<name>/slow`), replica `r` adds `/replica/<r>`.
pub fn per_unit(sc: &Scenario, units: &[(usize, u32)]) -> Vec<ServiceFaults> {
    let mut out: Vec<ServiceFaults> = units.iter().map(|_| ServiceFaults::default()).collect();
    for f in &sc.faults {
        let Some(s) = f.kind.service() else { continue };
        for (u, &(us, r)) in units.iter().enumerate() {
            if us != s || !f.acts_on_replica(r) {
                continue;
            }
            let label =
                |what: &str| super::fleet::replica_label(&format!("fault/{}{what}", f.name), r);
            add_fault(&mut out[u], f, s, &label, sc.seed);
        }
    }
    out
}

/// Adds fault `f` on service `s` to one replica's list; `label` names its streams.
fn add_fault(
    faults: &mut ServiceFaults,
    f: &crate::scenario::Fault,
    s: usize,
    label: &dyn Fn(&str) -> String,
    seed: u64,
) {
    let (from, to) = (f.from, f.to);
    if let Some(dist) = f.kind.service_time_of(s) {
        let fraction = f.kind.slow_fraction();
        faults.slow.push(Window {
            from,
            to,
            what: Slow {
                sampler: Sampler::new(dist),
                share: (fraction < 1.0).then(|| (fraction, Stream::new(seed, &label("/slow")))),
            },
        });
    }
    if let Some(fraction) = f.kind.error_fraction_of(s) {
        faults.error.push(Window {
            from,
            to,
            what: (fraction, Stream::new(seed, &label(""))),
        });
    }
    if f.kind.rejects_all_of(s) {
        faults.outage.push(Window { from, to, what: () });
    }
    if let Some(limit) = f.kind.slot_limit_of(s) {
        faults.capacity.push(Window {
            from,
            to,
            what: limit,
        });
    }
}
