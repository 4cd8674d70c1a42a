//! The attempt timeout of docs/model.md §2.6: the edge's own `attempt_timeout`, cut to the time left
//! before the incoming request's deadline; no attempt at all once that time is gone.

use crate::time::{SimDuration, SimTime};

/// `min(local, deadline − now)`, or `None` when the deadline is at or before `now` (the attempt
/// fails at once without being sent). `SimTime::NEVER` means no deadline.
#[inline]
pub fn attempt_timeout(local: SimDuration, deadline: SimTime, now: SimTime) -> Option<SimDuration> {
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
