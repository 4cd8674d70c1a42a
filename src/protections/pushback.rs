//! Retry-after hints (gRPC pushback semantics): a service's `pushback` attaches a hint to each of
//! its rejects — a fixed delay, a delay per request queued at the moment of the reject, or "do not
//! retry" — and an edge with `honor_retry_after` waits at least the hint before its retry, or does
//! not retry when told not to. The hint travels in the reply as microseconds.

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::time::SimDuration;

/// "Do not retry" in a reply's hint; 0 means no hint.
pub(crate) const NO_RETRY_US: u32 = u32::MAX;

/// A retry-after hint: exactly one of the keys.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PushbackRaw {
    /// A fixed delay.
    pub delay: Option<DurationText>,
    /// A delay per request queued at the moment of the reject.
    pub per_queued: Option<DurationText>,
    /// Tell callers not to retry.
    pub no_retry: Option<bool>,
}

/// A retry-after hint on rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushback {
    /// Retry no sooner than this.
    Delay(SimDuration),
    /// Retry no sooner than this times the queue length at the reject.
    PerQueued(SimDuration),
    /// Do not retry.
    NoRetry,
}

impl Pushback {
    /// The hint on a reject while `queued` requests wait, in microseconds (0: none, at least 1
    /// otherwise; [`NO_RETRY_US`]: do not retry).
    #[inline]
    pub fn hint_us(&self, queued: u64) -> u32 {
        let micros = |d: SimDuration| (d.0 / 1_000).clamp(1, NO_RETRY_US as u64 - 1) as u32;
        match *self {
            Pushback::Delay(d) => micros(d),
            Pushback::PerQueued(_) if queued == 0 => 0,
            Pushback::PerQueued(d) => micros(SimDuration(d.0.saturating_mul(queued))),
            Pushback::NoRetry => NO_RETRY_US,
        }
    }
}

/// The wait before a retry on an edge that honours hints: at least the hint (`hint_us` > 0).
#[inline]
pub(crate) fn honored_wait(backoff: SimDuration, hint_us: u32) -> SimDuration {
    backoff.max(SimDuration(hint_us as u64 * 1_000))
}

/// Checks `pushback` at `key`.
pub(crate) fn validate(
    key: &str,
    p: &PushbackRaw,
    problems: &mut impl Problems,
) -> Option<Pushback> {
    let given = [
        p.delay.is_some(),
        p.per_queued.is_some(),
        p.no_retry.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        problems.problem(
            key,
            "give exactly one of `delay`, `per_queued`, `no_retry: true`".into(),
        );
        return None;
    }
    match (p.delay, p.per_queued, p.no_retry) {
        (Some(d), _, _) => Some(Pushback::Delay(d.0)),
        (_, Some(d), _) => Some(Pushback::PerQueued(d.0)),
        (_, _, Some(true)) => Some(Pushback::NoRetry),
        _ => {
            problems.problem(
                &format!("{key}.no_retry"),
                "`no_retry: false` means nothing; remove `pushback` instead".into(),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        let one = "give exactly one of `delay`, `per_queued`, `no_retry: true`";
        check(
            At::Service,
            &[
                ("pushback: {}", "pushback", one),
                ("pushback: {delay: 1s, no_retry: true}", "pushback", one),
                (
                    "pushback: {no_retry: false}",
                    "pushback.no_retry",
                    "`no_retry: false` means nothing; remove `pushback` instead",
                ),
            ],
        );
        accepted(At::Service, &["pushback: {per_queued: 1ms}"]);
        accepted(At::Edge, &["honor_retry_after: true"]);
    }

    #[test]
    fn hints_in_microseconds() {
        assert_eq!(Pushback::Delay(SimDuration(2_500_000)).hint_us(7), 2_500);
        assert_eq!(
            Pushback::Delay(SimDuration(10)).hint_us(0),
            1,
            "at least 1 µs"
        );
        assert_eq!(Pushback::PerQueued(SimDuration(1_000_000)).hint_us(0), 0);
        assert_eq!(
            Pushback::PerQueued(SimDuration(1_000_000)).hint_us(3),
            3_000
        );
        assert_eq!(Pushback::NoRetry.hint_us(3), NO_RETRY_US);
        assert_eq!(
            honored_wait(SimDuration(5_000_000), 1_000),
            SimDuration(5_000_000)
        );
        assert_eq!(honored_wait(SimDuration(0), 1_000), SimDuration(1_000_000));
    }
}
