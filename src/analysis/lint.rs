//! The policy linter behind `loadsim check`: what a scenario's policies imply before any run, as
//! pure functions over a validated [`Scenario`]. Four checks, after the article's §5 and §7:
//!
//! - **R1**, worst-case attempts per user request at each service ([`Scenario::worst_case_attempts`]).
//! - **Budget fit**: each call's worst case — attempts × attempt timeout + the longest backoff
//!   before each retry — against the time its caller *serves under* ([`serves_under`]).
//! - **Queue wait** (§7): `queue_cap` × mean service time / `slots` against the wait of the
//!   service's callers, normally and inside each fault window.
//! - **Load**: offered load × amplification against capacity (`slots` / mean service time).
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

use crate::scenario::{Dist, Edge, EdgeId, FaultKind, Scenario, ServiceId};
use crate::time::SimDuration;

/// How serious a finding is. Only warnings fail `loadsim check --deny-warnings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Worth knowing; nothing to fix.
    Note,
    /// A policy the article's rules reject; comes with a suggested fix.
    Warning,
}

/// Which check produced a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    Budget,
    Queue,
    Deadline,
    Load,
}

impl Check {
    /// The check's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Check::Budget => "budget",
            Check::Queue => "queue",
            Check::Deadline => "deadline",
            Check::Load => "load",
        }
    }
}

/// One finding: what, where (a service or an edge name), the numbers, and a fix for warnings.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub level: Level,
    pub check: Check,
    pub subject: String,
    pub message: String,
    pub fix: Option<String>,
}

/// Who sets the time a service serves under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waiter {
    /// The client's attempt timeout (the service is the entry).
    Client,
    /// The attempt timeout of this edge, into the service.
    Edge(EdgeId),
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
    out[sc.client.entry] = Some(ServesUnder {
        wait: sc.client.attempt_timeout,
        set_by: Waiter::Client,
        cut_by_deadline: false,
        deadline: sc.client.propagate_deadline,
    });
    for s in sc.topological_order() {
        let Some(caller) = out[s] else { continue };
        for &e in &sc.services[s].calls {
            let edge = &sc.edges[e];
            let wait = if caller.deadline {
                edge.attempt_timeout.min(caller.wait)
            } else {
                edge.attempt_timeout
            };
            let this = ServesUnder {
                wait,
                set_by: Waiter::Edge(e),
                cut_by_deadline: wait < edge.attempt_timeout,
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

/// The longest wait before retry `n` (0-based): `min(cap, base·2^n)`, the top of full jitter.
pub fn max_backoff(edge: &Edge, n: u32) -> SimDuration {
    let upper = edge
        .backoff
        .base
        .0
        .saturating_mul(1u64.checked_shl(n).unwrap_or(u64::MAX));
    SimDuration(edge.backoff.cap.map_or(upper, |c| upper.min(c.0)))
}

/// The longest one call on `edge` can take: every attempt times out, every backoff is maximal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallWorstCase {
    pub attempts: u32,
    pub timeout: SimDuration,
    /// The longest backoff before each retry.
    pub backoffs: Vec<SimDuration>,
    /// `attempts × timeout + Σ backoffs`.
    pub total: SimDuration,
}

/// The worst case of one call on `edge`.
pub fn call_worst_case(edge: &Edge) -> CallWorstCase {
    let backoffs: Vec<SimDuration> = (0..edge.retries).map(|n| max_backoff(edge, n)).collect();
    let attempts = edge.retries.saturating_add(1);
    let total = backoffs.iter().fold(
        SimDuration(edge.attempt_timeout.0.saturating_mul(attempts as u64)),
        |t, &b| t + b,
    );
    CallWorstCase {
        attempts,
        timeout: edge.attempt_timeout,
        backoffs,
        total,
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

/// The slots of `s` in regime `r`: fewer inside a `capacity` fault on it.
fn slots_in(sc: &Scenario, s: ServiceId, r: Regime) -> u32 {
    let slots = sc.services[s].slots;
    match r {
        Regime::Fault(i) => match sc.faults[i].kind {
            FaultKind::Capacity {
                service,
                slots: reduced,
            } if service == s => slots.min(reduced),
            _ => slots,
        },
        Regime::Normal => slots,
    }
}

/// The mean own work of `s` in regime `r`, in seconds (zero without own work).
fn own_mean(sc: &Scenario, s: ServiceId, r: Regime) -> f64 {
    // Only a slow fault changes the mean own work; the other kinds act on admission, slots or
    // arrivals.
    if let Regime::Fault(i) = r
        && let FaultKind::Slow {
            service,
            service_time,
        } = &sc.faults[i].kind
        && *service == s
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

/// For a service with calls, the longest one request holds a slot when every call times out:
/// normal mean own work + each call's worst case, the calls cut to the time the service serves
/// under when its requests carry a deadline (attempts are then cut to the time left). `None`
/// for a service without calls.
pub fn longest_hold(
    sc: &Scenario,
    s: ServiceId,
    u: &ServesUnder,
    normal_mean: &[f64],
) -> Option<f64> {
    let svc = &sc.services[s];
    if svc.calls.is_empty() {
        return None;
    }
    let calls: f64 = svc
        .calls
        .iter()
        .map(|&e| call_worst_case(&sc.edges[e]).total.as_secs_f64())
        .sum();
    let calls = if u.deadline {
        calls.min(u.wait.as_secs_f64())
    } else {
        calls
    };
    let own = normal_mean[s]
        - svc
            .calls
            .iter()
            .map(|&e| normal_mean[sc.edges[e].callee])
            .sum::<f64>();
    Some(own.max(0.0) + calls)
}

/// Requests per second a service completes at most: `slots` / mean service time (`None` when the
/// service does no work at all).
pub fn capacity(slots: u32, mean_service_s: f64) -> Option<f64> {
    (mean_service_s > 0.0).then(|| slots as f64 / mean_service_s)
}

/// Attempts per user request at each service when every call on an edge multiplies by
/// `edge_factor` and the client by `client_factor`: the sum over call paths of the products.
pub fn amplification(
    sc: &Scenario,
    client_factor: f64,
    edge_factor: impl Fn(&Edge) -> f64,
) -> Vec<f64> {
    let mut a = vec![0.0; sc.services.len()];
    a[sc.client.entry] = client_factor;
    for s in sc.topological_order() {
        for &e in &sc.services[s].calls {
            let edge = &sc.edges[e];
            a[edge.callee] += a[s] * edge_factor(edge);
        }
    }
    a
}

/// The attempts one call on `edge` makes in the long run while its attempts keep failing. Without
/// a throttle, every retry: `retries + 1`. With a gRFC A6 throttle a retry needs tokens above
/// half, each failure takes one and only successes give `token_ratio` back, so over any stretch
/// retries ≤ max_tokens/2 + token_ratio × successes ≤ max_tokens/2 + token_ratio × calls: in the
/// long run at most `1 + token_ratio` attempts per call.
pub fn sustained_factor(edge: &Edge) -> f64 {
    let all = edge.retries as f64 + 1.0;
    match edge.throttle {
        Some(t) => all.min(1.0 + t.ratio_milli as f64 / 1000.0),
        None => all,
    }
}

/// The budget of one call: its worst case against the time its caller serves under.
#[derive(Clone, Debug, PartialEq)]
pub struct CallBudget {
    pub edge: EdgeId,
    pub worst: CallWorstCase,
    /// What the caller serves under (`None` if the caller is unreachable).
    pub caller_serves_under: Option<ServesUnder>,
    /// Attempts that fit within that time.
    pub fit: Option<u32>,
}

/// The client's side: how long a user can wait in all.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientBudget {
    pub attempts: u32,
    pub timeout: SimDuration,
    pub interval: SimDuration,
    /// `attempts × timeout + retries × interval`.
    pub total: SimDuration,
}

/// Per service and regime: the §7 queue-wait bound.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueWait {
    pub service: ServiceId,
    /// `queue_cap × mean service time / slots` per regime, seconds; `None` for an unbounded queue.
    pub bound_s: Option<Vec<f64>>,
}

/// Per service: the load checks' numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    pub service: ServiceId,
    /// `slots / mean service time` per regime (an upper bound for services with calls).
    pub capacity: Vec<Option<f64>>,
    /// For a service with calls: the longest a slot is held when its calls time out, seconds
    /// ([`longest_hold`]), and `slots` / that.
    pub timeout_hold_s: Option<f64>,
    pub timeout_capacity: Option<f64>,
    /// Attempts per user request: first attempts only, under sustained failure, worst case (R1).
    pub first: f64,
    pub sustained: f64,
    pub worst: u64,
}

/// Everything `loadsim check` reports about one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Lint {
    pub client: ClientBudget,
    pub serves_under: Vec<Option<ServesUnder>>,
    pub calls: Vec<CallBudget>,
    pub regimes: Vec<Regime>,
    /// `[regime][service]`, seconds.
    pub mean_service_s: Vec<Vec<f64>>,
    pub queues: Vec<QueueWait>,
    pub loads: Vec<Load>,
    pub findings: Vec<Finding>,
}

impl Lint {
    /// Number of findings at `level`.
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }
}

/// Runs every check on `sc`.
pub fn lint(sc: &Scenario) -> Lint {
    let under = serves_under(sc);
    let reachable: Vec<ServiceId> = sc
        .topological_order()
        .into_iter()
        .filter(|&s| under[s].is_some())
        .collect();
    let regimes = regimes(sc);
    let mean: Vec<Vec<f64>> = regimes.iter().map(|&r| mean_service_time(sc, r)).collect();
    let client = ClientBudget {
        attempts: sc.client.retries.saturating_add(1),
        timeout: sc.client.attempt_timeout,
        interval: sc.client.retry_interval,
        total: SimDuration(
            sc.client
                .attempt_timeout
                .0
                .saturating_mul(sc.client.retries as u64 + 1)
                .saturating_add(
                    sc.client
                        .retry_interval
                        .0
                        .saturating_mul(sc.client.retries as u64),
                ),
        ),
    };
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
            &regimes,
            &mean,
            bound_s.as_deref(),
            &mut findings,
        );
        queues.push(QueueWait {
            service: s,
            bound_s,
        });
    }

    let first = amplification(sc, 1.0, |_| 1.0);
    let sustained = amplification(sc, sc.client.retries as f64 + 1.0, sustained_factor);
    let worst = sc.worst_case_attempts();
    let mut loads = Vec::new();
    for &s in &reachable {
        let Some(u) = under[s] else { continue };
        let hold = longest_hold(sc, s, &u, &mean[0]);
        let load = Load {
            service: s,
            capacity: mean
                .iter()
                .zip(&regimes)
                .map(|(m, &r)| capacity(slots_in(sc, s, r), m[s]))
                .collect(),
            timeout_hold_s: hold,
            timeout_capacity: hold.and_then(|h| capacity(sc.services[s].slots, h)),
            first: first[s],
            sustained: sustained[s],
            worst: worst[s],
        };
        load_findings(sc, &load, &u, &regimes, &mut findings);
        loads.push(load);
    }

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

/// Describes what a service serves under, e.g. `1s (client->gateway attempt timeout, no deadline)`.
pub fn describe_serves_under(sc: &Scenario, u: &ServesUnder) -> String {
    let by = match u.set_by {
        Waiter::Client => format!(
            "client->{} attempt timeout",
            sc.services[sc.client.entry].name
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

/// `3 × 1s + 10ms + 20ms + 40ms = 3.07s`.
pub fn describe_call(w: &CallWorstCase) -> String {
    let mut s = format!("{} × {}", w.attempts, show_duration(w.timeout));
    for b in &w.backoffs {
        s.push_str(&format!(" + {}", show_duration(*b)));
    }
    if w.attempts > 1 || !w.backoffs.is_empty() {
        s.push_str(&format!(" = {}", show_duration(w.total)));
    }
    s
}

/// The key that turns on deadline propagation into a service from `set_by`.
fn propagate_key(sc: &Scenario, set_by: Waiter) -> String {
    match set_by {
        Waiter::Client => "client.propagate_deadline: true".to_owned(),
        Waiter::Edge(e) => {
            let edge = &sc.edges[e];
            format!(
                "services.{}.calls.{}.propagate_deadline: true",
                sc.services[edge.caller].name, sc.services[edge.callee].name
            )
        }
    }
}

fn budget_findings(
    sc: &Scenario,
    e: EdgeId,
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

/// Largest `queue_cap` whose wait stays within `fraction` of `wait` in every regime.
fn cap_within(slots: u32, mean_s: f64, wait: SimDuration, fraction: f64) -> Option<u64> {
    (mean_s > 0.0).then(|| (fraction * wait.as_secs_f64() * slots as f64 / mean_s).floor() as u64)
}

fn queue_findings(
    sc: &Scenario,
    s: ServiceId,
    u: &ServesUnder,
    regimes: &[Regime],
    mean: &[Vec<f64>],
    bound_s: Option<&[f64]>,
    out: &mut Vec<Finding>,
) {
    let svc = &sc.services[s];
    let name = &svc.name;
    let worst_mean = mean.iter().map(|m| m[s]).fold(0.0, f64::max);
    let wait = show_duration(u.wait);
    let has_calls = !svc.calls.is_empty();
    let ge = if has_calls { "≥ " } else { "" };
    if svc.drop_expired && !u.deadline {
        out.push(Finding {
            level: Level::Warning,
            check: Check::Deadline,
            subject: name.clone(),
            message: format!(
                "`drop_expired` is set but requests reach {name} without a deadline, so it never drops anything"
            ),
            fix: Some(format!("set `{}`", propagate_key(sc, u.set_by))),
        });
    }
    match bound_s {
        None if svc.drop_expired && u.deadline => out.push(Finding {
            level: Level::Note,
            check: Check::Queue,
            subject: name.clone(),
            message: format!(
                "unbounded queue: expired requests are dropped at dequeue without work, but the queue can grow without limit and failures wait for the deadline ({wait})"
            ),
            fix: None,
        }),
        None => {
            let cap = cap_within(svc.slots, worst_mean, u.wait, 0.5);
            let mut fixes = Vec::new();
            if let Some(cap) = cap.filter(|&c| c > 0) {
                fixes.push(format!(
                    "set `services.{name}.queue_cap: {cap}` (its wait, {cap} × {ge}{} / {}, stays under half of {wait} in every regime)",
                    show_secs(worst_mean),
                    svc.slots
                ));
            }
            let mut deadline_fix = String::new();
            if !u.deadline {
                deadline_fix.push_str(&format!("set `{}` and ", propagate_key(sc, u.set_by)));
            }
            deadline_fix.push_str(&format!("set `services.{name}.drop_expired: true`"));
            fixes.push(deadline_fix);
            out.push(Finding {
                level: Level::Warning,
                check: Check::Queue,
                subject: name.clone(),
                message: format!(
                    "unbounded queue and nothing drops expired work: a backlog built in a fault is served after its callers (who wait {wait}) gave up, and keeps the service busy with dead work after the fault ends"
                ),
                fix: Some(fixes.join("; or ")),
            });
        }
        Some(bounds) => {
            let cap = svc.queue_cap.unwrap_or(0);
            for (i, (&r, &b)) in regimes.iter().zip(bounds).enumerate() {
                if i > 0 && mean[i][s] == mean[0][s] {
                    continue;
                }
                let arithmetic = format!(
                    "{cap} × {ge}{} / {} = {ge}{}",
                    show_secs(mean[i][s]),
                    svc.slots,
                    show_secs(b)
                );
                let when = regime_name(sc, r);
                if b >= u.wait.as_secs_f64() {
                    let fix = cap_within(svc.slots, worst_mean, u.wait, 0.5)
                        .filter(|&c| c > 0)
                        .map(|c| {
                            format!(
                                "set `services.{name}.queue_cap: {c}` (under half of {wait} in every regime), or add slots"
                            )
                        });
                    out.push(Finding {
                        level: Level::Warning,
                        check: Check::Queue,
                        subject: name.clone(),
                        message: format!(
                            "a full queue waits {arithmetic} {when}, not under the {wait} its callers wait: queued requests time out before they start"
                        ),
                        fix,
                    });
                } else if b >= 0.5 * u.wait.as_secs_f64() {
                    out.push(Finding {
                        level: Level::Note,
                        check: Check::Queue,
                        subject: name.clone(),
                        message: format!(
                            "a full queue waits {arithmetic} {when}, more than half of the {wait} its callers wait: little time is left for the work itself"
                        ),
                        fix: None,
                    });
                }
            }
        }
    }
}

fn load_findings(
    sc: &Scenario,
    load: &Load,
    u: &ServesUnder,
    regimes: &[Regime],
    out: &mut Vec<Finding>,
) {
    let s = load.service;
    let svc = &sc.services[s];
    let name = &svc.name;
    let offered = sc.rate * load.first;
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
                    Some(format!(
                        "raise `services.{name}.slots` above {}, or lower `arrivals.rate`",
                        (offered / cap * svc.slots as f64).ceil()
                    )),
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
    let sustained = sc.rate * load.sustained;
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

/// A duration for people: `300ms`, `0.5ms`, `4.07s`.
pub fn show_duration(d: SimDuration) -> String {
    show_secs(d.as_secs_f64())
}

/// Seconds for people: milliseconds below one second, seconds from there, at most 3 decimals.
pub fn show_secs(s: f64) -> String {
    if s == 0.0 {
        "0s".to_owned()
    } else if s < 1.0 {
        format!("{}ms", trim(s * 1e3))
    } else {
        format!("{}s", trim(s))
    }
}

/// A rate: `800/s`, `1320/s`, `12.5/s`.
pub fn show_rate(r: f64) -> String {
    format!("{}/s", crate::report::number::trimmed(r, 1))
}

/// An amplification factor: `48`, `3.3`.
pub fn show_factor(f: f64) -> String {
    trim(f)
}

/// At most three decimals, no trailing zeros.
fn trim(x: f64) -> String {
    crate::report::number::trimmed(x, 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Document;
    use std::path::Path;

    const MS: u64 = 1_000_000;

    fn scenario(yaml: &str) -> Scenario {
        let doc = Document::from_text(Path::new("t.yaml"), yaml).unwrap();
        Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{e}"))
    }

    fn shipped(name: &str) -> Scenario {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(format!("{name}.yaml"));
        Scenario::load(&p, &[], None).unwrap()
    }

    fn edge(sc: &Scenario, name: &str) -> EdgeId {
        sc.edges.iter().position(|e| e.name == name).unwrap()
    }

    fn warnings(l: &Lint, check: Check, subject: &str) -> usize {
        l.findings
            .iter()
            .filter(|f| f.level == Level::Warning && f.check == check && f.subject == subject)
            .count()
    }

    #[test]
    fn naive_budget_needs_4_07s_where_1s_is_waited() {
        let sc = shipped("naive");
        let l = lint(&sc);
        // svc_a->svc_b: 4 attempts × 1 s + max backoffs 10 + 20 + 40 ms = 4.07 s.
        let e = edge(&sc, "svc_a->svc_b");
        let w = call_worst_case(&sc.edges[e]);
        assert_eq!(w.attempts, 4);
        assert_eq!(
            w.backoffs,
            vec![
                SimDuration(10 * MS),
                SimDuration(20 * MS),
                SimDuration(40 * MS)
            ]
        );
        assert_eq!(w.total, SimDuration(4_070 * MS));
        // svc_a serves under gateway->svc_a's 1 s attempt timeout (no deadline reaches it):
        // 1 attempt fits (1 s ≤ 1 s), a second would need 1 s + 10 ms + 1 s.
        let under = serves_under(&sc)[sc.service_id("svc_a").unwrap()].unwrap();
        assert_eq!(under.wait, SimDuration(1_000 * MS));
        assert_eq!(under.set_by, Waiter::Edge(edge(&sc, "gateway->svc_a")));
        assert!(!under.deadline);
        assert_eq!(attempts_that_fit(&w, under.wait), 1);
        // Both retrying edges are flagged; the client is what users wait for: 3 × 1 s + 2 × 50 ms.
        assert_eq!(warnings(&l, Check::Budget, "svc_a->svc_b"), 1);
        assert_eq!(warnings(&l, Check::Budget, "gateway->svc_a"), 1);
        assert_eq!(l.client.total, SimDuration(3_100 * MS));
        // Unbounded queues without drop_expired at every service.
        for s in ["gateway", "svc_a", "svc_b"] {
            assert_eq!(warnings(&l, Check::Queue, s), 1, "{s}");
        }
        // svc_b: 16 slots / 20 ms = 800/s; under sustained failure 400/s × 3·4·4 = 19 200/s with
        // nothing to shed it.
        let b = sc.service_id("svc_b").unwrap();
        let load = l.loads.iter().find(|x| x.service == b).unwrap();
        assert!((load.capacity[0].unwrap() - 800.0).abs() < 1e-9);
        assert!((load.capacity[1].unwrap() - 80.0).abs() < 1e-9);
        assert_eq!(load.sustained, 48.0);
        // svc_a holds a slot up to its call's 4.07 s when svc_b times out (no deadline cuts it):
        // 128 / 4.07 s ≈ 31.4/s against 400/s × 3·4 = 4800/s. The gateway, with deadlines
        // (deadline_budget), up to min(1 × 1 s, 1 s) = 1 s: 512/s.
        let a = sc.service_id("svc_a").unwrap();
        let load = l.loads.iter().find(|x| x.service == a).unwrap();
        assert!((load.timeout_hold_s.unwrap() - 4.07).abs() < 1e-9);
        assert!((load.timeout_capacity.unwrap() - 128.0 / 4.07).abs() < 1e-9);
        let db = shipped("deadline_budget");
        let g = db.service_id("gateway").unwrap();
        let db_lint = lint(&db);
        let load = db_lint.loads.iter().find(|x| x.service == g).unwrap();
        assert_eq!(load.timeout_capacity, Some(512.0));
        assert_eq!(warnings(&l, Check::Load, "svc_b"), 1);
    }

    #[test]
    fn deadline_budget_fits_and_protected_queues_hold() {
        // deadline_budget: svc_a serves under min(gateway->svc_a 1 s, the client's 1 s deadline)
        // = 1 s; svc_a->svc_b: 3 × 300 ms + 10 ms + 20 ms = 930 ms ≤ 1 s. gateway->svc_a: 1 × 1 s
        // ≤ 1 s.
        let sc = shipped("deadline_budget");
        let l = lint(&sc);
        let e = edge(&sc, "svc_a->svc_b");
        assert_eq!(call_worst_case(&sc.edges[e]).total, SimDuration(930 * MS));
        assert_eq!(l.count(Level::Warning), 0, "{:#?}", l.findings);
        // Throttled svc_a->svc_b under sustained failure: min(3, 1 + 0.1) = 1.1 per call, so
        // svc_b sees 3 (client) × 1 × 1.1 = 3.3 attempts per user request.
        let b = sc.service_id("svc_b").unwrap();
        let load = l.loads.iter().find(|x| x.service == b).unwrap();
        assert!((load.sustained - 3.3).abs() < 1e-12);
        assert_eq!(load.worst, 9);

        // protected, §7: svc_b 16 × 20 ms / 16 = 20 ms normally, 16 × 200 ms / 16 = 200 ms in
        // slow_b, against svc_a->svc_b's 300 ms (more than half: a note). svc_a (no own work)
        // holds a slot ≥ svc_b's mean: 64 × 20 ms / 128 = 10 ms, 64 × 200 ms / 128 = 100 ms.
        let sc = shipped("protected");
        let l = lint(&sc);
        assert_eq!(l.count(Level::Warning), 0, "{:#?}", l.findings);
        let q = |name: &str| {
            let s = sc.service_id(name).unwrap();
            l.queues
                .iter()
                .find(|q| q.service == s)
                .unwrap()
                .bound_s
                .clone()
                .unwrap()
        };
        let (b, a) = (q("svc_b"), q("svc_a"));
        assert!(
            (b[0] - 0.020).abs() < 1e-12 && (b[1] - 0.200).abs() < 1e-12,
            "{b:?}"
        );
        assert!(
            (a[0] - 0.010).abs() < 1e-12 && (a[1] - 0.100).abs() < 1e-12,
            "{a:?}"
        );
        assert!(l.findings.iter().any(|f| f.level == Level::Note
            && f.check == Check::Queue
            && f.subject == "svc_b"
            && f.message.contains("in slow_b")));
    }

    #[test]
    fn deadline_flags_the_retries_the_deadline_cuts() {
        // deadline: svc_a->svc_b 4 × 300 ms + 10 + 20 + 40 ms = 1.27 s against a 1 s deadline:
        // 3 attempts fit (3 × 300 + 10 + 20 = 930 ms), the 4th would end at 1.27 s. The fix is
        // deadline_budget's `retries: 2`.
        let sc = shipped("deadline");
        let l = lint(&sc);
        let f = l
            .findings
            .iter()
            .find(|f| f.check == Check::Budget && f.subject == "svc_a->svc_b")
            .unwrap();
        assert!(f.message.contains("3 of them fit"), "{}", f.message);
        assert!(f.fix.as_deref().unwrap().contains("retries: 2"));
        // Expired work is dropped, so svc_b's 19 200/s of retries are shed: a note.
        assert_eq!(warnings(&l, Check::Load, "svc_b"), 0);
        assert_eq!(warnings(&l, Check::Queue, "svc_b"), 0);
    }

    #[test]
    fn deadlines_cut_the_wait_and_tightest_caller_wins() {
        // client (2 s, deadline) → a; a → c (5 s, propagated) and a → b (1 s, not propagated);
        // b → c (300 ms, propagated). a serves under 2 s; c is reached by a→c with min(5 s, 2 s)
        // = 2 s and by b→c with 300 ms (b has no deadline, so no cut): the tightest is 300 ms.
        // Both a→c and b→c propagate, so c's requests carry a deadline; a→b does not, so b's
        // do not.
        let sc = scenario(
            "duration: 1s\narrivals: { rate: 1 }\n\
             client: { entry: a, attempt_timeout: 2s, propagate_deadline: true }\n\
             services:\n  a:\n    slots: 1\n    calls:\n      c: { attempt_timeout: 5s, propagate_deadline: true }\n      b: { attempt_timeout: 1s }\n  b:\n    slots: 1\n    calls:\n      c: { attempt_timeout: 300ms, propagate_deadline: true }\n  c:\n    slots: 1\n    service_time: { dist: constant, value: 10ms }\n",
        );
        let u = serves_under(&sc);
        let (a, b, c) = (0, 1, 2);
        assert_eq!(u[a].unwrap().wait, SimDuration(2_000 * MS));
        assert_eq!(u[b].unwrap().wait, SimDuration(1_000 * MS));
        assert!(!u[b].unwrap().deadline);
        let uc = u[c].unwrap();
        assert_eq!(uc.wait, SimDuration(300 * MS));
        assert_eq!(uc.set_by, Waiter::Edge(edge(&sc, "b->c")));
        assert!(uc.deadline);
        // a→c: one 5 s attempt against a's 2 s: none fits, suggest a timeout below 2 s.
        let l = lint(&sc);
        let f = l
            .findings
            .iter()
            .find(|f| f.subject == "a->c" && f.check == Check::Budget)
            .unwrap();
        assert!(f.message.contains("not one attempt fits"), "{}", f.message);
        // Mean service times: c 10 ms; b ≥ 10 ms; a ≥ 10 ms (a→c) + 10 ms (a→b) = 20 ms.
        let m = mean_service_time(&sc, Regime::Normal);
        assert!((m[a] - 0.020).abs() < 1e-12 && (m[b] - 0.010).abs() < 1e-12);
    }

    #[test]
    fn fit_arithmetic() {
        // 3 attempts × 300 ms, backoff base 100 ms cap 150 ms: waits ≤ 100 ms, 150 ms.
        // Worst: 900 + 100 + 150 = 1150 ms. In 1 s: 300 | +100+300 = 700 | +150+300 = 1150 → 2.
        // A timeout that keeps 3 attempts in 1 s: (1000 − 250) / 3 = 250 ms.
        let sc = scenario(
            "duration: 1s\narrivals: { rate: 1 }\n\
             client: { entry: a, attempt_timeout: 1s }\n\
             services:\n  a:\n    slots: 1\n    calls:\n      b: { attempt_timeout: 300ms, retries: 2, backoff: { base: 100ms, cap: 150ms } }\n  b:\n    slots: 1\n    service_time: { dist: constant, value: 10ms }\n",
        );
        let w = call_worst_case(&sc.edges[0]);
        assert_eq!(w.total, SimDuration(1_150 * MS));
        assert_eq!(attempts_that_fit(&w, SimDuration(1_000 * MS)), 2);
        assert_eq!(attempts_that_fit(&w, SimDuration(1_150 * MS)), 3);
        assert_eq!(attempts_that_fit(&w, SimDuration(299 * MS)), 0);
        assert_eq!(
            timeout_that_fits(&w, SimDuration(1_000 * MS)),
            Some(SimDuration(250 * MS))
        );
        assert_eq!(timeout_that_fits(&w, SimDuration(200 * MS)), None);
        assert_eq!(describe_call(&w), "3 × 300ms + 100ms + 150ms = 1.15s");
    }

    #[test]
    fn queue_wait_over_the_timeout_is_a_warning_with_a_cap_that_fits() {
        // 4 slots, 100 ms mean, cap 50: 50 × 100 ms / 4 = 1.25 s ≥ the client's 1 s. A cap under
        // half of 1 s: 0.5 × 1 s × 4 / 100 ms = 20.
        let sc = scenario(
            "duration: 1s\narrivals: { rate: 1 }\n\
             client: { entry: a, attempt_timeout: 1s }\n\
             services:\n  a:\n    slots: 4\n    queue_cap: 50\n    service_time: { dist: exponential, mean: 100ms }\n",
        );
        let l = lint(&sc);
        assert!((l.queues[0].bound_s.as_ref().unwrap()[0] - 1.25).abs() < 1e-12);
        let f = l.findings.iter().find(|f| f.check == Check::Queue).unwrap();
        assert_eq!(f.level, Level::Warning);
        assert!(f.fix.as_deref().unwrap().contains("queue_cap: 20"));
        // Capacity 4 / 100 ms = 40/s against 1/s: no load finding.
        assert!(l.findings.iter().all(|f| f.check != Check::Load));
    }

    #[test]
    fn drop_expired_without_a_deadline_does_nothing() {
        let sc = scenario(
            "duration: 1s\narrivals: { rate: 1 }\n\
             client: { entry: a, attempt_timeout: 1s }\n\
             services:\n  a:\n    slots: 1\n    drop_expired: true\n    service_time: { dist: constant, value: 1ms }\n",
        );
        let l = lint(&sc);
        assert_eq!(warnings(&l, Check::Deadline, "a"), 1);
        let f = l
            .findings
            .iter()
            .find(|f| f.check == Check::Deadline)
            .unwrap();
        assert!(
            f.fix
                .as_deref()
                .unwrap()
                .contains("client.propagate_deadline: true")
        );
    }

    #[test]
    fn overload_without_fault_is_a_warning() {
        // 2 slots × 1 / 50 ms = 40/s against 100/s: raise slots above 100 / 40 × 2 = 5.
        let sc = scenario(
            "duration: 1s\narrivals: { rate: 100 }\n\
             client: { entry: a, attempt_timeout: 1s }\n\
             services:\n  a:\n    slots: 2\n    queue_cap: 1\n    service_time: { dist: constant, value: 50ms }\n",
        );
        let l = lint(&sc);
        let f = l.findings.iter().find(|f| f.check == Check::Load).unwrap();
        assert_eq!(f.level, Level::Warning);
        assert!(
            f.message.contains("100/s") && f.message.contains("40/s"),
            "{}",
            f.message
        );
        assert!(f.fix.as_deref().unwrap().contains("above 5"));
    }

    #[test]
    fn a_capacity_fault_cuts_capacity_in_its_window() {
        // 8 slots × 1 / 50 ms = 160/s normally; the fault leaves 2 slots: 2 / 50 ms = 40/s.
        let sc = scenario(
            "duration: 10s\narrivals: { rate: 100 }\n\
             client: { entry: a, attempt_timeout: 1s }\n\
             services:\n  a:\n    slots: 8\n    queue_cap: 4\n    service_time: { dist: constant, value: 50ms }\n\
             faults:\n  cut: { kind: capacity, service: a, slots: 2, from: 1s, duration: 2s }\n",
        );
        let l = lint(&sc);
        let load = l.loads.iter().find(|x| x.service == 0).unwrap();
        assert_eq!(load.capacity, vec![Some(160.0), Some(40.0)]);
        let f = l.findings.iter().find(|f| f.check == Check::Load).unwrap();
        assert!(
            f.message.contains("cut") && f.message.contains("40/s"),
            "{}",
            f.message
        );
    }

    #[test]
    fn numbers_print_short() {
        assert_eq!(show_duration(SimDuration(4_070 * MS)), "4.07s");
        assert_eq!(show_duration(SimDuration(300 * MS)), "300ms");
        assert_eq!(show_duration(SimDuration(500_000)), "0.5ms");
        assert_eq!(show_rate(19_200.0), "19200/s");
        assert_eq!(show_rate(128.0 / 0.93), "137.6/s");
        assert_eq!(show_factor(3.3000000000000003), "3.3");
    }
}
