//! CoDel (RFC 8289) at a service's queue (`services.<name>.codel`), adapted to a request queue: the decision is taken at dequeue from the
//! request's sojourn time. When the sojourn has stayed at or above `target` for a whole
//! `interval`, the queue enters the dropping state and drops the request at the head; further
//! drops come at `interval / sqrt(count)` spacing while the sojourn stays above target; one
//! request below target ends the dropping state. The drop count is carried over when dropping
//! resumes soon after it stopped (RFC 8289 §5.5 of the pseudocode).

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::time::{SimDuration, SimTime};

/// Default acceptable standing queue delay (RFC 8289's value).
pub(crate) const DEFAULT_TARGET: SimDuration = SimDuration::from_millis(5);
/// Default window over which the delay must stay above target (RFC 8289's value).
pub(crate) const DEFAULT_INTERVAL: SimDuration = SimDuration::from_millis(100);

/// CoDel parameters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelRaw {
    /// Acceptable standing queue delay.
    #[schemars(extend("default" = DEFAULT_TARGET.to_string()))]
    pub target: Option<DurationText>,
    /// Window over which the delay must stay above `target` before shedding.
    #[schemars(extend("default" = DEFAULT_INTERVAL.to_string()))]
    pub interval: Option<DurationText>,
}

/// CoDel parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Codel {
    /// `target`: acceptable standing queue delay (default 5 ms).
    pub target: SimDuration,
    /// `interval`: window over which the delay must stay above `target` (default 100 ms).
    pub interval: SimDuration,
}

/// Checks `codel` at `key`.
pub(crate) fn validate(key: &str, c: &CodelRaw, p: &mut impl Problems) -> Option<Codel> {
    let interval = c.interval.map_or(DEFAULT_INTERVAL, |d| d.0);
    Some(Codel {
        target: c.target.map_or(DEFAULT_TARGET, |d| d.0),
        interval: super::positive(&format!("{key}.interval"), interval, p)?,
    })
}

/// CoDel state of one queue.
#[derive(Clone, Debug)]
pub(crate) struct CodelState {
    p: Codel,
    first_above: Option<SimTime>,
    dropping: bool,
    drop_next: SimTime,
    count: u32,
    last_count: u32,
}

impl CodelState {
    /// Idle state.
    pub(crate) fn new(p: Codel) -> Self {
        CodelState {
            p,
            first_above: None,
            dropping: false,
            drop_next: SimTime::ZERO,
            count: 0,
            last_count: 0,
        }
    }

    fn control_law(&self, t: SimTime) -> SimTime {
        let spacing = self.p.interval.0 as f64 / (self.count.max(1) as f64).sqrt();
        t + SimDuration(spacing as u64)
    }

    /// RFC 8289 `dodequeue`: whether the sojourn has been above target for an interval.
    fn ok_to_drop(&mut self, now: SimTime, sojourn: SimDuration) -> bool {
        if sojourn < self.p.target {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.p.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// Whether to drop the request at the head, which waited `sojourn`.
    pub(crate) fn should_drop(&mut self, now: SimTime, sojourn: SimDuration) -> bool {
        let ok = self.ok_to_drop(now, sojourn);
        if self.dropping {
            if !ok {
                self.dropping = false;
                return false;
            }
            if now >= self.drop_next {
                self.count += 1;
                self.drop_next = self.control_law(self.drop_next);
                return true;
            }
            false
        } else if ok {
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            let recent = now.0.saturating_sub(self.drop_next.0) < 16 * self.p.interval.0;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = self.control_law(now);
            self.last_count = self.count;
            true
        } else {
            false
        }
    }

    /// The queue ran empty.
    pub(crate) fn on_empty(&mut self) {
        self.first_above = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        check(
            At::Service,
            &[(
                "codel: {interval: 0s}",
                "codel.interval",
                "must be longer than 0s",
            )],
        );
        accepted(At::Service, &["codel: {}", "codel: {target: 0s}"]);
    }

    const MS: u64 = 1_000_000;

    fn codel() -> CodelState {
        CodelState::new(Codel {
            target: SimDuration(5 * MS),
            interval: SimDuration(100 * MS),
        })
    }

    #[test]
    fn short_sojourns_never_drop() {
        let mut c = codel();
        for t in 0..1000 {
            assert!(!c.should_drop(SimTime(t * MS), SimDuration(4 * MS)));
        }
    }

    #[test]
    fn drops_after_an_interval_above_target_then_spaces_drops_by_inverse_sqrt() {
        let mut c = codel();
        let above = SimDuration(50 * MS);
        assert!(
            !c.should_drop(SimTime(0), above),
            "first time above target starts the clock"
        );
        assert!(!c.should_drop(SimTime(99 * MS), above));
        assert!(
            c.should_drop(SimTime(100 * MS), above),
            "a full interval above target"
        );
        // Next drop at 100 + 100/sqrt(1) = 200 ms.
        assert!(!c.should_drop(SimTime(150 * MS), above));
        assert!(c.should_drop(SimTime(200 * MS), above));
        // count = 2: next at 200 + 100/sqrt(2) ≈ 270.7 ms.
        assert!(!c.should_drop(SimTime(270 * MS), above));
        assert!(c.should_drop(SimTime(271 * MS), above));
        // A request below target ends the dropping state.
        assert!(!c.should_drop(SimTime(272 * MS), SimDuration(MS)));
        assert!(!c.should_drop(SimTime(400 * MS), above));
    }
}
