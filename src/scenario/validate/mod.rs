//! From the serde mirror to a [`Scenario`]. Owns every check on a scenario's values — ranges,
//! references between services, call cycles, fault windows, distribution parameters — and reports
//! all problems of a document at once, each at its key path and line.

mod arrivals;
mod classes;

mod dist;
mod faults;

use std::collections::HashMap;
use std::path::Path;

use super::raw::{CallRaw, ScenarioRaw, ServiceRaw};
use super::{DEFAULT_DRAIN, Edge, EdgeIx, RequestClass, Scenario, Service, ServiceIx};
use crate::config::suggest::did_you_mean;
use crate::config::{ConfigError, Diagnostic, Document, deserialize_all};
use crate::protections::{
    Problems, adaptive, admission, breaker, budget, codel, concurrency_limit, discipline, hedge,
    load_balancer, outlier, pushback, quota, rate_limit, retry, retry_on, throttle, timeout,
};
use crate::time::SimDuration;

/// Largest arrival rate accepted (user requests per second).
pub(super) const MAX_RATE: f64 = 10_000_000.0;
/// Largest slot count or queue cap accepted.
pub(super) const MAX_SLOTS: u32 = 10_000_000;
/// Most services in one scenario. Requests pass down a call chain by nested calls within one
/// event, so chain length is stack depth; 1 000 is far beyond any topology we model and well
/// inside the stack of a worker thread.
pub(super) const MAX_SERVICES: usize = 1_000;
/// Longest arrival period or drain accepted: 30 days.
pub(super) const MAX_DURATION: SimDuration = SimDuration::from_secs(30 * 24 * 3600);
/// Most replicas of all services together: each is a set of slots and a queue with its own
/// stream, and a balancer keeps one count per replica per caller.
pub(super) const MAX_TOTAL_REPLICAS: u64 = 10_000;

/// A [`Scenario`] is built only by validation: from a file, or from a merged document.
impl Scenario {
    /// Loads a scenario file, applies `--set` overrides in order, then `seed` if given.
    pub fn load(path: &Path, sets: &[String], seed: Option<u64>) -> Result<Scenario, ConfigError> {
        let mut doc = crate::import::load_all(path)?;
        for s in sets {
            doc.apply_set(s)?;
        }
        let mut scenario = Self::from_document(&doc)?;
        if let Some(seed) = seed {
            scenario.seed = seed;
        }
        Ok(scenario)
    }

    /// Validates a merged document.
    pub fn from_document(doc: &Document) -> Result<Scenario, ConfigError> {
        validate(doc)
    }
}

/// Deserializes and validates a merged document: the shape problems (unknown keys, types, enum
/// values, durations) and the problems of meaning of the rest, all in one report in file order.
pub(super) fn validate(doc: &Document) -> Result<Scenario, ConfigError> {
    let mut partial = deserialize_all::<ScenarioRaw>(doc);
    // The problems of imported files come with the rest; an edge whose import failed lacks the
    // imported keys, which is no news at the edge itself.
    partial
        .problems
        .retain(|p| !doc.incomplete.contains(&p.key));
    let imports = doc.deferred.iter().cloned();
    let Some(raw) = partial.value.take() else {
        return Err(doc.sorted(imports.chain(partial.problems).collect()));
    };
    if raw.services.len() > MAX_SERVICES {
        // Checking each of them would bury this sentence under thousands more.
        return Err(ConfigError::one(doc.diagnostic(
            "services",
            format!(
                "names {} services; loadsim accepts at most {MAX_SERVICES}",
                raw.services.len()
            ),
        )));
    }
    let mut v = Validator {
        doc,
        problems: Vec::new(),
    };
    let scenario = v.scenario(raw);
    if v.problems.is_empty() && partial.problems.is_empty() && doc.deferred.is_empty() {
        return Ok(scenario);
    }
    // A value with a shape problem was left out or replaced by a placeholder; what that implies,
    // at its own key, below it or at the keys that hold it, is no news.
    let meaning = v
        .problems
        .into_iter()
        .filter(|p| partial.is_news(&p.key) && !doc.incomplete.contains(&p.key));
    let all: Vec<Diagnostic> = imports
        .chain(partial.problems.iter().cloned())
        .chain(meaning)
        .collect();
    Err(doc.sorted(all))
}

struct Validator<'a> {
    doc: &'a Document,
    problems: Vec<Diagnostic>,
}

impl Problems for Validator<'_> {
    fn problem(&mut self, key: &str, message: String) {
        self.problems.push(self.doc.diagnostic(key, message));
    }
}

impl Validator<'_> {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        Problems::problem(self, key, message.into());
    }

    fn scenario(&mut self, raw: ScenarioRaw) -> Scenario {
        let name = self
            .doc
            .path()
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        let duration = raw.duration.0;
        if duration.is_zero() {
            self.problem("duration", "must be longer than 0s");
        } else if duration > MAX_DURATION {
            self.problem(
                "duration",
                format!("must be at most {MAX_DURATION} of simulated time"),
            );
        }
        let drain = raw.drain.map_or(DEFAULT_DRAIN, |d| d.0);
        if drain > MAX_DURATION {
            self.problem("drain", format!("must be at most {MAX_DURATION}"));
        }
        let names: HashMap<&str, usize> = raw
            .services
            .keys()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        if raw.services.is_empty() {
            self.problem("services", "must name at least one service");
        }
        for sname in raw.services.keys() {
            if !valid_service_name(sname) {
                self.problem(
                    &format!("services.{sname}"),
                    format!(
                        "`{}` cannot name a service: use letters, digits, `_` and `-` (names make \
                         up edge names like `a->b` and key paths like `services.a.slots`, so \
                         other characters could make two of them collide)",
                        crate::config::suggest::shorten(sname)
                    ),
                );
            }
        }
        let mut services = Vec::with_capacity(raw.services.len());
        let mut edges = Vec::new();
        for (i, (sname, s)) in raw.services.iter().enumerate() {
            let service = self.service(i, sname, s, &names, &mut edges);
            services.push(service);
        }

        let classes = self.classes(&raw, duration, &names);
        self.check_fleet(&raw, &services, &edges, &classes);
        self.check_partitions(&services, &edges, &classes);
        self.call_classes(&raw, &services, &mut edges, &classes);
        let replicas: Vec<u32> = services.iter().map(|s| s.max_units()).collect();

        let mut faults = Vec::new();
        for fname in raw.faults.keys() {
            if !valid_service_name(fname) {
                self.problem(
                    &format!("faults.{fname}"),
                    format!(
                        "`{}` cannot name a fault: use letters, digits, `_` and `-` (a name with \
                         `.` or `[` cannot be addressed by `--set faults.<name>.<key>=…`)",
                        crate::config::suggest::shorten(fname)
                    ),
                );
            }
        }
        for (fname, f) in &raw.faults {
            if let Some(fault) = self.fault(fname, f, duration, &names, &replicas, &services) {
                faults.push(fault);
            }
        }

        for (_, arrivals) in raw.arrivals_by_class() {
            self.surges_need_a_rate(arrivals, &faults);
        }
        let scenario = Scenario {
            name,
            seed: raw.seed.unwrap_or(1),
            allow_no_requests: raw.allow_no_requests.unwrap_or(false),
            duration,
            drain,
            classes,
            services,
            edges,
            faults,
            metrics: crate::scenario::metrics::validate(raw.metrics.as_ref(), duration, self),
        };
        // Edges exist only to services that exist, so a cycle is found whatever else is wrong.
        self.check_acyclic(&scenario);
        scenario
    }

    fn service(
        &mut self,
        id: usize,
        name: &str,
        s: &ServiceRaw,
        names: &HashMap<&str, usize>,
        edges: &mut Vec<Edge>,
    ) -> Service {
        let key = format!("services.{name}");
        if s.slots == 0 {
            self.problem(&format!("{key}.slots"), "must be at least 1");
        } else if s.slots > MAX_SLOTS {
            self.problem(
                &format!("{key}.slots"),
                format!("must be at most {MAX_SLOTS}"),
            );
        }
        admission::validate_queue_cap(&format!("{key}.queue_cap"), s.queue_cap, self);
        let service_time = s
            .service_time
            .as_ref()
            .and_then(|d| self.dist(&format!("{key}.service_time"), d));
        let mut calls = Vec::new();
        let mut call_names = Vec::new();
        for (callee_name, c) in &s.calls {
            let ckey = format!("{key}.calls.{callee_name}");
            let callee = self.callee(&ckey, name, callee_name, names);
            if let Some(callee) = callee {
                calls.push(EdgeIx::new(edges.len()));
                call_names.push(callee_name.as_str());
                edges.push(self.edge(&ckey, ServiceIx::new(id), callee, name, callee_name, c));
            }
        }
        let stages = s.stages.as_ref().and_then(|st| {
            super::stages::validate(
                &format!("{key}.stages"),
                st,
                &call_names,
                s.parallel.unwrap_or(false),
                self,
            )
        });
        // Calls taken with a probability or by some classes only run through the steps, like
        // stages: without `stages`, the shorthand's own steps (the plain paths stay free of
        // draws and class tests).
        let stages = stages.or_else(|| {
            calls
                .iter()
                .any(|&e| edges[e].probability.is_some() || edges[e].classes.is_some())
                .then(|| super::stages::shorthand(calls.len(), s.parallel.unwrap_or(false)))
        });
        Service {
            name: name.to_owned(),
            slots: s.slots,
            queue_cap: s.queue_cap,
            discipline: discipline::validate(&key, s.queue_discipline, s.lifo_after, self),
            shed_priority: discipline::validate_shed(&key, s.shed, s.queue_cap, self),
            drop_expired: s.drop_expired.unwrap_or(false),
            reject_delay: s
                .reject_delay
                .map_or(admission::DEFAULT_REJECT_DELAY, |d| d.0),
            service_time,
            max_queue_time: s.max_queue_time.map(|d| d.0),
            codel: self.nested(&key, "codel", s.codel.as_ref(), codel::validate),
            pushback: self.nested(&key, "pushback", s.pushback.as_ref(), pushback::validate),
            rate_limit: self.nested(
                &key,
                "rate_limit",
                s.rate_limit.as_ref(),
                rate_limit::validate,
            ),
            concurrency_limit: self.nested(
                &key,
                "concurrency_limit",
                s.concurrency_limit.as_ref(),
                concurrency_limit::validate,
            ),
            limit_partitions: s.concurrency_limit.as_ref().map_or(Vec::new(), |c| {
                concurrency_limit::validate_partitions(&format!("{key}.concurrency_limit"), c, self)
            }),
            parallel: s.parallel.unwrap_or(false),
            calls,
            retryable_fraction: retry_on::validate_fraction(
                &format!("{key}.retryable_fraction"),
                s.retryable_fraction,
                self,
            ),
            replicas: self.replicas(&key, s.replicas),
            contention: self.nested(
                &key,
                "contention",
                s.contention.as_ref(),
                super::contention::validate,
            ),
            stages,
            autoscale: self.nested(&key, "autoscale", s.autoscale.as_ref(), |k, a, p| {
                crate::protections::autoscale::validate(k, a, MAX_TOTAL_REPLICAS, p)
            }),
        }
    }

    /// Every limiter partition names a request class of the scenario.
    fn check_partitions(&mut self, services: &[Service], edges: &[Edge], classes: &[RequestClass]) {
        let known: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
        let at_services = services
            .iter()
            .map(|s| (format!("services.{}", s.name), &s.limit_partitions));
        let at_edges = edges.iter().map(|e| {
            (
                format!(
                    "services.{}.calls.{}",
                    services[e.caller].name, services[e.callee].name
                ),
                &e.limit_partitions,
            )
        });
        let all: Vec<(String, &Vec<crate::scenario::LimitPartition>)> =
            at_services.chain(at_edges).collect();
        for (key, parts) in all {
            for p in parts {
                if !known.contains(&p.class.as_str()) {
                    self.problem(
                        &format!("{key}.concurrency_limit.partitions.{}", p.class),
                        format!(
                            "`{}` is not a request class of this scenario{}",
                            crate::config::suggest::shorten(&p.class),
                            did_you_mean(&p.class, known.iter().copied())
                        ),
                    );
                }
            }
        }
    }

    /// `replicas` of the service at `key` (default 1).
    fn replicas(&mut self, key: &str, given: Option<u32>) -> u32 {
        let n = given.unwrap_or(1);
        if n == 0 {
            self.problem(
                &format!("{key}.replicas"),
                "must be at least 1; remove it for one replica",
            );
            return 1;
        }
        if n as u64 > MAX_TOTAL_REPLICAS {
            self.problem(
                &format!("{key}.replicas"),
                format!("must be at most {MAX_TOTAL_REPLICAS}"),
            );
            return 1;
        }
        n
    }

    /// The checks of a fleet that need every service: `choice_count` against the callee's
    /// replicas, and the total of replicas.
    fn check_fleet(
        &mut self,
        raw: &ScenarioRaw,
        services: &[Service],
        edges: &[Edge],
        classes: &[RequestClass],
    ) {
        let total: u64 = services.iter().map(|s| s.max_units() as u64).sum();
        if total > MAX_TOTAL_REPLICAS {
            self.problem(
                "services",
                format!(
                    "has {total} replicas in all; loadsim accepts at most {MAX_TOTAL_REPLICAS}"
                ),
            );
        }
        let explicit = |lb: Option<&load_balancer::LoadBalancerRaw>| {
            lb.is_some_and(|l| l.choice_count.is_some())
        };
        for (class, (prefix, raw_client)) in classes.iter().zip(raw.clients_by_class()) {
            if let Some(entry) = services.get(class.client.entry.index()) {
                load_balancer::check_choice_count(
                    &format!("{prefix}.load_balancer"),
                    class.client.load_balancer,
                    explicit(raw_client.load_balancer.as_ref()),
                    entry.max_units(),
                    self,
                );
            }
        }
        for e in edges {
            let caller = &services[e.caller].name;
            let callee = &services[e.callee].name;
            let lb = raw
                .services
                .get(caller)
                .and_then(|s| s.calls.get(callee))
                .and_then(|c| c.load_balancer.as_ref());
            load_balancer::check_choice_count(
                &format!("services.{caller}.calls.{callee}.load_balancer"),
                e.load_balancer,
                explicit(lb),
                services[e.callee].max_units(),
                self,
            );
        }
    }

    fn callee(
        &mut self,
        key: &str,
        caller: &str,
        callee: &str,
        names: &HashMap<&str, usize>,
    ) -> Option<ServiceIx> {
        if callee == caller {
            self.problem(
                key,
                format!("`{caller}` calls itself; call graphs must be acyclic"),
            );
            return None;
        }
        self.service_ref(key, callee, names)
    }

    fn service_ref(
        &mut self,
        key: &str,
        name: &str,
        names: &HashMap<&str, usize>,
    ) -> Option<ServiceIx> {
        match names.get(name) {
            Some(&i) => Some(ServiceIx::new(i)),
            None => {
                let mut known: Vec<&str> = names.keys().copied().collect();
                known.sort_unstable();
                let hint = did_you_mean(name, known.iter().copied());
                self.problem(
                    key,
                    format!(
                        "there is no service `{name}`{hint} (services: {})",
                        known.join(", ")
                    ),
                );
                None
            }
        }
    }

    fn edge(
        &mut self,
        key: &str,
        caller: ServiceIx,
        callee: ServiceIx,
        caller_name: &str,
        callee_name: &str,
        c: &CallRaw,
    ) -> Edge {
        if c.import.is_some() {
            self.problem(
                &format!("{key}.import"),
                "is read when the scenario file is loaded; write it in the file, not with --set",
            );
        }
        let retry_quota = self.nested(key, "retry_quota", c.retry_quota.as_ref(), |k, q, v| {
            quota::validate(k, q, c.hedge.is_some(), v)
        });
        let mut backoff =
            retry::validate_backoff(&format!("{key}.backoff"), c.backoff.as_ref(), self);
        if let Some(q) = retry_quota
            && c.backoff.is_none()
        {
            backoff = q.default_backoff();
        }
        let retries = match (c.retries, retry_quota) {
            (None, Some(q)) => q.default_retries(),
            _ => retry::validate_retries(&format!("{key}.retries"), c.retries, self),
        };
        let throttle = self.nested(
            key,
            "retry_throttle",
            c.retry_throttle.as_ref(),
            throttle::validate,
        );
        Edge {
            caller,
            callee,
            name: format!("{caller_name}->{callee_name}"),
            attempt_timeout: timeout::validate(
                &format!("{key}.attempt_timeout"),
                c.attempt_timeout.0,
                self,
            ),
            retries,
            backoff,
            throttle,
            propagate_deadline: c.propagate_deadline.unwrap_or(false),
            retry_budget: self.nested(
                key,
                "retry_budget",
                c.retry_budget.as_ref(),
                budget::validate,
            ),
            adaptive_throttle: self.nested(
                key,
                "adaptive_throttle",
                c.adaptive_throttle.as_ref(),
                adaptive::validate,
            ),
            cancel_on_abandon: c.cancel_on_abandon.unwrap_or(false),
            honor_retry_after: c.honor_retry_after.unwrap_or(false),
            circuit_breaker: self.nested(
                key,
                "circuit_breaker",
                c.circuit_breaker.as_ref(),
                breaker::validate,
            ),
            hedge: self.nested(key, "hedge", c.hedge.as_ref(), |k, h, v| {
                hedge::validate(k, h, c.retries.unwrap_or(0), v)
            }),
            rate_limit: self.nested(
                key,
                "rate_limit",
                c.rate_limit.as_ref(),
                rate_limit::validate,
            ),
            concurrency_limit: self.nested(
                key,
                "concurrency_limit",
                c.concurrency_limit.as_ref(),
                concurrency_limit::validate,
            ),
            limit_partitions: c.concurrency_limit.as_ref().map_or(Vec::new(), |l| {
                concurrency_limit::validate_partitions(&format!("{key}.concurrency_limit"), l, self)
            }),
            retry_on: retry_on::validate(&format!("{key}.retry_on"), c.retry_on.as_ref(), self),
            call_timeout: timeout::validate_call_timeout(
                &format!("{key}.call_timeout"),
                c.call_timeout,
                self,
            ),
            load_balancer: load_balancer::validate(
                &format!("{key}.load_balancer"),
                c.load_balancer.as_ref(),
                self,
            ),
            latency: c
                .latency
                .as_ref()
                .and_then(|d| self.dist(&format!("{key}.latency"), d)),
            retry_quota,
            outlier_detection: self.nested(
                key,
                "outlier_detection",
                c.outlier_detection.as_ref(),
                outlier::validate,
            ),
            probability: super::stages::validate_probability(
                &format!("{key}.probability"),
                c.probability,
                self,
            ),
            // Resolved against the scenario's classes once they are known (`call_classes`).
            classes: c.classes.as_ref().map(|_| Vec::new()),
        }
    }

    /// Validates the optional protection `name` under `parent` with its module's `validate`, which
    /// gets the protection's own key path.
    fn nested<R, T>(
        &mut self,
        parent: &str,
        name: &str,
        raw: Option<&R>,
        validate: impl FnOnce(&str, &R, &mut Self) -> Option<T>,
    ) -> Option<T> {
        raw.and_then(|r| validate(&format!("{parent}.{name}"), r, self))
    }

    /// Checks that exactly the `allowed` keys of a flat, tagged map (a distribution, a fault) are
    /// given: every extra key and every missing one is a problem. `what` names the tag in the
    /// messages (`` `exponential` ``, `` a `slow` fault ``), `noun` what its keys are called.
    pub(super) fn params_match(
        &mut self,
        key: &str,
        (noun, what): (&str, &str),
        allowed: &[&str],
        given: &[(&str, bool)],
    ) -> bool {
        let mut ok = true;
        for &(param, present) in given {
            let wanted = allowed.contains(&param);
            if present && !wanted {
                self.problem(
                    &format!("{key}.{param}"),
                    format!("is not a {noun} of {what} (it takes {})", list(allowed)),
                );
                ok = false;
            } else if !present && wanted {
                self.problem(
                    key,
                    format!("{what} needs `{param}` (it takes {})", list(allowed)),
                );
                ok = false;
            }
        }
        ok
    }

    fn check_acyclic(&mut self, sc: &Scenario) {
        if sc.topological_order().len() == sc.services.len() {
            return;
        }
        // Find one cycle to name it: depth-first search with colours, on an explicit stack (a
        // recursive search would follow a chain of a thousand services a thousand frames deep).
        let n = sc.services.len();
        let mut colour = vec![0u8; n];
        let find_cycle = |root: usize, colour: &mut [u8]| -> Option<Vec<usize>> {
            // (service, index of the next call to follow)
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            colour[root] = 1;
            while let Some(&mut (s, ref mut next)) = stack.last_mut() {
                let Some(&e) = sc.services[s].calls.get(*next) else {
                    colour[s] = 2;
                    stack.pop();
                    continue;
                };
                *next += 1;
                let d = sc.edges[e].callee.index();
                match colour[d] {
                    0 => {
                        colour[d] = 1;
                        stack.push((d, 0));
                    }
                    1 => {
                        let at = stack.iter().position(|&(x, _)| x == d).unwrap_or(0);
                        let mut cycle: Vec<usize> = stack[at..].iter().map(|&(x, _)| x).collect();
                        cycle.push(d);
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
            None
        };
        for s in 0..n {
            if colour[s] == 0
                && let Some(cycle) = find_cycle(s, &mut colour)
            {
                let names: Vec<&str> = cycle
                    .iter()
                    .map(|&i| sc.services[i].name.as_str())
                    .collect();
                // Point at the edge that closes the cycle.
                let a = names[names.len() - 2];
                let b = names[names.len() - 1];
                self.problem(
                    &format!("services.{a}.calls.{b}"),
                    format!(
                        "calls form a cycle: {}; call graphs must be acyclic",
                        names.join(" → ")
                    ),
                );
                return;
            }
        }
    }
}

/// Whether `name` may name a service: ASCII letters, digits, `_` and `-`, not empty. Edge names
/// (`caller->callee`) and dotted key paths are built from service names; with `>` or `.` allowed,
/// `p` → `q->r` and `p->q` → `r` would both be the edge `p->q->r`.
pub(super) fn valid_service_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// A number in a message: plain for everyday magnitudes, in exponent form (`1e-300`) when plain
/// digits would run to dozens of characters.
pub(super) fn number(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

pub(super) fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
