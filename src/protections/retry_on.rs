//! Retry conditions, at the client and on every edge: which failures a caller retries
//! (`retry_on`: a list out of `timeout`, `reject`, `error`; default all three), and which errors a
//! callee marks as not retryable (`retryable_fraction` on a service and on an `error` fault: the
//! share of its errors that may be retried, default 1). A failure that is not retryable ends the
//! call at once; under gRFC A6 (grpc/proposal A6-client-retries.md, "Throttling Retry Attempts and
//! Hedged RPCs") only retryable failures — and pushback that says not to retry — take a token
//! from the retry throttle. On a hedged edge `retry_on` plays A6's `nonFatalStatusCodes`: any
//! other failure cancels the call's other attempts and fails the call.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Problems;

/// Default share of a callee's errors that may be retried: all of them (no draw is made).
pub(crate) const DEFAULT_RETRYABLE_FRACTION: f64 = 1.0;

/// A kind of failed attempt, as `retry_on` names it.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FailureRaw {
    /// The attempt timed out (gRPC `DEADLINE_EXCEEDED`, Envoy `5xx` after `per_try_timeout`).
    Timeout,
    /// The callee refused it: queue full, outage, local throttling (HTTP 503/429, gRPC
    /// `UNAVAILABLE`/`RESOURCE_EXHAUSTED`).
    Reject,
    /// The callee reported a failure (an error fault, a failed downstream call, a drop at
    /// dequeue), unless it marked the error non-retryable.
    Error,
}

/// How one attempt failed, from the caller's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The attempt timed out.
    Timeout,
    /// The callee replied `reject` (queue full, outage) or a local protection refused it.
    Reject,
    /// The callee replied a retryable `error`.
    Error,
    /// An error the callee marked non-retryable (`retryable_fraction`): never retried.
    Fatal,
}

/// The set of failures a caller retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryOn(u8);

impl RetryOn {
    /// Timeouts, rejects and errors: the default, and the behaviour before `retry_on` existed.
    pub const ALL: RetryOn = RetryOn(0b111);

    fn bit(f: FailureRaw) -> u8 {
        match f {
            FailureRaw::Timeout => 0b001,
            FailureRaw::Reject => 0b010,
            FailureRaw::Error => 0b100,
        }
    }

    /// The set of `kinds`.
    pub fn of(kinds: &[FailureRaw]) -> RetryOn {
        RetryOn(kinds.iter().fold(0, |m, &k| m | Self::bit(k)))
    }

    /// Whether a failure of this kind may be retried (a `Fatal` error never is).
    #[inline]
    pub fn retries(self, f: Failure) -> bool {
        let bit = match f {
            Failure::Timeout => 0b001,
            Failure::Reject => 0b010,
            Failure::Error => 0b100,
            Failure::Fatal => return false,
        };
        self.0 & bit != 0
    }

    /// Whether every kind is retried (the default).
    pub fn is_all(self) -> bool {
        self == Self::ALL
    }
}

/// Checks `retry_on` at `key` ([`RetryOn::ALL`] when absent).
pub(crate) fn validate(key: &str, r: Option<&Vec<FailureRaw>>, p: &mut impl Problems) -> RetryOn {
    let Some(list) = r else {
        return RetryOn::ALL;
    };
    if list.is_empty() {
        p.problem(
            key,
            "must list at least one of `timeout`, `reject`, `error`; to never retry, set \
             `retries: 0` instead"
                .into(),
        );
        return RetryOn::ALL;
    }
    for (i, k) in list.iter().enumerate() {
        if list[..i].contains(k) {
            let name = format!("{k:?}").to_lowercase();
            p.problem(&format!("{key}[{i}]"), format!("lists `{name}` twice"));
        }
    }
    RetryOn::of(list)
}

/// Checks a `retryable_fraction` at `key` ([`DEFAULT_RETRYABLE_FRACTION`] when absent).
pub(crate) fn validate_fraction(key: &str, f: Option<f64>, p: &mut impl Problems) -> f64 {
    let f = f.unwrap_or(DEFAULT_RETRYABLE_FRACTION);
    if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
        p.problem(key, "must be a share in [0, 1]".into());
        return DEFAULT_RETRYABLE_FRACTION;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        for at in [At::Client, At::Edge] {
            check(
                at,
                &[
                    (
                        "retry_on: []",
                        "retry_on",
                        "must list at least one of `timeout`, `reject`, `error`; to never retry, \
                         set `retries: 0` instead",
                    ),
                    (
                        "retry_on: [timeout, reject, timeout]",
                        "retry_on[2]",
                        "lists `timeout` twice",
                    ),
                ],
            );
            accepted(
                at,
                &["retry_on: [reject]", "retry_on: [timeout, reject, error]"],
            );
        }
        check(
            At::Service,
            &[(
                "retryable_fraction: 1.5",
                "retryable_fraction",
                "must be a share in [0, 1]",
            )],
        );
        accepted(At::Service, &["retryable_fraction: 0"]);
        check(
            At::Faults,
            &[
                (
                    "e: {kind: error, service: b, from: 1s, to: 2s, fraction: 0.5, retryable_fraction: -0.1}",
                    "e.retryable_fraction",
                    "must be a share in [0, 1]",
                ),
                (
                    "e: {kind: outage, service: b, from: 1s, to: 2s, retryable_fraction: 0.5}",
                    "e.retryable_fraction",
                    "is not a key of an `outage` fault (only `error` faults take it)",
                ),
            ],
        );
        accepted(
            At::Faults,
            &[
                "e: {kind: error, service: b, from: 1s, to: 2s, fraction: 0.5, retryable_fraction: 0.25}",
            ],
        );
    }

    #[test]
    fn the_default_retries_everything_but_fatal_errors() {
        for f in [Failure::Timeout, Failure::Reject, Failure::Error] {
            assert!(RetryOn::ALL.retries(f));
        }
        assert!(!RetryOn::ALL.retries(Failure::Fatal));
        let only_reject = RetryOn::of(&[FailureRaw::Reject]);
        assert!(only_reject.retries(Failure::Reject));
        assert!(!only_reject.retries(Failure::Timeout));
        assert!(!only_reject.retries(Failure::Error));
        assert!(
            RetryOn::of(&[FailureRaw::Error, FailureRaw::Reject, FailureRaw::Timeout]).is_all()
        );
    }
}
