//! Bookkeeping invariants on random valid scenarios (proptest): 1 to 6 services in any acyclic
//! call graph, random slots, queue caps, disciplines, drop-expired, own work of four shapes,
//! timeouts, retries, backoff, A6 throttles, deadline propagation, rate and concurrency limiters
//! (every algorithm) at services and on edges, replicas, autoscaling, contention, load balancers,
//! outlier detection, call stages and probabilities, network delay, a slow fault, and a drain
//! horizon that may cut the run short. Each run is a few simulated seconds at a low rate.
//!
//! For every run: every user request ends exactly once or is reported unfinished; at each service
//! arrivals = admitted + rejected_full (+ outage rejects and error-fault failures) and admitted =
//! completed + dropped_expired (+ the other drops and cancellations) + in_flight_at_end; the queue never exceeds its cap; retries stay within each edge's maximum and
//! arrivals within R1; user successes ≤ completions (and edge successes) on the path; Little's
//! law holds on the arrival period; the guard's event bound holds; the same seed twice gives the
//! same summary. The model also checks per-job retry counts and queue caps with `debug_assert!`
//! while these tests run.

use std::fmt::Write;

use loadsim::guard::event_bound_for;
use loadsim::metrics::RunSummary;
use loadsim::model::run;
use loadsim::scenario::{ClassIx, Scenario};
use proptest::prelude::*;

use super::common::parse;

/// A service's own work, in milliseconds.
#[derive(Clone, Debug)]
enum Work {
    None,
    Exponential(u32),
    Constant(u32),
    Uniform(u32, u32),
    LogNormal(u32, f64),
}

#[derive(Clone, Debug)]
struct Svc {
    slots: u32,
    cap: Option<u32>,
    lifo: bool,
    /// Protections beyond the article, as YAML lines of the service's mapping.
    extra: Vec<String>,
    drop_expired: bool,
    reject_delay_us: u32,
    work: Work,
}

#[derive(Clone, Debug)]
struct Call {
    extra: Vec<String>,
    timeout_ms: u32,
    retries: u32,
    backoff: Option<(u32, Option<u32>)>,
    throttle: Option<(u32, u32)>,
    propagate: bool,
}

#[derive(Clone, Debug)]
struct Spec {
    services: Vec<Svc>,
    /// (caller, callee, policy); kept only when callee < services (callees come after their
    /// callers, so the graph is acyclic); the first edge between two services wins.
    edges: Vec<(usize, usize, Call)>,
    client_timeout_ms: u32,
    client_retries: u32,
    client_interval_ms: u32,
    client_propagate: bool,
    client_cancel: bool,
    rate: u32,
    duration_ms: u32,
    drain_ms: u32,
    seed: u64,
    /// (kind 0..5, service, from ms, length ms, a parameter 1..300).
    fault: Option<(u8, usize, u32, u32, u32)>,
    /// Arrivals (issue 14): (0 shorthand, 1 Poisson profile, 2 constant profile, 3 closed loop;
    /// the ramp's start; its end rate or the think time's mean in ms; users − 1).
    shape: (u8, u32, u32, u32),
}

fn work() -> impl Strategy<Value = Work> {
    prop_oneof![
        Just(Work::None),
        (1u32..80).prop_map(Work::Exponential),
        (0u32..50).prop_map(Work::Constant),
        (0u32..20, 0u32..60).prop_map(|(a, b)| Work::Uniform(a, a + b)),
        (1u32..50, 0.0f64..2.0).prop_map(|(m, s)| Work::LogNormal(m, s)),
    ]
}

fn svc() -> impl Strategy<Value = Svc> {
    (
        1u32..6,
        prop::option::of(1u32..6),
        any::<bool>(),
        any::<bool>(),
        0u32..2000,
        work(),
        svc_extra(),
    )
        .prop_map(
            |(slots, cap, lifo, drop_expired, reject_delay_us, work, extra)| Svc {
                slots,
                cap,
                lifo,
                extra,
                drop_expired,
                reject_delay_us,
                work,
            },
        )
}

/// Optional service protections: adaptive LIFO, a queueing-time limit, CoDel, pushback on
/// rejects, parallel calls, retryable fraction, limits, replicas, autoscaling, contention.
fn svc_extra() -> impl Strategy<Value = Vec<String>> {
    (
        prop::option::weighted(
            0.15,
            (1u32..200).prop_map(|ms| format!("lifo_after: {ms}ms")),
        ),
        prop::option::weighted(
            0.15,
            (1u32..200).prop_map(|ms| format!("max_queue_time: {ms}ms")),
        ),
        prop::option::weighted(
            0.15,
            (1u32..20, 20u32..200)
                .prop_map(|(t, i)| format!("codel: {{target: {t}ms, interval: {i}ms}}")),
        ),
        prop::option::weighted(
            0.15,
            prop_oneof![
                (1u32..50).prop_map(|ms| format!("pushback: {{delay: {ms}ms}}")),
                (1u32..20).prop_map(|ms| format!("pushback: {{per_queued: {ms}ms}}")),
                Just("pushback: {no_retry: true}".to_owned()),
            ],
        ),
        prop::option::weighted(0.3, Just("parallel: true".to_owned())),
        prop::option::weighted(
            0.2,
            (0u32..10).prop_map(|f| format!("retryable_fraction: {}", f as f64 / 10.0)),
        ),
        rate_limit(),
        concurrency_limit(),
        prop::option::weighted(0.3, (2u32..5).prop_map(|n| format!("replicas: {n}"))),
        autoscale(),
        prop::option::weighted(
            0.2,
            (0u32..20, 0u32..20).prop_map(|(s, k)| {
                format!(
                    "contention: {{sigma: {}, kappa: {}}}",
                    s as f64 / 100.0,
                    k as f64 / 1000.0
                )
            }),
        ),
    )
        .prop_map(|(a, b, c, d, e, f, g, h, i, j, k)| {
            [a, b, c, d, e, f, g, h, i, j, k]
                .into_iter()
                .flatten()
                .collect()
        })
}

/// An optional Kubernetes HPA, fast enough to act within a few simulated seconds.
fn autoscale() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.2,
        (1u32..4, 0u32..4, 1u32..101, 50u32..1000, 0u32..600, 0u32..2000).prop_map(
            |(min, extra, pct, interval, warmup, cooldown)| {
                format!(
                    "autoscale: {{min_replicas: {min}, max_replicas: {}, target_utilization: {}, \
                     interval: {interval}ms, warmup: {warmup}ms, scale_down_cooldown: {cooldown}ms}}",
                    min + extra,
                    pct as f64 / 100.0
                )
            },
        ),
    )
}

/// An optional Envoy local rate limit (service or edge).
fn rate_limit() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.15,
        (1u32..20, 1u32..5, 50u32..500).prop_map(|(max, per, ms)| {
            format!(
                "rate_limit: {{max_tokens: {max}, tokens_per_fill: {per}, fill_interval: {ms}ms}}"
            )
        }),
    )
}

/// An optional concurrency limiter of any algorithm (service or edge).
fn concurrency_limit() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.2,
        prop_oneof![
            (1u32..10).prop_map(|l| format!("concurrency_limit: {{algorithm: fixed, limit: {l}}}")),
            (1u32..5, 0u32..10, 1u32..300).prop_map(|(min, extra, ms)| format!(
                "concurrency_limit: {{algorithm: aimd, min_limit: {min}, initial_limit: {}, \
                 max_limit: {}, timeout: {ms}ms}}",
                min + extra / 2,
                min + extra
            )),
            (1u32..20, 1u32..10).prop_map(|(i, p)| format!(
                "concurrency_limit: {{algorithm: vegas, initial_limit: {i}, max_limit: 40, \
                 probe_multiplier: {p}}}"
            )),
            (1u32..5, 1u32..20).prop_map(|(min, w)| format!(
                "concurrency_limit: {{algorithm: gradient2, min_limit: {min}, initial_limit: {min}, \
                 max_limit: 30, long_window: {w}}}"
            )),
            (5u32..300, 50u32..2000, 1u32..10).prop_map(|(u, m, n)| format!(
                "concurrency_limit: {{algorithm: envoy_gradient, concurrency_update_interval: {u}ms, \
                 min_rtt_calc_interval: {m}ms, request_count: {n}}}"
            )),
        ],
    )
}

/// Optional edge protections: hedging (then no retries), retry budget, adaptive throttling,
/// a circuit breaker, cancellation of abandoned work, honouring retry-after.
fn call_extra() -> impl Strategy<Value = Vec<String>> {
    (
        prop::option::weighted(
            0.15,
            (1u32..100, 1u32..3)
                .prop_map(|(d, n)| format!("hedge: {{delay: {d}ms, max_hedges: {n}}}")),
        ),
        prop::option::weighted(
            0.15,
            prop_oneof![
                (1u32..100, 0u32..4).prop_map(|(p, m)| {
                    format!("retry_budget: {{budget_percent: {p}, min_retry_concurrency: {m}}}")
                }),
                (0u32..10, 0u32..5, 1u32..4).prop_map(|(r, m, t)| {
                    format!(
                        "retry_budget: {{kind: ratio, retry_ratio: {}, \
                         min_retries_per_second: {m}, ttl: {t}s}}",
                        r as f64 / 10.0
                    )
                }),
            ],
        ),
        prop::option::weighted(
            0.15,
            (1u32..4, 1u32..5)
                .prop_map(|(k, w)| format!("adaptive_throttle: {{k: {k}, window: {w}s}}")),
        ),
        prop::option::weighted(
            0.15,
            (1u32..10, 1u32..10, 1u32..20, 1u32..500, 1u32..4).prop_map(|(r, w, m, o, h)| {
                format!(
                    "circuit_breaker: {{failure_rate: {}, window: {w}s, min_requests: {m}, \
                     open_for: {o}ms, half_open_probes: {h}}}",
                    r as f64 / 10.0
                )
            }),
        ),
        prop::option::weighted(0.3, Just("cancel_on_abandon: true".to_owned())),
        prop::option::weighted(0.2, Just("honor_retry_after: true".to_owned())),
        rate_limit(),
        concurrency_limit(),
        prop::option::weighted(
            0.2,
            prop_oneof![
                Just("retry_on: [reject]".to_owned()),
                Just("retry_on: [timeout, error]".to_owned()),
                Just("retry_on: [error]".to_owned()),
            ],
        ),
        // A `choice_count` of 1 fits any callee (more is refused above its replicas).
        prop::option::weighted(
            0.3,
            prop_oneof![
                Just("load_balancer: {policy: random}".to_owned()),
                Just("load_balancer: {policy: least_request, choice_count: 1}".to_owned()),
                Just("load_balancer: {policy: least_request, choice_count: all}".to_owned()),
            ],
        ),
        // The call timeout and, in the same slot (a tuple holds 12 strategies at most), the AWS
        // SDK retry modes; a hedged edge drops the quota when the YAML is written.
        (
            prop::option::weighted(
                0.2,
                (1u32..600).prop_map(|ms| format!("call_timeout: {ms}ms")),
            ),
            prop::option::weighted(
                0.15,
                prop_oneof![Just(QUOTA_STANDARD), Just(QUOTA_ADAPTIVE)],
            ),
        )
            .prop_map(|(t, q)| match (t, q) {
                (None, None) => None,
                (Some(t), None) => Some(t),
                (None, Some(q)) => Some(q.to_owned()),
                (Some(t), Some(q)) => Some(format!("{t}, {q}")),
            }),
        (
            prop::option::weighted(
                0.2,
                (0u32..30)
                    .prop_map(|ms| format!("latency: {{dist: exponential, mean: {}ms}}", ms + 1)),
            ),
            outlier_detection(),
            prop::option::weighted(
                0.2,
                (0u32..=10).prop_map(|p| format!("probability: {}", p as f64 / 10.0)),
            ),
        ),
    )
        .prop_map(|(a, b, c, d, e, f, g, h, i, j, k, (l, m, n))| {
            [a, b, c, d, e, f, g, h, i, j, k, l, m, n]
                .into_iter()
                .flatten()
                .collect()
        })
}

/// The AWS SDK retry modes the generator draws (not on a hedged edge).
const QUOTA_STANDARD: &str = "retry_quota: {kind: aws_standard}";
const QUOTA_ADAPTIVE: &str = "retry_quota: {kind: aws_adaptive}";

/// Optional outlier detection, with short sweeps and ejections so that a few-second run sees
/// ejections and returns.
fn outlier_detection() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.25,
        (1u32..6, 1u32..1000, 1u32..2000, 0u32..=100, 0u32..3).prop_map(
            |(n, interval, base, pct, max)| {
                let max = match max {
                    0 => String::new(),
                    _ => format!(", max_ejection_time: {}ms", base * (1 + max)),
                };
                format!(
                    "outlier_detection: {{consecutive_failures: {n}, interval: {interval}ms, \
                     base_ejection_time: {base}ms, max_ejection_percent: {pct}{max}}}"
                )
            },
        ),
    )
}

fn call() -> impl Strategy<Value = Call> {
    (
        1u32..400,
        0u32..3,
        prop::option::of((1u32..30, prop::option::of(30u32..100))),
        prop::option::of((1u32..20, 1u32..10)),
        any::<bool>(),
        call_extra(),
    )
        .prop_map(
            |(timeout_ms, retries, backoff, throttle, propagate, extra)| Call {
                extra,
                timeout_ms,
                retries,
                backoff,
                throttle,
                propagate,
            },
        )
}

prop_compose! {
    fn spec()(
        services in prop::collection::vec(svc(), 1..=6),
        edges in prop::collection::vec((0usize..5, 0usize..3, call()), 0..16)
            .prop_map(|v| v.into_iter().map(|(a, d, c)| (a, a + 1 + d, c)).collect::<Vec<_>>()),
        client_timeout_ms in 1u32..800,
        client_retries in 0u32..3,
        client_interval_ms in 0u32..100,
        client_propagate in any::<bool>(),
        client_cancel in any::<bool>(),
        rate in 5u32..60,
        duration_ms in 500u32..3000,
        drain_ms in prop_oneof![Just(0u32), 1u32..3000],
        seed in any::<u64>(),
        fault in prop::option::of((0u8..5, 0usize..6, 0u32..1000, 1u32..1500, 1u32..300)),
        shape in (0u8..5, 0u32..3000, 0u32..60, 0u32..40),
    ) -> Spec {
        Spec { services, edges, client_timeout_ms, client_retries, client_interval_ms,
               client_propagate, client_cancel, rate, duration_ms, drain_ms, seed, fault, shape }
    }
}

impl Spec {
    fn yaml(&self) -> String {
        let n = self.services.len();
        let mut y = String::new();
        // Issue 14's arrival shapes: the shorthand, a profile (a step then a ramp, Poisson or
        // constant), closed-loop users, or two request classes (`clients:`) with priorities.
        let (shape, at, to_rate, users) = self.shape;
        let at = 1 + at % (self.duration_ms - 1);
        let arrivals = match shape {
            0 => format!("{{rate: {}}}", self.rate),
            1 | 2 => format!(
                "{{process: {}, profile: [{{at: 0ms, rate: {}}}, {{at: {at}ms, to: {}ms, rate: \
                 {}, to_rate: {to_rate}}}]}}",
                if shape == 1 { "poisson" } else { "constant" },
                self.rate,
                self.duration_ms,
                self.rate,
            ),
            3 => format!(
                "{{process: closed, users: {}, think_time: {{dist: exponential, mean: {}ms}}}}",
                users + 1,
                to_rate + 1
            ),
            _ => String::new(),
        };
        let client = format!(
            "attempt_timeout: {}ms, retries: {}, retry_interval: {}ms, propagate_deadline: {}, \
             cancel_on_abandon: {}",
            self.client_timeout_ms,
            self.client_retries,
            self.client_interval_ms,
            self.client_propagate,
            self.client_cancel
        );
        let _ = writeln!(
            y,
            // A draw of 5/s over 0.5 s can bring no request (e^-2.5 ≈ 8 %): an idle run balances
            // too, so the generated scenarios say it is intended.
            "duration: {}ms\ndrain: {}ms\nseed: {}\nallow_no_requests: true",
            self.duration_ms, self.drain_ms, self.seed
        );
        if shape == 4 {
            // Two classes: `hi` at s0, `lo` at a service of its own choice, each its own rate.
            let _ = writeln!(
                y,
                "clients:\n  hi: {{priority: {}, arrivals: {{rate: {}}}, entry: s0, {client}}}\n  \
                 lo: {{priority: sheddable, arrivals: {{rate: {}}}, entry: s{}, attempt_timeout: \
                 {}ms, retries: 1}}",
                users % 3 + 1,
                self.rate,
                to_rate + 5,
                users as usize % n,
                self.client_timeout_ms / 2 + 1,
            );
        } else {
            let _ = writeln!(y, "arrivals: {arrivals}\nclient: {{entry: s0, {client}}}");
        }
        y.push_str("services:\n");
        for (i, s) in self.services.iter().enumerate() {
            let _ = writeln!(y, "  s{i}:\n    slots: {}", s.slots);
            if let Some(c) = s.cap {
                let _ = writeln!(y, "    queue_cap: {c}");
            }
            let adaptive = s.extra.iter().any(|l| l.starts_with("lifo_after"));
            let _ = writeln!(
                y,
                "    queue_discipline: {}\n    drop_expired: {}\n    reject_delay: {}us",
                match (adaptive, s.lifo) {
                    (true, _) => "adaptive_lifo",
                    (false, true) if shape == 4 => "priority",
                    (false, true) => "lifo",
                    (false, false) => "fifo",
                },
                s.drop_expired,
                s.reject_delay_us
            );
            for line in &s.extra {
                let _ = writeln!(y, "    {line}");
            }
            if s.cap.is_some() && s.drop_expired == (shape == 4) {
                y.push_str("    shed: priority\n");
            }
            match s.work {
                Work::None => {}
                Work::Exponential(m) => {
                    let _ = writeln!(y, "    service_time: {{dist: exponential, mean: {m}ms}}");
                }
                Work::Constant(v) => {
                    let _ = writeln!(y, "    service_time: {{dist: constant, value: {v}ms}}");
                }
                Work::Uniform(a, b) => {
                    let _ = writeln!(
                        y,
                        "    service_time: {{dist: uniform, min: {a}ms, max: {b}ms}}"
                    );
                }
                Work::LogNormal(m, s) => {
                    let _ = writeln!(
                        y,
                        "    service_time: {{dist: lognormal, mean: {m}ms, sigma: {s}}}"
                    );
                }
            }
            let mut seen = std::collections::HashSet::new();
            let calls: Vec<&(usize, usize, Call)> = self
                .edges
                .iter()
                .filter(|(a, b, _)| *a == i && *b > i && *b < n && seen.insert(*b))
                .collect();
            // Stages, for every other service with two or more calls and no `parallel: true`
            // (a choice that follows from the drawn graph): the first two calls together, then
            // the rest one after another.
            let parallel = s.extra.iter().any(|l| l.starts_with("parallel"));
            if calls.len() >= 2 && !parallel && (i + calls.len()).is_multiple_of(2) {
                let name = |c: &&(usize, usize, Call)| format!("s{}", c.1);
                let first: Vec<String> = calls[..2].iter().map(name).collect();
                let rest: Vec<String> = calls[2..].iter().map(name).collect();
                let _ = write!(y, "    stages: [{{parallel: [{}]}}", first.join(", "));
                if !rest.is_empty() {
                    let _ = write!(y, ", {{sequential: [{}]}}", rest.join(", "));
                }
                y.push_str("]\n");
            }
            if !calls.is_empty() {
                y.push_str("    calls:\n");
            }
            for (_, callee, c) in calls {
                let hedged = c.extra.iter().any(|l| l.starts_with("hedge"));
                let _ = write!(
                    y,
                    "      s{callee}: {{attempt_timeout: {}ms, retries: {}, propagate_deadline: {}",
                    c.timeout_ms,
                    if hedged { 0 } else { c.retries },
                    c.propagate
                );
                // With two classes, some calls are made by one class only (a choice that
                // follows from the drawn graph).
                if shape == 4 {
                    match (i + callee + c.timeout_ms as usize) % 4 {
                        0 => y.push_str(", classes: [hi]"),
                        1 => y.push_str(", classes: [lo]"),
                        2 => y.push_str(", classes: [lo, hi]"),
                        _ => {}
                    }
                }
                for e in &c.extra {
                    if hedged && (e == QUOTA_STANDARD || e == QUOTA_ADAPTIVE) {
                        continue;
                    }
                    let e = if hedged {
                        e.replace(&format!(", {QUOTA_STANDARD}"), "")
                            .replace(&format!(", {QUOTA_ADAPTIVE}"), "")
                    } else {
                        e.clone()
                    };
                    let _ = write!(y, ", {e}");
                }
                if let Some((base, cap)) = c.backoff {
                    let _ = write!(y, ", backoff: {{base: {base}ms");
                    if let Some(cap) = cap {
                        let _ = write!(y, ", cap: {cap}ms");
                    }
                    // The shape follows from the base, so every shape is generated.
                    let _ = match base % 5 {
                        1 => write!(y, ", jitter: equal, multiplier: 1.5"),
                        2 => write!(y, ", jitter: decorrelated"),
                        3 => write!(y, ", jitter: none"),
                        4 => write!(y, ", jitter: proportional, jitter_fraction: 0.3"),
                        _ if base % 10 == 0 && base > 0 => write!(y, ", jitter: envoy"),
                        _ => Ok(()),
                    };
                    y.push('}');
                }
                if let Some((max, ratio)) = c.throttle {
                    let _ = write!(
                        y,
                        ", retry_throttle: {{max_tokens: {max}, token_ratio: {}}}",
                        (ratio as f64 / 10.0).min(max as f64)
                    );
                }
                y.push_str("}\n");
            }
        }
        // A surge needs a rate: not with closed-loop users.
        let fault = self.fault.filter(|f| !(shape == 3 && f.0 >= 4));
        if let Some((kind, s, from, len, p)) = fault {
            let from = from.min(self.duration_ms - 1);
            let len = len.min(self.duration_ms - from);
            let what = match kind {
                0 => format!(
                    "kind: slow, service: s{}, service_time: {{dist: exponential, mean: {p}ms}}",
                    s % n
                ),
                1 => format!(
                    "kind: error, service: s{}, fraction: {}",
                    s % n,
                    (p % 100) as f64 / 100.0
                ),
                2 => format!("kind: outage, service: s{}", s % n),
                3 => format!("kind: capacity, service: s{}, slots: {}", s % n, p % 4),
                _ => format!("kind: surge, factor: {}", 1 + p % 4),
            };
            let _ = writeln!(
                y,
                "faults:\n  f: {{{what}, from: {from}ms, duration: {len}ms}}"
            );
        }
        y
    }
}

/// The summary without its wall-clock fields.
fn deterministic_part(mut r: RunSummary) -> RunSummary {
    r.engine.wall_s = 0.0;
    r.engine.events_per_s = 0.0;
    r
}

/// Services reachable from class `class`'s entry through the calls its requests make, and
/// edges on those paths; with `certain`, only through calls without a `probability` (the ones
/// every request of the class that gets there makes).
fn reachable_from(sc: &Scenario, class: usize, certain: bool) -> (Vec<bool>, Vec<bool>) {
    let mut svc = vec![false; sc.services.len()];
    let mut edge = vec![false; sc.edges.len()];
    svc[sc.classes[class].client.entry] = true;
    for s in sc.topological_order() {
        if !svc[s] {
            continue;
        }
        for &e in &sc.services[s].calls {
            if !sc.edges[e].taken_by(ClassIx::new(class))
                || (certain && sc.edges[e].probability.is_some())
            {
                continue;
            }
            edge[e] = true;
            svc[sc.edges[e].callee] = true;
        }
    }
    (svc, edge)
}

/// Services reachable from any class's client, and edges on those paths (`certain`: as above).
fn reachable(sc: &Scenario, certain: bool) -> (Vec<bool>, Vec<bool>) {
    let mut svc = vec![false; sc.services.len()];
    let mut edge = vec![false; sc.edges.len()];
    for c in 0..sc.classes.len() {
        let (s, e) = reachable_from(sc, c, certain);
        svc.iter_mut().zip(s).for_each(|(x, y)| *x |= y);
        edge.iter_mut().zip(e).for_each(|(x, y)| *x |= y);
    }
    (svc, edge)
}

/// Per service and per edge: the user successes that passed through it — of every class whose
/// call paths reach it through calls without a `probability` that the class makes (all
/// successes for a scenario of one class).
fn successes_through(sc: &Scenario, r: &RunSummary) -> (Vec<u64>, Vec<u64>) {
    let mut svc = vec![0u64; sc.services.len()];
    let mut edge = vec![0u64; sc.edges.len()];
    for (c, class) in sc.classes.iter().enumerate() {
        let succeeded = if sc.has_classes() {
            r.classes[&class.name].succeeded
        } else {
            r.metrics.succeeded
        };
        let (s_on, e_on) = reachable_from(sc, c, true);
        for (n, on) in svc.iter_mut().zip(s_on) {
            *n += if on { succeeded } else { 0 };
        }
        for (n, on) in edge.iter_mut().zip(e_on) {
            *n += if on { succeeded } else { 0 };
        }
    }
    (svc, edge)
}

/// Every invariant of the module doc, on one run of `sc`.
pub fn check_invariants(sc: &Scenario, r: &RunSummary) -> Result<(), String> {
    let m = &r.metrics;
    let fail = |what: String| Err(what);
    if m.requests != m.succeeded + m.failed + m.unfinished {
        return fail(format!(
            "requests {} != succeeded {} + failed {} + unfinished {}",
            m.requests, m.succeeded, m.failed, m.unfinished
        ));
    }
    let horizon = (sc.duration.0 + sc.drain.0) as f64 / 1e9;
    let drained = r.engine.simulated_s < horizon;
    if drained && m.unfinished != 0 {
        return fail(format!(
            "the run ended at {} s before its horizon {horizon} s with {} requests unfinished",
            r.engine.simulated_s, m.unfinished
        ));
    }
    let client_attempts =
        (m.client_attempts_per_request.unwrap_or(0.0) * m.requests as f64).round();
    let retries = sc
        .classes
        .iter()
        .map(|c| c.client.retries)
        .max()
        .unwrap_or(0);
    if client_attempts > (m.requests * (retries as u64 + 1)) as f64 {
        return fail(format!(
            "{client_attempts} client attempts for {} requests with {retries} retries",
            m.requests
        ));
    }
    // Request classes: one entry per class with several, and their counts add up to the totals.
    if sc.has_classes() {
        if r.classes.len() != sc.classes.len() {
            return fail(format!(
                "{} classes reported for {}",
                r.classes.len(),
                sc.classes.len()
            ));
        }
        let sum = |f: fn(&loadsim::metrics::RunMetrics) -> u64| -> u64 {
            r.classes.values().map(f).sum()
        };
        for (what, total, parts) in [
            ("requests", m.requests, sum(|c| c.requests)),
            ("succeeded", m.succeeded, sum(|c| c.succeeded)),
            ("failed", m.failed, sum(|c| c.failed)),
            ("unfinished", m.unfinished, sum(|c| c.unfinished)),
        ] {
            if total != parts {
                return fail(format!(
                    "{what}: classes sum to {parts}, the total is {total}"
                ));
            }
        }
    } else if !r.classes.is_empty() {
        return fail("per-class metrics for a scenario of one class".into());
    }
    let worst = sc.worst_case_attempts();
    let (on_path, _) = reachable(sc, false);
    // Per service and edge: the successes of the classes whose every successful request passes
    // it (no call `probability` on the way).
    let (through, edge_through) = successes_through(sc, r);
    for (i, s) in sc.services.iter().enumerate() {
        let x = &r.services[&s.name];
        let at = |what: &str| format!("service {}: {what}", s.name);
        // Admission control reports its counters exactly where it is configured.
        if x.counts.rate_limited.is_some() != s.rate_limit.is_some()
            || x.counts.limited.is_some() != s.concurrency_limit.is_some()
            || x.counts.shed.is_some() != s.shed_priority
        {
            return fail(at(
                "a limiter counter where no limiter is configured, or none where one is",
            ));
        }
        // Turned away: a full queue, an outage, an error fault, a rate or concurrency limit.
        let refused = x.counts.rejected_full
            + x.counts.rejected_outage
            + x.counts.failed_by_fault
            + x.counts.rate_limited.unwrap_or(0)
            + x.counts.limited.unwrap_or(0);
        if x.counts.arrivals != x.counts.admitted + refused {
            return fail(at(&format!(
                "arrivals {} != admitted {} + rejected_full {} + rejected_outage {} + failed_by_fault {}",
                x.counts.arrivals,
                x.counts.admitted,
                x.counts.rejected_full,
                x.counts.rejected_outage,
                x.counts.failed_by_fault
            )));
        }
        // Left without completing: dropped at dequeue (three reasons), shed for a more
        // important arrival, or cancelled.
        let gone = x.counts.dropped_expired
            + x.counts.dropped_queue_time
            + x.counts.dropped_codel
            + x.counts.shed.unwrap_or(0)
            + x.counts.cancelled;
        if x.counts.admitted != x.counts.completed + gone + x.in_flight_at_end {
            return fail(at(&format!(
                "admitted {} != completed {} + dropped {} + cancelled {} + in_flight_at_end {}",
                x.counts.admitted,
                x.counts.completed,
                gone - x.counts.cancelled,
                x.counts.cancelled,
                x.in_flight_at_end
            )));
        }
        if let Some(cap) = s.queue_cap {
            if x.counts.max_queue > cap as u64 {
                return fail(at(&format!(
                    "max_queue {} > queue_cap {cap}",
                    x.counts.max_queue
                )));
            }
            if x.in_flight_at_end > (s.slots + cap) as u64 * s.max_units() as u64 {
                return fail(at(&format!(
                    "{} in flight > (slots {} + cap {cap}) × replicas {}",
                    x.in_flight_at_end,
                    s.slots,
                    s.max_units()
                )));
            }
        } else if x.counts.rejected_full != 0 {
            return fail(at("rejections without a queue cap"));
        }
        // A replicated service's totals are the sums of its replicas'.
        if s.max_units() > 1 {
            let rs = &x.replica_stats;
            let sum = |f: &dyn Fn(&loadsim::metrics::summary::ReplicaMetrics) -> u64| {
                rs.iter().map(f).sum::<u64>()
            };
            let pairs = [
                ("arrivals", sum(&|r| r.counts.arrivals), x.counts.arrivals),
                ("admitted", sum(&|r| r.counts.admitted), x.counts.admitted),
                (
                    "completed",
                    sum(&|r| r.counts.completed),
                    x.counts.completed,
                ),
                (
                    "rejected_full",
                    sum(&|r| r.counts.rejected_full),
                    x.counts.rejected_full,
                ),
                (
                    "cancelled",
                    sum(&|r| r.counts.cancelled),
                    x.counts.cancelled,
                ),
            ];
            if rs.len() != s.max_units() as usize {
                return fail(at(&format!(
                    "{} replica_stats for {} replicas",
                    rs.len(),
                    s.max_units()
                )));
            }
            for (name, replicas, total) in pairs {
                if replicas != total {
                    return fail(at(&format!(
                        "replicas' {name} {replicas} != service's {total}"
                    )));
                }
            }
        }
        // An autoscaled service reports its controller, and its counts stay within the bounds
        // (or the starting count, until the first evaluation).
        match (s.autoscale, &x.autoscale) {
            (None, None) => {}
            (Some(a), Some(m)) => {
                let (lo, hi) = (
                    a.min_replicas.min(s.replicas),
                    a.max_replicas.max(s.replicas),
                );
                if let Some(c) = m
                    .timeline
                    .iter()
                    .find(|c| c.replicas < lo || c.replicas > hi || c.ready > c.replicas)
                {
                    return fail(at(&format!("replica change {c:?} outside [{lo}, {hi}]")));
                }
                if m.scale_ups + m.scale_downs > m.evaluations || m.replicas_peak > hi {
                    return fail(at(&format!("autoscale metrics {m:?}")));
                }
            }
            _ => {
                return fail(at(
                    "autoscale metrics present without autoscale, or missing",
                ));
            }
        }
        // Ejections: reported exactly when a call toward the service has outlier detection,
        // and no replica is ejected longer than the run, per such call.
        let detectors = sc
            .edges
            .iter()
            .filter(|e| e.callee.index() == i && e.outlier_detection.is_some())
            .count();
        for (k, rm) in x.replica_stats.iter().enumerate() {
            let t = rm.ejected_s.unwrap_or(0.0);
            if rm.ejections.is_some() != (detectors > 0)
                || rm.ejected_s.is_some() != (detectors > 0)
                || !(0.0..=r.engine.simulated_s * detectors as f64 + 1e-9).contains(&t)
                || (rm.ejections == Some(0) && t != 0.0)
            {
                return fail(at(&format!(
                    "replica {k}: ejections {:?}, ejected_s {:?} with {detectors} detectors",
                    rm.ejections, rm.ejected_s
                )));
            }
        }
        if drained && x.in_flight_at_end != 0 {
            return fail(at("work in flight after a run that drained"));
        }
        if x.counts.arrivals > worst[i].saturating_mul(m.requests) {
            return fail(at(&format!(
                "arrivals {} above R1 {} × {} requests",
                x.counts.arrivals, worst[i], m.requests
            )));
        }
        if !on_path[i] && x.counts.arrivals != 0 {
            return fail(at("arrivals at a service the client cannot reach"));
        }
        if through[i] > x.counts.completed {
            return fail(at(&format!(
                "{} user successes through it but only {} completions",
                through[i], x.counts.completed
            )));
        }
        if x.goodput_ratio.is_some_and(|g| g > 1.0) || x.wasted_ratio.is_some_and(|w| w > 1.0) {
            return fail(at("a ratio above 1"));
        }
        let l = x.mean_in_system;
        let lw = x.admitted_in_period_per_s * x.sojourn_in_period_mean_s.unwrap_or(0.0);
        if (l - lw).abs() > 1e-9 * l.max(1.0) {
            return fail(at(&format!("Little: L = {l} but λW = {lw}")));
        }
    }
    for (e, edge) in sc.edges.iter().enumerate() {
        let c = &r.calls[&edge.name];
        let at = |what: &str| format!("edge {}: {what}", edge.name);
        // Calls made on the edge: first attempts sent, plus sends refused before they left
        // (adaptive throttling, an open breaker, an exhausted deadline) that may have been first
        // tries. A locally throttled first try may still be retried (shrunk case below), so the
        // refused sends count toward the calls that earn retries.
        if c.rate_limited.is_some() != edge.rate_limit.is_some()
            || c.limited.is_some() != edge.concurrency_limit.is_some()
        {
            return fail(at(
                "a limiter counter where no limiter is configured, or none where one is",
            ));
        }
        let refused = c.throttled_locally
            + c.rejected_circuit_open
            + c.deadline_exhausted
            + c.rate_limited.unwrap_or(0)
            + c.limited.unwrap_or(0);
        let calls = c.attempts - c.retries - c.hedges + refused;
        if c.hedges > calls * edge.hedge.map_or(0, |h| h.max_hedges as u64) {
            return fail(at(&format!(
                "{} hedges after at most {calls} calls",
                c.hedges
            )));
        }
        if c.retries > calls * edge.retries as u64 {
            return fail(at(&format!(
                "{} retries after at most {calls} calls with at most {} each",
                c.retries, edge.retries
            )));
        }
        if c.successes + c.errors + c.rejects + c.timeouts > c.attempts {
            return fail(at("more attempt outcomes than attempts"));
        }
        if edge.throttle.is_none() && c.retries_throttled != 0 {
            return fail(at("throttled retries without a throttle"));
        }
        if edge_through[e] > c.successes {
            return fail(at(&format!(
                "{} user successes through it but {} successful attempts",
                edge_through[e], c.successes
            )));
        }
    }
    let bound = event_bound_for(sc, m.requests as f64);
    if r.engine.events as f64 > bound {
        return fail(format!(
            "{} events above the guard's bound {bound}",
            r.engine.events
        ));
    }
    Ok(())
}

/// Runs `yaml` twice and checks every invariant and determinism.
pub fn run_and_check(yaml: &str) -> Result<(), String> {
    let sc = parse(yaml).map_err(|e| format!("generated an invalid scenario: {e}\n{yaml}"))?;
    let a = run(&sc).map_err(|e| e.to_string())?;
    let b = run(&sc).map_err(|e| e.to_string())?;
    check_invariants(&sc, &a)?;
    if deterministic_part(a) != deterministic_part(b) {
        return Err("the same seed gave two different summaries".into());
    }
    Ok(())
}

/// Random cases per run: 300, or proptest's own `PROPTEST_CASES` for a longer soak
/// (`PROPTEST_CASES=20000 cargo test --release --test trust invariants_hold_on_random`); the
/// cases are drawn afresh each run, so a soak explores cases CI has not.
fn random_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: random_cases(),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn invariants_hold_on_random_scenarios(spec in spec()) {
        let yaml = spec.yaml();
        if let Err(e) = run_and_check(&yaml) {
            return Err(TestCaseError::fail(format!("{e}\n--- scenario ---\n{yaml}")));
        }
    }
}

/// Shrunk by proptest: an adaptive throttle refuses a first try locally, and the call retries
/// it. The sent attempts then hold more retries than first tries; the invariant, not the
/// simulator, was wrong (it counted only sent first tries).
#[test]
fn regression_a_locally_throttled_first_try_may_be_retried() {
    let yaml = "duration: 500ms\ndrain: 0ms\nseed: 542784219150679045\narrivals: {rate: 5}\n\
        client: {entry: s0, attempt_timeout: 1ms, retries: 0}\n\
        services:\n  \
          s0: {slots: 1, calls: {s2: {attempt_timeout: 12ms}, s1: {attempt_timeout: 1ms}}}\n  \
          s1: {slots: 1}\n  \
          s2: {slots: 1, calls: {s3: {attempt_timeout: 1ms, retries: 1, \
                adaptive_throttle: {k: 1, window: 1s}}}}\n  \
          s3: {slots: 1, service_time: {dist: exponential, mean: 16ms}}\n";
    run_and_check(yaml).unwrap();
    let r = run(&parse(yaml).unwrap()).unwrap();
    let c = &r.calls["s2->s3"];
    assert!(c.throttled_locally > 0, "{c:?}");
    assert!(c.retries > c.attempts - c.retries, "{c:?}");
}

/// Found by proptest in CI: a lower-class request delayed by the network (`latency` on the
/// call) arrived after its attempt had timed out, and the callee read the request's class from
/// that settled attempt, found none and served it as class 0 — which took a call listed for class
/// 0 only (`s1 -> s4`, `classes: [hi]`), beyond the class-aware R1 bound of 0. The class now
/// travels with the delayed request.
#[test]
fn regression_a_delayed_request_keeps_its_class_after_its_attempt_timed_out() {
    let yaml = "duration: 500ms\ndrain: 0ms\nseed: 14513225924902626279\n\
        clients:\n  \
          hi: {priority: 1, arrivals: {rate: 5}, entry: s0, attempt_timeout: 1ms}\n  \
          lo: {priority: sheddable, arrivals: {rate: 5}, entry: s0, attempt_timeout: 1ms, \
               retries: 1}\n\
        services:\n  \
          s0: {slots: 1, calls: {s1: {attempt_timeout: 12ms, classes: [lo], \
                latency: {dist: exponential, mean: 2ms}}}}\n  \
          s1: {slots: 1, calls: {s4: {attempt_timeout: 307ms, classes: [hi]}}}\n  \
          s4: {slots: 1}\n";
    run_and_check(yaml).unwrap();
    let r = run(&parse(yaml).unwrap()).unwrap();
    // The run holds a request delivered after its attempt timed out (what made the bug), and
    // class `lo` reached `s1` while nothing reached `s4`.
    assert!(r.calls["s0->s1"].timeouts > 0, "{:?}", r.calls["s0->s1"]);
    assert!(r.services["s1"].counts.arrivals > 0);
    assert_eq!(r.services["s4"].counts.arrivals, 0);
}

/// Found by a soak of the random invariants: a run with no user request at all (a profile that
/// ramps to rate 0 drew none) still evaluates its autoscaler every `interval`, and those events
/// broke the event bound of 0 × events per request. The guard's bound now counts the events no
/// request causes (`guard::fixed_events`).
#[test]
fn regression_an_autoscaler_evaluates_without_requests() {
    let yaml = "duration: 500ms\ndrain: 0ms\nseed: 2070333221204832436\nallow_no_requests: true\n\
        arrivals: {process: poisson, profile: [{at: 0ms, rate: 5}, \
                   {at: 1ms, to: 500ms, rate: 5, to_rate: 0}]}\n\
        client: {entry: s0, attempt_timeout: 1ms}\n\
        services:\n  \
          s0: {slots: 1, autoscale: {min_replicas: 1, max_replicas: 1, target_utilization: 0.01, \
               interval: 50ms, warmup: 0ms, scale_down_cooldown: 0ms}}\n";
    run_and_check(yaml).unwrap();
    let sc = parse(yaml).unwrap();
    let r = run(&sc).unwrap();
    assert_eq!(r.metrics.requests, 0);
    // Evaluations at 50, 100, …, 450 ms: nine events, all of the run's, and exactly the bound.
    assert_eq!(r.engine.events, 9);
    assert_eq!(loadsim::guard::fixed_events(&sc), 9.0);
    // Issue 30 item 13: without `allow_no_requests` the same run is an error (exit 2).
    let unmarked = parse(&yaml.replace("allow_no_requests: true\n", "")).unwrap();
    let e = run(&unmarked).unwrap_err();
    assert!(
        matches!(e, loadsim::model::RunError::NoRequests { .. }),
        "{e}"
    );
    assert_eq!(loadsim::Error::from(e).exit_code(), 2);
}

/// Every shipped scenario (faults, protections beyond the article, fan-out), as shipped.
#[test]
fn invariants_hold_on_every_shipped_scenario() {
    use rayon::prelude::*;
    fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                yaml_files(&p, out);
            } else if p.extension().is_some_and(|e| e == "yaml") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    yaml_files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"),
        &mut files,
    );
    files.sort();
    assert!(files.len() >= 5);
    let failures: Vec<String> = files
        .par_iter()
        .filter_map(|f| {
            let sc = Scenario::load(f, &[], None).unwrap_or_else(|e| panic!("{e}"));
            let r = run(&sc).unwrap_or_else(|e| panic!("{e}"));
            check_invariants(&sc, &r)
                .err()
                .map(|e| format!("{}: {e}", f.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The article's four scenarios, shortened, satisfy the same invariants.
#[test]
fn invariants_hold_on_the_shipped_scenarios() {
    for name in ["naive", "deadline", "deadline_budget", "protected"] {
        let sets: Vec<String> = [
            "duration=8s",
            "faults.slow_b.from=2s",
            "faults.slow_b.duration=4s",
            "drain=2s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let sc = Scenario::load(&super::common::scenario_path(name), &sets, Some(3))
            .unwrap_or_else(|e| panic!("{e}"));
        let r = run(&sc).unwrap_or_else(|e| panic!("{e}"));
        check_invariants(&sc, &r).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
