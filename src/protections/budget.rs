//! The Envoy retry budget on one edge (`services.<caller>.calls.<callee>.retry_budget`): a retry
//! may start only while the retries in flight on the edge stay below
//! max(`budget_percent` % of the attempts in flight, `min_retry_concurrency`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::Problems;

/// Default share of active requests that may be retries, in percent (Envoy's default).
pub const DEFAULT_BUDGET_PERCENT: f64 = 20.0;
/// Default retries always allowed concurrently (Envoy's default).
pub const DEFAULT_MIN_RETRY_CONCURRENCY: u32 = 3;

/// Envoy retry budget: concurrent retries ≤ max(budget_percent % of active requests,
/// min_retry_concurrency).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryBudgetRaw {
    /// Retries in flight as a percentage of attempts in flight.
    #[schemars(extend("default" = DEFAULT_BUDGET_PERCENT))]
    pub budget_percent: Option<f64>,
    /// Retries in flight always allowed.
    #[schemars(extend("default" = DEFAULT_MIN_RETRY_CONCURRENCY))]
    pub min_retry_concurrency: Option<u32>,
}

/// Envoy retry budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryBudget {
    /// Share of active requests that may be retries, in percent.
    pub percent: f64,
    /// Retries always allowed concurrently.
    pub min_concurrency: u32,
}

impl RetryBudget {
    /// Whether one more retry may start while `active` attempts, `active_retries` of them
    /// retries, are in flight on the edge.
    #[inline]
    pub fn allows_retry(&self, active: u32, active_retries: u32) -> bool {
        let allowed = ((self.percent / 100.0) * active as f64).floor() as u32;
        active_retries < allowed.max(self.min_concurrency)
    }
}

/// Checks `retry_budget` at `key`.
pub(crate) fn validate(
    key: &str,
    b: &RetryBudgetRaw,
    p: &mut impl Problems,
) -> Option<RetryBudget> {
    let percent = b.budget_percent.unwrap_or(DEFAULT_BUDGET_PERCENT);
    if !(percent.is_finite() && (0.0..=100.0).contains(&percent)) {
        p.problem(
            &format!("{key}.budget_percent"),
            "must be in [0, 100]".into(),
        );
        return None;
    }
    Some(RetryBudget {
        percent,
        min_concurrency: b
            .min_retry_concurrency
            .unwrap_or(DEFAULT_MIN_RETRY_CONCURRENCY),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        check(
            At::Edge,
            &[
                (
                    "retry_budget: {budget_percent: -1}",
                    "retry_budget.budget_percent",
                    "must be in [0, 100]",
                ),
                (
                    "retry_budget: {budget_percent: 100.5}",
                    "retry_budget.budget_percent",
                    "must be in [0, 100]",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "retry_budget: {}",
                "retry_budget: {budget_percent: 0, min_retry_concurrency: 0}",
            ],
        );
    }

    #[test]
    fn the_larger_of_the_share_and_the_floor() {
        let b = RetryBudget {
            percent: 20.0,
            min_concurrency: 3,
        };
        // 20 % of 10 = 2 < 3: the floor of 3 retries holds.
        assert!(b.allows_retry(10, 2));
        assert!(!b.allows_retry(10, 3));
        // 20 % of 50 = 10.
        assert!(b.allows_retry(50, 9));
        assert!(!b.allows_retry(50, 10));
        // 20 % of 54 = 10.8, floored to 10.
        assert!(!b.allows_retry(54, 10));
    }
}
