//! The invariants of `invariants` on random scenarios that use the protections beyond the
//! article: retry budgets, adaptive throttling, circuit breakers, hedging, cancellation, pushback,
//! queue-time and CoDel shedding, adaptive LIFO, parallel fan-out, and error, outage, capacity and
//! surge faults, alone and together.

use std::fmt::Write;

use proptest::prelude::*;

use super::invariants::run_and_check;

#[derive(Clone, Debug)]
struct Svc {
    slots: u32,
    cap: Option<u32>,
    discipline: u8,
    drop_expired: bool,
    work_ms: Option<u32>,
    max_queue_time_ms: Option<u32>,
    codel: bool,
    pushback: Option<u8>,
    parallel: bool,
}

#[derive(Clone, Debug)]
struct Call {
    timeout_ms: u32,
    retries: u32,
    hedge: Option<(u32, u32)>,
    propagate: bool,
    budget: bool,
    adaptive: bool,
    breaker: Option<u32>,
    cancel: bool,
    honor: bool,
    throttle: bool,
}

fn svc() -> impl Strategy<Value = Svc> {
    (
        (
            1u32..5,
            prop::option::of(1u32..6),
            0u8..3,
            any::<bool>(),
            prop::option::of(1u32..60),
        ),
        (
            prop::option::of(1u32..60),
            any::<bool>(),
            prop::option::of(0u8..3),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (slots, cap, discipline, drop_expired, work_ms),
                (mqt, codel, pushback, parallel),
            )| Svc {
                slots,
                cap,
                discipline,
                drop_expired,
                work_ms,
                max_queue_time_ms: mqt,
                codel,
                pushback,
                parallel,
            },
        )
}

fn call() -> impl Strategy<Value = Call> {
    (
        (
            1u32..300,
            0u32..3,
            prop::option::of((1u32..60, 1u32..3)),
            any::<bool>(),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            prop::option::of(10u32..500),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (timeout_ms, retries, hedge, propagate),
                (budget, adaptive, breaker, cancel, honor, throttle),
            )| {
                Call {
                    timeout_ms,
                    retries,
                    hedge,
                    propagate,
                    budget,
                    adaptive,
                    breaker,
                    cancel,
                    honor,
                    throttle,
                }
            },
        )
}

#[derive(Clone, Debug)]
struct Spec {
    services: Vec<Svc>,
    edges: Vec<(usize, usize, Call)>,
    client: (u32, u32, bool, bool),
    rate: u32,
    seed: u64,
    faults: Vec<(u8, usize, u32, u32, u32)>,
}

prop_compose! {
    fn spec()(
        services in prop::collection::vec(svc(), 1..=6),
        edges in prop::collection::vec((0usize..5, 0usize..3, call()), 0..12)
            .prop_map(|v| v.into_iter().map(|(a, d, c)| (a, a + 1 + d, c)).collect::<Vec<_>>()),
        client in (1u32..600, 0u32..3, any::<bool>(), any::<bool>()),
        rate in 5u32..80,
        seed in any::<u64>(),
        faults in prop::collection::vec((0u8..5, 0usize..6, 0u32..1500, 1u32..1500, 1u32..100), 0..3),
    ) -> Spec {
        Spec { services, edges, client, rate, seed, faults }
    }
}

impl Spec {
    fn yaml(&self) -> String {
        let n = self.services.len();
        let (timeout, retries, propagate, cancel) = self.client;
        let mut y = format!(
            "duration: 2s\ndrain: 2s\nseed: {}\narrivals: {{rate: {}}}\n\
             client: {{entry: s0, attempt_timeout: {timeout}ms, retries: {retries}, retry_interval: 5ms, \
             propagate_deadline: {propagate}, cancel_on_abandon: {cancel}}}\nservices:\n",
            self.seed, self.rate
        );
        for (i, s) in self.services.iter().enumerate() {
            let _ = writeln!(
                y,
                "  s{i}:\n    slots: {}\n    drop_expired: {}",
                s.slots, s.drop_expired
            );
            if let Some(c) = s.cap {
                let _ = writeln!(y, "    queue_cap: {c}");
            }
            let d = ["fifo", "lifo", "adaptive_lifo"][s.discipline as usize];
            let _ = writeln!(y, "    queue_discipline: {d}");
            if let Some(w) = s.work_ms {
                let _ = writeln!(y, "    service_time: {{dist: exponential, mean: {w}ms}}");
            }
            if let Some(m) = s.max_queue_time_ms {
                let _ = writeln!(y, "    max_queue_time: {m}ms");
            }
            if s.codel {
                y.push_str("    codel: {target: 2ms, interval: 20ms}\n");
            }
            if let Some(p) = s.pushback {
                let p = ["{delay: 20ms}", "{per_queued: 3ms}", "{no_retry: true}"][p as usize];
                let _ = writeln!(y, "    pushback: {p}");
            }
            let _ = writeln!(y, "    parallel: {}", s.parallel);
            let mut seen = std::collections::HashSet::new();
            let calls: Vec<_> = self
                .edges
                .iter()
                .filter(|(a, b, _)| *a == i && *b < n && seen.insert(*b))
                .collect();
            if !calls.is_empty() {
                y.push_str("    calls:\n");
            }
            for (_, callee, c) in calls {
                let _ = write!(
                    y,
                    "      s{callee}: {{attempt_timeout: {}ms, propagate_deadline: {}, cancel_on_abandon: {}, \
                     honor_retry_after: {}, backoff: {{base: 3ms}}",
                    c.timeout_ms, c.propagate, c.cancel, c.honor
                );
                match c.hedge {
                    Some((delay, max)) => {
                        let _ = write!(y, ", hedge: {{delay: {delay}ms, max_hedges: {max}}}");
                    }
                    None => {
                        let _ = write!(y, ", retries: {}", c.retries);
                    }
                }
                if c.budget {
                    y.push_str(", retry_budget: {budget_percent: 20, min_retry_concurrency: 1}");
                }
                if c.adaptive {
                    y.push_str(", adaptive_throttle: {k: 1.5, window: 1s}");
                }
                if let Some(open) = c.breaker {
                    let _ = write!(
                        y,
                        ", circuit_breaker: {{min_requests: 3, window: 1s, open_for: {open}ms, half_open_probes: 2}}"
                    );
                }
                if c.throttle {
                    y.push_str(", retry_throttle: {max_tokens: 4, token_ratio: 0.5}");
                }
                y.push_str("}\n");
            }
        }
        if !self.faults.is_empty() {
            y.push_str("faults:\n");
        }
        for (i, &(kind, s, from, len, x)) in self.faults.iter().enumerate() {
            let from = from.min(1999);
            let len = len.min(2000 - from);
            let _ = write!(y, "  f{i}: {{from: {from}ms, duration: {len}ms, ");
            let s = s % n;
            let _ = match kind {
                0 => writeln!(
                    y,
                    "kind: slow, service: s{s}, service_time: {{dist: constant, value: {x}ms}}}}"
                ),
                1 => writeln!(
                    y,
                    "kind: error, service: s{s}, fraction: {}}}",
                    x as f64 / 100.0
                ),
                2 => writeln!(y, "kind: outage, service: s{s}}}"),
                3 => writeln!(y, "kind: capacity, service: s{s}, slots: {}}}", 1 + x % 3),
                _ => writeln!(y, "kind: surge, factor: {}}}", 1.0 + (x % 30) as f64 / 10.0),
            };
        }
        y
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_with_every_protection(spec in spec()) {
        let yaml = spec.yaml();
        if let Err(e) = run_and_check(&yaml) {
            return Err(TestCaseError::fail(format!("{e}\n--- scenario ---\n{yaml}")));
        }
    }
}

/// Every shipped protection, fault and topology scenario, shortened, satisfies the invariants.
#[test]
fn invariants_hold_on_the_shipped_protection_scenarios() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for dir in ["protections", "faults", "topologies"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let sets: Vec<String> = ["drain=3s"].iter().map(|s| s.to_string()).collect();
            let sc = loadsim::scenario::Scenario::load(&f, &sets, Some(5))
                .unwrap_or_else(|e| panic!("{e}"));
            let r = loadsim::model::run(&sc).unwrap_or_else(|e| panic!("{e}"));
            super::invariants::check_invariants(&sc, &r)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        }
    }
}
