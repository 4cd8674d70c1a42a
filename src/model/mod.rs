//! The simulation of MODEL.md §2. Owns [`Simulation`]: the closed [`Event`] enum and its dispatch,
//! and the live state of a run — user requests at the client (`client`), jobs in service slots and
//! queues (`service`), attempts on call edges with their timeouts, retries, backoff and throttles
//! (`caller`). Records live in slabs indexed by `u32`; events are small `Copy` values naming them.
//! A run is a pure function of its scenario: integer time, `(time, seq)` order, one random stream
//! per purpose.

mod caller;
mod client;
pub mod dist;
mod service;
pub mod slab;

use std::collections::VecDeque;
use std::time::Instant;

use thiserror::Error;

use crate::engine::{Engine, QueueOp};
use crate::metrics::recorder::Window;
use crate::metrics::{Recorder, RunSummary};
use crate::rng::Stream;
use crate::scenario::Scenario;
use crate::time::{SimDuration, SimTime};
use dist::Sampler;
use slab::{GenSlab, Handle, Slab};

/// Limits on one run.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Stop with an error after this many events (a runaway scenario, not a long one).
    pub max_events: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_events: 2_000_000_000,
        }
    }
}

/// Why a run did not finish.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RunError {
    #[error(
        "scenario `{scenario}` stopped after {events} events at simulated {at}: over the limit of {limit} events; raise it with --max-events if the run is meant to be this large"
    )]
    TooManyEvents {
        scenario: String,
        events: u64,
        at: SimTime,
        limit: u64,
    },
}

/// What happened: the closed set of events a run schedules.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The next user request arrives at the client.
    UserArrival,
    /// The client's retry interval for a user request elapsed: send the next attempt.
    ClientRetry { user: u32 },
    /// An attempt's timeout fired; a no-op if the attempt was already settled (tombstone).
    AttemptTimeout { attempt: Handle },
    /// A job finished its own service time and goes on to its calls.
    WorkDone { job: u32 },
    /// A backoff elapsed: the job retries its current call.
    EdgeRetry { job: u32 },
    /// A reply reaches the caller of `attempt`; `job` is the replying job (freed here), or
    /// `NO_JOB` for a reject sent before admission.
    Reply {
        attempt: Handle,
        outcome: Outcome,
        job: u32,
    },
}

/// Marks a reply that comes from no admitted job (a fast reject).
pub(crate) const NO_JOB: u32 = u32::MAX;

/// How an attempt ended, from the caller's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    /// The callee failed the request (a dropped expired request, or its own call failed).
    Error,
    /// The callee's queue was full.
    Reject,
}

/// Who waits for an attempt's reply.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Owner {
    User(u32),
    Job(u32),
}

/// A user request, live from arrival to its last attempt's end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct User {
    arrival: SimTime,
    attempts: u32,
    window: Window,
}

/// A request admitted at a service (queued or holding a slot), live until its reply is delivered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    service: u32,
    /// The caller's attempt waiting for this job.
    parent: Handle,
    /// Absolute deadline carried by the request; `SimTime::NEVER` for none.
    deadline: SimTime,
    admitted_at: SimTime,
    /// Index of the current call in the service's `calls`.
    call: u32,
    /// Retries used on the current call.
    retries_used: u32,
    /// Set once the job finished (success or error) rather than being dropped.
    completed: bool,
}

/// Live state of one service.
#[derive(Debug)]
pub(crate) struct ServiceState {
    busy: u32,
    queue: VecDeque<u32>,
    /// Set while the service pulls from its queue, so a nested finish does not pull again.
    draining: bool,
    stream: Stream,
    normal: Option<Sampler>,
    /// Slow faults on this service: `[from, to)` and the sampler in force then.
    faults: Vec<(SimTime, SimTime, Sampler)>,
}

/// Live state of one call edge.
#[derive(Debug)]
pub(crate) struct EdgeState {
    /// gRFC A6 tokens, in thousandths.
    tokens_milli: u64,
    jitter: Stream,
}

/// One run of a scenario.
pub struct Simulation<'a> {
    sc: &'a Scenario,
    engine: Engine<Event>,
    services: Vec<ServiceState>,
    edges: Vec<EdgeState>,
    users: Slab<User>,
    jobs: Slab<Job>,
    attempts: GenSlab<Owner>,
    /// Per job slot, per service: completions in the job's accepted call tree (goodput credit).
    useful: Vec<u32>,
    rec: Recorder,
    arrivals: Stream,
    mean_interarrival_ns: f64,
    arrivals_end: SimTime,
    window: Option<(SimTime, SimTime)>,
    options: RunOptions,
}

impl<'a> Simulation<'a> {
    /// Prepares a run of `sc`.
    pub fn new(sc: &'a Scenario, options: RunOptions) -> Self {
        let seed = sc.seed;
        let services = sc
            .services
            .iter()
            .enumerate()
            .map(|(i, s)| ServiceState {
                busy: 0,
                queue: VecDeque::new(),
                draining: false,
                stream: Stream::new(seed, &format!("service/{}", s.name)),
                normal: s.service_time.as_ref().map(Sampler::new),
                faults: sc
                    .faults
                    .iter()
                    .filter_map(|f| match &f.kind {
                        crate::scenario::FaultKind::Slow {
                            service,
                            service_time,
                        } if *service == i => Some((f.from, f.to, Sampler::new(service_time))),
                        _ => None,
                    })
                    .collect(),
            })
            .collect();
        let edges = sc
            .edges
            .iter()
            .map(|e| EdgeState {
                tokens_milli: e.throttle.map_or(0, |t| t.max_milli),
                jitter: Stream::new(seed, &format!("jitter/{}", e.name)),
            })
            .collect();
        let seconds = sc.duration.0.div_ceil(crate::time::NANOS_PER_SEC) as usize;
        Simulation {
            sc,
            engine: Engine::new(),
            services,
            edges,
            users: Slab::default(),
            jobs: Slab::default(),
            attempts: GenSlab::default(),
            useful: Vec::new(),
            rec: Recorder::new(sc.services.len(), sc.edges.len(), seconds),
            arrivals: Stream::new(seed, "arrivals"),
            mean_interarrival_ns: 1e9 / sc.rate,
            arrivals_end: SimTime(sc.duration.0),
            window: sc.fault_window(),
            options,
        }
    }

    /// Runs to the end (every request ended and nothing pending, or the drain horizon) and
    /// summarizes.
    pub fn run(self) -> Result<RunSummary, RunError> {
        self.run_recording(false).map(|(summary, _)| summary)
    }

    /// Runs like [`Simulation::run`] and also returns every event-queue operation, in order (the
    /// input of the queue-floor benchmark).
    pub fn run_with_queue_ops(self) -> Result<(RunSummary, Vec<QueueOp>), RunError> {
        self.run_recording(true)
    }

    fn run_recording(mut self, record: bool) -> Result<(RunSummary, Vec<QueueOp>), RunError> {
        if record {
            self.engine.record_queue_ops();
        }
        let started = Instant::now();
        self.schedule_next_arrival();
        let horizon = self.arrivals_end + self.sc.drain;
        while let Some(event) = self.engine.next_before(horizon) {
            self.dispatch(event);
            if self.engine.processed() > self.options.max_events {
                return Err(RunError::TooManyEvents {
                    scenario: self.sc.name.clone(),
                    events: self.engine.processed(),
                    at: self.engine.now(),
                    limit: self.options.max_events,
                });
            }
        }
        let end = if self.engine.pending() > 0 {
            horizon
        } else {
            self.engine.now()
        };
        self.engine.advance_to(end);
        for (s, st) in self.services.iter().enumerate() {
            self.rec.services[s].touch(
                self.arrivals_end,
                self.arrivals_end,
                st.busy,
                st.queue.len(),
            );
        }
        let wall = started.elapsed();
        let summary =
            crate::metrics::summary::summarize(self.sc, &self.rec, &self.final_state(end, wall));
        Ok((summary, self.engine.take_queue_ops()))
    }

    fn final_state(
        &self,
        end: SimTime,
        wall: std::time::Duration,
    ) -> crate::metrics::summary::FinalState {
        let mut in_flight = vec![0u64; self.sc.services.len()];
        for (_, j) in self.jobs.iter() {
            in_flight[j.service as usize] += 1;
        }
        crate::metrics::summary::FinalState {
            end,
            in_flight,
            unfinished_users: self.users.len() as u64,
            events: self.engine.processed(),
            peak_pending: self.engine.peak_pending() as u64,
            peak_jobs: self.jobs.peak() as u64,
            wall,
        }
    }

    #[inline]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::UserArrival => self.on_user_arrival(),
            Event::ClientRetry { user } => self.client_send(user),
            Event::AttemptTimeout { attempt } => self.on_attempt_timeout(attempt),
            Event::WorkDone { job } => self.advance(job),
            Event::EdgeRetry { job } => self.send_attempt(job),
            Event::Reply {
                attempt,
                outcome,
                job,
            } => self.on_reply(attempt, outcome, job),
        }
    }

    #[inline]
    fn now(&self) -> SimTime {
        self.engine.now()
    }

    /// Which window an instant belongs to.
    #[inline]
    fn window_of(&self, t: SimTime) -> Window {
        match self.window {
            Some((from, _)) if t < from => Window::Before,
            Some((_, to)) if t < to => Window::During,
            Some(_) => Window::After,
            None => Window::Before,
        }
    }

    #[inline]
    fn in_fault_window(&self, t: SimTime) -> bool {
        matches!(self.window_of(t), Window::During)
    }

    fn schedule_next_arrival(&mut self) {
        let gap = SimDuration(self.arrivals.exponential(self.mean_interarrival_ns) as u64);
        let at = self.now() + gap;
        if at < self.arrivals_end {
            self.engine.schedule_at(at, Event::UserArrival);
        }
    }
}

/// Runs `sc` once with default limits.
pub fn run(sc: &Scenario) -> Result<RunSummary, RunError> {
    Simulation::new(sc, RunOptions::default()).run()
}

/// Runs `sc` once with `options`.
pub fn run_with(sc: &Scenario, options: RunOptions) -> Result<RunSummary, RunError> {
    Simulation::new(sc, options).run()
}
