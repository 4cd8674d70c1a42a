//! Retry budgets on one edge (`services.<caller>.calls.<callee>.retry_budget`), two kinds:
//!
//! - `kind: concurrent` (the default), Envoy's: a retry may start only while the retries in flight
//!   on the edge stay below max(`budget_percent` % of the attempts in flight,
//!   `min_retry_concurrency`).
//! - `kind: ratio`, Finagle's `RetryBudget` (twitter/finagle
//!   finagle-core/src/main/scala/com/twitter/finagle/service/RetryBudget.scala, over twitter/util
//!   util-core/src/main/scala/com/twitter/util/TokenBucket.scala `newLeakyBucket` and
//!   WindowedAdder.scala), which Linkerd's ServiceProfile `retryBudget` follows: every call
//!   deposits 1000 units, every retry withdraws ⌊1000 / `retry_ratio`⌋ when the balance
//!   (deposits and withdrawals of the last `ttl` + a reserve of `min_retries_per_second` × ttl
//!   retries) covers it. The last `ttl` is kept as Finagle's WindowedAdder keeps it: ten slices
//!   of ttl/10 (the current one and nine more), on a millisecond clock, each expiry counted from
//!   the instant of the previous one.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{DurationText, Problems};
use crate::time::{SimDuration, SimTime};

/// Default share of active requests that may be retries, in percent (Envoy's default).
pub(crate) const DEFAULT_BUDGET_PERCENT: f64 = 20.0;
/// Default retries always allowed concurrently (Envoy's default).
pub(crate) const DEFAULT_MIN_RETRY_CONCURRENCY: u32 = 3;

/// Default share of calls that may be retried, `kind: ratio` (Finagle's and Linkerd's 0.2).
pub(crate) const DEFAULT_RETRY_RATIO: f64 = 0.2;
/// Default reserve of retries per second, `kind: ratio` (Finagle's and Linkerd's 10).
pub(crate) const DEFAULT_MIN_RETRIES_PER_SECOND: u32 = 10;
/// Default lifetime of a deposit, `kind: ratio` (Finagle's and Linkerd's 10 s).
pub(crate) const DEFAULT_TTL: SimDuration = SimDuration::from_secs(10);
/// Largest `retry_ratio` (Finagle's `ScaleFactor`).
pub(crate) const MAX_RETRY_RATIO: f64 = 1000.0;
/// Units one call deposits (Finagle's `ScaleFactor`).
pub(crate) const DEPOSIT: i64 = 1000;
/// Slices of Finagle's WindowedAdder over `ttl`.
pub(crate) const SLICES: u64 = 10;
/// Default budget kind.
pub(crate) const DEFAULT_KIND: &str = "concurrent";

/// A retry budget: `kind: concurrent` (Envoy: concurrent retries ≤ max(budget_percent % of active
/// requests, min_retry_concurrency)) or `kind: ratio` (Finagle/Linkerd: retries ≤ `retry_ratio`
/// of the calls of the last `ttl` + `min_retries_per_second`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryBudgetRaw {
    /// Which budget: `concurrent` (Envoy) or `ratio` (Finagle, Linkerd).
    #[schemars(extend("default" = DEFAULT_KIND))]
    pub kind: Option<BudgetKindRaw>,
    /// `concurrent`: retries in flight as a percentage of attempts in flight.
    #[schemars(extend("default" = DEFAULT_BUDGET_PERCENT))]
    pub budget_percent: Option<f64>,
    /// `concurrent`: retries in flight always allowed.
    #[schemars(extend("default" = DEFAULT_MIN_RETRY_CONCURRENCY))]
    pub min_retry_concurrency: Option<u32>,
    /// `ratio`: retries allowed per call made, in [0, 1000].
    #[schemars(extend("default" = DEFAULT_RETRY_RATIO))]
    pub retry_ratio: Option<f64>,
    /// `ratio`: retries per second allowed on top of the ratio.
    #[schemars(extend("default" = DEFAULT_MIN_RETRIES_PER_SECOND))]
    pub min_retries_per_second: Option<u32>,
    /// `ratio`: how long a call's deposit counts, whole seconds in [1s, 60s].
    #[schemars(extend("default" = DEFAULT_TTL.to_string()))]
    pub ttl: Option<DurationText>,
}

/// The kinds of retry budget.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BudgetKindRaw {
    /// Envoy's: a share of the requests in flight.
    Concurrent,
    /// Finagle's and Linkerd's: a share of the calls of the last `ttl`, plus a reserve per second.
    Ratio,
}

/// A validated retry budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RetryBudget {
    /// `kind: concurrent` (Envoy's): a share of the requests in flight.
    Concurrent(ConcurrentBudget),
    /// `kind: ratio` (Finagle's and Linkerd's): a share of recent calls plus a reserve per second.
    Ratio(RatioBudget),
}

/// Finagle's `RetryBudget`, in its token units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatioBudget {
    /// Units a call deposits: 1000, or 0 with `retry_ratio: 0`.
    pub deposit: i64,
    /// Units a retry withdraws: ⌊1000 / retry_ratio⌋, or 1 with `retry_ratio: 0`.
    pub withdrawal: i64,
    /// `min_retries_per_second` × ttl (whole seconds) × `withdrawal`.
    pub reserve: i64,
    /// ttl in milliseconds.
    pub ttl_ms: u64,
    /// Both the ratio and the reserve are zero: Finagle's empty budget, no retry ever.
    pub empty: bool,
}

/// Envoy retry budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConcurrentBudget {
    /// Share of active requests that may be retries, in percent.
    pub percent: f64,
    /// Retries always allowed concurrently.
    pub min_concurrency: u32,
}

impl ConcurrentBudget {
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
    let kind = b.kind.unwrap_or(BudgetKindRaw::Concurrent);
    let foreign: &[(&str, bool)] = match kind {
        BudgetKindRaw::Concurrent => &[
            ("retry_ratio", b.retry_ratio.is_some()),
            ("min_retries_per_second", b.min_retries_per_second.is_some()),
            ("ttl", b.ttl.is_some()),
        ],
        BudgetKindRaw::Ratio => &[
            ("budget_percent", b.budget_percent.is_some()),
            ("min_retry_concurrency", b.min_retry_concurrency.is_some()),
        ],
    };
    let kind_name = format!("{kind:?}").to_lowercase();
    let mut ok = true;
    for (name, given) in foreign {
        if *given {
            p.problem(
                &format!("{key}.{name}"),
                format!("is not a key of a `{kind_name}` retry budget"),
            );
            ok = false;
        }
    }
    if kind == BudgetKindRaw::Ratio {
        let ratio = b.retry_ratio.unwrap_or(DEFAULT_RETRY_RATIO);
        if !(ratio.is_finite() && (0.0..=MAX_RETRY_RATIO).contains(&ratio)) {
            p.problem(
                &format!("{key}.retry_ratio"),
                format!("must be in [0, {MAX_RETRY_RATIO}] (Finagle)"),
            );
            ok = false;
        }
        let ttl = b.ttl.map_or(DEFAULT_TTL, |d| d.0);
        if ttl < SimDuration::from_secs(1)
            || ttl > SimDuration::from_secs(60)
            || !ttl.0.is_multiple_of(1_000_000_000)
        {
            p.problem(
                &format!("{key}.ttl"),
                "must be a whole number of seconds between 1s and 60s (Finagle)".into(),
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        let min = b
            .min_retries_per_second
            .unwrap_or(DEFAULT_MIN_RETRIES_PER_SECOND) as i64;
        return Some(RetryBudget::Ratio(RatioBudget::new(ratio, min, ttl)));
    }
    if !ok {
        return None;
    }
    let percent = b.budget_percent.unwrap_or(DEFAULT_BUDGET_PERCENT);
    if !(percent.is_finite() && (0.0..=100.0).contains(&percent)) {
        p.problem(
            &format!("{key}.budget_percent"),
            "must be in [0, 100]".into(),
        );
        return None;
    }
    Some(RetryBudget::Concurrent(ConcurrentBudget {
        percent,
        min_concurrency: b
            .min_retry_concurrency
            .unwrap_or(DEFAULT_MIN_RETRY_CONCURRENCY),
    }))
}

impl RatioBudget {
    /// Finagle's `RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`.
    pub fn new(ratio: f64, min_per_second: i64, ttl: SimDuration) -> RatioBudget {
        let withdrawal = if ratio == 0.0 {
            1
        } else {
            (DEPOSIT as f64 / ratio) as i64
        };
        let secs = (ttl.0 / 1_000_000_000) as i64;
        RatioBudget {
            deposit: if ratio == 0.0 { 0 } else { DEPOSIT },
            withdrawal,
            reserve: min_per_second * secs * withdrawal,
            ttl_ms: ttl.0 / 1_000_000,
            empty: ratio == 0.0 && min_per_second == 0,
        }
    }
}

/// The live balance of a `ratio` budget: Finagle's leaky token bucket over a WindowedAdder of
/// ten slices (`writer` is the current one, `slices` the nine before it).
#[derive(Clone, Debug)]
pub(crate) struct RatioBalance {
    budget: RatioBudget,
    /// ttl / 10, in milliseconds.
    slice_ms: u64,
    writer: i64,
    slices: [i64; SLICES as usize - 1],
    /// Index of the slice the writer goes to at the next expiry.
    i: usize,
    /// When the current slice began (the last expiry), in milliseconds.
    old_ms: u64,
}

impl RatioBalance {
    /// An empty balance at time zero.
    pub(crate) fn new(budget: RatioBudget) -> Self {
        RatioBalance {
            budget,
            slice_ms: budget.ttl_ms / SLICES,
            writer: 0,
            slices: [0; SLICES as usize - 1],
            i: 0,
            old_ms: 0,
        }
    }

    /// WindowedAdder's `expired`: the writer becomes the oldest slice's successor; slices
    /// skipped since the last expiry are zeroed.
    fn roll(&mut self, now_ms: u64) {
        if now_ms - self.old_ms < self.slice_ms {
            return;
        }
        let n = self.slices.len();
        self.slices[self.i] = std::mem::take(&mut self.writer);
        self.i = (self.i + 1) % n;
        let skip = ((now_ms - self.old_ms) / self.slice_ms - 1).min(n as u64) as usize;
        if skip > 0 {
            let r = skip.min(n - self.i);
            self.slices[self.i..self.i + r].fill(0);
            self.slices[..skip - r].fill(0);
            self.i = (self.i + skip) % n;
        }
        self.old_ms = now_ms;
    }

    fn add(&mut self, now_ms: u64, x: i64) {
        self.roll(now_ms);
        self.writer += x;
    }

    /// The units in the bucket at `now_ms`: the window's sum plus the reserve.
    pub(crate) fn count(&mut self, now_ms: u64) -> i64 {
        self.roll(now_ms);
        self.writer + self.slices.iter().sum::<i64>() + self.budget.reserve
    }

    /// A call is made (Finagle's `deposit`).
    #[inline]
    pub(crate) fn deposit(&mut self, now: SimTime) {
        if !self.budget.empty {
            self.add(now.0 / 1_000_000, self.budget.deposit);
        }
    }

    /// A retry asks to go (Finagle's `tryWithdraw`): allowed, and withdrawn, when the count
    /// covers one withdrawal.
    #[inline]
    pub(crate) fn try_withdraw(&mut self, now: SimTime) -> bool {
        if self.budget.empty {
            return false;
        }
        let now_ms = now.0 / 1_000_000;
        let w = self.budget.withdrawal;
        let ok = self.count(now_ms) >= w;
        if ok {
            self.add(now_ms, -w);
        }
        ok
    }
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
    fn ratio_bad_snippets() {
        check(
            At::Edge,
            &[
                (
                    "retry_budget: {kind: ratio, budget_percent: 20}",
                    "retry_budget.budget_percent",
                    "is not a key of a `ratio` retry budget",
                ),
                (
                    "retry_budget: {ttl: 10s}",
                    "retry_budget.ttl",
                    "is not a key of a `concurrent` retry budget",
                ),
                (
                    "retry_budget: {kind: ratio, retry_ratio: -0.1}",
                    "retry_budget.retry_ratio",
                    "must be in [0, 1000] (Finagle)",
                ),
                (
                    "retry_budget: {kind: ratio, ttl: 1500ms}",
                    "retry_budget.ttl",
                    "must be a whole number of seconds between 1s and 60s (Finagle)",
                ),
                (
                    "retry_budget: {kind: ratio, ttl: 61s}",
                    "retry_budget.ttl",
                    "must be a whole number of seconds between 1s and 60s (Finagle)",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "retry_budget: {kind: ratio}",
                "retry_budget: {kind: ratio, retry_ratio: 0.2, min_retries_per_second: 10, ttl: 10s}",
                "retry_budget: {kind: concurrent, budget_percent: 20}",
            ],
        );
    }

    const MS: u64 = 1_000_000;

    /// Finagle's defaults, by hand: deposit 1000, withdrawal ⌊1000 / 0.2⌋ = 5000, reserve
    /// 10 × 10 × 5000 = 500 000 (100 retries with no calls at all).
    #[test]
    fn ratio_units_follow_finagle() {
        let b = RatioBudget::new(0.2, 10, SimDuration::from_secs(10));
        assert_eq!(
            (b.deposit, b.withdrawal, b.reserve, b.ttl_ms),
            (1000, 5000, 500_000, 10_000)
        );
        let only_reserve = RatioBudget::new(0.0, 10, SimDuration::from_secs(10));
        assert_eq!(
            (
                only_reserve.deposit,
                only_reserve.withdrawal,
                only_reserve.reserve
            ),
            (0, 1, 100)
        );
        assert!(RatioBudget::new(0.0, 0, SimDuration::from_secs(10)).empty);
        // 1000 / 0.3 = 3333.33…, truncated as Scala's toInt does.
        assert_eq!(
            RatioBudget::new(0.3, 0, SimDuration::from_secs(1)).withdrawal,
            3333
        );
    }

    /// Step by step, ratio 0.5 (withdrawal 2000), no reserve, ttl 1 s (slices of 100 ms, nine
    /// kept besides the current one).
    #[test]
    fn ratio_deposits_withdrawals_and_expiry_by_hand() {
        let mut b = RatioBalance::new(RatioBudget::new(0.5, 0, SimDuration::from_secs(1)));
        let t = |ms: u64| SimTime(ms * MS);
        // No deposit yet: 0 < 2000.
        assert!(!b.try_withdraw(t(0)));
        // Three calls at 0 ms: 3000; one retry takes 2000, leaving 1000, too little for another.
        for _ in 0..3 {
            b.deposit(t(0));
        }
        assert!(b.try_withdraw(t(10)));
        assert_eq!(b.count(10), 1000);
        assert!(!b.try_withdraw(t(20)));
        // A call at 150 ms (a new slice): 2000, one more retry.
        b.deposit(t(150));
        assert!(b.try_withdraw(t(160)));
        assert_eq!(b.count(160), 0);
        // Deposits at 500 ms. At 900 ms the slices of 0 ms (+1000) and 150 ms (−1000) still
        // count and cancel out; the 500 ms slice gives 2000.
        b.deposit(t(500));
        b.deposit(t(500));
        assert_eq!(b.count(900), 2000);
        // At 1650 ms, 1150 ms after the deposits of 500 ms: every slice has expired.
        assert_eq!(b.count(1650), 0);
        assert!(!b.try_withdraw(t(1650)));
    }

    /// The reserve alone: 10 retries per second over 10 s gives 100 retries, then none until
    /// deposits come (withdrawals expire too, so the reserve comes back after a ttl).
    #[test]
    fn ratio_reserve_allows_min_retries_per_ttl() {
        let mut b = RatioBalance::new(RatioBudget::new(0.2, 10, SimDuration::from_secs(10)));
        let allowed = (0..150).filter(|_| b.try_withdraw(SimTime(5 * MS))).count();
        assert_eq!(allowed, 100);
        // Five calls deposit 5000: one more retry.
        for _ in 0..5 {
            b.deposit(SimTime(6 * MS));
        }
        assert!(b.try_withdraw(SimTime(7 * MS)));
        assert!(!b.try_withdraw(SimTime(8 * MS)));
        // Twelve seconds later every withdrawal has expired: the reserve is whole again.
        let again = (0..150)
            .filter(|_| b.try_withdraw(SimTime(12_000 * MS)))
            .count();
        assert_eq!(again, 100);
    }

    #[test]
    fn the_larger_of_the_share_and_the_floor() {
        let b = ConcurrentBudget {
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
