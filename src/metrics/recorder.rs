//! Live counters of a run. Owns what is counted while events happen: user requests by window and
//! by arrival second, latency histograms, and per-service and per-edge counters and time
//! integrals; and, when asked for, the time-series bins ([`SeriesRecorder`]) sampled from them.
//! Everything here is O(1) per update.

use hdrhistogram::Histogram;

use super::timeseries::{SeriesRecorder, ServiceLevel};
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

/// Records `d` into a microsecond histogram (clamped to its range).
#[inline]
pub fn record_micros(h: &mut Histogram<u64>, d: SimDuration) {
    let us = (d.0 / 1_000).clamp(1, h.high());
    h.record(us).expect("clamped into range");
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
    pub success_latency: Histogram<u64>,
    pub failed_latency: Histogram<u64>,
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
    pub rejected_outage: u64,
    pub failed_by_fault: u64,
    pub dropped_expired: u64,
    pub dropped_queue_time: u64,
    pub dropped_codel: u64,
    pub cancelled: u64,
    pub max_queue: u64,
    /// Admitted requests that had to queue.
    pub enqueued: u64,
    /// Requests that started work, and the sum of their queueing times.
    pub started: u64,
    pub wait_sum_ns: u128,
    pub queue_wait: Histogram<u64>,
    /// Requests that left the service (completed or dropped), and their time in it.
    pub departed: u64,
    pub sojourn_sum_ns: u128,
    /// Completions in the call tree of a succeeded user request.
    pub useful: u64,
    /// ∫ busy slots dt and ∫ queue length dt over the arrival period, in slot-nanoseconds.
    pub busy_area: u128,
    pub queue_area: u128,
    pub last_touch: SimTime,
    /// Requests admitted during the arrival period, and the sum of their admission instants.
    pub admitted_in_period: u64,
    pub admitted_at_sum_ns: u128,
    /// Requests that left during the arrival period, and the sum of their departure instants.
    pub departed_in_period: u64,
    pub departed_at_sum_ns: u128,
    /// The same integrals over the whole run, unclipped, with the peaks since the last
    /// time-series sample.
    pub gauge: Gauge,
}

/// Levels of a service integrated over the whole run, for per-bin means and maxima.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gauge {
    pub last: SimTime,
    pub busy_area: u128,
    pub queue_area: u128,
    /// Highest levels passed to `touch` since the last sample.
    pub busy_peak: u32,
    pub queue_peak: u64,
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
            rejected_outage: 0,
            failed_by_fault: 0,
            dropped_expired: 0,
            dropped_queue_time: 0,
            dropped_codel: 0,
            cancelled: 0,
            max_queue: 0,
            enqueued: 0,
            started: 0,
            wait_sum_ns: 0,
            queue_wait: latency_histogram(),
            departed: 0,
            sojourn_sum_ns: 0,
            useful: 0,
            busy_area: 0,
            queue_area: 0,
            last_touch: SimTime::ZERO,
            admitted_in_period: 0,
            admitted_at_sum_ns: 0,
            departed_in_period: 0,
            departed_at_sum_ns: 0,
            gauge: Gauge::default(),
        }
    }

    /// A request was admitted at `now`; `until` is the end of arrivals.
    #[inline]
    pub fn admit(&mut self, now: SimTime, until: SimTime) {
        self.admitted += 1;
        if now < until {
            self.admitted_in_period += 1;
            self.admitted_at_sum_ns += now.0 as u128;
        }
    }

    /// A request admitted at `admitted_at` left at `now` (completed or dropped).
    #[inline]
    pub fn depart(&mut self, now: SimTime, admitted_at: SimTime, until: SimTime) {
        self.departed += 1;
        self.sojourn_sum_ns += (now - admitted_at).0 as u128;
        if now < until {
            self.departed_in_period += 1;
            self.departed_at_sum_ns += now.0 as u128;
        }
    }

    /// Σ over requests admitted before `until` of the time they spent in the service before
    /// `until`, in nanoseconds: departures before `until` count up to their departure, the rest up
    /// to `until`. Equals the integral of the number in system over `[0, until)` (Little's law on a
    /// finite window that starts empty).
    pub fn sojourn_in_period_ns(&self, until: SimTime) -> u128 {
        let still_in = (self.admitted_in_period - self.departed_in_period) as u128;
        self.departed_at_sum_ns + still_in * until.0 as u128 - self.admitted_at_sum_ns
    }

    /// Accumulates the time integrals up to `now` (clipped to `until`, the end of arrivals), given
    /// the levels that held since the last touch. Called before every change of either level.
    #[inline]
    pub fn touch(&mut self, now: SimTime, until: SimTime, busy: u32, queued: usize) {
        let g = &mut self.gauge;
        if now > g.last {
            let dt = (now.0 - g.last.0) as u128;
            g.busy_area += busy as u128 * dt;
            g.queue_area += queued as u128 * dt;
            g.last = now;
        }
        g.busy_peak = g.busy_peak.max(busy);
        g.queue_peak = g.queue_peak.max(queued as u64);
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
    pub retries_budget_denied: u64,
    pub throttled_locally: u64,
    pub rejected_circuit_open: u64,
    pub circuit_opened: u64,
    pub circuit_open_ns: u64,
    pub hedges: u64,
    pub hedges_throttled: u64,
    pub cancels_sent: u64,
    pub pushback_honored: u64,
    pub pushback_no_retry: u64,
}

/// Everything a run counts.
#[derive(Debug)]
pub struct Recorder {
    pub users: UserCounters,
    pub services: Vec<ServiceCounters>,
    pub edges: Vec<EdgeCounters>,
    /// Time-series bins, when the run was asked for them.
    pub series: Option<SeriesRecorder>,
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
                success_latency: latency_histogram(),
                failed_latency: latency_histogram(),
            },
            services: (0..services).map(|_| ServiceCounters::new()).collect(),
            edges: vec![EdgeCounters::default(); edges],
            series: None,
        }
    }

    /// Closes every time-series bin that ends at or before `now`, reading the live levels through
    /// `level` (per service) and `tokens` (per edge). Returns the next boundary to call back at
    /// (`SimTime::NEVER` without time series).
    pub fn sample_until(
        &mut self,
        now: SimTime,
        level: &dyn Fn(usize) -> ServiceLevel,
        tokens: &dyn Fn(usize) -> Option<f64>,
    ) -> SimTime {
        let Some(series) = &mut self.series else {
            return SimTime::NEVER;
        };
        while series.next_boundary() <= now {
            series.sample(&self.users, &mut self.services, &self.edges, level, tokens);
        }
        series.next_boundary()
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
        if let Some(series) = &mut self.series {
            series.user_ended(arrival, ok);
        }
    }
}
