//! The regimes the capacity checks are made under: normal, or inside one fault's window (each
//! fault on its own), and what a service's slots and mean service time are in each. What a fault
//! changes is asked of the fault kind ([`crate::scenario::faults`]), never read from its fields.

use crate::scenario::{ClassIx, Dist, ReplicaIx, Scenario, ServiceIx};

/// Under which service times the capacity checks are made: normal, or inside one fault window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// No fault in force.
    Normal,
    /// Inside the window of `faults[i]` (each fault on its own).
    Fault(usize),
}

/// All regimes of `sc`: normal, then one per fault.
pub fn regimes(sc: &Scenario) -> Vec<Regime> {
    std::iter::once(Regime::Normal)
        .chain((0..sc.faults.len()).map(Regime::Fault))
        .collect()
}

/// The name of a regime in reports.
pub fn regime_name(sc: &Scenario, r: Regime) -> String {
    match r {
        Regime::Normal => "normal".to_owned(),
        Regime::Fault(i) => format!("in {}", sc.faults[i].name),
    }
}

/// The slots of `s` in regime `r`: fewer inside a fault that limits them.
pub(super) fn slots_in(sc: &Scenario, s: ServiceIx, r: Regime) -> u32 {
    let slots = sc.services[s].slots;
    match r {
        Regime::Fault(i) => sc.faults[i].kind.slots_of(s, slots),
        Regime::Normal => slots,
    }
}

/// The slots of all replicas of `s` together in regime `r`, at the most replicas it may have
/// (`autoscale.max_replicas` when autoscaled): a capacity fault limits only the replicas it acts
/// on. Saturates at `u32::MAX`.
pub(super) fn fleet_slots_in(sc: &Scenario, s: ServiceIx, r: Regime) -> u32 {
    let svc = &sc.services[s];
    ReplicaIx::first(svc.max_units() as usize)
        .map(|k| match r {
            Regime::Fault(i) if sc.faults[i].acts_on_replica(k) => {
                sc.faults[i].kind.slots_of(s, svc.slots) as u64
            }
            _ => svc.slots as u64,
        })
        .sum::<u64>()
        .min(u32::MAX as u64) as u32
}

/// Requests per second a service completes at most: `slots` / mean service time (`None` when the
/// service does no work at all).
pub fn capacity(slots: u32, mean_service_s: f64) -> Option<f64> {
    (mean_service_s > 0.0).then(|| slots as f64 / mean_service_s)
}

/// The capacity of all replicas of `s` together in regime `r`, requests per second, given `hold`,
/// the service's mean service time there ([`mean_service_time`]): each replica's slots over its
/// own mean service time (a slow fault on some replicas slows only those), summed over the most
/// replicas it may have (an autoscaler's `max_replicas`) — what a balancer that keeps every
/// replica busy reaches at best, an upper bound.
pub(super) fn fleet_capacity(sc: &Scenario, s: ServiceIx, r: Regime, hold: f64) -> Option<f64> {
    let svc = &sc.services[s];
    let Regime::Fault(i) = r else {
        return capacity(fleet_slots_in(sc, s, r), hold);
    };
    let f = &sc.faults[i];
    let Some(slow) = f.kind.service_time_of(s) else {
        return capacity(fleet_slots_in(sc, s, r), hold);
    };
    // `hold` blends the slow share in; take it out to get the calls' part back.
    let normal = svc.service_time.as_ref().map_or(0.0, Dist::mean_secs);
    let calls = hold - own_mean(sc, s, r);
    let frac = f.kind.slow_fraction();
    let per_replica = |k: ReplicaIx| {
        let own = if f.acts_on_replica(k) {
            frac * slow.mean_secs() + (1.0 - frac) * normal
        } else {
            normal
        };
        capacity(svc.slots, calls + own)
    };
    ReplicaIx::first(svc.max_units() as usize)
        .map(per_replica)
        .sum()
}

/// The mean own work of `s` in regime `r`, in seconds (zero without own work). A slow fault on
/// `k` of `n` replicas, or with a `fraction` f, makes a share k·f/n of the work slow (work spread
/// evenly over the replicas, as round robin spreads it): the mean blends the two.
pub(super) fn own_mean(sc: &Scenario, s: ServiceIx, r: Regime) -> f64 {
    let normal = sc.services[s]
        .service_time
        .as_ref()
        .map_or(0.0, Dist::mean_secs);
    if let Regime::Fault(i) = r
        && let Some(service_time) = sc.faults[i].kind.service_time_of(s)
    {
        let f = &sc.faults[i];
        let n = sc.services[s].replicas;
        let hit = ReplicaIx::first(n as usize)
            .filter(|&k| f.acts_on_replica(k))
            .count() as f64;
        let share = f.kind.slow_fraction() * hit / n as f64;
        if share >= 1.0 {
            return service_time.mean_secs();
        }
        return share * service_time.mean_secs() + (1.0 - share) * normal;
    }
    normal
}

/// Lower bound of each service's mean service time (slot holding time) in regime `r`, seconds:
/// own mean work plus, per call, the callee's bound (one attempt, no queueing).
pub fn mean_service_time(sc: &Scenario, r: Regime) -> Vec<f64> {
    let mut hold = vec![0.0; sc.services.len()];
    let mix = class_mix(sc);
    for s in sc.topological_order().into_iter().rev() {
        // A call taken with `probability` p adds p × the callee's time (its mean), a call made by
        // some classes only their share of the service's requests; a parallel stage of `stages`
        // adds its longest call (the mean of a maximum is at least that), and so does the
        // `parallel: true` shorthand.
        let svc = &sc.services[s];
        let call = |k: usize| {
            let e = &sc.edges[svc.calls[k]];
            let by_class = match (&mix, &e.classes) {
                (Some(mix), Some(cs)) => {
                    let all: f64 = mix.iter().map(|m| m[s]).sum();
                    let listed: f64 = cs.iter().map(|&c| mix[c][s]).sum();
                    if all > 0.0 { listed / all } else { 0.0 }
                }
                _ => 1.0,
            };
            by_class * e.probability.unwrap_or(1.0) * hold[e.callee]
        };
        let calls: f64 = svc
            .call_steps()
            .iter()
            .map(|step| step.iter().map(|&k| call(k as usize)).fold(0.0, f64::max))
            .sum();
        hold[s] = own_mean(sc, s, r) + calls;
    }
    hold
}

/// With calls made by some classes only: per class, its requests' first attempts per second at
/// each service (through the calls it makes, a call with `probability` p counting p times).
fn class_mix(sc: &Scenario) -> Option<Vec<Vec<f64>>> {
    if sc.edges.iter().all(|e| e.classes.is_none()) {
        return None;
    }
    let order = sc.topological_order();
    let mix = sc
        .classes
        .iter()
        .enumerate()
        .map(|(c, class)| {
            let mut a = vec![0.0; sc.services.len()];
            a[class.client.entry] = class.arrivals.rate;
            for &s in &order {
                for &e in &sc.services[s].calls {
                    let edge = &sc.edges[e];
                    if edge.taken_by(ClassIx::new(c)) {
                        a[edge.callee] += a[s] * edge.probability.unwrap_or(1.0);
                    }
                }
            }
            a
        })
        .collect();
    Some(mix)
}
