//! The limiter check: admission-control settings that cannot act as meant. Owns
//! [`limiter_findings`]:
//!
//! - a concurrency limiter whose lowest limit (`min_limit`, `min_concurrency`, a `fixed` limit)
//!   is above the slots of the service it guards (server side) or calls (client side): it never
//!   refuses before every slot is busy, so it cannot keep a queue from forming (warning);
//! - an interval longer than a fault window: an `envoy_gradient` `concurrency_update_interval`
//!   or a `rate_limit` `fill_interval` (the limit cannot change, or the bucket refill, even once
//!   inside the window), or an `aimd` `timeout` (no sample inside the window can be slow enough
//!   to count as a drop) (warning);
//! - an `envoy_gradient` `min_rtt_calc_interval` shorter than the run, with a fault: a minRTT
//!   measurement may fall inside the fault and learn the slow latency as the baseline (note).

use super::{Check, Finding, Level};
use crate::protections::concurrency_limit::ConcurrencyLimit;
use crate::scenario::Scenario;
use crate::time::SimDuration;

/// Where admission control sits: subject, key path, the service it guards or calls, its
/// concurrency limiter and its rate limit's fill interval.
type Place = (
    String,
    String,
    usize,
    Option<ConcurrencyLimit>,
    Option<SimDuration>,
);

/// The findings of the limiter check on `sc`.
pub fn limiter_findings(sc: &Scenario, findings: &mut Vec<Finding>) {
    let mut places: Vec<Place> = Vec::new();
    for (i, s) in sc.services.iter().enumerate() {
        places.push((
            s.name.clone(),
            format!("services.{}", s.name),
            i,
            s.concurrency_limit,
            s.rate_limit.map(|r| r.fill_interval),
        ));
    }
    for e in &sc.edges {
        places.push((
            e.name.clone(),
            format!(
                "services.{}.calls.{}",
                sc.services[e.caller].name, sc.services[e.callee].name
            ),
            e.callee,
            e.concurrency_limit,
            e.rate_limit.map(|r| r.fill_interval),
        ));
    }
    let shortest_fault = sc.faults.iter().map(|f| f.to - f.from).min();
    for (subject, key, guarded, limit, fill) in places {
        let mut warn = |message: String, fix: String| {
            findings.push(Finding {
                level: Level::Warning,
                check: Check::Limiter,
                subject: subject.clone(),
                message,
                fix: Some(fix),
            })
        };
        if let Some(c) = limit {
            let slots = sc.services[guarded].slots;
            let min = c.min_limit();
            if min > slots {
                warn(
                    format!(
                        "the `{}` concurrency limit never goes below {min}, above the {slots} slots of {}: it cannot refuse before every slot is busy, so it cannot keep a queue from forming",
                        c.name(),
                        sc.services[guarded].name
                    ),
                    format!(
                        "lower its minimum limit under `{key}.concurrency_limit` to at most {slots}"
                    ),
                );
            }
            if let Some(fault) = shortest_fault {
                for (param, d) in c.intervals() {
                    if d >= fault {
                        warn(
                            format!(
                                "`{param}` ({d}) is at least the fault window ({fault}): the `{}` limit cannot react inside it",
                                c.name()
                            ),
                            format!("shorten `{key}.concurrency_limit.{param}` below {fault}"),
                        );
                    }
                }
                if let ConcurrencyLimit::EnvoyGradient(e) = c
                    && e.min_rtt_calc_interval < sc.duration
                {
                    findings.push(Finding {
                        level: Level::Note,
                        check: Check::Limiter,
                        subject: subject.clone(),
                        message: format!(
                            "minRTT is re-measured every {} (plus jitter): a measurement inside a fault learns the slow latency as the baseline until the next one",
                            e.min_rtt_calc_interval
                        ),
                        fix: None,
                    });
                }
            }
        }
        if let (Some(fill), Some(fault)) = (fill, shortest_fault)
            && fill >= fault
        {
            findings.push(Finding {
                level: Level::Warning,
                check: Check::Limiter,
                subject: subject.clone(),
                message: format!(
                    "the rate limit's `fill_interval` ({fill}) is at least the fault window ({fault}): the bucket refills at most once inside it"
                ),
                fix: Some(format!("shorten `{key}.rate_limit.fill_interval` below {fault}")),
            });
        }
    }
}
