//! The queue-wait check (the article's §7): `queue_cap` × mean service time / `slots` against the
//! wait of the service's callers, normally and inside each fault window; and the deadline check
//! that goes with it (`drop_expired` without a deadline does nothing).

use super::budget::{ServesUnder, propagate_key};
use super::regime::{Regime, regime_name};
use super::show::{show_duration, show_secs};
use super::{Check, Finding, Level};
use crate::scenario::{Scenario, ServiceIx};
use crate::time::SimDuration;

/// Per service and regime: the §7 queue-wait bound.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueWait {
    /// The service.
    pub service: ServiceIx,
    /// `queue_cap × mean service time / slots` per regime, seconds; `None` for an unbounded queue.
    pub bound_s: Option<Vec<f64>>,
}

/// Largest `queue_cap` whose wait stays within `fraction` of `wait` in every regime.
fn cap_within(slots: u32, mean_s: f64, wait: SimDuration, fraction: f64) -> Option<u64> {
    (mean_s > 0.0).then(|| (fraction * wait.as_secs_f64() * slots as f64 / mean_s).floor() as u64)
}

/// The `queue_cap` to suggest, and whether the arrivals bound it: the largest whose full queue
/// waits under half of `wait` ([`cap_within`]), but no more than the requests that arrive at one
/// replica in that half (`per_replica` a second, every attempt counted): a longer FIFO queue only
/// holds requests older than that, so a larger cap adds nothing but dead work. `None` for 0.
fn cap_to_suggest(
    slots: u32,
    mean_s: f64,
    wait: SimDuration,
    per_replica: f64,
) -> Option<(u64, bool)> {
    let by_wait = cap_within(slots, mean_s, wait, 0.5)?;
    let by_arrivals = (0.5 * wait.as_secs_f64() * per_replica).ceil().max(1.0);
    let cap = if (by_arrivals as u64) < by_wait {
        (by_arrivals as u64, true)
    } else {
        (by_wait, false)
    };
    (cap.0 > 0).then_some(cap)
}

/// The words after a suggested cap that say why it is that number.
fn cap_reason(cap: (u64, bool), wait: &str, per_replica: f64) -> String {
    if cap.1 {
        format!(
            "at most what arrives at a replica in half of {wait} at up to {}; a longer queue only holds requests their callers gave up on",
            super::show::show_rate(per_replica)
        )
    } else {
        format!("under half of {wait} in every regime")
    }
}

/// The queue findings of service `s`: `(regimes, mean)` are the regimes and the mean service
/// times in each (`mean[regime][service]`), `per_replica` the attempts a second one replica may
/// get (for the caps suggested).
pub(super) fn queue_findings(
    sc: &Scenario,
    s: ServiceIx,
    u: &ServesUnder,
    (regimes, mean): (&[Regime], &[Vec<f64>]),
    bound_s: Option<&[f64]>,
    per_replica: f64,
    out: &mut Vec<Finding>,
) {
    let svc = &sc.services[s];
    let name = &svc.name;
    let worst_mean = mean.iter().map(|m| m[s]).fold(0.0, f64::max);
    let wait = show_duration(u.wait);
    let has_calls = !svc.calls.is_empty();
    let ge = if has_calls { "≥ " } else { "" };
    if svc.drop_expired && !u.deadline {
        out.push(Finding {
            level: Level::Warning,
            check: Check::Deadline,
            subject: name.clone(),
            message: format!(
                "`drop_expired` is set but requests reach {name} without a deadline, so it never drops anything"
            ),
            fix: Some(format!("set `{}`", propagate_key(sc, u.set_by))),
        });
    }
    match bound_s {
        None if svc.drop_expired && u.deadline => out.push(Finding {
            level: Level::Note,
            check: Check::Queue,
            subject: name.clone(),
            message: format!(
                "unbounded queue: expired requests are dropped at dequeue without work, but the queue can grow without limit and failures wait for the deadline ({wait})"
            ),
            fix: None,
        }),
        None => {
            let mut fixes = Vec::new();
            if let Some(cap) = cap_to_suggest(svc.slots, worst_mean, u.wait, per_replica) {
                let reason = if cap.1 {
                    cap_reason(cap, &wait, per_replica)
                } else {
                    format!("stays under half of {wait} in every regime")
                };
                fixes.push(format!(
                    "set `services.{name}.queue_cap: {}` (its wait, {} × {ge}{} / {}, {reason})",
                    cap.0,
                    cap.0,
                    show_secs(worst_mean),
                    svc.slots,
                ));
            }
            let mut deadline_fix = String::new();
            if !u.deadline {
                deadline_fix.push_str(&format!("set `{}` and ", propagate_key(sc, u.set_by)));
            }
            deadline_fix.push_str(&format!("set `services.{name}.drop_expired: true`"));
            fixes.push(deadline_fix);
            out.push(Finding {
                level: Level::Warning,
                check: Check::Queue,
                subject: name.clone(),
                message: format!(
                    "unbounded queue and nothing drops expired work: a backlog built in a fault is served after its callers (who wait {wait}) gave up, and keeps the service busy with dead work after the fault ends"
                ),
                fix: Some(fixes.join("; or ")),
            });
        }
        Some(bounds) => {
            let cap = svc.queue_cap.unwrap_or(0);
            for (i, (&r, &b)) in regimes.iter().zip(bounds).enumerate() {
                if i > 0 && mean[i][s] == mean[0][s] {
                    continue;
                }
                let arithmetic = format!(
                    "{cap} × {ge}{} / {} = {ge}{}",
                    show_secs(mean[i][s]),
                    svc.slots,
                    show_secs(b)
                );
                let when = regime_name(sc, r);
                if b >= u.wait.as_secs_f64() {
                    let fix = cap_to_suggest(svc.slots, worst_mean, u.wait, per_replica).map(
                        |c| {
                            format!(
                                "set `services.{name}.queue_cap: {}` ({}), or add slots",
                                c.0,
                                cap_reason(c, &wait, per_replica)
                            )
                        },
                    );
                    out.push(Finding {
                        level: Level::Warning,
                        check: Check::Queue,
                        subject: name.clone(),
                        message: format!(
                            "a full queue waits {arithmetic} {when}, not under the {wait} its callers wait: queued requests time out before they start"
                        ),
                        fix,
                    });
                } else if b >= 0.5 * u.wait.as_secs_f64() {
                    out.push(Finding {
                        level: Level::Note,
                        check: Check::Queue,
                        subject: name.clone(),
                        message: format!(
                            "a full queue waits {arithmetic} {when}, more than half of the {wait} its callers wait: little time is left for the work itself"
                        ),
                        fix: None,
                    });
                }
            }
        }
    }
}
