//! Time integrals of a service's two levels, busy slots and queue length. Owns [`LevelMeter`]: told
//! the levels that held just before each change, it keeps ∫ busy dt and ∫ queue dt over the whole
//! run, their values at the end of arrivals (for the summary's time averages), and the highest
//! levels since the last time-series sample. The simulation's service state holds one meter
//! beside the levels themselves and calls it from every method that changes a level, so no change
//! goes unaccounted.

use crate::time::SimTime;

/// ∫ busy slots dt and ∫ queue length dt, in slot-nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelAreas {
    /// ∫ busy slots dt.
    pub busy: u128,
    /// ∫ queue length dt (live queued jobs).
    pub queue: u128,
}

impl LevelAreas {
    /// These areas extended by `busy` and `queued` held for `dt` nanoseconds.
    #[inline]
    fn extended(self, busy: u32, queued: usize, dt: u64) -> LevelAreas {
        LevelAreas {
            busy: self.busy + busy as u128 * dt as u128,
            queue: self.queue + queued as u128 * dt as u128,
        }
    }
}

/// What a time-series bin boundary reads from a meter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelSample {
    /// The whole-run areas up to the boundary.
    pub areas: LevelAreas,
    /// The highest levels since the previous sample, the current ones included.
    pub busy_max: u32,
    /// The highest queue length since the previous sample, the current one included.
    pub queue_max: u64,
}

/// The integrals of one service's levels; see the module documentation.
#[derive(Clone, Debug)]
pub struct LevelMeter {
    /// End of the arrival period: the summary's averages cover `[0, until)`.
    until: SimTime,
    /// The last change accounted for, and the areas up to it.
    last: SimTime,
    areas: LevelAreas,
    /// The areas at `until`, once a change after `until` was accounted for.
    at_until: Option<LevelAreas>,
    /// The highest levels accounted for since the last sample.
    busy_peak: u32,
    queue_peak: u64,
}

impl LevelMeter {
    /// A meter for a service that starts empty at time 0; `until` is the end of arrivals.
    pub fn new(until: SimTime) -> Self {
        LevelMeter {
            until,
            last: SimTime::ZERO,
            areas: LevelAreas::default(),
            at_until: None,
            busy_peak: 0,
            queue_peak: 0,
        }
    }

    /// The levels are about to change at `now`; `busy` and `queued` held since the last change.
    #[inline]
    pub fn advance(&mut self, now: SimTime, busy: u32, queued: usize) {
        if now > self.last {
            if now > self.until && self.at_until.is_none() {
                let to_until = self.until.saturating_since(self.last).0;
                self.at_until = Some(self.areas.extended(busy, queued, to_until));
            }
            self.areas = self.areas.extended(busy, queued, (now - self.last).0);
            self.last = now;
        }
        self.busy_peak = self.busy_peak.max(busy);
        self.queue_peak = self.queue_peak.max(queued as u64);
    }

    /// Reads the meter at a bin boundary `at` (no earlier than the last change), where the levels
    /// are `busy` and `queued`, and starts the next bin's peaks.
    pub fn sample(&mut self, at: SimTime, busy: u32, queued: usize) -> LevelSample {
        let sample = LevelSample {
            areas: self
                .areas
                .extended(busy, queued, at.saturating_since(self.last).0),
            busy_max: self.busy_peak.max(busy),
            queue_max: self.queue_peak.max(queued as u64),
        };
        self.busy_peak = 0;
        self.queue_peak = 0;
        sample
    }

    /// ∫ busy dt from 0 to `now` (no earlier than the last change), `busy` being the level now;
    /// reads without starting a bin (the autoscaler's reading).
    pub fn busy_area_at(&self, now: SimTime, busy: u32) -> u128 {
        self.areas.busy + busy as u128 * now.saturating_since(self.last).0 as u128
    }

    /// The areas over the arrival period `[0, until)`, the levels being `busy` and `queued` now.
    pub fn period_areas(&self, busy: u32, queued: usize) -> LevelAreas {
        self.at_until.unwrap_or_else(|| {
            self.areas
                .extended(busy, queued, self.until.saturating_since(self.last).0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: u64) -> SimTime {
        SimTime(ns)
    }

    #[test]
    fn period_areas_stop_at_the_end_of_arrivals() {
        let mut m = LevelMeter::new(t(100));
        m.advance(t(10), 0, 0); // 0 busy over [0, 10)
        m.advance(t(40), 1, 0); // 1 busy over [10, 40)
        m.advance(t(150), 2, 3); // 2 busy, 3 queued over [40, 150): 60 ns of it before 100
        m.advance(t(200), 1, 0);
        assert_eq!(
            m.period_areas(0, 0),
            LevelAreas {
                busy: 30 + 2 * 60,
                queue: 3 * 60,
            }
        );
        // With no change after the end of arrivals, the current levels run to it.
        let mut open = LevelMeter::new(t(100));
        open.advance(t(30), 0, 0);
        assert_eq!(
            open.period_areas(2, 1),
            LevelAreas {
                busy: 2 * 70,
                queue: 70,
            }
        );
    }

    #[test]
    fn a_sample_reads_areas_to_the_boundary_and_peaks_since_the_last_sample() {
        let mut m = LevelMeter::new(t(1_000));
        m.advance(t(5), 0, 0);
        m.advance(t(5), 1, 0); // a level held for no time still counts as a peak
        m.advance(t(8), 2, 4);
        let s = m.sample(t(10), 1, 2);
        assert_eq!(
            s.areas,
            LevelAreas {
                busy: 2 * 3 + 2,
                queue: 4 * 3 + 2 * 2,
            }
        );
        assert_eq!((s.busy_max, s.queue_max), (2, 4));
        let next = m.sample(t(20), 1, 2);
        assert_eq!((next.busy_max, next.queue_max), (1, 2));
        assert_eq!(next.areas.busy, 2 * 3 + 12);
    }
}
