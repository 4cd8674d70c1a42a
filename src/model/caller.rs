//! The caller side of a call edge. Owns attempts: the attempt timeout (the edge's own, cut to the
//! caller's remaining deadline), deadline propagation, timeouts cancelled by tombstone, replies
//! (late ones counted as wasted work), the gRFC A6 token bucket, full-jitter backoff and the
//! decision to retry or fail the call. Also credits goodput up the call tree when a reply is
//! accepted.

use super::policy::backoff::full_jitter;
use super::policy::timeout::attempt_timeout;
use super::slab::Handle;
use super::{Event, NO_JOB, Outcome, Owner, Simulation};
use crate::time::SimTime;

impl Simulation<'_> {
    /// Sends the job's next attempt on its current call, or fails the call at once when the job's
    /// deadline has already passed.
    pub(super) fn send_attempt(&mut self, job: u32) {
        let now = self.now();
        let sc = self.sc;
        let j = self.jobs[job];
        let edge_id = sc.services[j.service as usize].calls[j.call as usize];
        let edge = &sc.edges[edge_id];
        let Some(timeout) = attempt_timeout(edge.attempt_timeout, j.deadline, now) else {
            self.rec.edges[edge_id].deadline_exhausted += 1;
            self.finish(job, Outcome::Error);
            return;
        };
        debug_assert!(
            j.retries_used <= edge.retries,
            "{}: retry {} of at most {}",
            edge.name,
            j.retries_used,
            edge.retries
        );
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
        if let Some(bucket) = &mut self.edges[edge_id].bucket {
            bucket.on_success();
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
        if let Some(bucket) = &mut self.edges[edge_id].bucket {
            bucket.on_failure();
        }
        let j = self.jobs[job];
        let may_retry = j.retries_used < edge.retries && now < j.deadline;
        if !may_retry {
            self.finish(job, Outcome::Error);
            return;
        }
        if self.edges[edge_id]
            .bucket
            .is_some_and(|b| !b.allows_retry())
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
