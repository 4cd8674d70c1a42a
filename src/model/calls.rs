//! The calls a job makes while it holds its slot. Owns the call state machine: calls in order, or
//! all at once for a `parallel` service (the job succeeds when every call has); sending an attempt
//! past the remaining deadline and the edge's gate ([`super::gate::edge`]: pacing, then the
//! checks before a send); retries after a failed attempt (retry count, `retry_on`, deadline, the
//! gate's checks before a retry, backoff, call timeout); hedges (another attempt after
//! `hedge.delay` while no reply, first success wins). No protection is named here: each acts
//! through the gate's hooks.

use super::gate::{Reason, RetryAsk, Verdict, keep_permit};
use super::slab::Handle;
use super::{Attempt, CallState, Event, JobState, Outcome, Owner, Simulation, Via};
use crate::ix::{EdgeIx, ReplicaIx};
use crate::protections::retry::backoff_wait;
use crate::protections::retry_on::Failure;
use crate::protections::timeout::{attempt_timeout, call_deadline, propagated_deadline};
use crate::time::SimTime;

impl Simulation<'_> {
    /// The retry and hedge state of call `k` of `job`.
    #[inline]
    pub(super) fn call_state(&mut self, job: Handle, k: u16) -> &mut CallState {
        &mut self.call_states[job.index as usize * self.max_calls + k as usize]
    }

    fn edge_of(&self, job: Handle, k: u16) -> EdgeIx {
        self.sc.services[self.jobs[job].service].calls[k as usize]
    }

    fn running(&self, job: Handle) -> bool {
        self.jobs
            .get(job)
            .is_some_and(|j| j.state == JobState::Running)
    }

    /// The job's own work is done: start its calls (or finish if it makes none).
    pub(super) fn begin_calls(&mut self, job: Handle) {
        let sc = self.sc;
        let service = &sc.services[self.jobs[job].service];
        let n = service.calls.len();
        if n == 0 {
            self.finish(job, Outcome::Success);
            return;
        }
        let base = job.index as usize * self.max_calls;
        // One call (the article's chain) is one store, not a `memset` call.
        if n == 1 {
            self.call_states[base] = CallState::default();
        } else {
            self.call_states[base..base + n].fill(CallState::default());
        }
        if service.stages.is_some() {
            self.jobs[job].call = 0;
            self.start_step(job, 0);
        } else if service.parallel {
            self.jobs[job].pending = n as u16;
            for k in 0..n as u16 {
                if !self.running(job) {
                    break;
                }
                self.start_call(job, k);
            }
        } else {
            let j = &mut self.jobs[job];
            j.call = 0;
            j.pending = 1;
            self.start_call(job, 0);
        }
    }

    /// Whether the job makes call `k`: not if the edge lists `classes` without the job's; else
    /// always, or with the edge's `probability` (one draw from the edge's own stream, only for
    /// the jobs of a class that makes the call).
    #[inline]
    fn takes_call(&mut self, job: Handle, k: u16) -> bool {
        let e = self.edge_of(job, k);
        if !self.sc.edges[e].taken_by(self.jobs[job].class) {
            return false;
        }
        match self.sc.edges[e].probability {
            None => true,
            Some(p) => {
                let stream = self.edges[e]
                    .probability
                    .as_mut()
                    .expect("a stream per probability");
                stream.unit() < p
            }
        }
    }

    /// Starts the calls `taken` together; with none, the group is done at once: the job
    /// succeeds (`last`) or goes on to its next step.
    fn start_together(&mut self, job: Handle, taken: &[u16], last: bool) {
        if taken.is_empty() {
            if last {
                self.finish(job, Outcome::Success);
            } else {
                let next = self.jobs[job].call + 1;
                self.jobs[job].call = next;
                self.start_step(job, next);
            }
            return;
        }
        self.jobs[job].pending = taken.len() as u16;
        for &k in taken {
            if !self.running(job) {
                break;
            }
            self.start_call(job, k);
        }
    }

    /// Step `i` of a service with `stages`: its calls the job takes, started together.
    fn start_step(&mut self, job: Handle, i: u16) {
        let sc = self.sc;
        let steps = sc.services[self.jobs[job].service]
            .stages
            .as_ref()
            .expect("a staged service");
        let Some(step) = steps.get(i as usize) else {
            self.finish(job, Outcome::Success);
            return;
        };
        let taken: Vec<u16> = step
            .iter()
            .copied()
            .filter(|&k| self.takes_call(job, k))
            .collect();
        self.start_together(job, &taken, i as usize + 1 == steps.len());
    }

    /// The deadline that bounds call `k` now: the request's, or the call's own if earlier.
    #[inline]
    fn deadline_of(&mut self, job: Handle, k: u16, e: EdgeIx) -> SimTime {
        let d = self.jobs[job].deadline;
        if self.sc.edges[e].call_timeout.is_some() {
            call_deadline(d, self.call_state(job, k).deadline)
        } else {
            d
        }
    }

    #[inline(always)]
    fn start_call(&mut self, job: Handle, k: u16) {
        let e = self.edge_of(job, k);
        if let Some(ct) = self.sc.edges[e].call_timeout {
            let at = self.now() + ct;
            self.call_state(job, k).deadline = at;
        }
        let now = self.engine.now();
        self.edges[e].gate.call_start(now);
        self.send_attempt(job, k, false, false);
        if let Some(h) = self.sc.edges[e].hedge
            && self.running(job)
            && !self.call_state(job, k).done
        {
            self.engine
                .schedule_in(h.delay, Event::HedgeFire { job, call: k });
        }
    }

    /// Sends an attempt on call `k`, unless the edge's gate holds it (hook "pace": the send comes
    /// back as a `RateLimitedSend` event), the deadline is gone or the gate refuses it.
    fn send_attempt(&mut self, job: Handle, k: u16, retry: bool, hedge: bool) {
        let e = self.edge_of(job, k);
        if self.edges[e].gate.paces() {
            let now = self.now();
            let deadline = self.deadline_of(job, k, e);
            if let Verdict::Hold(wait, _) = self.edges[e].gate.pace(now, deadline) {
                self.engine.schedule_in(
                    wait,
                    Event::RateLimitedSend {
                        job,
                        call: k,
                        retry,
                    },
                );
                return;
            }
        }
        self.send_unheld(job, k, retry, hedge);
    }

    /// [`Self::send_attempt`] past the gate's pacing: for a send it held, whose token is
    /// reserved (or whose wait ended at the deadline, where the pacing would let it go).
    fn send_unheld(&mut self, job: Handle, k: u16, retry: bool, hedge: bool) {
        let now = self.now();
        let sc = self.sc;
        let e = self.edge_of(job, k);
        let edge = &sc.edges[e];
        let j = self.jobs[job];
        // Every try counts toward the call's hedges, even one refused below, so a call whose
        // hedges keep being refused locally cannot loop.
        self.call_state(job, k).sent += 1;
        let deadline = self.deadline_of(job, k, e);
        let Some(timeout) = attempt_timeout(edge.attempt_timeout, deadline, now) else {
            self.rec.edges[e].deadline_exhausted += 1;
            self.trace_local_failure(job, k, e, "deadline_exhausted");
            if self.call_state(job, k).outstanding == 0 {
                self.finish(job, Outcome::Error);
            }
            return;
        };
        let mut permit = None;
        if let Verdict::Refuse(reason) = self.edges[e].gate.before_send(now, j.class, &mut permit) {
            self.refused_locally(job, k, e, reason);
            return;
        }
        debug_assert!(
            self.call_state(job, k).retries_used as u32 <= edge.retries,
            "{}: retry beyond the configured maximum",
            edge.name
        );
        let ec = &mut self.rec.edges[e];
        ec.attempts += 1;
        if retry {
            ec.retries += 1;
        }
        if hedge {
            ec.hedges += 1;
        }
        let attempt = self.attempts.insert(Attempt {
            owner: Owner::Job(job, e),
            call: k,
            retry,
            replica: ReplicaIx::new(0),
            class: j.class,
            child: Handle::NONE,
            next: j.attempts,
        });
        self.jobs[job].attempts = attempt;
        if let Some(t) = &mut self.spans {
            let n = self.call_states[job.index as usize * self.max_calls + k as usize].sent;
            t.call_attempt(
                attempt,
                job,
                j.service,
                edge.callee,
                n as u32,
                (retry, hedge),
                now,
            );
        }
        if let Some(permit) = permit {
            let capacity = self.attempts.capacity();
            keep_permit(
                &mut self.attempt_permits,
                attempt.index as usize,
                capacity,
                permit,
            );
        }
        let es = &mut self.edges[e];
        es.active += 1;
        if retry {
            es.active_retries += 1;
        }
        self.call_state(job, k).outstanding += 1;
        self.engine
            .schedule_in(timeout, Event::AttemptTimeout { attempt });
        let deadline = propagated_deadline(edge.propagate_deadline, now, timeout);
        let child = self.send_to(Via::Edge(e), edge.callee, attempt, deadline);
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.child = child;
        }
    }

    /// The edge's gate refused an attempt of call `k` of `job` before it was sent: counted, and
    /// failed — the call when the reason ends it (and nothing else is outstanding), else the
    /// attempt as a local reject the call may retry.
    fn refused_locally(&mut self, job: Handle, k: u16, e: EdgeIx, reason: Reason) {
        reason.count_edge(&mut self.rec.edges[e]);
        self.trace_local_failure(job, k, e, reason.name());
        if reason.ends_call() {
            if self.call_state(job, k).outstanding == 0 {
                self.finish(job, Outcome::Error);
            }
        } else {
            self.attempt_failed(job, k, 0, Failure::Reject);
        }
    }

    /// An attempt of call `k` of `job` on edge `e` failed before it was sent (`reason`: the
    /// edge's counter): a span of it when the request is traced.
    #[cold]
    fn trace_local_failure(&mut self, job: Handle, k: u16, e: EdgeIx, reason: &'static str) {
        if let Some(t) = &mut self.spans {
            let n = self.call_states[job.index as usize * self.max_calls + k as usize].sent;
            let caller = self.jobs[job].service;
            t.local_failure(
                job,
                caller,
                self.sc.edges[e].callee,
                n as u32,
                reason,
                self.engine.now(),
            );
        }
    }

    /// A held send's wait elapsed: send it, with its reserved token, if the job still wants the
    /// call (a token reserved for a job gone is not given back, as a botocore sender that
    /// acquired one and then gave up spent it).
    pub(super) fn on_rate_limited_send(&mut self, job: Handle, k: u16, retry: bool) {
        if self.running(job) && !self.call_state(job, k).done {
            self.send_unheld(job, k, retry, false);
        }
    }

    /// A backoff elapsed: retry call `k` if the job still wants it.
    pub(super) fn on_edge_retry(&mut self, job: Handle, k: u16) {
        if self.running(job) && !self.call_state(job, k).done {
            self.send_attempt(job, k, true, false);
        }
    }

    /// The hedge delay elapsed: send another attempt while the call is open and hedges remain.
    pub(super) fn on_hedge_fire(&mut self, job: Handle, k: u16) {
        if !self.running(job) || self.call_state(job, k).done {
            return;
        }
        let e = self.edge_of(job, k);
        let Some(h) = self.sc.edges[e].hedge else {
            return;
        };
        if self.try_hedge(job, k, e) && self.running(job) {
            let cs = *self.call_state(job, k);
            if !cs.done && (cs.sent as u32) < h.max_hedges + 1 {
                self.engine
                    .schedule_in(h.delay, Event::HedgeFire { job, call: k });
            }
        }
    }

    /// Sends a hedge on call `k` if hedges remain and the A6 bucket allows; returns whether it
    /// tried (false: no hedges left or throttled).
    fn try_hedge(&mut self, job: Handle, k: u16, e: EdgeIx) -> bool {
        let Some(h) = self.sc.edges[e].hedge else {
            return false;
        };
        if self.call_state(job, k).sent as u32 > h.max_hedges
            || self.now() >= self.deadline_of(job, k, e)
        {
            return false;
        }
        let es = &mut self.edges[e];
        let ask = RetryAsk {
            now: self.engine.now(),
            hedge: true,
            pushback_us: 0,
            timed_out: false,
            active: es.active,
            active_retries: es.active_retries,
        };
        let memo = &mut self.call_states[job.index as usize * self.max_calls + k as usize].memo;
        if let Verdict::Refuse(reason) = es.gate.before_retry(ask, memo) {
            reason.count_edge(&mut self.rec.edges[e]);
            return false;
        }
        self.send_attempt(job, k, false, true);
        true
    }

    /// Call `k` got a success: the other attempts of the call are abandoned, and the job moves on.
    pub(super) fn call_succeeded(&mut self, job: Handle, k: u16) {
        self.call_state(job, k).done = true;
        self.abandon_attempts(job, Some(k));
        let sc = self.sc;
        let service = &sc.services[self.jobs[job].service];
        let j = &mut self.jobs[job];
        j.pending -= 1;
        if service.stages.is_some() {
            if j.pending == 0 {
                let next = j.call + 1;
                j.call = next;
                self.start_step(job, next);
            }
        } else if service.parallel {
            if j.pending == 0 {
                self.finish(job, Outcome::Success);
            }
        } else {
            j.call += 1;
            if (j.call as usize) < service.calls.len() {
                j.pending = 1;
                let next = j.call;
                self.start_call(job, next);
            } else {
                self.finish(job, Outcome::Success);
            }
        }
    }

    /// An attempt of call `k` failed (timeout, reject, error, or rejected locally): hedge again,
    /// retry, or fail the call and so the job. `pushback_us` is the callee's retry-after hint;
    /// a `failure` the edge does not retry (`retry_on`, non-retryable errors) ends the call.
    pub(super) fn attempt_failed(
        &mut self,
        job: Handle,
        k: u16,
        pushback_us: u32,
        failure: Failure,
    ) {
        if !self.running(job) || self.call_state(job, k).done {
            return;
        }
        let now = self.now();
        let e = self.edge_of(job, k);
        let sc = self.sc;
        let edge = &sc.edges[e];
        if !edge.retry_on.retries(failure) && (edge.hedge.is_some() || edge.retries > 0) {
            // gRFC A6: a fatal status ends the call; a hedged call cancels its other attempts.
            self.finish(job, Outcome::Error);
            return;
        }
        if edge.hedge.is_some() {
            // gRFC A6: a failed hedge sends the next one at once.
            self.try_hedge(job, k, e);
            if self.running(job)
                && self.call_state(job, k).outstanding == 0
                && !self.call_state(job, k).done
            {
                self.finish(job, Outcome::Error);
            }
            return;
        }
        let cs = *self.call_state(job, k);
        let deadline = self.deadline_of(job, k, e);
        if cs.retries_used as u32 >= edge.retries || now >= deadline {
            self.finish(job, Outcome::Error);
            return;
        }
        let es = &mut self.edges[e];
        let ask = RetryAsk {
            now,
            hedge: false,
            pushback_us,
            timed_out: failure == Failure::Timeout,
            active: es.active,
            active_retries: es.active_retries,
        };
        let memo = &mut self.call_states[job.index as usize * self.max_calls + k as usize].memo;
        let verdict = es.gate.before_retry(ask, memo);
        if let Verdict::Refuse(reason) = verdict {
            reason.count_edge(&mut self.rec.edges[e]);
            self.finish(job, Outcome::Error);
            return;
        }
        let n = cs.retries_used;
        let mut wait = backoff_wait(
            &edge.backoff,
            n as u32,
            cs.prev_wait,
            &mut self.edges[e].jitter,
        );
        let cs = self.call_state(job, k);
        cs.retries_used += 1;
        cs.prev_wait = wait;
        if let Verdict::Hold(at_least, reason) = verdict {
            reason.count_edge(&mut self.rec.edges[e]);
            wait = wait.max(at_least);
        }
        if edge.call_timeout.is_some() && now + wait > deadline {
            // The call times out while it waits: it fails at its deadline (the retry finds the
            // time gone), not when the backoff would have ended.
            wait = deadline - now;
        }
        if wait.is_zero() {
            self.send_attempt(job, k, true, false);
        } else {
            self.engine
                .schedule_in(wait, Event::EdgeRetry { job, call: k });
        }
    }
}
