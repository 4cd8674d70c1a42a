//! Shedding at dequeue by time (`services.<name>.drop_expired`, `max_queue_time`): when a freed
//! slot takes a queued request, the request is dropped instead — the service replies `error` at
//! once, without doing its work — if its deadline has passed (`drop_expired`; needs a propagated
//! deadline) or it waited longer than `max_queue_time`. CoDel, the third shedding rule at dequeue,
//! is [`super::codel`]; the three are checked in that order.

use crate::time::{SimDuration, SimTime};

/// Whether `drop_expired` drops a request with `deadline` dequeued at `now`.
#[inline]
pub(crate) fn expired(drop_expired: bool, deadline: SimTime, now: SimTime) -> bool {
    drop_expired && deadline <= now
}

/// Whether `max_queue_time` drops a request that waited `wait`.
#[inline]
pub(crate) fn waited_too_long(max_queue_time: Option<SimDuration>, wait: SimDuration) -> bool {
    max_queue_time.is_some_and(|m| wait > m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted};

    #[test]
    fn accepted_forms() {
        accepted(At::Service, &["drop_expired: true\nmax_queue_time: 0s"]);
    }

    #[test]
    fn drops_at_the_deadline_and_past_the_queue_time() {
        assert!(expired(true, SimTime(5), SimTime(5)));
        assert!(!expired(true, SimTime(6), SimTime(5)));
        assert!(!expired(false, SimTime(5), SimTime(9)));
        assert!(!expired(true, SimTime::NEVER, SimTime(9)));
        let m = Some(SimDuration(10));
        assert!(!waited_too_long(m, SimDuration(10)));
        assert!(waited_too_long(m, SimDuration(11)));
        assert!(!waited_too_long(None, SimDuration(u64::MAX)));
    }
}
