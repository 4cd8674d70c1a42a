//! The limiter check: admission-control settings that cannot act as meant. Owns
//! [`limiter_findings`]:
//!
//! - a concurrency limiter whose lowest limit (`min_limit`, `min_concurrency`, a `fixed` limit)
//!   is above the slots it guards lets the excess wait in the queue behind them. What it guards:
//!   a server-side limiter, one per replica, one replica's `slots`; a client-side limiter on a
//!   call, one for the edge, every slot of the callee at the most replicas it may have (`slots`
//!   × `replicas`, or × `autoscale.max_replicas`). When the callee's own bounded queue
//!   (`queue_cap`, per replica) fills before the excess does, the limiter never refuses: a note.
//!   Otherwise the excess waits `excess × mean service time / slots` (§7's arithmetic), and that
//!   is a warning only when it is not under the wait of the callers (the time the service serves
//!   under, or the call's own attempt and call timeouts) in some regime; a shorter wait is a note;
//! - an interval longer than a fault window: an `envoy_gradient` `concurrency_update_interval`
//!   or a `rate_limit` `fill_interval` (the limit cannot change, or the bucket refill, even once
//!   inside the window), or an `aimd` `timeout` (no sample inside the window can be slow enough
//!   to count as a drop) (warning);
//! - an `envoy_gradient` `min_rtt_calc_interval` shorter than the run, with a fault: a minRTT
//!   measurement may fall inside the fault and learn the slow latency as the baseline (note).

use super::budget::ServesUnder;
use super::regime::{Regime, regime_name};
use super::show::{show_duration, show_secs};
use super::{Check, Finding, Level};
use crate::protections::concurrency_limit::ConcurrencyLimit;
use crate::scenario::{Scenario, ServiceIx};
use crate::time::SimDuration;

/// Where admission control sits: subject, key path, the service it guards or calls, its
/// concurrency limiter, its rate limit's fill interval, and for a call the longest its caller
/// waits for one attempt (`None` for a server-side limiter).
type Place = (
    String,
    String,
    ServiceIx,
    Option<ConcurrencyLimit>,
    Option<SimDuration>,
    Option<SimDuration>,
);

/// The findings of the limiter check on `sc`, given what each service serves under, the regimes
/// and each service's mean service time in each regime (`mean[regime][service]`, seconds).
pub fn limiter_findings(
    sc: &Scenario,
    under: &[Option<ServesUnder>],
    regimes: &[Regime],
    mean: &[Vec<f64>],
    findings: &mut Vec<Finding>,
) {
    let mut places: Vec<Place> = Vec::new();
    for (i, s) in sc.services.iter().enumerate() {
        places.push((
            s.name.clone(),
            format!("services.{}", s.name),
            ServiceIx::new(i),
            s.concurrency_limit,
            s.rate_limit.map(|r| r.fill_interval),
            None,
        ));
    }
    for e in &sc.edges {
        let wait = e
            .call_timeout
            .map_or(e.attempt_timeout, |c| c.min(e.attempt_timeout));
        places.push((
            e.name.clone(),
            format!(
                "services.{}.calls.{}",
                sc.services[e.caller].name, sc.services[e.callee].name
            ),
            e.callee,
            e.concurrency_limit,
            e.rate_limit.map(|r| r.fill_interval),
            Some(wait),
        ));
    }
    let shortest_fault = sc.faults.iter().map(|f| f.to - f.from).min();
    for (subject, key, guarded, limit, fill, call_wait) in places {
        let mut add = |level: Level, message: String, fix: Option<String>| {
            findings.push(Finding {
                level,
                check: Check::Limiter,
                subject: subject.clone(),
                message,
                fix,
            })
        };
        if let Some(c) = limit {
            let svc = &sc.services[guarded];
            // A server-side limiter is one per replica; a call's is one for the edge, over
            // every replica of the callee.
            let units = if call_wait.is_some() {
                svc.max_units()
            } else {
                1
            };
            let slots = svc.slots as u64 * units as u64;
            let min = c.min_limit() as u64;
            let wait = call_wait.or(under[guarded].map(|u| u.wait));
            let whose = if units > 1 {
                format!(
                    "the {slots} slots of {}'s {units} replicas ({} each)",
                    svc.name, svc.slots
                )
            } else {
                format!("the {slots} slots of {}", svc.name)
            };
            if min > slots {
                let excess = min - slots;
                let queue = svc.queue_cap.map(|q| q as u64 * units as u64);
                // The mean service time in each regime, and the excess's wait behind the slots.
                let waits: Vec<(Regime, f64)> = regimes
                    .iter()
                    .zip(mean)
                    .map(|(&r, m)| (r, excess as f64 * m[guarded] / slots as f64))
                    .collect();
                let (worst_at, worst) =
                    waits
                        .iter()
                        .copied()
                        .enumerate()
                        .fold((0, (Regime::Normal, 0.0)), |a, b| {
                            if b.1.1 > a.1.1 { b } else { a }
                        });
                let too_long = wait.filter(|w| worst.1 >= w.as_secs_f64());
                if let Some(q) = queue.filter(|&q| q <= excess) {
                    add(
                        Level::Note,
                        format!(
                            "the `{}` concurrency limit never goes below {min}, above {whose} and the {q} its bounded queue holds: {} rejects first, so the limit never refuses",
                            c.name(),
                            svc.name
                        ),
                        None,
                    );
                } else if let Some(w) = too_long {
                    let worst_mean = mean.iter().map(|m| m[guarded]).fold(0.0, f64::max);
                    let fits = (worst_mean > 0.0).then(|| {
                        slots + (0.5 * w.as_secs_f64() * slots as f64 / worst_mean).floor() as u64
                    });
                    add(
                        Level::Warning,
                        format!(
                            "the `{}` concurrency limit never goes below {min}, {excess} above {whose}: up to {excess} requests wait behind them, {excess} × {} / {slots} = {} {}, not under the {} its callers wait, so it cannot keep the queue short",
                            c.name(),
                            show_secs(mean[worst_at][guarded]),
                            show_secs(worst.1),
                            regime_name(sc, worst.0),
                            show_duration(w)
                        ),
                        Some(match fits {
                            Some(n) => format!(
                                "lower its minimum limit under `{key}.concurrency_limit` to at most {n} ({slots} slots and a wait under half of {})",
                                show_duration(w)
                            ),
                            None => format!(
                                "lower its minimum limit under `{key}.concurrency_limit` to at most {slots}"
                            ),
                        }),
                    );
                } else {
                    add(
                        Level::Note,
                        format!(
                            "the `{}` concurrency limit never goes below {min}, above {whose}: up to {excess} requests may wait behind them, at most {} {}",
                            c.name(),
                            show_secs(worst.1),
                            regime_name(sc, worst.0)
                        ),
                        None,
                    );
                }
            }
            if let Some(fault) = shortest_fault {
                for (param, d) in c.intervals() {
                    if d >= fault {
                        add(
                            Level::Warning,
                            format!(
                                "`{param}` ({d}) is at least the fault window ({fault}): the `{}` limit cannot react inside it",
                                c.name()
                            ),
                            Some(format!(
                                "shorten `{key}.concurrency_limit.{param}` below {fault}"
                            )),
                        );
                    }
                }
                if let ConcurrencyLimit::EnvoyGradient(e) = c
                    && e.min_rtt_calc_interval < sc.duration
                {
                    add(
                        Level::Note,
                        format!(
                            "minRTT is re-measured every {} (plus jitter): a measurement inside a fault learns the slow latency as the baseline until the next one",
                            e.min_rtt_calc_interval
                        ),
                        None,
                    );
                }
            }
        }
        if let (Some(fill), Some(fault)) = (fill, shortest_fault)
            && fill >= fault
        {
            add(
                Level::Warning,
                format!(
                    "the rate limit's `fill_interval` ({fill}) is at least the fault window ({fault}): the bucket refills at most once inside it"
                ),
                Some(format!(
                    "shorten `{key}.rate_limit.fill_interval` below {fault}"
                )),
            );
        }
    }
}
