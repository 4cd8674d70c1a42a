//! Netflix concurrency-limits `AIMDLimit` (concurrency-limits-core/src/main/java/com/netflix/
//! concurrency/limits/limit/AIMDLimit.java): loss based. A drop, or a sample slower than
//! `timeout`, multiplies the limit by `backoff_ratio` (truncated to an integer); a sample taken
//! while at least half the limit was in flight adds one; the result is clamped to
//! `[min_limit, max_limit]`.

use crate::time::SimDuration;

/// Builder defaults of AIMDLimit.
pub(crate) const DEFAULT_INITIAL_LIMIT: u32 = 20;
/// Default `min_limit`.
pub(crate) const DEFAULT_MIN_LIMIT: u32 = 20;
/// Default `max_limit`.
pub(crate) const DEFAULT_MAX_LIMIT: u32 = 200;
/// Default `backoff_ratio`.
pub(crate) const DEFAULT_BACKOFF_RATIO: f64 = 0.9;
/// Default `timeout`.
pub(crate) const DEFAULT_TIMEOUT: SimDuration = SimDuration::from_secs(5);

/// AIMD parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aimd {
    /// `initial_limit`: the limit at the start (default 20).
    pub initial_limit: u32,
    /// `min_limit`: the lowest limit (default 20).
    pub min_limit: u32,
    /// `max_limit`: the highest limit (default 200).
    pub max_limit: u32,
    /// `backoff_ratio`: the factor a drop multiplies the limit by, in [0.5, 1) (default 0.9).
    pub backoff_ratio: f64,
    /// `timeout`: a sample slower than this counts as a drop (default 5 s).
    pub timeout: SimDuration,
}

/// AIMD state: the integer limit.
#[derive(Clone, Debug)]
pub(crate) struct AimdState {
    p: Aimd,
    limit: u32,
}

impl AimdState {
    /// The limiter at its `initial_limit`.
    pub(crate) fn new(p: Aimd) -> Self {
        AimdState {
            p,
            limit: p.initial_limit,
        }
    }

    /// The limit in force.
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// `_update(startTime, rtt, inflight, didDrop)`.
    pub(crate) fn update(&mut self, rtt: SimDuration, inflight: u32, dropped: bool) {
        let mut limit = self.limit as i64;
        if dropped || rtt > self.p.timeout {
            limit = (limit as f64 * self.p.backoff_ratio) as i64;
        } else if inflight as i64 * 2 >= limit {
            limit += 1;
        }
        self.limit = limit.clamp(self.p.min_limit as i64, self.p.max_limit as i64) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimDuration = SimDuration::from_millis(1);

    fn aimd(initial: u32, min: u32) -> AimdState {
        AimdState::new(Aimd {
            initial_limit: initial,
            min_limit: min,
            max_limit: DEFAULT_MAX_LIMIT,
            backoff_ratio: DEFAULT_BACKOFF_RATIO,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    #[test]
    fn additive_increase_only_when_half_the_limit_is_in_flight() {
        let mut a = aimd(20, 1);
        a.update(MS, 9, false);
        assert_eq!(a.limit(), 20, "9 × 2 < 20: app limited, no change");
        a.update(MS, 10, false);
        assert_eq!(a.limit(), 21, "10 × 2 ≥ 20: +1");
        a.update(MS, 11, false);
        assert_eq!(a.limit(), 22);
    }

    #[test]
    fn multiplicative_decrease_on_drop_or_slow_sample() {
        let mut a = aimd(30, 1);
        // A drop: (int)(30 × 0.9) = 27; then 24 (24.3), 21 (21.6), 18 (18.9).
        for want in [27, 24, 21, 18] {
            a.update(MS, 0, true);
            assert_eq!(a.limit(), want);
        }
        // A sample over the 5 s timeout counts as a drop: (int)(18 × 0.9) = 16.
        a.update(SimDuration::from_millis(5001), 18, false);
        assert_eq!(a.limit(), 16);
        // Exactly the timeout is not over it: 16 in flight ≥ 16/2, +1.
        a.update(SimDuration::from_secs(5), 16, false);
        assert_eq!(a.limit(), 17);
    }

    #[test]
    fn clamped_to_min_and_max() {
        // Defaults: min 20, so a drop at 20 stays at 20.
        let mut a = aimd(20, 20);
        a.update(MS, 0, true);
        assert_eq!(a.limit(), 20);
        let mut a = aimd(200, 20);
        a.update(MS, 200, false);
        assert_eq!(a.limit(), 200, "max 200");
    }
}
