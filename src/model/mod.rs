//! The simulation of docs/model.md §2, the article's model and the protections beyond it. Owns [`Simulation`]: the closed
//! [`Event`] enum and its dispatch, and the live state of a run — user requests at the client
//! (`client`), jobs in service slots and queues (`service`, `queue`), calls made while a slot is
//! held (`calls`: sequential or parallel, retries, hedges), attempts on call edges with their
//! timeouts, replies and cancellation (`caller`), what faults change (`faults`), and replicas,
//! their balancers and network delay (`fleet`). Each
//! protection's rule and live state come from its module in [`crate::protections`]. Records live
//! in slabs; events are small `Copy` values naming them by generation-checked handles, so an event
//! for a record that is gone (a settled attempt, a cancelled job) does nothing. A run is a pure
//! function of its scenario: integer time, `(time, seq)` order, one random stream per purpose.
//!
//! The `#[inline(always)]` marks on the path of a request down and back up the call tree
//! (`start`, `start_call`, `send_to`, `reply_in`, `release`, scheduling an event) were each kept
//! because callgrind counted fewer instructions with them, and others were dropped because it
//! counted more (evidence/perf.md, "Cuts on the spine"): change one only with a measurement.

mod arrivals;
mod autoscale;
mod caller;
mod calls;
mod client;
pub mod dist;
pub(crate) mod faults;
mod fleet;
pub(crate) mod gate;
mod outcome;
mod queue;
mod service;
pub mod slab;
pub mod spans;

pub use arrivals::EVENTS_PER_USER_REQUEST;
pub use fleet::EVENTS_PER_DELAYED_ATTEMPT;
pub use service::{EVENTS_PER_ATTEMPT_RECEIVED, EVENTS_PER_JOB_WITH_WORK};

use std::time::Instant;

use thiserror::Error;

use crate::engine::{Engine, QueueOp};
use crate::ix::{ClassIx, EdgeIx, IxVec, ReplicaIx, ServiceIx, UnitIx};
use crate::metrics::counters::ReplicaCounters;
use crate::metrics::recorder::ArrivalWindow;
use crate::metrics::timeseries::Extra;
use crate::metrics::{Recorder, RunSummary, SeriesRecorder, TimeSeries};
use crate::protections::concurrency_limit::{Limiter, Permit};
use crate::protections::load_balancer::Balancer;
use crate::protections::pushback;
use crate::rng::Stream;
use crate::scenario::{ArrivalProcess, QueueDiscipline, Scenario};
use crate::time::{SimDuration, SimTime};
use dist::Sampler;
use faults::ServiceFaults;
use gate::{CallMemo, EdgeGate, ServiceGate};
use queue::Station;
use slab::{GenSlab, Handle, Slab};

pub(crate) use outcome::Outcome;

/// Limits on one run, set by [`crate::guard::admit`] from the command's flags and the scenario.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Stop with an error after this many events (a runaway scenario, not a long one).
    pub max_events: u64,
    /// Stop with an error when the run's live records (pending events, jobs, attempts, user
    /// requests; [`RecordBytes`]) would take more than this many bytes (`--max-memory`).
    pub max_memory: u64,
    /// Stop with an error after this many events in a row at one simulated instant: a run that
    /// no longer advances simulated time (a closed loop with zero think time and zero work).
    pub max_events_per_instant: u64,
}

/// The default of [`RunOptions::max_events_per_instant`] when the scenario does not need more
/// ([`crate::guard::events_per_instant_bound`]).
pub const DEFAULT_MAX_EVENTS_PER_INSTANT: u64 = 1 << 22;

/// The default memory budget (`--max-memory`): what a command may hold at once for its results,
/// estimated before anything runs ([`crate::guard::check_memory`]), and what one run's live
/// records may take while it runs ([`RunOptions::max_memory`]).
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_events: 2_000_000_000,
            max_memory: DEFAULT_MAX_MEMORY,
            max_events_per_instant: DEFAULT_MAX_EVENTS_PER_INSTANT,
        }
    }
}

/// Told how far a run has got (a progress bar): every [`WATCH_EVERY`] events, never on the path
/// of a single event, and never changing what the run computes.
pub trait Watch: Sync {
    /// The run is at simulated time `now`, having processed `events` events.
    fn at(&self, now: SimTime, events: u64);
}

/// Events between two calls of a [`Watch`]: at some ten million events a second, a few hundred
/// calls a second.
pub const WATCH_EVERY: u64 = 1 << 15;

/// Bytes one live record of a run takes (the sizes of the model's own types), for the memory
/// estimate before a run ([`crate::guard`]) and the check during it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordBytes {
    /// A pending event in the queue.
    pub event: u64,
    /// A job (a request at a service), with its per-call state and goodput credit.
    pub job: u64,
    /// An attempt, with its limiter permit.
    pub attempt: u64,
    /// An open user request.
    pub user: u64,
}

impl RecordBytes {
    /// The sizes for `sc` (a job carries one call state per call of the widest service and one
    /// credit per service).
    pub fn of(sc: &Scenario) -> RecordBytes {
        use std::mem::size_of;
        let max_calls = sc
            .services
            .iter()
            .map(|s| s.calls.len())
            .max()
            .unwrap_or(0)
            .max(1);
        RecordBytes {
            event: size_of::<(u64, Event)>() as u64,
            job: (size_of::<Job>()
                + max_calls * size_of::<CallState>()
                + sc.services.len() * size_of::<u32>()
                + size_of::<Permit>()
                + size_of::<Handle>()) as u64,
            attempt: (size_of::<Attempt>() + size_of::<Permit>()) as u64,
            user: size_of::<User>() as u64,
        }
    }
}

/// How many events pass between two checks of memory and of the clock's progress.
const CHECK_EVERY: u64 = 4096;

/// Why a run did not finish.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RunError {
    #[error(
        "scenario `{scenario}` stopped after {events} events at simulated {at}: over the limit of {limit} events; raise it with --max-events if the run is meant to be this large"
    )]
    /// More events than `--max-events` allows.
    TooManyEvents {
        /// The scenario's name.
        scenario: String,
        /// Events run when it stopped.
        events: u64,
        /// The simulated instant it stopped at.
        at: SimTime,
        /// The limit (`--max-events`).
        limit: u64,
    },
    #[error(
        "scenario `{scenario}` stopped at simulated {at}: its {events} pending events, {jobs} jobs, {attempts} attempts and {users} open user requests take about {bytes} bytes, above the limit of {limit}; bound the queues (`queue_cap`), shorten the timeouts, `duration` or `arrivals.rate`, or raise --max-memory if the machine has the memory"
    )]
    /// Live records estimated above `--max-memory`.
    OutOfMemory {
        /// The scenario's name.
        scenario: String,
        /// The simulated instant it stopped at.
        at: SimTime,
        /// Events pending in the queue.
        events: u64,
        /// Jobs alive.
        jobs: u64,
        /// Attempts alive.
        attempts: u64,
        /// User requests open.
        users: u64,
        /// The estimated size of those records, in bytes.
        bytes: u64,
        /// The limit (`--max-memory`), in bytes.
        limit: u64,
    },
    #[error(
        "scenario `{scenario}` stopped at simulated {at}: {events} events in a row without the clock moving (a request cycle that takes no time, like closed-loop users with zero think time calling services with zero work); give `think_time`, `service_time` or network `latency` a positive value"
    )]
    /// Too many events in a row at one simulated instant.
    Stalled {
        /// The scenario's name.
        scenario: String,
        /// The instant the clock stayed at.
        at: SimTime,
        /// Events run at that instant.
        events: u64,
    },
    #[error(
        "scenario `{scenario}`: no user request arrived in the run (arrivals end at {duration}); raise `arrivals.rate` or `duration`, shorten `think_time`, or set `allow_no_requests: true` if a run without requests is intended"
    )]
    /// No user request arrived (and `allow_no_requests` is not set).
    NoRequests {
        /// The scenario's name.
        scenario: String,
        /// The arrival period, at whose end arrivals stop.
        duration: SimDuration,
    },
}

impl RunError {
    /// Whether the scenario, not the run's size, is at fault: a stalled run, a run without
    /// requests, or one over the memory limit (exit code 2, like a refusal before running).
    pub fn is_input_problem(&self) -> bool {
        !matches!(self, RunError::TooManyEvents { .. })
    }
}

/// What happened: the closed set of events a run schedules.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The next user request of request class `class` arrives at its client.
    UserArrival { class: ClassIx },
    /// The client's retry interval for a user request elapsed: send the next attempt.
    ClientRetry { user: u32 },
    /// An attempt's timeout fired; a no-op if the attempt was already settled (tombstone).
    AttemptTimeout { attempt: Handle },
    /// A job finished its own service time and goes on to its calls.
    WorkDone { job: Handle },
    /// A backoff elapsed: the job retries call `call`.
    EdgeRetry { job: Handle, call: u16 },
    /// The hedge delay of call `call` elapsed: send another attempt if it is still open.
    HedgeFire { job: Handle, call: u16 },
    /// The AWS adaptive rate limiter's wait for a token elapsed: send the held attempt of call
    /// `call` (a retry when `retry`).
    RateLimitedSend { job: Handle, call: u16, retry: bool },
    /// A reply reaches the caller of `attempt`; `job` is the replying job (freed here), or
    /// `Handle::NONE` for a reply sent before admission. `pushback_us` is the callee's
    /// retry-after hint in microseconds (0 none, `u32::MAX` "do not retry").
    Reply {
        attempt: Handle,
        outcome: Outcome,
        job: Handle,
        pushback_us: u32,
    },
    /// A capacity fault on the service ended: fill the slots it gave back.
    CapacityRestored { service: ServiceIx },
    /// A request sent over a call with network delay reaches replica `unit` (see
    /// [`Simulation::unit_of`]).
    Deliver {
        attempt: Handle,
        unit: UnitIx,
        /// The request's class, carried with it (its attempt may be settled before it arrives).
        class: ClassIx,
        deadline: SimTime,
    },
    /// The autoscaler of `service` evaluates (every `interval` before `duration`).
    AutoscaleTick { service: ServiceIx },
    /// Replica `replica` of `service` finished warming up; a no-op if it was removed meanwhile.
    ReplicaReady {
        service: ServiceIx,
        replica: ReplicaIx,
    },
}

/// "Do not retry" in a reply's pushback field.
pub(crate) const PUSHBACK_NO_RETRY: u32 = pushback::NO_RETRY_US;

/// Who waits for an attempt's reply, and so which way the attempt went.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Owner {
    /// User request `0` sent it, through its class's client.
    User(u32),
    /// The job sent it over call edge `1`.
    Job(Handle, EdgeIx),
}

/// The way an attempt goes: from a class's client to its entry service, or over a call edge.
/// Its balancer and network latency live there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Via {
    /// The client of a request class.
    Client(ClassIx),
    /// A call edge between two services.
    Edge(EdgeIx),
}

impl Owner {
    /// The way an attempt of this owner, serving request class `class`, went.
    #[inline(always)]
    pub(in crate::model) fn via(self, class: ClassIx) -> Via {
        match self {
            Owner::User(_) => Via::Client(class),
            Owner::Job(_, e) => Via::Edge(e),
        }
    }
}

/// An attempt in flight, from send until its reply or timeout settles it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attempt {
    owner: Owner,
    /// Index of the call in the owner's service.
    call: u16,
    /// Whether this attempt is a retry (retry budgets count these).
    retry: bool,
    /// The callee's replica it went to (0 for a service of one replica).
    replica: ReplicaIx,
    /// The request class of the user request it serves.
    class: ClassIx,
    /// The job admitted at the callee, `Handle::NONE` if none (rejected, or not admitted yet).
    child: Handle,
    /// Next outstanding attempt of the same owner job (intrusive list), or `Handle::NONE`.
    next: Handle,
}

/// A user request, live from arrival to its last attempt's end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct User {
    arrival: SimTime,
    attempts: u32,
    window: ArrivalWindow,
    /// `arrival + call_timeout`, or `SimTime::NEVER` without a client call timeout.
    deadline: SimTime,
    /// The previous backoff wait (decorrelated jitter).
    prev_wait: SimDuration,
    /// Its request class.
    class: ClassIx,
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobState {
    Queued,
    Running,
    /// Finished; its reply is on the way.
    Done,
}

/// A request admitted at a service, live until its reply is delivered or it is cancelled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    service: ServiceIx,
    /// The replica's slot in [`Simulation::services`] (the service's own index for replica 0).
    unit: UnitIx,
    /// The caller's attempt waiting for this job.
    parent: Handle,
    /// Absolute deadline carried by the request; `SimTime::NEVER` for none.
    deadline: SimTime,
    admitted_at: SimTime,
    state: JobState,
    /// Sequential calls: index of the current call.
    call: u16,
    /// Calls not yet succeeded (parallel), or 1 while a sequential call is open.
    pending: u16,
    /// Head of the list of outstanding attempts.
    attempts: Handle,
    /// Set once the job finished (success or error) rather than being dropped or cancelled.
    completed: bool,
    /// The request class of the user request it serves (its priority travels with it).
    class: ClassIx,
}

/// Per call of a running job: its retry and hedge bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallState {
    retries_used: u16,
    sent: u16,
    outstanding: u16,
    done: bool,
    /// The call's own deadline (`call_timeout` after its first attempt); only read on edges
    /// with a call timeout.
    deadline: SimTime,
    /// The previous backoff wait (decorrelated jitter).
    prev_wait: SimDuration,
    /// What the edge's gates keep per call.
    memo: CallMemo,
}

/// Live state of one replica of a service (of the service, for one replica).
#[derive(Debug)]
pub(crate) struct ServiceState {
    /// The service this is a replica of.
    service: ServiceIx,
    /// Busy slots and queue, changed only through its accounting methods.
    station: Station,
    /// Set while the service pulls from its queue, so a nested finish does not pull again.
    draining: bool,
    stream: Stream,
    normal: Option<Sampler>,
    faults: ServiceFaults,
    /// The service's protections (`model::gate::service`).
    gate: ServiceGate,
    /// With `retryable_fraction` below 1: the stream that marks its errors non-retryable.
    retryable: Option<Stream>,
    /// The service's `contention`, beside the work it stretches.
    contention: Option<crate::scenario::contention::Contention>,
}

/// Live state of one call edge.
#[derive(Debug)]
pub(crate) struct EdgeState {
    /// The edge's protections (`model::gate::edge`).
    gate: EdgeGate,
    jitter: Stream,
    /// Outstanding attempts, and how many of them are retries (retry budgets).
    active: u32,
    active_retries: u32,
    /// Toward a replicated callee: the caller's balancer.
    balancer: Option<Balancer>,
    /// Network delay: request and reply samplers with their own streams.
    latency: Option<fleet::Latency>,
    /// With a call `probability`: the stream that decides whether a job makes the call.
    probability: Option<Stream>,
}

/// One run of a scenario.
pub struct Simulation<'a> {
    sc: &'a Scenario,
    engine: Engine<Event>,
    /// Per replica slot: replica 0 of service `s` at slot `s`, the other replicas after all
    /// services ([`Simulation::unit_of`]).
    units: IxVec<UnitIx, ServiceState>,
    /// Per service: the slot of its replica 1 in `units` (replicas 1.. are consecutive).
    replica_base: Vec<fleet::ReplicaBase>,
    /// Per replica slot (like `units`): the counters reported in `replica_stats`.
    replica_rec: IxVec<UnitIx, ReplicaCounters>,
    /// Per request class: its client's live state.
    classes: Vec<client::ClassState>,
    /// More than one request class: requests carry their class down the call tree.
    multi_class: bool,
    /// Per request class: its priority lane at services with lanes (0 the most important).
    lane_of: Vec<u16>,
    /// Whether any call (or the client) has network delay.
    has_latency: bool,
    edges: Vec<EdgeState>,
    users: Slab<User>,
    jobs: GenSlab<Job>,
    attempts: GenSlab<Attempt>,
    /// Per job slot, per service: completions in the job's accepted call tree (goodput credit).
    useful: Vec<u32>,
    /// Per job slot, per call: retry and hedge state; stride `max_calls`.
    call_states: Vec<CallState>,
    max_calls: usize,
    rec: Recorder,
    /// Time-series bins, when the run was asked for them.
    series: Option<SeriesRecorder>,
    arrivals_end: SimTime,
    window: Option<(SimTime, SimTime)>,
    options: RunOptions,
    /// Told how far the run has got ([`Simulation::watched`]).
    watch: Option<&'a dyn Watch>,
    /// The event count at which the run next checks `options.max_events`, its resources and
    /// tells `watch`: one comparison per event whether watched or not.
    next_check: u64,
    /// The event count at which `watch` is told next.
    next_watch: u64,
    /// The next time-series bin boundary; `NEVER` when no time series is recorded.
    next_sample: SimTime,
    /// Concurrency-limiter permits of admitted jobs and of attempts, by slab index (written and
    /// read only where a limiter is configured).
    job_permits: Vec<Permit>,
    attempt_permits: Vec<Permit>,
    /// Per service, its autoscaler (empty when no service has `autoscale`).
    scalers: Vec<Option<autoscale::Scaler>>,
    /// Whether `scalers` is not empty: balancers then pick among serving replicas.
    autoscaling: bool,
    /// The spans of traced requests (`--spans`); `None` costs one test per hook.
    spans: Option<Box<spans::Tracer<'a>>>,
}

/// The storage a run grows as it goes (the event queue, the slabs of users, jobs and attempts,
/// and their side tables), left by a finished run for the next run on the same thread: a grid
/// of short runs then allocates only when a run needs more than every run before it. A run in
/// recycled buffers behaves exactly as in fresh ones: each is emptied first, keeping only its
/// allocations (records get the same indices and handles).
#[derive(Debug, Default)]
pub struct Buffers {
    engine: Engine<Event>,
    users: Slab<User>,
    jobs: GenSlab<Job>,
    attempts: GenSlab<Attempt>,
    useful: Vec<u32>,
    call_states: Vec<CallState>,
    job_permits: Vec<Permit>,
    attempt_permits: Vec<Permit>,
}

impl Buffers {
    /// Empties every buffer for the next run, keeping the allocations.
    fn clear(&mut self) {
        self.engine.reset();
        self.users.clear();
        self.jobs.clear();
        self.attempts.clear();
        self.useful.clear();
        self.call_states.clear();
        self.job_permits.clear();
        self.attempt_permits.clear();
    }
}

/// Where the clock stood at the last resource check that saw it move, and the events processed
/// then.
struct Progress {
    at: SimTime,
    events: u64,
}

/// A finished run: its summary and, when asked for, its time series.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// Every metric of the run.
    pub summary: RunSummary,
    /// The binned time series (`None` unless they were asked for).
    pub series: Option<TimeSeries>,
    /// Every event-queue operation, when recording was asked for (empty otherwise).
    pub queue_ops: Vec<QueueOp>,
}

impl<'a> Simulation<'a> {
    /// Prepares a run of `sc`.
    pub fn new(sc: &'a Scenario, options: RunOptions) -> Self {
        Simulation::new_in(sc, options, Buffers::default())
    }

    /// Prepares a run of `sc` in `buffers` (left by an earlier run: see [`Buffers`]).
    pub fn new_in(sc: &'a Scenario, options: RunOptions, mut buffers: Buffers) -> Self {
        buffers.clear();
        let seed = sc.seed;
        let (layout, replica_base) = fleet::units(sc);
        let mut fault_lists = faults::per_unit(sc, &layout);
        let priorities: Vec<i32> = sc.classes.iter().map(|c| c.priority).collect();
        let lane_of = crate::protections::discipline::priority_lanes(&priorities);
        let lanes = lane_of.iter().max().map_or(1, |&l| l as usize + 1);
        let class_names: Vec<&str> = sc.classes.iter().map(|c| c.name.as_str()).collect();
        let units: IxVec<UnitIx, ServiceState> = layout
            .iter()
            .enumerate()
            .map(|(u, &(i, r))| {
                let s = &sc.services[i];
                ServiceState {
                    service: i,
                    station: Station::new(
                        SimTime(sc.duration.0),
                        if sc.has_classes()
                            && (s.discipline == QueueDiscipline::Priority || s.shed_priority)
                        {
                            lanes
                        } else {
                            1
                        },
                    ),
                    draining: false,
                    stream: Stream::new(
                        seed,
                        &fleet::replica_label(&format!("service/{}", s.name), r),
                    ),
                    normal: s.service_time.as_ref().map(Sampler::new),
                    faults: std::mem::take(&mut fault_lists[u]),
                    gate: ServiceGate::compile(
                        s,
                        || {
                            Stream::new(
                                seed,
                                &fleet::replica_label(&format!("limiter/{}", s.name), r),
                            )
                        },
                        &class_names,
                    ),
                    retryable: (s.retryable_fraction < 1.0).then(|| {
                        Stream::new(
                            seed,
                            &fleet::replica_label(&format!("retryable/{}", s.name), r),
                        )
                    }),
                    contention: s.contention,
                }
            })
            .collect();
        let edges = sc
            .edges
            .iter()
            .map(|e| EdgeState {
                gate: EdgeGate::compile(sc, e, &class_names),
                jitter: Stream::new(seed, &format!("jitter/{}", e.name)),
                active: 0,
                active_retries: 0,
                balancer: fleet::edge_balancer(sc, e),
                latency: e
                    .latency
                    .as_ref()
                    .map(|d| fleet::Latency::new(seed, d, &e.name)),
                probability: e
                    .probability
                    .map(|_| Stream::new(seed, &format!("probability/{}", e.name))),
            })
            .collect();
        let seconds = sc.duration.0.div_ceil(crate::time::NANOS_PER_SEC) as usize;
        Simulation {
            sc,
            engine: buffers.engine,
            replica_rec: (0..units.len())
                .map(|_| ReplicaCounters::default())
                .collect(),
            units,
            replica_base,
            classes: client::ClassState::all(sc),
            multi_class: sc.has_classes(),
            lane_of: lane_of.clone(),
            has_latency: sc.has_latency(),
            edges,
            users: buffers.users,
            jobs: buffers.jobs,
            attempts: buffers.attempts,
            useful: buffers.useful,
            call_states: buffers.call_states,
            max_calls: sc
                .services
                .iter()
                .map(|s| s.calls.len())
                .max()
                .unwrap_or(0)
                .max(1),
            rec: Recorder::new(sc.classes.len(), sc.services.len(), sc.edges.len(), seconds)
                .with_windows(&sc.metrics.windows)
                .with_service_latency(sc.metrics.quantiles.is_some()),
            series: None,
            arrivals_end: SimTime(sc.duration.0),
            window: sc.fault_window(),
            options,
            watch: None,
            next_check: options.max_events.saturating_add(1).min(CHECK_EVERY),
            next_watch: WATCH_EVERY,
            next_sample: SimTime::NEVER,
            job_permits: buffers.job_permits,
            attempt_permits: buffers.attempt_permits,
            scalers: autoscale::scalers(sc),
            autoscaling: sc.services.iter().any(|s| s.autoscale.is_some()),
            spans: None,
        }
    }

    /// Also hands the spans of a share `rate` (in (0, 1]) of the user requests to `sink`, each
    /// when it ends ([`spans`]); what the run computes does not change.
    pub fn with_spans(mut self, rate: f64, sink: &'a mut dyn spans::SpanSink) -> Self {
        self.spans = Some(Box::new(spans::Tracer::new(self.sc, rate, sink)));
        self
    }

    /// Tells `watch` how far the run has got every [`WATCH_EVERY`] events.
    pub fn watched(mut self, watch: &'a dyn Watch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Past `next_check` events: stops a run over `options.max_events`, checks its memory and
    /// that its clock moves ([`Simulation::check_resources`]) at least every [`CHECK_EVERY`]
    /// events, tells the watch every [`WATCH_EVERY`], and sets the next check. Out of the loop's
    /// way (a few hundred calls per million events).
    #[cold]
    #[inline(never)]
    fn checkpoint(&mut self, clock: &mut Progress) -> Result<(), RunError> {
        let events = self.engine.processed();
        if events > self.options.max_events {
            return Err(RunError::TooManyEvents {
                scenario: self.sc.name.clone(),
                events,
                at: self.engine.now(),
                limit: self.options.max_events,
            });
        }
        self.check_resources(clock)?;
        if let Some(w) = self.watch
            && events >= self.next_watch
        {
            w.at(self.engine.now(), events);
            self.next_watch = events.saturating_add(WATCH_EVERY);
        }
        self.next_check = self
            .options
            .max_events
            .saturating_add(1)
            .min(events.saturating_add(CHECK_EVERY));
        Ok(())
    }

    /// Also records time series in bins of `resolution` (positive); see
    /// [`crate::metrics::timeseries`].
    pub fn with_series(mut self, resolution: SimDuration) -> Self {
        let series = SeriesRecorder::new(self.sc, resolution);
        self.next_sample = series.next_boundary();
        self.series = Some(series);
        self.rec = self.rec.with_arrival_bins(resolution);
        self
    }

    /// Runs to the end (every request ended and nothing pending, or the drain horizon) and
    /// summarizes.
    pub fn run(self) -> Result<RunSummary, RunError> {
        self.run_output().map(|o| o.summary)
    }

    /// Runs like [`Simulation::run`] and also returns every event-queue operation, in order (the
    /// input of the queue-floor benchmark).
    pub fn run_with_queue_ops(mut self) -> Result<(RunSummary, Vec<QueueOp>), RunError> {
        self.engine.record_queue_ops();
        self.run_output().map(|o| (o.summary, o.queue_ops))
    }

    /// Runs to the end and returns the summary and the time series (if asked for).
    pub fn run_output(mut self) -> Result<RunOutput, RunError> {
        self.run_to_end()
    }

    /// [`Simulation::run_output`], then leaves the run's storage in `spare` for the next run
    /// ([`Simulation::new_in`]).
    pub fn run_output_into(mut self, spare: &mut Buffers) -> Result<RunOutput, RunError> {
        let out = self.run_to_end();
        *spare = Buffers {
            engine: self.engine,
            users: self.users,
            jobs: self.jobs,
            attempts: self.attempts,
            useful: self.useful,
            call_states: self.call_states,
            job_permits: self.job_permits,
            attempt_permits: self.attempt_permits,
        };
        out
    }

    fn run_to_end(&mut self) -> Result<RunOutput, RunError> {
        let started = Instant::now();
        for f in &self.sc.faults {
            if let Some(service) = f.kind.wakes_at_end() {
                self.engine
                    .schedule_at(f.to, Event::CapacityRestored { service });
            }
        }
        if self.autoscaling {
            self.start_autoscalers();
        }
        for class in ClassIx::first(self.sc.classes.len()) {
            self.schedule_next_arrival(class, true);
        }
        let horizon = self.arrivals_end + self.sc.drain;
        let mut clock = Progress {
            at: SimTime::ZERO,
            events: 0,
        };
        loop {
            // A timeout whose attempt has settled may be dropped by the queue instead of popped
            // (docs/model.md §2.1): a stale handle never becomes live again, and the handler
            // would do nothing. Testing `WorkDone` of cancelled jobs too cost more than it saved.
            let attempts = &self.attempts;
            let Some(event) = self.engine.next_live_before(horizon, |e| match *e {
                Event::AttemptTimeout { attempt } => attempts.is_live(attempt),
                _ => true,
            }) else {
                break;
            };
            if self.engine.now() >= self.next_sample {
                self.sample_series(self.engine.now());
            }
            self.dispatch(event);
            if self.engine.processed() >= self.next_check {
                self.checkpoint(&mut clock)?;
            }
        }
        if self.rec.users.by_window.iter().sum::<u64>() == 0 && !self.sc.allow_no_requests {
            return Err(RunError::NoRequests {
                scenario: self.sc.name.clone(),
                duration: self.sc.duration,
            });
        }
        // The run ends where it ended when settled events were popped: at the horizon if
        // anything was left after it, else at the last event, dropped ones included.
        let end = match self.engine.latest_dropped() {
            _ if self.engine.pending() > 0 => horizon,
            Some(t) if t > horizon => horizon,
            Some(t) => self.engine.now().max(t),
            None => self.engine.now(),
        };
        self.engine.advance_to(end);
        if let Some(t) = &mut self.spans {
            t.finish(end);
        }
        if let Some(series) = &self.series {
            let last = series.bins_for(end) as u64 * series.resolution().0;
            self.sample_series(SimTime(last));
        }
        for (e, st) in self.edges.iter().enumerate() {
            if let Some(b) = st.gate.breaker() {
                self.rec.edges[e].circuit_opened = b.opened;
                self.rec.edges[e].circuit_open_ns = b.open_time_until(end).0;
            }
        }
        let wall = started.elapsed();
        let fin = self.final_state(end, wall);
        let summary = crate::metrics::summary::summarize(self.sc, &mut self.rec, &fin);
        let series = self.series.take().map(|s| s.finish(&self.rec));
        let queue_ops = self.engine.take_queue_ops();
        Ok(RunOutput {
            summary,
            series,
            queue_ops,
        })
    }

    /// Every [`CHECK_EVERY`] events: stops a run whose live records exceed
    /// [`RunOptions::max_memory`] or whose clock has not moved for more than
    /// [`RunOptions::max_events_per_instant`] events.
    #[cold]
    #[inline(never)]
    fn check_resources(&mut self, clock: &mut Progress) -> Result<(), RunError> {
        let now = self.engine.now();
        let processed = self.engine.processed();
        if now != clock.at {
            *clock = Progress {
                at: now,
                events: processed,
            };
        } else if processed - clock.events > self.options.max_events_per_instant {
            return Err(RunError::Stalled {
                scenario: self.sc.name.clone(),
                at: now,
                events: processed - clock.events,
            });
        }
        let b = RecordBytes::of(self.sc);
        let (events, jobs, attempts, users) = (
            self.engine.pending() as u64,
            self.jobs.len() as u64,
            self.attempts.len() as u64,
            self.users.len() as u64,
        );
        let bytes = events * b.event + jobs * b.job + attempts * b.attempt + users * b.user;
        if bytes > self.options.max_memory {
            return Err(RunError::OutOfMemory {
                scenario: self.sc.name.clone(),
                at: now,
                events,
                jobs,
                attempts,
                users,
                bytes,
                limit: self.options.max_memory,
            });
        }
        Ok(())
    }

    /// Closes the time-series bins that end at or before `now`.
    fn sample_series(&mut self, now: SimTime) {
        let Some(series) = &mut self.series else {
            return;
        };
        // Levels add up a service's replicas; a service's limit is its replica 0's (units
        // 0..services are replica 0 of each service), whose gates (and limiters) are taken out while
        // the stations are read. Tokens change only at events, so one reading serves every bin.
        let n_services = self.sc.services.len();
        let (services, edges, replica_base) =
            (&mut self.units, &mut self.edges, &self.replica_base);
        let mut service_gates: Vec<ServiceGate> = services
            .iter_mut()
            .take(n_services)
            .map(|st| std::mem::take(&mut st.gate))
            .collect();
        let tokens: Vec<Option<f64>> = edges.iter().map(|e| e.gate.throttle_tokens()).collect();
        let mut edge_limiters: Vec<Option<&mut Limiter>> =
            edges.iter_mut().map(|e| e.gate.limiter_mut()).collect();
        let scalers = &self.scalers;
        let mut limit = |x: Extra, at: SimTime| -> f64 {
            let l = match x {
                Extra::ServiceLimit(s) => service_gates[s].limiter_mut(),
                Extra::EdgeLimit(e) => edge_limiters[e].as_deref_mut(),
                Extra::ServiceReplicas(s) => {
                    return autoscale::counts(scalers, ServiceIx::new(s))
                        .map_or(f64::NAN, |c| c.0 as f64);
                }
                Extra::ServiceReplicasReady(s) => {
                    return autoscale::counts(scalers, ServiceIx::new(s))
                        .map_or(f64::NAN, |c| c.1 as f64);
                }
                Extra::ServiceCount(..) | Extra::EdgeCount(..) => None,
            };
            l.map_or(f64::NAN, |l| l.limit(at) as f64)
        };
        self.next_sample = series.sample_until(
            now,
            &self.rec,
            &mut |s, at, each| {
                let s = ServiceIx::new(s);
                fleet::sample_service(|u| services[u].station.sample(at), replica_base, s, each)
            },
            &|e| tokens[e],
            &mut limit,
        );
        for (st, g) in services.iter_mut().zip(service_gates) {
            st.gate = g;
        }
    }

    fn final_state(
        &mut self,
        end: SimTime,
        wall: std::time::Duration,
    ) -> crate::metrics::summary::FinalState {
        let mut in_flight = vec![0u64; self.sc.services.len()];
        // A finished job whose reply is still on its way (network delay) is not in flight.
        for j in self.jobs.iter().filter(|j| j.state != JobState::Done) {
            in_flight[j.service] += 1;
        }
        crate::metrics::summary::FinalState {
            end,
            in_flight,
            levels: ServiceIx::first(self.sc.services.len())
                .map(|s| self.service_areas(s))
                .collect(),
            unfinished_users: self.users.len() as u64,
            unfinished_by_class: self.unfinished_by_class(),
            replica_stats: self.replica_stats(),
            autoscale: self.autoscale_metrics(),
            events: self.engine.processed(),
            peak_pending: self.engine.peak_pending() as u64,
            peak_jobs: self.jobs.peak() as u64,
            wall,
        }
    }

    #[inline]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::UserArrival { class } => self.on_user_arrival(class),
            Event::ClientRetry { user } => self.client_send(user),
            Event::AttemptTimeout { attempt } => self.on_attempt_timeout(attempt),
            Event::WorkDone { job } => {
                if self.jobs.is_live(job) {
                    self.begin_calls(job);
                }
            }
            Event::EdgeRetry { job, call } => self.on_edge_retry(job, call),
            Event::HedgeFire { job, call } => self.on_hedge_fire(job, call),
            Event::RateLimitedSend { job, call, retry } => {
                self.on_rate_limited_send(job, call, retry)
            }
            Event::Reply {
                attempt,
                outcome,
                job,
                pushback_us,
            } => self.on_reply(attempt, outcome, job, pushback_us),
            Event::CapacityRestored { service } => {
                for r in ReplicaIx::first(self.sc.services[service].max_units() as usize) {
                    let u = self.unit_of(service, r);
                    self.pull_next(u);
                }
            }
            Event::Deliver {
                attempt,
                unit,
                class,
                deadline,
            } => self.on_deliver(attempt, unit, class, deadline),
            Event::AutoscaleTick { service } => self.on_autoscale_tick(service),
            Event::ReplicaReady { service, replica } => self.on_replica_ready(service, replica),
        }
    }

    /// Per request class (with more than one): its user requests still open.
    fn unfinished_by_class(&self) -> Vec<u64> {
        let mut out = vec![
            0u64;
            if self.sc.has_classes() {
                self.sc.classes.len()
            } else {
                0
            }
        ];
        if !out.is_empty() {
            for (_, u) in self.users.iter() {
                out[u.class] += 1;
            }
        }
        out
    }

    #[inline]
    fn now(&self) -> SimTime {
        self.engine.now()
    }

    /// Which window an instant belongs to.
    #[inline]
    fn window_of(&self, t: SimTime) -> ArrivalWindow {
        match self.window {
            Some((from, _)) if t < from => ArrivalWindow::Before,
            Some((_, to)) if t < to => ArrivalWindow::During,
            Some(_) => ArrivalWindow::After,
            None => ArrivalWindow::Before,
        }
    }

    #[inline]
    fn in_fault_window(&self, t: SimTime) -> bool {
        matches!(self.window_of(t), ArrivalWindow::During)
    }

    /// Draws the next arrival: exponential gaps at the rate in force (redrawn where a surge
    /// changes the rate: the process is memoryless), or even spacing. Simulated time is the
    /// loop's ceiling: once the draw reaches the end of arrivals there is no next arrival, so a
    /// gap that overflows to the end of time (a rate of 1e-10/s) ends arrivals instead of
    /// spinning.
    fn schedule_next_arrival(&mut self, class: ClassIx, first: bool) {
        let c = class;
        if self.classes[c].shaped.is_some() {
            return self.schedule_shaped_arrival(class, first);
        }
        let process = self.sc.classes[c].arrivals.process;
        let st = &mut self.classes[c];
        let mut t = self.engine.now();
        let at = loop {
            if t >= self.arrivals_end {
                break SimTime::NEVER;
            }
            let rate = st.rates.rate_at(t);
            let mean_gap_ns = 1e9 / rate;
            let gap = match process {
                ArrivalProcess::Poisson => SimDuration(st.arrivals.exponential(mean_gap_ns) as u64),
                ArrivalProcess::Constant if first => SimDuration::ZERO,
                ArrivalProcess::Constant | ArrivalProcess::Closed => {
                    SimDuration(mean_gap_ns.round() as u64)
                }
            };
            let next_break = st.rates.next_break(t);
            // Past the last rate change the draw stands (`t + gap` saturates at NEVER, so an
            // enormous gap ends the arrivals instead of redrawing at NEVER forever).
            if t + gap < next_break
                || next_break >= self.arrivals_end
                || process == ArrivalProcess::Constant
            {
                break t + gap;
            }
            t = next_break;
        };
        if at < self.arrivals_end {
            self.engine.schedule_at(at, Event::UserArrival { class });
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

/// [`run_with`] in `buffers`, the storage of the thread's previous run, leaving this run's
/// there for the next (a grid's cells: see [`Buffers`]).
pub fn run_with_buffers(
    sc: &Scenario,
    options: RunOptions,
    buffers: &mut Buffers,
) -> Result<RunSummary, RunError> {
    Simulation::new_in(sc, options, std::mem::take(buffers))
        .run_output_into(buffers)
        .map(|o| o.summary)
}

/// Runs `sc` once with `options`, recording time series in bins of `resolution`.
pub fn run_with_series(
    sc: &Scenario,
    options: RunOptions,
    resolution: SimDuration,
) -> Result<(RunSummary, TimeSeries), RunError> {
    run_watched_with_series(sc, options, resolution, None)
}

/// [`run_with`], telling `watch` (if any) how far the run has got.
pub fn run_watched(
    sc: &Scenario,
    options: RunOptions,
    watch: Option<&dyn Watch>,
) -> Result<RunSummary, RunError> {
    let sim = Simulation::new(sc, options);
    match watch {
        Some(w) => sim.watched(w).run(),
        None => sim.run(),
    }
}

/// [`run_with_series`], telling `watch` (if any) how far the run has got.
pub fn run_watched_with_series(
    sc: &Scenario,
    options: RunOptions,
    resolution: SimDuration,
    watch: Option<&dyn Watch>,
) -> Result<(RunSummary, TimeSeries), RunError> {
    let mut sim = Simulation::new(sc, options).with_series(resolution);
    if let Some(w) = watch {
        sim = sim.watched(w);
    }
    let out = sim.run_output()?;
    let series = out.series.expect("series were asked for");
    Ok((out.summary, series))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_carries_the_edge_without_growing_the_attempt_record() {
        // The edge of a job's attempt lives in its owner (the client's has none), where a
        // `u32::MAX` sentinel field used to mark the client: the record stays 40 bytes.
        assert_eq!(size_of::<Owner>(), 16);
        assert_eq!(size_of::<Attempt>(), 40);
        let class = ClassIx::new(3);
        assert_eq!(Owner::User(7).via(class), Via::Client(class));
        let e = EdgeIx::new(2);
        assert_eq!(Owner::Job(Handle::NONE, e).via(class), Via::Edge(e));
    }
}
