//! The simulation's side of autoscaling: the first evaluations, each evaluation applying the HPA
//! rule, starting, warming up and draining replicas, and the report of every autoscaler at the
//! end. (The autoscaler's state is the parent module's [`Scaler`]; these are the methods of
//! [`Simulation`] that act on it, apart from it so that the model's root and this module form no
//! file cycle.)

use super::{Life, Scaler};
use crate::ix::{ReplicaIx, ServiceIx};
use crate::metrics::summary::AutoscaleMetrics;
use crate::model::{Event, Simulation};
use crate::protections::autoscale::{Reading, metric_replicas};
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// Schedules every autoscaler's first evaluation, one `interval` after 0.
    #[cold]
    #[inline(never)]
    pub(in crate::model) fn start_autoscalers(&mut self) {
        for (s, sc) in self.scalers.iter().enumerate() {
            let s = ServiceIx::new(s);
            if let Some(sc) = sc
                && SimTime(sc.spec.interval.0) < self.arrivals_end
            {
                self.engine.schedule_at(
                    SimTime(sc.spec.interval.0),
                    Event::AutoscaleTick { service: s },
                );
            }
        }
    }

    /// Service `s`'s autoscaler evaluates: reads the utilization of its ready replicas since the
    /// previous evaluation, applies the HPA rule, starts or removes replicas, and comes back one
    /// `interval` later if that is before the end of arrivals.
    #[cold]
    #[inline(never)]
    pub(in crate::model) fn on_autoscale_tick(&mut self, s: ServiceIx) {
        let now = self.now();
        let end = self.arrivals_end;
        let Some(mut sc) = self.scalers[s].take() else {
            return;
        };
        let mut reading = Reading::default();
        for k in 0..sc.life.len() {
            match sc.life[k] {
                Life::Ready { .. } => {
                    let area = self.units[self.unit_of(s, ReplicaIx::new(k))]
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
                if matches!(sc.life[k.index()], Life::Ready { .. }) {
                    sc.ready -= 1;
                    sc.serving.retain(|&r| r != k);
                }
                sc.life[k.index()] = Life::Draining;
                sc.started -= 1;
            }
        }
        sc.record(now);
        let next = now + sc.spec.interval;
        if next < end {
            self.engine
                .schedule_at(next, Event::AutoscaleTick { service: s });
        }
        self.scalers[s] = Some(sc);
    }

    /// Starts one replica of service `s`: the lowest replica that is off or has drained, else
    /// the lowest still draining (its remaining work goes on); it serves after `warmup`.
    fn start_replica(&mut self, s: ServiceIx, sc: &mut Scaler, now: SimTime) {
        let idle = |k: usize| {
            let st = &self.units[self.unit_of(s, ReplicaIx::new(k))].station;
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
            self.make_ready(s, sc, ReplicaIx::new(k), now);
        } else {
            self.engine.schedule_at(
                until,
                Event::ReplicaReady {
                    service: s,
                    replica: ReplicaIx::new(k),
                },
            );
        }
    }

    /// Replica `k` of `s` starts serving at `now`.
    fn make_ready(&mut self, s: ServiceIx, sc: &mut Scaler, k: ReplicaIx, now: SimTime) {
        sc.life[k.index()] = Life::Ready { since: now };
        let area = self.units[self.unit_of(s, k)].station.busy_area(now);
        sc.mark[k.index()] = (now, area);
        let at = sc.serving.partition_point(|&x| x < k);
        sc.serving.insert(at, k);
        sc.ready += 1;
    }

    /// Replica `k` of `s` finished warming up, unless it was removed (or restarted) meanwhile.
    #[cold]
    #[inline(never)]
    pub(in crate::model) fn on_replica_ready(&mut self, s: ServiceIx, k: ReplicaIx) {
        let now = self.now();
        let Some(mut sc) = self.scalers[s].take() else {
            return;
        };
        if matches!(sc.life[k.index()], Life::Warming { until, .. } if until == now) {
            self.make_ready(s, &mut sc, k, now);
            sc.record(now);
        }
        self.scalers[s] = Some(sc);
    }

    /// What each autoscaler did, for the summary.
    pub(in crate::model) fn autoscale_metrics(&mut self) -> Vec<Option<AutoscaleMetrics>> {
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
