//! Simulated time. Owns the two integer newtypes every other module uses: [`SimTime`], an instant
//! in nanoseconds since the start of a run, and [`SimDuration`], a span in nanoseconds. Integer
//! time keeps a run a pure function of its scenario: no epsilons, no float drift between platforms.

use std::fmt;
use std::ops::{Add, Sub};

/// Nanoseconds per second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since the run started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// Stands for "no deadline": later than any instant a run can reach.
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// Seconds since the start, as a float (for reports only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// Whole seconds since the start (the per-second bucket this instant falls in).
    pub fn whole_secs(self) -> u64 {
        self.0 / NANOS_PER_SEC
    }

    /// The span from `earlier` to `self`, zero when `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A span of whole milliseconds.
    pub const fn from_millis(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000)
    }

    /// A span of whole seconds.
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * NANOS_PER_SEC)
    }

    /// The span in seconds, as a float (for reports and for distribution parameters).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// Whether the span is empty.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::NEVER`] instead of wrapping.
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    /// Saturates at zero.
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.saturating_since(earlier)
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}",
            humantime::format_duration(std::time::Duration::from_nanos(self.0))
        )
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", SimDuration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(SimTime::NEVER + SimDuration(5), SimTime::NEVER);
        assert_eq!(SimTime(3) - SimTime(10), SimDuration::ZERO);
        assert_eq!(SimTime(2_500_000_000).whole_secs(), 2);
    }
}
