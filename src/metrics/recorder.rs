//! Live counters of a run. Owns what is counted while events happen: user requests by window, by
//! arrival second and (for time series) by arrival bin, latency histograms, and the per-service
//! and per-edge counter families declared in [`super::counters`]. It knows nothing of time series:
//! the series sampler reads it. Everything here is O(1) per update and O(1) in the number of
//! requests (per-second and per-bin counters are O(seconds)).

use super::counters::{EdgeCounters, ServiceCounters};
use crate::ix::ClassIx;
use hdrhistogram::Histogram;

use super::histogram::MicrosHistogram;
use crate::scenario::metrics::Window;
use crate::time::{SimDuration, SimTime};

/// Which part of the run a user request arrived in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrivalWindow {
    /// Before the fault window, `[0, from)`; every request of a run without faults.
    Before = 0,
    /// Inside the fault window, `[from, to)`.
    During = 1,
    /// After the fault window, `[to, duration)`.
    After = 2,
}

/// Counters for user requests.
#[derive(Debug)]
pub struct UserCounters {
    /// Requests that arrived, by [`ArrivalWindow`] (indexed by its value).
    pub by_window: [u64; 3],
    /// Requests that succeeded, by the window they arrived in.
    pub succeeded_by_window: [u64; 3],
    /// Requests that arrived, per whole second of arrival time (for R2's `recovery_s`).
    pub per_second_arrivals: Vec<u32>,
    /// Requests that succeeded, per whole second of their arrival time.
    pub per_second_succeeded: Vec<u32>,
    /// Requests that ended with success.
    pub succeeded: u64,
    /// Requests that ended with failure (unfinished ones are neither).
    pub failed: u64,
    /// Client attempts sent: first tries and client retries.
    pub client_attempts: u64,
    /// End − arrival of the succeeded requests.
    pub success_latency: MicrosHistogram,
    /// End − arrival of the failed requests.
    pub failed_latency: MicrosHistogram,
    /// Ended requests by the time-series bin they arrived in, when time series were asked for.
    pub by_arrival_bin: Option<OutcomesByArrival>,
}

/// User requests that ended, by the bin of simulated time they arrived in.
#[derive(Clone, Debug)]
pub struct OutcomesByArrival {
    resolution: SimDuration,
    /// Per bin: requests that succeeded.
    pub succeeded: Vec<u32>,
    /// Per bin: requests that failed.
    pub failed: Vec<u32>,
    /// Per bin, the latency of its succeeded requests in µs (HDR, 2 significant digits, sized to
    /// the bin's longest latency; `None` for a bin without success), for the latency quantile
    /// series; always empty when latencies are not kept ([`OutcomesByArrival::counts_only`]).
    pub latency: Vec<Option<Histogram<u32>>>,
    /// Whether `latency` is kept.
    keep_latency: bool,
}

impl OutcomesByArrival {
    /// Bins of `resolution` (positive).
    pub fn new(resolution: SimDuration) -> Self {
        assert!(!resolution.is_zero(), "a bin width must be positive");
        OutcomesByArrival {
            resolution,
            succeeded: Vec::new(),
            failed: Vec::new(),
            latency: Vec::new(),
            keep_latency: true,
        }
    }

    /// Bins of `resolution` that count outcomes without their latencies (a request class's
    /// bins: its series have no latency quantiles, so memory stays two counters per bin).
    pub fn counts_only(resolution: SimDuration) -> Self {
        OutcomesByArrival {
            keep_latency: false,
            ..Self::new(resolution)
        }
    }

    /// The bin width.
    pub fn resolution(&self) -> SimDuration {
        self.resolution
    }

    fn record(&mut self, arrival: SimTime, ok: bool, latency: SimDuration) {
        let bin = (arrival.0 / self.resolution.0) as usize;
        if ok && self.keep_latency {
            if self.latency.len() <= bin {
                self.latency.resize(bin + 1, None);
            }
            let h = self.latency[bin]
                .get_or_insert_with(|| Histogram::new(2).expect("2 significant digits are valid"));
            // Auto-resizing: a latency is never out of range.
            let _ = h.record((latency.0 / 1_000).max(1));
        }
        let v = if ok {
            &mut self.succeeded
        } else {
            &mut self.failed
        };
        if v.len() <= bin {
            v.resize(bin + 1, 0);
        }
        v[bin] += 1;
    }
}

/// User requests arriving in one named measurement window (`metrics.windows`).
#[derive(Clone, Debug)]
pub struct WindowCounts {
    /// The window: its name and its span of arrival time.
    pub window: Window,
    /// User requests that arrived in it.
    pub arrivals: u64,
    /// Of those, requests that succeeded.
    pub succeeded: u64,
    /// Of those, requests that failed.
    pub failed: u64,
    /// End − arrival of its succeeded requests.
    pub success_latency: MicrosHistogram,
}

/// Everything a run counts.
#[derive(Debug)]
pub struct Recorder {
    /// User requests of every class together.
    pub users: UserCounters,
    /// Per request class, with more than one class (empty otherwise: the total is the class).
    pub classes: Vec<UserCounters>,
    /// Per service, by service index.
    pub services: Vec<ServiceCounters>,
    /// Per call edge, by edge index.
    pub edges: Vec<EdgeCounters>,
    /// The scenario's measurement windows (empty without `metrics.windows`: nothing to do).
    pub windows: Vec<WindowCounts>,
}

impl UserCounters {
    /// Counters over `seconds` arrival seconds.
    pub fn new(seconds: usize) -> Self {
        UserCounters {
            by_window: [0; 3],
            succeeded_by_window: [0; 3],
            per_second_arrivals: vec![0; seconds],
            per_second_succeeded: vec![0; seconds],
            succeeded: 0,
            failed: 0,
            client_attempts: 0,
            success_latency: MicrosHistogram::new(),
            failed_latency: MicrosHistogram::new(),
            by_arrival_bin: None,
        }
    }

    /// A user request arrived at `at` in `window`.
    #[inline]
    fn arrived(&mut self, at: SimTime, window: ArrivalWindow) {
        self.by_window[window as usize] += 1;
        if let Some(c) = self.per_second_arrivals.get_mut(at.whole_secs() as usize) {
            *c += 1;
        }
    }

    /// A user request that arrived at `arrival` ended at `now`.
    #[inline]
    fn ended(&mut self, arrival: SimTime, now: SimTime, window: ArrivalWindow, ok: bool) {
        let latency = now - arrival;
        if ok {
            self.succeeded += 1;
            self.succeeded_by_window[window as usize] += 1;
            if let Some(c) = self
                .per_second_succeeded
                .get_mut(arrival.whole_secs() as usize)
            {
                *c += 1;
            }
            self.success_latency.record(latency);
        } else {
            self.failed += 1;
            self.failed_latency.record(latency);
        }
        if let Some(bins) = &mut self.by_arrival_bin {
            bins.record(arrival, ok, latency);
        }
    }
}

impl Recorder {
    /// Counters for a run with `classes` request classes, `services` services, `edges` edges and
    /// `seconds` arrival seconds.
    pub fn new(classes: usize, services: usize, edges: usize, seconds: usize) -> Self {
        let per_class = if classes > 1 { classes } else { 0 };
        Recorder {
            users: UserCounters::new(seconds),
            classes: (0..per_class).map(|_| UserCounters::new(seconds)).collect(),
            services: (0..services).map(|_| ServiceCounters::default()).collect(),
            edges: vec![EdgeCounters::default(); edges],
            windows: Vec::new(),
        }
    }

    /// Also records each service's latency of completed requests (for `metrics.quantiles`).
    pub fn with_service_latency(mut self, on: bool) -> Self {
        if on {
            for s in &mut self.services {
                s.completed_latency = Some(MicrosHistogram::new());
            }
        }
        self
    }

    /// Also counts user requests by the named measurement windows of `metrics.windows`.
    pub fn with_windows(mut self, windows: &[Window]) -> Self {
        self.windows = windows
            .iter()
            .map(|w| WindowCounts {
                window: w.clone(),
                arrivals: 0,
                succeeded: 0,
                failed: 0,
                success_latency: MicrosHistogram::new(),
            })
            .collect();
        self
    }

    #[cold]
    fn window_arrived(&mut self, at: SimTime) {
        for w in self.windows.iter_mut().filter(|w| w.window.contains(at)) {
            w.arrivals += 1;
        }
    }

    #[cold]
    fn window_ended(&mut self, arrival: SimTime, latency: SimDuration, ok: bool) {
        for w in self
            .windows
            .iter_mut()
            .filter(|w| w.window.contains(arrival))
        {
            if ok {
                w.succeeded += 1;
                w.success_latency.record(latency);
            } else {
                w.failed += 1;
            }
        }
    }

    /// Also counts ended user requests by arrival bin of `resolution` (for time series), and
    /// those of each request class without their latencies.
    pub fn with_arrival_bins(mut self, resolution: SimDuration) -> Self {
        self.users.by_arrival_bin = Some(OutcomesByArrival::new(resolution));
        for c in &mut self.classes {
            c.by_arrival_bin = Some(OutcomesByArrival::counts_only(resolution));
        }
        self
    }

    /// A user request of `class` arrived at `at` in `window`.
    #[inline]
    pub fn user_arrived(&mut self, class: ClassIx, at: SimTime, window: ArrivalWindow) {
        self.users.arrived(at, window);
        if let Some(c) = self.classes.get_mut(class.index()) {
            c.arrived(at, window);
        }
        if !self.windows.is_empty() {
            self.window_arrived(at);
        }
    }

    /// A user request of `class` sent an attempt (its first or a client retry).
    #[inline]
    pub fn client_attempt(&mut self, class: ClassIx) {
        self.users.client_attempts += 1;
        if let Some(c) = self.classes.get_mut(class.index()) {
            c.client_attempts += 1;
        }
    }

    /// A user request of `class` that arrived at `arrival` ended at `now`.
    #[inline]
    pub fn user_ended(
        &mut self,
        class: ClassIx,
        arrival: SimTime,
        now: SimTime,
        window: ArrivalWindow,
        ok: bool,
    ) {
        self.users.ended(arrival, now, window, ok);
        if let Some(c) = self.classes.get_mut(class.index()) {
            c.ended(arrival, now, window, ok);
        }
        if !self.windows.is_empty() {
            self.window_ended(arrival, now - arrival, ok);
        }
    }
}
