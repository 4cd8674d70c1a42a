//! The regimes the capacity checks are made under: normal, or inside one fault's window (each
//! fault on its own), and what a service's slots and mean service time are in each. What a fault
//! changes is asked of the fault kind ([`crate::scenario::faults`]), never read from its fields.

use crate::scenario::{Dist, Scenario, ServiceId};

/// Under which service times the capacity checks are made: normal, or inside one fault window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
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
pub(super) fn slots_in(sc: &Scenario, s: ServiceId, r: Regime) -> u32 {
    let slots = sc.services[s].slots;
    match r {
        Regime::Fault(i) => sc.faults[i].kind.slots_of(s, slots),
        Regime::Normal => slots,
    }
}

/// The mean own work of `s` in regime `r`, in seconds (zero without own work).
fn own_mean(sc: &Scenario, s: ServiceId, r: Regime) -> f64 {
    if let Regime::Fault(i) = r
        && let Some(service_time) = sc.faults[i].kind.service_time_of(s)
    {
        return service_time.mean_secs();
    }
    sc.services[s]
        .service_time
        .as_ref()
        .map_or(0.0, Dist::mean_secs)
}

/// Lower bound of each service's mean service time (slot holding time) in regime `r`, seconds:
/// own mean work plus, per call, the callee's bound (one attempt, no queueing).
pub fn mean_service_time(sc: &Scenario, r: Regime) -> Vec<f64> {
    let mut hold = vec![0.0; sc.services.len()];
    for s in sc.topological_order().into_iter().rev() {
        let calls: f64 = sc.services[s]
            .calls
            .iter()
            .map(|&e| hold[sc.edges[e].callee])
            .sum();
        hold[s] = own_mean(sc, s, r) + calls;
    }
    hold
}
