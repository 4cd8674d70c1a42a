//! Checks on `faults:`. Owns the window rule (inside `[0, duration]`, `to` after `from`, exactly
//! one of `to` and `duration`) and the ranges of each kind's values; which keys each kind takes is
//! stated with the kinds, in [`crate::scenario::faults`].

use std::collections::HashMap;

use super::super::raw::{FaultKindRaw, FaultRaw};
use super::super::{Fault, FaultKind, Service, ServiceIx};
use super::Validator;
use crate::time::{SimDuration, SimTime};

impl Validator<'_> {
    pub(super) fn fault(
        &mut self,
        name: &str,
        f: &FaultRaw,
        duration: SimDuration,
        names: &HashMap<&str, usize>,
        replicas: &[u32],
        services: &[Service],
    ) -> Option<Fault> {
        let key = format!("faults.{name}");
        let (from, to) = self.fault_window(&key, f, duration)?;
        let kind_name = format!("{:?}", f.kind).to_lowercase();
        let allowed = super::super::faults::keys(f.kind);
        // A slow fault's `fraction` is optional, checked below.
        let slow = f.kind == FaultKindRaw::Slow;
        // A slow fault takes `service_time` or `slowdown`, checked below.
        let given = [
            ("service", f.service.is_some()),
            ("service_time", f.service_time.is_some() && !slow),
            ("fraction", f.fraction.is_some() && !slow),
            ("slots", f.slots.is_some()),
            ("factor", f.factor.is_some()),
            ("slowdown", f.slowdown.is_some() && !slow),
        ];
        if !self.params_match(
            &key,
            ("key", &format!("a `{kind_name}` fault")),
            allowed,
            &given,
        ) {
            return None;
        }
        if f.retryable_fraction.is_some() && f.kind != FaultKindRaw::Error {
            let article = if kind_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            self.problem(
                &format!("{key}.retryable_fraction"),
                format!(
                    "is not a key of {article} `{kind_name}` fault (only `error` faults take it)"
                ),
            );
            return None;
        }
        let service = match &f.service {
            Some(s) => Some(self.service_ref(&format!("{key}.service"), s, names)?),
            None => None,
        };
        let kind = match f.kind {
            FaultKindRaw::Slow => {
                let service_time = self.slow_service_time(&key, f, service, services)?;
                let fraction = f.fraction.unwrap_or(1.0);
                if !(fraction.is_finite() && fraction > 0.0 && fraction <= 1.0) {
                    self.problem(&format!("{key}.fraction"), "must be a share in (0, 1]");
                    return None;
                }
                FaultKind::Slow {
                    service: service?,
                    service_time,
                    fraction,
                }
            }
            FaultKindRaw::Error => {
                let fraction = f.fraction?;
                if !(fraction.is_finite() && (0.0..=1.0).contains(&fraction)) {
                    self.problem(&format!("{key}.fraction"), "must be a share in [0, 1]");
                    return None;
                }
                let retryable = crate::protections::retry_on::validate_fraction(
                    &format!("{key}.retryable_fraction"),
                    f.retryable_fraction,
                    self,
                );
                FaultKind::Error {
                    service: service?,
                    fraction,
                    retryable,
                }
            }
            FaultKindRaw::Outage => FaultKind::Outage { service: service? },
            FaultKindRaw::Capacity => FaultKind::Capacity {
                service: service?,
                slots: f.slots?,
            },
            FaultKindRaw::Surge => {
                let factor = f.factor?;
                if !(factor.is_finite() && factor > 0.0 && factor <= 1000.0) {
                    self.problem(&format!("{key}.factor"), "must be a number in (0, 1000]");
                    return None;
                }
                FaultKind::Surge { factor }
            }
        };
        if f.replicas.is_some() && service.is_none() {
            self.problem(
                &format!("{key}.replicas"),
                format!("is not a key of a `{kind_name}` fault (it acts on no service)"),
            );
            return None;
        }
        if let (Some(rs), Some(s)) = (&f.replicas, service) {
            let n = replicas.get(s.index()).copied().unwrap_or(1);
            if rs.is_empty() {
                self.problem(
                    &format!("{key}.replicas"),
                    "must name at least one replica; remove it for all replicas",
                );
                return None;
            }
            if let Some(&bad) = rs.iter().find(|&&r| r >= n) {
                self.problem(
                    &format!("{key}.replicas"),
                    format!(
                        "names replica {bad}, but the service has {n} (replicas are numbered \
                         from 0 to {})",
                        n - 1
                    ),
                );
                return None;
            }
        }
        Some(Fault {
            name: name.to_owned(),
            from,
            to,
            kind,
            replicas: f.replicas.clone(),
        })
    }

    /// A `slow` fault's distribution: its `service_time`, or `slowdown` × the service's own.
    fn slow_service_time(
        &mut self,
        key: &str,
        f: &FaultRaw,
        service: Option<ServiceIx>,
        services: &[Service],
    ) -> Option<crate::scenario::Dist> {
        match (&f.service_time, f.slowdown) {
            (Some(st), None) => self.dist(&format!("{key}.service_time"), st),
            (None, Some(k)) => {
                if !(k.is_finite() && k > 0.0 && k <= super::dist::MAX_SCALE) {
                    self.problem(
                        &format!("{key}.slowdown"),
                        format!("must be a number in (0, {}]", super::dist::MAX_SCALE),
                    );
                    return None;
                }
                let s = service?;
                let name = services.get(s.index()).map_or("", |s| s.name.as_str());
                let own_key = format!("services.{name}.service_time");
                if self.problems.iter().any(|p| p.key.starts_with(&own_key)) {
                    // The service's own distribution is wrong, and reported there.
                    return None;
                }
                match services
                    .get(s.index())
                    .and_then(|s| s.service_time.as_ref())
                {
                    Some(own) => Some(own.scaled(k)),
                    None => {
                        self.problem(
                            &format!("{key}.slowdown"),
                            format!(
                                "multiplies the service's own `service_time`, and `{name}` has \
                                 none; give the fault a `service_time` instead"
                            ),
                        );
                        None
                    }
                }
            }
            (Some(_), Some(_)) => {
                self.problem(
                    &format!("{key}.slowdown"),
                    "give `service_time` (the distribution in the window) or `slowdown` (a \
                     multiple of the service's own), not both",
                );
                None
            }
            (None, None) => {
                self.problem(
                    key,
                    "a `slow` fault needs `service_time` (the distribution in the window) or \
                     `slowdown` (a multiple of the service's own, like `slowdown: 5`)",
                );
                None
            }
        }
    }

    fn fault_window(
        &mut self,
        key: &str,
        f: &FaultRaw,
        duration: SimDuration,
    ) -> Option<(SimTime, SimTime)> {
        let from = SimTime(f.from.0.0);
        let to = match (f.to, f.duration) {
            (Some(_), Some(_)) => {
                self.problem(
                    &format!("{key}.duration"),
                    "give either `to` or `duration`, not both",
                );
                return None;
            }
            (None, None) => {
                self.problem(
                    key,
                    "needs an end: `to` (an instant) or `duration` (a length)",
                );
                return None;
            }
            (Some(to), None) => {
                if to.0 <= f.from.0 {
                    self.problem(
                        &format!("{key}.to"),
                        format!("must be after `from` ({})", f.from.0),
                    );
                    return None;
                }
                SimTime(to.0.0)
            }
            (None, Some(d)) => from + d.0,
        };
        // A zero `duration` is refused at its own key (or stands in for one with a shape
        // problem): no window can be measured against it.
        if !duration.is_zero() && (from >= SimTime(duration.0) || to > SimTime(duration.0)) {
            // Name the key that pushes the window out: `from` past the end, else the end.
            let culprit = if from >= SimTime(duration.0) {
                format!("{key}.from")
            } else if f.to.is_some() {
                format!("{key}.to")
            } else {
                format!("{key}.duration")
            };
            self.problem(
                &culprit,
                format!(
                    "the window [{}, {}) lies outside the arrival period [0s, {duration})",
                    SimDuration(from.0),
                    SimDuration(to.0)
                ),
            );
            return None;
        }
        Some((from, to))
    }
}
