//! Admission at a service (`services.<name>.queue_cap`, `reject_delay`): an arrival that finds no
//! free slot waits in the queue, unless the queue already holds `queue_cap` requests; then the
//! service replies `reject` after `reject_delay` (docs/model.md §2.4), with its retry-after hint if it
//! has one. Without `queue_cap` the queue is unbounded.

use super::Problems;
use crate::time::SimDuration;

/// Largest `queue_cap` accepted (as many as the largest slot count).
pub(crate) const MAX_QUEUE_CAP: u32 = 10_000_000;
/// Default delay of a `reject` reply (docs/model.md §2.4).
pub(crate) const DEFAULT_REJECT_DELAY: SimDuration = SimDuration(500_000);

/// Checks `queue_cap` at `key`.
pub(crate) fn validate_queue_cap(key: &str, cap: Option<u32>, p: &mut impl Problems) {
    match cap {
        Some(0) => p.problem(
            key,
            "must be at least 1; remove it for an unbounded queue".into(),
        ),
        Some(c) if c > MAX_QUEUE_CAP => p.problem(key, format!("must be at most {MAX_QUEUE_CAP}")),
        _ => {}
    }
}

/// Whether an arrival that cannot start at once is turned away: the queue holds `queued` of at
/// most `queue_cap` (`None`: unbounded).
#[inline]
pub(crate) fn queue_full(queue_cap: Option<u32>, queued: usize) -> bool {
    queue_cap.is_some_and(|cap| queued >= cap as usize)
}

#[cfg(test)]
mod tests {
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        check(
            At::Service,
            &[
                (
                    "queue_cap: 0",
                    "queue_cap",
                    "must be at least 1; remove it for an unbounded queue",
                ),
                (
                    "queue_cap: 10000001",
                    "queue_cap",
                    "must be at most 10000000",
                ),
            ],
        );
        accepted(At::Service, &["queue_cap: 10000000\nreject_delay: 0s"]);
    }
}
