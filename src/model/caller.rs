//! The caller side of an attempt, after it was sent. Owns settling attempts: timeouts (cancelled
//! by tombstone when the reply came first), replies (late ones counted as wasted work at the
//! callee), the policy bookkeeping every settled attempt feeds (A6 tokens, circuit breaker,
//! adaptive-throttle accepts, retry-budget concurrency), abandoning attempts a job no longer waits
//! for (with cancellation where the edge asks for it), and goodput credit up the call tree.

use super::slab::Handle;
use super::{Attempt, CLIENT_EDGE, Outcome, Owner, Simulation};

impl Simulation<'_> {
    /// An attempt's timer fired. If the attempt is still open, it failed by timeout.
    pub(super) fn on_attempt_timeout(&mut self, attempt: Handle) {
        let Some(a) = self.attempts.take(attempt) else {
            return;
        };
        match a.owner {
            Owner::User(user) => {
                self.balancer_settled(CLIENT_EDGE, a.replica);
                self.client_attempt_timed_out(user, a.child)
            }
            Owner::Job(job) => {
                self.release(job, attempt, &a);
                let e = a.edge as usize;
                self.rec.edges[e].timeouts += 1;
                if self.sc.edges[e].cancel_on_abandon && !a.child.is_none() {
                    self.rec.edges[e].cancels_sent += 1;
                    self.cancel_job(a.child);
                }
                self.feed_policies(e, false);
                self.attempt_failed(job, a.call, 0);
            }
        }
    }

    /// A reply reaches the caller of `attempt`. Frees the replying job; a completed job whose
    /// caller already gave up is wasted work; an accepted success passes goodput credit upward.
    pub(super) fn on_reply(
        &mut self,
        attempt: Handle,
        outcome: Outcome,
        job: Handle,
        pushback_us: u32,
    ) {
        let a = self.attempts.take(attempt);
        if let Some(child) = self.jobs.get(job).copied() {
            if child.completed && a.is_none() {
                self.rec.services[child.service as usize].completed_abandoned += 1;
            }
            if outcome == Outcome::Success
                && let Some(Attempt {
                    owner: Owner::Job(parent),
                    ..
                }) = a
            {
                self.credit_parent(job, parent);
            }
        }
        let Some(a) = a else {
            self.jobs.take(job);
            return;
        };
        match a.owner {
            Owner::User(user) => {
                self.balancer_settled(CLIENT_EDGE, a.replica);
                if outcome == Outcome::Success {
                    self.client_attempt_succeeded(user, job);
                } else {
                    self.client_attempt_failed(user);
                }
                self.jobs.take(job);
            }
            Owner::Job(parent) => {
                self.jobs.take(job);
                self.release(parent, attempt, &a);
                let e = a.edge as usize;
                let ec = &mut self.rec.edges[e];
                match outcome {
                    Outcome::Success => ec.successes += 1,
                    Outcome::Error => ec.errors += 1,
                    Outcome::Reject => ec.rejects += 1,
                }
                self.feed_policies(e, outcome == Outcome::Success);
                if outcome == Outcome::Success {
                    self.call_succeeded(parent, a.call);
                } else {
                    self.attempt_failed(parent, a.call, pushback_us);
                }
            }
        }
    }

    /// A settled attempt leaves its owner's list, its call's outstanding count and its edge's
    /// concurrency.
    fn release(&mut self, job: Handle, attempt: Handle, a: &Attempt) {
        self.unlink(job, attempt, a.next);
        let cs = self.call_state(job, a.call);
        cs.outstanding -= 1;
        if a.edge != CLIENT_EDGE {
            let es = &mut self.edges[a.edge as usize];
            es.active -= 1;
            if a.retry {
                es.active_retries -= 1;
            }
            if let Some(b) = &mut es.balancer {
                b.settled(a.replica as u32);
            }
        }
    }

    /// Removes `attempt` (whose successor is `next`) from the job's outstanding list.
    fn unlink(&mut self, job: Handle, attempt: Handle, next: Handle) {
        let head = self.jobs[job].attempts;
        if head == attempt {
            self.jobs[job].attempts = next;
            return;
        }
        let mut cur = head;
        while !cur.is_none() {
            let n = self.attempts[cur].next;
            if n == attempt {
                self.attempts[cur].next = next;
                return;
            }
            cur = n;
        }
    }

    /// Every settled attempt's result feeds the edge's A6 bucket, breaker and adaptive throttle.
    fn feed_policies(&mut self, e: usize, ok: bool) {
        let now = self.now();
        let es = &mut self.edges[e];
        if let Some(b) = &mut es.bucket {
            if ok { b.on_success() } else { b.on_failure() }
        }
        if let Some(b) = &mut es.breaker {
            b.on_result(now, ok);
        }
        if ok && let Some((a, _)) = &mut es.adaptive {
            a.on_accept(now);
        }
    }

    /// The job stops waiting for its outstanding attempts (all, or those of one call): each is
    /// settled without a result, and its callee's work is cancelled where the edge says so.
    pub(super) fn abandon_attempts(&mut self, job: Handle, only_call: Option<u16>) {
        let mut cur = self.jobs[job].attempts;
        if cur.is_none() {
            return;
        }
        let mut kept = Handle::NONE;
        while !cur.is_none() {
            let a = self.attempts[cur];
            let next = a.next;
            if only_call.is_some_and(|k| k != a.call) {
                self.attempts[cur].next = kept;
                kept = cur;
            } else {
                self.attempts.take(cur);
                self.call_state(job, a.call).outstanding -= 1;
                let es = &mut self.edges[a.edge as usize];
                es.active -= 1;
                if a.retry {
                    es.active_retries -= 1;
                }
                if let Some(b) = &mut es.balancer {
                    b.settled(a.replica as u32);
                }
                let e = a.edge as usize;
                if self.sc.edges[e].cancel_on_abandon && !a.child.is_none() {
                    self.rec.edges[e].cancels_sent += 1;
                    self.cancel_job(a.child);
                }
            }
            cur = next;
        }
        if let Some(j) = self.jobs.get_mut(job) {
            j.attempts = kept;
        }
    }

    /// Adds the child's accepted call tree (and the child itself) to the parent's.
    fn credit_parent(&mut self, child: Handle, parent: Handle) {
        let n = self.sc.services.len();
        let (c, p) = (child.index as usize * n, parent.index as usize * n);
        for s in 0..n {
            self.useful[p + s] += self.useful[c + s];
        }
        self.useful[p + self.jobs[child].service as usize] += 1;
    }
}
