//! Refusals of input that is well formed but unreasonable to act on: the resource model. Owns
//! [`admit`], the one entry point every command that runs simulations calls with each scenario
//! before it runs (it refuses no request, too many events or too much memory, and returns the
//! [`RunOptions`] the run is held to while it runs), and the checks that run after a scenario
//! validated and before any simulated second: a scenario whose event count could
//! take hours ([`check_event_budget`], raised by `--max-events`), a sweep grid too large to start
//! without `--yes` ([`check_cell_limit`]; for a shard, its own cells count), a boundary search too
//! long to start without `--yes` ([`check_run_limit`]), and work whose results would not fit the
//! memory budget ([`check_memory`], raised by `--max-memory`, default
//! [`crate::model::DEFAULT_MAX_MEMORY`]): time series (bins × series × scenarios ×
//! [`BYTES_PER_SERIES_VALUE`]), boundary probes (runs × [`BYTES_PER_PROBE`]) and sweep cells
//! (cells × [`bytes_per_cell`]). (Output paths are
//! checked before anything runs by [`crate::runner::OutputPlan`].) Each refusal is a
//! [`ConfigError`] (exit code 2) that says what to change.
//!
//! The event bound is an upper bound, not a forecast: per user request one arrival event, and per
//! attempt that can reach a service at most five events (the caller's timeout timer, the reply,
//! the caller's retry timer, the caller's hedge timer and the service's end of own work) and a
//! sixth, its delayed delivery, in a scenario with network `latency`, times R1, the worst-case
//! attempts per user request at each service; plus the events no request causes
//! ([`fixed_events`]): one per fault whose end wakes a service (a capacity fault), and per
//! autoscaled service its evaluations (one each `interval` before the end of arrivals) and the
//! end of each replica's warm-up (at most `max_replicas` per evaluation). An AWS `aws_adaptive`
//! call's wait for a token (one per held send: it reserves its token) takes the place of the
//! hedge timer (such a call cannot hedge). The number of user requests is the arrival rate
//! integrated over the arrival period, surges included where they are in force
//! ([`crate::scenario::rate::RatePlan::expected_arrivals`]). A scenario that passes this check
//! cannot hit the run-time ceiling of [`crate::model::RunOptions::max_events`] except through
//! Poisson fluctuation of the number of user requests.

use std::path::Path;

use crate::config::ConfigError;
use crate::model::{self, DEFAULT_MAX_EVENTS_PER_INSTANT, RecordBytes, RunError, RunOptions};
use crate::protections::{hedge, retry, timeout};
use crate::scenario::dist::Shape;
use crate::scenario::rate::RatePlan;
use crate::scenario::{ArrivalProcess, ClassIx, Dist, EdgeIx, Scenario, ServiceIx};
use crate::time::{SimDuration, SimTime};

/// The resource model's one entry point, for every command that runs a simulation (`run`,
/// `run --seeds`, `sweep`, `boundary`, `tune`, `test`): refuses `sc` (read from `file`) before
/// it runs when it expects no user request ([`check_requests`]), when its event bound exceeds
/// `limits.max_events` ([`check_event_budget`]) or its memory estimate `limits.max_memory`
/// ([`check_run_memory`]), and returns the options the run is held to while it runs: the same
/// event and memory limits, and the most events at one simulated instant
/// ([`events_per_instant_bound`]).
pub fn admit(sc: &Scenario, file: &Path, limits: RunOptions) -> Result<RunOptions, ConfigError> {
    check_requests(sc, file)?;
    check_events(sc, file, limits)?;
    check_run_memory(sc, file, limits.max_memory)?;
    Ok(limits_for(sc, limits))
}

/// The options a run of `sc` (already admitted, maybe with another seed) is held to under the
/// command's `limits`: those, with the most events at one simulated instant of `sc`.
pub fn limits_for(sc: &Scenario, limits: RunOptions) -> RunOptions {
    RunOptions {
        max_events_per_instant: events_per_instant_bound(sc),
        ..limits
    }
}

/// Refuses a scenario that expects fewer than one user request over its arrival period (a think
/// time longer than the run, a surge factor of 1e-300 over all of it, a tiny rate), unless it
/// says `allow_no_requests: true`. A run that still ends with none stops with
/// [`crate::model::RunError::NoRequests`].
pub fn check_requests(sc: &Scenario, file: &Path) -> Result<(), ConfigError> {
    if sc.allow_no_requests {
        return Ok(());
    }
    let expected = expected_requests(sc);
    let closed_late = sc.classes.iter().all(|c| match &c.arrivals.closed {
        Some(cl) if c.arrivals.process == ArrivalProcess::Closed => {
            least(&cl.think_time) >= sc.duration
        }
        _ => false,
    });
    if expected >= 1.0 && !closed_late {
        return Ok(());
    }
    let why = if closed_late {
        format!(
            "every closed-loop user thinks at least `duration` ({}) before its first request",
            sc.duration
        )
    } else {
        format!(
            "it expects {} user requests over `duration` ({}), fewer than one",
            crate::util::number::trimmed(expected, 3),
            sc.duration
        )
    };
    Err(ConfigError::file(
        file,
        format!(
            "no user request would arrive: {why}; raise `arrivals.rate` or `duration`, shorten \
             `think_time`, or set `allow_no_requests: true` if a run without requests is intended"
        ),
    ))
}

/// The least value `d` can draw.
fn least(d: &Dist) -> SimDuration {
    let shape_least = match d.shape {
        Shape::Constant { value } => value,
        Shape::Uniform { min, .. } | Shape::Pareto { min, .. } => min,
        _ => SimDuration::ZERO,
    };
    // Rounded down: the least draw is never overstated.
    SimDuration((shape_least.0 as f64 * d.scale).floor() as u64)
}

/// Most events a run of `sc` may process at one simulated instant before it counts as stalled:
/// [`DEFAULT_MAX_EVENTS_PER_INSTANT`], or more when every closed-loop user and every row of a
/// trace could arrive at one instant and each cause its most events
/// ([`events_per_user_bound`]).
pub fn events_per_instant_bound(sc: &Scenario) -> u64 {
    let at_once: f64 = sc
        .classes
        .iter()
        .map(|c| {
            c.arrivals.closed.as_ref().map_or(0.0, |cl| cl.users as f64)
                + c.arrivals.trace.as_ref().map_or(0.0, |t| t.len() as f64)
        })
        .sum();
    let bound = at_once * events_per_user_bound(sc) + fixed_events(sc);
    (DEFAULT_MAX_EVENTS_PER_INSTANT as f64)
        .max(bound)
        .min(u64::MAX as f64) as u64
}

/// What a run of `sc` is estimated to hold at its peak (see [`run_memory_estimate`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryEstimate {
    /// Pending events: the timeout timer of every first attempt stays queued for its whole
    /// length (a settled attempt's timer is dropped only when it comes due), so at least
    /// `rate × min(attempt_timeout, duration + drain)` per client and call.
    pub events: f64,
    /// Jobs held in unbounded queues: where first attempts arrive faster than the service's
    /// capacity (`slots × replicas / mean service time`), the backlog grows by the difference
    /// for the whole arrival period (a fluid estimate).
    pub jobs: f64,
    /// Bytes: events, and each held job with its attempt ([`RecordBytes`]).
    pub bytes: f64,
}

/// Estimates the peak memory of a run of `sc` from its rates, timeouts and capacities: what it
/// must hold even if every request is served as fast as the model allows. Not an upper bound
/// (retries and hedges add to it; the run-time check of [`RunOptions::max_memory`] is the bound),
/// but a run above it cannot stay under the limit.
pub fn run_memory_estimate(sc: &Scenario) -> MemoryEstimate {
    let secs = sc.duration.as_secs_f64();
    let horizon = sc.duration + sc.drain;
    let held = |timeout: SimDuration| timeout.min(horizon).as_secs_f64();
    // First attempts per second reaching each service (no retries, no hedges).
    let mut visits = vec![0.0f64; sc.services.len()];
    let mut events = 0.0;
    let order = sc.topological_order();
    for (c, class) in sc.classes.iter().enumerate() {
        let rate = RatePlan::new(&class.arrivals, &sc.faults).expected_arrivals(sc.duration)
            / secs.max(1e-9);
        let mut per = vec![0.0f64; sc.services.len()];
        per[class.client.entry] = rate;
        events += rate * held(class.client.attempt_timeout);
        for &s in &order {
            for &e in &sc.services[s].calls {
                let edge = &sc.edges[e];
                if !edge.taken_by(ClassIx::new(c)) {
                    continue;
                }
                let sent = per[s] * edge.probability.unwrap_or(1.0);
                events += sent * held(edge.attempt_timeout);
                per[edge.callee] += sent;
            }
        }
        for (v, p) in visits.iter_mut().zip(per) {
            *v += p;
        }
    }
    let jobs: f64 = sc
        .services
        .iter()
        .zip(&visits)
        .filter(|(s, _)| s.queue_cap.is_none())
        .map(|(s, &arriving)| {
            let mean = s.service_time.as_ref().map_or(0.0, |d| d.mean_secs());
            let capacity = if mean > 0.0 {
                s.slots as f64 * s.max_units() as f64 / mean
            } else {
                f64::INFINITY
            };
            (arriving - capacity).max(0.0) * secs
        })
        .sum();
    let b = RecordBytes::of(sc);
    MemoryEstimate {
        events,
        jobs,
        bytes: events * b.event as f64 + jobs * (b.job + b.attempt) as f64,
    }
}

/// Refuses a scenario whose memory estimate ([`run_memory_estimate`]) exceeds `max_memory`
/// (`--max-memory`); `file` names it in the message.
pub fn check_run_memory(sc: &Scenario, file: &Path, max_memory: u64) -> Result<(), ConfigError> {
    let m = run_memory_estimate(sc);
    if m.bytes <= max_memory as f64 {
        return Ok(());
    }
    Err(ConfigError::file(
        file,
        format!(
            "this run would hold about {:.3e} pending events (each attempt's timeout timer stays \
             queued for its length) and {:.3e} queued jobs (arrivals above capacity at services \
             without `queue_cap`): about {} of memory, above the limit of {}; bound the queues \
             (`queue_cap`), shorten the timeouts, `duration` or `arrivals.rate`, or raise \
             --max-memory if the machine has the memory",
            m.events,
            m.jobs,
            show_bytes(m.bytes.min(u64::MAX as f64) as u64),
            show_bytes(max_memory)
        ),
    ))
}

/// Parses a count like `2000000000`, `2e9` or `1.5e10` (`--max-events`): a whole number, in
/// scientific notation if wished.
pub fn parse_count(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(n);
    }
    let bad =
        || format!("`{text}` is not a count; write a whole number like `2000000000` or `2e9`");
    let v: f64 = t.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 || v.fract() != 0.0 || v > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(v as u64)
}

/// Largest sweep grid that runs without `--yes`.
pub const MAX_CELLS_WITHOUT_YES: u64 = 1_000;
/// Largest sweep grid at all: every cell is expanded and validated in memory before any runs.
pub const MAX_CELLS: u64 = 1_000_000;

/// What one hop — the client's attempts at its entry service, or one call edge — has configured
/// that schedules events for each attempt sent on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hop {
    /// `retries` above 0: a wait before the next attempt.
    pub retries: bool,
    /// `hedge`: the hedge timer.
    pub hedge: bool,
    /// Events the hop's gates declare per attempt: the edge gate's guards
    /// ([`crate::model::gate::EdgeGate::events_per_attempt`]; the AWS adaptive limiter's wait for
    /// a token) and the callee's service gate ([`crate::model::gate::ServiceGate::events_per_request`]).
    pub gated: u32,
    /// Network `latency`: the request's delayed delivery.
    pub delayed: bool,
    /// The callee has own work (a `service_time`, or a `slow` fault on it): its end.
    pub callee_works: bool,
}

impl Hop {
    /// The client hop of request class `class` of `sc`.
    pub fn client(sc: &Scenario, class: usize) -> Hop {
        let client = &sc.classes[class].client;
        Hop {
            retries: client.retries > 0,
            hedge: false,
            gated: model::gate::service_events_per_request(&sc.services[client.entry]),
            delayed: client.latency.is_some(),
            callee_works: has_own_work(sc, client.entry),
        }
    }

    /// The hop of call edge `e` of `sc`.
    pub fn edge(sc: &Scenario, e: EdgeIx) -> Hop {
        let edge = &sc.edges[e];
        Hop {
            retries: edge.retries > 0,
            hedge: edge.hedge.is_some(),
            gated: model::gate::edge_events_per_attempt(sc, edge)
                + model::gate::service_events_per_request(&sc.services[edge.callee]),
            delayed: edge.latency.is_some(),
            callee_works: has_own_work(sc, edge.callee),
        }
    }
}

/// Whether service `s` of `sc` can draw own work: a `service_time`, or a `slow` fault on it.
fn has_own_work(sc: &Scenario, s: ServiceIx) -> bool {
    sc.services[s].service_time.is_some()
        || sc
            .faults
            .iter()
            .any(|f| f.kind.service_time_of(s).is_some())
}

/// Most events one attempt sent on `hop` can schedule: the sum of what each part configured
/// there declares beside its mechanism — the attempt's timeout timer
/// ([`timeout::EVENTS_PER_ATTEMPT`]), the callee's reply ([`model::EVENTS_PER_ATTEMPT_RECEIVED`])
/// and end of own work ([`model::EVENTS_PER_JOB_WITH_WORK`]), the retry wait
/// ([`retry::EVENTS_PER_ATTEMPT`]), the hedge timer ([`hedge::EVENTS_PER_ATTEMPT`]), what the
/// hop's gates declare ([`Hop::gated`]: the AWS adaptive limiter's wait,
/// [`crate::protections::aws_adaptive::EVENTS_PER_ATTEMPT`]) and the delayed delivery
/// ([`model::EVENTS_PER_DELAYED_ATTEMPT`]). Breakers, outlier ejection, budgets, throttles,
/// limiters, shedding and time-series sampling declare nothing: they act at these events.
pub fn events_per_send(hop: Hop) -> u32 {
    let on = |configured: bool, events: u32| if configured { events } else { 0 };
    timeout::EVENTS_PER_ATTEMPT
        + model::EVENTS_PER_ATTEMPT_RECEIVED
        + on(hop.callee_works, model::EVENTS_PER_JOB_WITH_WORK)
        + on(hop.retries, retry::EVENTS_PER_ATTEMPT)
        + on(hop.hedge, hedge::EVENTS_PER_ATTEMPT)
        + hop.gated
        + on(hop.delayed, model::EVENTS_PER_DELAYED_ATTEMPT)
}

/// Most events one user request of `sc` can cause: over its request classes, the largest of
/// its arrival ([`model::EVENTS_PER_USER_REQUEST`]) plus, on every hop the class takes, the
/// worst-case attempts sent there (R1: the client's `retries` + 1, times each call's attempts
/// per call — `retries` + 1 or `max_hedges` + 1 — down the call graph) times
/// [`events_per_send`] of that hop.
pub fn events_per_user_bound(sc: &Scenario) -> f64 {
    let order = sc.topological_order();
    let mut worst = 0.0f64;
    for (c, class) in sc.classes.iter().enumerate() {
        let entry = class.client.entry;
        let mut attempts = vec![0.0f64; sc.services.len()];
        attempts[entry] = class.client.retries as f64 + 1.0;
        let mut events = model::EVENTS_PER_USER_REQUEST as f64
            + attempts[entry] * events_per_send(Hop::client(sc, c)) as f64;
        for &s in &order {
            for &e in &sc.services[s].calls {
                let edge = &sc.edges[e];
                if !edge.taken_by(ClassIx::new(c)) {
                    continue;
                }
                let sends = attempts[s] * edge.max_attempts_per_call() as f64;
                attempts[edge.callee] += sends;
                events += sends * events_per_send(Hop::edge(sc, e)) as f64;
            }
        }
        worst = worst.max(events);
    }
    worst
}

/// Most events of a run of `sc` that no user request causes, as each part declares them: a
/// fault's end ([`crate::scenario::FaultKind::events_scheduled`]) and each autoscaler's
/// evaluations and warm-up ends ([`crate::protections::autoscale::Autoscale::events_scheduled`]).
pub fn fixed_events(sc: &Scenario) -> f64 {
    let faults: f64 = sc
        .faults
        .iter()
        .map(|f| f.kind.events_scheduled() as f64)
        .sum();
    let autoscaling: f64 = sc
        .services
        .iter()
        .filter_map(|s| s.autoscale.as_ref())
        .map(|a| a.events_scheduled(sc.duration))
        .sum();
    faults + autoscaling
}

/// Most events a run of `sc` with `requests` user requests can cause: the declared hard bound.
pub fn event_bound_for(sc: &Scenario, requests: f64) -> f64 {
    requests * events_per_user_bound(sc) + fixed_events(sc)
}

/// The expected number of user requests of a run of `sc`: the arrival rate integrated over the
/// arrival period, each surge counted only inside its window.
pub fn expected_requests(sc: &Scenario) -> f64 {
    sc.classes
        .iter()
        .map(|c| RatePlan::new(&c.arrivals, &sc.faults).expected_arrivals(sc.duration))
        .sum()
}

/// The expected number of user requests of `sc` that arrive before `t` (a trace's rows before
/// `t`, counted).
pub fn expected_requests_before(sc: &Scenario, t: SimTime) -> f64 {
    let t = t.min(SimTime(sc.duration.0));
    sc.classes
        .iter()
        .map(|c| match &c.arrivals.trace {
            Some(rows) => rows.partition_point(|&r| r < t) as f64,
            None => RatePlan::new(&c.arrivals, &sc.faults).expected_arrivals(SimDuration(t.0)),
        })
        .sum()
}

/// Most events a run of `sc` can cause with its expected number of user requests: the declared
/// hard bound.
pub fn event_bound(sc: &Scenario) -> f64 {
    event_bound_for(sc, expected_requests(sc))
}

/// How long the pilot runs past the last change of a scenario ([`last_change`]) and the
/// [`settling_time`] of its mechanisms: long enough for the regime after it — recovery, or a
/// retry storm that outlives its fault — to show its rate of events.
pub const PILOT_TAIL: SimDuration = SimDuration::from_secs(20);

/// The longest time what happened stays in the state of a mechanism of `sc`, as each declares
/// it: an adaptive throttle's window, a breaker's window and `open_for`, outlier ejection's
/// longest ejection, an autoscaler's interval, warm-up and cooldown (0 when it has none).
pub fn settling_time(sc: &Scenario) -> SimDuration {
    let edges = sc.edges.iter().flat_map(|e| {
        [
            e.adaptive_throttle.map(|a| a.memory()),
            e.circuit_breaker.map(|b| b.memory()),
            e.outlier_detection.map(|o| o.memory()),
        ]
    });
    let services = sc
        .services
        .iter()
        .map(|s| s.autoscale.as_ref().map(|a| a.memory()));
    edges
        .chain(services)
        .flatten()
        .max()
        .unwrap_or(SimDuration::ZERO)
}

/// The most events each pilot run may process: about a quarter of a second of simulation. A pilot
/// that reaches it is cut there and extrapolated ([`Basis::Cut`]).
pub const PILOT_EVENTS: u64 = 1 << 21;

/// An estimate is admitted only up to the limit divided by this: the margin for its error (the
/// realised events of the shipped scenarios stretched to a day stay within a factor 1.1 of it,
/// docs/trust.md §3).
pub const ESTIMATE_MARGIN: f64 = 2.0;

/// The instant after which nothing in `sc` changes its rates or its regime: the latest end of a
/// fault, a profile piece or a trace (0 when it has none), at most `duration`. From there on the
/// run is stationary, and a pilot that has run a while past it has seen its rate of events.
pub fn last_change(sc: &Scenario) -> SimDuration {
    let mut t = 0u64;
    for f in &sc.faults {
        t = t.max(f.to.0);
    }
    for c in &sc.classes {
        if let Some(p) = &c.arrivals.profile {
            for piece in &p.pieces {
                t = t.max(piece.to.0);
            }
        }
        if let Some(last) = c.arrivals.trace.as_ref().and_then(|rows| rows.last()) {
            t = t.max(last.0.saturating_add(1));
        }
    }
    SimDuration(t.min(sc.duration.0))
}

/// How an [`EventEstimate`] was made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// The pilot was the whole run: the estimate is its event count.
    Whole,
    /// The pilot ran to `pilot`, [`PILOT_TAIL`] past the last change; the estimate is its events
    /// plus, for the rest of `duration`, its events per second over the last `window` of it (its
    /// events less those of a second pilot that stops `window` earlier, over `window`).
    Tail {
        /// How far the pilot ran.
        pilot: SimDuration,
        /// The stretch at its end whose rate is extrapolated.
        window: SimDuration,
    },
    /// The pilot reached [`PILOT_EVENTS`] at simulated `at`: its events per user request so far,
    /// times the expected user requests of the whole run.
    Cut {
        /// Where the pilot's clock stood when it was cut.
        at: SimTime,
    },
}

/// The guard's realistic estimate of the events of a run ([`estimate_events`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventEstimate {
    /// Expected events of the whole run.
    pub events: f64,
    /// How it was made.
    pub basis: Basis,
    /// Events the pilot runs processed: what the estimate cost.
    pub pilot_events: u64,
}

/// Estimates the events of a run of `sc` from two short deterministic pilot runs of the same
/// scenario, same seed, cut short through `duration`: the prefix up to [`PILOT_TAIL`] and the
/// [`settling_time`] of its mechanisms past its last change ([`last_change`]: the end of the last
/// fault, profile piece or trace), so that it goes through every fault and the recovery after it
/// with the run's own amplification (the retries, hedges and timeouts that actually fire), and a
/// second prefix half that tail shorter; the difference of the two is the stationary rest's
/// events per second. A prefix that covers `duration` is the run itself ([`Basis::Whole`]). Each
/// pilot is held to [`PILOT_EVENTS`] (cut there, it is extrapolated by expected requests,
/// [`Basis::Cut`]; a closed loop without a stated rate, [`rates_are_bounds`], by time) and to
/// `max_memory`. `None` when a pilot fails otherwise (memory, a stalled clock), or when a closed
/// loop without a stated rate is cut before its clock moved: the run would fail the same way
/// within that prefix and say so.
pub fn estimate_events(sc: &Scenario, max_memory: u64) -> Option<EventEstimate> {
    let options = RunOptions {
        max_events: PILOT_EVENTS,
        max_memory,
        max_events_per_instant: events_per_instant_bound(sc),
    };
    let change = last_change(sc);
    let rates_bound = rates_are_bounds(sc);
    let until = (change + settling_time(sc) + PILOT_TAIL).min(sc.duration);
    let pilot = |to: SimDuration| {
        let mut p = sc.clone();
        p.duration = to;
        p.allow_no_requests = true;
        crate::model::run_with(&p, options).map(|r| r.engine.events)
    };
    match pilot(until) {
        Ok(events) if until >= sc.duration => Some(EventEstimate {
            events: events as f64,
            basis: Basis::Whole,
            pilot_events: events,
        }),
        Ok(events) => {
            // The rate of events over the second half of the tail, after the recovery.
            let half = SimDuration(until.0 - (until.0 - change.0) / 2);
            let before = pilot(half).ok()?;
            let window = SimDuration(until.0 - half.0);
            let per_second = events.saturating_sub(before) as f64 / window.as_secs_f64();
            let rest = SimDuration(sc.duration.0 - until.0).as_secs_f64();
            Some(EventEstimate {
                events: events as f64 + per_second * rest,
                basis: Basis::Tail {
                    pilot: until,
                    window,
                },
                pilot_events: events + before,
            })
        }
        // Cut before its clock moved: no pace to extrapolate (the run stops on the standstill).
        Err(RunError::TooManyEvents { at, .. }) if !rates_bound && at.0 == 0 => None,
        Err(RunError::TooManyEvents { events, at, .. }) if !rates_bound => {
            // A closed loop without think time: its requests are not known in advance; its
            // events go on at the pilot's pace for the rest of the run.
            let so_far = SimDuration(at.0.max(1)).as_secs_f64();
            Some(EventEstimate {
                events: events as f64 * sc.duration.as_secs_f64().max(so_far) / so_far
                    + fixed_events(sc),
                basis: Basis::Cut { at },
                pilot_events: events,
            })
        }
        Err(RunError::TooManyEvents { events, at, .. }) => {
            let so_far = expected_requests_before(sc, at).max(1.0);
            Some(EventEstimate {
                events: events as f64 * expected_requests(sc).max(so_far) / so_far
                    + fixed_events(sc),
                basis: Basis::Cut { at },
                pilot_events: events,
            })
        }
        Err(_) => None,
    }
}

/// What refused a scenario over the declared bound ([`check_events`]).
enum Judged {
    /// Its expected user requests alone (one arrival event each) pass the limit.
    Arrivals,
    /// A pilot could not estimate it (it outgrew the memory limit or its clock stopped): the
    /// declared bound decides.
    Unestimated,
    /// The pilot's estimate, with the margin, passes the limit.
    Estimate(EventEstimate),
}

/// Whether every request class's arrival rate is an upper bound of its requests: open arrivals
/// and traces are; a closed loop is when its users think
/// ([`crate::scenario::ClosedLoop::rate_bound`]).
pub fn rates_are_bounds(sc: &Scenario) -> bool {
    sc.classes.iter().all(|c| match &c.arrivals.closed {
        Some(cl) if c.arrivals.process == ArrivalProcess::Closed => cl.rate_bound().is_some(),
        _ => true,
    })
}

/// Refuses a scenario whose events would exceed `max_events` (the `--max-events` limit); `file`
/// names it in the message. See [`check_events`], with the default memory limit for the pilot.
pub fn check_event_budget(sc: &Scenario, file: &Path, max_events: u64) -> Result<(), ConfigError> {
    check_events(
        sc,
        file,
        RunOptions {
            max_events,
            ..RunOptions::default()
        },
    )
}

/// Refuses a scenario whose events would exceed `limits.max_events`, in three steps (the module
/// doc): within the declared hard bound ([`event_bound`]) it is admitted at once; with more
/// expected user requests than the limit (one arrival event each at least) it is refused at
/// once, however absurd its rates; between the two, the pilot's estimate ([`estimate_events`])
/// decides, with the margin [`ESTIMATE_MARGIN`]. `file` names the scenario in the message.
pub fn check_events(sc: &Scenario, file: &Path, limits: RunOptions) -> Result<(), ConfigError> {
    let max_events = limits.max_events;
    let bound = event_bound(sc);
    // A closed loop whose users do not think bounds its rate by nothing the scenario states
    // (how fast replies come): neither the bound nor the expected requests hold for it, and
    // only a pilot tells.
    let rates_bound = rates_are_bounds(sc);
    if rates_bound && bound <= max_events as f64 {
        return Ok(());
    }
    let least = expected_requests(sc) * model::EVENTS_PER_USER_REQUEST as f64;
    let judged = if rates_bound && least > max_events as f64 {
        Judged::Arrivals
    } else {
        match estimate_events(sc, limits.max_memory) {
            // Without a stated rate there is no bound to fall back on: the run itself stops
            // with the reason (memory, or a clock that does not move).
            None if !rates_bound => return Ok(()),
            None => Judged::Unestimated,
            Some(e) if e.events * ESTIMATE_MARGIN <= max_events as f64 => return Ok(()),
            Some(e) => Judged::Estimate(e),
        }
    };
    let attempts: u64 = sc
        .worst_case_attempts()
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b));
    let requests = if sc.faults.iter().any(|f| f.kind.rate_factor() != 1.0) {
        format!(
            "{:.3e} requests expected with the surges",
            expected_requests(sc)
        )
    } else {
        format!(
            "{rate} requests/s × {secs} s",
            rate = sc.rate(),
            secs = sc.duration.as_secs_f64()
        )
    };
    let per_request = events_per_user_bound(sc);
    let fixed = match fixed_events(sc) {
        n if n > 0.0 => format!(" + {n} events no request causes"),
        _ => String::new(),
    };
    let why = match judged {
        Judged::Arrivals => format!(
            "and at least {least:.3e} (one arrival per user request), above the limit of \
             {max_events}"
        ),
        Judged::Unestimated => format!(
            "above the limit of {max_events}, and a pilot run could not estimate it (it outgrew \
             the memory limit or its clock stopped moving)"
        ),
        Judged::Estimate(e) => format!(
            "and {} estimates {:.3e}, above the limit of {max_events} with the margin of \
             {ESTIMATE_MARGIN} an estimate keeps",
            match e.basis {
                Basis::Whole => "a pilot of the whole run".to_string(),
                Basis::Tail { pilot, .. } => format!("a pilot run of its first {pilot}"),
                Basis::Cut { at } =>
                    format!("a pilot run cut at {} events at {at}", e.pilot_events),
            },
            e.events
        ),
    };
    Err(ConfigError::file(
        file,
        format!(
            "this run could take up to {bound:.3e} events ({requests} × {per_request} events per \
             request over {attempts} worst-case attempts{fixed}) {why}; shorten `duration`, lower \
             `arrivals.rate` or the retries, or raise --max-events if you mean it",
        ),
    ))
}

/// Refuses a sweep grid of more than [`MAX_CELLS_WITHOUT_YES`] cells unless `yes` (`--yes`), and
/// of more than [`MAX_CELLS`] in any case.
pub fn check_cell_limit(cells: u64, yes: bool) -> Result<(), ConfigError> {
    if cells > MAX_CELLS {
        return Err(ConfigError::flag(
            "--yes",
            format!(
                "the sweep expands to {cells} cells; loadsim runs at most {MAX_CELLS} in one sweep \
                 (every cell is checked before any runs); narrow the grid or split it into sweeps"
            ),
        ));
    }
    if yes || cells <= MAX_CELLS_WITHOUT_YES {
        return Ok(());
    }
    Err(ConfigError::flag(
        "--yes",
        format!(
            "{cells} cells to run, more than {MAX_CELLS_WITHOUT_YES}; narrow the grid, split it with \
             --shard K/N (a shard counts its own cells), or pass --yes to run them all"
        ),
    ))
}

/// Refuses `run --seeds` of more than [`MAX_CELLS_WITHOUT_YES`] runs (seeds × files) unless
/// `yes` (`--yes`): as many runs as a sweep of as many cells, under the same limit.
pub fn check_seed_runs(runs: u64, yes: bool) -> Result<(), ConfigError> {
    if yes || runs <= MAX_CELLS_WITHOUT_YES {
        return Ok(());
    }
    Err(ConfigError::flag(
        "--yes",
        format!(
            "--seeds asks for {runs} runs (seeds × files), more than {MAX_CELLS_WITHOUT_YES}; \
             name fewer seeds, or pass --yes to run them all"
        ),
    ))
}

/// Largest boundary search or phase diagram that runs without `--yes`, in runs.
pub const MAX_RUNS_WITHOUT_YES: u64 = 10_000;

/// Refuses a boundary search or phase diagram of more than [`MAX_RUNS_WITHOUT_YES`] runs unless
/// `yes` (`--yes`); `runs` is an upper bound (scan points plus the most bisection steps).
pub fn check_run_limit(runs: u64, yes: bool) -> Result<(), ConfigError> {
    if yes || runs <= MAX_RUNS_WITHOUT_YES {
        return Ok(());
    }
    Err(ConfigError::flag(
        "--yes",
        format!(
            "this could take up to {runs} runs, more than {MAX_RUNS_WITHOUT_YES}; lower --steps, \
             the number of seeds or files, or pass --yes to run them all"
        ),
    ))
}

/// Bytes one time-series value costs until it is written: the bin's row (8), the finished column
/// (16) and its line of the long CSV (about 40).
pub const BYTES_PER_SERIES_VALUE: u64 = 64;

/// Bytes one expanded sweep cell costs (its key and axis values), whether it runs or not.
pub const BYTES_PER_EXPANDED_CELL: u64 = 256;

/// Bytes one boundary probe costs: its point, its outcome and its scan value.
pub const BYTES_PER_PROBE: u64 = 64;

/// Bytes one sweep cell costs while the sweep holds its record (a run summary keeps a few dozen
/// numbers per service and per edge), estimated from the size of its scenario.
pub fn bytes_per_cell(sc: &Scenario) -> u64 {
    2048 + 1024 * (sc.services.len() + sc.edges.len()) as u64
}

/// Bytes one validated scenario takes while a sweep keeps it from its check for its run: twice
/// the inline size of the scenario and of its lists (classes, services, edges, faults), for the
/// lists' spare capacity and the names and small lists each element owns. Traces are shared by
/// every cell that reads them and counted once, with the sweep's shared files.
pub fn bytes_per_scenario(sc: &Scenario) -> u64 {
    use std::mem::size_of;
    let inline = size_of::<Scenario>()
        + sc.classes.len() * size_of::<crate::scenario::RequestClass>()
        + sc.services.len() * size_of::<crate::scenario::Service>()
        + sc.edges.len() * size_of::<crate::scenario::Edge>()
        + sc.faults.len() * size_of::<crate::scenario::Fault>();
    2 * inline as u64
}

/// Refuses work whose memory `estimate` (bytes) exceeds `limit` (`--max-memory`); `what` says
/// what is held and `how` how to need less.
pub fn check_memory(what: &str, estimate: u64, limit: u64, how: &str) -> Result<(), ConfigError> {
    if estimate <= limit {
        return Ok(());
    }
    Err(ConfigError::flag(
        "--max-memory",
        format!(
            "{what} would take about {} of memory, above the limit of {}; {how}, or raise \
             --max-memory if the machine has the memory",
            show_bytes(estimate),
            show_bytes(limit)
        ),
    ))
}

/// `1.5 GiB`, `512 MiB`, `800 B`.
pub fn show_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{} {}", crate::util::number::trimmed(v, 1), UNITS[u])
    }
}

/// Parses a memory size: a number of bytes with an optional unit `K`, `M`, `G` or `T` (powers of
/// 1024; `KiB`, `MB`… are read the same), like `2G` or `512MiB`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let bad = || format!("`{text}` is not a size; write it like `2G`, `512M` or `1073741824`");
    let value: f64 = number.parse().map_err(|_| bad())?;
    let unit = unit
        .trim()
        .trim_end_matches(['B', 'b'])
        .trim_end_matches(['i', 'I']);
    let scale: u64 = match unit.to_ascii_uppercase().as_str() {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Document;
    use crate::model::DEFAULT_MAX_MEMORY;
    use crate::protections::aws_adaptive;

    fn scenario(rate: &str, retries: u32) -> Scenario {
        let text = format!(
            "duration: 10s\narrivals: {{rate: {rate}}}\n\
             client: {{entry: a, attempt_timeout: 1s, retries: {retries}}}\n\
             services:\n  a: {{slots: 1, calls: {{b: {{attempt_timeout: 1s, retries: 1}}}}}}\n  \
             b: {{slots: 1, service_time: {{dist: constant, value: 1ms}}}}\n"
        );
        let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
        Scenario::from_document(&doc).unwrap()
    }

    #[test]
    fn event_bound_multiplies_rate_duration_and_worst_case_attempts() {
        // The declarations summed: 1 arrival; the client's 2 attempts at a (no own work), each a
        // timeout timer, a reply and a retry wait: 3; a's 2 × 2 = 4 attempts at b (own work),
        // each a timeout timer, a reply, a retry wait and b's end of work: 4. 1 + 2·3 + 4·4 = 23.
        let sc = scenario("100", 1);
        assert_eq!(events_per_user_bound(&sc), 23.0);
        assert_eq!(event_bound(&sc), 100.0 * 10.0 * 23.0);
        assert!(check_event_budget(&sc, Path::new("t.yaml"), 23_000).is_ok());
        // Below the bound but above the expected requests: the pilot (the whole 10 s run)
        // decides, with its margin.
        let actual = crate::model::run(&sc).unwrap().engine.events;
        let e = estimate_events(&sc, DEFAULT_MAX_MEMORY).unwrap();
        assert_eq!(e.basis, Basis::Whole);
        assert_eq!(e.events, actual as f64);
        let fits = (actual as f64 * ESTIMATE_MARGIN) as u64;
        assert!(check_event_budget(&sc, Path::new("t.yaml"), fits).is_ok());
        let e = check_event_budget(&sc, Path::new("t.yaml"), fits - 1).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("--max-events"), "{text}");
        assert!(text.contains("t.yaml"), "{text}");
        assert!(
            text.contains("a pilot of the whole run estimates"),
            "{text}"
        );
        // Fewer events allowed than requests expected: refused without a pilot.
        let e = check_event_budget(&sc, Path::new("t.yaml"), 999).unwrap_err();
        assert!(e.to_string().contains("at least 1.000e3"), "{e}");
    }

    /// The declaration that bounds each kind of event the model schedules. The match has no
    /// wildcard: a new `Event` variant does not compile here until it names its declaration.
    fn declaration_of(e: &crate::model::Event) -> u32 {
        use crate::model::Event;
        use crate::protections::autoscale;
        match e {
            Event::UserArrival { .. } => model::EVENTS_PER_USER_REQUEST,
            Event::AttemptTimeout { .. } => timeout::EVENTS_PER_ATTEMPT,
            Event::Reply { .. } => model::EVENTS_PER_ATTEMPT_RECEIVED,
            Event::WorkDone { .. } => model::EVENTS_PER_JOB_WITH_WORK,
            Event::ClientRetry { .. } | Event::EdgeRetry { .. } => retry::EVENTS_PER_ATTEMPT,
            Event::HedgeFire { .. } => hedge::EVENTS_PER_ATTEMPT,
            Event::RateLimitedSend { .. } => aws_adaptive::EVENTS_PER_ATTEMPT,
            Event::Deliver { .. } => model::EVENTS_PER_DELAYED_ATTEMPT,
            Event::AutoscaleTick { .. } => autoscale::EVENTS_PER_TICK,
            // One per replica an evaluation starts, within `Autoscale::events_scheduled`.
            Event::ReplicaReady { .. } => 1,
            Event::CapacityRestored { .. } => crate::scenario::FaultKind::Capacity {
                service: ServiceIx::new(0),
                slots: 1,
            }
            .events_scheduled(),
        }
    }

    #[test]
    fn every_kind_of_event_has_a_declaration() {
        use crate::model::Event;
        use crate::model::slab::Handle;
        let none = Handle::NONE;
        for e in [
            Event::UserArrival {
                class: ClassIx::new(0),
            },
            Event::AttemptTimeout { attempt: none },
            Event::WorkDone { job: none },
            Event::ClientRetry { user: 0 },
            Event::EdgeRetry { job: none, call: 0 },
            Event::HedgeFire { job: none, call: 0 },
            Event::AutoscaleTick {
                service: ServiceIx::new(0),
            },
            Event::CapacityRestored {
                service: ServiceIx::new(0),
            },
        ] {
            assert_eq!(declaration_of(&e), 1, "{e:?}");
        }
    }

    /// Each hop adds only what is configured on it.
    #[test]
    fn a_hop_sums_the_declarations_of_what_it_has() {
        assert_eq!(events_per_send(Hop::default()), 2);
        let all = Hop {
            retries: true,
            hedge: true,
            gated: aws_adaptive::EVENTS_PER_ATTEMPT,
            delayed: true,
            callee_works: true,
        };
        assert_eq!(events_per_send(all), 7);
        // With network latency on the call: one delivery more per attempt at b (4 of them).
        let sc = from_text(
            "duration: 10s\narrivals: {rate: 100}\n\
             client: {entry: a, attempt_timeout: 1s, retries: 1}\n\
             services:\n  a: {slots: 1, calls: {b: {attempt_timeout: 1s, retries: 1, \
             latency: {dist: constant, value: 1ms}}}}\n  \
             b: {slots: 1, service_time: {dist: constant, value: 1ms}}\n",
        );
        assert_eq!(events_per_user_bound(&sc), 27.0);
    }

    /// The AWS adaptive limiter's wait is declared by its edge gate (model::gate), and the
    /// bound reads it from there: the same call with `retry_quota: {kind: aws_adaptive}` costs
    /// one event more per attempt sent on it (2 attempts of the client × 2 per call = 4 sends
    /// at b), and `{kind: aws_standard}` (a quota that holds nothing) costs none.
    #[test]
    fn the_bound_reads_what_an_edge_gate_declares() {
        let with = |quota: &str| {
            from_text(&format!(
                "duration: 10s\narrivals: {{rate: 100}}\n\
                 client: {{entry: a, attempt_timeout: 1s, retries: 1}}\n\
                 services:\n  a: {{slots: 1, calls: {{b: {{attempt_timeout: 1s, retries: 1{quota}}}}}}}\n  \
                 b: {{slots: 1, service_time: {{dist: constant, value: 1ms}}}}\n"
            ))
        };
        let plain = events_per_user_bound(&with(""));
        assert_eq!(
            events_per_user_bound(&with(", retry_quota: {kind: aws_adaptive}")),
            plain + 4.0 * f64::from(aws_adaptive::EVENTS_PER_ATTEMPT)
        );
        assert_eq!(
            events_per_user_bound(&with(", retry_quota: {kind: aws_standard}")),
            plain
        );
        assert_eq!(
            Hop::edge(&with(", retry_quota: {kind: aws_adaptive}"), EdgeIx::new(0)).gated,
            1
        );
    }

    /// Issue 18: the bound multiplied the factors of every surge, overlapping or not.
    #[test]
    fn surges_count_only_inside_their_windows() {
        let with_faults = |faults: &str| {
            let text = format!(
                "duration: 9m\narrivals: {{rate: 100}}\n\
                 client: {{entry: a, attempt_timeout: 1s}}\n\
                 services:\n  a: {{slots: 1, service_time: {{dist: constant, value: 1ms}}}}\n\
                 faults:\n{faults}"
            );
            let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
            Scenario::from_document(&doc).unwrap()
        };
        // Nine one-minute steps of ×2 … ×10, one after another (4 events per request: arrival,
        // timeout timer, reply, end of work): the rate integrates to 60 s × 100/s × (2 + … + 10)
        // = 324 000 requests, ~1.3e6 events. The old product of factors (10!/1 ≈ 3.6e6) put it
        // at ~1.2e12 and refused it.
        let sc = with_faults(&crate::scenario::faults::test_support::one_minute_surge_steps());
        assert_eq!(events_per_user_bound(&sc), 4.0);
        assert!((expected_requests(&sc) - 324_000.0).abs() < 1e-6);
        assert!((event_bound(&sc) - 324_000.0 * 4.0).abs() < 1e-3);
        assert!(check_event_budget(&sc, Path::new("t.yaml"), 2_000_000).is_ok());
        // Two one-second ×30 surges far apart: 2 s at 3000/s instead of the base 100/s, not the
        // whole period at 100 × 30 × 30.
        let sc = with_faults(
            "  a: {kind: surge, factor: 30, from: 10s, duration: 1s}\n  \
             b: {kind: surge, factor: 30, from: 5m, duration: 1s}\n",
        );
        let requests = 100.0 * 538.0 + 2.0 * 3_000.0;
        assert!((expected_requests(&sc) - requests).abs() < 1e-6);
        assert!(check_event_budget(&sc, Path::new("t.yaml"), 400_000).is_ok());
        // Overlapping surges do multiply, and the refusal says how many requests it counted.
        let sc = with_faults(
            "  a: {kind: surge, factor: 30, from: 10s, duration: 2s}\n  \
             b: {kind: surge, factor: 30, from: 11s, duration: 2s}\n",
        );
        let requests = 100.0 * 537.0 + 3_000.0 + 90_000.0 + 3_000.0;
        assert!((expected_requests(&sc) - requests).abs() < 1e-6);
        let e = check_event_budget(&sc, Path::new("t.yaml"), 100_000).unwrap_err();
        assert!(
            e.to_string()
                .contains("1.497e5 requests expected with the surges"),
            "{e}"
        );
    }

    /// Issue 28 item 2: `--max-events 1e10` was refused as a number.
    #[test]
    fn counts_take_scientific_notation() {
        assert_eq!(parse_count("2000000000"), Ok(2_000_000_000));
        assert_eq!(parse_count("2e9"), Ok(2_000_000_000));
        assert_eq!(parse_count("1e10"), Ok(10_000_000_000));
        assert_eq!(parse_count("1.5e10"), Ok(15_000_000_000));
        for bad in ["1.5", "-1", "1e30", "lots", "nan", "inf"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    fn from_text(text: &str) -> Scenario {
        let doc = Document::from_text(Path::new("t.yaml"), text).unwrap();
        Scenario::from_document(&doc).unwrap()
    }

    /// Issue 30 item 13: a run that can have no request is refused unless it says so.
    #[test]
    fn no_expected_request_is_refused_unless_allowed() {
        let base = "client: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1}\n";
        let late = format!(
            "duration: 1s\narrivals: {{process: closed, users: 10, think_time: {{dist: uniform, min: 1s, max: 2s}}}}\n{base}"
        );
        let e = check_requests(&from_text(&late), Path::new("t.yaml")).unwrap_err();
        assert!(e.to_string().contains("thinks at least"), "{e}");
        let allowed = format!("allow_no_requests: true\n{late}");
        assert!(check_requests(&from_text(&allowed), Path::new("t.yaml")).is_ok());
        // 0.5 requests expected: fewer than one, refused already by validation (at the key);
        // 1 expected passes.
        let tiny = format!("duration: 1s\narrivals: {{rate: 0.5}}\n{base}");
        let doc = Document::from_text(Path::new("t.yaml"), &tiny).unwrap();
        let e = Scenario::from_document(&doc).unwrap_err();
        assert!(e.to_string().contains("less than one arrival"), "{e}");
        let one = format!("duration: 1s\narrivals: {{rate: 1}}\n{base}");
        assert!(check_requests(&from_text(&one), Path::new("t.yaml")).is_ok());
    }

    /// Issue 30 item 4: the memory estimate, by hand.
    #[test]
    fn memory_estimate_counts_timers_and_backlog() {
        // 1000/s, client timeout 2 s (the horizon 10 s + 30 s drain is longer): 2000 client
        // timers; the call a->b sends 1000/s with a 500 ms timeout: 500 more. `a` has no own
        // work (no backlog); `b` serves 1 slot / 10 ms = 100/s of 1000/s: 900/s × 10 s = 9000.
        let sc = from_text(
            "duration: 10s\narrivals: {rate: 1000}\nclient: {entry: a, attempt_timeout: 2s}\n\
             services:\n  a: {slots: 5, calls: {b: {attempt_timeout: 500ms}}}\n  \
             b: {slots: 1, service_time: {dist: constant, value: 10ms}}\n",
        );
        let m = run_memory_estimate(&sc);
        assert!((m.events - 2500.0).abs() < 1e-6, "{m:?}");
        assert!((m.jobs - 9000.0).abs() < 1e-6, "{m:?}");
        let b = RecordBytes::of(&sc);
        let bytes = 2500.0 * b.event as f64 + 9000.0 * (b.job + b.attempt) as f64;
        assert!((m.bytes - bytes).abs() < 1e-6);
        assert!(check_run_memory(&sc, Path::new("t.yaml"), bytes as u64 + 1).is_ok());
        let e = check_run_memory(&sc, Path::new("t.yaml"), bytes as u64 - 1).unwrap_err();
        assert!(e.to_string().contains("--max-memory"), "{e}");
        // A queue cap bounds the backlog: none counted.
        let capped = from_text(
            "duration: 10s\narrivals: {rate: 1000}\nclient: {entry: a, attempt_timeout: 2s}\n\
             services:\n  a: {slots: 1, queue_cap: 10, service_time: {dist: constant, value: 10ms}}\n",
        );
        assert_eq!(run_memory_estimate(&capped).jobs, 0.0);
    }

    #[test]
    fn events_per_instant_grow_with_closed_users() {
        let few = from_text(
            "duration: 10s\narrivals: {process: closed, users: 10, think_time: {dist: constant, value: 1s}}\n\
             client: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1}\n",
        );
        assert_eq!(
            events_per_instant_bound(&few),
            DEFAULT_MAX_EVENTS_PER_INSTANT
        );
        let many = from_text(
            "duration: 10s\narrivals: {process: closed, users: 10000000, think_time: {dist: constant, value: 1s}}\n\
             client: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1}\n",
        );
        // 1e7 users × (1 arrival + 1 timeout timer + 1 reply) events each (a has no own work).
        assert_eq!(events_per_instant_bound(&many), 30_000_000);
    }

    #[test]
    fn cell_limit_needs_yes_above_the_limit() {
        assert!(check_cell_limit(MAX_CELLS_WITHOUT_YES, false).is_ok());
        assert!(check_cell_limit(MAX_CELLS_WITHOUT_YES + 1, true).is_ok());
        let e = check_cell_limit(MAX_CELLS_WITHOUT_YES + 1, false).unwrap_err();
        assert!(e.to_string().contains("--yes"), "{e}");
        assert!(e.to_string().contains("1001 cells"), "{e}");
        assert!(check_run_limit(MAX_RUNS_WITHOUT_YES, false).is_ok());
        assert!(check_run_limit(MAX_RUNS_WITHOUT_YES + 1, true).is_ok());
        let e = check_run_limit(MAX_RUNS_WITHOUT_YES + 1, false).unwrap_err();
        assert!(e.to_string().contains("--yes"), "{e}");
        let e = check_cell_limit(u64::MAX, true).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
    }

    #[test]
    fn memory_sizes_parse_and_show_in_powers_of_1024() {
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("512MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("1.5k"), Ok(1536));
        assert_eq!(parse_bytes("100"), Ok(100));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("3X").is_err());
        assert_eq!(show_bytes(3 << 30), "3 GiB");
        assert_eq!(show_bytes(1536), "1.5 KiB");
        let e = check_memory("the time series", 3 << 30, 2 << 30, "choose wider bins").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("3 GiB") && text.contains("--max-memory"),
            "{text}"
        );
        assert!(check_memory("x", 2 << 30, 2 << 30, "").is_ok());
    }
}
