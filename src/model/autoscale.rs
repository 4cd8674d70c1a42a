//! Autoscaled services in a run (`services.<s>.autoscale`, docs/model.md §2.13.1). Owns each
//! such service's replicas' lifecycle — off, warming up, ready (serving), draining — the list of
//! serving replicas its callers' balancers pick among, the controller's reading of utilization
//! (each ready replica's busy slots averaged over the time it was ready since the previous
//! evaluation, in thousandths of a slot, against a request of `slots`), the evaluations every
//! `interval` before `duration` that apply the HPA rule of
//! [`crate::protections::autoscale`], and what the JSON and the time series report. A service
//! without `autoscale` has no state here, and a run without any pays one flag test per attempt.

use super::{Event, Simulation};
use crate::metrics::summary::{AutoscaleMetrics, ReplicaChange};
use crate::protections::autoscale::{Autoscale, Hpa, Reading, metric_replicas};
use crate::scenario::Scenario;
use crate::time::{SimDuration, SimTime};

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
    serving: Vec<u32>,
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
                    serving: (0..s.replicas).collect(),
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
pub(super) fn serving(scalers: &[Option<Scaler>], callee: usize) -> Option<&[u32]> {
    scalers[callee].as_ref().map(|s| &s.serving[..])
}

/// Replicas started and ready of service `s` now (time series), if it is autoscaled.
pub(super) fn counts(scalers: &[Option<Scaler>], s: usize) -> Option<(u32, u32)> {
    scalers
        .get(s)
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
    fn victims(&self, n: u32) -> Vec<u32> {
        let mut order: Vec<(u8, SimTime, u32)> = self
            .life
            .iter()
            .enumerate()
            .filter_map(|(k, l)| match *l {
                Life::Warming { since, .. } => Some((0, since, k as u32)),
                Life::Ready { since } => Some((1, since, k as u32)),
                _ => None,
            })
            .collect();
        order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
        order.into_iter().take(n as usize).map(|x| x.2).collect()
    }
}

impl Simulation<'_> {
    /// Schedules every autoscaler's first evaluation, one `interval` after 0.
    #[cold]
    #[inline(never)]
    pub(super) fn start_autoscalers(&mut self) {
        for (s, sc) in self.scalers.iter().enumerate() {
            if let Some(sc) = sc
                && SimTime(sc.spec.interval.0) < self.arrivals_end
            {
                self.engine.schedule_at(
                    SimTime(sc.spec.interval.0),
                    Event::AutoscaleTick { service: s as u32 },
                );
            }
        }
    }

    /// Service `s`'s autoscaler evaluates: reads the utilization of its ready replicas since the
    /// previous evaluation, applies the HPA rule, starts or removes replicas, and comes back one
    /// `interval` later if that is before the end of arrivals.
    #[cold]
    #[inline(never)]
    pub(super) fn on_autoscale_tick(&mut self, s: usize) {
        let now = self.now();
        let end = self.arrivals_end;
        let Some(mut sc) = self.scalers[s].take() else {
            return;
        };
        let mut reading = Reading::default();
        for k in 0..sc.life.len() {
            match sc.life[k] {
                Life::Ready { .. } => {
                    let area = self.services[self.unit_of(s, k as u32)]
                        .station
                        .busy_area(now);
                    let (t0, a0) = sc.mark[k];
                    let dt = now.saturating_since(t0).0;
                    if dt > 0 {
                        reading.usage_milli += ((area - a0) * 1000 / dt as u128) as u64;
                        reading.ready += 1;
                    } else {
                        // Ready this very instant: no reading yet, as if still warming.
                        reading.warming += 1;
                    }
                    sc.mark[k] = (now, area);
                }
                Life::Warming { .. } => reading.warming += 1,
                Life::Off | Life::Draining => {}
            }
        }
        let metric = metric_replicas(
            sc.started,
            &reading,
            sc.slots as u64 * 1000,
            sc.spec.target_percent,
        );
        sc.evaluations += 1;
        let desired = sc.hpa.reconcile(now, sc.started, metric);
        sc.advance(now, end);
        if desired > sc.started {
            sc.scale_ups += 1;
            for _ in sc.started..desired {
                self.start_replica(s, &mut sc, now);
            }
        } else if desired < sc.started {
            sc.scale_downs += 1;
            for k in sc.victims(sc.started - desired) {
                if matches!(sc.life[k as usize], Life::Ready { .. }) {
                    sc.ready -= 1;
                    sc.serving.retain(|&r| r != k);
                }
                sc.life[k as usize] = Life::Draining;
                sc.started -= 1;
            }
        }
        sc.record(now);
        let next = now + sc.spec.interval;
        if next < end {
            self.engine
                .schedule_at(next, Event::AutoscaleTick { service: s as u32 });
        }
        self.scalers[s] = Some(sc);
    }

    /// Starts one replica of service `s`: the lowest replica that is off or has drained, else
    /// the lowest still draining (its remaining work goes on); it serves after `warmup`.
    fn start_replica(&mut self, s: usize, sc: &mut Scaler, now: SimTime) {
        let idle = |k: usize| {
            let st = &self.services[self.unit_of(s, k as u32)].station;
            st.busy() == 0 && st.queue_is_empty()
        };
        let k = (0..sc.life.len())
            .find(|&k| match sc.life[k] {
                Life::Off => true,
                Life::Draining => idle(k),
                _ => false,
            })
            .or_else(|| (0..sc.life.len()).find(|&k| sc.life[k] == Life::Draining))
            .expect("the controller never starts more than max_replicas");
        sc.started += 1;
        let until = now + sc.spec.warmup;
        sc.life[k] = Life::Warming { since: now, until };
        if sc.spec.warmup == SimDuration::ZERO {
            self.make_ready(s, sc, k as u32, now);
        } else {
            self.engine.schedule_at(
                until,
                Event::ReplicaReady {
                    service: s as u32,
                    replica: k as u32,
                },
            );
        }
    }

    /// Replica `k` of `s` starts serving at `now`.
    fn make_ready(&mut self, s: usize, sc: &mut Scaler, k: u32, now: SimTime) {
        sc.life[k as usize] = Life::Ready { since: now };
        let area = self.services[self.unit_of(s, k)].station.busy_area(now);
        sc.mark[k as usize] = (now, area);
        let at = sc.serving.partition_point(|&r| r < k);
        sc.serving.insert(at, k);
        sc.ready += 1;
    }

    /// Replica `k` of `s` finished warming up, unless it was removed (or restarted) meanwhile.
    #[cold]
    #[inline(never)]
    pub(super) fn on_replica_ready(&mut self, s: usize, k: u32) {
        let now = self.now();
        let Some(mut sc) = self.scalers[s].take() else {
            return;
        };
        if matches!(sc.life[k as usize], Life::Warming { until, .. } if until == now) {
            self.make_ready(s, &mut sc, k, now);
            sc.record(now);
        }
        self.scalers[s] = Some(sc);
    }

    /// What each autoscaler did, for the summary.
    pub(super) fn autoscale_metrics(&mut self) -> Vec<Option<AutoscaleMetrics>> {
        let end = self.arrivals_end;
        let n = self.sc.services.len();
        if self.scalers.is_empty() {
            return vec![None; n];
        }
        self.scalers
            .iter_mut()
            .map(|x| {
                x.as_mut().map(|sc| {
                    sc.advance(end, end);
                    let seconds = sc.area as f64 / 1e9;
                    AutoscaleMetrics {
                        evaluations: sc.evaluations,
                        scale_ups: sc.scale_ups,
                        scale_downs: sc.scale_downs,
                        replicas_peak: sc.peak,
                        replicas_mean: sc.area as f64 / end.0 as f64,
                        replica_seconds: seconds,
                        timeline: sc.timeline.clone(),
                    }
                })
            })
            .collect()
    }
}
