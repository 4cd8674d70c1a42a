//! Timeouts and deadlines, at the client and on every edge: the attempt timeout of docs/model.md §2.6
//! (`attempt_timeout`: the caller's own bound on one attempt, cut to the time left before the
//! incoming request's deadline; no attempt at all once that time is gone), deadline propagation
//! (`propagate_deadline`: the request carries `now + timeout` as its absolute deadline, which the
//! callee's own calls are cut to and `drop_expired` acts on), and cancellation
//! (`cancel_on_abandon`: when the caller gives up on an attempt, the callee's queued or running
//! work for it is cancelled), and the call timeout (`call_timeout`: one bound on all attempts and
//! backoffs of a call, from its first attempt — Envoy's route `timeout` over its `per_try_timeout`,
//! gRPC's call `timeout`; attempts are cut to it as to a deadline, a retry whose backoff would end
//! past it is not sent, and the call fails at that instant).

use super::{DurationText, Problems};
use crate::time::{SimDuration, SimTime};

/// Events the attempt timeout schedules, per attempt sent (at the client or on an edge): its
/// timer (`AttemptTimeout`; a timer whose attempt settled first is dropped unprocessed). One of
/// the declarations the guard's event bound sums ([`crate::guard::events_per_send`]).
pub(crate) const EVENTS_PER_ATTEMPT: u32 = 1;

/// Checks an optional `call_timeout` at `key` (default none).
pub(crate) fn validate_call_timeout(
    key: &str,
    d: Option<DurationText>,
    p: &mut impl Problems,
) -> Option<SimDuration> {
    d.and_then(|d| super::positive(key, d.0, p))
}

/// The earlier of a request's deadline and its call's own deadline (`SimTime::NEVER` for none).
#[inline]
pub(crate) fn call_deadline(deadline: SimTime, call: SimTime) -> SimTime {
    deadline.min(call)
}

/// Checks an `attempt_timeout` at `key` (required, so there is no default).
pub(crate) fn validate(key: &str, d: SimDuration, p: &mut impl Problems) -> SimDuration {
    super::positive(key, d, p);
    d
}

/// The deadline a request sent now with `timeout` carries: `now + timeout` when the caller
/// propagates deadlines, else none (`SimTime::NEVER`).
#[inline]
pub(crate) fn propagated_deadline(propagate: bool, now: SimTime, timeout: SimDuration) -> SimTime {
    if propagate {
        now + timeout
    } else {
        SimTime::NEVER
    }
}

/// `min(local, deadline − now)`, or `None` when the deadline is at or before `now` (the attempt
/// fails at once without being sent). `SimTime::NEVER` means no deadline.
#[inline]
pub(crate) fn attempt_timeout(
    local: SimDuration,
    deadline: SimTime,
    now: SimTime,
) -> Option<SimDuration> {
    if deadline == SimTime::NEVER {
        return Some(local);
    }
    if deadline <= now {
        return None;
    }
    Some(local.min(deadline - now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, check};

    #[test]
    fn bad_snippets() {
        for at in [At::Client, At::Edge] {
            check(
                at,
                &[
                    (
                        "attempt_timeout: 0s",
                        "attempt_timeout",
                        "must be longer than 0s",
                    ),
                    ("call_timeout: 0s", "call_timeout", "must be longer than 0s"),
                ],
            );
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn local_timeout_without_deadline() {
        assert_eq!(
            attempt_timeout(SimDuration(300 * MS), SimTime::NEVER, SimTime(5)),
            Some(SimDuration(300 * MS))
        );
    }

    #[test]
    fn cut_to_remaining_time() {
        let now = SimTime(1_000 * MS);
        assert_eq!(
            attempt_timeout(SimDuration(300 * MS), SimTime(1_100 * MS), now),
            Some(SimDuration(100 * MS))
        );
        assert_eq!(
            attempt_timeout(SimDuration(300 * MS), SimTime(2_000 * MS), now),
            Some(SimDuration(300 * MS))
        );
    }

    #[test]
    fn no_attempt_once_the_deadline_passed() {
        assert_eq!(
            attempt_timeout(SimDuration(300 * MS), SimTime(10), SimTime(10)),
            None
        );
        assert_eq!(
            attempt_timeout(SimDuration(300 * MS), SimTime(10), SimTime(11)),
            None
        );
    }
}
