//! Validation of the load side of a scenario: request classes. Owns the choice between the
//! shorthand (`arrivals` + `client`, one class named `default`) and `clients:` (named classes,
//! each with its own `arrivals`, client keys and `priority`), the checks of one class's arrivals
//! (rate, profile, closed loop, trace) and of its client policy, each at its own key path
//! (`arrivals.rate` or `clients.<name>.arrivals.rate`).

use std::collections::HashMap;

use super::arrivals::closed_rate;
use super::{MAX_RATE, Validator, valid_service_name};
use crate::protections::{load_balancer, retry, retry_on, timeout};
use crate::scenario::raw::{ArrivalProcessRaw, ArrivalsRaw, ClientRaw, ScenarioRaw};
use crate::scenario::trace::ClassFilter;
use crate::scenario::{
    ArrivalProcess, Arrivals, ClassIx, ClientPolicy, DEFAULT_CLASS, Edge, RequestClass, Service,
};
use crate::time::SimDuration;

/// Largest `arrivals.scale` accepted.
pub(super) const MAX_LOAD_SCALE: f64 = 1000.0;

/// Most request classes in one scenario.
pub(super) const MAX_CLASSES: usize = 1_000;

impl Validator<'_> {
    /// The request classes of `raw`: `clients`, or the shorthand as one class `default`.
    pub(super) fn classes(
        &mut self,
        raw: &ScenarioRaw,
        duration: SimDuration,
        names: &HashMap<&str, usize>,
    ) -> Vec<RequestClass> {
        let mut out = Vec::new();
        match &raw.clients {
            Some(classes) => {
                // Beside `clients`, `arrivals` may hold `scale` alone: it scales every class.
                let scale_only = raw.arrivals.as_ref().is_some_and(ArrivalsRaw::only_scale);
                for (key, given) in [
                    ("arrivals", raw.arrivals.is_some() && !scale_only),
                    ("client", raw.client.is_some()),
                ] {
                    if given {
                        self.problem(
                            key,
                            "give request classes under `clients`, or the shorthand `arrivals` + \
                             `client` (one class), not both: move it into a class",
                        );
                    }
                }
                if classes.is_empty() {
                    self.problem("clients", "must name at least one request class");
                } else if classes.len() > MAX_CLASSES {
                    self.problem(
                        "clients",
                        format!("names {} classes; at most {MAX_CLASSES}", classes.len()),
                    );
                }
                let outer = match &raw.arrivals {
                    Some(a) if scale_only => self.load_scale("arrivals", a),
                    _ => 1.0,
                };
                let known: Vec<String> = classes.keys().cloned().collect();
                for (name, c) in classes {
                    let key = format!("clients.{name}");
                    if !valid_service_name(name) {
                        self.problem(
                            &key,
                            format!(
                                "`{}` cannot name a request class: use letters, digits, `_` and \
                                 `-` (names make up key paths like `classes.{{name}}.success_rate`)",
                                crate::config::suggest::shorten(name)
                            ),
                        );
                    }
                    let filter = ClassFilter {
                        class: name,
                        known: &known,
                    };
                    let arrivals = self.arrivals(
                        &format!("{key}.arrivals"),
                        &c.arrivals,
                        duration,
                        Some(filter),
                        outer,
                    );
                    let client = self.client(&key, &c.client(), names);
                    out.push(RequestClass {
                        name: name.clone(),
                        priority: c.priority.map_or(0, |p| p.level()),
                        arrivals,
                        client,
                    });
                }
            }
            None => {
                let (Some(a), Some(c)) = (&raw.arrivals, &raw.client) else {
                    for (key, given) in [
                        ("arrivals", raw.arrivals.is_some()),
                        ("client", raw.client.is_some()),
                    ] {
                        if !given {
                            self.problem(
                                key,
                                "is missing: give `arrivals` and `client` (one class of \
                                 requests), or request classes under `clients` (without them)",
                            );
                        }
                    }
                    return out;
                };
                let arrivals = self.arrivals("arrivals", a, duration, None, 1.0);
                let client = self.client("client", c, names);
                out.push(RequestClass {
                    name: DEFAULT_CLASS.to_owned(),
                    priority: 0,
                    arrivals,
                    client,
                });
            }
        }
        out
    }

    /// One class's arrivals at `key` (`arrivals` or `clients.<name>.arrivals`).
    fn arrivals(
        &mut self,
        key: &str,
        a: &ArrivalsRaw,
        duration: SimDuration,
        filter: Option<ClassFilter<'_>>,
        outer: f64,
    ) -> Arrivals {
        let scale = outer * self.load_scale(key, a);
        let profile = self.profile(key, a, duration);
        let rate = match &profile {
            Some(p) => p.peak_rate(),
            None => a.rate.unwrap_or(0.0),
        };
        let closed = self.closed(key, a);
        let rate = closed.as_ref().map_or(rate, closed_rate);
        let trace = self.trace(key, a, duration, filter);
        let rate = trace
            .as_ref()
            .map_or(rate, |t| t.len() as f64 / duration.as_secs_f64());
        let rate_key = format!("{key}.rate");
        if a.profile.is_some()
            || a.rate.is_none()
            || a.trace.is_some()
            || a.process == Some(ArrivalProcessRaw::Closed)
        {
            // Checked with the profile.
        } else if !rate.is_finite() || rate <= 0.0 {
            self.problem(
                &rate_key,
                format!("must be a positive number of requests per second, not {rate}"),
            );
        } else if rate > MAX_RATE {
            self.problem(
                &rate_key,
                format!("must be at most {MAX_RATE} requests per second"),
            );
        } else if !duration.is_zero() && rate * duration.as_secs_f64() < 1.0 {
            // Also keeps the mean gap between arrivals far inside the nanosecond clock.
            self.problem(
                &rate_key,
                format!(
                    "{} requests per second over {duration} is less than one arrival on \
                     average, nothing to measure; give a rate of at least one request per \
                     `duration` (rate × duration ≥ 1)",
                    super::number(rate)
                ),
            );
        }
        let arrivals = Arrivals {
            rate,
            process: match a.process {
                None | Some(ArrivalProcessRaw::Poisson) => ArrivalProcess::Poisson,
                Some(ArrivalProcessRaw::Constant) => ArrivalProcess::Constant,
                Some(ArrivalProcessRaw::Closed) => ArrivalProcess::Closed,
            },
            profile,
            closed,
            trace,
        };
        if scale == 1.0 {
            return arrivals;
        }
        let scaled = arrivals.scaled(scale);
        if scaled.rate > MAX_RATE {
            self.problem(
                &format!("{key}.scale"),
                format!(
                    "brings the rate to {} requests per second; loadsim takes at most {MAX_RATE}",
                    scaled.rate
                ),
            );
        }
        scaled
    }

    /// The `scale` of `arrivals` at `key` (1 when not given), checked.
    fn load_scale(&mut self, key: &str, a: &ArrivalsRaw) -> f64 {
        match a.scale {
            None => 1.0,
            Some(k) if k.is_finite() && k > 0.0 && k <= MAX_LOAD_SCALE => k,
            Some(_) => {
                self.problem(
                    &format!("{key}.scale"),
                    format!("must be a number in (0, {MAX_LOAD_SCALE}]"),
                );
                1.0
            }
        }
    }

    /// One class's client policy, its keys under `key` (`client` or `clients.<name>`).
    fn client(&mut self, key: &str, c: &ClientRaw, names: &HashMap<&str, usize>) -> ClientPolicy {
        let k = |sub: &str| format!("{key}.{sub}");
        let entry = self.service_ref(&k("entry"), &c.entry, names);
        ClientPolicy {
            entry: entry.unwrap_or_default(),
            attempt_timeout: timeout::validate(&k("attempt_timeout"), c.attempt_timeout.0, self),
            retries: retry::validate_retries(&k("retries"), c.retries, self),
            retry_interval: c
                .retry_interval
                .map_or(retry::DEFAULT_RETRY_INTERVAL, |d| d.0),
            propagate_deadline: c.propagate_deadline.unwrap_or(false),
            cancel_on_abandon: c.cancel_on_abandon.unwrap_or(false),
            retry_on: retry_on::validate(&k("retry_on"), c.retry_on.as_ref(), self),
            call_timeout: timeout::validate_call_timeout(&k("call_timeout"), c.call_timeout, self),
            backoff: c.backoff.as_ref().map(|b| {
                if c.retry_interval.is_some() {
                    self.problem(
                        &k("backoff"),
                        "give either `retry_interval` (a fixed wait) or `backoff`, not both",
                    );
                }
                retry::validate_backoff(&k("backoff"), Some(b), self)
            }),
            load_balancer: load_balancer::validate(
                &k("load_balancer"),
                c.load_balancer.as_ref(),
                self,
            ),
            latency: c.latency.as_ref().and_then(|d| self.dist(&k("latency"), d)),
        }
    }

    /// Resolves every `calls.<callee>.classes` to class indices: each name a class of the
    /// scenario, none twice, at least one.
    pub(super) fn call_classes(
        &mut self,
        raw: &ScenarioRaw,
        services: &[Service],
        edges: &mut [Edge],
        classes: &[RequestClass],
    ) {
        let known: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
        for (caller, s) in raw.services.iter() {
            for (callee, c) in &s.calls {
                let Some(names) = &c.classes else { continue };
                let key = format!("services.{caller}.calls.{callee}.classes");
                let Some(edge) = edges.iter_mut().find(|e| {
                    services[e.caller].name == *caller && services[e.callee].name == *callee
                }) else {
                    continue; // an unknown callee, reported already
                };
                if names.is_empty() {
                    self.problem(
                        &key,
                        "lists no class, so no request would make the call; list the classes that \
                         make it, or remove the call",
                    );
                }
                let mut ids: Vec<ClassIx> = Vec::with_capacity(names.len());
                for (i, name) in names.iter().enumerate() {
                    match known.iter().position(|k| k == name) {
                        Some(id) if ids.contains(&ClassIx::new(id)) => {
                            self.problem(&format!("{key}[{i}]"), format!("lists `{name}` twice"))
                        }
                        Some(id) => ids.push(ClassIx::new(id)),
                        None => self.problem(
                            &format!("{key}[{i}]"),
                            format!(
                                "`{}` is not a request class of this scenario{}",
                                crate::config::suggest::shorten(name),
                                crate::config::suggest::did_you_mean(name, known.iter().copied())
                            ),
                        ),
                    }
                }
                ids.sort_unstable();
                edge.classes = Some(ids);
            }
        }
    }
}
