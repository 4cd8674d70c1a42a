//! The load check: offered load × amplification against capacity (`slots` / mean service time),
//! normally and inside each fault window, with the slot holding time when calls time out. Owns
//! those bounds and the findings they give.

use super::budget::{ServesUnder, call_worst_case};
use super::regime::Regime;
use super::show::{show_factor, show_rate, show_secs};
use super::{Check, Finding, Level};
use crate::protections::throttle::sustained_attempts_per_call;
use crate::scenario::{ClassIx, ClientPolicy, Edge, RequestClass, Scenario, ServiceIx};

/// For a service with calls, the longest one request holds a slot when every call times out:
/// normal mean own work + its calls' worst cases ([`call_worst_case`], each ended by its
/// `call_timeout` if any) step by step — the longest of a parallel step, the sum of sequential
/// ones — cut to the time the service serves under when its requests carry a deadline (attempts
/// are then cut to the time left). `None` for a service without calls.
pub fn longest_hold(sc: &Scenario, s: ServiceIx, u: &ServesUnder) -> Option<f64> {
    let svc = &sc.services[s];
    if svc.calls.is_empty() {
        return None;
    }
    let worst = |k: u16| {
        call_worst_case(&sc.edges[svc.calls[k as usize]])
            .total
            .as_secs_f64()
    };
    let calls: f64 = svc
        .call_steps()
        .iter()
        .map(|step| step.iter().map(|&k| worst(k)).fold(0.0, f64::max))
        .sum();
    let calls = if u.deadline {
        calls.min(u.wait.as_secs_f64())
    } else {
        calls
    };
    Some(super::regime::own_mean(sc, s, Regime::Normal) + calls)
}

/// Attempts per user request at each service when every call on an edge multiplies by
/// `edge_factor` and a class's client by `client_factor`: the sum over call paths of the
/// products (a call with `probability` p counts p times: a mean), with several request classes
/// their mean weighted by each class's share of the rate.
pub fn amplification(
    sc: &Scenario,
    client_factor: impl Fn(&ClientPolicy) -> f64,
    edge_factor: impl Fn(&Edge) -> f64,
) -> Vec<f64> {
    let mut a = vec![0.0; sc.services.len()];
    let total = sc.rate();
    let order = sc.topological_order();
    let share = |class: &RequestClass| {
        if sc.has_classes() && total > 0.0 {
            class.arrivals.rate / total
        } else {
            1.0
        }
    };
    let propagate = |a: &mut [f64], class: Option<usize>| {
        for &s in &order {
            for &e in &sc.services[s].calls {
                let edge = &sc.edges[e];
                if class.is_none_or(|c| edge.taken_by(ClassIx::new(c))) {
                    a[edge.callee] += a[s] * edge_factor(edge) * edge.probability.unwrap_or(1.0);
                }
            }
        }
    };
    if sc.edges.iter().all(|e| e.classes.is_none()) {
        // Every class makes every call: one pass for all.
        for class in &sc.classes {
            a[class.client.entry] += share(class) * client_factor(&class.client);
        }
        propagate(&mut a, None);
        return a;
    }
    // Per class, through the calls it makes.
    for (c, class) in sc.classes.iter().enumerate() {
        let mut own = vec![0.0; sc.services.len()];
        own[class.client.entry] = share(class) * client_factor(&class.client);
        propagate(&mut own, Some(c));
        for (x, o) in a.iter_mut().zip(own) {
            *x += o;
        }
    }
    a
}

/// The attempts one call on `edge` makes in the long run while its attempts keep failing
/// ([`sustained_attempts_per_call`]: every retry, or `1 + token_ratio` under a gRFC A6 throttle).
pub fn sustained_factor(edge: &Edge) -> f64 {
    sustained_attempts_per_call(edge.retries, edge.throttle)
}

/// Per service: the load checks' numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// The service.
    pub service: ServiceIx,
    /// `slots / mean service time` per regime (an upper bound for services with calls).
    pub capacity: Vec<Option<f64>>,
    /// For a service with calls: the longest a slot is held when its calls time out, seconds
    /// ([`longest_hold`]), and `slots` / that.
    pub timeout_hold_s: Option<f64>,
    /// `slots / timeout_hold_s`, requests per second (`None` for a service without calls).
    pub timeout_capacity: Option<f64>,
    /// Attempts per user request: first attempts only, under sustained failure, worst case (R1).
    pub first: f64,
    /// Attempts per user request while every attempt fails (every retry, or A6's sustained rate).
    pub sustained: f64,
    /// Worst-case attempts per user request (R1).
    pub worst: u64,
}

pub(super) fn load_findings(
    sc: &Scenario,
    load: &Load,
    u: &ServesUnder,
    regimes: &[Regime],
    out: &mut Vec<Finding>,
) {
    let s = load.service;
    let svc = &sc.services[s];
    let name = &svc.name;
    let offered = sc.rate() * load.first;
    let sheds = svc.queue_cap.is_some() || (svc.drop_expired && u.deadline);
    for (i, &r) in regimes.iter().enumerate() {
        let Some(cap) = load.capacity[i] else {
            continue;
        };
        if i > 0 && load.capacity[i] == load.capacity[0] {
            continue;
        }
        if offered >= cap {
            let (level, message, fix) = if r == Regime::Normal {
                (
                    Level::Warning,
                    format!(
                        "overloaded without any fault: first attempts alone offer {} against a capacity of {}",
                        show_rate(offered),
                        show_rate(cap)
                    ),
                    Some(if let Some(a) = svc.autoscale {
                        format!(
                            "raise `services.{name}.autoscale.max_replicas` above {}, or lower `arrivals.rate`",
                            (offered / cap * a.max_replicas as f64).ceil()
                        )
                    } else if svc.replicas > 1 {
                        format!(
                            "raise `services.{name}.replicas` above {}, or lower `arrivals.rate`",
                            (offered / cap * svc.replicas as f64).ceil()
                        )
                    } else {
                        format!(
                            "raise `services.{name}.slots` above {}, or lower `arrivals.rate`",
                            (offered / cap * svc.slots as f64).ceil()
                        )
                    }),
                )
            } else {
                (
                    Level::Note,
                    format!(
                        "{} overloads it: first attempts alone offer {} against {}; requests fail inside the window, as the fault intends",
                        sc.faults[i - 1].name,
                        show_rate(offered),
                        show_rate(cap)
                    ),
                    None,
                )
            };
            out.push(Finding {
                level,
                check: Check::Load,
                subject: name.clone(),
                message,
                fix,
            });
        }
    }
    let sustained = sc.rate() * load.sustained;
    if let (Some(hold), Some(cap)) = (load.timeout_hold_s, load.timeout_capacity)
        && sustained > cap
    {
        out.push(Finding {
            level: Level::Note,
            check: Check::Load,
            subject: name.clone(),
            message: format!(
                "when its calls time out a request holds a slot up to {}, so it completes at most {} against up to {} offered under sustained failure: it stays saturated for as long as its calls keep failing",
                show_secs(hold),
                show_rate(cap),
                show_rate(sustained)
            ),
            fix: None,
        });
    }
    let Some(normal) = load.capacity[0] else {
        return;
    };
    if sustained > normal && offered < normal {
        let message = format!(
            "once requests fail, retries offer up to {} (×{} per user request) against a capacity of {} even with no fault",
            show_rate(sustained),
            show_factor(load.sustained),
            show_rate(normal)
        );
        if sheds {
            let how = if svc.queue_cap.is_some() {
                "its bounded queue rejects the excess fast"
            } else {
                "it drops expired requests at dequeue"
            };
            out.push(Finding {
                level: Level::Note,
                check: Check::Load,
                subject: name.clone(),
                message: format!("{message}; {how}, so the excess costs no work"),
                fix: None,
            });
        } else {
            out.push(Finding {
                level: Level::Warning,
                check: Check::Load,
                subject: name.clone(),
                message: format!(
                    "{message}, and nothing sheds it: an overload started by a fault can sustain itself after the fault ends"
                ),
                fix: Some(format!(
                    "retry in one place only (`retries: 0` on the other edges of the chain), throttle retries (`retry_throttle`), and shed dead work at {name} (`queue_cap`, or deadlines with `drop_expired`)"
                )),
            });
        }
    }
}
