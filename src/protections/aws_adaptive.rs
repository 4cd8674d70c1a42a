//! The arithmetic of the AWS SDKs' adaptive retry mode's client-side rate limiter, on loadsim's
//! integer clock: botocore's `ClientRateLimiter`, `RateClocker` (boto/botocore
//! botocore/retries/adaptive.py), `TokenBucket` (botocore/retries/bucket.py) and
//! `CubicCalculator` (botocore/retries/throttling.py). The Go SDK (aws/aws-sdk-go-v2
//! aws/retry/adaptive_ratelimit.go) has the same constants and rules but starts its bucket at
//! rate 0 where botocore starts it at 1; loadsim follows botocore. Owns the limiter's state and
//! its update rules; the model asks it before every send on an edge with `retry_quota: {kind:
//! aws_adaptive}` and tells it every response (`model::calls`).
//!
//! The rules, as the source states them: the limiter is off until the first throttling response;
//! then every send takes one token, waiting `(1 − available) / fill_rate` when there is none (here
//! the waiting send reserves its token, [`RateLimiter::reserve`], so held sends go in order with one
//! wait each). Every
//! response (of any attempt) first records the measured send rate — responses counted per
//! half-second bucket, `rate = 0.8·(count / elapsed) + 0.2·rate` when a new bucket starts, the
//! first bucket starting at the whole second of the client's creation — then asks CUBIC for a new
//! rate: on a throttle `w_max = r` (r the measured rate before the limiter is on, else
//! min(measured, fill rate)), `k = ∛(w_max·(1 − β)/C)`, the new rate `r·β`; otherwise
//! `C·(t − last_throttle − k)³ + w_max`; C = 0.4, β = 0.7. The bucket's rate becomes
//! min(new rate, 2 × measured rate), its fill rate that but at least 0.5 per second and its
//! capacity that but at least 1, after adding what the old rate filled. Time is the simulated
//! clock in seconds (ns / 10⁹) where the SDK reads the wall clock.

use crate::time::{SimDuration, SimTime};

/// Events the adaptive mode's rate limiter schedules, per send on an edge with `retry_quota:
/// {kind: aws_adaptive}`: at most one wait for a token (`RateLimitedSend`; a held send reserves
/// its token and waits once). Summed by [`crate::guard::events_per_send`].
pub(crate) const EVENTS_PER_ATTEMPT: u32 = 1;

/// `CubicCalculator._SCALE_CONSTANT`.
pub(crate) const CUBIC_SCALE: f64 = 0.4;
/// `CubicCalculator._BETA`.
pub(crate) const CUBIC_BETA: f64 = 0.7;
/// `RateClocker._DEFAULT_SMOOTHING`.
pub(crate) const SMOOTHING: f64 = 0.8;
/// `RateClocker._TIME_BUCKET_RANGE`: 0.5 s.
pub(crate) const TIME_BUCKET: SimDuration = SimDuration(500_000_000);
/// `TokenBucket._MIN_RATE`: the lowest fill rate, per second.
pub(crate) const MIN_FILL_RATE: f64 = 0.5;
/// `ClientRateLimiter._MAX_RATE_ADJUST_SCALE`.
pub(crate) const MAX_RATE_ADJUST_SCALE: f64 = 2.0;
/// The bucket's starting `max_rate` (`register_retry_handler`: `TokenBucket(max_rate=1)`).
pub(crate) const START_MAX_RATE: f64 = 1.0;

fn secs(t: SimTime) -> f64 {
    t.0 as f64 / 1e9
}

/// botocore's `RateClocker`: the measured rate of responses, smoothed per half-second bucket.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RateClocker {
    /// The smoothed rate of responses, per second (botocore's `measured_tx_rate`).
    pub measured: f64,
    /// The current bucket, in half-seconds since time 0.
    last_bucket: u64,
    count: u64,
}

impl RateClocker {
    /// Created at `start`: the first bucket starts at the whole second of `start`
    /// (`math.floor(current_time())`).
    pub(crate) fn new(start: SimTime) -> RateClocker {
        RateClocker {
            measured: 0.0,
            last_bucket: start.0 / 1_000_000_000 * 2,
            count: 0,
        }
    }

    /// `record()`: counts one response at `now` and returns the measured rate.
    pub(crate) fn record(&mut self, now: SimTime) -> f64 {
        let bucket = now.0 / TIME_BUCKET.0;
        self.count += 1;
        if bucket > self.last_bucket {
            let elapsed = (bucket - self.last_bucket) as f64 * secs(SimTime(TIME_BUCKET.0));
            let current = self.count as f64 / elapsed;
            self.measured = current * SMOOTHING + self.measured * (1.0 - SMOOTHING);
            self.count = 0;
            self.last_bucket = bucket;
        }
        self.measured
    }
}

/// botocore's `CubicCalculator`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cubic {
    /// The rate when the last throttle was seen, per second (0 before any).
    pub w_max: f64,
    /// Seconds after `last_fail` at which the cubic curve climbs back to `w_max`.
    pub k: f64,
    /// When the last throttle was seen (the start, before any).
    pub last_fail: SimTime,
}

impl Cubic {
    /// `CubicCalculator(starting_max_rate=0, start_time)`.
    pub(crate) fn new(start: SimTime) -> Cubic {
        Cubic {
            w_max: 0.0,
            k: 0.0,
            last_fail: start,
        }
    }

    fn zero_point(w_max: f64) -> f64 {
        (w_max * (1.0 - CUBIC_BETA) / CUBIC_SCALE).cbrt()
    }

    /// `success_received`: C·(t − last_fail − k)³ + w_max.
    pub(crate) fn success(&self, now: SimTime) -> f64 {
        let dt = secs(now) - secs(self.last_fail);
        CUBIC_SCALE * (dt - self.k).powi(3) + self.w_max
    }

    /// `error_received`: w_max = `rate`, k recomputed, the throttle's time kept; returns rate·β.
    pub(crate) fn error(&mut self, rate: f64, now: SimTime) -> f64 {
        self.w_max = rate;
        self.k = Self::zero_point(rate);
        self.last_fail = now;
        rate * CUBIC_BETA
    }
}

/// botocore's `TokenBucket`, refilled on the simulated clock.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bucket {
    /// Tokens added per second.
    pub fill_rate: f64,
    /// Most tokens the bucket holds.
    pub max_capacity: f64,
    /// Tokens held at the last refill (one is taken per request).
    pub current: f64,
    last: SimTime,
}

impl Bucket {
    /// `TokenBucket(max_rate=1)` created at `start`: empty, fill rate 1, capacity 1.
    pub(crate) fn new(start: SimTime) -> Bucket {
        Bucket {
            fill_rate: START_MAX_RATE.max(MIN_FILL_RATE),
            max_capacity: START_MAX_RATE.max(1.0),
            current: 0.0,
            last: start,
        }
    }

    fn refill(&mut self, now: SimTime) {
        let dt = secs(now) - secs(self.last);
        self.current = self.max_capacity.min(self.current + dt * self.fill_rate);
        self.last = now;
    }

    /// The `max_rate` setter: refill at the old rate, then fill rate max(v, 0.5), capacity v if
    /// v ≥ 1 else 1, the tokens cut to the capacity.
    pub(crate) fn set_max_rate(&mut self, v: f64, now: SimTime) {
        self.refill(now);
        self.fill_rate = v.max(MIN_FILL_RATE);
        self.max_capacity = if v >= 1.0 { v } else { 1.0 };
        self.current = self.current.min(self.max_capacity);
    }

    /// `acquire(1)` at `now`: `Ok(())` when a token was taken, else `Err(wait)`, the time until
    /// one is there at the current fill rate (rounded up to whole nanoseconds, at least 1 ns); the
    /// caller asks again then, as botocore's loop does after its condition wait.
    pub(crate) fn try_acquire(&mut self, now: SimTime) -> Result<(), SimDuration> {
        self.refill(now);
        if self.current >= 1.0 {
            self.current -= 1.0;
            return Ok(());
        }
        let wait = ((1.0 - self.current) / self.fill_rate * 1e9).ceil();
        Err(SimDuration((wait as u64).max(1)))
    }
}

/// botocore's `ClientRateLimiter`: the three parts and whether a throttle has been seen.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RateLimiter {
    /// Whether a throttle has been seen: the bucket limits requests only from then on.
    pub enabled: bool,
    /// The measured rate of responses.
    pub clocker: RateClocker,
    /// The cubic curve that sets the bucket's rate after each response.
    pub cubic: Cubic,
    /// The token bucket each request takes from.
    pub bucket: Bucket,
}

impl RateLimiter {
    /// `register_retry_handler` at `start`.
    pub(crate) fn new(start: SimTime) -> RateLimiter {
        RateLimiter {
            enabled: false,
            clocker: RateClocker::new(start),
            cubic: Cubic::new(start),
            bucket: Bucket::new(start),
        }
    }

    /// `on_sending_request`: `Ok` to send now (always while the limiter is off), else the wait.
    pub(crate) fn before_send(&mut self, now: SimTime) -> Result<(), SimDuration> {
        if self.enabled {
            self.bucket.try_acquire(now)
        } else {
            Ok(())
        }
    }

    /// Takes the token a send refused by [`RateLimiter::before_send`] waits for, in advance: the
    /// bucket goes below zero, so the next refused send waits for the token after this one.
    /// botocore's waiters instead wake, refill and ask again, the first awake taking the token;
    /// at a steady rate that is the same order and the same instants, and here every held send
    /// costs one wait instead of one per sender that took its token first (issue 30: those
    /// repeated waits had no bound).
    pub(crate) fn reserve(&mut self) {
        self.bucket.current -= 1.0;
    }

    /// `on_receiving_response` for one attempt's outcome at `now`; `throttled` for a throttling
    /// error.
    pub(crate) fn on_response(&mut self, now: SimTime, throttled: bool) {
        let measured = self.clocker.record(now);
        let new_rate = if throttled {
            let rate = if self.enabled {
                measured.min(self.bucket.fill_rate)
            } else {
                measured
            };
            self.enabled = true;
            self.cubic.error(rate, now)
        } else {
            self.cubic.success(now)
        };
        self.bucket
            .set_max_rate(new_rate.min(MAX_RATE_ADJUST_SCALE * measured), now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn the_rate_clocker_smooths_per_half_second() {
        // Created at 1.3 s: the first bucket is the whole second, 1.0 s (bucket 2).
        let mut c = RateClocker::new(at(1300));
        // 1.4 s: bucket 2 is not past 2 → counted, no update.
        assert_eq!(c.record(at(1400)), 0.0);
        // 1.6 s: bucket 3: rate = 2 / 0.5 = 4 → 0.8·4 + 0.2·0 = 3.2.
        assert!(close(c.record(at(1600)), 3.2));
        // 2.7 s: bucket 5, two buckets later: rate = 1 / 1.0 = 1 → 0.8 + 0.2·3.2 = 1.44.
        assert!(close(c.record(at(2700)), 1.44));
        // 2.9 s: same bucket, no update.
        assert!(close(c.record(at(2900)), 1.44));
    }

    #[test]
    fn cubic_follows_the_calculator() {
        let mut c = Cubic::new(at(0));
        // w_max 0, k 0: success at 2 s → 0.4·2³ = 3.2.
        assert!(close(c.success(at(2000)), 3.2));
        // A throttle at 10 s while sending at 10/s: w_max 10, k = ∛(10·0.3/0.4) = ∛7.5, rate 7.
        assert!(close(c.error(10.0, at(10_000)), 7.0));
        let k = 7.5f64.cbrt();
        assert!(close(c.k, k));
        // Back at w_max exactly k seconds after the throttle.
        let back = SimTime(10_000_000_000 + (k * 1e9).round() as u64);
        assert!((c.success(back) - 10.0).abs() < 1e-6);
        // 1 s after: 0.4·(1 − k)³ + 10.
        assert!(close(c.success(at(11_000)), 0.4 * (1.0 - k).powi(3) + 10.0));
    }

    #[test]
    fn the_bucket_refills_at_the_old_rate_before_a_new_one() {
        let mut b = Bucket::new(at(0));
        // Empty at first: one token after 1 s at 1/s.
        assert_eq!(b.try_acquire(at(0)), Err(SimDuration(1_000_000_000)));
        assert_eq!(b.try_acquire(at(1000)), Ok(()));
        // 0.5 s later at 1/s: 0.5 tokens; the new rate 4 applies from now: capacity 4.
        b.set_max_rate(4.0, at(1500));
        assert!(close(b.current, 0.5));
        assert!(close(b.max_capacity, 4.0));
        // 0.5 more tokens at 4/s take 125 ms.
        assert_eq!(b.try_acquire(at(1500)), Err(SimDuration(125_000_000)));
        assert_eq!(b.try_acquire(at(1625)), Ok(()));
        // A rate below the floor: fill 0.5/s, capacity 1, tokens cut to it.
        b.set_max_rate(0.2, at(5000));
        assert!(close(b.fill_rate, 0.5));
        assert!(close(b.max_capacity, 1.0));
        assert!(close(b.current, 1.0), "3.375 s at 4/s filled 4, cut to 1");
    }

    #[test]
    fn the_limiter_is_off_until_the_first_throttle() {
        let mut l = RateLimiter::new(at(0));
        // Responses at 0.1 … 0.4 s (bucket 0, no rate yet) and sends are free.
        for ms in [100, 200, 300, 400] {
            assert_eq!(l.before_send(at(ms)), Ok(()));
            l.on_response(at(ms), false);
        }
        assert_eq!(l.clocker.measured, 0.0);
        // 0.6 s: bucket 1: 5 responses / 0.5 s = 10 → measured 8. A throttle: rate_to_use = 8
        // (the limiter was off), w_max 8, new rate 5.6; max_rate = min(5.6, 16) = 5.6.
        l.on_response(at(600), true);
        assert!(l.enabled);
        assert!(close(l.clocker.measured, 8.0));
        assert!(close(l.cubic.w_max, 8.0));
        assert!(close(l.bucket.fill_rate, 5.6));
        // The bucket: 0.1 s at the starting 1/s (0.1 token), then the successes set the rate to
        // min(C·t³, 2·0) = 0, i.e. fill 0.5/s and capacity 1: 0.5 s more give 0.25; the new
        // rate is set at 0.6 s, so the tokens are 0.35.
        assert!(close(l.bucket.current, 0.35));
        // Sending now waits (1 − 0.35) / 5.6 s = 116.071 428 6 ms, rounded up to whole ns.
        assert_eq!(l.before_send(at(600)), Err(SimDuration(116_071_429)));
        assert_eq!(l.before_send(at(717)), Ok(()));
    }
}
