//! The policy linter behind `loadsim check`: what a scenario's policies imply before any run, as
//! pure functions over a validated [`Scenario`]. Four checks, after the article's §5 and §7:
//!
//! - **R1**, worst-case attempts per user request at each service ([`Scenario::worst_case_attempts`]).
//! - **Budget fit**: each call's worst case — attempts × attempt timeout + the longest backoff
//!   before each retry — against the time its caller *serves under* ([`serves_under`]).
//! - **Queue wait** (§7): `queue_cap` × mean service time / `slots` against the wait of the
//!   service's callers, normally and inside each fault window.
//! - **Load**: offered load × amplification against capacity (`slots` / mean service time),
//!   summed over a service's replicas (a slow or capacity fault on some replicas changes only
//!   those: the sum is what a balancer that keeps every replica busy reaches at best); a
//!   `capacity` fault that leaves the service's `slots` as they are is a warning.
//!
//! One submodule per check — [`budget`](mod@budget), [`queue`](mod@queue), [`load`](mod@load) —
//! over the regimes of [`regime`](mod@regime) (normal, and each fault window); [`show`](mod@show)
//! words the numbers. This module runs them all ([`lint()`]) and holds the findings.
//!
//! Two bounds carry the arithmetic, both chosen so that a warning cannot be a false alarm:
//!
//! - *The time a service serves under* is the longest its callers can wait for one reply: the
//!   calling edge's attempt timeout, cut to the caller's own wait when the caller's requests
//!   carry a deadline (the attempt is then cut to the time left). With several callers, the
//!   tightest. It is an upper bound: queueing and own work upstream only shorten it.
//! - *The mean service time of a service with calls* is the mean time a slot is held, bounded
//!   below by its own mean work plus, per call, the callee's mean service time (one attempt that
//!   succeeds without queueing). So the capacity shown for such a service is an upper bound and
//!   its queue wait a lower bound.

mod autoscale;
pub mod budget;
pub mod contention;
pub mod finding;
pub mod limiter;
pub mod load;
pub mod queue;
pub mod regime;
pub mod show;
#[cfg(test)]
mod tests;

pub use budget::{
    CallBudget, CallWorstCase, ClientBudget, ServesUnder, Waiter, attempts_that_fit,
    call_worst_case, describe_call, describe_serves_under, serves_under, timeout_that_fits,
};
pub use finding::{Check, Finding, Level};
pub use load::{Load, amplification, longest_hold, sustained_factor};
pub use queue::QueueWait;
pub use regime::{Regime, capacity, mean_service_time, regime_name, regimes};
pub use show::{show_duration, show_factor, show_rate, show_secs};

use budget::budget_findings;
use load::load_findings;
use queue::queue_findings;
use regime::{fleet_capacity, fleet_slots_in, slots_in};

use crate::scenario::{Scenario, ServiceIx};
use crate::time::SimDuration;

/// Everything `loadsim check` reports about one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Lint {
    /// How long a user can wait in all (the most patient class's client).
    pub client: ClientBudget,
    /// Per service, the time it serves under (`None` for a service no request reaches).
    pub serves_under: Vec<Option<ServesUnder>>,
    /// Per call edge, its worst case against its caller's time.
    pub calls: Vec<CallBudget>,
    /// Normal, then each fault window: the regimes the capacity checks are made under.
    pub regimes: Vec<Regime>,
    /// `[regime][service]`, seconds.
    pub mean_service_s: Vec<Vec<f64>>,
    /// Per service, the queue-wait bound.
    pub queues: Vec<QueueWait>,
    /// Per service, the load checks' numbers.
    pub loads: Vec<Load>,
    /// Every warning and note, in the order found.
    pub findings: Vec<Finding>,
}

impl Lint {
    /// Number of findings at `level`.
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }
}

/// Priority at a service (`queue_discipline: priority`, `shed: priority`) orders and sheds by the
/// request classes' priorities: with one class, or classes of one priority, it does nothing.
fn priority_findings(sc: &Scenario, out: &mut Vec<Finding>) {
    let distinct = sc
        .classes
        .iter()
        .map(|c| c.priority)
        .collect::<std::collections::BTreeSet<i32>>()
        .len();
    if distinct > 1 {
        return;
    }
    for svc in &sc.services {
        let keys: Vec<&str> = [
            (svc.discipline == crate::scenario::QueueDiscipline::Priority)
                .then_some("queue_discipline: priority"),
            svc.shed_priority.then_some("shed: priority"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if keys.is_empty() {
            continue;
        }
        out.push(Finding {
            level: Level::Warning,
            check: Check::Queue,
            subject: svc.name.clone(),
            message: format!(
                "`{}` acts on request-class priorities, and every request here has the same \
                 priority: it changes nothing",
                keys.join("` and `")
            ),
            fix: Some(
                "declare request classes of different `priority` under `clients:` (docs/model.md \
                 §2.3.4), or remove the key"
                    .into(),
            ),
        });
    }
}

/// The worst case of one client: `attempts × timeout + retries × interval`, or its
/// `call_timeout` if shorter (a user request fails at its call timeout).
fn client_budget(class: usize, c: &crate::scenario::ClientPolicy) -> ClientBudget {
    let uncut = SimDuration(
        c.attempt_timeout
            .0
            .saturating_mul(c.retries as u64 + 1)
            .saturating_add(c.retry_interval.0.saturating_mul(c.retries as u64)),
    );
    ClientBudget {
        class,
        attempts: c.retries.saturating_add(1),
        timeout: c.attempt_timeout,
        interval: c.retry_interval,
        call_timeout: c.call_timeout.filter(|&ct| ct < uncut),
        total: c.call_timeout.map_or(uncut, |ct| uncut.min(ct)),
    }
}

/// Runs every check on `sc`.
pub fn lint(sc: &Scenario) -> Lint {
    let under = serves_under(sc);
    let reachable: Vec<ServiceIx> = sc
        .topological_order()
        .into_iter()
        .filter(|&s| under[s].is_some())
        .collect();
    let regimes = regimes(sc);
    let mean: Vec<Vec<f64>> = regimes.iter().map(|&r| mean_service_time(sc, r)).collect();
    // With several request classes, the most patient client's budget (the longest it waits).
    let client = sc
        .classes
        .iter()
        .enumerate()
        .map(|(i, class)| client_budget(i, &class.client))
        .max_by_key(|b| b.total)
        .expect("a scenario has a class");
    let mut findings = Vec::new();

    let mut calls = Vec::new();
    for &s in &reachable {
        for &e in &sc.services[s].calls {
            let worst = call_worst_case(&sc.edges[e]);
            let caller = under[s];
            let fit = caller.map(|c| attempts_that_fit(&worst, c.wait));
            if let (Some(c), Some(fit)) = (caller, fit) {
                budget_findings(sc, e, &worst, &c, fit, &mut findings);
            }
            calls.push(CallBudget {
                edge: e,
                worst,
                caller_serves_under: caller,
                fit,
            });
        }
    }

    let first = amplification(sc, |_| 1.0, |_| 1.0);
    let sustained = amplification(sc, |c| c.retries as f64 + 1.0, sustained_factor);
    let mut queues = Vec::new();
    for &s in &reachable {
        let Some(u) = under[s] else { continue };
        let svc = &sc.services[s];
        let bound_s = svc.queue_cap.map(|cap| {
            mean.iter()
                .zip(&regimes)
                .map(|(m, &r)| cap as f64 * m[s] / slots_in(sc, s, r) as f64)
                .collect::<Vec<f64>>()
        });
        queue_findings(
            sc,
            s,
            &u,
            (&regimes, &mean),
            bound_s.as_deref(),
            // Every attempt, at the fewest replicas, evenly spread.
            sc.rate() * sustained[s] / svc.min_units() as f64,
            &mut findings,
        );
        queues.push(QueueWait {
            service: s,
            bound_s,
        });
    }

    let worst = sc.worst_case_attempts();
    let mut loads = Vec::new();
    for &s in &reachable {
        let Some(u) = under[s] else { continue };
        let hold = longest_hold(sc, s, &u);
        let load = Load {
            service: s,
            capacity: mean
                .iter()
                .zip(&regimes)
                .map(|(m, &r)| fleet_capacity(sc, s, r, m[s]))
                .collect(),
            timeout_hold_s: hold,
            timeout_capacity: hold.and_then(|h| capacity(fleet_slots_in(sc, s, Regime::Normal), h)),
            first: first[s],
            sustained: sustained[s],
            worst: worst[s],
        };
        load_findings(sc, &load, &u, &regimes, &mut findings);
        loads.push(load);
    }

    for (s, svc) in sc.services.iter().enumerate() {
        if worst[s] == 0 {
            findings.push(Finding {
                level: Level::Warning,
                check: Check::Reach,
                subject: svc.name.clone(),
                message: format!(
                    "no user request can reach `{}`: neither the client's entry nor a call of a \
                     service the client reaches leads to it, so it never runs",
                    svc.name
                ),
                fix: Some(format!(
                    "remove `services.{}`, or call it from a service the client reaches",
                    svc.name
                )),
            });
        }
    }

    limiter::limiter_findings(sc, &under, &regimes, &mean, &mut findings);
    autoscale::autoscale_findings(sc, &loads, &mean[0], &mut findings);
    capacity_fault_findings(sc, &mut findings);
    priority_findings(sc, &mut findings);
    outlier_findings(sc, &mut findings);
    contention::contention_findings(sc, &mean[0], &first, &mut findings);
    findings.sort_by_key(|f| std::cmp::Reverse(f.level));
    Lint {
        client,
        serves_under: under,
        calls,
        regimes,
        mean_service_s: mean,
        queues,
        loads,
        findings,
    }
}

/// `outlier_detection` on a call to a service of one replica ejects nothing from a balancer (there
/// is none): say so.
fn outlier_findings(sc: &Scenario, out: &mut Vec<Finding>) {
    for e in sc.edges.iter().filter(|e| e.outlier_detection.is_some()) {
        let callee = &sc.services[e.callee];
        if callee.max_units() == 1 {
            out.push(Finding {
                level: Level::Warning,
                check: Check::Load,
                subject: e.name.clone(),
                message: format!(
                    "`outlier_detection` on `{}` does nothing: `{}` has one replica, so there is \
                     no other to send to",
                    e.name, callee.name
                ),
                fix: Some(format!(
                    "set `services.{}.replicas` above 1, or remove \
                     `services.{}.calls.{}.outlier_detection`",
                    callee.name, sc.services[e.caller].name, callee.name
                )),
            });
        }
    }
}

/// A `capacity` fault that leaves at least the service's `slots` changes nothing: say so.
fn capacity_fault_findings(sc: &Scenario, out: &mut Vec<Finding>) {
    for f in &sc.faults {
        let Some(s) = f.kind.wakes_at_end() else {
            continue;
        };
        let svc = &sc.services[s];
        if f.kind.slots_of(s, u32::MAX) >= svc.slots {
            out.push(Finding {
                level: Level::Warning,
                check: Check::Load,
                subject: svc.name.clone(),
                message: format!(
                    "capacity fault `{}` sets {} slots, not below the {} slots `{}` has (per replica): it changes nothing",
                    f.name,
                    f.kind.slots_of(s, u32::MAX),
                    svc.slots,
                    svc.name
                ),
                fix: Some(format!(
                    "set `faults.{}.slots` below {}",
                    f.name, svc.slots
                )),
            });
        }
    }
}
