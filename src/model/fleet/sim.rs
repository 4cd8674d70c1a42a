//! The simulation's side of replicas and the network: the index of a replica in the per-replica
//! state, picking a replica and sending an attempt to it with its network delay, delivering it,
//! the reply's delay, telling the balancer that an attempt settled, and the per-replica summary.
//! (The layout and the per-call state are the parent module's; these are the methods of
//! [`Simulation`] that use them, apart from it so that the model's root and this module form no
//! file cycle.)

use crate::ix::{ClassIx, ReplicaIx, ServiceIx, UnitIx};
use crate::metrics::levels::LevelAreas;
use crate::metrics::summary::ReplicaMetrics;
use crate::model::slab::Handle;
use crate::model::{Event, Simulation, Via};
use crate::protections::outlier::Detector;
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// The slot of replica `r` of service `s` in the per-replica state.
    #[inline]
    pub(in crate::model) fn unit_of(&self, s: ServiceIx, r: ReplicaIx) -> UnitIx {
        if r.index() == 0 {
            UnitIx::new(s.index())
        } else {
            UnitIx::new(self.replica_base[s].0.index() + r.index() - 1)
        }
    }

    /// Which replica of service `s` the slot `u` is (the inverse of [`Simulation::unit_of`]).
    pub(in crate::model) fn replica_index(&self, s: ServiceIx, u: UnitIx) -> ReplicaIx {
        if u.index() == s.index() {
            ReplicaIx::new(0)
        } else {
            ReplicaIx::new(u.index() - self.replica_base[s].0.index() + 1)
        }
    }

    /// Service `s`'s level integrals over the arrival period, summed over its replicas.
    pub(in crate::model) fn service_areas(&self, s: ServiceIx) -> LevelAreas {
        let mut areas = self.units[self.unit_of(s, ReplicaIx::new(0))]
            .station
            .period_areas();
        for r in 1..self.replica_base[s].1 as usize {
            let a = self.units[self.unit_of(s, ReplicaIx::new(r))]
                .station
                .period_areas();
            areas.busy += a.busy;
            areas.queue += a.queue;
        }
        areas
    }

    /// Per service of more than one replica, its replicas' metrics.
    pub(in crate::model) fn replica_stats(&self) -> Vec<Vec<ReplicaMetrics>> {
        let period = self.sc.duration.0 as f64;
        self.sc
            .services
            .iter()
            .enumerate()
            .map(|(s, svc)| {
                if svc.max_units() == 1 {
                    return Vec::new();
                }
                let s = ServiceIx::new(s);
                // The outlier detectors of the calls toward `s`, run to the end.
                let end = self.engine.now();
                let detectors: Vec<Detector> = self
                    .sc
                    .edges
                    .iter()
                    .zip(&self.edges)
                    .filter(|(e, _)| e.callee == s)
                    .filter_map(|(_, es)| es.balancer.as_ref()?.outlier().cloned())
                    .map(|mut d| {
                        d.advance(end);
                        d
                    })
                    .collect();
                let outlier = !detectors.is_empty();
                ReplicaIx::first(svc.max_units() as usize)
                    .map(|r| {
                        let u = self.unit_of(s, r);
                        let areas = self.units[u].station.period_areas();
                        ReplicaMetrics {
                            counts: self.replica_rec[u].summary(),
                            utilization: areas.busy as f64 / (period * svc.slots as f64),
                            mean_queue_len: areas.queue as f64 / period,
                            ejections: outlier
                                .then(|| detectors.iter().map(|d| d.ejections(r)).sum()),
                            ejected_s: outlier.then(|| {
                                detectors
                                    .iter()
                                    .map(|d| d.ejected_time(r, end).as_secs_f64())
                                    .sum()
                            }),
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// Sends the request of `attempt` (on `via`) to `callee`: picks the replica through the
    /// caller's balancer, then delivers it at once, or after the network delay. Returns the
    /// admitted job when delivered at once.
    #[inline(always)]
    pub(in crate::model) fn send_to(
        &mut self,
        via: Via,
        callee: ServiceIx,
        attempt: Handle,
        deadline: SimTime,
    ) -> Handle {
        // The request's class (its priority) travels with the request itself: the attempt may be
        // settled (timed out) before a delayed request arrives, and the callee still serves it.
        let class = if self.multi_class {
            self.attempts[attempt].class
        } else {
            ClassIx::new(0)
        };
        let (balancer, latency) = match via {
            Via::Client(c) => {
                let c = &mut self.classes[c];
                (&mut c.balancer, &mut c.latency)
            }
            Via::Edge(e) => {
                let es = &mut self.edges[e];
                (&mut es.balancer, &mut es.latency)
            }
        };
        let now = self.engine.now();
        let replica = match balancer {
            None => ReplicaIx::new(0),
            Some(b) if self.autoscaling => {
                b.pick_at(now, crate::model::autoscale::serving(&self.scalers, callee))
            }
            Some(b) => b.pick_at(now, None),
        };
        let delay = latency.as_mut().map(|l| l.sampler.sample(&mut l.request));
        if replica.index() != 0 {
            self.attempts[attempt].replica = replica;
        }
        let unit = self.unit_of(callee, replica);
        match delay {
            Some(d) if !d.is_zero() => {
                self.engine.schedule_in(
                    d,
                    Event::Deliver {
                        attempt,
                        unit,
                        class,
                        deadline,
                    },
                );
                Handle::NONE
            }
            _ => self.deliver(callee, unit, attempt, class, deadline),
        }
    }

    /// A request delayed by the network arrives; if its attempt is still open, it learns the job.
    pub(in crate::model) fn on_deliver(
        &mut self,
        attempt: Handle,
        unit: UnitIx,
        class: ClassIx,
        deadline: SimTime,
    ) {
        let s = self.units[unit].service;
        let child = self.deliver(s, unit, attempt, class, deadline);
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.child = child;
        }
    }

    /// The network delay of the reply to `attempt` (zero without `latency`, or when the attempt
    /// is already settled: nobody waits for that reply).
    pub(in crate::model) fn reply_latency(&mut self, attempt: Handle) -> SimDuration {
        let Some(a) = self.attempts.get(attempt) else {
            return SimDuration::ZERO;
        };
        let latency = match a.owner.via(a.class) {
            Via::Client(c) => &mut self.classes[c].latency,
            Via::Edge(e) => &mut self.edges[e].latency,
        };
        latency
            .as_mut()
            .map_or(SimDuration::ZERO, |l| l.sampler.sample(&mut l.reply))
    }

    /// An attempt to `replica` on `via` settled: the caller's balancer counts one outstanding
    /// request fewer there.
    #[inline]
    pub(in crate::model) fn balancer_settled(&mut self, via: Via, replica: ReplicaIx) {
        let balancer = match via {
            Via::Client(c) => &mut self.classes[c].balancer,
            Via::Edge(e) => &mut self.edges[e].balancer,
        };
        if let Some(b) = balancer {
            b.settled(replica);
        }
    }
}
