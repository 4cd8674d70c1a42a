//! Retries, at the client and on every edge: after a failed attempt (timeout, error or reject) a
//! caller tries again, `retries` times at most. The client waits a fixed `retry_interval`; an edge
//! waits a full-jitter exponential backoff (AWS Builders' Library): before retry n (0-based) a
//! uniform draw from [0, min(cap, base·2^n)], from the caller's own jitter stream. On an edge, a
//! retry is also subject to the deadline, the A6 throttle, the retry budget and retry-after hints
//! (see `model::calls`, which asks each of those modules).

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::rng::Stream;
use crate::time::SimDuration;

/// Largest retry count accepted on any hop.
pub const MAX_RETRIES: u32 = 100;
/// Default retries after a failed attempt.
pub const DEFAULT_RETRIES: u32 = 0;
/// Default fixed wait before each client retry.
pub const DEFAULT_RETRY_INTERVAL: SimDuration = SimDuration::ZERO;

/// Full-jitter exponential backoff: before retry n (n = 0, 1, …) wait U[0, min(cap, base·2ⁿ)].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackoffRaw {
    /// The first retry waits up to this long. Required.
    pub base: DurationText,
    /// Upper bound of the wait (default none).
    pub cap: Option<DurationText>,
}

/// Full-jitter backoff: before retry n (n = 0, 1, …) wait U[0, min(cap, base·2^n)]. A zero base
/// retries at once (no `backoff` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub base: SimDuration,
    pub cap: Option<SimDuration>,
}

impl Backoff {
    /// No backoff: retry at once.
    pub const NONE: Backoff = Backoff {
        base: SimDuration::ZERO,
        cap: None,
    };
}

/// Checks a retry count at `key` (default [`DEFAULT_RETRIES`]).
pub(crate) fn validate_retries(key: &str, r: Option<u32>, p: &mut impl Problems) -> u32 {
    let r = r.unwrap_or(DEFAULT_RETRIES);
    if r > MAX_RETRIES {
        p.problem(key, format!("must be at most {MAX_RETRIES}"));
    }
    r
}

/// Checks `backoff` at `key` ([`Backoff::NONE`] when absent).
pub(crate) fn validate_backoff(
    key: &str,
    b: Option<&BackoffRaw>,
    p: &mut impl Problems,
) -> Backoff {
    let Some(b) = b else {
        return Backoff::NONE;
    };
    if let Some(cap) = b.cap
        && cap.0 < b.base.0
    {
        p.problem(
            &format!("{key}.cap"),
            "must be at least `backoff.base`".into(),
        );
    }
    Backoff {
        base: b.base.0,
        cap: b.cap.map(|d| d.0),
    }
}

/// The longest wait before retry `n` (0-based): `min(cap, base·2^n)`, the top of full jitter.
pub fn max_backoff(backoff: &Backoff, n: u32) -> SimDuration {
    let upper = backoff
        .base
        .0
        .saturating_mul(1u64.checked_shl(n).unwrap_or(u64::MAX));
    SimDuration(backoff.cap.map_or(upper, |c| upper.min(c.0)))
}

/// The wait before retry `n`.
#[inline]
pub fn full_jitter(backoff: &Backoff, n: u32, stream: &mut Stream) -> SimDuration {
    if backoff.base.is_zero() {
        return SimDuration::ZERO;
    }
    SimDuration(stream.up_to(max_backoff(backoff, n).0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        for at in [At::Client, At::Edge] {
            check(at, &[("retries: 101", "retries", "must be at most 100")]);
        }
        check(
            At::Edge,
            &[
                (
                    "backoff: {base: 20ms, cap: 10ms}",
                    "backoff.cap",
                    "must be at least `backoff.base`",
                ),
                ("backoff: {cap: 10ms}", "backoff", "missing field `base`"),
            ],
        );
        accepted(
            At::Edge,
            &["retries: 100\nbackoff: {base: 10ms, cap: 10ms}"],
        );
    }

    #[test]
    fn stays_within_the_doubling_bound_and_the_cap() {
        let mut s = Stream::new(1, "t");
        let b = Backoff {
            base: SimDuration::from_millis(10),
            cap: Some(SimDuration::from_millis(25)),
        };
        for n in 0..6 {
            let bound = (10u64 << n).min(25) * 1_000_000;
            let draws: Vec<u64> = (0..500).map(|_| full_jitter(&b, n, &mut s).0).collect();
            assert!(draws.iter().all(|&d| d <= bound), "retry {n}");
            assert!(
                draws.iter().any(|&d| d > bound / 2),
                "retry {n} never used the upper half"
            );
            assert!(
                draws.iter().any(|&d| d < bound / 2),
                "retry {n} never used the lower half"
            );
        }
    }

    #[test]
    fn zero_base_means_no_wait_and_huge_exponents_do_not_overflow() {
        let mut s = Stream::new(1, "t");
        let none = Backoff {
            base: SimDuration::ZERO,
            cap: None,
        };
        assert_eq!(full_jitter(&none, 3, &mut s), SimDuration::ZERO);
        let huge = Backoff {
            base: SimDuration::from_secs(1),
            cap: None,
        };
        let _ = full_jitter(&huge, 200, &mut s);
    }
}
