//! What `contention` (the USL factor on a service's work, `scenario::contention`) does to
//! capacity: a replica with `n` busy slots serves at most `n / (calls + work × factor(n))` per
//! second (`work` its mean own work, `calls` the rest of its mean hold), which peaks at some `n*`
//! and falls after it. When the first attempts fit under the peak but not under the capacity with
//! every slot busy, the service is metastable: a burst that fills its slots leaves it below its
//! load, and it does not come back by itself (`scenarios/fleet/contention_collapse.yaml`).

use super::{Check, Finding, Level, show_rate};
use crate::scenario::Scenario;
use crate::scenario::contention::Contention;

/// A replica's throughput with `n` busy slots: `n / (calls + own × factor(n))`.
fn throughput(c: &Contention, n: u32, own: f64, calls: f64) -> f64 {
    n as f64 / (calls + own * c.factor(n))
}

/// The busy slots (1 to `slots`) where a replica serves the most, and that throughput.
pub fn peak(c: &Contention, slots: u32, own: f64, calls: f64) -> (u32, f64) {
    (1..=slots)
        .map(|n| (n, throughput(c, n, own, calls)))
        .fold((1, 0.0), |best, x| if x.1 > best.1 { x } else { best })
}

/// Findings for every service with `contention`, given each service's mean hold in the normal
/// regime (`hold[s]`, seconds) and the first attempts per user request (`first[s]`).
pub(super) fn contention_findings(
    sc: &Scenario,
    hold: &[f64],
    first: &[f64],
    out: &mut Vec<Finding>,
) {
    for (s, svc) in sc.services.iter().enumerate() {
        let (Some(c), Some(work)) = (svc.contention, svc.service_time.as_ref()) else {
            continue;
        };
        let own = work.mean_secs();
        if own <= 0.0 || svc.slots > 100_000 {
            continue;
        }
        let calls = (hold[s] - own).max(0.0);
        // The most replicas it may have: an upper bound of what the fleet serves.
        let replicas = svc.max_units() as f64;
        let (n_star, best) = peak(&c, svc.slots, own, calls);
        let (best, full) = (
            best * replicas,
            throughput(&c, svc.slots, own, calls) * replicas,
        );
        let offered = sc.rate() * first[s];
        let name = &svc.name;
        let (level, message, fix) = if offered >= best {
            (
                Level::Warning,
                format!(
                    "overloaded by contention: first attempts offer {} and it serves at most {} \
                     (with {n_star} busy slots per replica; {} with all {} busy)",
                    show_rate(offered),
                    show_rate(best),
                    show_rate(full),
                    svc.slots
                ),
                Some(format!(
                    "add replicas (`services.{name}.replicas`), or lower `arrivals.rate`"
                )),
            )
        } else if offered >= full {
            (
                Level::Warning,
                format!(
                    "metastable under contention: it serves up to {} with {n_star} busy slots per \
                     replica but only {} with all {} busy, below the {} first attempts offer: a \
                     burst that fills the slots does not drain",
                    show_rate(best),
                    show_rate(full),
                    svc.slots,
                    show_rate(offered)
                ),
                Some(format!(
                    "set `services.{name}.slots: {n_star}` (the most busy slots that still pay), \
                     or put a concurrency limit in front of it"
                )),
            )
        } else if n_star < svc.slots {
            (
                Level::Note,
                format!(
                    "contention: it serves the most ({}) with {n_star} busy slots per replica; \
                     with all {} busy, {}",
                    show_rate(best),
                    svc.slots,
                    show_rate(full)
                ),
                None,
            )
        } else {
            continue;
        };
        out.push(Finding {
            level,
            check: Check::Load,
            subject: name.clone(),
            message,
            fix,
        });
    }
}
