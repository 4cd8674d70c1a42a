//! The caller side of a call edge. Owns attempts: the attempt timeout (the edge's own, cut to the
//! caller's remaining deadline), deadline propagation, timeouts cancelled by tombstone, replies
//! (late ones counted as wasted work), the gRFC A6 token bucket, full-jitter backoff and the
//! decision to retry or fail the call. Also credits goodput up the call tree when a reply is
//! accepted.

use super::slab::Handle;
use super::{Event, NO_JOB, Outcome, Owner, Simulation};
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// Sends the job's next attempt on its current call, or fails the call at once when the job's
    /// deadline has already passed.
    pub(super) fn send_attempt(&mut self, job: u32) {
        let now = self.now();
        let sc = self.sc;
        let j = self.jobs[job];
        let edge_id = sc.services[j.service as usize].calls[j.call as usize];
        let edge = &sc.edges[edge_id];
        let mut timeout = edge.attempt_timeout;
        if j.deadline != SimTime::NEVER {
            if j.deadline <= now {
                self.rec.edges[edge_id].deadline_exhausted += 1;
                self.finish(job, Outcome::Error);
                return;
            }
            timeout = timeout.min(j.deadline - now);
        }
        let ec = &mut self.rec.edges[edge_id];
        ec.attempts += 1;
        if j.retries_used > 0 {
            ec.retries += 1;
        }
        let attempt = self.attempts.insert(Owner::Job(job));
        self.engine
            .schedule_in(timeout, Event::AttemptTimeout { attempt });
        let deadline = if edge.propagate_deadline {
            now + timeout
        } else {
            SimTime::NEVER
        };
        self.deliver(edge.callee as u32, attempt, deadline);
    }

    /// An attempt's timer fired. If the attempt is still open, it failed by timeout.
    pub(super) fn on_attempt_timeout(&mut self, attempt: Handle) {
        let Some(owner) = self.attempts.take(attempt) else {
            return;
        };
        match owner {
            Owner::User(user) => self.client_attempt_failed(user),
            Owner::Job(job) => {
                let edge_id = self.current_edge(job);
                self.rec.edges[edge_id].timeouts += 1;
                self.call_failed(job);
            }
        }
    }

    /// A reply reaches the caller of `attempt`. Frees the replying job; a completed job whose
    /// caller already gave up is wasted work; an accepted success passes goodput credit upward.
    pub(super) fn on_reply(&mut self, attempt: Handle, outcome: Outcome, job: u32) {
        let owner = self.attempts.take(attempt);
        if job != NO_JOB {
            let j = self.jobs[job];
            if j.completed && owner.is_none() {
                self.rec.services[j.service as usize].completed_abandoned += 1;
            }
            if outcome == Outcome::Success
                && let Some(Owner::Job(parent)) = owner
            {
                self.credit_parent(job, parent);
            }
        }
        let Some(owner) = owner else {
            if job != NO_JOB {
                self.jobs.remove(job);
            }
            return;
        };
        match owner {
            Owner::User(user) => {
                if outcome == Outcome::Success {
                    self.client_attempt_succeeded(user, job);
                } else {
                    self.client_attempt_failed(user);
                }
            }
            Owner::Job(parent) => {
                let edge_id = self.current_edge(parent);
                let ec = &mut self.rec.edges[edge_id];
                match outcome {
                    Outcome::Success => ec.successes += 1,
                    Outcome::Error => ec.errors += 1,
                    Outcome::Reject => ec.rejects += 1,
                }
                if outcome == Outcome::Success {
                    self.call_succeeded(parent);
                } else {
                    self.call_failed(parent);
                }
            }
        }
        if job != NO_JOB {
            self.jobs.remove(job);
        }
    }

    /// Adds the child's accepted call tree (and the child itself) to the parent's.
    fn credit_parent(&mut self, child: u32, parent: u32) {
        let n = self.sc.services.len();
        let (c, p) = (child as usize * n, parent as usize * n);
        for s in 0..n {
            self.useful[p + s] += self.useful[c + s];
        }
        self.useful[p + self.jobs[child].service as usize] += 1;
    }

    fn current_edge(&self, job: u32) -> usize {
        let j = &self.jobs[job];
        self.sc.services[j.service as usize].calls[j.call as usize]
    }

    fn call_succeeded(&mut self, job: u32) {
        let edge_id = self.current_edge(job);
        if let Some(t) = self.sc.edges[edge_id].throttle {
            let tokens = &mut self.edges[edge_id].tokens_milli;
            *tokens = (*tokens + t.ratio_milli).min(t.max_milli);
        }
        self.jobs[job].call += 1;
        self.advance(job);
    }

    /// The current attempt failed: retry (after backoff) while retries remain, the deadline allows
    /// and the throttle permits; otherwise the call, and so the job, fails.
    fn call_failed(&mut self, job: u32) {
        let now = self.now();
        let edge_id = self.current_edge(job);
        let edge = &self.sc.edges[edge_id];
        if edge.throttle.is_some() {
            let tokens = &mut self.edges[edge_id].tokens_milli;
            *tokens = tokens.saturating_sub(1000);
        }
        let j = self.jobs[job];
        let may_retry = j.retries_used < edge.retries && now < j.deadline;
        if !may_retry {
            self.finish(job, Outcome::Error);
            return;
        }
        if let Some(t) = edge.throttle
            && !throttle_allows(self.edges[edge_id].tokens_milli, t.max_milli)
        {
            self.rec.edges[edge_id].retries_throttled += 1;
            self.finish(job, Outcome::Error);
            return;
        }
        let n = j.retries_used;
        self.jobs[job].retries_used += 1;
        let wait = full_jitter(&edge.backoff, n, &mut self.edges[edge_id].jitter);
        if wait.is_zero() {
            self.send_attempt(job);
        } else {
            self.engine.schedule_in(wait, Event::EdgeRetry { job });
        }
    }
}

/// gRFC A6: a retry is allowed only while tokens > max_tokens / 2.
#[inline]
pub(crate) fn throttle_allows(tokens_milli: u64, max_milli: u64) -> bool {
    tokens_milli * 2 > max_milli
}

/// Full jitter: U[0, min(cap, base·2^n)] before retry `n` (0-based).
#[inline]
pub(crate) fn full_jitter(
    backoff: &crate::scenario::Backoff,
    n: u32,
    stream: &mut crate::rng::Stream,
) -> SimDuration {
    if backoff.base.is_zero() {
        return SimDuration::ZERO;
    }
    let upper = backoff
        .base
        .0
        .saturating_mul(1u64.checked_shl(n).unwrap_or(u64::MAX));
    let upper = backoff.cap.map_or(upper, |c| upper.min(c.0));
    SimDuration(stream.up_to(upper))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::scenario::Backoff;

    #[test]
    fn a6_threshold_is_strictly_above_half() {
        // max 10 tokens: 5.001 allows, 5.000 refuses.
        assert!(throttle_allows(5_001, 10_000));
        assert!(!throttle_allows(5_000, 10_000));
        assert!(!throttle_allows(0, 10_000));
    }

    #[test]
    fn full_jitter_stays_within_doubling_bound_and_cap() {
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
        }
        let none = Backoff {
            base: SimDuration::ZERO,
            cap: None,
        };
        assert_eq!(full_jitter(&none, 3, &mut s), SimDuration::ZERO);
        let huge = Backoff {
            base: SimDuration::from_secs(1),
            cap: None,
        };
        let _ = full_jitter(&huge, 200, &mut s); // no overflow panic
    }
}
