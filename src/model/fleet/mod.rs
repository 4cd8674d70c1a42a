//! Replicas and the network between services. Owns the layout of replicas in the simulation's
//! per-replica state (replica 0 of service `s` at index `s`, so a scenario without replicas keeps
//! its layout, its streams and its cost; replicas 1.. of each service after all services), the
//! stream label of a replica (replica 0 keeps the service's own label, so `replicas: 1` is
//! byte-identical to before), picking the replica of each attempt through the caller's
//! [`Balancer`], the per-replica summary (`replica_stats`), and network delay (`latency` on a
//! call or the client: one draw for the request on `latency/<edge>/request`, one for the reply on
//! `latency/<edge>/reply`).

mod sim;

use super::dist::Sampler;
use crate::ix::{ReplicaIx, ServiceIx, UnitIx};
use crate::metrics::levels::{LevelAreas, LevelSample};
use crate::protections::load_balancer::{Balancer, LoadBalancer};
use crate::protections::outlier::Detector;
use crate::rng::Stream;
use crate::scenario::{Dist, Edge, Scenario};

/// Events network delay schedules per attempt sent over a hop with `latency`: the request's
/// delayed delivery (`Deliver`; none when the draw is zero; the reply's delay is folded into the
/// reply's own event). Summed by [`crate::guard::events_per_send`].
pub const EVENTS_PER_DELAYED_ATTEMPT: u32 = 1;

/// Per service: the slot of its replica 1 in the per-replica state, and its replicas.
pub(super) type ReplicaBase = (UnitIx, u32);

/// The per-replica layout of `sc`: `(service, replica)` per slot, and per service its
/// [`ReplicaBase`].
pub(super) fn units(sc: &Scenario) -> (Vec<(ServiceIx, ReplicaIx)>, Vec<ReplicaBase>) {
    let n = sc.services.len();
    let mut units: Vec<(ServiceIx, ReplicaIx)> = (0..n)
        .map(|s| (ServiceIx::new(s), ReplicaIx::new(0)))
        .collect();
    let mut base = Vec::with_capacity(n);
    for (s, svc) in sc.services.iter().enumerate() {
        base.push((UnitIx::new(units.len()), svc.max_units()));
        units.extend((1..svc.max_units() as usize).map(|r| (ServiceIx::new(s), ReplicaIx::new(r))));
    }
    (units, base)
}

/// The stream label of replica `r` of something labelled `label`: the label itself for replica
/// 0, `label/replica/<r>` for the others.
pub(super) fn replica_label(label: &str, r: ReplicaIx) -> String {
    if r.index() == 0 {
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
    callee: ServiceIx,
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
/// `sample_unit(u)` samples the levels of the replica at index `u` of the per-replica state.
pub(super) fn sample_service(
    mut sample_unit: impl FnMut(UnitIx) -> LevelSample,
    base: &[ReplicaBase],
    s: ServiceIx,
    mut each: Option<&mut Vec<LevelAreas>>,
) -> LevelSample {
    let mut sample = sample_unit(UnitIx::new(s.index()));
    if let Some(e) = each.as_deref_mut() {
        e.push(sample.areas);
    }
    let (first, n) = base[s];
    for u in first.index()..first.index() + n as usize - 1 {
        let x = sample_unit(UnitIx::new(u));
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
