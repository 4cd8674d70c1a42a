//! Live counters of a run. Owns what is counted while events happen: user requests by window and
//! by arrival second, latency histograms, and per-service and per-edge counters and time
//! integrals. Everything here is O(1) per update and O(1) in the number of requests (per-second
//! counters are O(seconds)).

use hdrhistogram::Histogram;

use crate::time::{SimDuration, SimTime};

/// Which part of the run a user request arrived in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    Before = 0,
    During = 1,
    After = 2,
}

/// A latency histogram in microseconds, 1 µs to 100 days, 3 significant digits.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100 * 86_400 * 1_000_000, 3).expect("static bounds are valid")
}

/// Below this many microseconds an HDR histogram with 3 significant digits stores every value
/// exactly (2048 sub-buckets of width 1), so counting such values in a plain array and adding them
/// when the histogram is read gives the very histogram that recording each would give.
const EXACT_MICROS: usize = 2048;

/// A latency histogram in microseconds ([`latency_histogram`]) with a cheap path for short
/// durations: most queueing times are zero or a few milliseconds, and an array increment costs a
/// tenth of an HDR record. Read it through [`MicrosHistogram::histogram`].
#[derive(Clone, Debug)]
pub struct MicrosHistogram {
    /// `exact[v]`: how many values of `v` µs (v < [`EXACT_MICROS`]) are not yet in `hdr`.
    exact: Box<[u64]>,
    hdr: Histogram<u64>,
}

impl Default for MicrosHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl MicrosHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        MicrosHistogram {
            exact: vec![0; EXACT_MICROS].into_boxed_slice(),
            hdr: latency_histogram(),
        }
    }

    /// Records `d`, in whole microseconds clamped to the histogram's range.
    #[inline]
    pub fn record(&mut self, d: SimDuration) {
        let us = (d.0 / 1_000).max(1);
        match self.exact.get_mut(us as usize) {
            Some(count) => *count += 1,
            None => self
                .hdr
                .record(us.min(self.hdr.high()))
                .expect("clamped into range"),
        }
    }

    /// Everything recorded, as one HDR histogram.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = self.hdr.clone();
        for (us, &n) in self.exact.iter().enumerate().filter(|(_, n)| **n > 0) {
            h.record_n(us as u64, n).expect("exact values are in range");
        }
        h
    }
}

/// Records `d` into a microsecond histogram (clamped to its range).
#[inline]
pub fn record_micros(h: &mut MicrosHistogram, d: SimDuration) {
    h.record(d);
}

/// Counters for user requests.
#[derive(Debug)]
pub struct UserCounters {
    pub by_window: [u64; 3],
    pub succeeded_by_window: [u64; 3],
    pub per_second_arrivals: Vec<u32>,
    pub per_second_succeeded: Vec<u32>,
    pub succeeded: u64,
    pub failed: u64,
    pub client_attempts: u64,
    pub success_latency: MicrosHistogram,
    pub failed_latency: MicrosHistogram,
}

/// Counters for one service.
#[derive(Debug)]
pub struct ServiceCounters {
    pub arrivals: u64,
    pub arrivals_during_fault: u64,
    pub admitted: u64,
    pub completed: u64,
    pub completed_abandoned: u64,
    pub rejected_full: u64,
    pub dropped_expired: u64,
    pub max_queue: u64,
    /// Admitted requests that had to queue.
    pub enqueued: u64,
    /// Requests that started work, and the sum of their queueing times.
    pub started: u64,
    pub wait_sum_ns: u128,
    pub queue_wait: MicrosHistogram,
    /// Requests that left the service (completed or dropped), and their time in it.
    pub departed: u64,
    pub sojourn_sum_ns: u128,
    /// Completions in the call tree of a succeeded user request.
    pub useful: u64,
    /// ∫ busy slots dt and ∫ queue length dt over the arrival period, in slot-nanoseconds.
    pub busy_area: u128,
    pub queue_area: u128,
    pub last_touch: SimTime,
}

impl ServiceCounters {
    pub fn new() -> Self {
        ServiceCounters {
            arrivals: 0,
            arrivals_during_fault: 0,
            admitted: 0,
            completed: 0,
            completed_abandoned: 0,
            rejected_full: 0,
            dropped_expired: 0,
            max_queue: 0,
            enqueued: 0,
            started: 0,
            wait_sum_ns: 0,
            queue_wait: MicrosHistogram::new(),
            departed: 0,
            sojourn_sum_ns: 0,
            useful: 0,
            busy_area: 0,
            queue_area: 0,
            last_touch: SimTime::ZERO,
        }
    }

    /// Accumulates the time integrals up to `now` (clipped to `until`, the end of arrivals), given
    /// the levels that held since the last touch.
    #[inline]
    pub fn touch(&mut self, now: SimTime, until: SimTime, busy: u32, queued: usize) {
        let t = now.min(until);
        if t > self.last_touch {
            let dt = (t.0 - self.last_touch.0) as u128;
            self.busy_area += busy as u128 * dt;
            self.queue_area += queued as u128 * dt;
            self.last_touch = t;
        }
    }
}

impl Default for ServiceCounters {
    fn default() -> Self {
        Self::new()
    }
}

/// Counters for one call edge.
#[derive(Debug, Default, Clone)]
pub struct EdgeCounters {
    pub attempts: u64,
    pub retries: u64,
    pub retries_throttled: u64,
    pub timeouts: u64,
    pub rejects: u64,
    pub errors: u64,
    pub successes: u64,
    /// Calls that failed before sending because the caller's deadline had already passed.
    pub deadline_exhausted: u64,
}

/// Everything a run counts.
#[derive(Debug)]
pub struct Recorder {
    pub users: UserCounters,
    pub services: Vec<ServiceCounters>,
    pub edges: Vec<EdgeCounters>,
}

impl Recorder {
    /// Counters for a run with `services` services, `edges` edges and `seconds` arrival seconds.
    pub fn new(services: usize, edges: usize, seconds: usize) -> Self {
        Recorder {
            users: UserCounters {
                by_window: [0; 3],
                succeeded_by_window: [0; 3],
                per_second_arrivals: vec![0; seconds],
                per_second_succeeded: vec![0; seconds],
                succeeded: 0,
                failed: 0,
                client_attempts: 0,
                success_latency: MicrosHistogram::new(),
                failed_latency: MicrosHistogram::new(),
            },
            services: (0..services).map(|_| ServiceCounters::new()).collect(),
            edges: vec![EdgeCounters::default(); edges],
        }
    }

    /// A user request arrived at `at` in `window`.
    #[inline]
    pub fn user_arrived(&mut self, at: SimTime, window: Window) {
        self.users.by_window[window as usize] += 1;
        if let Some(c) = self
            .users
            .per_second_arrivals
            .get_mut(at.whole_secs() as usize)
        {
            *c += 1;
        }
    }

    /// A user request that arrived at `arrival` ended at `now`.
    #[inline]
    pub fn user_ended(&mut self, arrival: SimTime, now: SimTime, window: Window, ok: bool) {
        let latency = now - arrival;
        if ok {
            self.users.succeeded += 1;
            self.users.succeeded_by_window[window as usize] += 1;
            if let Some(c) = self
                .users
                .per_second_succeeded
                .get_mut(arrival.whole_secs() as usize)
            {
                *c += 1;
            }
            record_micros(&mut self.users.success_latency, latency);
        } else {
            self.users.failed += 1;
            record_micros(&mut self.users.failed_latency, latency);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_histogram_equals_direct_hdr_recording() {
        let mut direct = latency_histogram();
        let mut fast = MicrosHistogram::new();
        let durations = (0..5_000u64)
            .map(|i| SimDuration(i * i * 7_919 % 50_000_000_000))
            .chain([SimDuration::ZERO, SimDuration(999), SimDuration(u64::MAX)]);
        for d in durations {
            record_micros(&mut fast, d);
            let us = (d.0 / 1_000).clamp(1, direct.high());
            direct.record(us).unwrap();
        }
        let merged = fast.histogram();
        assert_eq!(merged, direct);
        for q in [0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), direct.value_at_quantile(q));
        }
    }
}
