//! Agreement with queueing theory. Single-service scenarios (Poisson arrivals, exponential
//! service, one attempt that never times out) are M/M/c and M/M/c/K queues; their closed forms
//! ([`loadsim::theory`]) must lie inside confidence intervals built from independent
//! replications. The printed table is the one in `docs/trust.md`:
//!
//! ```text
//! cargo test --locked --test trust theory -- --nocapture --test-threads 1
//! ```
//!
//! Statistics: `REPS` replications per queue, seeds 1..=REPS (independent ChaCha streams), each
//! simulating `DURATION_S` seconds from empty. Each replication gives one estimate per metric; the
//! estimates are i.i.d., so a Student-t interval on their mean is exact up to the normality of a
//! mean of 20 long-run averages (each already an average over ~10⁴–10⁵ requests). Every interval is
//! at level 1 − 0.01/m for the m intervals of the table (Bonferroni), so that all of them cover
//! their true values together with probability ≥ 99 %. A correct simulator fails this test
//! in fewer than 1 in 100 seed sets; the seeds were not chosen.
//!
//! Bias from the empty start: the slowest queue here (M/M/1 at ρ = 0.8) relaxes in about
//! 1/(μ(1 − √ρ)²) ≈ 1.8 s, so starting empty lowers a 200 s time average by about L·1.8/200 ≈ 1 %
//! of L — a tenth of that queue's half-widths. The M/M/16 queues relax ten times faster.

use crate::queueing::{Interval, mmc, mmck, t_interval};
use loadsim::metrics::RunSummary;
use loadsim::model::run;
use rayon::prelude::*;

use super::common::{parse, scenario_path};

/// Replications per queue.
const REPS: u64 = 20;
/// Simulated seconds per replication.
const DURATION_S: u64 = 200;
/// Mean service time of one slot, seconds (μ = 50/s), as in the article's `svc_b`.
const SERVICE_S: f64 = 0.020;
/// Probability that every interval of the table covers its true value.
const FAMILY_LEVEL: f64 = 0.99;

/// One queue to compare.
struct Queue {
    name: &'static str,
    slots: u32,
    /// K − c, the queue cap, for M/M/c/K.
    cap: Option<u32>,
    /// Offered load per slot, λ / (cμ).
    rho: f64,
    /// Serve the newest first. M/M/c's P(wait), mean wait and mean number in system do not
    /// depend on the order of service (it is work-conserving and blind to service times).
    lifo: bool,
}

const QUEUES: [Queue; 6] = [
    Queue {
        name: "M/M/16, ρ = 0.5",
        slots: 16,
        cap: None,
        rho: 0.5,
        lifo: false,
    },
    Queue {
        name: "M/M/16, ρ = 0.9",
        slots: 16,
        cap: None,
        rho: 0.9,
        lifo: false,
    },
    Queue {
        name: "M/M/16 LIFO, ρ = 0.9",
        slots: 16,
        cap: None,
        rho: 0.9,
        lifo: true,
    },
    Queue {
        name: "M/M/1, ρ = 0.8",
        slots: 1,
        cap: None,
        rho: 0.8,
        lifo: false,
    },
    Queue {
        name: "M/M/16/32, ρ = 0.9",
        slots: 16,
        cap: Some(16),
        rho: 0.9,
        lifo: false,
    },
    Queue {
        name: "M/M/16/32, ρ = 1.2",
        slots: 16,
        cap: Some(16),
        rho: 1.2,
        lifo: false,
    },
];

impl Queue {
    fn lambda(&self) -> f64 {
        self.rho * self.slots as f64 / SERVICE_S
    }

    fn yaml(&self, seed: u64) -> String {
        let mut cap = self
            .cap
            .map_or(String::new(), |c| format!(", queue_cap: {c}"));
        if self.lifo {
            cap.push_str(", queue_discipline: lifo");
        }
        format!(
            "duration: {DURATION_S}s\ndrain: 10s\nseed: {seed}\narrivals: {{rate: {rate}}}\n\
             client: {{entry: q, attempt_timeout: 100000s}}\n\
             services:\n  q: {{slots: {slots}{cap}, service_time: {{dist: exponential, mean: 20ms}}}}\n",
            rate = self.lambda(),
            slots = self.slots,
        )
    }

    fn replications(&self) -> Vec<RunSummary> {
        (1..=REPS)
            .into_par_iter()
            .map(|seed| {
                let sc = parse(&self.yaml(seed)).unwrap_or_else(|e| panic!("{e}"));
                run(&sc).unwrap_or_else(|e| panic!("{e}"))
            })
            .collect()
    }
}

/// One line of the table: a simulated estimate against its closed form.
struct Row {
    queue: &'static str,
    metric: &'static str,
    analytic: f64,
    samples: Vec<f64>,
}

fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    let mu = 1.0 / SERVICE_S;
    for q in &QUEUES {
        let runs = q.replications();
        let svc = |f: &dyn Fn(&RunSummary) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
        let mut row = |metric, analytic, samples| {
            rows.push(Row {
                queue: q.name,
                metric,
                analytic,
                samples,
            })
        };
        match q.cap {
            None => {
                let m = mmc(q.slots, q.lambda(), mu).expect("stable");
                row(
                    "P(wait) — `waited_fraction`",
                    m.wait_probability,
                    svc(&|r| r.services["q"].waited_fraction.unwrap()),
                );
                row(
                    "mean wait (s) — `queue_wait_mean_s`",
                    m.mean_wait_s,
                    svc(&|r| r.services["q"].queue_wait_mean_s.unwrap()),
                );
                // FIFO M/M/c: P(W > t) = C·exp(−(cμ − λ)t), so the p99 is ln(100·C)/(cμ − λ)
                // when C > 1 %. Checks the shape of the wait distribution, not only its mean.
                if !q.lifo && m.wait_probability > 0.01 {
                    let drain = q.slots as f64 * mu - q.lambda();
                    row(
                        "p99 wait (s) — `queue_wait_p99_s`",
                        (100.0 * m.wait_probability).ln() / drain,
                        svc(&|r| r.services["q"].queue_wait_p99_s.unwrap()),
                    );
                }
                row(
                    "utilization — `utilization`",
                    m.utilization,
                    svc(&|r| r.services["q"].utilization),
                );
                row(
                    "mean in system — `mean_in_system`",
                    m.mean_in_system,
                    svc(&|r| r.services["q"].mean_in_system),
                );
            }
            Some(cap) => {
                let m = mmck(q.slots, q.slots + cap, q.lambda(), mu).expect("valid");
                row(
                    "P(block) — `rejected_full / arrivals`",
                    m.blocking,
                    svc(&|r| {
                        let s = &r.services["q"];
                        s.counts.rejected_full as f64 / s.counts.arrivals as f64
                    }),
                );
                row(
                    "utilization — `utilization`",
                    m.utilization,
                    svc(&|r| r.services["q"].utilization),
                );
                row(
                    "mean in system — `mean_in_system`",
                    m.mean_in_system,
                    svc(&|r| r.services["q"].mean_in_system),
                );
            }
        }
    }
    rows
}

fn fmt(x: f64) -> String {
    if x.abs() >= 0.01 || x == 0.0 {
        format!("{x:.4}")
    } else {
        format!("{x:.3e}")
    }
}

#[test]
fn mm_c_and_mm_c_k_agree_with_their_closed_forms() {
    let rows = rows();
    let level = 1.0 - (1.0 - FAMILY_LEVEL) / rows.len() as f64;
    println!(
        "\n{REPS} replications × {DURATION_S} s each; intervals at {:.4} % each, \
         {:.0} % simultaneous (Bonferroni over {} intervals)\n",
        level * 100.0,
        FAMILY_LEVEL * 100.0,
        rows.len()
    );
    println!(
        "| queue | metric | analytic | simulated (mean ± half-width) | relative half-width | inside |"
    );
    println!("|---|---|---|---|---|---|");
    let mut outside = Vec::new();
    for r in &rows {
        let i: Interval = t_interval(&r.samples, level);
        let inside = i.contains(r.analytic);
        println!(
            "| {} | {} | {} | {} ± {} | {:.1} % | {} |",
            r.queue,
            r.metric,
            fmt(r.analytic),
            fmt(i.mean),
            fmt(i.half_width),
            100.0 * i.half_width / r.analytic,
            if inside { "yes" } else { "**no**" }
        );
        if !inside {
            outside.push(format!(
                "{} {}: analytic {} outside {} ± {}",
                r.queue, r.metric, r.analytic, i.mean, i.half_width
            ));
        }
    }
    assert!(outside.is_empty(), "{}", outside.join("\n"));
}

/// Little's law on the window `[0, duration)` is an identity (see `metrics::summary`): the time
/// integral of the number in system and the per-request times in the window are counted by
/// separate code paths, so their agreement to rounding checks both.
#[test]
fn littles_law_holds_at_every_service_of_the_article_scenarios() {
    println!(
        "\n| scenario | service | L = mean_in_system | λ = admitted_in_period_per_s | \
         W = sojourn_in_period_mean_s (s) | λ·W | whole-run λ·W (admitted/duration × sojourn_mean_s) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let runs: Vec<RunSummary> = ["naive", "deadline", "deadline_budget", "protected"]
        .par_iter()
        .map(|name| {
            let sc = loadsim::Scenario::load(&scenario_path(name), &[], Some(7))
                .unwrap_or_else(|e| panic!("{e}"));
            run(&sc).unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    for r in &runs {
        for (name, s) in &r.services {
            let l = s.mean_in_system;
            let lw = s.admitted_in_period_per_s * s.sojourn_in_period_mean_s.unwrap_or(0.0);
            let whole = s.counts.admitted as f64 / 60.0 * s.sojourn_mean_s.unwrap_or(0.0);
            println!(
                "| {} | {name} | {l:.4} | {:.2} | {:.5} | {lw:.4} | {whole:.4} |",
                r.scenario,
                s.admitted_in_period_per_s,
                s.sojourn_in_period_mean_s.unwrap_or(0.0),
            );
            assert!(
                (l - lw).abs() <= 1e-9 * l.max(1.0),
                "{} {name}: L = {l} but λW = {lw}",
                r.scenario
            );
        }
    }
}
