//! The simulation's side of replicas and the network: the index of a replica in the per-replica
//! state, picking a replica and sending an attempt to it with its network delay, delivering it,
//! the reply's delay, telling the balancer that an attempt settled, and the per-replica summary.
//! (The layout and the per-call state are the parent module's; these are the methods of
//! [`Simulation`] that use them, apart from it so that the model's root and this module form no
//! file cycle.)

use crate::metrics::levels::LevelAreas;
use crate::metrics::summary::ReplicaMetrics;
use crate::model::slab::Handle;
use crate::model::{CLIENT_EDGE, Event, Simulation};
use crate::protections::outlier::Detector;
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// The index of replica `r` of service `s` in the per-replica state.
    #[inline]
    pub(in crate::model) fn unit_of(&self, s: usize, r: u32) -> usize {
        if r == 0 {
            s
        } else {
            (self.replica_base[s].0 + r - 1) as usize
        }
    }

    /// Which replica of service `s` the unit `u` is (the inverse of [`Simulation::unit_of`]).
    pub(in crate::model) fn replica_index(&self, s: usize, u: usize) -> u32 {
        if u == s {
            0
        } else {
            u as u32 - self.replica_base[s].0 + 1
        }
    }

    /// Service `s`'s level integrals over the arrival period, summed over its replicas.
    pub(in crate::model) fn service_areas(&self, s: usize) -> LevelAreas {
        let mut areas = self.services[s].station.period_areas();
        for r in 1..self.replica_base[s].1 {
            let a = self.services[self.unit_of(s, r)].station.period_areas();
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
                (0..svc.max_units())
                    .map(|r| {
                        let u = self.unit_of(s, r);
                        let areas = self.services[u].station.period_areas();
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

    /// Sends the request of `attempt` (on `edge`, or the client's) to `callee`: picks the replica
    /// through the caller's balancer, then delivers it at once, or after the network delay.
    /// Returns the admitted job when delivered at once.
    #[inline(always)]
    pub(in crate::model) fn send_to(
        &mut self,
        edge: u32,
        callee: usize,
        attempt: Handle,
        deadline: SimTime,
    ) -> Handle {
        // The request's class (its priority) travels with the request itself: the attempt may be
        // settled (timed out) before a delayed request arrives, and the callee still serves it.
        let class = if self.multi_class {
            self.attempts[attempt].class
        } else {
            0
        };
        let (balancer, latency) = if edge == CLIENT_EDGE {
            let c = &mut self.classes[class as usize];
            (&mut c.balancer, &mut c.latency)
        } else {
            let es = &mut self.edges[edge as usize];
            (&mut es.balancer, &mut es.latency)
        };
        let now = self.engine.now();
        let replica = match balancer {
            None => 0,
            Some(b) if self.autoscaling => {
                b.pick_at(now, crate::model::autoscale::serving(&self.scalers, callee))
            }
            Some(b) => b.pick_at(now, None),
        };
        let delay = latency.as_mut().map(|l| l.sampler.sample(&mut l.request));
        if replica != 0 {
            self.attempts[attempt].replica = replica as u16;
        }
        let unit = self.unit_of(callee, replica);
        match delay {
            Some(d) if !d.is_zero() => {
                self.engine.schedule_in(
                    d,
                    Event::Deliver {
                        attempt,
                        unit: unit as u32,
                        class,
                        deadline,
                    },
                );
                Handle::NONE
            }
            _ => self.deliver(callee as u32, unit, attempt, class, deadline),
        }
    }

    /// A request delayed by the network arrives; if its attempt is still open, it learns the job.
    pub(in crate::model) fn on_deliver(
        &mut self,
        attempt: Handle,
        unit: u32,
        class: u16,
        deadline: SimTime,
    ) {
        let s = self.services[unit as usize].service;
        let child = self.deliver(s, unit as usize, attempt, class, deadline);
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
        let latency = if a.edge == CLIENT_EDGE {
            &mut self.classes[a.class as usize].latency
        } else {
            &mut self.edges[a.edge as usize].latency
        };
        latency
            .as_mut()
            .map_or(SimDuration::ZERO, |l| l.sampler.sample(&mut l.reply))
    }

    /// An attempt to `replica` on `edge` (or the client of request class `class`) settled: the
    /// caller's balancer counts one outstanding request fewer there.
    #[inline]
    pub(in crate::model) fn balancer_settled(&mut self, edge: u32, replica: u16, class: u16) {
        let balancer = if edge == CLIENT_EDGE {
            &mut self.classes[class as usize].balancer
        } else {
            &mut self.edges[edge as usize].balancer
        };
        if let Some(b) = balancer {
            b.settled(replica as u32);
        }
    }
}
