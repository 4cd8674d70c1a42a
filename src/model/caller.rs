//! The caller side of an attempt, after it was sent. Owns settling attempts: timeouts (cancelled
//! by tombstone when the reply came first), replies (late ones counted as wasted work at the
//! callee), what every settled attempt tells its edge's gate ([`super::gate::edge`], hook "on
//! settle") and its balancer, the edge's concurrency of attempts and retries, abandoning attempts a
//! job no longer waits for (with cancellation where the edge asks for it), and goodput credit up
//! the call tree.

use super::gate::{CallMemo, Settled};
use super::slab::Handle;
use super::{Attempt, Outcome, Owner, PUSHBACK_NO_RETRY, Simulation, Via};
use crate::ix::EdgeIx;
use crate::protections::retry_on::Failure;

impl Simulation<'_> {
    /// An attempt's timer fired. If the attempt is still open, it failed by timeout.
    pub(super) fn on_attempt_timeout(&mut self, attempt: Handle) {
        let Some(a) = self.attempts.take(attempt) else {
            return;
        };
        if let Some(t) = &mut self.spans {
            t.attempt_settled(attempt, self.engine.now(), "timeout", Some("timeout"));
        }
        match a.owner {
            Owner::User(user) => {
                self.balancer_settled(Via::Client(a.class), a.replica);
                self.client_attempt_timed_out(user, a.child)
            }
            Owner::Job(job, e) => {
                let memo = self.release(job, e, attempt, &a, false);
                let counts = self.sc.edges[e].retry_on.retries(Failure::Timeout);
                self.settle(e, attempt, Settled::TimedOut { counts }, memo);
                self.rec.edges[e].timeouts += 1;
                if self.sc.edges[e].cancel_on_abandon && !a.child.is_none() {
                    self.rec.edges[e].cancels_sent += 1;
                    self.cancel_job(a.child);
                }
                self.attempt_failed(job, a.call, 0, Failure::Timeout);
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
        let Some(a) = self.attempts.take(attempt) else {
            // Nobody waits for this reply: a job that completed did its work for nothing.
            if let Some(child) = self.jobs.take(job)
                && child.completed
            {
                self.rec.services[child.service].completed_abandoned += 1;
            }
            return;
        };
        if let Some(t) = &mut self.spans {
            let (word, error) = outcome.in_words();
            t.attempt_settled(attempt, self.engine.now(), word, error);
        }
        if outcome == Outcome::Success
            && let Owner::Job(parent, _) = a.owner
            && self.jobs.is_live(job)
        {
            self.credit_parent(job, parent);
        }
        match a.owner {
            Owner::User(user) => {
                self.balancer_settled(Via::Client(a.class), a.replica);
                if outcome == Outcome::Success {
                    self.client_attempt_succeeded(user, job);
                } else {
                    self.client_attempt_failed(user, outcome.failure());
                }
                self.jobs.take(job);
            }
            Owner::Job(parent, e) => {
                self.jobs.take(job);
                let memo = self.release(parent, e, attempt, &a, outcome == Outcome::Success);
                let edge = &self.sc.edges[e];
                let failure = outcome.failure();
                // gRFC A6: only retryable failures, and pushback saying not to retry, take a token.
                let counts = edge.retry_on.retries(failure)
                    || (edge.honor_retry_after && pushback_us == PUSHBACK_NO_RETRY);
                self.settle(e, attempt, Settled::Replied { outcome, counts }, memo);
                let ec = &mut self.rec.edges[e];
                match outcome {
                    Outcome::Success => ec.successes += 1,
                    Outcome::Error | Outcome::Fatal => ec.errors += 1,
                    Outcome::Reject => ec.rejects += 1,
                }
                if outcome == Outcome::Success {
                    self.call_succeeded(parent, a.call);
                } else {
                    self.attempt_failed(parent, a.call, pushback_us, failure);
                }
            }
        }
    }

    /// A settled attempt of `job` on edge `e` leaves its owner's list, its call's outstanding
    /// count and its edge's concurrency; its result (`ok`: success) goes to the edge's outlier
    /// detector, if any. Returns its call's gate memo.
    #[inline(always)]
    fn release(
        &mut self,
        job: Handle,
        e: EdgeIx,
        attempt: Handle,
        a: &Attempt,
        ok: bool,
    ) -> CallMemo {
        self.unlink(job, attempt, a.next);
        let cs = self.call_state(job, a.call);
        cs.outstanding -= 1;
        let memo = cs.memo;
        let es = &mut self.edges[e];
        es.active -= 1;
        if a.retry {
            es.active_retries -= 1;
        }
        if let Some(b) = &mut es.balancer {
            b.settled(a.replica);
            b.on_result(self.engine.now(), a.replica, ok);
        }
        memo
    }

    /// The attempt settled as `settled`: the edge's gate learns it (hook "on settle"; `memo` is
    /// its call's gate memo).
    #[inline]
    fn settle(&mut self, e: EdgeIx, attempt: Handle, settled: Settled, memo: CallMemo) {
        let now = self.engine.now();
        let permits = &self.attempt_permits;
        self.edges[e]
            .gate
            .on_settle(now, settled, permits, attempt.index as usize, memo);
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

    /// The job stops waiting for its outstanding attempts (all, or those of one call): each is
    /// settled without a result, and its callee's work is cancelled where the edge says so.
    ///
    /// Most jobs and calls end with nothing outstanding: that case is answered here, inline,
    /// without a call into the walk of the list.
    #[inline]
    pub(super) fn abandon_attempts(&mut self, job: Handle, only_call: Option<u16>) {
        let head = self.jobs[job].attempts;
        if !head.is_none() {
            self.abandon_listed(job, head, only_call);
        }
    }

    /// [`Simulation::abandon_attempts`] for a job whose list starts at `head`.
    fn abandon_listed(&mut self, job: Handle, head: Handle, only_call: Option<u16>) {
        let mut cur = head;
        let mut kept = Handle::NONE;
        while !cur.is_none() {
            let a = self.attempts[cur];
            let next = a.next;
            if only_call.is_some_and(|k| k != a.call) {
                self.attempts[cur].next = kept;
                kept = cur;
            } else {
                self.attempts.take(cur);
                if let Some(t) = &mut self.spans {
                    t.attempt_settled(cur, self.engine.now(), "abandoned", None);
                }
                // Only a job's attempts are listed: each went over one of its calls.
                let Owner::Job(_, e) = a.owner else {
                    unreachable!("a client attempt in a job's list")
                };
                let cs = self.call_state(job, a.call);
                cs.outstanding -= 1;
                let memo = cs.memo;
                self.settle(e, cur, Settled::Abandoned, memo);
                let es = &mut self.edges[e];
                es.active -= 1;
                if a.retry {
                    es.active_retries -= 1;
                }
                self.balancer_settled(Via::Edge(e), a.replica);
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
        self.useful[p + self.jobs[child].service.index()] += 1;
    }
}
