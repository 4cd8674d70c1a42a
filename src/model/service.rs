//! The server side of a run. Owns what happens at a service: admission (outage and error faults,
//! the service's gate, start in a free slot, reject after `reject_delay` with an optional
//! retry-after hint when the queue is full, else enqueue), serving the queue (FIFO, LIFO, adaptive
//! LIFO, priority) with the gate's drops at dequeue, own work drawn from the distribution in force,
//! completion and the reply, cancellation of queued or running work, and the accounting of
//! queueing and sojourn times. The protections act through the gate's hooks
//! ([`super::gate::service`]: admit, dequeue, finish); none is named here.

use super::gate::{Verdict, keep_permit};
use super::queue::End;
use super::slab::Handle;
use super::{CallState, Event, Job, JobState, Outcome, Simulation};
use crate::ix::{ClassIx, ServiceIx, UnitIx};
use crate::protections::admission::queue_full;
use crate::protections::concurrency_limit::Release;
use crate::scenario::QueueDiscipline;
use crate::time::{SimDuration, SimTime};

/// Events a service schedules per attempt that reaches it: its reply to the caller (`Reply`; also
/// for an attempt turned away or failed by a fault, and with the reply's network delay folded
/// in). Summed by [`crate::guard::events_per_send`].
pub const EVENTS_PER_ATTEMPT_RECEIVED: u32 = 1;
/// Events a service with own work (a `service_time`, or a `slow` fault on it) schedules per job
/// it starts: the end of that work (`WorkDone`). Summed by [`crate::guard::events_per_send`].
pub const EVENTS_PER_JOB_WITH_WORK: u32 = 1;

impl Simulation<'_> {
    /// A request from `parent` arrives at `service`'s replica `u` (see [`Simulation::unit_of`]),
    /// carrying its request class `class` (0 with one class) and `deadline`. Returns the admitted
    /// job, or `Handle::NONE` when the service turned it away (the reply is then scheduled).
    pub(super) fn deliver(
        &mut self,
        service: ServiceIx,
        u: UnitIx,
        parent: Handle,
        class: ClassIx,
        deadline: SimTime,
    ) -> Handle {
        let now = self.now();
        let s = service;
        let rc = &mut self.replica_rec[u];
        rc.arrivals += 1;
        let during = self.in_fault_window(now);
        let sc = self.sc;
        let spec = &sc.services[s];
        let c = &mut self.rec.services[s];
        c.arrivals += 1;
        if during {
            c.arrivals_during_fault += 1;
        }
        let st = &mut self.units[u];
        if !st.faults.is_empty() {
            if st.faults.outage(now) {
                c.rejected_outage += 1;
                return self.refuse(s, u, parent, Outcome::Reject, "rejected_outage");
            }
            if let Some(retryable) = st.faults.error(now) {
                c.failed_by_fault += 1;
                let outcome = if retryable {
                    Outcome::Error
                } else {
                    Outcome::Fatal
                };
                return self.refuse(s, u, parent, outcome, "failed_by_fault");
            }
        }
        // The gate in front of the slots and the queue (a request it refuses gets the service's
        // reject reply).
        let mut permit = None;
        if let Verdict::Refuse(reason) = st.gate.admit(now, class, &mut permit) {
            reason.count_service(c);
            return self.refuse(s, u, parent, Outcome::Reject, reason.name());
        }
        let slots = st.faults.slots(now, spec.slots);
        let has_slot = st.station.busy() < slots && st.station.queue_is_empty();
        let lane = if st.station.lanes() > 1 {
            self.lane_of[class] as usize
        } else {
            0
        };
        if !has_slot
            && queue_full(spec.queue_cap, st.station.queued())
            && !(spec.shed_priority && self.shed_lower(u, lane))
        {
            self.rec.services[s].rejected_full += 1;
            self.replica_rec[u].rejected_full += 1;
            if let Some(permit) = permit {
                // Turned away behind the gate: the permit goes back without a sample.
                let permits = std::slice::from_ref(&permit);
                (self.units[u].gate).finish(now, permits, 0, Release::Ignored, false);
            }
            return self.refuse(s, u, parent, Outcome::Reject, "rejected_full");
        }
        self.rec.services[s].admit(now, self.arrivals_end);
        self.replica_rec[u].admitted += 1;
        let job = self.jobs.insert(Job {
            service,
            unit: u,
            parent,
            deadline,
            admitted_at: now,
            state: JobState::Queued,
            call: 0,
            pending: 0,
            attempts: Handle::NONE,
            completed: false,
            class,
        });
        self.reset_side_tables(job);
        if self.spans.is_some() {
            let (live, replica) = (self.attempts.is_live(parent), self.replica_index(s, u));
            if let Some(t) = &mut self.spans {
                t.job_admitted(job, parent, live, s, replica, now);
            }
        }
        if let Some(permit) = permit {
            let capacity = self.jobs.capacity();
            keep_permit(&mut self.job_permits, job.index as usize, capacity, permit);
        }
        if has_slot {
            self.start(job);
        } else {
            let queued = self.units[u].station.enqueue(now, job, lane);
            debug_assert!(
                spec.queue_cap.is_none_or(|cap| queued <= cap as usize),
                "queue over its cap"
            );
            let c = &mut self.rec.services[s];
            c.enqueued += 1;
            c.max_queue = c.max_queue.max(queued as u64);
            let rc = &mut self.replica_rec[u];
            rc.max_queue = rc.max_queue.max(queued as u64);
        }
        job
    }

    /// `shed: priority` on replica `u`, whose queue is full, for an arrival of lane `lane`:
    /// evicts the newest queued request of the least important lane below `lane` and rejects it
    /// (reason `shed`, after `reject_delay`, with the service's retry-after hint). Returns whether
    /// one was evicted (the arrival then takes its place).
    fn shed_lower(&mut self, u: UnitIx, lane: usize) -> bool {
        let now = self.now();
        let lanes = self.units[u].station.lanes();
        for l in (lane + 1..lanes).rev() {
            while let Some(h) = self.units[u].station.peek(l, End::Newest) {
                let Some(j) = self.jobs.get(h).copied() else {
                    self.units[u].station.discard_stale(l, End::Newest);
                    continue;
                };
                self.units[u].station.dequeue(now, l, End::Newest);
                let s = j.service;
                if let Some(t) = &mut self.spans {
                    t.job_ended(h, now, "shed", Some("shed"));
                }
                let c = &mut self.rec.services[s];
                c.shed += 1;
                c.depart(now, j.admitted_at, self.arrivals_end);
                self.replica_rec[u].dropped += 1;
                self.jobs[h].state = JobState::Done;
                self.release_job_permit(u, h, Release::Dropped, true);
                let pushback = self.pushback_us(s, u);
                let delay = self.sc.services[s].reject_delay;
                self.reply_in(delay, j.parent, Outcome::Reject, h, pushback);
                return true;
            }
        }
        false
    }

    /// Turns a request away without admitting it: the reply (`Reject` with the service's
    /// retry-after hint, or `Error`) leaves after the service's `reject_delay`.
    /// `reason` is the counter it was counted in (the error status of its span, when traced).
    fn refuse(
        &mut self,
        s: ServiceIx,
        u: UnitIx,
        parent: Handle,
        outcome: Outcome,
        reason: &'static str,
    ) -> Handle {
        let pushback = if outcome == Outcome::Reject {
            self.pushback_us(s, u)
        } else {
            0
        };
        let delay = self.sc.services[s].reject_delay;
        if self.spans.is_some() && self.attempts.is_live(parent) {
            let (now, replica) = (self.now(), self.replica_index(s, u));
            if let Some(t) = &mut self.spans {
                t.refused(parent, s, replica, reason, now, now + delay);
            }
        }
        self.reply_in(delay, parent, outcome, Handle::NONE, pushback);
        Handle::NONE
    }

    /// The retry-after hint this service attaches to a reject now, in microseconds.
    fn pushback_us(&self, s: ServiceIx, u: UnitIx) -> u32 {
        self.sc.services[s]
            .pushback
            .map_or(0, |p| p.hint_us(self.units[u].station.queued() as u64))
    }

    /// Schedules a reply to `parent` after `delay`.
    #[inline(always)]
    pub(super) fn reply_in(
        &mut self,
        delay: SimDuration,
        parent: Handle,
        outcome: Outcome,
        job: Handle,
        pushback_us: u32,
    ) {
        let delay = if self.has_latency {
            delay + self.reply_latency(parent)
        } else {
            delay
        };
        self.engine.schedule_in(
            delay,
            Event::Reply {
                attempt: parent,
                outcome,
                job,
                pushback_us,
            },
        );
    }

    /// The job leaves its service as `how` (hook "finish": a limiter's permit goes back);
    /// `responded` says whether the service replied.
    #[inline]
    fn release_job_permit(&mut self, u: UnitIx, job: Handle, how: Release, responded: bool) {
        let now = self.engine.now();
        let permits = &self.job_permits;
        (self.units[u].gate).finish(now, permits, job.index as usize, how, responded);
    }

    /// Zeroes the goodput row and call states of a freshly admitted job, growing the side tables
    /// to the slab's size.
    fn reset_side_tables(&mut self, job: Handle) {
        let n = self.sc.services.len();
        let cap = self.jobs.capacity();
        if self.useful.len() < cap * n {
            self.useful.resize(cap * n, 0);
            self.call_states
                .resize(cap * self.max_calls, CallState::default());
        }
        let base = job.index as usize * n;
        let row = &mut self.useful[base..base + n];
        // Three or four services (the article's chain) are zeroed by stores; other sizes by
        // `memset`, whose call costs more than four stores.
        match row {
            [a, b, c] => (*a, *b, *c) = (0, 0, 0),
            [a, b, c, d] => (*a, *b, *c, *d) = (0, 0, 0, 0),
            _ => row.fill(0),
        }
    }

    /// The job takes a slot: record its wait, then do its own work or go straight to its calls.
    #[inline(always)]
    fn start(&mut self, job: Handle) {
        let now = self.now();
        let j = &mut self.jobs[job];
        j.state = JobState::Running;
        let (s, u, admitted_at) = (j.service, j.unit, j.admitted_at);
        let st = &mut self.units[u];
        st.station.occupy(now);
        self.rec.services[s].start(now, admitted_at);
        let sampler = st.faults.slow_sampler(now).or(st.normal.as_ref());
        match sampler {
            Some(sampler) => {
                let mut work = sampler.sample(&mut st.stream);
                if let Some(c) = st.contention {
                    work = c.stretch(work, st.station.busy());
                }
                self.engine.schedule_in(work, Event::WorkDone { job });
            }
            None => self.begin_calls(job),
        }
    }

    /// The job is done (success, or error after a failed call): abandon what it still waits for,
    /// free the slot, reply, pull the next.
    pub(super) fn finish(&mut self, job: Handle, outcome: Outcome) {
        let now = self.now();
        self.abandon_attempts(job, None);
        if let Some(t) = &mut self.spans {
            let (word, error) = match outcome {
                Outcome::Success => ("success", None),
                _ => ("error", Some("call_failed")),
            };
            t.job_ended(job, now, word, error);
        }
        let j = &mut self.jobs[job];
        j.state = JobState::Done;
        j.completed = true;
        let (s, u, parent, admitted_at) = (j.service, j.unit, j.parent, j.admitted_at);
        self.units[u].station.release(now);
        self.replica_rec[u].completed += 1;
        self.release_job_permit(u, job, Release::Success, true);
        let c = &mut self.rec.services[s];
        c.completed += 1;
        c.depart(now, admitted_at, self.arrivals_end);
        c.complete(now, admitted_at);
        let outcome = self.marked(s, u, outcome);
        self.reply_in(SimDuration::ZERO, parent, outcome, job, 0);
        self.pull_next(u);
    }

    /// An `Error` this service replies becomes `Fatal` (non-retryable) with probability
    /// 1 − `retryable_fraction`, drawn from the service's own stream (no draw at the default 1).
    #[inline]
    fn marked(&mut self, s: ServiceIx, u: UnitIx, outcome: Outcome) -> Outcome {
        if outcome == Outcome::Error
            && let Some(stream) = &mut self.units[u].retryable
            && stream.unit() >= self.sc.services[s].retryable_fraction
        {
            return Outcome::Fatal;
        }
        outcome
    }

    /// The caller gave up and asks the job to stop: a queued job leaves the queue, a running one
    /// frees its slot and cancels its own calls where their edges say so. A finished job is left
    /// alone (its reply will find the caller gone).
    pub(super) fn cancel_job(&mut self, job: Handle) {
        let now = self.now();
        let Some(j) = self.jobs.get(job).copied() else {
            return;
        };
        let (s, u) = (j.service, j.unit);
        if j.state != JobState::Done
            && let Some(t) = &mut self.spans
        {
            t.job_ended(job, now, "cancelled", None);
        }
        match j.state {
            JobState::Done => {}
            JobState::Queued => {
                self.units[u].station.cancel_queued(now);
                self.replica_rec[u].cancelled += 1;
                self.release_job_permit(u, job, Release::Dropped, false);
                let c = &mut self.rec.services[s];
                c.cancelled += 1;
                c.depart(now, j.admitted_at, self.arrivals_end);
                self.jobs.take(job);
            }
            JobState::Running => {
                self.abandon_attempts(job, None);
                self.units[u].station.release(now);
                self.replica_rec[u].cancelled += 1;
                self.release_job_permit(u, job, Release::Dropped, false);
                let c = &mut self.rec.services[s];
                c.cancelled += 1;
                c.depart(now, j.admitted_at, self.arrivals_end);
                self.jobs.take(job);
                self.pull_next(u);
            }
        }
    }

    /// With priority lanes: the lane and end replica `u` serves next under `discipline` — the
    /// oldest live request of the most important non-empty lane (`priority`), or across lanes the
    /// oldest (`fifo`), the newest (`lifo`), or adaptive LIFO's choice between them (ties go to the
    /// more important lane). Discards stale entries it meets; `None` when no live request waits.
    fn lane_pick(&mut self, u: UnitIx, discipline: QueueDiscipline) -> Option<(usize, End)> {
        let now = self.now();
        match discipline {
            QueueDiscipline::Priority => (0..self.units[u].station.lanes())
                .find(|&lane| self.lane_end(u, lane, End::Oldest).is_some())
                .map(|lane| (lane, End::Oldest)),
            QueueDiscipline::Fifo => self.lanes_extreme(u, End::Oldest),
            QueueDiscipline::Lifo => self.lanes_extreme(u, End::Newest),
            adaptive @ QueueDiscipline::AdaptiveLifo { .. } => {
                let (lane, _) = self.lanes_extreme(u, End::Oldest)?;
                let oldest = self.lane_end(u, lane, End::Oldest)?;
                if adaptive.serves_newest(now - oldest) {
                    self.lanes_extreme(u, End::Newest)
                } else {
                    Some((lane, End::Oldest))
                }
            }
        }
    }

    /// The admission time of the live request at `end` of `lane` of replica `u`, discarding the
    /// stale entries before it; `None` when the lane holds no live request.
    fn lane_end(&mut self, u: UnitIx, lane: usize, end: End) -> Option<SimTime> {
        loop {
            let h = self.units[u].station.peek(lane, end)?;
            match self.jobs.get(h) {
                Some(j) => return Some(j.admitted_at),
                None => self.units[u].station.discard_stale(lane, end),
            }
        }
    }

    /// Across the lanes of replica `u`: the lane whose live `end` is the oldest (`Oldest`) or
    /// the newest (`Newest`) admitted; ties go to the more important lane.
    fn lanes_extreme(&mut self, u: UnitIx, end: End) -> Option<(usize, End)> {
        let mut best: Option<(usize, SimTime)> = None;
        for lane in 0..self.units[u].station.lanes() {
            if let Some(t) = self.lane_end(u, lane, end) {
                let better = match best {
                    None => true,
                    Some((_, b)) => match end {
                        End::Oldest => t < b,
                        End::Newest => t > b,
                    },
                };
                if better {
                    best = Some((lane, t));
                }
            }
        }
        best.map(|(lane, _)| (lane, end))
    }

    /// Fills replica `u`'s free slots from its queue, shedding at dequeue on the way.
    ///
    /// Most calls (every finishing job of a service that is not saturated) find the queue
    /// without a single entry; they are answered here without entering the loop, with what the
    /// loop would have done for them: nothing, or CoDel's "queue empty".
    #[inline]
    pub(super) fn pull_next(&mut self, u: UnitIx) {
        let st = &mut self.units[u];
        if st.draining {
            return;
        }
        if st.station.has_no_entries() {
            st.gate.queue_empty();
            return;
        }
        self.pull_queued(u);
    }

    /// [`Simulation::pull_next`] for a queue that holds entries.
    fn pull_queued(&mut self, u: UnitIx) {
        self.units[u].draining = true;
        let s = self.units[u].service;
        let sc = self.sc;
        let spec = &sc.services[s];
        loop {
            let now = self.now();
            let st = &self.units[u];
            if st.station.busy() >= st.faults.slots(now, spec.slots) {
                break;
            }
            let (lane, end) = if st.station.lanes() > 1 {
                match self.lane_pick(u, spec.discipline) {
                    Some(pick) => pick,
                    None => break,
                }
            } else {
                let end = match spec.discipline {
                    QueueDiscipline::Fifo | QueueDiscipline::Priority => End::Oldest,
                    QueueDiscipline::Lifo => End::Newest,
                    adaptive @ QueueDiscipline::AdaptiveLifo { .. } => {
                        match st.station.peek(0, End::Oldest) {
                            Some(h) => match self.jobs.get(h) {
                                None => {
                                    self.units[u].station.discard_stale(0, End::Oldest);
                                    continue;
                                }
                                Some(oldest)
                                    if adaptive.serves_newest(now - oldest.admitted_at) =>
                                {
                                    End::Newest
                                }
                                Some(_) => End::Oldest,
                            },
                            None => End::Oldest,
                        }
                    }
                };
                (0, end)
            };
            let Some(job) = self.units[u].station.peek(lane, end) else {
                break;
            };
            if !self.jobs.is_live(job) {
                self.units[u].station.discard_stale(lane, end);
                continue;
            }
            let st = &mut self.units[u];
            st.station.dequeue(now, lane, end);
            let c = &mut self.rec.services[s];
            let j = self.jobs[job];
            let wait = now - j.admitted_at;
            let reason = match st.gate.dequeue(now, j.deadline, wait) {
                Verdict::Refuse(reason) => {
                    reason.count_service(c);
                    reason.name()
                }
                Verdict::Pass | Verdict::Hold(..) => {
                    if let Some(t) = &mut self.spans {
                        t.dequeued(job, now);
                    }
                    self.start(job);
                    continue;
                }
            };
            self.replica_rec[u].dropped += 1;
            c.depart(now, j.admitted_at, self.arrivals_end);
            if let Some(t) = &mut self.spans {
                t.job_ended(job, now, "dropped", Some(reason));
            }
            self.jobs[job].state = JobState::Done;
            self.release_job_permit(u, job, Release::Dropped, true);
            let outcome = self.marked(s, u, Outcome::Error);
            self.reply_in(SimDuration::ZERO, j.parent, outcome, job, 0);
        }
        let st = &mut self.units[u];
        if st.station.queue_is_empty() {
            st.gate.queue_empty();
        }
        st.draining = false;
    }
}
