//! Simulated requests as spans (`loadsim run --spans`). Owns which user requests are traced, the
//! trace and span ids, the span each attempt and each job is while it is open, and handing each
//! finished span to a [`SpanSink`] (the OTLP JSON writer, `crate::report::otlp`). The simulation
//! calls it only where it holds `Some` tracer, and nothing here draws from a random stream or
//! changes the simulation: a run with spans computes exactly what it computes without.
//!
//! - A user request is a trace. Its attempts at the client are CLIENT spans of the client (the
//!   root spans of the trace, named after the request class); a service's work on an attempt is a
//!   SERVER span under that attempt's CLIENT span, from admission to its reply (or a refusal of
//!   `reject_delay`), with a `dequeued` event when it waited in the queue; each attempt of a call
//!   is a CLIENT span in the caller's service under its SERVER span (retries and hedges are
//!   several), named after the callee.
//! - Which requests are traced: the `n`-th user request of the run (all classes, in arrival
//!   order) is when `mix64(key, n)` as a uniform in [0, 1) is below the rate (`--span-sample`),
//!   with the key from the seed ([`crate::rng::hash_key`]): deterministic, the same at any
//!   thread count, and a traced request's spans are the same at any rate.
//! - Ids: the trace id of request `n` is two keyed hashes of `n` (distinct for distinct `n`,
//!   never zero); span ids are a keyed hash of a counter kept per trace (distinct within the
//!   trace, zero skipped).

use super::slab::Handle;
use crate::ix::{ClassIx, ReplicaIx, ServiceIx};
use crate::rng::{hash_key, mix64};
use crate::scenario::Scenario;
use crate::time::SimTime;

/// What a span stands for (OTLP `SpanKind`: 2 server, 3 client).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A service's work on an attempt, admission to reply.
    Server,
    /// An attempt, at the client or on a call edge.
    Client,
}

/// Whose span it is: the client (resource `service.name` [`CLIENT_SERVICE`]) or a service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    /// The client.
    Client,
    /// The service of this index.
    Service(usize),
}

/// The `service.name` of the client's spans.
pub const CLIENT_SERVICE: &str = "client";

/// One finished span.
#[derive(Clone, Debug)]
pub struct SpanRecord<'a> {
    /// The trace id: the user request's (never zero).
    pub trace: u128,
    /// The span id, distinct within the trace (never zero).
    pub span: u64,
    /// The parent span's id, 0 for a root.
    pub parent: u64,
    /// Whose span it is.
    pub resource: Resource,
    /// The request class for the client's attempts and a service's work, the callee for a
    /// call's attempts.
    pub name: &'a str,
    /// Server or client.
    pub kind: SpanKind,
    /// When it opened.
    pub start: SimTime,
    /// When it closed (the run's end if still open).
    pub end: SimTime,
    /// With error status: the reason (a counter's name, like `rejected_full` or `timeout`).
    pub error: Option<&'static str>,
    /// How it ended, in words (`success`, `error`, `rejected`, `timeout`, `abandoned`, …).
    pub outcome: &'static str,
    /// The request class.
    pub class: &'a str,
    /// Attempts only: the attempt's number on its call (1 the first), and whether it is a retry
    /// or a hedge.
    pub attempt: u32,
    /// Attempts only: whether it is a retry.
    pub retry: bool,
    /// Attempts only: whether it is a hedge.
    pub hedge: bool,
    /// Jobs that waited in the queue: when they took a slot.
    pub dequeued: Option<SimTime>,
    /// The callee's replica (services of more than one replica).
    pub replica: Option<ReplicaIx>,
    /// Still open when the run ended (its end is the run's end).
    pub unfinished: bool,
}

/// Where finished spans go.
pub trait SpanSink {
    /// One finished span.
    fn span(&mut self, s: &SpanRecord);
}

const NO_TRACE: u32 = u32::MAX;

/// A traced request's live state: its id, its span counter and how many open things hold it.
#[derive(Clone, Copy, Debug)]
struct Trace {
    id: u128,
    key: u64,
    next: u64,
    refs: u32,
}

/// An open span of an attempt or a job.
#[derive(Clone, Copy, Debug)]
struct Open {
    trace: u32,
    span: u64,
    parent: u64,
    start: SimTime,
    /// Jobs: the service. Attempts: the callee.
    service: ServiceIx,
    /// Attempts: the caller's service, or `None` for the client.
    caller: Option<ServiceIx>,
    replica: ReplicaIx,
    class: ClassIx,
    attempt: u32,
    retry: bool,
    hedge: bool,
    dequeued: SimTime,
}

/// Closes the span open in `slots` at `h`, returning it when it belongs to a traced request.
fn take_traced(slots: &mut [Open], h: Handle) -> Option<Open> {
    let open = std::mem::replace(slots.get_mut(h.index as usize)?, CLOSED);
    (open.trace != NO_TRACE).then_some(open)
}

const CLOSED: Open = Open {
    trace: NO_TRACE,
    span: 0,
    parent: 0,
    start: SimTime::ZERO,
    service: ServiceIx::new(0),
    caller: None,
    replica: ReplicaIx::new(0),
    class: ClassIx::new(0),
    attempt: 0,
    retry: false,
    hedge: false,
    dequeued: SimTime::NEVER,
};

/// The spans of a run in progress.
pub(crate) struct Tracer<'a> {
    sc: &'a Scenario,
    sink: &'a mut dyn SpanSink,
    /// The share of user requests traced, in (0, 1].
    rate: f64,
    sample_key: u64,
    id_keys: [u64; 2],
    /// User requests seen so far.
    requests: u64,
    traces: Vec<Trace>,
    free: Vec<u32>,
    /// By user slot: its trace, [`NO_TRACE`] when not traced.
    users: Vec<u32>,
    /// By attempt and job slab index: the open span.
    attempts: Vec<Open>,
    jobs: Vec<Open>,
    /// Whether a service has more than one replica.
    replicated: Vec<bool>,
}

/// Whether the `n`-th user request is traced at `rate`: `mix64(key, n)`'s top 53 bits as a
/// uniform in [0, 1), below the rate.
fn sampled(key: u64, rate: f64, n: u64) -> bool {
    rate >= 1.0 || (mix64(key, n) >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < rate
}

fn slot<T: Copy>(v: &mut Vec<T>, i: usize, empty: T) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, empty);
    }
    &mut v[i]
}

impl<'a> Tracer<'a> {
    pub(crate) fn new(sc: &'a Scenario, rate: f64, sink: &'a mut dyn SpanSink) -> Self {
        Tracer {
            sc,
            sink,
            rate,
            sample_key: hash_key(sc.seed, "spans/sample"),
            id_keys: [
                hash_key(sc.seed, "spans/trace"),
                hash_key(sc.seed, "spans/id"),
            ],
            requests: 0,
            traces: Vec::new(),
            free: Vec::new(),
            users: Vec::new(),
            attempts: Vec::new(),
            jobs: Vec::new(),
            replicated: sc.services.iter().map(|s| s.max_units() > 1).collect(),
        }
    }

    fn new_span(&mut self, t: u32) -> u64 {
        let tr = &mut self.traces[t as usize];
        tr.refs += 1;
        loop {
            let id = mix64(tr.key, tr.next);
            tr.next += 1;
            if id != 0 {
                return id;
            }
        }
    }

    fn release(&mut self, t: u32) {
        let tr = &mut self.traces[t as usize];
        tr.refs -= 1;
        if tr.refs == 0 {
            self.free.push(t);
        }
    }

    /// User request in user slot `user` arrived.
    pub(crate) fn user_arrived(&mut self, user: u32) {
        let n = self.requests;
        self.requests += 1;
        let t = if sampled(self.sample_key, self.rate, n) {
            let lo = mix64(self.id_keys[0], n);
            let hi = mix64(self.id_keys[1], n);
            // `lo` is zero for one `n` at most; that request's id gets a non-zero high half.
            let hi = if lo == 0 && hi == 0 { 1 } else { hi };
            let trace = Trace {
                id: ((hi as u128) << 64) | lo as u128,
                key: hi ^ lo.rotate_left(17),
                next: 0,
                refs: 1,
            };
            match self.free.pop() {
                Some(t) => {
                    self.traces[t as usize] = trace;
                    t
                }
                None => {
                    self.traces.push(trace);
                    (self.traces.len() - 1) as u32
                }
            }
        } else {
            NO_TRACE
        };
        *slot(&mut self.users, user as usize, NO_TRACE) = t;
    }

    /// The user request in slot `user` ended.
    pub(crate) fn user_ended(&mut self, user: u32) {
        let t = std::mem::replace(&mut self.users[user as usize], NO_TRACE);
        if t != NO_TRACE {
            self.release(t);
        }
    }

    /// The client sent `attempt` (its number `n` for the request) of the user request in slot
    /// `user`, of class `class`, to `callee`.
    pub(crate) fn client_attempt(
        &mut self,
        attempt: Handle,
        user: u32,
        n: u32,
        callee: ServiceIx,
        class: ClassIx,
        now: SimTime,
    ) {
        let t = self.users[user as usize];
        let open = if t == NO_TRACE {
            CLOSED
        } else {
            Open {
                trace: t,
                span: self.new_span(t),
                parent: 0,
                start: now,
                service: callee,
                caller: None,
                class,
                attempt: n,
                retry: n > 1,
                ..CLOSED
            }
        };
        *slot(&mut self.attempts, attempt.index as usize, CLOSED) = open;
    }

    /// Job `job` (of `caller`) sent `attempt` on a call to `callee`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_attempt(
        &mut self,
        attempt: Handle,
        job: Handle,
        caller: ServiceIx,
        callee: ServiceIx,
        n: u32,
        (retry, hedge): (bool, bool),
        now: SimTime,
    ) {
        let parent = self.jobs.get(job.index as usize).copied().unwrap_or(CLOSED);
        let open = if parent.trace == NO_TRACE {
            CLOSED
        } else {
            Open {
                trace: parent.trace,
                span: self.new_span(parent.trace),
                parent: parent.span,
                start: now,
                service: callee,
                caller: Some(caller),
                class: parent.class,
                attempt: n,
                retry,
                hedge,
                ..CLOSED
            }
        };
        *slot(&mut self.attempts, attempt.index as usize, CLOSED) = open;
    }

    /// Job `job` of `caller` tried an attempt on a call to `callee` that failed before it was
    /// sent (`reason`: the edge's counter): a CLIENT span of no length with error status.
    pub(crate) fn local_failure(
        &mut self,
        job: Handle,
        caller: ServiceIx,
        callee: ServiceIx,
        n: u32,
        reason: &'static str,
        now: SimTime,
    ) {
        let parent = self.jobs.get(job.index as usize).copied().unwrap_or(CLOSED);
        if parent.trace == NO_TRACE {
            return;
        }
        let span = self.new_span(parent.trace);
        let open = Open {
            trace: parent.trace,
            span,
            parent: parent.span,
            start: now,
            service: callee,
            caller: Some(caller),
            class: parent.class,
            attempt: n,
            retry: n > 1,
            ..CLOSED
        };
        self.emit_attempt(&open, now, reason, Some(reason), false);
    }

    /// `attempt` settled at `now`: `outcome` in words, `error` the reason of an error status.
    pub(crate) fn attempt_settled(
        &mut self,
        attempt: Handle,
        now: SimTime,
        outcome: &'static str,
        error: Option<&'static str>,
    ) {
        if let Some(open) = take_traced(&mut self.attempts, attempt) {
            self.emit_attempt(&open, now, outcome, error, false);
        }
    }

    fn emit_attempt(
        &mut self,
        open: &Open,
        end: SimTime,
        outcome: &'static str,
        error: Option<&'static str>,
        unfinished: bool,
    ) {
        let sc = self.sc;
        let class = &sc.classes[open.class].name;
        let (resource, name) = match open.caller {
            None => (Resource::Client, class.as_str()),
            Some(caller) => (
                Resource::Service(caller.index()),
                sc.services[open.service].name.as_str(),
            ),
        };
        let tr = self.traces[open.trace as usize];
        self.sink.span(&SpanRecord {
            trace: tr.id,
            span: open.span,
            parent: open.parent,
            resource,
            name,
            kind: SpanKind::Client,
            start: open.start,
            end,
            error,
            outcome,
            class,
            attempt: open.attempt,
            retry: open.retry,
            hedge: open.hedge,
            dequeued: None,
            replica: None,
            unfinished,
        });
        self.release(open.trace);
    }

    /// The attempt `parent` (open when `parent_live`) reached replica `replica` of `service`,
    /// which admitted it as `job`.
    pub(crate) fn job_admitted(
        &mut self,
        job: Handle,
        parent: Handle,
        parent_live: bool,
        service: ServiceIx,
        replica: ReplicaIx,
        now: SimTime,
    ) {
        let p = if parent_live {
            self.attempts
                .get(parent.index as usize)
                .copied()
                .unwrap_or(CLOSED)
        } else {
            CLOSED
        };
        let open = if p.trace == NO_TRACE {
            CLOSED
        } else {
            Open {
                trace: p.trace,
                span: self.new_span(p.trace),
                parent: p.span,
                start: now,
                service,
                replica,
                class: p.class,
                ..CLOSED
            }
        };
        *slot(&mut self.jobs, job.index as usize, CLOSED) = open;
    }

    /// Replica `replica` of `service` refused the attempt `parent` (live) for `reason`; its reply
    /// leaves at `end`.
    pub(crate) fn refused(
        &mut self,
        parent: Handle,
        service: ServiceIx,
        replica: ReplicaIx,
        reason: &'static str,
        now: SimTime,
        end: SimTime,
    ) {
        let p = self
            .attempts
            .get(parent.index as usize)
            .copied()
            .unwrap_or(CLOSED);
        if p.trace == NO_TRACE {
            return;
        }
        let open = Open {
            trace: p.trace,
            span: self.new_span(p.trace),
            parent: p.span,
            start: now,
            service,
            replica,
            class: p.class,
            ..CLOSED
        };
        self.emit_job(&open, end, "rejected", Some(reason), false);
    }

    /// Job `job` left the queue and took a slot at `now`.
    pub(crate) fn dequeued(&mut self, job: Handle, now: SimTime) {
        if let Some(open) = self.jobs.get_mut(job.index as usize) {
            open.dequeued = now;
        }
    }

    /// Job `job` ended at `now` (`error`: the reason of an error status).
    pub(crate) fn job_ended(
        &mut self,
        job: Handle,
        now: SimTime,
        outcome: &'static str,
        error: Option<&'static str>,
    ) {
        if let Some(open) = take_traced(&mut self.jobs, job) {
            self.emit_job(&open, now, outcome, error, false);
        }
    }

    fn emit_job(
        &mut self,
        open: &Open,
        end: SimTime,
        outcome: &'static str,
        error: Option<&'static str>,
        unfinished: bool,
    ) {
        let sc = self.sc;
        let class = sc.classes[open.class].name.as_str();
        let tr = self.traces[open.trace as usize];
        self.sink.span(&SpanRecord {
            trace: tr.id,
            span: open.span,
            parent: open.parent,
            resource: Resource::Service(open.service.index()),
            name: class,
            kind: SpanKind::Server,
            start: open.start,
            end,
            error,
            outcome,
            class,
            attempt: 0,
            retry: false,
            hedge: false,
            dequeued: (open.dequeued != SimTime::NEVER).then_some(open.dequeued),
            replica: self.replicated[open.service].then_some(open.replica),
            unfinished,
        });
        self.release(open.trace);
    }

    /// The run ended at `end`: every span still open is written, marked unfinished (jobs first,
    /// then attempts, each in slab order).
    pub(crate) fn finish(&mut self, end: SimTime) {
        for i in 0..self.jobs.len() {
            let open = std::mem::replace(&mut self.jobs[i], CLOSED);
            if open.trace != NO_TRACE {
                self.emit_job(&open, end, "unfinished", None, true);
            }
        }
        for i in 0..self.attempts.len() {
            let open = std::mem::replace(&mut self.attempts[i], CLOSED);
            if open.trace != NO_TRACE {
                self.emit_attempt(&open, end, "unfinished", None, true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_keeps_about_the_rate_nests_and_keeps_all_at_one() {
        let key = hash_key(7, "spans/sample");
        let kept =
            |rate: f64| -> Vec<u64> { (0..100_000).filter(|&n| sampled(key, rate, n)).collect() };
        let quarter = kept(0.25);
        // Binomial(100000, 0.25): standard deviation 137; 7 of them.
        assert!(
            (24_040..25_960).contains(&quarter.len()),
            "kept {}",
            quarter.len()
        );
        let half = kept(0.5);
        assert!(quarter.iter().all(|n| half.binary_search(n).is_ok()));
        assert_eq!(kept(1.0).len(), 100_000);
    }
}
