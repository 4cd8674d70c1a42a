//! The server side of a run. Owns what happens at a service: admission (start in a free slot,
//! reject after `reject_delay` when the queue is full, else enqueue), the queue discipline, dropping
//! expired requests at dequeue, own work drawn from the distribution in force, completion and the
//! reply to the caller, and the accounting of queueing and sojourn times.

use super::{Event, Job, NO_JOB, Outcome, Simulation};
use crate::metrics::recorder::record_micros;
use crate::scenario::QueueDiscipline;
use crate::time::SimTime;

impl Simulation<'_> {
    /// A request from `parent` arrives at `service`, carrying `deadline`.
    pub(super) fn deliver(&mut self, service: u32, parent: super::Handle, deadline: SimTime) {
        let now = self.now();
        let s = service as usize;
        let during = self.in_fault_window(now);
        let sc = self.sc;
        let spec = &sc.services[s];
        let st = &mut self.services[s];
        let c = &mut self.rec.services[s];
        c.arrivals += 1;
        if during {
            c.arrivals_during_fault += 1;
        }
        let has_slot = st.busy < spec.slots;
        if !has_slot
            && spec
                .queue_cap
                .is_some_and(|cap| st.queue.len() >= cap as usize)
        {
            c.rejected_full += 1;
            self.engine.schedule_in(
                spec.reject_delay,
                Event::Reply {
                    attempt: parent,
                    outcome: Outcome::Reject,
                    job: NO_JOB,
                },
            );
            return;
        }
        c.admit(now, self.arrivals_end);
        let job = self.jobs.insert(Job {
            service,
            parent,
            deadline,
            admitted_at: now,
            call: 0,
            retries_used: 0,
            completed: false,
        });
        self.reset_useful(job);
        if has_slot {
            self.start(job);
        } else {
            let c = &mut self.rec.services[s];
            let st = &mut self.services[s];
            c.touch(now, self.arrivals_end, st.busy, st.queue.len());
            st.queue.push_back(job);
            debug_assert!(
                spec.queue_cap
                    .is_none_or(|cap| st.queue.len() <= cap as usize),
                "queue over its cap"
            );
            c.enqueued += 1;
            c.max_queue = c.max_queue.max(st.queue.len() as u64);
        }
    }

    /// Zeroes the goodput row of a freshly admitted job, growing the table to the slab's size.
    fn reset_useful(&mut self, job: u32) {
        let n = self.sc.services.len();
        let need = self.jobs.capacity() * n;
        if self.useful.len() < need {
            self.useful.resize(need, 0);
        }
        let base = job as usize * n;
        self.useful[base..base + n].fill(0);
    }

    /// The job takes a slot: record its wait, then do its own work or go straight to its calls.
    fn start(&mut self, job: u32) {
        let now = self.now();
        let j = self.jobs[job];
        let s = j.service as usize;
        let st = &mut self.services[s];
        let c = &mut self.rec.services[s];
        c.touch(now, self.arrivals_end, st.busy, st.queue.len());
        st.busy += 1;
        let wait = now - j.admitted_at;
        c.started += 1;
        c.wait_sum_ns += wait.0 as u128;
        record_micros(&mut c.queue_wait, wait);
        let sampler = st
            .faults
            .iter()
            .rev()
            .find(|(from, to, _)| *from <= now && now < *to)
            .map(|f| &f.2);
        match sampler.or(st.normal.as_ref()) {
            Some(sampler) => {
                let work = sampler.sample(&mut st.stream);
                self.engine.schedule_in(work, Event::WorkDone { job });
            }
            None => self.advance(job),
        }
    }

    /// The job moves to its next call, or finishes successfully after its last one.
    pub(super) fn advance(&mut self, job: u32) {
        let sc = self.sc;
        let j = &mut self.jobs[job];
        let calls = &sc.services[j.service as usize].calls;
        if (j.call as usize) < calls.len() {
            j.retries_used = 0;
            self.send_attempt(job);
        } else {
            self.finish(job, Outcome::Success);
        }
    }

    /// The job is done (success, or error after a failed call): free the slot, reply, pull the next.
    pub(super) fn finish(&mut self, job: u32, outcome: Outcome) {
        let now = self.now();
        let j = &mut self.jobs[job];
        j.completed = true;
        let (s, parent, admitted_at) = (j.service as usize, j.parent, j.admitted_at);
        let st = &mut self.services[s];
        let c = &mut self.rec.services[s];
        c.touch(now, self.arrivals_end, st.busy, st.queue.len());
        st.busy -= 1;
        c.completed += 1;
        c.depart(now, admitted_at, self.arrivals_end);
        self.engine.schedule_in(
            crate::time::SimDuration::ZERO,
            Event::Reply {
                attempt: parent,
                outcome,
                job,
            },
        );
        self.pull_next(s);
    }

    /// Fills free slots from the queue, dropping expired requests on the way when asked to.
    fn pull_next(&mut self, s: usize) {
        if self.services[s].draining {
            return;
        }
        self.services[s].draining = true;
        let sc = self.sc;
        let spec = &sc.services[s];
        loop {
            let now = self.now();
            let st = &mut self.services[s];
            if st.busy >= spec.slots {
                break;
            }
            let next = match spec.discipline {
                QueueDiscipline::Fifo => st.queue.front().copied(),
                QueueDiscipline::Lifo => st.queue.back().copied(),
            };
            let Some(job) = next else { break };
            let c = &mut self.rec.services[s];
            c.touch(now, self.arrivals_end, st.busy, st.queue.len());
            match spec.discipline {
                QueueDiscipline::Fifo => st.queue.pop_front(),
                QueueDiscipline::Lifo => st.queue.pop_back(),
            };
            let j = self.jobs[job];
            if spec.drop_expired && j.deadline <= now {
                c.dropped_expired += 1;
                c.depart(now, j.admitted_at, self.arrivals_end);
                self.engine.schedule_in(
                    crate::time::SimDuration::ZERO,
                    Event::Reply {
                        attempt: j.parent,
                        outcome: Outcome::Error,
                        job,
                    },
                );
                continue;
            }
            self.start(job);
        }
        self.services[s].draining = false;
    }
}
