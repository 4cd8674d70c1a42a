//! The budget check: each call's worst case — attempts × attempt timeout + the longest backoff
//! before each retry — against the time its caller *serves under* ([`serves_under`]), and the
//! client's own worst case. Owns those bounds, the findings they give, and their wording.

use super::show::show_duration;
use super::{Check, Finding, Level};
use crate::protections::retry::max_backoff;
use crate::scenario::{Edge, EdgeIx, Scenario};
use crate::time::SimDuration;

/// Who sets the time a service serves under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    /// The attempt timeout of this request class's client (the service is its entry).
    Client(usize),
    /// The attempt timeout of this edge, into the service.
    Edge(EdgeIx),
}

/// How long a service's callers wait for one of its replies, at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServesUnder {
    /// The longest wait of the tightest caller.
    pub wait: SimDuration,
    /// Whose attempt timeout gives `wait`.
    pub set_by: Waiter,
    /// `wait` is shorter than that attempt timeout: the caller's own deadline cuts it.
    pub cut_by_deadline: bool,
    /// Every request reaching the service carries a deadline (its calls are cut to fit, and
    /// `drop_expired` can act).
    pub deadline: bool,
}

/// For each service, the time it serves under; `None` for a service the client cannot reach.
pub fn serves_under(sc: &Scenario) -> Vec<Option<ServesUnder>> {
    let mut out: Vec<Option<ServesUnder>> = vec![None; sc.services.len()];
    // Several classes at one entry: the most patient sets the wait (its work may run that long),
    // and requests carry a deadline only if every class sends one.
    for (c, class) in sc.classes.iter().enumerate() {
        let client = &class.client;
        // An attempt is cut to the call timeout too (docs/model.md §2.6).
        let own = cut_to(client.attempt_timeout, client.call_timeout);
        let slot = &mut out[client.entry];
        match slot {
            Some(u) => {
                if own > u.wait {
                    u.wait = own;
                    u.set_by = Waiter::Client(c);
                }
                u.deadline &= client.propagate_deadline;
            }
            None => {
                *slot = Some(ServesUnder {
                    wait: own,
                    set_by: Waiter::Client(c),
                    cut_by_deadline: false,
                    deadline: client.propagate_deadline,
                })
            }
        }
    }
    for s in sc.topological_order() {
        let Some(caller) = out[s] else { continue };
        for &e in &sc.services[s].calls {
            let edge = &sc.edges[e];
            let own = cut_to(edge.attempt_timeout, edge.call_timeout);
            let wait = if caller.deadline {
                own.min(caller.wait)
            } else {
                own
            };
            let this = ServesUnder {
                wait,
                set_by: Waiter::Edge(e),
                cut_by_deadline: wait < own,
                deadline: edge.propagate_deadline,
            };
            out[edge.callee] = Some(match out[edge.callee] {
                None => this,
                Some(prev) => {
                    let tightest = if this.wait < prev.wait { this } else { prev };
                    ServesUnder {
                        deadline: prev.deadline && this.deadline,
                        ..tightest
                    }
                }
            });
        }
    }
    out
}

/// `timeout` cut to an optional bound (a call timeout).
fn cut_to(timeout: SimDuration, bound: Option<SimDuration>) -> SimDuration {
    bound.map_or(timeout, |b| timeout.min(b))
}

/// The longest one call on `edge` can take: every attempt times out, every backoff is maximal,
/// and the call timeout, if any, ends it (docs/model.md §2.6: attempts are cut to it, a retry
/// whose backoff would end past it is not sent, and the call fails at that instant).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallWorstCase {
    /// Attempts of the call: `retries + 1`.
    pub attempts: u32,
    /// The edge's attempt timeout.
    pub timeout: SimDuration,
    /// The longest backoff before each retry.
    pub backoffs: Vec<SimDuration>,
    /// The edge's `call_timeout`, when it is shorter than the attempts and backoffs.
    pub call_timeout: Option<SimDuration>,
    /// `attempts × timeout + Σ backoffs`, or the call timeout if shorter.
    pub total: SimDuration,
}

/// The worst case of one call on `edge`.
pub fn call_worst_case(edge: &Edge) -> CallWorstCase {
    let backoffs: Vec<SimDuration> = (0..edge.retries)
        .map(|n| max_backoff(&edge.backoff, n))
        .collect();
    let attempts = edge.retries.saturating_add(1);
    let uncut = backoffs.iter().fold(
        SimDuration(edge.attempt_timeout.0.saturating_mul(attempts as u64)),
        |t, &b| t + b,
    );
    let call_timeout = edge.call_timeout.filter(|&c| c < uncut);
    CallWorstCase {
        attempts,
        timeout: edge.attempt_timeout,
        backoffs,
        call_timeout,
        total: call_timeout.unwrap_or(uncut),
    }
}

/// How many attempts of `call` (with the longest backoffs between them) fit within `wait`.
pub fn attempts_that_fit(call: &CallWorstCase, wait: SimDuration) -> u32 {
    let mut used = SimDuration::ZERO;
    for n in 0..call.attempts {
        if n > 0 {
            used = used + call.backoffs[n as usize - 1];
        }
        used = used + call.timeout;
        if used > wait {
            return n;
        }
    }
    call.attempts
}

/// The largest attempt timeout, in whole milliseconds, that keeps every attempt of `call` and its
/// longest backoffs within `wait`; `None` when the backoffs alone use it up.
pub fn timeout_that_fits(call: &CallWorstCase, wait: SimDuration) -> Option<SimDuration> {
    let backoffs: u64 = call.backoffs.iter().map(|b| b.0).sum();
    let per = wait.0.checked_sub(backoffs)? / call.attempts as u64;
    let ms = per / 1_000_000;
    (ms > 0).then(|| SimDuration::from_millis(ms))
}

/// The budget of one call: its worst case against the time its caller serves under.
#[derive(Clone, Debug, PartialEq)]
pub struct CallBudget {
    /// The call edge.
    pub edge: EdgeIx,
    /// The longest one call on it can take.
    pub worst: CallWorstCase,
    /// What the caller serves under (`None` if the caller is unreachable).
    pub caller_serves_under: Option<ServesUnder>,
    /// Attempts that fit within that time.
    pub fit: Option<u32>,
}

/// The client's side: how long a user can wait in all.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientBudget {
    /// The request class whose client this is (the most patient, with several).
    pub class: usize,
    /// Attempts of one user request: the client's `retries + 1`.
    pub attempts: u32,
    /// The client's `attempt_timeout`.
    pub timeout: SimDuration,
    /// The client's `retry_interval`, the wait before each retry.
    pub interval: SimDuration,
    /// The client's `call_timeout`, when it is shorter than the attempts and intervals.
    pub call_timeout: Option<SimDuration>,
    /// `attempts × timeout + retries × interval`, or the call timeout if shorter.
    pub total: SimDuration,
}

/// Describes what a service serves under, e.g. `1s (client->gateway attempt timeout, no deadline)`.
pub fn describe_serves_under(sc: &Scenario, u: &ServesUnder) -> String {
    let by = match u.set_by {
        Waiter::Client(c) if sc.has_classes() => format!(
            "client->{} attempt timeout of class {}",
            sc.services[sc.classes[c].client.entry].name, sc.classes[c].name
        ),
        Waiter::Client(c) => format!(
            "client->{} attempt timeout",
            sc.services[sc.classes[c].client.entry].name
        ),
        Waiter::Edge(e) if u.cut_by_deadline => {
            format!(
                "{} attempt timeout cut to its caller's deadline",
                sc.edges[e].name
            )
        }
        Waiter::Edge(e) => format!("{} attempt timeout", sc.edges[e].name),
    };
    let deadline = if u.deadline {
        "with deadline"
    } else {
        "no deadline"
    };
    format!("{} ({by}, {deadline})", show_duration(u.wait))
}

/// `3 × 1s + 10ms + 20ms + 40ms = 3.07s`, or with a shorter call timeout `4 × 1s + … = 4.07s,
/// cut to the 1s call_timeout`.
pub fn describe_call(w: &CallWorstCase) -> String {
    let mut s = format!("{} × {}", w.attempts, show_duration(w.timeout));
    for b in &w.backoffs {
        s.push_str(&format!(" + {}", show_duration(*b)));
    }
    let uncut = w.backoffs.iter().fold(
        SimDuration(w.timeout.0.saturating_mul(w.attempts as u64)),
        |t, &b| t + b,
    );
    if w.attempts > 1 || !w.backoffs.is_empty() {
        s.push_str(&format!(" = {}", show_duration(uncut)));
    }
    if let Some(c) = w.call_timeout {
        s.push_str(&format!(", cut to the {} call_timeout", show_duration(c)));
    }
    s
}

/// The key that turns on deadline propagation into a service from `set_by`.
pub(super) fn propagate_key(sc: &Scenario, set_by: Waiter) -> String {
    match set_by {
        Waiter::Client(c) if sc.has_classes() => {
            format!("clients.{}.propagate_deadline: true", sc.classes[c].name)
        }
        Waiter::Client(_) => "client.propagate_deadline: true".to_owned(),
        Waiter::Edge(e) => {
            let edge = &sc.edges[e];
            format!(
                "services.{}.calls.{}.propagate_deadline: true",
                sc.services[edge.caller].name, sc.services[edge.callee].name
            )
        }
    }
}

pub(super) fn budget_findings(
    sc: &Scenario,
    e: EdgeIx,
    worst: &CallWorstCase,
    caller: &ServesUnder,
    fit: u32,
    out: &mut Vec<Finding>,
) {
    if worst.total <= caller.wait {
        return;
    }
    let edge = &sc.edges[e];
    let caller_name = &sc.services[edge.caller].name;
    let key = format!(
        "services.{caller_name}.calls.{}",
        sc.services[edge.callee].name
    );
    let after = if caller.deadline {
        "the deadline cuts the rest short or never sends them, yet each one sent still loads every service below"
    } else {
        "the rest run after the caller gave up, as wasted work"
    };
    let (message, mut fixes) = if fit == 0 {
        (
            format!(
                "the attempt timeout alone ({}) is longer than the {} {caller_name} serves under: not one attempt fits; worst case {}",
                show_duration(worst.timeout),
                show_duration(caller.wait),
                describe_call(worst)
            ),
            vec![format!(
                "set `{key}.attempt_timeout` below {}",
                show_duration(caller.wait)
            )],
        )
    } else {
        let mut fixes = vec![format!("set `{key}.retries: {}`", fit - 1)];
        fixes.push(format!(
            "bound the call with `{key}.call_timeout: {}`",
            show_duration(caller.wait)
        ));
        if let Some(t) = timeout_that_fits(worst, caller.wait)
            && worst.attempts > 1
        {
            fixes.push(format!(
                "keep {} attempts with `{key}.attempt_timeout: {}`",
                worst.attempts,
                show_duration(t)
            ));
        }
        (
            format!(
                "retries cannot fit inside the caller's deadline: {} attempts take up to {} but {caller_name} serves under {}; {fit} of them {}, {after}",
                worst.attempts,
                describe_call(worst),
                describe_serves_under(sc, caller),
                if fit == 1 { "fits" } else { "fit" },
            ),
            fixes,
        )
    };
    if !caller.deadline {
        fixes.push(format!(
            "propagate the deadline to {caller_name} (`{}`) so its calls stop when its caller stops waiting",
            propagate_key(sc, caller.set_by)
        ));
    }
    out.push(Finding {
        level: Level::Warning,
        check: Check::Budget,
        subject: edge.name.clone(),
        message,
        fix: Some(fixes.join("; or ")),
    });
}
