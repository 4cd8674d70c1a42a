//! What `loadsim check` says about `services.<s>.autoscale` (docs/model.md §2.13.1): bounds the
//! controller cannot honour or that make it inert — a `max_replicas` below what the offered load
//! asks for at the target, `min_replicas` equal to `max_replicas`, a starting `replicas` outside
//! the bounds, an `interval` (or `interval` + `warmup`) that reaches past `duration` so no
//! replica it starts can serve — and faults that name replicas that exist only once the
//! controller has started them.

use super::{Check, Finding, Level, Load};
use crate::scenario::{Scenario, ServiceIx};

/// The findings on every autoscaled service of `sc`; `loads` gives the offered load per service
/// (services no request reaches have none).
pub(super) fn autoscale_findings(
    sc: &Scenario,
    loads: &[Load],
    mean_s: &[f64],
    out: &mut Vec<Finding>,
) {
    for (s, svc) in sc.services.iter().enumerate() {
        let Some(a) = svc.autoscale else { continue };
        let s = ServiceIx::new(s);
        let name = &svc.name;
        let mut warn = |message: String, fix: String| {
            out.push(Finding {
                level: Level::Warning,
                check: Check::Load,
                subject: name.clone(),
                message,
                fix: Some(fix),
            })
        };
        if let Some(load) = loads.iter().find(|l| l.service == s) {
            let offered = sc.rate() * load.first;
            let target = a.target_percent as f64 / 100.0;
            let needed = (offered * mean_s[s] / (svc.slots as f64 * target)).ceil();
            if needed.is_finite() && needed > a.max_replicas as f64 {
                warn(
                    format!(
                        "at the offered {offered:.0}/s (first attempts) `{name}` needs {needed:.0} \
                         replicas of {} slots to run at its {}% target, above `max_replicas` \
                         ({}): the autoscaler will sit at its maximum, above target",
                        svc.slots, a.target_percent, a.max_replicas
                    ),
                    format!(
                        "raise `services.{name}.autoscale.max_replicas` to at least {needed:.0}"
                    ),
                );
            }
        }
        if a.min_replicas == a.max_replicas {
            warn(
                format!(
                    "`min_replicas` equals `max_replicas` ({}): the autoscaler can never change \
                     the count",
                    a.max_replicas
                ),
                format!(
                    "set `services.{name}.replicas: {}` and remove `autoscale`",
                    a.max_replicas
                ),
            );
        }
        if svc.replicas < a.min_replicas || svc.replicas > a.max_replicas {
            warn(
                format!(
                    "starts with {} replicas, outside [{}, {}]: the first evaluation, at {}, \
                     brings it inside at once",
                    svc.replicas, a.min_replicas, a.max_replicas, a.interval
                ),
                format!(
                    "set `services.{name}.replicas` between {} and {}",
                    a.min_replicas, a.max_replicas
                ),
            );
        }
        if a.interval.0 >= sc.duration.0 {
            warn(
                format!(
                    "`interval` ({}) is not shorter than `duration` ({}): the autoscaler never \
                     evaluates",
                    a.interval, sc.duration
                ),
                format!("shorten `services.{name}.autoscale.interval`"),
            );
        } else if a.interval.0.saturating_add(a.warmup.0) >= sc.duration.0 {
            warn(
                format!(
                    "`interval` + `warmup` ({} + {}) is not shorter than `duration` ({}): no \
                     replica the autoscaler starts can serve before arrivals end",
                    a.interval, a.warmup, sc.duration
                ),
                format!("shorten `services.{name}.autoscale.warmup` or lengthen `duration`"),
            );
        }
        for f in &sc.faults {
            let Some(rs) = &f.replicas else { continue };
            if f.kind.service() != Some(s) {
                continue;
            }
            if let Some(&k) = rs.iter().find(|&&k| k >= svc.replicas.max(a.min_replicas)) {
                warn(
                    format!(
                        "fault `{}` names replica {k}, which exists only once the autoscaler has \
                         started it (it starts {} and keeps at least {})",
                        f.name, svc.replicas, a.min_replicas
                    ),
                    format!(
                        "name replicas below {} in `faults.{}.replicas`",
                        svc.replicas.max(a.min_replicas),
                        f.name
                    ),
                );
            }
        }
    }
}
