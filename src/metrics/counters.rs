//! The counter families of a run, each declared once. Owns [`EdgeCounters`] and
//! [`ServiceCounters`] (the live counters the model increments), the summary structs generated
//! from the same declaration ([`CallMetrics`], [`ServiceCounts`]), and the list of declared
//! counters ([`Counter`]) that the time series read their names and values from.
//!
//! A declaration line `name: series,` in a [`counters!`] block gives:
//! - a `pub name: u64` field of the live struct, starting at zero, that the model increments with
//!   `+= 1` (a plain field: no lookup, no dispatch);
//! - a `name` field of the summary struct, hence a `name` key of the JSON summary (and a column of
//!   every table and CSV flattened from it), in declaration order;
//! - for `series`, a time series `calls.<a>-><b>.name` or `services.<s>.name` holding its increase
//!   in each bin.
//!
//! The kinds: `series` (a count: in the summary and, binned, in the time series), `summary` (in the
//! summary only: a running maximum, a value set at the end of the run, or a count kept out of the
//! series), and `live as reported: seconds` (nanoseconds, in the summary only, as `reported` in
//! seconds). Fields after `also` are working state for the derived metrics (sums, histograms): live
//! only, starting at their `Default`.
//!
//! **Adding a counter** is one declaration line in the family's block below plus its increment at
//! the place in `src/model` where the thing happens (`self.rec.edges[e].name += 1`). The summary
//! field, its JSON name and order, the copy in `summarize` and the time series follow. Ratios and
//! other formulas over counters stay hand-written in [`super::summary`].

use serde::{Deserialize, Serialize};

use super::histogram::MicrosHistogram;
use crate::time::SimTime;

/// Whether a gated counter of service `s` is shown: where its protection is configured.
pub fn service_shows(s: &crate::scenario::Service, name: &str) -> bool {
    match name {
        "rate_limited" => s.rate_limit.is_some(),
        "limited" => s.concurrency_limit.is_some(),
        "shed" => s.shed_priority,
        _ => true,
    }
}

/// Whether a gated counter of edge `e` is shown: where its protection is configured.
pub fn edge_shows(e: &crate::scenario::Edge, name: &str) -> bool {
    match name {
        "rate_limited" => e.rate_limit.is_some(),
        "limited" => e.concurrency_limit.is_some(),
        _ => true,
    }
}

/// How a declared counter is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterKind {
    /// A count: in the summary, and its increase per bin in the time series.
    Series,
    /// In the summary only.
    Summary,
    /// Nanoseconds, in the summary only, as seconds.
    Seconds,
    /// A count reported only where the protection it counts for is configured (absent from the
    /// summary otherwise, so scenarios without it keep their outputs byte-identical); its time
    /// series is added by [`super::timeseries`] for those services and edges only.
    Gated,
}

/// One declared counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    /// Its name in the summary JSON and, for [`CounterKind::Series`], in the time series.
    pub name: &'static str,
    /// How it is reported: summary only, time series too, in seconds, or gated.
    pub kind: CounterKind,
}

impl Counter {
    /// Whether the counter has a time series.
    pub fn in_series(&self) -> bool {
        self.kind == CounterKind::Series
    }
}

/// A reported counter value that is left out of the summary: a gated counter not shown.
pub trait Reported {
    /// Whether the value is left out of the summary (`None` of a gated counter).
    fn is_absent(&self) -> bool;
}

impl Reported for u64 {
    fn is_absent(&self) -> bool {
        false
    }
}

impl Reported for f64 {
    fn is_absent(&self) -> bool {
        false
    }
}

impl Reported for Option<u64> {
    fn is_absent(&self) -> bool {
        self.is_none()
    }
}

/// `skip_serializing_if` of every summary field: only a gated counter not shown is skipped.
pub fn absent<T: Reported>(v: &T) -> bool {
    v.is_absent()
}

/// Declares a counter family: a live struct of `u64` counters (plus working state after `also`)
/// and the summary struct its counters are reported in. See the module documentation.
macro_rules! counters {
    (
        $(#[$live_meta:meta])*
        pub struct $Live:ident => $(#[$summary_meta:meta])* pub struct $Summary:ident {
            $($body:tt)*
        }
        $(also { $($also:tt)* })?
    ) => {
        counters!(@line
            { [$(#[$live_meta])*] $Live [$(#[$summary_meta])*] $Summary [$($($also)*)?] }
            []
            $($body)*
        );
    };
    // Each line becomes `{ [docs] live_name reported_name kind }`.
    (@line $head:tt [$($done:tt)*]
        $(#[$doc:meta])* $field:ident as $out:ident : $kind:ident, $($rest:tt)*
    ) => {
        counters!(@line $head [$($done)* { [$(#[$doc])*] $field $out $kind }] $($rest)*);
    };
    (@line $head:tt [$($done:tt)*] $(#[$doc:meta])* $field:ident : $kind:ident, $($rest:tt)*) => {
        counters!(@line $head [$($done)* { [$(#[$doc])*] $field $field $kind }] $($rest)*);
    };
    (@line $head:tt [$($done:tt)*]) => {
        counters!(@emit $head $($done)*);
    };
    (@emit
        {
            [$(#[$live_meta:meta])*] $Live:ident [$(#[$summary_meta:meta])*] $Summary:ident
            [$($(#[$also_doc:meta])* $also:ident : $also_ty:ty,)*]
        }
        $({ [$(#[$doc:meta])*] $field:ident $out:ident $kind:ident })*
    ) => {
        $(#[$live_meta])*
        pub struct $Live {
            $($(#[$doc])* pub $field: u64,)*
            $($(#[$also_doc])* pub $also: $also_ty,)*
        }

        $(#[$summary_meta])*
        pub struct $Summary {
            $(
                $(#[$doc])*
                #[serde(skip_serializing_if = "crate::metrics::counters::absent")]
                pub $out: counters!(@type $kind),
            )*
        }

        impl $Live {
            /// The declared counters, in declaration (and summary) order.
            pub const COUNTERS: &'static [$crate::metrics::counters::Counter] = &[
                $($crate::metrics::counters::Counter {
                    name: stringify!($out),
                    kind: counters!(@kind $kind),
                },)*
            ];

            /// The declared counters' values, in the order of [`Self::COUNTERS`].
            pub fn values(&self) -> [u64; $Live::COUNTERS.len()] {
                [$(self.$field),*]
            }

            /// The declared counters as reported in the summary, gated ones included.
            pub fn summary(&self) -> $Summary {
                self.summary_gated(&|_| true)
            }

            /// The declared counters as reported in the summary; a gated counter only where
            /// `shown(name)`.
            pub fn summary_gated(&self, shown: &dyn Fn(&'static str) -> bool) -> $Summary {
                let _ = shown;
                $Summary {
                    $($out: counters!(@report $kind, self.$field, shown, stringify!($out)),)*
                }
            }
        }
    };
    (@type series) => { u64 };
    (@type summary) => { u64 };
    (@type seconds) => { f64 };
    (@type gated) => { Option<u64> };
    (@kind series) => { $crate::metrics::counters::CounterKind::Series };
    (@kind summary) => { $crate::metrics::counters::CounterKind::Summary };
    (@kind seconds) => { $crate::metrics::counters::CounterKind::Seconds };
    (@kind gated) => { $crate::metrics::counters::CounterKind::Gated };
    (@report series, $v:expr, $shown:ident, $name:expr) => { $v };
    (@report summary, $v:expr, $shown:ident, $name:expr) => { $v };
    (@report seconds, $v:expr, $shown:ident, $name:expr) => { $v as f64 / 1e9 };
    (@report gated, $v:expr, $shown:ident, $name:expr) => { $shown($name).then_some($v) };
}

counters! {
    /// Counters for one call edge.
    #[derive(Clone, Debug, Default)]
    pub struct EdgeCounters =>
    /// Per-edge counters, as reported.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
    pub struct CallMetrics {
        /// Attempts sent to the callee (first tries, retries and hedges; model.md §2.6 step 4).
        attempts: series,
        /// Sent attempts that were retries.
        retries: series,
        /// Retries the edge's gRFC A6 retry throttle refused (the call failed).
        retries_throttled: series,
        /// Attempts settled by their attempt timeout.
        timeouts: series,
        /// Attempts settled by a `reject` reply (callee queue full, outage).
        rejects: series,
        /// Attempts settled by an `error` reply (dropped at the callee, a failed call of its own,
        /// an error fault).
        errors: series,
        /// Attempts settled by a `success` reply.
        successes: series,
        /// Calls not sent because the caller's deadline had passed.
        deadline_exhausted: series,
        /// Retries refused by the Envoy-style retry budget.
        retries_budget_denied: series,
        /// Attempts rejected locally by adaptive throttling.
        throttled_locally: series,
        /// Attempts refused because the circuit breaker was open (or out of half-open probes).
        rejected_circuit_open: series,
        /// Times the breaker opened.
        circuit_opened: summary,
        /// Time the breaker spent open, in nanoseconds, set at the end of the run (reported as
        /// `circuit_open_s`, in seconds).
        circuit_open_ns as circuit_open_s: seconds,
        /// Hedged attempts sent.
        hedges: series,
        /// Hedges the edge's gRFC A6 bucket refused.
        hedges_throttled: series,
        /// Cancellations sent to the callee for abandoned attempts.
        cancels_sent: series,
        /// Retries that waited for the callee's retry-after hint (`honor_retry_after`).
        pushback_honored: series,
        /// Retries not sent because the callee's reply said not to retry (`honor_retry_after`).
        pushback_no_retry: series,
        /// Attempts refused locally by the edge's rate limit (edges with `rate_limit` only).
        rate_limited: gated,
        /// Attempts refused locally by the edge's concurrency limiter (edges with
        /// `concurrency_limit` only).
        limited: gated,
    }
}

counters! {
    /// Counters for one service.
    #[derive(Debug, Default)]
    pub struct ServiceCounters =>
    /// Per-service counters, as reported (the first fields of [`super::ServiceMetrics`]).
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
    pub struct ServiceCounts {
        /// Requests that reached the service, rejected ones included (model.md §2.4).
        arrivals: series,
        /// Arrivals admitted as jobs (queued or started at once).
        admitted: series,
        /// Jobs that finished, with success or with error; drops and cancellations are not
        /// completions.
        completed: series,
        /// Completions whose reply found its attempt already settled (timed out or abandoned by
        /// the caller): wasted work.
        completed_abandoned: series,
        /// Arrivals rejected because the queue held `queue_cap` live jobs.
        rejected_full: series,
        /// Dropped at dequeue because the request's deadline had passed (`drop_expired`).
        dropped_expired: series,
        /// The longest the queue was.
        max_queue: summary,
        /// Arrivals whose instant falls inside the fault window (model.md §3.1).
        arrivals_during_fault: summary,
        /// Arrivals rejected by an `outage` fault.
        rejected_outage: series,
        /// Arrivals failed at once by an `error` fault.
        failed_by_fault: series,
        /// Dropped at dequeue for waiting longer than `max_queue_time`.
        dropped_queue_time: series,
        /// Dropped at dequeue by CoDel.
        dropped_codel: series,
        /// Admitted requests whose caller cancelled them (queued or running).
        cancelled: series,
        /// Arrivals refused by the service's rate limit (services with `rate_limit` only).
        rate_limited: gated,
        /// Arrivals refused by the service's concurrency limiter (services with
        /// `concurrency_limit` only).
        limited: gated,
        /// Queued requests evicted for a more important arrival and rejected (services with
        /// `shed: priority` only).
        shed: gated,
    }
    also {
        /// Admitted requests that had to queue.
        enqueued: u64,
        /// Requests that started work.
        started: u64,
        /// Σ (start − admission) over started requests, in nanoseconds.
        wait_sum_ns: u128,
        /// The queueing times of started requests, for the queue-wait quantiles.
        queue_wait: MicrosHistogram,
        /// Requests that left the service (completed or dropped).
        departed: u64,
        /// Σ (departure − admission) over departed requests, in nanoseconds.
        sojourn_sum_ns: u128,
        /// With `metrics.quantiles` only: time in the service (admission to reply) of the
        /// requests it completed, for `services.<s>.latency_quantiles`.
        completed_latency: Option<MicrosHistogram>,
        /// Completions in the call tree of a succeeded user request.
        useful: u64,
        /// Requests admitted during the arrival period.
        admitted_in_period: u64,
        /// Σ of the admission instants of those requests, in nanoseconds.
        admitted_at_sum_ns: u128,
        /// Requests that left during the arrival period.
        departed_in_period: u64,
        /// Σ of the departure instants of those requests, in nanoseconds.
        departed_at_sum_ns: u128,
    }
}

counters! {
    /// Counters for one replica of a replicated service (`services.<s>.replica_stats[k]`).
    #[derive(Clone, Debug, Default)]
    pub struct ReplicaCounters =>
    /// Per-replica counters, as reported (the first fields of [`super::summary::ReplicaMetrics`]).
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
    pub struct ReplicaCounts {
        /// Requests the balancer sent to this replica, rejected ones included.
        arrivals: summary,
        /// Of those, admitted as jobs.
        admitted: summary,
        /// Jobs the replica finished, with success or with error.
        completed: summary,
        /// Arrivals rejected because the replica's queue was full.
        rejected_full: summary,
        /// Dropped at dequeue (expired deadline, `max_queue_time`, CoDel).
        dropped: summary,
        /// Admitted jobs whose caller cancelled them (queued or running).
        cancelled: summary,
        /// The longest the queue was.
        max_queue: summary,
    }
}

impl ServiceCounters {
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

    /// A request admitted at `admitted_at` was completed at `now` (recorded only where
    /// `metrics.quantiles` asks for the service's latency quantiles).
    #[inline]
    pub fn complete(&mut self, now: SimTime, admitted_at: SimTime) {
        if let Some(h) = &mut self.completed_latency {
            h.record(now - admitted_at);
        }
    }

    /// A request that was admitted at `admitted_at` starts work at `now`.
    #[inline]
    pub fn start(&mut self, now: SimTime, admitted_at: SimTime) {
        let wait = now - admitted_at;
        self.started += 1;
        self.wait_sum_ns += wait.0 as u128;
        self.queue_wait.record(wait);
    }

    /// Σ over requests admitted before `until` of the time they spent in the service before
    /// `until`, in nanoseconds: departures before `until` count up to their departure, the rest up
    /// to `until`. Equals the integral of the number in system over `[0, until)` (Little's law on a
    /// finite window that starts empty).
    pub fn sojourn_in_period_ns(&self, until: SimTime) -> u128 {
        let still_in = (self.admitted_in_period - self.departed_in_period) as u128;
        self.departed_at_sum_ns + still_in * until.0 as u128 - self.admitted_at_sum_ns
    }
}

#[cfg(test)]
mod tests {
    // The macro makes its structs and their methods `pub` for the real families; this one is
    // the test's own.
    #![allow(unreachable_pub)]
    use super::*;

    counters! {
        /// A family as a new protection would declare it.
        #[derive(Debug, Default)]
        pub struct DemoCounters =>
        #[derive(Debug, Serialize)]
        pub struct DemoMetrics {
            sent: series,
            /// A new counter: this line and its `+= 1` are all it takes.
            shed: series,
            peak: summary,
            open_ns as open_s: seconds,
        }
        also {
            scratch: u128,
        }
    }

    #[test]
    fn one_declaration_gives_the_live_field_the_summary_field_and_the_series() {
        let mut c = DemoCounters::default();
        c.sent += 3;
        c.shed += 1;
        c.peak = 9;
        c.open_ns = 1_500_000_000;
        c.scratch = 7;
        let json = serde_json::to_string(&c.summary()).unwrap();
        assert_eq!(json, r#"{"sent":3,"shed":1,"peak":9,"open_s":1.5}"#);
        let series: Vec<&str> = DemoCounters::COUNTERS
            .iter()
            .filter(|k| k.in_series())
            .map(|k| k.name)
            .collect();
        assert_eq!(series, ["sent", "shed"]);
        assert_eq!(c.values(), [3, 1, 9, 1_500_000_000]);
    }

    #[test]
    fn summary_keys_are_the_declared_names_in_order() {
        let edge = serde_json::to_value(EdgeCounters::default().summary()).unwrap();
        let service = serde_json::to_value(ServiceCounters::default().summary()).unwrap();
        for (json, family) in [
            (edge, EdgeCounters::COUNTERS),
            (service, ServiceCounters::COUNTERS),
        ] {
            let keys: Vec<&str> = json
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            let declared: Vec<&str> = family.iter().map(|c| c.name).collect();
            assert_eq!(keys, declared);
        }
    }
}
