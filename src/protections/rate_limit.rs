//! Envoy's local rate limit at a service (`services.<name>.rate_limit`) or on an edge
//! (`services.<caller>.calls.<callee>.rate_limit`): one token bucket with the semantics of
//! `envoy.type.v3.TokenBucket` (envoyproxy/envoy `api/envoy/type/v3/token_bucket.proto`) as the
//! local rate limit filter runs it (`source/extensions/filters/common/local_ratelimit/
//! local_ratelimit_impl.cc`, timer-based bucket): the bucket starts full with `max_tokens`; a fill
//! timer started with the run fires every `fill_interval` and adds `tokens_per_fill` (default 1),
//! never above `max_tokens`; each request takes one token, and a request that finds none is
//! refused (reason `rate_limited`). Envoy refuses a `fill_interval` under 50 ms; so does loadsim.
//!
//! The refill is discrete and lazy: the bucket counts the fill instants (`k × fill_interval`,
//! k ≥ 1) passed since it last looked, so the arithmetic is exact integers.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{DurationText, Problems};
use crate::time::{SimDuration, SimTime};

/// Tokens added per fill when `tokens_per_fill` is not given (token_bucket.proto: "defaults to a
/// single token").
pub(crate) const DEFAULT_TOKENS_PER_FILL: u32 = 1;
/// Shortest fill interval Envoy accepts ("local rate limit token bucket fill timer must be >=
/// 50ms", local_ratelimit_impl.cc).
pub(crate) const MIN_FILL_INTERVAL: SimDuration = SimDuration::from_millis(50);

/// An Envoy local-rate-limit token bucket.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimitRaw {
    /// Bucket size, and its level at the start of the run. Required, at least 1.
    pub max_tokens: u32,
    /// Tokens added at each fill, up to `max_tokens`.
    #[schemars(extend("default" = DEFAULT_TOKENS_PER_FILL))]
    pub tokens_per_fill: Option<u32>,
    /// Time between fills (at least 50ms, as in Envoy). Required.
    pub fill_interval: Option<DurationText>,
}

/// A validated local rate limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// `max_tokens`: bucket size, and its level at the start of the run.
    pub max_tokens: u32,
    /// `tokens_per_fill`: tokens added at each fill, up to `max_tokens` (default 1).
    pub tokens_per_fill: u32,
    /// `fill_interval`: time between fills (at least 50 ms).
    pub fill_interval: SimDuration,
}

impl RateLimit {
    /// Requests the bucket admits over `[0, t)` when asked at least once per fill and never less
    /// often than it can serve: `max_tokens` plus `tokens_per_fill` per fill instant in `(0, t)`
    /// — the ceiling of the admitted count (the bucket cannot hold more than `max_tokens`).
    pub fn admits_at_most(&self, t: SimDuration) -> u64 {
        let fills = t.0.saturating_sub(1) / self.fill_interval.0;
        self.max_tokens as u64 + fills * self.tokens_per_fill as u64
    }

    /// Sustained rate in requests per second.
    pub fn rate_per_s(&self) -> f64 {
        self.tokens_per_fill as f64 / self.fill_interval.as_secs_f64()
    }
}

/// Checks `rate_limit` at `key`.
pub(crate) fn validate(key: &str, r: &RateLimitRaw, p: &mut impl Problems) -> Option<RateLimit> {
    let mut ok = true;
    if r.max_tokens == 0 {
        p.problem(
            &format!("{key}.max_tokens"),
            "must be at least 1 (Envoy token bucket)".into(),
        );
        ok = false;
    }
    let tokens_per_fill = r.tokens_per_fill.unwrap_or(DEFAULT_TOKENS_PER_FILL);
    if tokens_per_fill == 0 {
        p.problem(
            &format!("{key}.tokens_per_fill"),
            "must be at least 1 (Envoy token bucket); leave it out for 1".into(),
        );
        ok = false;
    }
    let fill_interval = match r.fill_interval {
        None => {
            p.problem(
                &format!("{key}.fill_interval"),
                "is required: the time between fills, e.g. `fill_interval: 1s`".into(),
            );
            None
        }
        Some(d) if d.0 < MIN_FILL_INTERVAL => {
            p.problem(
                &format!("{key}.fill_interval"),
                format!("must be at least {MIN_FILL_INTERVAL} (Envoy's fill timer floor)"),
            );
            None
        }
        Some(d) => Some(d.0),
    };
    let fill_interval = fill_interval?;
    ok.then_some(RateLimit {
        max_tokens: r.max_tokens,
        tokens_per_fill,
        fill_interval,
    })
}

/// The live bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bucket {
    p: RateLimit,
    tokens: u64,
    /// Fill instants applied so far (`k` of the last fill at `k × fill_interval`).
    fills: u64,
}

impl Bucket {
    /// A full bucket at time 0.
    pub(crate) fn new(p: RateLimit) -> Self {
        Bucket {
            p,
            tokens: p.max_tokens as u64,
            fills: 0,
        }
    }

    /// Applies the fills due by `now` (the fill at `now` included: Envoy's timer fires before a
    /// request that arrives at the same instant is not ordered, loadsim fills first).
    fn refill(&mut self, now: SimTime) {
        let due = now.0 / self.p.fill_interval.0;
        if due > self.fills {
            let added = (due - self.fills).saturating_mul(self.p.tokens_per_fill as u64);
            self.tokens = self
                .tokens
                .saturating_add(added)
                .min(self.p.max_tokens as u64);
            self.fills = due;
        }
    }

    /// Takes a token for a request at `now`; false when the bucket is empty (refuse it).
    #[inline]
    pub(crate) fn try_take(&mut self, now: SimTime) -> bool {
        self.refill(now);
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    /// Tokens in the bucket at `now`.
    #[cfg(test)]
    pub(crate) fn tokens(&mut self, now: SimTime) -> u64 {
        self.refill(now);
        self.tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        for at in [At::Service, At::Edge] {
            check(
                at,
                &[
                    (
                        "rate_limit: {max_tokens: 0, fill_interval: 1s}",
                        "rate_limit.max_tokens",
                        "must be at least 1 (Envoy token bucket)",
                    ),
                    (
                        "rate_limit: {max_tokens: 5, tokens_per_fill: 0, fill_interval: 1s}",
                        "rate_limit.tokens_per_fill",
                        "must be at least 1 (Envoy token bucket); leave it out for 1",
                    ),
                    (
                        "rate_limit: {max_tokens: 5}",
                        "rate_limit.fill_interval",
                        "is required: the time between fills, e.g. `fill_interval: 1s`",
                    ),
                    (
                        "rate_limit: {max_tokens: 5, fill_interval: 49ms}",
                        "rate_limit.fill_interval",
                        "must be at least 50ms (Envoy's fill timer floor)",
                    ),
                ],
            );
            accepted(
                at,
                &[
                    "rate_limit: {max_tokens: 1, fill_interval: 50ms}\n",
                    "rate_limit: {max_tokens: 100, tokens_per_fill: 10, fill_interval: 1s}\n",
                ],
            );
        }
    }

    const MS: u64 = 1_000_000;

    fn bucket(max: u32, per: u32, every_ms: u64) -> Bucket {
        Bucket::new(RateLimit {
            max_tokens: max,
            tokens_per_fill: per,
            fill_interval: SimDuration(every_ms * MS),
        })
    }

    #[test]
    fn starts_full_refills_discretely_and_caps_at_max() {
        let mut b = bucket(3, 2, 100);
        // Full at 0: three requests pass, the fourth is refused.
        assert!(b.try_take(SimTime(0)));
        assert!(b.try_take(SimTime(MS)));
        assert!(b.try_take(SimTime(2 * MS)));
        assert!(!b.try_take(SimTime(99 * MS)), "no fill before 100 ms");
        // The fill at 100 ms adds two.
        assert!(b.try_take(SimTime(100 * MS)));
        assert!(b.try_take(SimTime(150 * MS)));
        assert!(!b.try_take(SimTime(199 * MS)));
        // Ten fills while idle: capped at max_tokens = 3, not 20.
        assert_eq!(b.tokens(SimTime(1_200 * MS)), 3);
    }

    #[test]
    fn admitted_count_over_a_window_equals_the_formula() {
        // Offered far above the rate: one request every millisecond for 10 s. Admitted =
        // max_tokens + tokens_per_fill × fills in (0, 10 s) = 20 + 5 × 99 = 515.
        let p = RateLimit {
            max_tokens: 20,
            tokens_per_fill: 5,
            fill_interval: SimDuration(100 * MS),
        };
        let mut b = Bucket::new(p);
        let admitted = (0..10_000u64)
            .filter(|&t| b.try_take(SimTime(t * MS)))
            .count() as u64;
        assert_eq!(admitted, 515);
        assert_eq!(p.admits_at_most(SimDuration(10_000 * MS)), 515);
        assert_eq!(p.rate_per_s(), 50.0);
    }
}
