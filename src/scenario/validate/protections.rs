//! Checks on the protections beyond the article: queue shedding (adaptive LIFO, `max_queue_time`,
//! CoDel), pushback, Envoy retry budgets, adaptive throttling, circuit breakers and hedging.
//! Defaults live here, each next to the check of its key.

use super::super::raw::{
    AdaptiveThrottleRaw, CircuitBreakerRaw, CodelRaw, HedgeRaw, PushbackRaw, QueueDisciplineRaw,
    RetryBudgetRaw, ServiceRaw,
};
use super::super::{
    AdaptiveThrottle, CircuitBreaker, Codel, Hedge, Pushback, QueueDiscipline, RetryBudget,
};
use super::Validator;
use crate::time::SimDuration;

/// Default wait of the oldest queued request that switches adaptive LIFO to newest-first.
pub const DEFAULT_LIFO_AFTER: SimDuration = SimDuration::from_millis(100);
/// Longest trailing window of adaptive throttling and circuit breakers.
const MAX_WINDOW: SimDuration = SimDuration::from_secs(3600);

impl Validator<'_> {
    pub(super) fn discipline(&mut self, key: &str, s: &ServiceRaw) -> QueueDiscipline {
        match s.queue_discipline {
            None | Some(QueueDisciplineRaw::Fifo) | Some(QueueDisciplineRaw::Lifo)
                if s.lifo_after.is_some() =>
            {
                self.problem(
                    &format!("{key}.lifo_after"),
                    "only applies with `queue_discipline: adaptive_lifo`",
                );
                QueueDiscipline::Fifo
            }
            None | Some(QueueDisciplineRaw::Fifo) => QueueDiscipline::Fifo,
            Some(QueueDisciplineRaw::Lifo) => QueueDiscipline::Lifo,
            Some(QueueDisciplineRaw::AdaptiveLifo) => QueueDiscipline::AdaptiveLifo {
                after: s.lifo_after.map_or(DEFAULT_LIFO_AFTER, |d| d.0),
            },
        }
    }

    pub(super) fn codel(&mut self, key: &str, c: &CodelRaw) -> Codel {
        let codel = Codel {
            target: c.target.map_or(SimDuration::from_millis(5), |d| d.0),
            interval: c.interval.map_or(SimDuration::from_millis(100), |d| d.0),
        };
        if codel.interval.is_zero() {
            self.problem(&format!("{key}.codel.interval"), "must be longer than 0s");
        }
        codel
    }

    pub(super) fn pushback(&mut self, key: &str, p: &PushbackRaw) -> Option<Pushback> {
        let given = [
            p.delay.is_some(),
            p.per_queued.is_some(),
            p.no_retry.is_some(),
        ];
        if given.iter().filter(|&&g| g).count() != 1 {
            self.problem(
                &format!("{key}.pushback"),
                "give exactly one of `delay`, `per_queued`, `no_retry: true`",
            );
            return None;
        }
        match (p.delay, p.per_queued, p.no_retry) {
            (Some(d), _, _) => Some(Pushback::Delay(d.0)),
            (_, Some(d), _) => Some(Pushback::PerQueued(d.0)),
            (_, _, Some(true)) => Some(Pushback::NoRetry),
            _ => {
                self.problem(
                    &format!("{key}.pushback.no_retry"),
                    "`no_retry: false` means nothing; remove `pushback` instead",
                );
                None
            }
        }
    }

    pub(super) fn retry_budget(&mut self, key: &str, b: &RetryBudgetRaw) -> Option<RetryBudget> {
        let percent = b.budget_percent.unwrap_or(20.0);
        if !(percent.is_finite() && (0.0..=100.0).contains(&percent)) {
            self.problem(
                &format!("{key}.retry_budget.budget_percent"),
                "must be in [0, 100]",
            );
            return None;
        }
        Some(RetryBudget {
            percent,
            min_concurrency: b.min_retry_concurrency.unwrap_or(3),
        })
    }

    pub(super) fn adaptive_throttle(
        &mut self,
        key: &str,
        t: &AdaptiveThrottleRaw,
    ) -> Option<AdaptiveThrottle> {
        let k = t.k.unwrap_or(2.0);
        if !(k.is_finite() && (1.0..=100.0).contains(&k)) {
            self.problem(&format!("{key}.adaptive_throttle.k"), "must be in [1, 100]");
            return None;
        }
        let window = self.window(&format!("{key}.adaptive_throttle.window"), t.window, 120)?;
        Some(AdaptiveThrottle { k, window })
    }

    /// A trailing window of whole seconds between 1 s and an hour.
    fn window(
        &mut self,
        key: &str,
        given: Option<crate::config::duration::DurationText>,
        default_secs: u64,
    ) -> Option<SimDuration> {
        let w = given.map_or(SimDuration::from_secs(default_secs), |d| d.0);
        if w < SimDuration::from_secs(1) || w > MAX_WINDOW || !w.0.is_multiple_of(1_000_000_000) {
            self.problem(key, "must be a whole number of seconds between 1s and 1h");
            return None;
        }
        Some(w)
    }

    pub(super) fn circuit_breaker(
        &mut self,
        key: &str,
        b: &CircuitBreakerRaw,
    ) -> Option<CircuitBreaker> {
        let k = format!("{key}.circuit_breaker");
        let failure_rate = b.failure_rate.unwrap_or(0.5);
        if !(failure_rate.is_finite() && failure_rate > 0.0 && failure_rate <= 1.0) {
            self.problem(&format!("{k}.failure_rate"), "must be a share in (0, 1]");
            return None;
        }
        let window = self.window(&format!("{k}.window"), b.window, 10)?;
        let open_for = b.open_for.map_or(SimDuration::from_secs(5), |d| d.0);
        if open_for.is_zero() {
            self.problem(&format!("{k}.open_for"), "must be longer than 0s");
            return None;
        }
        let half_open_probes = b.half_open_probes.unwrap_or(3);
        if half_open_probes == 0 {
            self.problem(&format!("{k}.half_open_probes"), "must be at least 1");
            return None;
        }
        if b.consecutive_failures == Some(0) {
            self.problem(&format!("{k}.consecutive_failures"), "must be at least 1");
            return None;
        }
        Some(CircuitBreaker {
            failure_rate,
            window,
            min_requests: b.min_requests.unwrap_or(20),
            consecutive_failures: b.consecutive_failures,
            open_for,
            half_open_probes,
        })
    }

    pub(super) fn hedge(&mut self, key: &str, h: &HedgeRaw, retries: u32) -> Option<Hedge> {
        if retries > 0 {
            self.problem(
                &format!("{key}.hedge"),
                "an edge hedges or retries, not both (gRFC A6); remove `retries` or `hedge`",
            );
            return None;
        }
        let max_hedges = h.max_hedges.unwrap_or(1);
        if max_hedges == 0 || max_hedges > 10 {
            self.problem(
                &format!("{key}.hedge.max_hedges"),
                "must be between 1 and 10",
            );
            return None;
        }
        if h.delay.0.is_zero() {
            self.problem(&format!("{key}.hedge.delay"), "must be longer than 0s");
            return None;
        }
        Some(Hedge {
            delay: h.delay.0,
            max_hedges,
        })
    }
}
