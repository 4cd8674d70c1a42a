//! The serde mirror of a scenario file. Owns the YAML shape only: every struct denies unknown keys,
//! every field is optional where the file may leave it out, and values keep their written form
//! (durations as `"20ms"` strings). Whether the values make sense is `validate`'s job, which can
//! then report every problem of a file at once, with its key path and line.

use indexmap::IndexMap;
use serde::Deserialize;

use super::duration::DurationText;

/// A whole scenario file after `extends` and `--set` have been applied.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioRaw {
    /// Free text describing the scenario; not used by the simulation.
    pub description: Option<String>,
    /// Length of the arrival period.
    pub duration: DurationText,
    /// How long the simulation may run after arrivals stop (default 30s).
    pub drain: Option<DurationText>,
    /// Seed of every random stream (default 1).
    pub seed: Option<u64>,
    pub arrivals: ArrivalsRaw,
    pub client: ClientRaw,
    pub services: IndexMap<String, ServiceRaw>,
    #[serde(default)]
    pub faults: IndexMap<String, FaultRaw>,
}

/// User request arrivals.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsRaw {
    /// Mean rate, user requests per second.
    pub rate: f64,
    /// `poisson` (default) or `constant` (evenly spaced, for exact tests).
    pub process: Option<ArrivalProcessRaw>,
}

/// How arrivals are spaced.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcessRaw {
    Poisson,
    Constant,
}

/// The client: the user (or SDK) that sends each user request to the entry service.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientRaw {
    pub entry: String,
    pub attempt_timeout: DurationText,
    pub retries: Option<u32>,
    pub retry_interval: Option<DurationText>,
    pub propagate_deadline: Option<bool>,
    /// When an attempt times out, cancel the entry service's work for it (default false).
    pub cancel_on_abandon: Option<bool>,
}

/// One service of the topology.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceRaw {
    pub slots: u32,
    pub queue_cap: Option<u32>,
    pub queue_discipline: Option<QueueDisciplineRaw>,
    pub drop_expired: Option<bool>,
    pub reject_delay: Option<DurationText>,
    pub service_time: Option<DistRaw>,
    /// Adaptive LIFO: serve newest first while the oldest queued request has waited this long.
    pub lifo_after: Option<DurationText>,
    /// Drop at dequeue a request that waited longer than this.
    pub max_queue_time: Option<DurationText>,
    /// CoDel shedding at dequeue (RFC 8289 control law).
    pub codel: Option<CodelRaw>,
    /// Retry-after hint attached to rejects.
    pub pushback: Option<PushbackRaw>,
    /// Start all calls together instead of one after another.
    pub parallel: Option<bool>,
    #[serde(default)]
    pub calls: IndexMap<String, CallRaw>,
}

/// CoDel parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelRaw {
    pub target: Option<DurationText>,
    pub interval: Option<DurationText>,
}

/// A retry-after hint: exactly one of the keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PushbackRaw {
    /// A fixed delay.
    pub delay: Option<DurationText>,
    /// A delay per request queued at the moment of the reject.
    pub per_queued: Option<DurationText>,
    /// Tell callers not to retry.
    pub no_retry: Option<bool>,
}

/// Which queued request a freed slot takes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueDisciplineRaw {
    Fifo,
    Lifo,
    AdaptiveLifo,
}

/// A caller's policy on one call edge.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallRaw {
    pub attempt_timeout: DurationText,
    pub retries: Option<u32>,
    pub backoff: Option<BackoffRaw>,
    pub retry_throttle: Option<ThrottleRaw>,
    pub propagate_deadline: Option<bool>,
    /// Envoy-style retry budget.
    pub retry_budget: Option<RetryBudgetRaw>,
    /// Client-side adaptive throttling (Google SRE book).
    pub adaptive_throttle: Option<AdaptiveThrottleRaw>,
    /// Cancel the callee's work when this caller gives up on an attempt.
    pub cancel_on_abandon: Option<bool>,
    /// Wait at least the callee's retry-after hint; do not retry when told not to.
    pub honor_retry_after: Option<bool>,
    pub circuit_breaker: Option<CircuitBreakerRaw>,
    pub hedge: Option<HedgeRaw>,
}

/// Envoy retry budget: concurrent retries ≤ max(budget_percent % of active requests,
/// min_retry_concurrency).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryBudgetRaw {
    pub budget_percent: Option<f64>,
    pub min_retry_concurrency: Option<u32>,
}

/// Adaptive throttling: reject locally with probability max(0, (requests − k·accepts) /
/// (requests + 1)) over a trailing window.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveThrottleRaw {
    pub k: Option<f64>,
    pub window: Option<DurationText>,
}

/// Circuit breaker.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CircuitBreakerRaw {
    pub failure_rate: Option<f64>,
    pub window: Option<DurationText>,
    pub min_requests: Option<u32>,
    pub consecutive_failures: Option<u32>,
    pub open_for: Option<DurationText>,
    pub half_open_probes: Option<u32>,
}

/// Hedged requests.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HedgeRaw {
    pub delay: DurationText,
    pub max_hedges: Option<u32>,
}

/// Full-jitter exponential backoff.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackoffRaw {
    pub base: DurationText,
    pub cap: Option<DurationText>,
}

/// gRFC A6 retry throttle.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleRaw {
    pub max_tokens: f64,
    pub token_ratio: f64,
}

/// A service-time distribution, flat: `dist` names the shape, the other keys its parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistRaw {
    pub dist: DistKindRaw,
    pub mean: Option<DurationText>,
    pub value: Option<DurationText>,
    pub min: Option<DurationText>,
    pub max: Option<DurationText>,
    pub sigma: Option<f64>,
    /// Pareto shape.
    pub alpha: Option<f64>,
}

/// The shapes of service time.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DistKindRaw {
    Exponential,
    Constant,
    Uniform,
    Lognormal,
    Pareto,
}

/// A fault, flat: `kind` names it, the other keys its parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRaw {
    pub kind: FaultKindRaw,
    pub service: Option<String>,
    pub from: DurationText,
    pub to: Option<DurationText>,
    pub duration: Option<DurationText>,
    pub service_time: Option<DistRaw>,
    /// `error`: share of arrivals failed at once.
    pub fraction: Option<f64>,
    /// `capacity`: slots in force inside the window.
    pub slots: Option<u32>,
    /// `surge`: arrival rate multiplier inside the window.
    pub factor: Option<f64>,
}

/// The kinds of fault.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKindRaw {
    /// A service's service time follows another distribution inside the window.
    Slow,
    /// A share of a service's arrivals fail at once.
    Error,
    /// Every arrival at a service is rejected.
    Outage,
    /// A service has fewer slots.
    Capacity,
    /// User arrivals come faster.
    Surge,
}
