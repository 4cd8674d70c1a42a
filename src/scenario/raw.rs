//! The serde mirror of a scenario file. Owns the YAML shape only: every struct denies unknown keys,
//! every field is optional where the file may leave it out, and values keep their written form
//! (durations as `"20ms"` strings). Whether the values make sense is `validate`'s job, which can
//! then report every problem of a file at once, with its key path and line.
//!
//! These types also generate the editor schema (`loadsim schema scenario`, via `schemars`): the
//! `///` comments on types and fields become the descriptions an editor shows on hover, so they
//! state the unit and the default. Every new type here needs `JsonSchema` in its derive list.
//!
//! The client keys are written once, in the `client_keys!` list, which gives both `client:` and
//! each class under `clients:` its fields.

pub mod expect;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::DEFAULT_DRAIN;
use crate::config::duration::DurationText;
use crate::protections::adaptive::AdaptiveThrottleRaw;
use crate::protections::admission::DEFAULT_REJECT_DELAY;
use crate::protections::breaker::CircuitBreakerRaw;
use crate::protections::budget::RetryBudgetRaw;
use crate::protections::codel::CodelRaw;
use crate::protections::concurrency_limit::ConcurrencyLimitRaw;
use crate::protections::discipline::{
    DEFAULT_DISCIPLINE, DEFAULT_LIFO_AFTER, QueueDisciplineRaw, ShedRaw,
};
use crate::protections::hedge::HedgeRaw;
use crate::protections::load_balancer::LoadBalancerRaw;
use crate::protections::outlier::OutlierDetectionRaw;
use crate::protections::pushback::PushbackRaw;
use crate::protections::quota::RetryQuotaRaw;
use crate::protections::rate_limit::RateLimitRaw;
use crate::protections::retry::{BackoffRaw, DEFAULT_RETRIES, DEFAULT_RETRY_INTERVAL};
use crate::protections::retry_on::{DEFAULT_RETRYABLE_FRACTION, FailureRaw};
use crate::protections::throttle::ThrottleRaw;

/// A loadsim scenario: the load, the client, the services with their call policies, and the
/// faults. Durations are strings with a unit (`500us`, `20ms`, `1s`, `1m 30s`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioRaw {
    /// Free text describing the scenario; not used by the simulation.
    pub description: Option<String>,
    /// Length of the arrival period: user requests arrive in `[0, duration)`. Required.
    pub duration: DurationText,
    /// How long the run may go on after arrivals stop; it ends earlier when every request has
    /// ended and nothing is pending. What is still in flight is reported.
    #[schemars(extend("default" = DEFAULT_DRAIN.to_string()))]
    pub drain: Option<DurationText>,
    /// Seed of every random stream (default 1; `--seed` overrides it).
    pub seed: Option<u64>,
    /// `true`: a run in which no user request arrives is intended (an idle baseline). Without
    /// it, a scenario that expects fewer than one user request is refused before it runs, and a
    /// run that ends without any is an error (exit 2). Default `false`.
    pub allow_no_requests: Option<bool>,
    /// How user requests arrive. Required unless `clients` is given.
    pub arrivals: Option<ArrivalsRaw>,
    /// The user (or SDK) that sends each user request to the entry service. Required unless
    /// `clients` is given; with `arrivals`, the shorthand for one class named `default`.
    pub client: Option<ClientRaw>,
    /// Request classes by name (instead of `arrivals` + `client`): each with its own `arrivals`,
    /// client policy and `priority`.
    pub clients: Option<IndexMap<String, ClassRaw>>,
    /// The services, by name (ASCII letters, digits, `_` and `-`). Each holds a slot through its
    /// own work and every downstream call.
    pub services: IndexMap<String, ServiceRaw>,
    /// Faults by name (default none); each changes a service for a time window.
    #[serde(default)]
    pub faults: IndexMap<String, FaultRaw>,
    /// Assertions on this scenario's metrics that `loadsim test` checks, like
    /// `[{metric: metrics.recovery_s, le: 5}]`; `run` ignores them. Not inherited by `extends`.
    pub expect: Option<Vec<expect::AssertionRaw>>,
    /// `true` (or `{digits: N}`): `loadsim test` compares this scenario's metrics with
    /// `snapshots/<stem>.snap` beside the file; `run` ignores it. Not inherited by `extends`.
    pub snapshot: Option<expect::SnapshotRaw>,
    /// Metric definitions: the recovery rule, the latency quantiles reported, named measurement
    /// windows (default: today's rules, nothing added).
    pub metrics: Option<super::metrics::MetricsRaw>,
}

impl ScenarioRaw {
    /// Each class's `arrivals` with its key path, in class order.
    pub(crate) fn arrivals_by_class(&self) -> Vec<(String, &ArrivalsRaw)> {
        match &self.clients {
            Some(classes) => classes
                .iter()
                .map(|(name, c)| (format!("clients.{name}.arrivals"), &c.arrivals))
                .collect(),
            None => self
                .arrivals
                .iter()
                .map(|a| ("arrivals".to_owned(), a))
                .collect(),
        }
    }

    /// Each class's client keys with their key path (`client`, or `clients.<name>`), in class order.
    pub(crate) fn clients_by_class(&self) -> Vec<(String, ClientRaw)> {
        match &self.clients {
            Some(classes) => classes
                .iter()
                .map(|(name, c)| (format!("clients.{name}"), c.client()))
                .collect(),
            None => self
                .client
                .iter()
                .map(|c| ("client".to_owned(), c.clone()))
                .collect(),
        }
    }
}

/// User request arrivals.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsRaw {
    /// Mean rate, user requests per second (give `rate` or `profile`).
    pub rate: Option<f64>,
    /// `poisson` (default: exponential gaps) or `constant` (exactly 1/rate apart, from 0).
    pub process: Option<ArrivalProcessRaw>,
    /// The rate over time instead of `rate`: segments in time order, the first at `0s`, each a
    /// step `{at: 20s, rate: 400}` or a linear ramp `{at: 20s, to: 40s, rate: 400, to_rate: 800}`
    /// (the rate then holds at `to_rate` until the next segment). Not a fault: it opens no fault
    /// window.
    pub profile: Option<Vec<crate::scenario::profile::SegmentRaw>>,
    /// With `process: closed`: how many users there are; each sends a request, waits for its end
    /// (success or final failure), thinks, and sends the next. Required there.
    pub users: Option<u32>,
    /// With `process: closed`: how long a user thinks before each request, the first included (a
    /// distribution like `service_time`'s). Required there.
    pub think_time: Option<DistRaw>,
    /// Replay a recorded trace instead of `rate`: a CSV file (path relative to this scenario
    /// file), one user request per row at the time its `time` column gives in seconds, sorted.
    pub trace: Option<String>,
    /// Multiplies the load (default 1): the rate, every segment of `profile`, the number of
    /// closed-loop `users` (rounded, at least 1), or a trace's arrivals (the j-th arrival of the
    /// scaled trace at the time of recorded arrival ⌈j/scale⌉). At the top level beside
    /// `clients`, `arrivals: {scale: x}` multiplies every class's load.
    pub scale: Option<f64>,
}

impl ArrivalsRaw {
    /// Whether `scale` is the only key given (the form allowed beside `clients`).
    pub fn only_scale(&self) -> bool {
        self.scale.is_some()
            && self.rate.is_none()
            && self.process.is_none()
            && self.profile.is_none()
            && self.users.is_none()
            && self.think_time.is_none()
            && self.trace.is_none()
    }
}

/// How arrivals are spaced.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcessRaw {
    /// Exponential gaps between arrivals (the default).
    Poisson,
    /// Exactly 1/rate apart, the first at time zero (for exact tests).
    Constant,
    /// Closed loop: `users` users, each sending its next request `think_time` after the end of
    /// its previous one.
    Closed,
}

/// Declares the client keys once. From the one list under `keys` come the fields of
/// [`ClientRaw`] (the shorthand `client:`), the same fields of [`ClassRaw`] (a class under
/// `clients:`, after its own `arrivals` and `priority`) and [`ClassRaw::client`], which carries a
/// class's keys over: a key added to the list is a key of both, with the same serde and schema
/// attributes and the same description. Not `#[serde(flatten)]`, which would lose the unknown-key
/// errors and their lines.
macro_rules! client_keys {
    (
        $(#[$client_meta:meta])*
        pub struct $client:ident;

        $(#[$class_meta:meta])*
        pub struct $class:ident {
            $( $(#[$own_meta:meta])* pub $own:ident: $own_ty:ty, )*
        }

        keys {
            $( $(#[$key_meta:meta])* pub $key:ident: $key_ty:ty, )*
        }
    ) => {
        $(#[$client_meta])*
        pub struct $client {
            $( $(#[$key_meta])* pub $key: $key_ty, )*
        }

        $(#[$class_meta])*
        pub struct $class {
            $( $(#[$own_meta])* pub $own: $own_ty, )*
            $( $(#[$key_meta])* pub $key: $key_ty, )*
        }

        impl $class {
            /// The class's client keys, as the shorthand `client` would hold them.
            pub fn client(&self) -> $client {
                $client {
                    $( $key: Clone::clone(&self.$key), )*
                }
            }
        }
    };
}

client_keys! {
    /// The client: the user (or SDK) that sends each user request to the entry service.
    #[derive(Clone, Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ClientRaw;

    /// A request class under `clients:`: its arrivals, its priority, and the keys of `client`.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ClassRaw {
        /// How this class's user requests arrive (the keys of the top-level `arrivals`). Required.
        pub arrivals: ArrivalsRaw,
        /// Higher is more important: an integer, or one of the SRE book's criticalities
        /// `critical_plus` (3), `critical` (2), `sheddable_plus` (1), `sheddable` (0) (default 0).
        pub priority: Option<PriorityRaw>,
    }

    keys {
        /// The service user requests go to. Required.
        pub entry: String,
        /// How long the user waits per attempt. Required.
        pub attempt_timeout: DurationText,
        /// Retries after a failed attempt (timeout, error or reject).
        #[schemars(extend("default" = DEFAULT_RETRIES))]
        pub retries: Option<u32>,
        /// Fixed wait before each client retry.
        #[schemars(extend("default" = DEFAULT_RETRY_INTERVAL.to_string()))]
        pub retry_interval: Option<DurationText>,
        /// Whether the attempt's absolute deadline (`now + attempt_timeout`) travels with the
        /// request (default false).
        pub propagate_deadline: Option<bool>,
        /// When an attempt times out, cancel the entry service's work for it (default false).
        pub cancel_on_abandon: Option<bool>,
        /// Which failures the client retries, out of `timeout`, `reject`, `error` (default all
        /// three).
        pub retry_on: Option<Vec<FailureRaw>>,
        /// Bounds all attempts and waits of one user request together, from its arrival (default
        /// none; gRPC's call `timeout`).
        pub call_timeout: Option<DurationText>,
        /// Exponential backoff before each client retry, instead of the fixed `retry_interval`.
        pub backoff: Option<BackoffRaw>,
        /// How the client picks a replica of the entry service (default `{policy: round_robin}`).
        pub load_balancer: Option<LoadBalancerRaw>,
        /// Network delay, drawn once for the request and once for the reply (default none).
        pub latency: Option<DistRaw>,
    }
}

/// A class's priority: an integer, or a named criticality.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum PriorityRaw {
    /// Any integer; higher is more important.
    Level(i32),
    /// A criticality of Google's SRE book (chapter "Handling Overload").
    Named(CriticalityRaw),
}

/// The SRE book's criticalities, from most to least important.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CriticalityRaw {
    /// Priority 3.
    CriticalPlus,
    /// Priority 2.
    Critical,
    /// Priority 1.
    SheddablePlus,
    /// Priority 0.
    Sheddable,
}

impl PriorityRaw {
    /// The integer priority.
    pub fn level(self) -> i32 {
        match self {
            PriorityRaw::Level(n) => n,
            PriorityRaw::Named(CriticalityRaw::CriticalPlus) => 3,
            PriorityRaw::Named(CriticalityRaw::Critical) => 2,
            PriorityRaw::Named(CriticalityRaw::SheddablePlus) => 1,
            PriorityRaw::Named(CriticalityRaw::Sheddable) => 0,
        }
    }
}

/// One service of the topology.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceRaw {
    /// Concurrent requests; a slot is held through own work and every downstream call. Required.
    pub slots: u32,
    /// Queued requests beyond which arrivals are rejected (default: unbounded).
    pub queue_cap: Option<u32>,
    /// Which queued request a freed slot takes: `fifo` (oldest first), `lifo` (newest first),
    /// `adaptive_lifo` (oldest first, newest first while the oldest has waited `lifo_after`) or
    /// `priority` (highest request-class priority first, oldest first within a priority).
    #[schemars(extend("default" = DEFAULT_DISCIPLINE.name()))]
    pub queue_discipline: Option<QueueDisciplineRaw>,
    /// At dequeue, drop a request whose deadline has passed and reply `error` at once (default
    /// false).
    pub drop_expired: Option<bool>,
    /// A full queue replies `reject` after this delay.
    #[schemars(extend("default" = DEFAULT_REJECT_DELAY.to_string()))]
    pub reject_delay: Option<DurationText>,
    /// Own work before the calls (default none: the service only waits on its calls).
    pub service_time: Option<DistRaw>,
    /// With `queue_discipline: adaptive_lifo`: serve newest first while the oldest queued request
    /// has waited this long.
    #[schemars(extend("default" = DEFAULT_LIFO_AFTER.to_string()))]
    pub lifo_after: Option<DurationText>,
    /// `priority`: when the queue is full, an arriving request evicts the newest queued request
    /// of the lowest priority below its own, which is rejected as `shed` (default: none, a full
    /// queue rejects the arriving request).
    pub shed: Option<ShedRaw>,
    /// Drop at dequeue a request that waited longer than this (default: no limit).
    pub max_queue_time: Option<DurationText>,
    /// CoDel shedding at dequeue, RFC 8289 control law (default off).
    pub codel: Option<CodelRaw>,
    /// Retry-after hint attached to this service's rejects (default none).
    pub pushback: Option<PushbackRaw>,
    /// Envoy local rate limit in front of the service (default none).
    pub rate_limit: Option<RateLimitRaw>,
    /// Server-side concurrency limiter in front of the slots and queue (default none).
    pub concurrency_limit: Option<ConcurrencyLimitRaw>,
    /// Start all calls together instead of one after another; succeed when all succeed (default
    /// false).
    pub parallel: Option<bool>,
    /// Downstream calls by callee name, made in this order while the slot is held.
    #[serde(default)]
    pub calls: IndexMap<String, CallRaw>,
    /// Share of the errors this service replies (a failed call, a drop at dequeue) that callers
    /// may retry; the rest are non-retryable and end the caller's call at once.
    #[schemars(extend("default" = DEFAULT_RETRYABLE_FRACTION))]
    pub retryable_fraction: Option<f64>,
    /// Identical replicas, each with its own `slots`, queue and service-time stream (default 1);
    /// the other keys describe one replica.
    pub replicas: Option<u32>,
    /// Kubernetes HPA over the replicas (default none); `replicas` is then the count at 0 s.
    pub autoscale: Option<crate::protections::autoscale::AutoscaleRaw>,
    /// Work slows as the replica gets busier: the universal scalability law's factor
    /// `1 + sigma·(n−1) + kappa·n·(n−1)`, `n` its busy slots when the work starts (default none).
    pub contention: Option<super::contention::ContentionRaw>,
    /// The calls as ordered stages, each `{parallel: [callees]}` or `{sequential: [callees]}`
    /// (default: `calls` in order, or all at once with `parallel: true`).
    pub stages: Option<Vec<super::stages::StageRaw>>,
}

/// A caller's policy on one call edge.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallRaw {
    /// Per attempt, cut to the time left before the request's deadline; no attempt once it is
    /// gone. Required.
    pub attempt_timeout: DurationText,
    /// Retries after a failed attempt, while the deadline allows.
    #[schemars(extend("default" = DEFAULT_RETRIES))]
    pub retries: Option<u32>,
    /// Full-jitter backoff before each retry (default: retry at once).
    pub backoff: Option<BackoffRaw>,
    /// gRFC A6 retry throttle on this edge (default none).
    pub retry_throttle: Option<ThrottleRaw>,
    /// The downstream request carries `now + timeout` as its deadline (default false).
    pub propagate_deadline: Option<bool>,
    /// Envoy-style retry budget (default none).
    pub retry_budget: Option<RetryBudgetRaw>,
    /// Client-side adaptive throttling, as in Google's SRE book (default none).
    pub adaptive_throttle: Option<AdaptiveThrottleRaw>,
    /// Cancel the callee's work when this caller gives up on an attempt (default false).
    pub cancel_on_abandon: Option<bool>,
    /// Wait at least the callee's retry-after hint; do not retry when told not to (default false).
    pub honor_retry_after: Option<bool>,
    /// Circuit breaker on this edge (default none).
    pub circuit_breaker: Option<CircuitBreakerRaw>,
    /// Hedged requests on this edge (default none; excludes `retries`).
    pub hedge: Option<HedgeRaw>,
    /// Envoy local rate limit on attempts sent on this edge (default none).
    pub rate_limit: Option<RateLimitRaw>,
    /// Client-side concurrency limiter on in-flight attempts to the callee (default none).
    pub concurrency_limit: Option<ConcurrencyLimitRaw>,
    /// Which failures this caller retries (or, with `hedge`, which let the other hedges go on),
    /// out of `timeout`, `reject`, `error` (default all three).
    pub retry_on: Option<Vec<FailureRaw>>,
    /// Bounds all attempts and backoffs of one call together, from its first attempt (default
    /// none; Envoy's route `timeout` over `per_try_timeout`, gRPC's call `timeout`).
    pub call_timeout: Option<DurationText>,
    /// How this caller picks a replica of the callee (default `{policy: round_robin}`).
    pub load_balancer: Option<LoadBalancerRaw>,
    /// Network delay on this edge, drawn once for the request and once for the reply (default
    /// none).
    pub latency: Option<DistRaw>,
    /// The AWS SDKs' standard retry mode, `{kind: aws_standard}`: retry quota 500, cost 5 (10
    /// after a timeout), refunds on success; `retries` 2 and backoff U[0, min(20s, 2ⁿ s)] unless
    /// given (default none).
    pub retry_quota: Option<RetryQuotaRaw>,
    /// The edge's policy from a production config, `{grpc: FILE, service: S, method: M}` or
    /// `{envoy: FILE, route: R, cluster: C}` (the path relative to this file), read as `loadsim
    /// import` reads it; keys written beside it override the imported ones, as over a file named
    /// by `extends`.
    pub import: Option<crate::import::ImportRaw>,
    /// Envoy outlier detection: eject a replica of the callee from this caller's balancer after
    /// failures in a row (default none).
    pub outlier_detection: Option<OutlierDetectionRaw>,
    /// The share of this service's jobs that make the call, drawn per job from the edge's own
    /// stream (default 1: every job).
    pub probability: Option<f64>,
    /// The request classes (`clients:` keys) whose requests make this call; the others skip it
    /// (default: every class).
    pub classes: Option<Vec<String>>,
}

/// A distribution of a duration, flat: `dist` names the shape, the other keys its parameters —
/// `{dist: exponential, mean: 20ms}`, `{dist: constant, value: 5ms}`,
/// `{dist: uniform, min: 5ms, max: 15ms}`, `{dist: lognormal, mean: 20ms, sigma: 1.0}`,
/// `{dist: pareto, min: 5ms, alpha: 1.5}`, `{dist: empirical, samples: [12ms, 15ms]}`,
/// `{dist: empirical, file: lat.csv}`, `{dist: histogram, buckets: [{le: 5ms, count: 120}, …]}`
/// — or, without `dist`, quantiles: `{p50: 20ms, p99: 180ms}` (`p1` … `p99`, `p999` for 0.999,
/// `p9999` for 0.9999; optional `min`, `max`). Any of them takes `scale: K` (every draw × K).
/// docs/model.md §2.2.1 gives each shape's quantile function.
#[derive(Clone, Debug, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("patternProperties" = {
    "^p[0-9]+$": {
        "$ref": "#/definitions/Duration",
        "description": "A quantile of the distribution: `p50` is the median, `p99` the 0.99 \
            quantile, `p999` the 0.999 quantile, `p9999` the 0.9999 quantile. Without `dist`."
    }
}))]
pub struct DistRaw {
    /// The shape of the distribution (leave it out to give quantiles like `p50`, `p99`).
    pub dist: Option<DistKindRaw>,
    /// Mean, for `exponential` and `lognormal`.
    pub mean: Option<DurationText>,
    /// The value, for `constant`.
    pub value: Option<DurationText>,
    /// Lower bound, for `uniform` and `pareto`; with quantiles, the smallest draw (default 0s).
    pub min: Option<DurationText>,
    /// Upper bound, for `uniform`; with quantiles, the largest draw (default none).
    pub max: Option<DurationText>,
    /// σ of the underlying normal, for `lognormal`.
    pub sigma: Option<f64>,
    /// Shape, for `pareto`.
    pub alpha: Option<f64>,
    /// `empirical`: the recorded durations, in any order (give `samples` or `file`).
    pub samples: Option<Vec<DurationText>>,
    /// `empirical`: a file of recorded durations (path relative to this scenario file), one per
    /// line, or a CSV with a header naming `column`.
    pub file: Option<String>,
    /// `empirical` with `file`: the CSV column holding the durations, by its header name
    /// (default: the file is one duration per line).
    pub column: Option<String>,
    /// `histogram`: cumulative buckets as Prometheus exposes them, `le` increasing, the last may
    /// be `le: +Inf` (default: no observation above the last `le`).
    pub buckets: Option<Vec<BucketRaw>>,
    /// Multiplies every draw (default 1).
    pub scale: Option<f64>,
    /// The `pNN` keys in file order: the key as written and its duration.
    #[serde(skip)]
    pub quantiles: Vec<(String, DurationText)>,
}

/// The keys of [`DistRaw`] besides the quantiles.
const DIST_KEYS: &[&str] = &[
    "dist", "mean", "value", "min", "max", "sigma", "alpha", "samples", "file", "column",
    "buckets", "scale",
];

impl<'de> Deserialize<'de> for DistRaw {
    // By hand, for the open set of quantile keys: a derive would need `#[serde(flatten)]`, which
    // loses unknown-key errors and their locations.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DistRaw;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a distribution, like `{dist: exponential, mean: 20ms}` or `{p50: 20ms, p99: 180ms}`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<DistRaw, A::Error> {
                let mut d = DistRaw::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "dist" => d.dist = Some(map.next_value()?),
                        "mean" => d.mean = Some(map.next_value()?),
                        "value" => d.value = Some(map.next_value()?),
                        "min" => d.min = Some(map.next_value()?),
                        "max" => d.max = Some(map.next_value()?),
                        "sigma" => d.sigma = Some(map.next_value()?),
                        "alpha" => d.alpha = Some(map.next_value()?),
                        "samples" => d.samples = Some(map.next_value()?),
                        "file" => d.file = Some(map.next_value()?),
                        "column" => d.column = Some(map.next_value()?),
                        "buckets" => d.buckets = Some(map.next_value()?),
                        "scale" => d.scale = Some(map.next_value()?),
                        k if crate::scenario::dist::quantile_of_key(k).is_some() => {
                            let v = map.next_value()?;
                            d.quantiles.push((key, v));
                        }
                        _ => return Err(serde::de::Error::unknown_field(&key, DIST_KEYS)),
                    }
                }
                Ok(d)
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// The shapes of a duration distribution.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DistKindRaw {
    /// Exponential with `mean`.
    Exponential,
    /// Always `value`.
    Constant,
    /// Uniform on [`min`, `max`].
    Uniform,
    /// Log-normal with `mean` and shape `sigma`.
    Lognormal,
    /// Pareto with scale `min` and shape `alpha`.
    Pareto,
    /// Recorded durations (`samples` or `file`): the inverse CDF, linear between order statistics.
    Empirical,
    /// Cumulative `buckets`: Prometheus's `histogram_quantile` rule.
    Histogram,
}

/// One cumulative histogram bucket: observations at or below `le`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BucketRaw {
    /// The bucket's upper bound, inclusive: a duration, or `+Inf`. Required.
    pub le: BucketBound,
    /// Observations at or below `le` (cumulative). Required.
    pub count: u64,
}

/// A bucket's upper bound: a duration or `+Inf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketBound {
    /// A finite bound.
    At(crate::time::SimDuration),
    /// `+Inf`: the bucket of every observation.
    Inf,
}

impl JsonSchema for BucketBound {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BucketBound".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": format!("(^\\s*\\+?[Ii]nf\\s*$)|({})", crate::config::duration::DURATION_PATTERN),
            "description": "A duration with a unit (`5ms`), or `+Inf`."
        })
    }
}

impl<'de> Deserialize<'de> for BucketBound {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = BucketBound;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration with a unit, like `5ms`, or `+Inf`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BucketBound, E> {
                if matches!(v.trim(), "+Inf" | "Inf" | "+inf" | "inf") {
                    return Ok(BucketBound::Inf);
                }
                crate::config::duration::parse_duration(v)
                    .map(BucketBound::At)
                    .map_err(E::custom)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<BucketBound, E> {
                if v == f64::INFINITY {
                    return Ok(BucketBound::Inf);
                }
                Err(E::custom(format!(
                    "`{v}` has no unit; write a duration with a unit, like `{v}ms`, or `+Inf`"
                )))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BucketBound, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit; write a duration with a unit, like `{v}ms`, or `+Inf`"
                )))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BucketBound, E> {
                Err(E::custom(format!(
                    "`{v}` is not a bucket bound; write a duration with a unit, like `5ms`, or `+Inf`"
                )))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// A fault, flat: `kind` names it, the other keys its parameters. Its window is `[from, to)` or
/// `[from, from + duration)` and must lie inside `[0, duration]` of the scenario.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultRaw {
    /// What the fault does. Required.
    pub kind: FaultKindRaw,
    /// The service it acts on (required for every kind but `surge`).
    pub service: Option<String>,
    /// Start of the window. Required.
    pub from: DurationText,
    /// End of the window, an instant (give `to` or `duration`, not both).
    pub to: Option<DurationText>,
    /// Length of the window (give `to` or `duration`, not both).
    pub duration: Option<DurationText>,
    /// `slow`: the distribution in force inside the window, sampled when work starts (give
    /// `service_time` or `slowdown`).
    pub service_time: Option<DistRaw>,
    /// `slow`: the service's own `service_time` with every draw multiplied by this factor,
    /// without restating it (give `service_time` or `slowdown`).
    pub slowdown: Option<f64>,
    /// `error`: share of arrivals failed at once; `slow`: share of the work started in the window
    /// that is slow (default 1).
    pub fraction: Option<f64>,
    /// `capacity`: slots in force inside the window.
    pub slots: Option<u32>,
    /// `surge`: arrival rate multiplier inside the window.
    pub factor: Option<f64>,
    /// `error`: share of the fault's errors that callers may retry; the rest are non-retryable.
    #[schemars(extend("default" = DEFAULT_RETRYABLE_FRACTION))]
    pub retryable_fraction: Option<f64>,
    /// Faults on a service: the replicas (0-based) it acts on (default all).
    pub replicas: Option<Vec<u32>>,
}

/// The kinds of fault.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::{Document, Origin};

    /// A value of each client key, unlike the base's `entry: a`, `attempt_timeout: 1s`.
    const SAMPLES: &[(&str, &str)] = &[
        ("entry", "b"),
        ("attempt_timeout", "2s"),
        ("retries", "4"),
        ("retry_interval", "30ms"),
        ("propagate_deadline", "true"),
        ("cancel_on_abandon", "true"),
        ("retry_on", "[timeout]"),
        ("call_timeout", "5s"),
        ("backoff", "{base: 10ms}"),
        ("load_balancer", "{policy: least_request}"),
        ("latency", "{dist: constant, value: 1ms}"),
    ];

    /// The keys `client:` accepts, as the loader's schema (generated from [`ClientRaw`]) lists them.
    fn client_keys() -> Vec<String> {
        let schema = crate::config::check::schema_of::<ClientRaw>();
        let properties = schema["properties"].as_object().expect("properties");
        properties.keys().cloned().collect()
    }

    /// A scenario whose `client:` and class `clients.web` both give the base `entry: a`,
    /// `attempt_timeout: 1s` with `keys` over it (only parsed, so both may be there).
    fn scenario_text(keys: &[(&str, &str)]) -> String {
        let mut given = vec![("entry", "a"), ("attempt_timeout", "1s")];
        for &(key, value) in keys {
            match given.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => given.push((key, value)),
            }
        }
        let lines = |indent: usize| {
            given
                .iter()
                .map(|(k, v)| format!("{}{k}: {v}\n", " ".repeat(indent)))
                .collect::<String>()
        };
        format!(
            "duration: 10s\nclient:\n{}clients:\n  web:\n    arrivals: {{rate: 1}}\n{}\
             services:\n  a: {{slots: 1}}\n  b: {{slots: 1}}\n",
            lines(2),
            lines(4)
        )
    }

    fn parse(text: &str) -> Result<ScenarioRaw, crate::config::ConfigError> {
        let doc = Document::from_text(Path::new("t.yaml"), text).expect("YAML");
        crate::config::deserialize::<ScenarioRaw>(&doc)
    }

    /// The client `client:` holds and the one the class `web` carries over, as `Debug` text.
    fn both_clients(keys: &[(&str, &str)]) -> (String, String) {
        let text = scenario_text(keys);
        let raw = parse(&text).unwrap_or_else(|e| panic!("{text}\n{e}"));
        let client = raw.client.as_ref().expect("client");
        let class = &raw.clients.as_ref().expect("clients")["web"];
        (format!("{client:?}"), format!("{:?}", class.client()))
    }

    #[test]
    fn a_class_accepts_every_client_key_and_carries_it_over() {
        // A new client key needs a sample here, or this test fails.
        let mut sampled: Vec<&str> = SAMPLES.iter().map(|(k, _)| *k).collect();
        let mut keys = client_keys();
        sampled.sort_unstable();
        keys.sort_unstable();
        assert_eq!(sampled, keys, "SAMPLES must give every client key a value");

        let (base, _) = both_clients(&[]);
        for &sample in SAMPLES {
            let (client, carried) = both_clients(&[sample]);
            assert_ne!(client, base, "`{}` changed nothing", sample.0);
            assert_eq!(
                carried, client,
                "the class did not carry `{}` over",
                sample.0
            );
        }
        let (client, carried) = both_clients(SAMPLES);
        assert_eq!(carried, client);
    }

    #[test]
    fn a_class_refuses_a_key_the_client_refuses() {
        // Each message lists the keys its place accepts: a class's own, then the client's.
        let client = client_keys();
        let class: Vec<String> = ["arrivals", "priority"]
            .map(String::from)
            .into_iter()
            .chain(client.iter().cloned())
            .collect();
        let one_of = |keys: &[String]| {
            let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
            format!("(expected one of {})", keys.join(", "))
        };
        // A misspelt client key, and a key of a call edge that the client has no use for.
        for (line, message) in [
            (
                "retires: 3",
                "unknown key `retires`, did you mean `retries`?",
            ),
            (
                "retry_budget: {}",
                "unknown key `retry_budget`, did you mean `retry_on`?",
            ),
        ] {
            let key = line.split_once(':').unwrap().0;
            // Right under `client:` (line 3) and under the class's `arrivals` (line 9).
            let text = scenario_text(&[])
                .replace("client:\n", &format!("client:\n  {line}\n"))
                .replace("{rate: 1}\n", &format!("{{rate: 1}}\n    {line}\n"));
            let err = parse(&text).expect_err(line);
            let got: Vec<(String, Origin, String)> = err
                .diagnostics
                .iter()
                .map(|d| (d.key.clone(), d.origin.clone(), d.message.clone()))
                .collect();
            let at = |row: usize, column: usize| Origin::File {
                path: "t.yaml".into(),
                line: Some(row),
                column: Some(column),
                source_line: Some(text.lines().nth(row - 1).unwrap().to_owned()),
            };
            assert_eq!(
                got,
                vec![
                    (
                        format!("client.{key}"),
                        at(3, 3),
                        format!("{message} {}", one_of(&client))
                    ),
                    (
                        format!("clients.web.{key}"),
                        at(9, 5),
                        format!("{message} {}", one_of(&class))
                    ),
                ],
                "{text}"
            );
        }
    }
}
