//! The AWS SDKs' standard retry mode on one edge
//! (`services.<caller>.calls.<callee>.retry_quota: {kind: aws_standard}`), as botocore implements
//! it (boto/botocore botocore/retries/standard.py `RetryQuotaChecker`, `ExponentialBackoff`,
//! `DEFAULT_MAX_ATTEMPTS`; botocore/retries/quota.py `RetryQuota`) with the constants the Go SDK
//! also uses (aws/aws-sdk-go-v2 aws/retry/standard.go `DefaultRetryRateTokens`,
//! `DefaultRetryCost`, `DefaultRetryTimeoutCost`, `DefaultNoRetryIncrement`, `DefaultMaxAttempts`,
//! `DefaultMaxBackoff`). One quota per edge starts at 500; a retry after a timeout acquires 10, after
//! any other retryable failure 5, and is not sent when the quota holds less; when a call succeeds,
//! the quota gets back the amount its last retry acquired, or 1 if it made no retry (never above
//! 500); a call that fails gives nothing back. Unless the edge says otherwise, the mode also sets
//! `retries: 2` (3 attempts) and the SDKs' backoff, U[0, min(20 s, 1 s·2ⁿ)] before retry n.
//! `{kind: aws_adaptive}` is all of this plus the adaptive mode's send-rate limiter, whose rules
//! are [`super::aws_adaptive`].

use schemars::JsonSchema;
use serde::Deserialize;

use super::Problems;
use super::retry::{Backoff, Jitter};
use crate::time::SimDuration;

/// The quota's size and starting level (`RetryQuota.INITIAL_CAPACITY`, `DefaultRetryRateTokens`).
pub(crate) const INITIAL_CAPACITY: u32 = 500;
/// Cost of a retry after a failure other than a timeout (`_RETRY_COST`, `DefaultRetryCost`).
pub(crate) const RETRY_COST: u32 = 5;
/// Cost of a retry after a timeout (`_TIMEOUT_RETRY_REQUEST`, `DefaultRetryTimeoutCost`).
pub(crate) const TIMEOUT_RETRY_COST: u32 = 10;
/// Returned by a call that succeeds without a retry (`_NO_RETRY_INCREMENT`,
/// `DefaultNoRetryIncrement`).
pub(crate) const NO_RETRY_INCREMENT: u32 = 1;
/// Attempts of a call, the first included (`DEFAULT_MAX_ATTEMPTS`, `DefaultMaxAttempts`).
pub(crate) const MAX_ATTEMPTS: u32 = 3;
/// The backoff's cap (`_MAX_BACKOFF`, `DefaultMaxBackoff`): 20 s.
pub(crate) const MAX_BACKOFF: SimDuration = SimDuration::from_secs(20);
/// The backoff's base: the first retry waits U[0, 1 s] (`rand · 2^(attempt − 1)` seconds).
pub(crate) const BACKOFF_BASE: SimDuration = SimDuration::from_secs(1);

/// A retry quota: `{kind: aws_standard}` or `{kind: aws_adaptive}` (the AWS SDKs' standard and
/// adaptive retry modes).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryQuotaRaw {
    /// Which quota. Required.
    pub kind: QuotaKindRaw,
}

/// The kinds of retry quota.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QuotaKindRaw {
    /// The AWS SDKs' standard retry mode: quota 500, retry cost 5 (10 after a timeout), refunds on
    /// success; 3 attempts and backoff U[0, min(20 s, 2ⁿ s)] unless the edge sets its own.
    AwsStandard,
    /// The AWS SDKs' adaptive retry mode: the standard mode plus a client-side rate limiter
    /// (CUBIC over a token bucket) that, once a reject has been seen, holds every send until it
    /// has a token.
    AwsAdaptive,
}

/// A validated retry quota.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryQuota {
    /// The AWS SDKs' standard retry mode: quota 500, retry cost 5 (10 after a timeout), refunds
    /// on success.
    AwsStandard,
    /// The standard mode's quota, backoff and attempts, and the rate limiter of
    /// [`super::aws_adaptive`].
    AwsAdaptive,
}

impl RetryQuota {
    /// The retries the mode implies when the edge sets none.
    pub fn default_retries(self) -> u32 {
        MAX_ATTEMPTS - 1
    }

    /// The backoff the mode implies when the edge sets none: full jitter, base 1 s, doubling,
    /// cap 20 s.
    pub fn default_backoff(self) -> Backoff {
        Backoff {
            base: BACKOFF_BASE,
            cap: Some(MAX_BACKOFF),
            jitter: Jitter::Full,
            multiplier: 2.0,
        }
    }
}

/// Checks `retry_quota` at `key`; `hedged` when the edge hedges (the SDK mode retries, it does
/// not hedge).
pub(crate) fn validate(
    key: &str,
    q: &RetryQuotaRaw,
    hedged: bool,
    p: &mut impl Problems,
) -> Option<RetryQuota> {
    if hedged {
        p.problem(
            key,
            "cannot be combined with `hedge`: the AWS SDKs' retry modes retry, they do not hedge"
                .into(),
        );
        return None;
    }
    Some(match q.kind {
        QuotaKindRaw::AwsStandard => RetryQuota::AwsStandard,
        QuotaKindRaw::AwsAdaptive => RetryQuota::AwsAdaptive,
    })
}

/// The live quota of one edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Quota {
    available: u32,
}

impl Default for Quota {
    fn default() -> Self {
        Quota {
            available: INITIAL_CAPACITY,
        }
    }
}

impl Quota {
    /// The cost of a retry after a failure, `timeout` or not.
    #[inline]
    pub(crate) fn cost(timeout: bool) -> u32 {
        if timeout {
            TIMEOUT_RETRY_COST
        } else {
            RETRY_COST
        }
    }

    /// A retry asks for `cost`: taken and true when the quota holds at least that much.
    #[inline]
    pub(crate) fn acquire(&mut self, cost: u32) -> bool {
        if cost > self.available {
            return false;
        }
        self.available -= cost;
        true
    }

    /// A call succeeded; `last_cost` is what its last retry acquired (0 if it made no retry).
    #[inline]
    pub(crate) fn on_call_success(&mut self, last_cost: u32) {
        let back = if last_cost == 0 {
            NO_RETRY_INCREMENT
        } else {
            last_cost
        };
        self.available = (self.available + back).min(INITIAL_CAPACITY);
    }

    /// What the quota holds.
    #[cfg(test)]
    pub(crate) fn available(&self) -> u32 {
        self.available
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
                    "retry_quota: {kind: aws_standard}\nhedge: {delay: 10ms}",
                    "retry_quota",
                    "cannot be combined with `hedge`: the AWS SDKs' retry modes retry, they do not hedge",
                ),
                (
                    "retry_quota: {kind: aws_adaptive}\nhedge: {delay: 10ms}",
                    "retry_quota",
                    "cannot be combined with `hedge`: the AWS SDKs' retry modes retry, they do not hedge",
                ),
                ("retry_quota: {}", "retry_quota", "missing field `kind`"),
            ],
        );
        accepted(
            At::Edge,
            &[
                "retry_quota: {kind: aws_standard}",
                "retry_quota: {kind: aws_standard}\nretries: 4",
                "retry_quota: {kind: aws_adaptive}",
            ],
        );
    }

    /// Step by step, from botocore's RetryQuotaChecker and RetryQuota.
    #[test]
    fn quota_arithmetic_by_hand() {
        let mut q = Quota::default();
        assert_eq!(q.available(), 500);
        // A success without retry at full capacity: nothing to give back (never above 500).
        q.on_call_success(0);
        assert_eq!(q.available(), 500);
        // A call times out, retries (−10), gets a 503, retries (−5), then succeeds: the last
        // acquisition (5) comes back.
        assert!(q.acquire(Quota::cost(true)));
        assert_eq!(q.available(), 490);
        assert!(q.acquire(Quota::cost(false)));
        assert_eq!(q.available(), 485);
        q.on_call_success(5);
        assert_eq!(q.available(), 490);
        // A success without retry gives 1.
        q.on_call_success(0);
        assert_eq!(q.available(), 491);
        // A call that fails after retries gives nothing back: drain with 5-cost retries.
        let mut granted = 0;
        while q.acquire(Quota::cost(false)) {
            granted += 1;
        }
        assert_eq!(granted, 98, "491 / 5 = 98, remainder 1");
        assert_eq!(q.available(), 1);
        // 1 < 5: refused, and nothing is taken.
        assert!(!q.acquire(RETRY_COST));
        assert_eq!(q.available(), 1);
        // Four successes without retry bring it to 5: one more retry after an error, but not
        // after a timeout (10).
        for _ in 0..4 {
            q.on_call_success(0);
        }
        assert!(!q.acquire(Quota::cost(true)));
        assert!(q.acquire(Quota::cost(false)));
        assert_eq!(q.available(), 0);
    }

    #[test]
    fn the_mode_sets_three_attempts_and_the_sdk_backoff() {
        let q = RetryQuota::AwsStandard;
        assert_eq!(q.default_retries(), 2);
        let b = q.default_backoff();
        // U[0, 1 s], U[0, 2 s], …, capped at 20 s from the sixth retry on (2⁵ = 32 > 20).
        assert_eq!(
            crate::protections::retry::max_backoff(&b, 0),
            SimDuration::from_secs(1)
        );
        assert_eq!(
            crate::protections::retry::max_backoff(&b, 4),
            SimDuration::from_secs(16)
        );
        assert_eq!(
            crate::protections::retry::max_backoff(&b, 5),
            SimDuration::from_secs(20)
        );
    }
}
