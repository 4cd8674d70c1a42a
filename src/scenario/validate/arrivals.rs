//! Validation of the `arrivals` keys beyond the one-rate shorthand: which of `rate` and `profile`
//! is given, and the profile itself (whose rules are [`crate::scenario::profile`]'s).

use super::Validator;
use crate::scenario::profile::{self, Profile};
use std::sync::Arc;

use crate::scenario::faults::{Fault, FaultKind};
use crate::scenario::raw::{ArrivalProcessRaw, ArrivalsRaw};
use crate::scenario::trace;
use crate::scenario::{ClosedLoop, MAX_USERS};
use crate::time::SimDuration;
use crate::time::SimTime;

impl Validator<'_> {
    /// The profile of `arrivals`, if it gives one, checked; reports a missing or doubled rate.
    pub(super) fn profile(
        &mut self,
        key: &str,
        a: &ArrivalsRaw,
        duration: SimDuration,
    ) -> Option<Profile> {
        let profile_key = format!("{key}.profile");
        match (&a.rate, &a.profile) {
            (None, None) if a.process == Some(ArrivalProcessRaw::Closed) || a.trace.is_some() => {
                None
            }
            (None, None) => {
                self.problem(
                    key,
                    "needs `rate` (requests per second) or `profile` (the rate over time, a list \
                     of segments like `[{at: 0s, rate: 100}]`)",
                );
                None
            }
            (Some(_), Some(_)) if a.process == Some(ArrivalProcessRaw::Closed) => None,
            (Some(_), Some(_)) => {
                self.problem(
                    &profile_key,
                    "give `rate` (one rate) or `profile` (segments), not both",
                );
                None
            }
            (None, Some(segments)) => {
                if duration.is_zero() {
                    return None;
                }
                let p = profile::validate(&profile_key, segments, duration, self)?;
                let expected: f64 = p
                    .pieces
                    .iter()
                    .map(|x| (x.rate + x.to_rate) / 2.0 * (x.to.0 - x.from.0) as f64 / 1e9)
                    .sum();
                if expected < 1.0 {
                    self.problem(
                        &profile_key,
                        format!(
                            "brings {} requests over {duration}: less than one arrival on \
                             average, nothing to measure",
                            super::number(expected)
                        ),
                    );
                    return None;
                }
                Some(p)
            }
            (Some(_), None) => None,
        }
    }
}

/// The `rate` of a closed loop (what lint and the event guard read): `users / mean think time`,
/// the rate if every reply were instant (an upper bound), at most [`super::MAX_RATE`].
pub(super) fn closed_rate(c: &ClosedLoop) -> f64 {
    c.rate_bound().unwrap_or(super::MAX_RATE)
}

impl ClosedLoop {
    /// An upper bound of the loop's request rate, `users / mean think time` (every user's cycle
    /// takes at least its think time), when that is below [`super::MAX_RATE`]; `None` when the
    /// think time is zero or that short: the rate then depends on how fast the replies come, and
    /// the rate kept for the scenario ([`closed_rate`], capped at `MAX_RATE`) bounds nothing.
    pub fn rate_bound(&self) -> Option<f64> {
        let think = self.think_time.mean_secs();
        let rate = self.users as f64 / think;
        (think > 0.0 && rate < super::MAX_RATE).then_some(rate)
    }
}

impl Validator<'_> {
    /// The arrival instants of `arrivals.trace`, read from its file (relative to the folder of
    /// the scenario file that names it; shared with every copy of the document); reports keys that do not go with a trace, and the file's first problem with its
    /// row.
    pub(super) fn trace(
        &mut self,
        key: &str,
        a: &ArrivalsRaw,
        duration: SimDuration,
        filter: Option<trace::ClassFilter<'_>>,
    ) -> Option<Arc<[SimTime]>> {
        let file = a.trace.as_ref()?;
        for (sub, given) in [
            ("rate", a.rate.is_some()),
            ("profile", a.profile.is_some()),
            (
                "process",
                a.process.is_some() && a.process != Some(ArrivalProcessRaw::Closed),
            ),
        ] {
            if given {
                self.problem(
                    &format!("{key}.{sub}"),
                    "a trace sets the arrival times: remove it, or remove `trace`",
                );
            }
        }
        if a.process == Some(ArrivalProcessRaw::Closed) || duration.is_zero() {
            return None;
        }
        let key_of_trace = format!("{key}.trace");
        let path = self.doc.folder_of(&key_of_trace).join(file);
        match trace::read(&self.doc.inputs, &path, duration, filter) {
            Ok(times) => Some(times),
            Err(e) => {
                self.problem(&format!("{key}.trace"), e);
                None
            }
        }
    }

    /// Surge faults multiply a rate: refused with closed-loop users or a trace, which have none.
    pub(super) fn surges_need_a_rate(&mut self, a: &ArrivalsRaw, faults: &[Fault]) {
        let what = if a.process == Some(ArrivalProcessRaw::Closed) {
            "closed-loop users"
        } else if a.trace.is_some() {
            "a trace"
        } else {
            return;
        };
        for f in faults {
            if matches!(f.kind, FaultKind::Surge { .. }) {
                self.problem(
                    &format!("faults.{}.kind", f.name),
                    format!(
                        "a `surge` multiplies the arrival rate, and {what} have none; shape the \
                         load with `users`/`think_time` or the trace itself"
                    ),
                );
            }
        }
    }

    /// The closed loop of `arrivals`, when `process: closed`; reports its keys out of place.
    pub(super) fn closed(&mut self, key: &str, a: &ArrivalsRaw) -> Option<ClosedLoop> {
        if a.process != Some(ArrivalProcessRaw::Closed) {
            for (sub, given) in [
                ("users", a.users.is_some()),
                ("think_time", a.think_time.is_some()),
            ] {
                if given {
                    self.problem(
                        &format!("{key}.{sub}"),
                        "is a key of closed-loop arrivals: add `process: closed`",
                    );
                }
            }
            return None;
        }
        for (sub, given) in [
            ("rate", a.rate.is_some()),
            ("profile", a.profile.is_some()),
            ("trace", a.trace.is_some()),
        ] {
            if given {
                self.problem(
                    &format!("{key}.{sub}"),
                    "closed-loop users set their own pace: remove it (give `users` and \
                     `think_time`)",
                );
            }
        }
        let users = match a.users {
            None => {
                self.problem(key, "`process: closed` needs `users` (how many users)");
                None
            }
            Some(0) => {
                self.problem(&format!("{key}.users"), "must be at least 1");
                None
            }
            Some(n) if n > MAX_USERS => {
                self.problem(
                    &format!("{key}.users"),
                    format!("must be at most {MAX_USERS}"),
                );
                None
            }
            Some(n) => Some(n),
        };
        let think = match &a.think_time {
            None => {
                self.problem(
                    key,
                    "`process: closed` needs `think_time` (a distribution, like `{dist: \
                     exponential, mean: 1s}`, or `{dist: constant, value: 0s}`)",
                );
                None
            }
            Some(d) => self.dist(&format!("{key}.think_time"), d),
        };
        Some(ClosedLoop {
            users: users?,
            think_time: think?,
        })
    }
}
