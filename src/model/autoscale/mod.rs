//! Autoscaled services in a run (`services.<s>.autoscale`, docs/model.md §2.13.1). Owns each
//! such service's replicas' lifecycle — off, warming up, ready (serving), draining — the list of
//! serving replicas its callers' balancers pick among, the controller's reading of utilization
//! (each ready replica's busy slots averaged over the time it was ready since the previous
//! evaluation, in thousandths of a slot, against a request of `slots`), the evaluations every
//! `interval` before `duration` that apply the HPA rule of
//! [`crate::protections::autoscale`], and what the JSON and the time series report. A service
//! without `autoscale` has no state here, and a run without any pays one flag test per attempt.

mod sim;

use crate::ix::{ReplicaIx, ServiceIx};
use crate::metrics::summary::ReplicaChange;
use crate::protections::autoscale::{Autoscale, Hpa};
use crate::scenario::Scenario;
use crate::time::SimTime;

/// Where one replica of an autoscaled service is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    /// Not started (or drained): takes nothing.
    Off,
    /// Started at `since`, serves from `until` on.
    Warming { since: SimTime, until: SimTime },
    /// Serving since `since`.
    Ready { since: SimTime },
    /// Removed: takes no new work, finishes what it holds.
    Draining,
}

/// The autoscaler of one service and its replicas.
#[derive(Debug)]
pub(super) struct Scaler {
    spec: Autoscale,
    hpa: Hpa,
    slots: u32,
    life: Vec<Life>,
    /// Ready replicas, in increasing order: what balancers pick among.
    serving: Vec<ReplicaIx>,
    /// Per replica: the time and ∫ busy dt where its current reading window starts.
    mark: Vec<(SimTime, u128)>,
    /// Replicas started (warming or ready), and of them ready.
    started: u32,
    ready: u32,
    evaluations: u64,
    scale_ups: u64,
    scale_downs: u64,
    peak: u32,
    /// ∫ started dt over `[0, last)`, in replica-nanoseconds, capped at the end of arrivals.
    area: u128,
    last: SimTime,
    timeline: Vec<ReplicaChange>,
}

/// Per service, its autoscaler (`None` without `autoscale`); empty when no service has one.
pub(super) fn scalers(sc: &Scenario) -> Vec<Option<Scaler>> {
    if sc.services.iter().all(|s| s.autoscale.is_none()) {
        return Vec::new();
    }
    sc.services
        .iter()
        .map(|s| {
            s.autoscale.map(|spec| {
                let units = s.max_units();
                let life: Vec<Life> = (0..units)
                    .map(|k| {
                        if k < s.replicas {
                            Life::Ready {
                                since: SimTime::ZERO,
                            }
                        } else {
                            Life::Off
                        }
                    })
                    .collect();
                Scaler {
                    spec,
                    hpa: Hpa::new(spec),
                    slots: s.slots,
                    serving: ReplicaIx::first(s.replicas as usize).collect(),
                    mark: vec![(SimTime::ZERO, 0); units as usize],
                    life,
                    started: s.replicas,
                    ready: s.replicas,
                    evaluations: 0,
                    scale_ups: 0,
                    scale_downs: 0,
                    peak: s.replicas,
                    area: 0,
                    last: SimTime::ZERO,
                    timeline: vec![ReplicaChange {
                        at_s: 0.0,
                        replicas: s.replicas,
                        ready: s.replicas,
                    }],
                }
            })
        })
        .collect()
}

/// The replicas of `callee` its callers may pick, when it is autoscaled.
#[inline]
pub(super) fn serving(scalers: &[Option<Scaler>], callee: ServiceIx) -> Option<&[ReplicaIx]> {
    scalers[callee].as_ref().map(|s| &s.serving[..])
}

/// Replicas started and ready of service `s` now (time series), if it is autoscaled.
pub(super) fn counts(scalers: &[Option<Scaler>], s: ServiceIx) -> Option<(u32, u32)> {
    scalers
        .get(s.index())
        .and_then(|x| x.as_ref())
        .map(|sc| (sc.started, sc.ready))
}

impl Scaler {
    /// Accounts the started count held until `now` (within the arrival period `end`).
    fn advance(&mut self, now: SimTime, end: SimTime) {
        let to = now.min(end);
        if to > self.last {
            self.area += self.started as u128 * (to - self.last).0 as u128;
            self.last = to;
        }
    }

    /// Notes the counts at `now` in the timeline, if they changed.
    fn record(&mut self, now: SimTime) {
        self.peak = self.peak.max(self.started);
        let change = ReplicaChange {
            at_s: now.as_secs_f64(),
            replicas: self.started,
            ready: self.ready,
        };
        match self.timeline.last_mut() {
            Some(last) if (last.replicas, last.ready) == (change.replicas, change.ready) => {}
            Some(last) if last.at_s == change.at_s => *last = change,
            _ => self.timeline.push(change),
        }
    }

    /// The replicas to remove, `n` of them: those still warming up first (the latest started
    /// first), then the ready ones that became ready last (the highest index on a tie), as a
    /// ReplicaSet deletes unready pods before ready ones and newer before older.
    fn victims(&self, n: u32) -> Vec<ReplicaIx> {
        let mut order: Vec<(u8, SimTime, ReplicaIx)> = self
            .life
            .iter()
            .enumerate()
            .filter_map(|(k, l)| match *l {
                Life::Warming { since, .. } => Some((0, since, ReplicaIx::new(k))),
                Life::Ready { since } => Some((1, since, ReplicaIx::new(k))),
                _ => None,
            })
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
        order.into_iter().take(n as usize).map(|x| x.2).collect()
    }
}
