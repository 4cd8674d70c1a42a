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
    #[serde(default)]
    pub calls: IndexMap<String, CallRaw>,
}

/// Which queued request a freed slot takes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueDisciplineRaw {
    Fifo,
    Lifo,
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
}

/// The shapes of service time.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DistKindRaw {
    Exponential,
    Constant,
    Uniform,
    Lognormal,
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
}

/// The kinds of fault.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKindRaw {
    /// A service's service time follows another distribution inside the window.
    Slow,
}
