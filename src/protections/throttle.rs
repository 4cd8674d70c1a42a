//! The gRFC A6 retry throttle on one edge (`services.<caller>.calls.<callee>.retry_throttle`), one
//! bucket per caller per downstream: tokens start at `max_tokens`; each failed attempt takes one
//! (not below zero), each success adds `token_ratio` (not above `max_tokens`); a retry (or a
//! hedge) is allowed only while tokens > `max_tokens / 2`. Kept in thousandths of a token, as A6
//! allows three decimal places, so the arithmetic is exact.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Problems;

/// Largest `max_tokens` gRFC A6 allows.
pub(crate) const MAX_TOKENS: f64 = 1000.0;

/// gRFC A6 retry throttle, one bucket per edge: −1 token per failed attempt, +`token_ratio` per
/// success, retries allowed only while tokens > `max_tokens / 2`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThrottleRaw {
    /// Bucket size, and its starting level, in tokens (reference value 10).
    pub max_tokens: f64,
    /// Tokens returned per successful attempt (reference value 0.1; three decimals at most).
    pub token_ratio: f64,
}

/// gRFC A6 retry throttle, in thousandths of a token (A6 allows three decimal places).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    /// `max_tokens`, in thousandths of a token: bucket size and starting level.
    pub max_milli: u64,
    /// `token_ratio`, in thousandths of a token: returned per successful attempt.
    pub ratio_milli: u64,
}

/// Checks `retry_throttle` at `key`.
pub(crate) fn validate(key: &str, t: &ThrottleRaw, p: &mut impl Problems) -> Option<Throttle> {
    let mut ok = true;
    if !(t.max_tokens.is_finite() && t.max_tokens > 0.0 && t.max_tokens <= MAX_TOKENS) {
        p.problem(
            &format!("{key}.max_tokens"),
            format!("must be in (0, {MAX_TOKENS}] (gRFC A6)"),
        );
        ok = false;
    }
    if !(t.token_ratio.is_finite() && t.token_ratio > 0.0 && t.token_ratio <= t.max_tokens.max(0.0))
    {
        p.problem(
            &format!("{key}.token_ratio"),
            "must be positive and at most `max_tokens` (gRFC A6)".into(),
        );
        ok = false;
    }
    ok.then(|| Throttle {
        max_milli: (t.max_tokens * 1000.0).round() as u64,
        ratio_milli: ((t.token_ratio * 1000.0).round() as u64).max(1),
    })
}

/// The attempts one call with `retries` makes in the long run while its attempts keep failing.
/// Without a throttle, every retry: `retries + 1`. With a gRFC A6 throttle a retry needs tokens
/// above half, each failure takes one and only successes give `token_ratio` back, so over any
/// stretch retries ≤ max_tokens/2 + token_ratio × successes ≤ max_tokens/2 + token_ratio × calls:
/// in the long run at most `1 + token_ratio` attempts per call.
pub(crate) fn sustained_attempts_per_call(retries: u32, throttle: Option<Throttle>) -> f64 {
    let all = retries as f64 + 1.0;
    match throttle {
        Some(t) => all.min(1.0 + t.ratio_milli as f64 / 1000.0),
        None => all,
    }
}

/// One A6 token bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TokenBucket {
    tokens_milli: u64,
    max_milli: u64,
    ratio_milli: u64,
}

impl TokenBucket {
    /// A full bucket.
    pub(crate) fn new(t: Throttle) -> Self {
        TokenBucket {
            tokens_milli: t.max_milli,
            max_milli: t.max_milli,
            ratio_milli: t.ratio_milli,
        }
    }

    /// A failed attempt (timeout, reject, error): one token less.
    #[inline]
    pub(crate) fn on_failure(&mut self) {
        self.tokens_milli = self.tokens_milli.saturating_sub(1000);
    }

    /// A successful attempt: `token_ratio` more, up to the maximum.
    #[inline]
    pub(crate) fn on_success(&mut self) {
        self.tokens_milli = (self.tokens_milli + self.ratio_milli).min(self.max_milli);
    }

    /// Whether a retry may be sent now.
    #[inline]
    pub(crate) fn allows_retry(&self) -> bool {
        self.tokens_milli * 2 > self.max_milli
    }

    /// Current tokens.
    pub(crate) fn tokens(&self) -> f64 {
        self.tokens_milli as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        check(
            At::Edge,
            &[
                (
                    "retry_throttle: {max_tokens: .inf, token_ratio: 0.1}",
                    "retry_throttle.max_tokens",
                    "must be in (0, 1000] (gRFC A6)",
                ),
                (
                    "retry_throttle: {max_tokens: 1001, token_ratio: 0.1}",
                    "retry_throttle.max_tokens",
                    "must be in (0, 1000] (gRFC A6)",
                ),
                (
                    "retry_throttle: {max_tokens: 10, token_ratio: 11}",
                    "retry_throttle.token_ratio",
                    "must be positive and at most `max_tokens` (gRFC A6)",
                ),
                (
                    "retry_throttle: {max_tokens: 10, token_ratio: 0}",
                    "retry_throttle.token_ratio",
                    "must be positive and at most `max_tokens` (gRFC A6)",
                ),
            ],
        );
        accepted(
            At::Edge,
            &["retry_throttle: {max_tokens: 1000, token_ratio: 1000}"],
        );
    }

    fn bucket() -> TokenBucket {
        TokenBucket::new(Throttle {
            max_milli: 10_000,
            ratio_milli: 100,
        })
    }

    #[test]
    fn starts_full_and_allows_retries() {
        let b = bucket();
        assert_eq!(b.tokens(), 10.0);
        assert!(b.allows_retry());
    }

    #[test]
    fn threshold_is_strictly_above_half() {
        let mut b = bucket();
        for _ in 0..4 {
            b.on_failure();
        }
        assert_eq!(b.tokens(), 6.0);
        assert!(b.allows_retry());
        b.on_failure();
        assert_eq!(b.tokens(), 5.0);
        assert!(!b.allows_retry(), "exactly max/2 must refuse");
        b.on_success();
        assert_eq!(b.tokens(), 5.1);
        assert!(b.allows_retry(), "5.1 > 5 allows again");
    }

    #[test]
    fn never_below_zero_nor_above_max() {
        let mut b = bucket();
        for _ in 0..50 {
            b.on_failure();
        }
        assert_eq!(b.tokens(), 0.0);
        for _ in 0..500 {
            b.on_success();
        }
        assert_eq!(b.tokens(), 10.0);
    }
}
