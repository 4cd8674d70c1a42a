//! Netflix concurrency-limits `Gradient2Limit` (concurrency-limits-core/src/main/java/com/netflix/
//! concurrency/limits/limit/Gradient2Limit.java), with its long-term RTT from
//! `ExpAvgMeasurement(long_window, 10)` (limit/measurement/ExpAvgMeasurement.java: the plain
//! mean of the first 10 samples, then an exponential average with factor `2 / (long_window + 1)`).
//! Per sample: `long = long_rtt.add(rtt)`; if `long / rtt > 2` the stored long RTT decays by
//! × 0.95 (the gradient below still uses `long`); no change while fewer than half the limit are
//! in flight; else `gradient = clamp(rtt_tolerance × long / rtt, 0.5, 1)`,
//! `new = limit × gradient + queue_size`, smoothed `limit × (1 − smoothing) + new × smoothing`
//! and clamped to `[min_limit, max_limit]`. Drops are not used (the library ignores `didDrop`).

/// Builder defaults of Gradient2Limit.
pub(crate) const DEFAULT_INITIAL_LIMIT: u32 = 20;
/// Default `min_limit`.
pub(crate) const DEFAULT_MIN_LIMIT: u32 = 20;
/// Default `max_limit`.
pub(crate) const DEFAULT_MAX_LIMIT: u32 = 200;
/// Default `smoothing`.
pub(crate) const DEFAULT_SMOOTHING: f64 = 0.2;
/// Default `queue_size`.
pub(crate) const DEFAULT_QUEUE_SIZE: u32 = 4;
/// Default `rtt_tolerance`.
pub(crate) const DEFAULT_RTT_TOLERANCE: f64 = 1.5;
/// Default `long_window`, in samples.
pub(crate) const DEFAULT_LONG_WINDOW: u32 = 600;
/// Samples averaged plainly before the exponential average starts (`new ExpAvgMeasurement(
/// longWindow, 10)`).
pub(crate) const WARMUP_WINDOW: u32 = 10;

/// Gradient2 parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gradient2 {
    /// `initial_limit`: the limit at the start (default 20).
    pub initial_limit: u32,
    /// `min_limit`: the lowest limit (default 20).
    pub min_limit: u32,
    /// `max_limit`: the highest limit (default 200).
    pub max_limit: u32,
    /// `smoothing`: weight of the new estimate, in (0, 1] (default 0.2).
    pub smoothing: f64,
    /// `queue_size`: the growth allowed while latency stays low (default 4).
    pub queue_size: u32,
    /// `rtt_tolerance`: the latency increase tolerated before the limit shrinks, at least 1
    /// (default 1.5).
    pub rtt_tolerance: f64,
    /// `long_window`: samples in the long-term RTT average (default 600).
    pub long_window: u32,
}

/// Gradient2 state.
#[derive(Clone, Debug)]
pub(crate) struct Gradient2State {
    p: Gradient2,
    estimated: f64,
    long_rtt: f64,
    sum: f64,
    count: u32,
}

impl Gradient2State {
    /// The limiter at its `initial_limit`, with no RTT measured.
    pub(crate) fn new(p: Gradient2) -> Self {
        Gradient2State {
            p,
            estimated: p.initial_limit as f64,
            long_rtt: 0.0,
            sum: 0.0,
            count: 0,
        }
    }

    /// The limit in force: the estimate, truncated.
    pub(crate) fn limit(&self) -> u32 {
        self.estimated as u32
    }

    /// The long-term RTT in nanoseconds.
    #[cfg(test)]
    pub(crate) fn long_rtt(&self) -> f64 {
        self.long_rtt
    }

    fn add_long(&mut self, sample: f64) -> f64 {
        if self.count < WARMUP_WINDOW {
            self.count += 1;
            self.sum += sample;
            self.long_rtt = self.sum / self.count as f64;
        } else {
            let factor = 2.0 / (self.p.long_window as f64 + 1.0);
            self.long_rtt = self.long_rtt * (1.0 - factor) + sample * factor;
        }
        self.long_rtt
    }

    /// `_update(startTime, rtt, inflight, didDrop)`, `rtt` in nanoseconds.
    pub(crate) fn update(&mut self, rtt: u64, inflight: u32) {
        let est = self.estimated;
        let queue_size = self.p.queue_size as f64;
        let short = rtt as f64;
        let long = self.add_long(short);
        if long / short > 2.0 {
            self.long_rtt *= 0.95;
        }
        if (inflight as f64) < est / 2.0 {
            return;
        }
        let gradient = (self.p.rtt_tolerance * long / short).clamp(0.5, 1.0);
        let new = est * gradient + queue_size;
        let new = est * (1.0 - self.p.smoothing) + new * self.p.smoothing;
        self.estimated = new
            .min(self.p.max_limit as f64)
            .max(self.p.min_limit as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn g(min: u32) -> Gradient2State {
        Gradient2State::new(Gradient2 {
            initial_limit: 20,
            min_limit: min,
            max_limit: DEFAULT_MAX_LIMIT,
            smoothing: DEFAULT_SMOOTHING,
            queue_size: DEFAULT_QUEUE_SIZE,
            rtt_tolerance: DEFAULT_RTT_TOLERANCE,
            long_window: DEFAULT_LONG_WINDOW,
        })
    }

    #[test]
    fn steady_rtt_grows_by_smoothed_queue_size() {
        let mut l = g(1);
        // long = short = 10 ms: gradient = min(1, 1.5) = 1; new = 20 + 4 = 24;
        // smoothed 20 × 0.8 + 24 × 0.2 = 20.8.
        l.update(10 * MS, 20);
        assert!((l.estimated - 20.8).abs() < 1e-12);
        // Again: 20.8 × 0.8 + 24.8 × 0.2 = 21.6.
        l.update(10 * MS, 20);
        assert!((l.estimated - 21.6).abs() < 1e-12);
        assert_eq!(l.limit(), 21);
        // App limited (10 < 21.6 / 2): the long RTT still moves, the limit does not.
        l.update(10 * MS, 10);
        assert!((l.estimated - 21.6).abs() < 1e-12);
    }

    #[test]
    fn latency_rise_cuts_the_limit_by_at_most_half_per_sample() {
        let mut l = g(1);
        l.update(10 * MS, 20); // 20.8, long 10 ms
        // 3 samples of 100 ms: the warm-up mean of (10, 100) = 55, 1.5 × 55 / 100 = 0.825;
        // new = 20.8 × 0.825 + 4 = 21.16; smoothed 20.8 × 0.8 + 21.16 × 0.2 = 20.872.
        l.update(100 * MS, 20);
        assert!((l.long_rtt() - 55.0 * MS as f64).abs() < 1e-3);
        assert!((l.estimated - 20.872).abs() < 1e-9, "{}", l.estimated);
        // A 1 s sample: long = mean(10, 100, 1000) = 370 ms; 1.5 × 370 / 1000 = 0.555;
        // new = 20.872 × 0.555 + 4 = 15.58396; smoothed 20.872 × 0.8 + 15.58396 × 0.2 =
        // 19.814392.
        l.update(1000 * MS, 20);
        assert!((l.estimated - 19.814392).abs() < 1e-9, "{}", l.estimated);
        // A 10 s sample: long = mean(10, 100, 1000, 10000) = 2777.5 ms, 1.5 × 0.27775 < 0.5,
        // gradient clamped to 0.5: new = 19.814392 × 0.5 + 4 = 13.907196; smoothed
        // 19.814392 × 0.8 + 13.907196 × 0.2 = 18.6329528.
        l.update(10_000 * MS, 20);
        assert!((l.estimated - 18.6329528).abs() < 1e-9, "{}", l.estimated);
    }

    #[test]
    fn long_rtt_decays_when_latency_returns() {
        let mut l = g(20);
        l.update(100 * MS, 20);
        // 10 ms after 100 ms: long = mean = 55 ms, 55 / 10 > 2 → stored long × 0.95 = 52.25 ms.
        l.update(10 * MS, 20);
        assert!((l.long_rtt() - 52.25 * MS as f64).abs() < 1e-3);
    }

    #[test]
    fn clamped_to_min_limit() {
        let mut l = Gradient2State::new(Gradient2 {
            smoothing: 1.0,
            queue_size: 0,
            ..g(20).p
        });
        l.update(10 * MS, 20);
        assert_eq!(l.limit(), 20, "gradient 1, no queue allowance: 20");
        // long = mean(10 ms, 10 s) = 5.005 s; 1.5 × 5.005 / 10 = 0.75075 → 15.015 < min 20.
        l.update(10_000 * MS, 20);
        assert_eq!(l.estimated, 20.0);
    }

    #[test]
    fn exponential_average_after_the_warm_up() {
        let mut l = g(1);
        for _ in 0..10 {
            l.update(10 * MS, 0);
        }
        assert!((l.long_rtt() - 10.0 * MS as f64).abs() < 1e-6);
        // factor 2 / 601: 10 ms × (1 − f) + 610 ms × f = 10 ms + 600 ms × 2 / 601.
        l.update(610 * MS, 0);
        let want = 10.0 * MS as f64 + 600.0 * MS as f64 * 2.0 / 601.0;
        assert!((l.long_rtt() - want).abs() < 1e-3);
    }
}
