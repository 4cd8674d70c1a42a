//! Netflix concurrency-limits `VegasLimit` (concurrency-limits-core/src/main/java/com/netflix/
//! concurrency/limits/limit/VegasLimit.java), delay based after TCP Vegas. It keeps the lowest RTT
//! seen (`rtt_noload`) and estimates the queue as `ceil(limit × (1 − rtt_noload / rtt))`; with
//! `log10` the library's `Log10RootFunction` (`max(1, (int) log10(limit))`), the thresholds are
//! `alpha = 3·log10`, `beta = 6·log10`, `threshold = log10`: a queue ≤ threshold grows the limit
//! by `beta`, < alpha by `log10`, > beta shrinks it by `log10`, a drop shrinks it by `log10`;
//! the new value is clamped to `[1, max_limit]` and smoothed
//! (`(1 − smoothing) × limit + smoothing × new`). No growth while fewer than half the limit are
//! in flight. Every `probe_jitter × probe_multiplier × limit` samples (jitter uniform in
//! [0.5, 1), drawn from the limiter's own random stream) the next sample replaces `rtt_noload`.

use crate::rng::Stream;

/// Builder defaults of VegasLimit.
pub(crate) const DEFAULT_INITIAL_LIMIT: u32 = 20;
/// Default `max_limit` (the library's `maxConcurrency`).
pub(crate) const DEFAULT_MAX_LIMIT: u32 = 1000;
/// Default `smoothing` (1: no smoothing).
pub(crate) const DEFAULT_SMOOTHING: f64 = 1.0;
/// Default `probe_multiplier`.
pub(crate) const DEFAULT_PROBE_MULTIPLIER: u32 = 30;

/// Vegas parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vegas {
    /// `initial_limit`: the limit at the start (default 20).
    pub initial_limit: u32,
    /// `max_limit`: the highest limit (default 1000).
    pub max_limit: u32,
    /// `smoothing`: weight of the new estimate, in (0, 1] (default 1).
    pub smoothing: f64,
    /// `probe_multiplier`: probe for a new no-load RTT every jitter × this × limit samples
    /// (default 30).
    pub probe_multiplier: u32,
}

/// `Log10RootFunction.create(0)`: `max(1, (int) log10(t))` below 1000, `(int) log10(t)` above.
pub(crate) fn log10_root(t: i64) -> i64 {
    if t < 1000 {
        if t <= 0 {
            1
        } else {
            ((t as f64).log10() as i64).max(1)
        }
    } else {
        (t as f64).log10() as i64
    }
}

/// Vegas state.
#[derive(Clone, Debug)]
pub(crate) struct VegasState {
    p: Vegas,
    estimated: f64,
    /// Lowest RTT seen, in nanoseconds (0: none yet).
    rtt_noload: u64,
    probe_count: u64,
    probe_jitter: f64,
}

impl VegasState {
    /// Draws the first probe jitter from `stream` (the library draws it in the constructor).
    pub(crate) fn new(p: Vegas, stream: &mut Stream) -> Self {
        VegasState {
            p,
            estimated: p.initial_limit as f64,
            rtt_noload: 0,
            probe_count: 0,
            probe_jitter: jitter(stream),
        }
    }

    /// The limit in force: the estimate, truncated.
    pub(crate) fn limit(&self) -> u32 {
        self.estimated as u32
    }

    /// The no-load RTT in nanoseconds (0 before the first sample).
    #[cfg(test)]
    pub(crate) fn rtt_noload(&self) -> u64 {
        self.rtt_noload
    }

    /// `_update(startTime, rtt, inflight, didDrop)`, `rtt` in nanoseconds (a zero RTT is not a
    /// sample: the library rejects it).
    pub(crate) fn update(&mut self, rtt: u64, inflight: u32, dropped: bool, stream: &mut Stream) {
        if rtt == 0 {
            return;
        }
        self.probe_count += 1;
        if self.probe_jitter * self.p.probe_multiplier as f64 * self.estimated
            <= self.probe_count as f64
        {
            self.probe_jitter = jitter(stream);
            self.probe_count = 0;
            self.rtt_noload = rtt;
            return;
        }
        if self.rtt_noload == 0 || rtt < self.rtt_noload {
            self.rtt_noload = rtt;
            return;
        }
        let est = self.estimated;
        let queue = (est * (1.0 - self.rtt_noload as f64 / rtt as f64)).ceil() as i64;
        let l = log10_root(est as i64) as f64;
        let new = if dropped {
            est - l
        } else if (inflight as f64) * 2.0 < est {
            return;
        } else {
            let (alpha, beta, threshold) = (3.0 * l, 6.0 * l, l);
            let q = queue as f64;
            if q <= threshold {
                est + beta
            } else if q < alpha {
                est + l
            } else if q > beta {
                est - l
            } else {
                return;
            }
        };
        let new = new.min(self.p.max_limit as f64).max(1.0);
        self.estimated = (1.0 - self.p.smoothing) * est + self.p.smoothing * new;
    }
}

/// `ThreadLocalRandom.nextDouble(0.5, 1)`.
fn jitter(stream: &mut Stream) -> f64 {
    0.5 + 0.5 * stream.unit()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn vegas() -> (VegasState, Stream) {
        let mut s = Stream::new(1, "test/vegas");
        let v = VegasState::new(
            Vegas {
                initial_limit: 20,
                max_limit: DEFAULT_MAX_LIMIT,
                smoothing: DEFAULT_SMOOTHING,
                probe_multiplier: DEFAULT_PROBE_MULTIPLIER,
            },
            &mut s,
        );
        (v, s)
    }

    #[test]
    fn log10_root_matches_the_lookup_table() {
        assert_eq!(
            [0, 1, 9, 10, 99, 100, 999, 1000, 12345].map(log10_root),
            [1, 1, 1, 1, 1, 2, 2, 3, 4]
        );
    }

    #[test]
    fn hand_computed_sequence() {
        let (mut v, mut s) = vegas();
        // First sample sets rtt_noload and leaves the limit.
        v.update(10 * MS, 20, false, &mut s);
        assert_eq!((v.limit(), v.rtt_noload()), (20, 10 * MS));
        // Same RTT: queue = ceil(20 × 0) = 0 ≤ threshold 1 → + beta (6 × 1) = 26.
        v.update(10 * MS, 20, false, &mut s);
        assert_eq!(v.limit(), 26);
        // RTT 11 ms: queue = ceil(26 × (1 − 10/11)) = ceil(2.36) = 3 > threshold 1, = alpha 3
        // (not below), not above beta 6: the sweet spot, no change.
        v.update(11 * MS, 26, false, &mut s);
        assert_eq!(v.limit(), 26);
        // RTT 20 ms: queue = ceil(26 × 0.5) = 13 > beta 6 → − log10 = 25.
        v.update(20 * MS, 26, false, &mut s);
        assert_eq!(v.limit(), 25);
        // RTT 10.5 ms: queue = ceil(25 × (1 − 10/10.5)) = ceil(1.19) = 2 < alpha 3 → + 1 = 26.
        v.update(10_500_000, 25, false, &mut s);
        assert_eq!(v.limit(), 26);
        // A drop: − log10 = 25, whatever the RTT.
        v.update(10 * MS, 0, true, &mut s);
        assert_eq!(v.limit(), 25);
        // App limited (12 × 2 < 25): no change even with no queue.
        v.update(10 * MS, 12, false, &mut s);
        assert_eq!(v.limit(), 25);
        // A faster sample becomes rtt_noload and leaves the limit.
        v.update(5 * MS, 25, false, &mut s);
        assert_eq!((v.limit(), v.rtt_noload()), (25, 5 * MS));
    }

    #[test]
    fn probes_reset_rtt_noload_after_jitter_times_multiplier_times_limit_samples() {
        let (mut v, mut s) = vegas();
        v.update(10 * MS, 0, false, &mut s);
        // App-limited samples keep the limit at 20; the probe comes after at most
        // 1 × 30 × 20 = 600 samples and at least 0.5 × 30 × 20 = 300.
        let mut n = 1;
        while v.rtt_noload() == 10 * MS {
            v.update(50 * MS, 0, false, &mut s);
            n += 1;
            assert!(n <= 601, "no probe after {n} samples");
        }
        assert!(n >= 300, "probed after {n} samples");
        assert_eq!(
            v.rtt_noload(),
            50 * MS,
            "the probe sample is the new no-load RTT"
        );
    }
}
