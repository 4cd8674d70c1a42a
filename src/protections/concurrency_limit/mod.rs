//! Concurrency limiters at a service (`services.<name>.concurrency_limit`, server side: in front
//! of the slots and the queue) and on an edge (`services.<caller>.calls.<callee>.concurrency_limit`,
//! client side: in-flight attempts to the callee). Owns the YAML form (one flat map: `algorithm`
//! names the rule, the other keys are its parameters), the validation with its messages, and the
//! limiter framework every algorithm shares, after Netflix concurrency-limits' `SimpleLimiter` /
//! `AbstractLimiter` (concurrency-limits-core/src/main/java/com/netflix/concurrency/limits/
//! limiter/): a request is admitted while fewer than `limit` are in flight and otherwise refused
//! at once (reason `limited`); an admitted request holds a permit recording when it started and
//! how many were in flight with it (`currentInflight`, counting itself); when it ends the permit
//! is released as `onSuccess`, `onDropped` (a timeout or a reject: the RTT is a drop sample) or
//! `onIgnore` (no sample). Envoy's controller records the latency of every request that got a
//! response and cancels those that did not.
//!
//! The update rules are one module each, because each follows one source file and carries its
//! own hand-computed tests: [`aimd`], [`vegas`], [`gradient2`], [`envoy_gradient`]; `fixed` is a
//! constant limit (`FixedLimit`). `partitions` is the library's `AbstractPartitionedLimiter`
//! over request classes: once the limit is reached, each class is held to its partition's
//! ceil(limit × share) (at least 1), and a class without a partition gets nothing.

pub(crate) mod aimd;
pub(crate) mod envoy_gradient;
pub(crate) mod gradient2;
pub(crate) mod vegas;

use crate::ix::ClassIx;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DurationText, Problems};
use crate::rng::Stream;
use crate::time::{SimDuration, SimTime};
use aimd::{Aimd, AimdState};
use envoy_gradient::{EnvoyGradient, EnvoyGradientState};
use gradient2::{Gradient2, Gradient2State};
use vegas::{Vegas, VegasState};

/// Largest limit accepted anywhere.
pub(crate) const MAX_LIMIT: u32 = 10_000_000;

/// Which rule sets the limit.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmRaw {
    /// A constant `limit` (concurrency-limits `FixedLimit`).
    Fixed,
    /// Additive increase, multiplicative decrease on drops (`AIMDLimit`).
    Aimd,
    /// Delay based, TCP Vegas (`VegasLimit`).
    Vegas,
    /// Gradient of long-term to current RTT (`Gradient2Limit`).
    Gradient2,
    /// Envoy's adaptive concurrency gradient controller.
    EnvoyGradient,
}

impl AlgorithmRaw {
    /// The name as written in a file.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmRaw::Fixed => "fixed",
            AlgorithmRaw::Aimd => "aimd",
            AlgorithmRaw::Vegas => "vegas",
            AlgorithmRaw::Gradient2 => "gradient2",
            AlgorithmRaw::EnvoyGradient => "envoy_gradient",
        }
    }

    /// The parameters the algorithm takes.
    fn params(self) -> &'static [&'static str] {
        match self {
            AlgorithmRaw::Fixed => &["limit"],
            AlgorithmRaw::Aimd => &[
                "initial_limit",
                "min_limit",
                "max_limit",
                "backoff_ratio",
                "timeout",
            ],
            AlgorithmRaw::Vegas => &[
                "initial_limit",
                "max_limit",
                "smoothing",
                "probe_multiplier",
            ],
            AlgorithmRaw::Gradient2 => &[
                "initial_limit",
                "min_limit",
                "max_limit",
                "smoothing",
                "queue_size",
                "rtt_tolerance",
                "long_window",
            ],
            AlgorithmRaw::EnvoyGradient => &[
                "concurrency_update_interval",
                "min_rtt_calc_interval",
                "request_count",
                "jitter",
                "min_concurrency",
                "buffer",
                "sample_aggregate_percentile",
                "max_concurrency_limit",
            ],
        }
    }
}

/// A concurrency limiter: `algorithm` and that algorithm's parameters (defaults from its source).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyLimitRaw {
    /// `fixed`, `aimd`, `vegas`, `gradient2` or `envoy_gradient`. Required.
    pub algorithm: AlgorithmRaw,
    /// `fixed`: the limit. Required for `fixed`.
    pub limit: Option<u32>,
    /// `aimd`, `vegas`, `gradient2`: the starting limit (default 20).
    pub initial_limit: Option<u32>,
    /// `aimd`, `gradient2`: the lowest limit (default 20).
    pub min_limit: Option<u32>,
    /// `aimd`, `gradient2`: the highest limit (default 200); `vegas`: `maxConcurrency` (default
    /// 1000).
    pub max_limit: Option<u32>,
    /// `aimd`: the factor a drop multiplies the limit by, in [0.5, 1).
    #[schemars(extend("default" = aimd::DEFAULT_BACKOFF_RATIO))]
    pub backoff_ratio: Option<f64>,
    /// `aimd`: a sample slower than this counts as a drop.
    #[schemars(extend("default" = aimd::DEFAULT_TIMEOUT.to_string()))]
    pub timeout: Option<DurationText>,
    /// `vegas` (default 1.0), `gradient2` (default 0.2): weight of the new estimate, in (0, 1].
    pub smoothing: Option<f64>,
    /// `vegas`: probe for a new no-load RTT every jitter × this × limit samples.
    #[schemars(extend("default" = vegas::DEFAULT_PROBE_MULTIPLIER))]
    pub probe_multiplier: Option<u32>,
    /// `gradient2`: the growth allowed while latency stays low.
    #[schemars(extend("default" = gradient2::DEFAULT_QUEUE_SIZE))]
    pub queue_size: Option<u32>,
    /// `gradient2`: the latency increase tolerated before the limit shrinks, at least 1.
    #[schemars(extend("default" = gradient2::DEFAULT_RTT_TOLERANCE))]
    pub rtt_tolerance: Option<f64>,
    /// `gradient2`: samples in the long-term RTT average.
    #[schemars(extend("default" = gradient2::DEFAULT_LONG_WINDOW))]
    pub long_window: Option<u32>,
    /// `envoy_gradient`: how often the limit is recalculated. Required.
    pub concurrency_update_interval: Option<DurationText>,
    /// `envoy_gradient`: time between minRTT measurements (at least 1ms). Required.
    pub min_rtt_calc_interval: Option<DurationText>,
    /// `envoy_gradient`: latencies that make a minRTT measurement.
    #[schemars(extend("default" = envoy_gradient::DEFAULT_REQUEST_COUNT))]
    pub request_count: Option<u32>,
    /// `envoy_gradient`: random extra delay of the next minRTT window, a share of its interval in
    /// [0, 1).
    #[schemars(extend("default" = envoy_gradient::DEFAULT_JITTER))]
    pub jitter: Option<f64>,
    /// `envoy_gradient`: the limit while measuring minRTT, and the lowest limit.
    #[schemars(extend("default" = envoy_gradient::DEFAULT_MIN_CONCURRENCY))]
    pub min_concurrency: Option<u32>,
    /// `envoy_gradient`: share added to minRTT before the gradient, in [0, 1].
    #[schemars(extend("default" = envoy_gradient::DEFAULT_BUFFER))]
    pub buffer: Option<f64>,
    /// `envoy_gradient`: the percentile summarizing latencies, in (0, 1].
    #[schemars(extend("default" = envoy_gradient::DEFAULT_SAMPLE_PERCENTILE))]
    pub sample_aggregate_percentile: Option<f64>,
    /// `envoy_gradient`: the highest limit.
    #[schemars(extend("default" = envoy_gradient::DEFAULT_MAX_CONCURRENCY_LIMIT))]
    pub max_concurrency_limit: Option<u32>,
    /// Netflix algorithms: the limit partitioned by request class, `{class: share}` with shares
    /// in [0, 1] adding up to at most 1 (the library's `partition(name, percent)`): while the
    /// limit is reached, each class is held to ceil(limit × share) (at least 1), and a class not
    /// listed gets nothing; below the limit any class may take spare permits (default none).
    pub partitions: Option<IndexMap<String, f64>>,
}

impl ConcurrencyLimitRaw {
    fn given(&self) -> [(&'static str, bool); 19] {
        // `partitions` goes with every Netflix algorithm: checked in `validate_partitions`.
        [
            ("limit", self.limit.is_some()),
            ("initial_limit", self.initial_limit.is_some()),
            ("min_limit", self.min_limit.is_some()),
            ("max_limit", self.max_limit.is_some()),
            ("backoff_ratio", self.backoff_ratio.is_some()),
            ("timeout", self.timeout.is_some()),
            ("smoothing", self.smoothing.is_some()),
            ("probe_multiplier", self.probe_multiplier.is_some()),
            ("queue_size", self.queue_size.is_some()),
            ("rtt_tolerance", self.rtt_tolerance.is_some()),
            ("long_window", self.long_window.is_some()),
            (
                "concurrency_update_interval",
                self.concurrency_update_interval.is_some(),
            ),
            (
                "min_rtt_calc_interval",
                self.min_rtt_calc_interval.is_some(),
            ),
            ("request_count", self.request_count.is_some()),
            ("jitter", self.jitter.is_some()),
            ("min_concurrency", self.min_concurrency.is_some()),
            ("buffer", self.buffer.is_some()),
            (
                "sample_aggregate_percentile",
                self.sample_aggregate_percentile.is_some(),
            ),
            (
                "max_concurrency_limit",
                self.max_concurrency_limit.is_some(),
            ),
        ]
    }
}

/// One partition of a partitioned limiter: a request class and its guaranteed share.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    /// The request class's name.
    pub class: String,
    /// Its share of the limit, in [0, 1], held for it while the limit is reached.
    pub share: f64,
}

/// Checks `partitions` of the limiter at `key` (the class names are checked against the
/// scenario's classes by the caller, who knows them).
pub(crate) fn validate_partitions(
    key: &str,
    c: &ConcurrencyLimitRaw,
    p: &mut impl Problems,
) -> Vec<Partition> {
    let Some(parts) = &c.partitions else {
        return Vec::new();
    };
    let key = format!("{key}.partitions");
    if c.algorithm == AlgorithmRaw::EnvoyGradient {
        p.problem(
            &key,
            "Envoy's adaptive_concurrency has no partitions; they are the Netflix library's \
             (`fixed`, `aimd`, `vegas`, `gradient2`)"
                .into(),
        );
        return Vec::new();
    }
    if parts.is_empty() {
        p.problem(&key, "must name at least one request class".into());
        return Vec::new();
    }
    let mut ok = true;
    for (class, &share) in parts {
        if !(0.0..=1.0).contains(&share) {
            p.problem(
                &format!("{key}.{class}"),
                format!("must be a share in [0, 1], not {share}"),
            );
            ok = false;
        }
    }
    let total: f64 = parts.values().sum();
    if ok && total > 1.0 {
        p.problem(
            &key,
            format!("the shares add up to {total}; they may add up to at most 1"),
        );
    }
    parts
        .iter()
        .map(|(class, &share)| Partition {
            class: class.clone(),
            share,
        })
        .collect()
}

/// A validated limiter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConcurrencyLimit {
    /// `algorithm: fixed`: a constant limit.
    Fixed {
        /// `limit`: requests allowed in flight at once.
        limit: u32,
    },
    /// `algorithm: aimd`: Netflix's loss-based AIMDLimit.
    Aimd(Aimd),
    /// `algorithm: vegas`: Netflix's delay-based VegasLimit.
    Vegas(Vegas),
    /// `algorithm: gradient2`: Netflix's Gradient2Limit.
    Gradient2(Gradient2),
    /// `algorithm: envoy_gradient`: Envoy's adaptive concurrency gradient controller.
    EnvoyGradient(EnvoyGradient),
}

impl ConcurrencyLimit {
    /// The algorithm's name as written in a file.
    pub fn name(&self) -> &'static str {
        match self {
            ConcurrencyLimit::Fixed { .. } => "fixed",
            ConcurrencyLimit::Aimd(_) => "aimd",
            ConcurrencyLimit::Vegas(_) => "vegas",
            ConcurrencyLimit::Gradient2(_) => "gradient2",
            ConcurrencyLimit::EnvoyGradient(_) => "envoy_gradient",
        }
    }

    /// The lowest limit the rule can reach.
    pub fn min_limit(&self) -> u32 {
        match self {
            ConcurrencyLimit::Fixed { limit } => *limit,
            ConcurrencyLimit::Aimd(a) => a.min_limit,
            ConcurrencyLimit::Vegas(_) => 1,
            ConcurrencyLimit::Gradient2(g) => g.min_limit,
            ConcurrencyLimit::EnvoyGradient(e) => e.min_concurrency,
        }
    }

    /// The intervals within which the rule reacts, with their key names (for the linter: one at
    /// least as long as a fault cannot react inside it).
    pub fn intervals(&self) -> Vec<(&'static str, SimDuration)> {
        match self {
            ConcurrencyLimit::EnvoyGradient(e) => {
                vec![("concurrency_update_interval", e.concurrency_update_interval)]
            }
            ConcurrencyLimit::Aimd(a) => vec![("timeout", a.timeout)],
            _ => Vec::new(),
        }
    }
}

/// Checks `concurrency_limit` at `key`.
pub(crate) fn validate(
    key: &str,
    c: &ConcurrencyLimitRaw,
    p: &mut impl Problems,
) -> Option<ConcurrencyLimit> {
    let algo = c.algorithm;
    let allowed = algo.params();
    let mut ok = true;
    for (param, present) in c.given() {
        if present && !allowed.contains(&param) {
            let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            p.problem(
                &format!("{key}.{param}"),
                format!(
                    "is not a parameter of `{}` (it takes {})",
                    algo.name(),
                    list.join(", ")
                ),
            );
            ok = false;
        }
    }
    let mut v = Checker { key, p, ok };
    let limit = match algo {
        AlgorithmRaw::Fixed => {
            let limit = match c.limit {
                None => {
                    v.bad(
                        "limit",
                        "is required for `fixed`: the constant limit".into(),
                    );
                    0
                }
                Some(l) => v.count("limit", Some(l), 0),
            };
            ConcurrencyLimit::Fixed { limit }
        }
        AlgorithmRaw::Aimd => {
            let a = Aimd {
                initial_limit: v.count(
                    "initial_limit",
                    c.initial_limit,
                    aimd::DEFAULT_INITIAL_LIMIT,
                ),
                min_limit: v.count("min_limit", c.min_limit, aimd::DEFAULT_MIN_LIMIT),
                max_limit: v.count("max_limit", c.max_limit, aimd::DEFAULT_MAX_LIMIT),
                backoff_ratio: c.backoff_ratio.unwrap_or(aimd::DEFAULT_BACKOFF_RATIO),
                timeout: c.timeout.map_or(aimd::DEFAULT_TIMEOUT, |d| d.0),
            };
            if !(a.backoff_ratio >= 0.5 && a.backoff_ratio < 1.0) {
                v.bad(
                    "backoff_ratio",
                    "must be in [0.5, 1) (AIMDLimit's range)".into(),
                );
            }
            if a.timeout.is_zero() {
                v.bad("timeout", "must be longer than 0s".into());
            }
            v.range(a.initial_limit, a.min_limit, a.max_limit, "max_limit");
            ConcurrencyLimit::Aimd(a)
        }
        AlgorithmRaw::Vegas => {
            let g = Vegas {
                initial_limit: v.count(
                    "initial_limit",
                    c.initial_limit,
                    vegas::DEFAULT_INITIAL_LIMIT,
                ),
                max_limit: v.count("max_limit", c.max_limit, vegas::DEFAULT_MAX_LIMIT),
                smoothing: v.share("smoothing", c.smoothing, vegas::DEFAULT_SMOOTHING),
                probe_multiplier: v.count(
                    "probe_multiplier",
                    c.probe_multiplier,
                    vegas::DEFAULT_PROBE_MULTIPLIER,
                ),
            };
            v.range(g.initial_limit, 1, g.max_limit, "max_limit");
            ConcurrencyLimit::Vegas(g)
        }
        AlgorithmRaw::Gradient2 => {
            let g = Gradient2 {
                initial_limit: v.count(
                    "initial_limit",
                    c.initial_limit,
                    gradient2::DEFAULT_INITIAL_LIMIT,
                ),
                min_limit: v.count("min_limit", c.min_limit, gradient2::DEFAULT_MIN_LIMIT),
                max_limit: v.count("max_limit", c.max_limit, gradient2::DEFAULT_MAX_LIMIT),
                smoothing: v.share("smoothing", c.smoothing, gradient2::DEFAULT_SMOOTHING),
                queue_size: c.queue_size.unwrap_or(gradient2::DEFAULT_QUEUE_SIZE),
                rtt_tolerance: c.rtt_tolerance.unwrap_or(gradient2::DEFAULT_RTT_TOLERANCE),
                long_window: v.count("long_window", c.long_window, gradient2::DEFAULT_LONG_WINDOW),
            };
            if !(g.rtt_tolerance.is_finite() && g.rtt_tolerance >= 1.0) {
                v.bad(
                    "rtt_tolerance",
                    "must be at least 1 (Gradient2Limit's precondition)".into(),
                );
            }
            v.range(g.initial_limit, g.min_limit, g.max_limit, "max_limit");
            ConcurrencyLimit::Gradient2(g)
        }
        AlgorithmRaw::EnvoyGradient => {
            let e = EnvoyGradient {
                concurrency_update_interval: v.interval(
                    "concurrency_update_interval",
                    c.concurrency_update_interval,
                    super::MIN_CONTROLLER_INTERVAL,
                ),
                min_rtt_calc_interval: v.interval(
                    "min_rtt_calc_interval",
                    c.min_rtt_calc_interval,
                    super::MIN_CONTROLLER_INTERVAL,
                ),
                request_count: v.count(
                    "request_count",
                    c.request_count,
                    envoy_gradient::DEFAULT_REQUEST_COUNT,
                ),
                jitter: c.jitter.unwrap_or(envoy_gradient::DEFAULT_JITTER),
                min_concurrency: v.count(
                    "min_concurrency",
                    c.min_concurrency,
                    envoy_gradient::DEFAULT_MIN_CONCURRENCY,
                ),
                buffer: c.buffer.unwrap_or(envoy_gradient::DEFAULT_BUFFER),
                sample_aggregate_percentile: v.share(
                    "sample_aggregate_percentile",
                    c.sample_aggregate_percentile,
                    envoy_gradient::DEFAULT_SAMPLE_PERCENTILE,
                ),
                max_concurrency_limit: v.count(
                    "max_concurrency_limit",
                    c.max_concurrency_limit,
                    envoy_gradient::DEFAULT_MAX_CONCURRENCY_LIMIT,
                ),
            };
            if !(e.jitter >= 0.0 && e.jitter < 1.0) {
                v.bad("jitter", "must be a share in [0, 1) of the interval".into());
            }
            if !(e.buffer >= 0.0 && e.buffer <= 1.0) {
                v.bad("buffer", "must be a share in [0, 1] of minRTT".into());
            }
            if e.min_concurrency > e.max_concurrency_limit {
                v.bad(
                    "min_concurrency",
                    "must be at most `max_concurrency_limit`".into(),
                );
            }
            ConcurrencyLimit::EnvoyGradient(e)
        }
    };
    v.ok.then_some(limit)
}

/// Collects the problems of one `concurrency_limit` map.
struct Checker<'a, P: Problems> {
    key: &'a str,
    p: &'a mut P,
    ok: bool,
}

impl<P: Problems> Checker<'_, P> {
    fn bad(&mut self, param: &str, message: String) {
        self.p.problem(&format!("{}.{param}", self.key), message);
        self.ok = false;
    }

    /// A count in [1, MAX_LIMIT], `default` when not given.
    fn count(&mut self, param: &str, given: Option<u32>, default: u32) -> u32 {
        let n = given.unwrap_or(default);
        if n == 0 || n > MAX_LIMIT {
            self.bad(param, format!("must be between 1 and {MAX_LIMIT}"));
        }
        n
    }

    /// A share in (0, 1], `default` when not given.
    fn share(&mut self, param: &str, given: Option<f64>, default: f64) -> f64 {
        let x = given.unwrap_or(default);
        if !(x > 0.0 && x <= 1.0) {
            self.bad(param, "must be a share in (0, 1]".into());
        }
        x
    }

    /// A required interval of at least `least`.
    fn interval(
        &mut self,
        param: &str,
        given: Option<DurationText>,
        least: SimDuration,
    ) -> SimDuration {
        match given {
            None => {
                self.bad(param, format!("is required, e.g. `{param}: 1s`"));
                SimDuration(1)
            }
            Some(d) if d.0 < least => {
                self.bad(param, format!("must be at least {least}"));
                d.0
            }
            Some(d) => d.0,
        }
    }

    /// `min ≤ initial ≤ max`.
    fn range(&mut self, initial: u32, min: u32, max: u32, max_key: &str) {
        if min > max {
            self.bad(
                max_key,
                format!("must be at least the minimum limit ({min})"),
            );
        } else if initial < min || initial > max {
            self.bad(
                "initial_limit",
                format!("must be between the minimum ({min}) and the maximum ({max}) limit"),
            );
        }
    }
}

/// How a permit ends, in the library's terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Release {
    /// `onSuccess`: the RTT is a sample.
    Success,
    /// `onDropped`: a timeout or a reject; the RTT is a drop sample.
    Dropped,
    /// `onIgnore`: no sample.
    Ignored,
}

/// What an admitted request holds: when it started, how many were in flight with it, and its
/// partition (with partitions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Permit {
    /// When the request took the permit (its RTT sample runs from here).
    pub start: SimTime,
    /// Requests in flight once it took the permit, itself included.
    pub inflight: u32,
    /// Index of its partition (the last one, of classes not listed, when none names its class;
    /// 0 without partitions).
    pub partition: u16,
}

/// A live partition: its share, its in-flight permits.
#[derive(Clone, Debug)]
struct PartitionState {
    share: f64,
    busy: u32,
}

impl PartitionState {
    /// The partition's limit under the total `limit` (AbstractPartitionedLimiter's
    /// `updateLimit`: max(1, ceil(limit × percent))); the unknown partition's stays 0.
    fn limit(&self, limit: u32) -> u32 {
        if self.share.is_nan() {
            0
        } else {
            ((limit as f64 * self.share).ceil() as u32).max(1)
        }
    }
}

#[derive(Clone, Debug)]
enum Rule {
    Fixed(u32),
    Aimd(AimdState),
    Vegas(VegasState),
    Gradient2(Gradient2State),
    Envoy(EnvoyGradientState),
}

/// A live limiter: its rule, its in-flight count and its random stream; with partitions, each
/// partition's in-flight count, the last one being the library's `unknown` partition, and each
/// request class's partition.
#[derive(Clone, Debug)]
pub(crate) struct Limiter {
    rule: Rule,
    inflight: u32,
    stream: Stream,
    partitions: Vec<PartitionState>,
    partition_of: Vec<u16>,
}

impl Limiter {
    /// The limiter at time 0; `stream` is its own (Vegas probe jitter, Envoy minRTT jitter).
    pub(crate) fn new(c: ConcurrencyLimit, mut stream: Stream) -> Self {
        let rule = match c {
            ConcurrencyLimit::Fixed { limit } => Rule::Fixed(limit),
            ConcurrencyLimit::Aimd(a) => Rule::Aimd(AimdState::new(a)),
            ConcurrencyLimit::Vegas(v) => Rule::Vegas(VegasState::new(v, &mut stream)),
            ConcurrencyLimit::Gradient2(g) => Rule::Gradient2(Gradient2State::new(g)),
            ConcurrencyLimit::EnvoyGradient(e) => Rule::Envoy(EnvoyGradientState::new(e)),
        };
        Limiter {
            rule,
            inflight: 0,
            stream,
            partitions: Vec::new(),
            partition_of: Vec::new(),
        }
    }

    /// The limiter partitioned by request class: `classes` are the scenario's class names in
    /// order; a class no partition names goes to the `unknown` partition, whose limit is 0.
    pub(crate) fn partitioned(mut self, partitions: &[Partition], classes: &[&str]) -> Self {
        if partitions.is_empty() {
            return self;
        }
        self.partitions = partitions
            .iter()
            .map(|p| PartitionState {
                share: p.share,
                busy: 0,
            })
            .chain(std::iter::once(PartitionState {
                share: f64::NAN,
                busy: 0,
            }))
            .collect();
        self.partition_of = classes
            .iter()
            .map(|c| {
                partitions
                    .iter()
                    .position(|p| p.class == *c)
                    .unwrap_or(partitions.len()) as u16
            })
            .collect();
        self
    }

    /// A partition's in-flight permits (for tests).
    #[cfg(test)]
    fn busy(&self, partition: usize) -> u32 {
        self.partitions[partition].busy
    }

    /// The limit in force at `now`.
    pub(crate) fn limit(&mut self, now: SimTime) -> u32 {
        match &mut self.rule {
            Rule::Fixed(l) => *l,
            Rule::Aimd(a) => a.limit(),
            Rule::Vegas(v) => v.limit(),
            Rule::Gradient2(g) => g.limit(),
            Rule::Envoy(e) => {
                e.advance(now);
                e.limit()
            }
        }
    }

    /// Requests holding a permit.
    #[cfg(test)]
    pub(crate) fn inflight(&self) -> u32 {
        self.inflight
    }

    /// A request of request class `class` at `now`: its permit, or `None` when the limit is
    /// reached (refuse it). With partitions (AbstractPartitionedLimiter's `acquire`): below the
    /// limit any class takes a permit; at or over it, only a class whose partition holds fewer
    /// than its own limit — so the total may pass the limit by what the partitions guarantee.
    #[inline]
    pub(crate) fn acquire(&mut self, now: SimTime, class: ClassIx) -> Option<Permit> {
        let limit = self.limit(now);
        let mut partition = 0;
        if self.partitions.is_empty() {
            if self.inflight >= limit {
                return None;
            }
        } else {
            partition = self.partition_of.get(class.index()).copied().unwrap_or(0);
            let p = &mut self.partitions[partition as usize];
            if self.inflight >= limit && p.busy >= p.limit(limit) {
                return None;
            }
            p.busy += 1;
        }
        self.inflight += 1;
        Some(Permit {
            start: now,
            inflight: self.inflight,
            partition,
        })
    }

    /// The request holding `permit` ended at `now` as `how`; `responded` says whether a response
    /// went out (Envoy samples those, and cancels the others).
    pub(crate) fn release(&mut self, now: SimTime, permit: Permit, how: Release, responded: bool) {
        debug_assert!(self.inflight > 0, "a permit released twice");
        self.inflight -= 1;
        if let Some(p) = self.partitions.get_mut(permit.partition as usize) {
            p.busy -= 1;
        }
        let rtt = now - permit.start;
        let dropped = match how {
            Release::Success => false,
            Release::Dropped => true,
            Release::Ignored => {
                if let Rule::Envoy(e) = &mut self.rule
                    && responded
                {
                    e.advance(now);
                    e.record(permit.start, now, &mut self.stream);
                }
                return;
            }
        };
        match &mut self.rule {
            Rule::Fixed(_) => {}
            Rule::Aimd(a) => a.update(rtt, permit.inflight, dropped),
            Rule::Vegas(v) => v.update(rtt.0, permit.inflight, dropped, &mut self.stream),
            Rule::Gradient2(g) => {
                if !rtt.is_zero() {
                    g.update(rtt.0, permit.inflight)
                }
            }
            Rule::Envoy(e) => {
                if responded {
                    e.advance(now);
                    e.record(permit.start, now, &mut self.stream);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn partitions_hold_each_class_to_its_share_only_at_the_limit() {
        // A fixed limit of 10 split a: 0.7, b: 0.2 (AbstractPartitionedLimiter: partition limits
        // ceil(10 × 0.7) = 7 and ceil(10 × 0.2) = 2; the unknown partition's stays 0).
        let parts = [
            Partition {
                class: "a".into(),
                share: 0.7,
            },
            Partition {
                class: "b".into(),
                share: 0.2,
            },
        ];
        let stream = Stream::new(1, "t");
        let mut l = Limiter::new(ConcurrencyLimit::Fixed { limit: 10 }, stream)
            .partitioned(&parts, &["a", "b", "c"]);
        let t = SimTime::ZERO;
        let (a, b, c) = (ClassIx::new(0), ClassIx::new(1), ClassIx::new(2));
        // Below the limit every class bursts: b takes 8 (over its 2), c takes 1.
        let b_permits: Vec<Permit> = (0..8).map(|_| l.acquire(t, b).unwrap()).collect();
        let _c1 = l.acquire(t, c).unwrap();
        assert_eq!(l.inflight(), 9);
        // One below the limit: a's first permit is granted regardless.
        let a1 = l.acquire(t, a).unwrap();
        assert_eq!(l.inflight(), 10);
        // At the limit: b (8 ≥ 2) and c (unknown, limit 0) are refused; a (1 < 7) is granted
        // up to 7, past the total.
        assert!(l.acquire(t, b).is_none());
        assert!(l.acquire(t, c).is_none());
        for _ in 0..6 {
            assert!(l.acquire(t, a).is_some());
        }
        assert!(l.acquire(t, a).is_none(), "a holds its 7");
        assert_eq!(
            (l.inflight(), l.busy(0), l.busy(1), l.busy(2)),
            (16, 7, 8, 1)
        );
        // Releases return the partition's permit.
        l.release(t, a1, Release::Success, true);
        for p in b_permits {
            l.release(t, p, Release::Success, true);
        }
        assert_eq!((l.inflight(), l.busy(0), l.busy(1)), (7, 6, 0));
        assert!(l.acquire(t, b).is_some(), "below the limit again");
    }

    #[test]
    fn a_tiny_share_still_guarantees_one_permit() {
        let parts = [Partition {
            class: "a".into(),
            share: 0.01,
        }];
        let mut l = Limiter::new(ConcurrencyLimit::Fixed { limit: 3 }, Stream::new(1, "t"))
            .partitioned(&parts, &["a", "b"]);
        let t = SimTime::ZERO;
        for _ in 0..3 {
            l.acquire(t, ClassIx::new(1)).unwrap();
        }
        // ceil(3 × 0.01) = 1, at least 1: a gets one permit over the limit, then none.
        assert!(l.acquire(t, ClassIx::new(0)).is_some());
        assert!(l.acquire(t, ClassIx::new(0)).is_none());
    }

    #[test]
    fn bad_snippets() {
        for at in [At::Service, At::Edge] {
            check(
                at,
                &[
                    (
                        "concurrency_limit: {algorithm: fixed}",
                        "concurrency_limit.limit",
                        "is required for `fixed`: the constant limit",
                    ),
                    (
                        "concurrency_limit: {algorithm: fixed, limit: 0}",
                        "concurrency_limit.limit",
                        "must be between 1 and 10000000",
                    ),
                    (
                        "concurrency_limit: {algorithm: aimd, min_limit: 50, max_limit: 10}",
                        "concurrency_limit.max_limit",
                        "must be at least the minimum limit (50)",
                    ),
                    (
                        "concurrency_limit: {algorithm: aimd, initial_limit: 5}",
                        "concurrency_limit.initial_limit",
                        "must be between the minimum (20) and the maximum (200) limit",
                    ),
                    (
                        "concurrency_limit: {algorithm: aimd, backoff_ratio: 1.0}",
                        "concurrency_limit.backoff_ratio",
                        "must be in [0.5, 1) (AIMDLimit's range)",
                    ),
                    (
                        "concurrency_limit: {algorithm: gradient2, smoothing: 0}",
                        "concurrency_limit.smoothing",
                        "must be a share in (0, 1]",
                    ),
                    (
                        "concurrency_limit: {algorithm: gradient2, rtt_tolerance: 0.9}",
                        "concurrency_limit.rtt_tolerance",
                        "must be at least 1 (Gradient2Limit's precondition)",
                    ),
                    (
                        "concurrency_limit: {algorithm: vegas, smoothing: 1.5}",
                        "concurrency_limit.smoothing",
                        "must be a share in (0, 1]",
                    ),
                    (
                        "concurrency_limit: {algorithm: envoy_gradient, min_rtt_calc_interval: 10s}",
                        "concurrency_limit.concurrency_update_interval",
                        "is required, e.g. `concurrency_update_interval: 1s`",
                    ),
                    (
                        "concurrency_limit: {algorithm: envoy_gradient, concurrency_update_interval: 100ms, min_rtt_calc_interval: 10s, jitter: 1.5}",
                        "concurrency_limit.jitter",
                        "must be a share in [0, 1) of the interval",
                    ),
                    (
                        "concurrency_limit: {algorithm: envoy_gradient, concurrency_update_interval: 100ms, min_rtt_calc_interval: 10s, sample_aggregate_percentile: 0}",
                        "concurrency_limit.sample_aggregate_percentile",
                        "must be a share in (0, 1]",
                    ),
                    (
                        "concurrency_limit: {algorithm: aimd, smoothing: 0.5}",
                        "concurrency_limit.smoothing",
                        "is not a parameter of `aimd` (it takes `initial_limit`, `min_limit`, `max_limit`, `backoff_ratio`, `timeout`)",
                    ),
                ],
            );
            accepted(
                at,
                &[
                    "concurrency_limit: {algorithm: fixed, limit: 1}",
                    "concurrency_limit: {algorithm: aimd}",
                    "concurrency_limit: {algorithm: vegas}",
                    "concurrency_limit: {algorithm: gradient2, min_limit: 1, initial_limit: 4}",
                    "concurrency_limit: {algorithm: envoy_gradient, concurrency_update_interval: 100ms, min_rtt_calc_interval: 10s}",
                ],
            );
        }
    }

    #[test]
    fn admits_below_the_limit_and_records_inflight_with_itself() {
        let mut l = Limiter::new(ConcurrencyLimit::Fixed { limit: 2 }, Stream::new(1, "t"));
        let a = l.acquire(SimTime(0), ClassIx::new(0)).unwrap();
        let b = l.acquire(SimTime(1), ClassIx::new(0)).unwrap();
        assert_eq!((a.inflight, b.inflight), (1, 2));
        assert!(
            l.acquire(SimTime(2), ClassIx::new(0)).is_none(),
            "2 in flight of 2"
        );
        l.release(SimTime(3), a, Release::Ignored, false);
        assert!(l.acquire(SimTime(4), ClassIx::new(0)).is_some());
    }

    #[test]
    fn drops_feed_aimd_and_lower_its_limit() {
        let c = ConcurrencyLimit::Aimd(Aimd {
            initial_limit: 10,
            min_limit: 1,
            max_limit: 200,
            backoff_ratio: 0.9,
            timeout: SimDuration::from_secs(5),
        });
        let mut l = Limiter::new(c, Stream::new(1, "t"));
        let p = l.acquire(SimTime(0), ClassIx::new(0)).unwrap();
        l.release(SimTime(10), p, Release::Dropped, true);
        assert_eq!(l.limit(SimTime(10)), 9);
        let p = l.acquire(SimTime(20), ClassIx::new(0)).unwrap();
        l.release(SimTime(30), p, Release::Ignored, true);
        assert_eq!(l.limit(SimTime(30)), 9, "ignored: no sample");
    }
}
