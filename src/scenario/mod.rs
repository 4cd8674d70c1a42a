//! Scenarios: what a user describes in YAML, as the simulator consumes it. Owns the validated
//! domain types ([`Scenario`], [`Service`], [`Edge`], [`Fault`], [`Dist`]) and the loading pipeline
//! file → [`crate::config`] (reading, extends, `--set`, key positions) → `raw` (serde mirror) →
//! `validate` (every check, reported together). Also owns the R1 bound: worst-case attempts per user request at each
//! service, computed from the policies alone.

pub mod contention;
pub mod dist;
pub mod faults;
pub mod metrics;
pub mod profile;
pub mod rate;
pub mod raw;
pub mod stages;
pub mod trace;
mod validate;

pub use crate::config::{ConfigError, Diagnostic, Document, Origin, Paint};
pub use dist::{Dist, Shape};
pub use faults::{Fault, FaultKind};

pub use crate::protections::adaptive::AdaptiveThrottle;
pub use crate::protections::breaker::CircuitBreaker;
pub use crate::protections::budget::RetryBudget;
pub use crate::protections::codel::Codel;
pub use crate::protections::concurrency_limit::{ConcurrencyLimit, Partition as LimitPartition};
pub use crate::protections::discipline::QueueDiscipline;
pub use crate::protections::hedge::Hedge;
pub use crate::protections::load_balancer::LoadBalancer;
pub use crate::protections::outlier::OutlierDetection;
pub use crate::protections::pushback::Pushback;
pub use crate::protections::quota::RetryQuota;
pub use crate::protections::rate_limit::RateLimit;
pub use crate::protections::retry::Backoff;
pub use crate::protections::retry_on::RetryOn;
pub use crate::protections::throttle::Throttle;
use crate::time::{SimDuration, SimTime};

pub use crate::ix::{ClassIx, EdgeIx, ReplicaIx, ServiceIx};

/// Most call paths [`Scenario::attempt_chains`] lists for one service.
pub const MAX_CHAINS: usize = 16;

/// A validated scenario: everything the simulator needs, in integer nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The file stem (`naive` for `scenarios/naive.yaml`).
    pub name: String,
    /// `seed`: the root of every random stream (default 1; `--seed` overrides it).
    pub seed: u64,
    /// `allow_no_requests`: a run without any user request is intended (default false).
    pub allow_no_requests: bool,
    /// Length of the arrival period.
    pub duration: SimDuration,
    /// How long the run may go on after arrivals stop.
    pub drain: SimDuration,
    /// The request classes (`clients:`), in file order; the shorthand `arrivals` + `client` is
    /// the one class [`DEFAULT_CLASS`]. Never empty.
    pub classes: Vec<RequestClass>,
    /// The services, in file order (indexed by [`ServiceIx`]).
    pub services: Vec<Service>,
    /// Every call edge with its caller's policy (indexed by [`EdgeIx`]).
    pub edges: Vec<Edge>,
    /// The faults, in file order.
    pub faults: Vec<Fault>,
    /// The `metrics:` section: recovery rule, reported quantiles, measurement windows.
    pub metrics: metrics::MetricDefinitions,
}

/// Most closed-loop users accepted.
pub const MAX_USERS: u32 = 10_000_000;

/// Default drain horizon after arrivals stop.
pub const DEFAULT_DRAIN: SimDuration = SimDuration::from_secs(30);

/// The name of the one class of a scenario written with the shorthand `arrivals` + `client`.
pub const DEFAULT_CLASS: &str = "default";

/// A request class (docs/model.md §2.3.4): its own arrivals and client policy, and a priority
/// that travels down the call tree with every request it sends.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestClass {
    /// The class's key under `clients:` (or [`DEFAULT_CLASS`]).
    pub name: String,
    /// Higher is more important (default 0); read by `queue_discipline: priority` and
    /// `shed: priority`.
    pub priority: i32,
    /// How its user requests arrive.
    pub arrivals: Arrivals,
    /// How its client sends, times out and retries them.
    pub client: ClientPolicy,
}

/// How one class's user requests arrive.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrivals {
    /// Arrival rate, user requests per second (with a profile: the profile's peak; closed loop:
    /// users / mean think time; trace: rows / duration).
    pub rate: f64,
    /// How arrivals are spaced.
    pub process: ArrivalProcess,
    /// The arrival rate over time (`arrivals.profile`), `None` for the one-rate shorthand.
    pub profile: Option<profile::Profile>,
    /// Closed-loop users, with `process: closed`.
    pub closed: Option<ClosedLoop>,
    /// Arrival instants replayed from `arrivals.trace`, sorted.
    pub trace: Option<std::sync::Arc<[SimTime]>>,
}

impl Arrivals {
    /// These arrivals with `k` times the load (`arrivals.scale`): the rate and every profile
    /// segment × k; closed-loop users × k, rounded, at least 1 (at most
    /// [`MAX_USERS`]); a trace thinned or repeated so that its j-th arrival (from 1) is
    /// at the time of recorded arrival ⌈j/k⌉, ⌊k·n⌋ arrivals from n.
    pub fn scaled(&self, k: f64) -> Arrivals {
        let mut a = self.clone();
        a.rate *= k;
        // A closed loop's and a trace's rate follow from what they become, below.
        if let Some(p) = &mut a.profile {
            for piece in &mut p.pieces {
                piece.rate *= k;
                piece.to_rate *= k;
            }
        }
        if let Some(c) = &mut a.closed {
            let users = ((c.users as f64 * k).round() as u32).clamp(1, MAX_USERS);
            a.rate = self.rate * users as f64 / c.users as f64;
            c.users = users;
        }
        if let Some(t) = &a.trace {
            let n = (k * t.len() as f64).floor() as usize;
            let times: Vec<SimTime> = (1..=n)
                .map(|j| t[((j as f64 / k).ceil() as usize).clamp(1, t.len()) - 1])
                .collect();
            a.rate = self.rate * times.len() as f64 / t.len() as f64;
            a.trace = Some(times.into());
        }
        a
    }
}

/// How user request arrivals are spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalProcess {
    /// Exponential gaps (default).
    Poisson,
    /// Every 1/rate exactly, the first at time zero.
    Constant,
    /// Closed loop (`users`, `think_time`; see [`ClosedLoop`]).
    Closed,
}

/// Closed-loop users (`arrivals.process: closed`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedLoop {
    /// How many users.
    pub users: u32,
    /// Think time before each request, the first included.
    pub think_time: Dist,
}

/// The client's policy toward the entry service.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientPolicy {
    /// `entry`: the service user requests are sent to.
    pub entry: ServiceIx,
    /// How long the client waits for each attempt before giving it up.
    pub attempt_timeout: SimDuration,
    /// Retries after the first attempt (default 0).
    pub retries: u32,
    /// Fixed wait before each retry (default 0).
    pub retry_interval: SimDuration,
    /// Whether the attempt's absolute deadline travels with the request (default false).
    pub propagate_deadline: bool,
    /// Cancel the entry service's work when an attempt times out (default false).
    pub cancel_on_abandon: bool,
    /// Which failures the client retries (default all).
    pub retry_on: RetryOn,
    /// Bound on all attempts and waits of one user request, from its arrival.
    pub call_timeout: Option<SimDuration>,
    /// Backoff before each retry, when given instead of `retry_interval`.
    pub backoff: Option<Backoff>,
    /// How the client picks a replica of the entry service.
    pub load_balancer: LoadBalancer,
    /// One-way network delay, drawn for the request and again for the reply.
    pub latency: Option<Dist>,
}

/// A service: slots, a queue, its own work, and the calls it makes while holding a slot.
#[derive(Clone, Debug, PartialEq)]
pub struct Service {
    /// Its key under `services:`, and in reports.
    pub name: String,
    /// `slots`: jobs it runs at once (per replica).
    pub slots: u32,
    /// `None` for an unbounded queue.
    pub queue_cap: Option<u32>,
    /// `queue_discipline`: which end of the queue is served (default FIFO).
    pub discipline: QueueDiscipline,
    /// `shed: priority`: a full queue evicts its newest lowest-priority request for a more
    /// important arrival.
    pub shed_priority: bool,
    /// Drop a dequeued request whose deadline has passed (default false).
    pub drop_expired: bool,
    /// Delay before a `reject` reply when the queue is full (default 0.5 ms).
    pub reject_delay: SimDuration,
    /// Own work before the calls; `None` for a service that only waits on its calls.
    pub service_time: Option<Dist>,
    /// Drop at dequeue a request that waited longer than this.
    pub max_queue_time: Option<SimDuration>,
    /// CoDel shedding at dequeue.
    pub codel: Option<Codel>,
    /// Retry-after hint attached to this service's rejects.
    pub pushback: Option<Pushback>,
    /// Envoy local rate limit in front of the service.
    pub rate_limit: Option<RateLimit>,
    /// Server-side concurrency limiter.
    pub concurrency_limit: Option<ConcurrencyLimit>,
    /// Its partitions by request class (`concurrency_limit.partitions`; empty: none).
    pub limit_partitions: Vec<LimitPartition>,
    /// Start all calls at once (fan-out) instead of in order.
    pub parallel: bool,
    /// Outgoing edges, in the order the YAML map lists them.
    pub calls: Vec<EdgeIx>,
    /// Share of the errors it replies that callers may retry (default 1).
    pub retryable_fraction: f64,
    /// Identical replicas (default 1); `slots` and the queue are per replica. With `autoscale`,
    /// the count at time 0.
    pub replicas: u32,
    /// Work slows with the replica's busy slots (USL factor).
    pub contention: Option<contention::Contention>,
    /// With `stages`, or a call with a `probability`: the calls' steps (groups of call indices
    /// started together, in order); `None` for the `calls`/`parallel` shorthand without
    /// probabilities.
    pub stages: Option<stages::Steps>,
    /// Horizontal autoscaling of the replicas (Kubernetes HPA).
    pub autoscale: Option<crate::protections::autoscale::Autoscale>,
}

impl Service {
    /// Replicas the service may ever have: `replicas`, or up to `autoscale.max_replicas`.
    pub fn max_units(&self) -> u32 {
        self.autoscale
            .map_or(self.replicas, |a| a.max_replicas.max(self.replicas))
    }

    /// Replicas the service may be down to: `replicas`, or `autoscale.min_replicas` if fewer.
    pub fn min_units(&self) -> u32 {
        self.autoscale
            .map_or(self.replicas, |a| a.min_replicas.min(self.replicas))
    }

    /// The steps of its calls (groups of call indices started together, in order), also for the
    /// `calls`/`parallel` shorthand: one step of all calls with `parallel: true`, else one per
    /// call.
    pub fn call_steps(&self) -> std::borrow::Cow<'_, stages::Steps> {
        match &self.stages {
            Some(steps) => std::borrow::Cow::Borrowed(steps),
            None => std::borrow::Cow::Owned(stages::shorthand(self.calls.len(), self.parallel)),
        }
    }
}

/// A caller's policy on one call edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// The service that makes the call.
    pub caller: ServiceIx,
    /// The service it calls.
    pub callee: ServiceIx,
    /// `caller->callee`, the key of the edge in reports.
    pub name: String,
    /// `attempt_timeout`: how long the caller waits for each attempt.
    pub attempt_timeout: SimDuration,
    /// `retries`: retries after the first attempt of a call (0: none).
    pub retries: u32,
    /// `backoff`: the full-jitter wait before each retry.
    pub backoff: Backoff,
    /// `retry_throttle`: the gRFC A6 token bucket (`None`: retries are not throttled).
    pub throttle: Option<Throttle>,
    /// `propagate_deadline`: send the attempt's deadline with the request (default false).
    pub propagate_deadline: bool,
    /// `retry_budget`: the Envoy-style retry budget (`None`: none).
    pub retry_budget: Option<RetryBudget>,
    /// `adaptive_throttle`: client-side adaptive throttling (`None`: none).
    pub adaptive_throttle: Option<AdaptiveThrottle>,
    /// Cancel the callee's work when this caller gives up on an attempt.
    pub cancel_on_abandon: bool,
    /// Honour the callee's retry-after hint.
    pub honor_retry_after: bool,
    /// `circuit_breaker`: the edge's breaker (`None`: none).
    pub circuit_breaker: Option<CircuitBreaker>,
    /// `hedge`: hedged attempts instead of retries (`None`: not hedged).
    pub hedge: Option<Hedge>,
    /// Envoy local rate limit on attempts.
    pub rate_limit: Option<RateLimit>,
    /// Client-side concurrency limiter.
    pub concurrency_limit: Option<ConcurrencyLimit>,
    /// Its partitions by request class (`concurrency_limit.partitions`; empty: none).
    pub limit_partitions: Vec<LimitPartition>,
    /// Which failures this caller retries (default all).
    pub retry_on: RetryOn,
    /// Bound on all attempts and backoffs of one call, from its first attempt.
    pub call_timeout: Option<SimDuration>,
    /// How this caller picks a replica of the callee.
    pub load_balancer: LoadBalancer,
    /// One-way network delay, drawn for the request and again for the reply.
    pub latency: Option<Dist>,
    /// The AWS SDKs' standard retry mode's quota.
    pub retry_quota: Option<RetryQuota>,
    /// Envoy outlier detection over the callee's replicas.
    pub outlier_detection: Option<OutlierDetection>,
    /// The share of jobs that make this call (`None`: every job).
    pub probability: Option<f64>,
    /// The request classes (indices into `Scenario::classes`, increasing) whose requests make
    /// this call (`None`: every class).
    pub classes: Option<Vec<ClassIx>>,
}

impl Edge {
    /// Whether requests of class `class` make this call (`calls.<callee>.classes`).
    #[inline]
    pub fn taken_by(&self, class: ClassIx) -> bool {
        self.classes.as_ref().is_none_or(|cs| cs.contains(&class))
    }

    /// Attempts one call may make at most: retries + 1, or hedges + 1.
    pub fn max_attempts_per_call(&self) -> u64 {
        match self.hedge {
            Some(h) => h.max_hedges as u64 + 1,
            None => self.retries as u64 + 1,
        }
    }
}

impl Scenario {
    /// The union of all fault windows, `[first start, last end)`; `None` without faults.
    pub fn fault_window(&self) -> Option<(SimTime, SimTime)> {
        let from = self.faults.iter().map(|f| f.from).min()?;
        let to = self.faults.iter().map(|f| f.to).max()?;
        Some((from, to))
    }

    /// Whether a call or a client has network delay.
    pub fn has_latency(&self) -> bool {
        self.classes.iter().any(|c| c.client.latency.is_some())
            || self.edges.iter().any(|e| e.latency.is_some())
    }

    /// User requests per second of all classes together (each class's `rate`, see [`Arrivals`]).
    pub fn rate(&self) -> f64 {
        self.classes.iter().map(|c| c.arrivals.rate).sum()
    }

    /// The first class's client: the client of a scenario of one class.
    pub fn client(&self) -> &ClientPolicy {
        &self.classes[0].client
    }

    /// Whether requests carry a priority that matters (more than one class).
    pub fn has_classes(&self) -> bool {
        self.classes.len() > 1
    }

    /// Index of the service called `name`.
    pub fn service_id(&self, name: &str) -> Option<ServiceIx> {
        self.services
            .iter()
            .position(|s| s.name == name)
            .map(ServiceIx::new)
    }

    /// Services in an order where every caller comes before its callees.
    pub fn topological_order(&self) -> Vec<ServiceIx> {
        let n = self.services.len();
        let mut indegree = vec![0usize; n];
        for e in &self.edges {
            indegree[e.callee] += 1;
        }
        let mut ready: Vec<ServiceIx> = (0..n)
            .filter(|&s| indegree[s] == 0)
            .rev()
            .map(ServiceIx::new)
            .collect();
        let mut order = Vec::with_capacity(n);
        while let Some(s) = ready.pop() {
            order.push(s);
            for &e in self.services[s].calls.iter().rev() {
                let d = self.edges[e].callee;
                indegree[d] -= 1;
                if indegree[d] == 0 {
                    ready.push(d);
                }
            }
        }
        order
    }

    /// R1: the worst-case number of attempts that reach each service per user request — the sum,
    /// over every call path from the client, of the product of attempts allowed on each hop.
    /// Saturates instead of overflowing.
    pub fn worst_case_attempts(&self) -> Vec<u64> {
        // A user request belongs to one class and takes only the calls its class makes: the
        // bound is the largest over classes.
        let order = self.topological_order();
        let mut worst = vec![0u64; self.services.len()];
        for (c, class) in self.classes.iter().enumerate() {
            let mut attempts = vec![0u64; self.services.len()];
            attempts[class.client.entry] = class.client.retries as u64 + 1;
            for &s in &order {
                for &e in &self.services[s].calls {
                    let edge = &self.edges[e];
                    if !edge.taken_by(ClassIx::new(c)) {
                        continue;
                    }
                    let add = attempts[s].saturating_mul(edge.max_attempts_per_call());
                    attempts[edge.callee] = attempts[edge.callee].saturating_add(add);
                }
            }
            for (w, a) in worst.iter_mut().zip(attempts) {
                *w = (*w).max(a);
            }
        }
        worst
    }

    /// The classes' distinct entry services, in class order.
    pub fn entries(&self) -> Vec<ServiceIx> {
        let mut out: Vec<ServiceIx> = Vec::new();
        for c in &self.classes {
            if !out.contains(&c.client.entry) {
                out.push(c.client.entry);
            }
        }
        out
    }

    /// The number of call paths from the clients to each service (saturating): over the
    /// classes, each counting the paths through the calls it makes; classes of the same entry
    /// that make the same calls count their paths once.
    pub fn path_counts(&self) -> Vec<u64> {
        let order = self.topological_order();
        let mut paths = vec![0u64; self.services.len()];
        let mut seen: Vec<(ServiceIx, Vec<bool>)> = Vec::new();
        for c in 0..self.classes.len() {
            let key = (
                self.classes[c].client.entry,
                self.edges
                    .iter()
                    .map(|e| e.taken_by(ClassIx::new(c)))
                    .collect(),
            );
            if seen.contains(&key) {
                continue;
            }
            let mut own = vec![0u64; self.services.len()];
            own[key.0] = 1;
            for &s in &order {
                for &e in &self.services[s].calls {
                    if key.1[e] {
                        let d = self.edges[e].callee;
                        own[d] = own[d].saturating_add(own[s]);
                    }
                }
            }
            for (p, o) in paths.iter_mut().zip(own) {
                *p = p.saturating_add(o);
            }
            seen.push(key);
        }
        paths
    }

    /// Call paths from the client to `service`, each as its list of (hop name, attempts): all of
    /// them when there are at most [`MAX_CHAINS`], else the first `MAX_CHAINS` in call order (a
    /// layered graph has exponentially many; [`Scenario::path_counts`] counts them). Only hops
    /// that can still reach `service` are followed, so the walk costs at most `MAX_CHAINS`
    /// paths' worth of steps.
    pub fn attempt_chains(&self, service: ServiceIx) -> Vec<Vec<(String, u64)>> {
        struct Walk<'a> {
            sc: &'a Scenario,
            class: usize,
            target: ServiceIx,
            reaches: Vec<bool>,
        }
        fn walk(
            w: &Walk,
            at: ServiceIx,
            path: &mut Vec<(String, u64)>,
            out: &mut Vec<Vec<(String, u64)>>,
        ) {
            if out.len() >= MAX_CHAINS {
                return;
            }
            if at == w.target {
                out.push(path.clone());
                return;
            }
            for &e in &w.sc.services[at].calls {
                let edge = &w.sc.edges[e];
                if !w.reaches[edge.callee] || !edge.taken_by(ClassIx::new(w.class)) {
                    continue;
                }
                path.push((edge.name.clone(), edge.max_attempts_per_call()));
                walk(w, edge.callee, path, out);
                path.pop();
            }
        }
        let order = self.topological_order();
        let mut out = Vec::new();
        for (c, class) in self.classes.iter().enumerate() {
            // Which services can reach `service` through calls this class makes (itself
            // included).
            let mut reaches = vec![false; self.services.len()];
            reaches[service] = true;
            for &s in order.iter().rev() {
                if self.services[s].calls.iter().any(|&e| {
                    reaches[self.edges[e].callee] && self.edges[e].taken_by(ClassIx::new(c))
                }) {
                    reaches[s] = true;
                }
            }
            let w = Walk {
                sc: self,
                class: c,
                target: service,
                reaches,
            };
            let client = &class.client;
            if !w.reaches[client.entry] {
                continue;
            }
            let entry = format!("client->{}", self.services[client.entry].name);
            let hop = (entry, client.retries as u64 + 1);
            let mut path = vec![hop];
            let before = out.len();
            walk(&w, client.entry, &mut path, &mut out);
            // Two classes with the same entry and retries list the same chains once.
            let fresh: Vec<Vec<(String, u64)>> = out.drain(before..).collect();
            for chain in fresh {
                if !out.contains(&chain) {
                    out.push(chain);
                }
            }
        }
        out
    }
}
