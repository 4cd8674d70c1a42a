//! The gate layer: every protection that admits, refuses or holds work runs here, through a few
//! hooks with one order each, and the rest of the model never names a protection. Owns the
//! verdict a hook returns ([`Verdict`]: pass, refuse with a [`Reason`], hold for a delay), the
//! reasons (each names the counter it is counted in and the error status of its span), the edge
//! gate ([`edge`]: call start, pace, before send, on settle, before retry), the service gate
//! ([`service`]: admit, dequeue, finish), the admission gates both sides share ([`admission`]:
//! local rate limit, concurrency limiter), what a gate keeps per call ([`CallMemo`]), and the
//! registration of every key of the edge and service YAML forms as a gate or, with the reason,
//! not one ([`EDGE_KEYS`], [`SERVICE_KEYS`]).
//!
//! A gate is a compiled list of only the protections configured at its edge or service replica:
//! an enum per side, dispatched by `match` (no trait objects, no `Option` per protection on the
//! hot path), with the union of its guards' hooks as a bit set so a hook no guard acts at costs
//! one test. Each guard's rule and state come from its module in [`crate::protections`].
//!
//! What is not a gate stays with the model part it shapes: the attempt timeout and deadline
//! propagation (every attempt has them: `model::calls`), retries, backoff and hedges (the call
//! state machine that the gates judge: `model::calls`), `retry_on` and `retryable_fraction`
//! (what a failure is), cancellation (what abandoning does), the balancer and outlier detection
//! (which replica, not whether: `model::fleet`), network delay, the call `probability` and
//! `classes` (whether a job makes the call at all), fan-out and stages (the shape of the calls),
//! the service's queue (`queue_cap`, `reject_delay`, `queue_discipline`, `shed`: the station's
//! bound and order, `model::service`), the retry-after hint a service attaches to its rejects,
//! and autoscaling (a controller on its own timer: `model::autoscale`). [`EDGE_KEYS`] and
//! [`SERVICE_KEYS`] give the reason for each key.

pub(crate) mod admission;
pub(crate) mod edge;
pub(crate) mod service;

pub(crate) use admission::keep_permit;
pub(crate) use edge::{EdgeGate, RetryAsk, Settled};
pub(crate) use service::ServiceGate;

use crate::metrics::counters::{EdgeCounters, ServiceCounters};
use crate::rng::Stream;
use crate::scenario::{Edge, Scenario, Service};
use crate::time::SimDuration;

/// Events the gate of edge `e` of `sc` can schedule per attempt, as its guards declare them
/// ([`EdgeGate::events_per_attempt`]): what the guard's event bound adds for the gate
/// (`crate::guard::events_per_send`). The gate is compiled as the model compiles it, so the
/// declaration cannot drift from the registration.
pub(crate) fn edge_events_per_attempt(sc: &Scenario, e: &Edge) -> u32 {
    let class_names: Vec<&str> = sc.classes.iter().map(|c| c.name.as_str()).collect();
    EdgeGate::compile(sc, e, &class_names).events_per_attempt()
}

/// Events the gate of (any replica of) service `s` can schedule per request it sees
/// ([`ServiceGate::events_per_request`]), for the guard's event bound.
pub(crate) fn service_events_per_request(s: &Service) -> u32 {
    ServiceGate::compile(s, || Stream::new(0, "guard"), &[]).events_per_request()
}

/// What a gate says at a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Go on.
    Pass,
    /// Refused, for `Reason`.
    Refuse(Reason),
    /// Go on after (at least) this delay.
    Hold(SimDuration, Reason),
}

/// Why a gate refused or held: the counter it is counted in, which is also the error status of
/// the span of a traced request ([`Reason::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The circuit breaker is open (or out of half-open probes).
    CircuitOpen,
    /// Adaptive throttling rejected the attempt locally.
    ThrottledLocally,
    /// The local rate limit had no token (edge or service).
    RateLimited,
    /// The concurrency limiter is at its limit (edge or service).
    Limited,
    /// The callee's retry-after hint said not to retry.
    PushbackNoRetry,
    /// The retry waits for the callee's retry-after hint.
    PushbackHonored,
    /// The A6 bucket refused a retry.
    RetriesThrottled,
    /// The A6 bucket refused a hedge.
    HedgesThrottled,
    /// The retry budget or the AWS retry quota refused a retry.
    BudgetDenied,
    /// The AWS adaptive rate limiter holds the send (not counted).
    Paced,
    /// `drop_expired`: dequeued after its deadline.
    DroppedExpired,
    /// `max_queue_time`: waited too long in the queue.
    DroppedQueueTime,
    /// CoDel dropped it at dequeue.
    DroppedCodel,
}

impl Reason {
    /// The counter's name, and the error status of a traced request's span.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Reason::CircuitOpen => "rejected_circuit_open",
            Reason::ThrottledLocally => "throttled_locally",
            Reason::RateLimited => "rate_limited",
            Reason::Limited => "limited",
            Reason::PushbackNoRetry => "pushback_no_retry",
            Reason::PushbackHonored => "pushback_honored",
            Reason::RetriesThrottled => "retries_throttled",
            Reason::HedgesThrottled => "hedges_throttled",
            Reason::BudgetDenied => "retries_budget_denied",
            Reason::Paced => "paced",
            Reason::DroppedExpired => "dropped_expired",
            Reason::DroppedQueueTime => "dropped_queue_time",
            Reason::DroppedCodel => "dropped_codel",
        }
    }

    /// Whether an attempt refused before it was sent fails its call outright (when nothing
    /// else of the call is outstanding) rather than failing as a local reject the call may
    /// retry: only the open breaker, which would refuse the retry as well.
    #[inline]
    pub(crate) const fn ends_call(self) -> bool {
        matches!(self, Reason::CircuitOpen)
    }

    /// Counts it on an edge.
    #[inline]
    pub(crate) fn count_edge(self, c: &mut EdgeCounters) {
        match self {
            Reason::CircuitOpen => c.rejected_circuit_open += 1,
            Reason::ThrottledLocally => c.throttled_locally += 1,
            Reason::RateLimited => c.rate_limited += 1,
            Reason::Limited => c.limited += 1,
            Reason::PushbackNoRetry => c.pushback_no_retry += 1,
            Reason::PushbackHonored => c.pushback_honored += 1,
            Reason::RetriesThrottled => c.retries_throttled += 1,
            Reason::HedgesThrottled => c.hedges_throttled += 1,
            Reason::BudgetDenied => c.retries_budget_denied += 1,
            Reason::Paced => {}
            Reason::DroppedExpired | Reason::DroppedQueueTime | Reason::DroppedCodel => {
                debug_assert!(false, "a service reason on an edge: {self:?}")
            }
        }
    }

    /// Counts it at a service.
    #[inline]
    pub(crate) fn count_service(self, c: &mut ServiceCounters) {
        match self {
            Reason::RateLimited => c.rate_limited += 1,
            Reason::Limited => c.limited += 1,
            Reason::DroppedExpired => c.dropped_expired += 1,
            Reason::DroppedQueueTime => c.dropped_queue_time += 1,
            Reason::DroppedCodel => c.dropped_codel += 1,
            _ => debug_assert!(false, "an edge reason at a service: {self:?}"),
        }
    }
}

/// What the edge's gates keep per call (beside the call's retry and hedge state): what the
/// call's last retry took from the AWS retry quota (0: no retry yet), refunded when it succeeds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallMemo {
    pub(crate) quota_cost: u8,
}

/// How a key of the edge or service YAML form is handled: by a gate, or (with the reason) not.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(test), allow(dead_code, reason = "read by the registration test"))]
pub(crate) enum Registration {
    /// A gate: the guards it compiles to (by [`edge::EdgeGuard::name`] or
    /// [`service::ServiceGuard::name`]) and a YAML line that configures it, for the test that
    /// compiles it.
    Gate {
        guards: &'static [&'static str],
        example: &'static str,
    },
    /// Not a gate, and why.
    NotAGate(&'static str),
}

use Registration::{Gate, NotAGate};

/// Why the keys of the call state machine are not gates.
#[cfg_attr(not(test), allow(dead_code, reason = "read by the registration test"))]
const CALL_MACHINE: &str = "the call state machine the gates judge (model::calls), not a check";

/// The admission gates both sides register ([`admission`]).
#[cfg_attr(not(test), allow(dead_code, reason = "read by the registration test"))]
const RATE_LIMIT: Registration = Gate {
    guards: &["rate_limit"],
    example: "rate_limit: {max_tokens: 5, fill_interval: 1s}",
};
#[cfg_attr(not(test), allow(dead_code, reason = "read by the registration test"))]
const CONCURRENCY_LIMIT: Registration = Gate {
    guards: &["concurrency_limit"],
    example: "concurrency_limit: {algorithm: fixed, limit: 4}",
};

/// Every key of a call edge (`CallRaw`): its gate, or why it is none. A test fails on a key of
/// the schema missing here.
#[cfg_attr(not(test), allow(dead_code, reason = "read by the registration test"))]
pub(crate) const EDGE_KEYS: &[(&str, Registration)] = &[
    (
        "attempt_timeout",
        NotAGate("every attempt has one; the model cuts it to the deadline (timeout)"),
    ),
    ("retries", NotAGate(CALL_MACHINE)),
    ("backoff", NotAGate(CALL_MACHINE)),
    (
        "retry_on",
        NotAGate("which failures are retried: what a failure is"),
    ),
    (
        "call_timeout",
        NotAGate("the call's deadline, which every check is cut to"),
    ),
    ("hedge", NotAGate(CALL_MACHINE)),
    (
        "propagate_deadline",
        NotAGate("what the request carries, not a check"),
    ),
    (
        "cancel_on_abandon",
        NotAGate("what abandoning an attempt does to the callee's work"),
    ),
    (
        "load_balancer",
        NotAGate("which replica an attempt goes to, not whether (model::fleet)"),
    ),
    (
        "outlier_detection",
        NotAGate("ejects replicas from the balancer's choice (model::fleet), refuses nothing"),
    ),
    ("latency", NotAGate("network delay (model::fleet)")),
    (
        "probability",
        NotAGate("whether a job makes the call at all, drawn before it starts"),
    ),
    (
        "classes",
        NotAGate("which request classes make the call at all"),
    ),
    (
        "import",
        NotAGate("reads a production config into the other keys at validation"),
    ),
    (
        "honor_retry_after",
        Gate {
            guards: &["pushback"],
            example: "honor_retry_after: true",
        },
    ),
    (
        "retry_throttle",
        Gate {
            guards: &["throttle"],
            example: "retry_throttle: {max_tokens: 10, token_ratio: 0.1}",
        },
    ),
    (
        "retry_budget",
        Gate {
            guards: &["concurrent_budget"],
            example: "retry_budget: {budget_percent: 20}",
        },
    ),
    (
        "retry_quota",
        Gate {
            guards: &["quota", "pace"],
            example: "retry_quota: {kind: aws_adaptive}",
        },
    ),
    (
        "circuit_breaker",
        Gate {
            guards: &["breaker"],
            example: "circuit_breaker: {failure_rate: 0.5}",
        },
    ),
    (
        "adaptive_throttle",
        Gate {
            guards: &["adaptive"],
            example: "adaptive_throttle: {k: 2}",
        },
    ),
    ("rate_limit", RATE_LIMIT),
    ("concurrency_limit", CONCURRENCY_LIMIT),
];

/// Every key of a service (`ServiceRaw`): its gate, or why it is none. A test fails on a key of
/// the schema missing here.
#[cfg_attr(not(test), allow(dead_code, reason = "read by the registration test"))]
pub(crate) const SERVICE_KEYS: &[(&str, Registration)] = &[
    ("slots", NotAGate("the service's capacity (model::queue)")),
    (
        "queue_cap",
        NotAGate("the station's bound: whether an admitted request finds room (model::service)"),
    ),
    (
        "reject_delay",
        NotAGate("when the reject reply leaves, for any refusal"),
    ),
    (
        "queue_discipline",
        NotAGate("the queue's order: which request a freed slot takes, not whether"),
    ),
    ("lifo_after", NotAGate("part of `queue_discipline`")),
    (
        "shed",
        NotAGate("evicts from a full queue to make room (model::service), a queue order"),
    ),
    (
        "pushback",
        NotAGate("the retry-after hint attached to a reject reply; callers' gates honour it"),
    ),
    ("service_time", NotAGate("the service's own work")),
    (
        "parallel",
        NotAGate("fan-out: the shape of the calls (model::calls)"),
    ),
    ("calls", NotAGate("the edges, each with its own gate")),
    ("stages", NotAGate("the shape of the calls (model::calls)")),
    (
        "retryable_fraction",
        NotAGate("marks the errors a service replies: what a failure is"),
    ),
    (
        "replicas",
        NotAGate("the replicas, each with its own gate (model::fleet)"),
    ),
    (
        "autoscale",
        NotAGate("a controller on its own timer that changes the replicas (model::autoscale)"),
    ),
    (
        "contention",
        NotAGate("stretches the work (model::service)"),
    ),
    ("rate_limit", RATE_LIMIT),
    ("concurrency_limit", CONCURRENCY_LIMIT),
    (
        "drop_expired",
        Gate {
            guards: &["drop_expired"],
            example: "drop_expired: true",
        },
    ),
    (
        "max_queue_time",
        Gate {
            guards: &["max_queue_time"],
            example: "max_queue_time: 100ms",
        },
    ),
    (
        "codel",
        Gate {
            guards: &["codel"],
            example: "codel: {target: 5ms, interval: 100ms}",
        },
    ),
];

#[cfg(test)]
mod tests;
