//! Envoy's adaptive concurrency gradient controller (envoyproxy/envoy
//! `source/extensions/filters/http/adaptive_concurrency/controller/gradient_controller.cc`,
//! parameters and defaults from `api/envoy/extensions/filters/http/adaptive_concurrency/v3/
//! adaptive_concurrency.proto`).
//!
//! - The controller starts in a minRTT window: the limit is pinned to `min_concurrency` (3), the
//!   limit before it is kept aside, and the latencies of requests *sent* inside the window are
//!   collected; after `request_count` (50) of them the minRTT is their `sample_aggregate_percentile`
//!   (p50), the kept limit comes back, and the next minRTT window is scheduled
//!   `min_rtt_calc_interval` plus a jitter uniform in whole milliseconds below
//!   `ceil(interval × jitter)` (15 %) later.
//! - Every `concurrency_update_interval` outside a minRTT window, if any latency was collected,
//!   the sample RTT is their p50 and `gradient = clamp((minRTT × (1 + buffer)) / sampleRTT, 0.5,
//!   2)`, `limit = limit × gradient`, `new = (u32)(limit + sqrt(limit))` clamped to
//!   `[min_concurrency, max_concurrency_limit]` (buffer 25 %, max 1000). The update timer that
//!   fires inside a minRTT window gives up and is restarted when the window ends.
//! - A limit set to `min_concurrency` for the 5th consecutive time outside a window starts a new
//!   minRTT window at once.
//! - A request is forwarded while fewer than `limit` are outstanding.
//!
//! Latencies are in whole microseconds as in Envoy. One deliberate difference: the percentile is
//! the nearest-rank value of the exact samples, where Envoy reads an approximate quantile from a
//! circllhist histogram (two significant digits). Timers are applied lazily before each request
//! or sample, in time order (a minRTT window that is due at the same instant as an update goes
//! first).

use crate::rng::Stream;
use crate::time::{SimDuration, SimTime};

/// Defaults of adaptive_concurrency.proto / gradient_controller.cc.
pub(crate) const DEFAULT_REQUEST_COUNT: u32 = 50;
/// Default `jitter`: a share of `min_rtt_calc_interval`.
pub(crate) const DEFAULT_JITTER: f64 = 0.15;
/// Default `min_concurrency`.
pub(crate) const DEFAULT_MIN_CONCURRENCY: u32 = 3;
/// Default `buffer`: a share of minRTT.
pub(crate) const DEFAULT_BUFFER: f64 = 0.25;
/// Default `sample_aggregate_percentile` (p50).
pub(crate) const DEFAULT_SAMPLE_PERCENTILE: f64 = 0.5;
/// Default `max_concurrency_limit`.
pub(crate) const DEFAULT_MAX_CONCURRENCY_LIMIT: u32 = 1000;
/// Consecutive updates to `min_concurrency` that start a minRTT window early.
pub(crate) const MIN_CONCURRENCY_RESETS: u32 = 5;

/// Gradient controller parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvoyGradient {
    /// `concurrency_update_interval`: how often the limit is recalculated.
    pub concurrency_update_interval: SimDuration,
    /// `min_rtt_calc_interval`: time between minRTT measurements.
    pub min_rtt_calc_interval: SimDuration,
    /// `request_count`: latencies that make a minRTT measurement (default 50).
    pub request_count: u32,
    /// `jitter`: random extra delay of the next minRTT window, a share of its interval in [0, 1)
    /// (default 0.15).
    pub jitter: f64,
    /// `min_concurrency`: the limit while measuring minRTT, and the lowest limit (default 3).
    pub min_concurrency: u32,
    /// `buffer`: share added to minRTT before the gradient, in [0, 1] (default 0.25).
    pub buffer: f64,
    /// `sample_aggregate_percentile`: the percentile summarizing latencies, in (0, 1] (default
    /// 0.5).
    pub sample_aggregate_percentile: f64,
    /// `max_concurrency_limit`: the highest limit (default 1000).
    pub max_concurrency_limit: u32,
}

/// Gradient controller state.
#[derive(Clone, Debug)]
pub(crate) struct EnvoyGradientState {
    p: EnvoyGradient,
    limit: u32,
    /// The limit kept aside during a minRTT window; 0 outside one (Envoy's `deferred_limit_value_`).
    deferred: u32,
    min_rtt_epoch: SimTime,
    min_rtt_us: u64,
    samples_us: Vec<u64>,
    next_update: SimTime,
    next_min_rtt: SimTime,
    consecutive_min: u32,
}

impl EnvoyGradientState {
    /// The controller at time 0: in its first minRTT window, the update timer armed.
    pub(crate) fn new(p: EnvoyGradient) -> Self {
        let mut s = EnvoyGradientState {
            p,
            limit: p.min_concurrency,
            deferred: 0,
            min_rtt_epoch: SimTime::ZERO,
            min_rtt_us: 0,
            samples_us: Vec::new(),
            next_update: SimTime(p.concurrency_update_interval.0),
            next_min_rtt: SimTime::NEVER,
            consecutive_min: 0,
        };
        s.enter_min_rtt_window(SimTime::ZERO);
        s
    }

    /// The limit in force (timers not advanced: see [`Self::advance`]).
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// The measured minRTT in microseconds (0 before the first).
    #[cfg(test)]
    pub(crate) fn min_rtt_us(&self) -> u64 {
        self.min_rtt_us
    }

    fn in_min_rtt_window(&self) -> bool {
        self.deferred > 0
    }

    /// Fires the timers due by `now`, in time order.
    pub(crate) fn advance(&mut self, now: SimTime) {
        loop {
            let due = self.next_min_rtt.min(self.next_update);
            if due > now {
                return;
            }
            if self.next_min_rtt <= self.next_update {
                self.next_min_rtt = SimTime::NEVER;
                self.enter_min_rtt_window(due);
            } else if self.in_min_rtt_window() {
                self.next_update = SimTime::NEVER;
            } else {
                self.reset_sample_window();
                self.next_update = due + self.p.concurrency_update_interval;
            }
        }
    }

    fn enter_min_rtt_window(&mut self, now: SimTime) {
        if self.in_min_rtt_window() {
            return;
        }
        self.deferred = self.limit;
        self.set_limit(self.p.min_concurrency, now);
        self.samples_us.clear();
        self.min_rtt_epoch = now;
    }

    fn set_limit(&mut self, new: u32, now: SimTime) {
        let old = self.limit;
        self.limit = new;
        let min = self.p.min_concurrency;
        if !self.in_min_rtt_window() && old == min && new == min {
            self.consecutive_min += 1;
        } else {
            self.consecutive_min = 0;
        }
        if self.consecutive_min >= MIN_CONCURRENCY_RESETS {
            self.next_min_rtt = now;
        }
    }

    /// The aggregate percentile of the collected latencies (nearest rank), and clears them.
    fn take_percentile(&mut self) -> u64 {
        self.samples_us.sort_unstable();
        let n = self.samples_us.len();
        let rank = ((self.p.sample_aggregate_percentile * n as f64).ceil() as usize).clamp(1, n);
        let v = self.samples_us[rank - 1];
        self.samples_us.clear();
        v
    }

    fn reset_sample_window(&mut self) {
        if self.samples_us.is_empty() {
            return;
        }
        let sample_rtt = self.take_percentile().max(1);
        let new = self.new_limit(sample_rtt);
        // The update timer's instant is not needed: an early minRTT window starts at `now` of
        // the caller, which is the instant being advanced to.
        let at = self.next_update;
        self.set_limit(new, at);
    }

    /// `calculateNewLimit` for a sample RTT in microseconds.
    pub(crate) fn new_limit(&self, sample_rtt_us: u64) -> u32 {
        let min_rtt = self.min_rtt_us as f64;
        let buffered = min_rtt + min_rtt * self.p.buffer;
        let gradient = (buffered / sample_rtt_us as f64).clamp(0.5, 2.0);
        let limit = self.limit as f64 * gradient;
        let new = (limit + limit.sqrt()) as u32;
        new.clamp(self.p.min_concurrency, self.p.max_concurrency_limit)
    }

    /// A response to a request sent at `sent` reached the filter at `now`
    /// (`recordLatencySample`).
    pub(crate) fn record(&mut self, sent: SimTime, now: SimTime, stream: &mut Stream) {
        if sent < self.min_rtt_epoch {
            return;
        }
        self.samples_us.push((now - sent).0 / 1_000);
        if self.in_min_rtt_window() && self.samples_us.len() >= self.p.request_count as usize {
            self.min_rtt_us = self.take_percentile();
            let kept = self.deferred;
            self.set_limit(kept, now);
            self.deferred = 0;
            self.next_min_rtt = now + self.jittered(stream);
            self.next_update = now + self.p.concurrency_update_interval;
        }
    }

    /// `applyJitter`: the interval plus a whole number of milliseconds below
    /// `ceil(interval_ms × jitter)`.
    fn jittered(&self, stream: &mut Stream) -> SimDuration {
        let interval_ms = self.p.min_rtt_calc_interval.0 / 1_000_000;
        let range = (interval_ms as f64 * self.p.jitter).ceil() as u64;
        let extra = if range == 0 {
            0
        } else {
            stream.up_to(range - 1)
        };
        SimDuration((interval_ms + extra) * 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn params() -> EnvoyGradient {
        EnvoyGradient {
            concurrency_update_interval: SimDuration::from_millis(100),
            min_rtt_calc_interval: SimDuration::from_secs(10),
            request_count: 4,
            jitter: DEFAULT_JITTER,
            min_concurrency: DEFAULT_MIN_CONCURRENCY,
            buffer: DEFAULT_BUFFER,
            sample_aggregate_percentile: DEFAULT_SAMPLE_PERCENTILE,
            max_concurrency_limit: DEFAULT_MAX_CONCURRENCY_LIMIT,
        }
    }

    #[test]
    fn starts_pinned_then_learns_min_rtt_and_applies_the_gradient() {
        let mut s = Stream::new(1, "test/envoy");
        let mut c = EnvoyGradientState::new(params());
        assert_eq!(
            c.limit(),
            3,
            "pinned to min_concurrency during the first minRTT window"
        );
        // Four latencies 10, 12, 20, 40 ms: p50 nearest rank = 2nd = 12 ms. The kept limit was
        // 3 (the starting limit).
        for (sent, lat) in [(0, 10), (1, 12), (2, 20), (3, 40)] {
            c.advance(SimTime((sent + lat) * MS));
            c.record(SimTime(sent * MS), SimTime((sent + lat) * MS), &mut s);
        }
        assert_eq!(c.min_rtt_us(), 12_000);
        assert_eq!(c.limit(), 3);
        // The window ended at 43 ms: next update at 143 ms. Samples of 12 ms: gradient =
        // 15 / 12 = 1.25, limit = 3 × 1.25 = 3.75, + sqrt(3.75) = 5.686 → 5.
        c.record(SimTime(100 * MS), SimTime(112 * MS), &mut s);
        c.advance(SimTime(143 * MS));
        assert_eq!(c.limit(), 5);
        // Samples of 6 ms: gradient = 15 / 6 = 2.5 → clamped 2; 5 × 2 = 10 + sqrt(10) → 13.
        c.record(SimTime(200 * MS), SimTime(206 * MS), &mut s);
        c.advance(SimTime(243 * MS));
        assert_eq!(c.limit(), 13);
        // No samples in a window: no change.
        c.advance(SimTime(343 * MS));
        assert_eq!(c.limit(), 13);
        // Samples of 60 ms: gradient 15 / 60 = 0.25 → 0.5; 13 × 0.5 = 6.5 + 2.55 → 9.
        c.record(SimTime(350 * MS), SimTime(410 * MS), &mut s);
        c.advance(SimTime(443 * MS));
        assert_eq!(c.limit(), 9);
        assert_eq!(
            c.new_limit(12_000),
            14,
            "9 × 1.25 = 11.25, + sqrt(11.25) = 14.6 → 14"
        );
    }

    #[test]
    fn next_min_rtt_window_comes_after_the_jittered_interval_and_pins_the_limit() {
        let mut s = Stream::new(1, "test/envoy");
        let mut c = EnvoyGradientState::new(params());
        for t in 0..4 {
            c.record(SimTime(t * MS), SimTime((t + 10) * MS), &mut s);
        }
        // Window done at 13 ms; the next starts in [10 s, 11.5 s) later.
        let next = c.next_min_rtt;
        assert!(next >= SimTime(13 * MS + 10_000 * MS) && next < SimTime(13 * MS + 11_500 * MS));
        c.record(SimTime(20 * MS), SimTime(30 * MS), &mut s);
        c.advance(SimTime(113 * MS));
        let before = c.limit();
        assert!(before > 3);
        c.advance(next);
        assert_eq!(c.limit(), 3, "pinned while re-measuring");
        // A response to a request sent before the window began is not a sample.
        c.record(SimTime(next.0 - MS), SimTime(next.0 + MS), &mut s);
        assert!(c.samples_us.is_empty());
        for k in 0..4 {
            c.record(
                next + SimDuration(k * MS),
                next + SimDuration((k + 10) * MS),
                &mut s,
            );
        }
        assert_eq!(c.limit(), before, "the kept limit comes back");
    }

    #[test]
    fn five_consecutive_minimum_limits_start_a_min_rtt_window() {
        let mut s = Stream::new(1, "test/envoy");
        let mut c = EnvoyGradientState::new(params());
        for t in 0..4 {
            c.record(SimTime(t * MS), SimTime((t + 10) * MS), &mut s);
        }
        // Very slow samples each update: the limit stays at 3 (3 × 0.5 = 1.5 + 1.22 → 2 → 3).
        let mut at = 13 * MS;
        for k in 1..=5 {
            at += 100 * MS;
            c.record(SimTime(at - 90 * MS), SimTime(at - MS), &mut s);
            c.advance(SimTime(at));
            assert_eq!(c.limit(), 3);
            assert_eq!(c.in_min_rtt_window(), k == 5, "update {k}");
        }
    }
}
