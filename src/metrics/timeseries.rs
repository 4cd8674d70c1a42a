//! Time series of a run: what happened in each bin of simulated time (1 s unless asked otherwise).
//! Owns [`SeriesRecorder`], the live bins a run fills, and [`TimeSeries`], the finished columns
//! the CSV report and the plots read. Memory is proportional to bins × series, never to requests.
//!
//! How bins are filled without touching the places where things are counted: the run loop calls
//! [`SeriesRecorder::sample_until`] before the first event at or after each bin boundary, which
//! snapshots every cumulative counter of the [`Recorder`] (the bin's count is the difference of
//! two snapshots) and reads what only the simulation holds: each service's levels through its
//! [`LevelMeter`](super::levels::LevelMeter) (time averages and peaks over the bin) and the
//! edges' tokens. The recorder does not know the series exist. Only what is counted *by arrival
//! time of the user request* (succeeded and failed) is binned by the recorder at the moment the
//! request ends.
//!
//! Series, by dotted name (a bin `[t, t + resolution)` is labelled by its start `t`):
//!
//! | series | per bin |
//! |---|---|
//! | `users.arrivals` | user requests arriving in the bin |
//! | `users.succeeded`, `users.failed` | of those, how many ended in success / failure (by *arrival* bin) |
//! | `users.success_rate` | `succeeded / arrivals` (absent where no request arrived) |
//! | `users.client_attempts` | client attempts sent in the bin (first tries and client retries) |
//! | `users.success_latency_<p>_s` | latency of the requests arriving in the bin that succeeded, at each quantile of `metrics.quantiles` (default `p50`, `p99`): nearest-rank over an HDR histogram of 2 significant digits (the bucket's upper edge, at most 1 % above); absent where none succeeded |
//! | `services.<s>.<counter>` | each service counter declared `series` in [`super::counters`] (`arrivals`, `admitted`, …), counted when it happens |
//! | `services.<s>.queue_mean`, `queue_max` | requests queued: time average over the bin, highest level in it |
//! | `services.<s>.busy_mean`, `busy_max` | busy slots: time average over the bin, highest level in it |
//! | `services.<s>.attempts_per_request` | `services.<s>.arrivals / users.arrivals` (amplification; absent where no user request arrived) |
//! | `calls.<a>-><b>.<counter>` | each edge counter declared `series` in [`super::counters`] (`attempts`, `retries`, …), counted when it happens |
//! | `calls.<a>-><b>.tokens` | gRFC A6 tokens at the end of the bin (edges with a retry throttle only) |
//! | `services.<s>.rate_limited`, `calls.<a>-><b>.rate_limited` | requests refused by a `rate_limit` in the bin (where one is configured; after every column above) |
//! | `services.<s>.limited`, `services.<s>.limit`, and the same under `calls.<a>-><b>.` | requests refused by a `concurrency_limit` in the bin, and its limit at the end of the bin (where one is configured; last) |
//! | `services.<s>.replicas`, `services.<s>.replicas_ready` | an autoscaled service's replicas started (warming up or ready) and ready at the end of the bin (with `autoscale` only; after its `limit`) |
//! | `classes.<c>.arrivals`, `succeeded`, `failed`, `success_rate` | as `users.*`, for request class `c` (more than one class only; right after `users.*`; no latency: a class's bins keep two counters) |
//! | `services.<s>.replica.<k>.busy_mean`, `queue_mean` | replica `k`'s levels, time averages over the bin (services of 2 to [`MAX_REPLICA_SERIES`] replicas; last) |
//! | `services.<s>.replica.{min,mean,max}.busy_mean`, `queue_mean` | over the replicas, for a service of more (last) |
//!
//! Bins cover `[0, max(duration, end of run))`, rounded up to whole bins; after the run ends the
//! levels it ended with are carried to the end of the last bin.

use indexmap::IndexMap;

use super::counters::{Counter, EdgeCounters, ServiceCounters};
use super::levels::{LevelAreas, LevelSample};
use super::recorder::Recorder;
use crate::scenario::Scenario;
use crate::time::{SimDuration, SimTime};

/// Per-service levels of a bin, in the order of their series names.
const SERVICE_LEVELS: [&str; 4] = ["queue_mean", "queue_max", "busy_mean", "busy_max"];

/// A request class's series, in order (with more than one class).
const CLASS_SERIES: [&str; 4] = ["arrivals", "succeeded", "failed", "success_rate"];

/// Each replica's levels of a bin, in the order of their series names.
const REPLICA_LEVELS: [&str; 2] = ["busy_mean", "queue_mean"];

/// A service of up to this many replicas has series per replica
/// (`services.<s>.replica.<k>.busy_mean`, …); one of more has the lowest, mean and highest over
/// its replicas instead (`services.<s>.replica.min.busy_mean`, …), so that memory grows with
/// services, not with replicas.
pub const MAX_REPLICA_SERIES: u32 = 16;

/// The statistics over replicas of a service of more than [`MAX_REPLICA_SERIES`] replicas.
const REPLICA_STATS: [&str; 3] = ["min", "mean", "max"];

/// A service of more than one replica, as its replica series read it.
#[derive(Debug)]
struct ReplicaSeries {
    service: usize,
    /// Replicas the service may ever have (autoscaled ones not started count, at level 0).
    replicas: u32,
    /// Each replica's cumulative areas at the last boundary.
    prev: Vec<LevelAreas>,
    /// Each replica's areas at the boundary being sampled (scratch).
    now: Vec<LevelAreas>,
}

impl ReplicaSeries {
    /// Whether the series are per replica (else min, mean and max over them).
    fn each(&self) -> bool {
        self.replicas <= MAX_REPLICA_SERIES
    }

    /// The series' labels between `replica.` and the level: `0`, `1`, … or `min`, `mean`, `max`.
    fn labels(&self) -> Vec<String> {
        if self.each() {
            (0..self.replicas).map(|k| k.to_string()).collect()
        } else {
            REPLICA_STATS.iter().map(|s| (*s).to_owned()).collect()
        }
    }

    /// How many values a bin adds.
    fn width(&self) -> usize {
        self.labels().len() * REPLICA_LEVELS.len()
    }
}

/// The declared counters of a family that have time series, in declaration order.
fn series_counters(family: &'static [Counter]) -> impl Iterator<Item = &'static str> + Clone {
    family.iter().filter(|c| c.in_series()).map(|c| c.name)
}

/// The values of the counters [`series_counters`] names, from all of a family's `values`.
fn series_values<const N: usize>(
    family: &'static [Counter],
    values: [u64; N],
) -> impl Iterator<Item = u64> {
    family
        .iter()
        .zip(values)
        .filter(|(c, _)| c.in_series())
        .map(|(_, v)| v)
}

/// Reads service `s`'s levels at a bin boundary, and with a list, each of its replicas' areas
/// into it (in replica order); see [`SeriesRecorder::sample_until`].
pub type LevelReader<'a> =
    dyn FnMut(usize, SimTime, Option<&mut Vec<LevelAreas>>) -> LevelSample + 'a;

/// The bins of a run in progress.
#[derive(Debug)]
pub struct SeriesRecorder {
    resolution: SimDuration,
    /// End of the next bin to sample.
    next: SimTime,
    /// Bins sampled so far.
    bins: usize,
    services: Vec<String>,
    edges: Vec<String>,
    /// Which edges have a token bucket (and so a `tokens` series).
    throttled: Vec<bool>,
    /// How many counters of a service, and of an edge, have series.
    service_counts: usize,
    edge_counts: usize,
    /// Cumulative counters at the last boundary, in sampling order.
    prev: Vec<u64>,
    /// Cumulative ∫busy dt and ∫queue dt per service at the last boundary.
    prev_area: Vec<(u128, u128)>,
    /// Sampled values, one row of `width` per bin.
    rows: Vec<f64>,
    width: usize,
    arrivals_end: SimTime,
    /// Columns that exist only where a protection is configured (gated counters, limits), after
    /// all the others, with the cumulative value of each counter at the last boundary.
    extras: Vec<(String, Extra)>,
    extra_prev: Vec<u64>,
    /// The quantiles of the `users.success_latency_<p>_s` series.
    quantiles: Vec<f64>,
    /// The request classes (with more than one; empty otherwise) and their cumulative arrivals
    /// at the last boundary.
    classes: Vec<String>,
    class_prev: Vec<u64>,
    /// The services of more than one replica.
    replicas: Vec<ReplicaSeries>,
}

/// Where a column that exists only for a configured protection reads its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    /// Counter `k` of service `s`'s family (its increase per bin).
    ServiceCount(usize, usize),
    /// Counter `k` of edge `e`'s family.
    EdgeCount(usize, usize),
    /// The concurrency limit of service `s` at the end of the bin.
    ServiceLimit(usize),
    /// The concurrency limit of edge `e` at the end of the bin.
    EdgeLimit(usize),
    /// Replicas started (warming up or ready) of autoscaled service `s` at the end of the bin.
    ServiceReplicas(usize),
    /// Of those, replicas ready (taking traffic).
    ServiceReplicasReady(usize),
}

/// The extra columns of a run of `sc`, in order.
fn extras_of(sc: &Scenario) -> Vec<(String, Extra)> {
    use super::counters::{CounterKind, edge_shows, service_shows};
    let mut out = Vec::new();
    for (i, s) in sc.services.iter().enumerate() {
        for (k, c) in ServiceCounters::COUNTERS.iter().enumerate() {
            if c.kind == CounterKind::Gated && service_shows(s, c.name) {
                out.push((
                    format!("services.{}.{}", s.name, c.name),
                    Extra::ServiceCount(i, k),
                ));
            }
        }
        if s.concurrency_limit.is_some() {
            out.push((format!("services.{}.limit", s.name), Extra::ServiceLimit(i)));
        }
        if s.autoscale.is_some() {
            out.push((
                format!("services.{}.replicas", s.name),
                Extra::ServiceReplicas(i),
            ));
            out.push((
                format!("services.{}.replicas_ready", s.name),
                Extra::ServiceReplicasReady(i),
            ));
        }
    }
    for (i, e) in sc.edges.iter().enumerate() {
        for (k, c) in EdgeCounters::COUNTERS.iter().enumerate() {
            if c.kind == CounterKind::Gated && edge_shows(e, c.name) {
                out.push((
                    format!("calls.{}.{}", e.name, c.name),
                    Extra::EdgeCount(i, k),
                ));
            }
        }
        if e.concurrency_limit.is_some() {
            out.push((format!("calls.{}.limit", e.name), Extra::EdgeLimit(i)));
        }
    }
    out
}

impl SeriesRecorder {
    /// Bins of `resolution` for a run of `sc` (`resolution` must be positive). The run's
    /// [`Recorder`] must count outcomes by arrival bin of the same resolution
    /// ([`Recorder::with_arrival_bins`]).
    pub fn new(sc: &Scenario, resolution: SimDuration) -> Self {
        assert!(
            !resolution.is_zero(),
            "a time-series resolution must be positive"
        );
        let services: Vec<String> = sc.services.iter().map(|s| s.name.clone()).collect();
        let edges: Vec<String> = sc.edges.iter().map(|e| e.name.clone()).collect();
        let throttled: Vec<bool> = sc.edges.iter().map(|e| e.throttle.is_some()).collect();
        let service_counts = series_counters(ServiceCounters::COUNTERS).count();
        let edge_counts = series_counters(EdgeCounters::COUNTERS).count();
        let counters = 2 + services.len() * service_counts + edges.len() * edge_counts;
        let extras = extras_of(sc);
        let classes: Vec<String> = if sc.classes.len() > 1 {
            sc.classes.iter().map(|c| c.name.clone()).collect()
        } else {
            Vec::new()
        };
        let replicas: Vec<ReplicaSeries> = sc
            .services
            .iter()
            .enumerate()
            .filter(|(_, s)| s.max_units() > 1)
            .map(|(service, s)| ReplicaSeries {
                service,
                replicas: s.max_units(),
                prev: vec![LevelAreas::default(); s.max_units() as usize],
                now: Vec::with_capacity(s.max_units() as usize),
            })
            .collect();
        let width = counters
            + services.len() * SERVICE_LEVELS.len()
            + throttled.iter().filter(|&&t| t).count()
            + classes.len()
            + replicas.iter().map(ReplicaSeries::width).sum::<usize>()
            + extras.len();
        SeriesRecorder {
            resolution,
            next: SimTime(resolution.0),
            bins: 0,
            prev_area: vec![(0, 0); services.len()],
            services,
            edges,
            throttled,
            service_counts,
            edge_counts,
            prev: vec![0; counters],
            rows: Vec::new(),
            width,
            arrivals_end: SimTime(sc.duration.0),
            extra_prev: vec![0; extras.len()],
            extras,
            quantiles: sc.metrics.series_quantiles().to_vec(),
            class_prev: vec![0; classes.len()],
            classes,
            replicas,
        }
    }

    /// The bin width.
    pub fn resolution(&self) -> SimDuration {
        self.resolution
    }

    /// The end of the next bin to sample: the run loop samples before the first event at or
    /// after it.
    #[inline]
    pub fn next_boundary(&self) -> SimTime {
        self.next
    }

    /// Closes every bin that ends at or before `now`, reading the counters of `rec`, each
    /// service's levels through `levels` (service index, boundary, and for a service of more
    /// than one replica a list to fill with each replica's areas, in replica order) and each
    /// edge's tokens through
    /// `tokens`, and each configured concurrency limit through `limit` (an [`Extra`] limit,
    /// boundary). Returns the next boundary to call back at.
    pub fn sample_until(
        &mut self,
        now: SimTime,
        rec: &Recorder,
        levels: &mut LevelReader<'_>,
        tokens: &dyn Fn(usize) -> Option<f64>,
        limit: &mut dyn FnMut(Extra, SimTime) -> f64,
    ) -> SimTime {
        while self.next <= now {
            self.sample(rec, levels, tokens);
            self.sample_extras(rec, limit);
        }
        self.next
    }

    /// The extra columns of the bin just closed (ending at `self.next - resolution`).
    fn sample_extras(&mut self, rec: &Recorder, limit: &mut dyn FnMut(Extra, SimTime) -> f64) {
        if self.extras.is_empty() {
            return;
        }
        let boundary = SimTime(self.next.0 - self.resolution.0);
        for (j, (_, x)) in self.extras.iter().enumerate() {
            let v = match *x {
                Extra::ServiceCount(s, k) => Some(rec.services[s].values()[k]),
                Extra::EdgeCount(e, k) => Some(rec.edges[e].values()[k]),
                Extra::ServiceLimit(_)
                | Extra::EdgeLimit(_)
                | Extra::ServiceReplicas(_)
                | Extra::ServiceReplicasReady(_) => None,
            };
            match v {
                Some(cum) => {
                    self.rows.push((cum - self.extra_prev[j]) as f64);
                    self.extra_prev[j] = cum;
                }
                None => self.rows.push(limit(*x, boundary)),
            }
        }
    }

    /// Closes the next bin: every counter and level is as it stands at its end boundary.
    fn sample(
        &mut self,
        rec: &Recorder,
        levels: &mut LevelReader<'_>,
        tokens: &dyn Fn(usize) -> Option<f64>,
    ) {
        let boundary = self.next;
        let res = self.resolution.0 as f64;
        let start = self.rows.len();
        let mut i = 0;
        let mut count = |rows: &mut Vec<f64>, cum: u64| {
            rows.push((cum - self.prev[i]) as f64);
            self.prev[i] = cum;
            i += 1;
        };
        count(&mut self.rows, rec.users.by_window.iter().sum());
        count(&mut self.rows, rec.users.client_attempts);
        for c in &rec.services {
            for v in series_values(ServiceCounters::COUNTERS, c.values()) {
                count(&mut self.rows, v);
            }
        }
        for c in &rec.edges {
            for v in series_values(EdgeCounters::COUNTERS, c.values()) {
                count(&mut self.rows, v);
            }
        }
        let mut r = 0;
        for s in 0..self.services.len() {
            let now = match self.replicas.get_mut(r).filter(|x| x.service == s) {
                Some(x) => {
                    x.now.clear();
                    r += 1;
                    levels(s, boundary, Some(&mut x.now))
                }
                None => levels(s, boundary, None),
            };
            let (busy_area, queue_area) = (now.areas.busy, now.areas.queue);
            let (prev_busy, prev_queue) = self.prev_area[s];
            self.prev_area[s] = (busy_area, queue_area);
            self.rows.push((queue_area - prev_queue) as f64 / res);
            self.rows.push(now.queue_max as f64);
            self.rows.push((busy_area - prev_busy) as f64 / res);
            self.rows.push(now.busy_max as f64);
        }
        for (e, &throttled) in self.throttled.iter().enumerate() {
            if throttled {
                self.rows.push(tokens(e).unwrap_or(f64::NAN));
            }
        }
        for (c, prev) in rec.classes.iter().zip(&mut self.class_prev) {
            let cum: u64 = c.by_window.iter().sum();
            self.rows.push((cum - *prev) as f64);
            *prev = cum;
        }
        for x in &mut self.replicas {
            Self::sample_replicas(x, res, &mut self.rows);
        }
        debug_assert_eq!(self.rows.len() - start + self.extras.len(), self.width);
        self.bins += 1;
        self.next = boundary + self.resolution;
    }

    /// The replica series of one service for the bin just read (`x.now`): each replica's busy
    /// and queue means, or their lowest, mean and highest over the replicas.
    fn sample_replicas(x: &mut ReplicaSeries, res: f64, rows: &mut Vec<f64>) {
        debug_assert_eq!(x.now.len(), x.prev.len());
        let means = x.prev.iter_mut().zip(&x.now).map(|(prev, now)| {
            let m = [
                (now.busy - prev.busy) as f64 / res,
                (now.queue - prev.queue) as f64 / res,
            ];
            *prev = *now;
            m
        });
        if x.replicas <= MAX_REPLICA_SERIES {
            for m in means {
                rows.extend(m);
            }
            return;
        }
        let n = x.replicas as f64;
        let (mut lo, mut sum, mut hi) = ([f64::INFINITY; 2], [0.0; 2], [f64::NEG_INFINITY; 2]);
        for m in means {
            for l in 0..2 {
                lo[l] = lo[l].min(m[l]);
                sum[l] += m[l];
                hi[l] = hi[l].max(m[l]);
            }
        }
        for stat in [lo, sum.map(|v| v / n), hi] {
            rows.extend(stat);
        }
    }

    /// Bins a run that ended at `end` must have: up to the end of the run and at least the whole
    /// arrival period.
    pub(crate) fn bins_for(&self, end: SimTime) -> usize {
        let until = end.max(self.arrivals_end).0;
        until.div_ceil(self.resolution.0).max(1) as usize
    }

    /// The finished columns, in the order of the module's table; `rec` is the run's recorder,
    /// for the outcomes by arrival bin.
    pub fn finish(self, rec: &Recorder) -> TimeSeries {
        let bins = self.bins;
        let col = |j: usize| -> Vec<Option<f64>> {
            (0..bins)
                .map(|b| Some(self.rows[b * self.width + j]).filter(|v| v.is_finite()))
                .collect()
        };
        let by_arrival = |v: &[u32]| -> Vec<Option<f64>> {
            (0..bins)
                .map(|b| Some(v.get(b).copied().unwrap_or(0) as f64))
                .collect()
        };
        let ratio = |num: &[Option<f64>], den: &[Option<f64>]| -> Vec<Option<f64>> {
            num.iter()
                .zip(den)
                .map(|(n, d)| match (n, d) {
                    (Some(n), Some(d)) if *d > 0.0 => Some(n / d),
                    _ => None,
                })
                .collect()
        };
        let outcomes = rec.users.by_arrival_bin.as_ref();
        debug_assert_eq!(outcomes.map(|o| o.resolution()), Some(self.resolution));
        let (succeeded, failed) = match outcomes {
            Some(o) => (by_arrival(&o.succeeded), by_arrival(&o.failed)),
            None => (by_arrival(&[]), by_arrival(&[])),
        };
        let mut columns = IndexMap::new();
        let arrivals = col(0);
        columns.insert("users.arrivals".to_owned(), arrivals.clone());
        columns.insert("users.succeeded".to_owned(), succeeded.clone());
        columns.insert("users.failed".to_owned(), failed);
        columns.insert(
            "users.success_rate".to_owned(),
            ratio(&succeeded, &arrivals),
        );
        columns.insert("users.client_attempts".to_owned(), col(1));
        let latency = outcomes.map_or(&[][..], |o| &o.latency[..]);
        let after_tokens = self.prev.len()
            + self.services.len() * SERVICE_LEVELS.len()
            + self.throttled.iter().filter(|&&t| t).count();
        for &q in &self.quantiles {
            let name = crate::scenario::metrics::quantile_name(q);
            let values = (0..bins)
                .map(|b| {
                    latency
                        .get(b)
                        .and_then(Option::as_ref)
                        .map(|h| h.value_at_quantile(q) as f64 / 1e6)
                })
                .collect();
            columns.insert(format!("users.success_latency_{name}_s"), values);
        }
        for (c, name) in self.classes.iter().enumerate() {
            let arrivals = col(after_tokens + c);
            let (ok, failed) = match rec.classes[c].by_arrival_bin.as_ref() {
                Some(o) => (by_arrival(&o.succeeded), by_arrival(&o.failed)),
                None => (by_arrival(&[]), by_arrival(&[])),
            };
            let rate = ratio(&ok, &arrivals);
            for (what, values) in CLASS_SERIES.iter().zip([arrivals, ok, failed, rate]) {
                columns.insert(format!("classes.{name}.{what}"), values);
            }
        }
        let counters = self.prev.len();
        for (s, name) in self.services.iter().enumerate() {
            let base = 2 + s * self.service_counts;
            for (k, what) in series_counters(ServiceCounters::COUNTERS).enumerate() {
                columns.insert(format!("services.{name}.{what}"), col(base + k));
            }
            for (k, what) in SERVICE_LEVELS.iter().enumerate() {
                let j = counters + s * SERVICE_LEVELS.len() + k;
                columns.insert(format!("services.{name}.{what}"), col(j));
            }
            let service_arrivals = col(base);
            columns.insert(
                format!("services.{name}.attempts_per_request"),
                ratio(&service_arrivals, &arrivals),
            );
        }
        let edge_base = 2 + self.services.len() * self.service_counts;
        let mut token_col = counters + self.services.len() * SERVICE_LEVELS.len();
        for (e, name) in self.edges.iter().enumerate() {
            let base = edge_base + e * self.edge_counts;
            for (k, what) in series_counters(EdgeCounters::COUNTERS).enumerate() {
                columns.insert(format!("calls.{name}.{what}"), col(base + k));
            }
            if self.throttled[e] {
                columns.insert(format!("calls.{name}.tokens"), col(token_col));
                token_col += 1;
            }
        }
        let extra_base = self.width - self.extras.len();
        for (j, (name, _)) in self.extras.iter().enumerate() {
            columns.insert(name.clone(), col(extra_base + j));
        }
        let mut j = after_tokens + self.classes.len();
        for x in &self.replicas {
            let service = &self.services[x.service];
            for label in x.labels() {
                for what in REPLICA_LEVELS {
                    columns.insert(format!("services.{service}.replica.{label}.{what}"), col(j));
                    j += 1;
                }
            }
        }
        debug_assert_eq!(j, extra_base);
        TimeSeries {
            resolution: self.resolution,
            bins,
            services: self.services,
            arrivals_end_s: self.arrivals_end.as_secs_f64(),
            columns,
        }
    }
}

/// The finished time series of one run: equal-length columns by dotted series name.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSeries {
    resolution: SimDuration,
    bins: usize,
    services: Vec<String>,
    arrivals_end_s: f64,
    columns: IndexMap<String, Vec<Option<f64>>>,
}

impl TimeSeries {
    /// The bin width.
    pub fn resolution(&self) -> SimDuration {
        self.resolution
    }

    /// How many bins every column has.
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// Start of bin `k`, an instant.
    pub fn bin_start(&self, k: usize) -> SimTime {
        SimTime(self.resolution.0 * k as u64)
    }

    /// Start of bin `k`, in seconds (for plots).
    pub fn bin_start_s(&self, k: usize) -> f64 {
        self.bin_start(k).as_secs_f64()
    }

    /// The services, in scenario order.
    pub fn services(&self) -> &[String] {
        &self.services
    }

    /// When arrivals stopped, in seconds.
    pub fn arrivals_end_s(&self) -> f64 {
        self.arrivals_end_s
    }

    /// Series names, in the documented order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.columns.keys().map(String::as_str)
    }

    /// One column by name: a value per bin, `None` where it is undefined (a ratio over zero).
    pub fn get(&self, name: &str) -> Option<&[Option<f64>]> {
        self.columns.get(name).map(Vec::as_slice)
    }

    /// Every column, in the documented order.
    pub fn columns(&self) -> impl Iterator<Item = (&str, &[Option<f64>])> {
        self.columns.iter().map(|(k, v)| (k.as_str(), v.as_slice()))
    }

    /// Sum of a column over all bins (undefined bins count as zero).
    pub fn total(&self, name: &str) -> Option<f64> {
        self.get(name).map(|c| c.iter().flatten().sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_layout_matches_the_sampled_row_width() {
        let doc = crate::config::Document::from_text(
            std::path::Path::new("t.yaml"),
            "duration: 2s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\n\
             services:\n  a:\n    slots: 1\n    calls:\n      b: {attempt_timeout: 1s, retries: 1, \
             retry_throttle: {max_tokens: 10, token_ratio: 0.1}}\n  b:\n    slots: 1\n    \
             service_time: {dist: constant, value: 1ms}\n",
        )
        .unwrap();
        let sc = Scenario::from_document(&doc).unwrap();
        let resolution = SimDuration::from_millis(500);
        let mut r = SeriesRecorder::new(&sc, resolution);
        let rec = Recorder::new(1, 2, 1, 2).with_arrival_bins(resolution);
        let until = SimTime(sc.duration.0);
        r.sample(
            &rec,
            &mut |_, at, _| super::super::levels::LevelMeter::new(until).sample(at, 1, 3),
            &|_| Some(7.5),
        );
        r.sample_extras(&rec, &mut |_, _| 0.0);
        let ts = r.finish(&rec);
        assert_eq!(ts.bins(), 1);
        assert_eq!(ts.get("services.b.queue_mean"), Some(&[Some(3.0)][..]));
        assert_eq!(ts.get("services.a.busy_max"), Some(&[Some(1.0)][..]));
        assert_eq!(ts.get("calls.a->b.tokens"), Some(&[Some(7.5)][..]));
        assert_eq!(ts.get("users.success_rate"), Some(&[None][..]));
        // Every counter declared `series` has its column, and no other counter has one.
        for (family, prefixes) in [
            (
                ServiceCounters::COUNTERS,
                &["services.a.", "services.b."][..],
            ),
            (EdgeCounters::COUNTERS, &["calls.a->b."][..]),
        ] {
            for c in family {
                for p in prefixes {
                    let name = format!("{p}{}", c.name);
                    assert_eq!(ts.get(&name).is_some(), c.in_series(), "{name}");
                }
            }
        }
        // users: 5 and 2 latency quantiles; per service its counts + 4 levels + attempts_per_request; per edge its counts
        // + tokens.
        let service = series_counters(ServiceCounters::COUNTERS).count() + 4 + 1;
        let edge = series_counters(EdgeCounters::COUNTERS).count() + 1;
        assert_eq!(ts.names().count(), 7 + 2 * service + edge);
    }
}
