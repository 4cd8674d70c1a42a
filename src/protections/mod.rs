//! The protections: one module per mechanism, each holding everything that mechanism is, side by
//! side — its YAML form (a serde type that denies unknown keys), its validation with its exact
//! messages, its defaults as constants (the editor schema cites them, so text and code cannot
//! drift), its runtime rule (a small state machine or pure function the simulation calls
//! directly, without dynamic dispatch), and a table of bad snippets with the messages they get.
//!
//! | module | mechanism | keys | attached to |
//! |---|---|---|---|
//! | [`timeout`] | attempt timeout cut to the deadline, deadline propagation, cancellation, call timeout | `attempt_timeout`, `propagate_deadline`, `cancel_on_abandon`, `call_timeout` | client, edge |
//! | [`retry`] | retries with exponential backoff (full, equal, decorrelated, no or proportional jitter) | `retries`, `backoff`, `retry_interval` | client, edge |
//! | [`retry_on`] | which failures are retried; errors a callee marks non-retryable | `retry_on`, `retryable_fraction` | client, edge, service, `error` fault |
//! | [`throttle`] | gRFC A6 retry throttle | `retry_throttle` | edge |
//! | [`budget`] | Envoy retry budget | `retry_budget` | edge |
//! | [`quota`] | the AWS SDKs' standard retry mode: retry quota, 3 attempts, SDK backoff | `retry_quota` | edge |
//! | [`adaptive`] | client-side adaptive throttling (SRE book) | `adaptive_throttle` | edge |
//! | [`breaker`] | circuit breaker | `circuit_breaker` | edge |
//! | [`hedge`] | hedged requests | `hedge` | edge |
//! | [`load_balancer`] | picking a replica: round robin, random, least request (Envoy) | `load_balancer` | client, edge |
//! | [`autoscale`] | horizontal autoscaling of replicas (Kubernetes HPA) | `autoscale` | service |
//! | [`outlier`] | ejecting a replica after failures in a row (Envoy outlier detection) | `outlier_detection` | edge |
//! | [`pushback`] | retry-after hints and honouring them | `pushback`, `honor_retry_after` | service, edge |
//! | [`admission`] | bounded queue, reject delay | `queue_cap`, `reject_delay` | service |
//! | [`discipline`] | FIFO, LIFO, adaptive LIFO | `queue_discipline`, `lifo_after` | service |
//! | [`shedding`] | dropping at dequeue: expired deadlines, queue time | `drop_expired`, `max_queue_time` | service |
//! | [`codel`] | CoDel (RFC 8289) at dequeue | `codel` | service |
//! | [`rate_limit`] | Envoy local rate limit (token bucket) | `rate_limit` | service, edge |
//! | [`concurrency_limit`] | concurrency limiters: fixed, AIMD, Vegas, Gradient2, Envoy adaptive concurrency | `concurrency_limit` | service, edge |
//!
//! Fan-out (`parallel`) is not a protection but the shape of a service's calls; it lives with the
//! call state machine in `model::calls`.
//!
//! The scenario layer owns where a key sits in the file (`scenario::raw` has one field line per
//! key, naming the type from here) and calls each module's `validate`; the simulation compiles
//! each protection configured on an edge or service into that place's gate (`model::gate`), whose
//! hooks call the rule where it acts (before an attempt is sent, when it settles, before a retry,
//! at admission, at dequeue). The
//! linter asks the same modules for the bounds it reasons with ([`retry::max_backoff`],
//! [`throttle::sustained_attempts_per_call`]).
//!
//! Adding a protection: a module here (YAML type, constants, `validate`, rule, bad-snippet table),
//! its `pub mod` line and catalogue row above, its field line in `scenario::raw` and the domain
//! type, and its registration in `model::gate` (guard variant, `compile` line, hook arms, key
//! row) — no control-flow edit in the model.

pub(crate) mod adaptive;
pub(crate) mod admission;
pub(crate) mod autoscale;
pub(crate) mod aws_adaptive;
pub(crate) mod breaker;
pub(crate) mod budget;
pub(crate) mod codel;
pub(crate) mod concurrency_limit;
pub(crate) mod discipline;
pub(crate) mod hedge;
pub(crate) mod load_balancer;
pub(crate) mod outlier;
pub(crate) mod pushback;
pub(crate) mod quota;
pub(crate) mod rate_limit;
pub(crate) mod retry;
pub(crate) mod retry_on;
pub(crate) mod rolling;
pub(crate) mod shedding;
pub(crate) mod throttle;
pub(crate) mod timeout;

/// Durations as written in files (the config layer's type).
pub(crate) use crate::config::duration::DurationText;
use crate::time::SimDuration;

/// Where validation reports a problem: the key path (dotted, from the top of the file) and a
/// sentence that says what to do. The scenario validator implements it, locating each key in the
/// file; every problem of a document is collected before any is shown.
pub(crate) trait Problems {
    /// Records one problem at `key`.
    fn problem(&mut self, key: &str, message: String);
}

/// Longest trailing window of adaptive throttling and circuit breakers.
pub(crate) const MAX_WINDOW: SimDuration = SimDuration::from_secs(3600);

/// A trailing window of whole seconds between 1 s and [`MAX_WINDOW`] (adaptive throttling and
/// circuit breakers count per second), `default` when not given.
pub(crate) fn whole_seconds_window(
    key: &str,
    given: Option<DurationText>,
    default: SimDuration,
    p: &mut impl Problems,
) -> Option<SimDuration> {
    let w = given.map_or(default, |d| d.0);
    if w < SimDuration::from_secs(1) || w > MAX_WINDOW || !w.0.is_multiple_of(1_000_000_000) {
        p.problem(
            key,
            format!("must be a whole number of seconds between 1s and {MAX_WINDOW}"),
        );
        return None;
    }
    Some(w)
}

/// A duration that must not be zero.
/// The shortest period of a controller that acts on a timer of its own (autoscaling `interval`,
/// Envoy gradient's `concurrency_update_interval` and `min_rtt_calc_interval`, outlier detection's
/// `interval`): 1 ms. Envoy reads these intervals in whole milliseconds and Kubernetes' HPA sync
/// period is seconds; a finer period would only add evaluations (one event each) without a
/// production counterpart, and a nanosecond one would make a simulated second cost a billion
/// of them (docs/model.md, "Floors").
pub(crate) const MIN_CONTROLLER_INTERVAL: SimDuration = SimDuration::from_millis(1);

/// `d` at `key` if it is at least [`MIN_CONTROLLER_INTERVAL`], else a problem that says why.
pub(crate) fn controller_interval(
    key: &str,
    d: SimDuration,
    p: &mut impl Problems,
) -> Option<SimDuration> {
    if d < MIN_CONTROLLER_INTERVAL {
        p.problem(
            key,
            format!(
                "is {d}; a controller's interval must be at least {MIN_CONTROLLER_INTERVAL} \
                 (production controllers count it in milliseconds or more, and every \
                 evaluation is an event)"
            ),
        );
        return None;
    }
    Some(d)
}

pub(crate) fn positive(key: &str, d: SimDuration, p: &mut impl Problems) -> Option<SimDuration> {
    if d.is_zero() {
        p.problem(key, "must be longer than 0s".into());
        return None;
    }
    Some(d)
}

/// The bad-snippet tables of the protection modules and the fault kinds: each snippet is placed
/// into a small valid scenario (client → `a` → `b`, 10 s), at the client, on the edge `a -> b`,
/// at service `b` or under `faults:`, and must yield exactly the expected diagnostic.
#[cfg(test)]
pub(crate) mod bad_snippets {
    use std::path::Path;

    use crate::scenario::{Document, Scenario};

    /// Where a snippet goes.
    #[derive(Clone, Copy, Debug)]
    pub(crate) enum At {
        /// Under `client:`; keys are reported as `client.…`.
        Client,
        /// Under `services.a.calls.b:`; keys are reported as `services.a.calls.b.…`.
        Edge,
        /// Under `services.b:`; keys are reported as `services.b.…`.
        Service,
        /// Under `faults:`; keys are reported as `faults.…`.
        Faults,
    }

    impl At {
        fn prefix(self) -> &'static str {
            match self {
                At::Client => "client",
                At::Edge => "services.a.calls.b",
                At::Service => "services.b",
                At::Faults => "faults",
            }
        }
    }

    /// The scenario with `snippet` (YAML lines, unindented) placed `at`.
    pub(crate) fn scenario_text(at: At, snippet: &str) -> String {
        let indent = |n: usize| {
            snippet
                .lines()
                .map(|l| format!("{}{l}\n", " ".repeat(n)))
                .collect::<String>()
        };
        // A snippet that sets the attempt timeout replaces the base's.
        let replaces = snippet.starts_with("attempt_timeout:");
        let timeout = |here: bool, n: usize| {
            if here && replaces {
                String::new()
            } else {
                format!("{}attempt_timeout: 1s\n", " ".repeat(n))
            }
        };
        let client_timeout = timeout(matches!(at, At::Client), 2);
        let edge_timeout = timeout(matches!(at, At::Edge), 8);
        let (client, edge, service, faults) = match at {
            At::Client => (indent(2), String::new(), String::new(), String::new()),
            At::Edge => (String::new(), indent(8), String::new(), String::new()),
            At::Service => (String::new(), String::new(), indent(4), String::new()),
            At::Faults => (String::new(), String::new(), String::new(), indent(2)),
        };
        let faults = if faults.is_empty() {
            faults
        } else {
            format!("faults:\n{faults}")
        };
        format!(
            "duration: 10s\narrivals: {{rate: 10}}\nclient:\n  entry: a\n{client_timeout}{client}\
             services:\n  a:\n    slots: 1\n    calls:\n      b:\n{edge_timeout}{edge}\
             \x20 b:\n    slots: 1\n    service_time: {{dist: constant, value: 1ms}}\n{service}{faults}"
        )
    }

    /// Checks each `(snippet, key under the attachment point, message)`: the scenario is refused
    /// with exactly that one diagnostic.
    pub(crate) fn check(at: At, cases: &[(&str, &str, &str)]) {
        for &(snippet, key, message) in cases {
            let text = scenario_text(at, snippet);
            let doc = Document::from_text(Path::new("t.yaml"), &text)
                .unwrap_or_else(|e| panic!("{snippet}: {e}"));
            let err = match Scenario::from_document(&doc) {
                Ok(_) => panic!("{snippet}: accepted, expected `{key}`: {message}"),
                Err(e) => e,
            };
            let got: Vec<(String, String)> = err
                .diagnostics
                .iter()
                .map(|d| (d.key.clone(), d.message.clone()))
                .collect();
            let want = format!("{}.{key}", at.prefix());
            assert_eq!(got, vec![(want, message.to_owned())], "snippet:\n{snippet}");
        }
    }

    /// Checks that each snippet is accepted.
    pub(crate) fn accepted(at: At, snippets: &[&str]) {
        for snippet in snippets {
            let text = scenario_text(at, snippet);
            let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
            if let Err(e) = Scenario::from_document(&doc) {
                panic!("{snippet}: {e}");
            }
        }
    }
}
