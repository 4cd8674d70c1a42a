//! Replicas and the network between services. Owns the layout of replicas in the simulation's
//! per-replica state (replica 0 of service `s` at index `s`, so a scenario without replicas keeps
//! its layout, its streams and its cost; replicas 1.. of each service after all services), the
//! stream label of a replica (replica 0 keeps the service's own label, so `replicas: 1` is
//! byte-identical to before), picking the replica of each attempt through the caller's
//! [`Balancer`], the per-replica summary (`replica_stats`), and network delay (`latency` on a
//! call or the client: one draw for the request on `latency/<edge>/request`, one for the reply on
//! `latency/<edge>/reply`).

use super::dist::Sampler;
use super::slab::Handle;
use super::{CLIENT_EDGE, Event, ServiceState, Simulation};
use crate::metrics::levels::{LevelAreas, LevelSample};
use crate::metrics::summary::ReplicaMetrics;
use crate::protections::load_balancer::{Balancer, LoadBalancer};
use crate::protections::outlier::Detector;
use crate::rng::Stream;
use crate::scenario::{Dist, Edge, Scenario, ServiceId};
use crate::time::{SimDuration, SimTime};

/// Events network delay schedules per attempt sent over a hop with `latency`: the request's
/// delayed delivery (`Deliver`; none when the draw is zero; the reply's delay is folded into the
/// reply's own event). Summed by [`crate::guard::events_per_send`].
pub const EVENTS_PER_DELAYED_ATTEMPT: u32 = 1;

/// Per service: the index of its replica 1 in the per-replica state, and its replicas.
pub(super) type ReplicaBase = (u32, u32);

/// The per-replica layout of `sc`: `(service, replica)` per index, and per service its
/// [`ReplicaBase`].
pub(super) fn units(sc: &Scenario) -> (Vec<(usize, u32)>, Vec<ReplicaBase>) {
    let n = sc.services.len();
    let mut units: Vec<(usize, u32)> = (0..n).map(|s| (s, 0)).collect();
    let mut base = Vec::with_capacity(n);
    for (s, svc) in sc.services.iter().enumerate() {
        base.push((units.len() as u32, svc.max_units()));
        units.extend((1..svc.max_units()).map(|r| (s, r)));
    }
    (units, base)
}

/// The stream label of replica `r` of something labelled `label`: the label itself for replica
/// 0, `label/replica/<r>` for the others.
pub(super) fn replica_label(label: &str, r: u32) -> String {
    if r == 0 {
        label.to_owned()
    } else {
        format!("{label}/replica/{r}")
    }
}

/// A caller's balancer toward `callee`, if it has more than one replica; `name` labels its
/// stream (`lb/<name>`).
pub(super) fn balancer(
    sc: &Scenario,
    policy: LoadBalancer,
    callee: ServiceId,
    name: &str,
) -> Option<Balancer> {
    let replicas = sc.services[callee].max_units();
    (replicas > 1).then(|| {
        Balancer::new(
            policy,
            replicas,
            Stream::new(sc.seed, &format!("lb/{name}")),
        )
    })
}

/// A caller's balancer on edge `e` ([`balancer`]), with the edge's outlier detector if it has
/// `outlier_detection`.
pub(super) fn edge_balancer(sc: &Scenario, e: &Edge) -> Option<Balancer> {
    let b = balancer(sc, e.load_balancer, e.callee, &e.name)?;
    Some(match e.outlier_detection {
        Some(p) => b.with_outlier(Detector::new(p, sc.services[e.callee].max_units())),
        None => b,
    })
}

/// Network delay on one call (or the client): request and reply drawn from their own streams.
#[derive(Debug)]
pub(crate) struct Latency {
    sampler: Sampler,
    request: Stream,
    reply: Stream,
}

impl Latency {
    pub(super) fn new(seed: u64, dist: &Dist, name: &str) -> Self {
        Latency {
            sampler: Sampler::new(dist),
            request: Stream::new(seed, &format!("latency/{name}/request")),
            reply: Stream::new(seed, &format!("latency/{name}/reply")),
        }
    }
}

/// The time-series levels of service `s`, summed over its replicas: the areas are exact; the
/// peaks are the sum of each replica's peak in the bin (an upper bound of the service's peak).
/// With `each`, also each replica's areas, in replica order.
pub(super) fn sample_service(
    services: &mut [ServiceState],
    base: &[ReplicaBase],
    s: usize,
    at: SimTime,
    mut each: Option<&mut Vec<LevelAreas>>,
) -> LevelSample {
    let mut sample = services[s].station.sample(at);
    if let Some(e) = each.as_deref_mut() {
        e.push(sample.areas);
    }
    let (first, n) = base[s];
    for u in first..first + n - 1 {
        let x = services[u as usize].station.sample(at);
        if let Some(e) = each.as_deref_mut() {
            e.push(x.areas);
        }
        sample.areas.busy += x.areas.busy;
        sample.areas.queue += x.areas.queue;
        sample.busy_max += x.busy_max;
        sample.queue_max += x.queue_max;
    }
    sample
}

impl Simulation<'_> {
    /// The index of replica `r` of service `s` in the per-replica state.
    #[inline]
    pub(super) fn unit_of(&self, s: usize, r: u32) -> usize {
        if r == 0 {
            s
        } else {
            (self.replica_base[s].0 + r - 1) as usize
        }
    }

    /// Which replica of service `s` the unit `u` is (the inverse of [`Simulation::unit_of`]).
    pub(super) fn replica_index(&self, s: usize, u: usize) -> u32 {
        if u == s {
            0
        } else {
            u as u32 - self.replica_base[s].0 + 1
        }
    }

    /// Service `s`'s level integrals over the arrival period, summed over its replicas.
    pub(super) fn service_areas(&self, s: usize) -> LevelAreas {
        let mut areas = self.services[s].station.period_areas();
        for r in 1..self.replica_base[s].1 {
            let a = self.services[self.unit_of(s, r)].station.period_areas();
            areas.busy += a.busy;
            areas.queue += a.queue;
        }
        areas
    }

    /// Per service of more than one replica, its replicas' metrics.
    pub(super) fn replica_stats(&self) -> Vec<Vec<ReplicaMetrics>> {
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
    pub(super) fn send_to(
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
                b.pick_at(now, super::autoscale::serving(&self.scalers, callee))
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
    pub(super) fn on_deliver(&mut self, attempt: Handle, unit: u32, class: u16, deadline: SimTime) {
        let s = self.services[unit as usize].service;
        let child = self.deliver(s, unit as usize, attempt, class, deadline);
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.child = child;
        }
    }

    /// The network delay of the reply to `attempt` (zero without `latency`, or when the attempt
    /// is already settled: nobody waits for that reply).
    pub(super) fn reply_latency(&mut self, attempt: Handle) -> SimDuration {
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
    pub(super) fn balancer_settled(&mut self, edge: u32, replica: u16, class: u16) {
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
