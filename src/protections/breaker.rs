//! The circuit breaker on one edge (`services.<caller>.calls.<callee>.circuit_breaker`): closed →
//! open when, over a rolling window with at least `min_requests` attempts, the failure share
//! reaches `failure_rate` (or after `consecutive_failures` in a row); open for `open_for`, refusing
//! attempts; then half-open, admitting `half_open_probes` attempts — all must succeed to close, any
//! failure reopens. Results of attempts sent before the breaker opened are ignored while it is
//! open.

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::rolling::Rolling;
use super::{Problems, positive, whole_seconds_window};
use crate::time::{SimDuration, SimTime};

/// Default failure share that opens the breaker.
pub(crate) const DEFAULT_FAILURE_RATE: f64 = 0.5;
/// Default window the failure share is measured over.
pub(crate) const DEFAULT_WINDOW: SimDuration = SimDuration::from_secs(10);
/// Default attempts in the window before the share counts.
pub(crate) const DEFAULT_MIN_REQUESTS: u32 = 20;
/// Default time the breaker stays open before probing.
pub(crate) const DEFAULT_OPEN_FOR: SimDuration = SimDuration::from_secs(5);
/// Default successful probes in half-open that close it.
pub(crate) const DEFAULT_HALF_OPEN_PROBES: u32 = 3;

/// Circuit breaker: closed → open on the failure share over the window (or a run of failures),
/// open refuses at once, half-open probes close it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CircuitBreakerRaw {
    /// Failure share over `window` that opens the breaker.
    #[schemars(extend("default" = DEFAULT_FAILURE_RATE))]
    pub failure_rate: Option<f64>,
    /// The window the failure share is measured over, whole seconds.
    #[schemars(extend("default" = DEFAULT_WINDOW.to_string()))]
    pub window: Option<DurationText>,
    /// Attempts in the window before the share counts.
    #[schemars(extend("default" = DEFAULT_MIN_REQUESTS))]
    pub min_requests: Option<u32>,
    /// A run of this many failures opens the breaker too (default off).
    pub consecutive_failures: Option<u32>,
    /// How long the breaker stays open before probing.
    #[schemars(extend("default" = DEFAULT_OPEN_FOR.to_string()))]
    pub open_for: Option<DurationText>,
    /// Successful probes in half-open that close it.
    #[schemars(extend("default" = DEFAULT_HALF_OPEN_PROBES))]
    pub half_open_probes: Option<u32>,
}

/// Circuit breaker on one edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CircuitBreaker {
    /// Open when the failure share over the window reaches this.
    pub failure_rate: f64,
    /// Rolling window.
    pub window: SimDuration,
    /// Attempts needed in the window before the rate counts.
    pub min_requests: u32,
    /// Also open after this many failures in a row (`None`: off).
    pub consecutive_failures: Option<u32>,
    /// How long it stays open.
    pub open_for: SimDuration,
    /// Probes admitted half-open; all must succeed to close.
    pub half_open_probes: u32,
}

impl CircuitBreaker {
    /// How long what happened stays in its state: the rolling window, then `open_for` once it
    /// opens. A pilot run watches the regime after a fault at least this long
    /// ([`crate::guard::settling_time`]).
    pub fn memory(&self) -> SimDuration {
        self.window + self.open_for
    }
}

/// Checks `circuit_breaker` at `key`.
pub(crate) fn validate(
    key: &str,
    b: &CircuitBreakerRaw,
    p: &mut impl Problems,
) -> Option<CircuitBreaker> {
    let failure_rate = b.failure_rate.unwrap_or(DEFAULT_FAILURE_RATE);
    if !(failure_rate.is_finite() && failure_rate > 0.0 && failure_rate <= 1.0) {
        p.problem(
            &format!("{key}.failure_rate"),
            "must be a share in (0, 1]".into(),
        );
        return None;
    }
    let window = whole_seconds_window(&format!("{key}.window"), b.window, DEFAULT_WINDOW, p)?;
    let open_for = positive(
        &format!("{key}.open_for"),
        b.open_for.map_or(DEFAULT_OPEN_FOR, |d| d.0),
        p,
    )?;
    let half_open_probes = b.half_open_probes.unwrap_or(DEFAULT_HALF_OPEN_PROBES);
    if half_open_probes == 0 {
        p.problem(
            &format!("{key}.half_open_probes"),
            "must be at least 1".into(),
        );
        return None;
    }
    if b.consecutive_failures == Some(0) {
        p.problem(
            &format!("{key}.consecutive_failures"),
            "must be at least 1".into(),
        );
        return None;
    }
    Some(CircuitBreaker {
        failure_rate,
        window,
        min_requests: b.min_requests.unwrap_or(DEFAULT_MIN_REQUESTS),
        consecutive_failures: b.consecutive_failures,
        open_for,
        half_open_probes,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    Open { since: SimTime, until: SimTime },
    HalfOpen { sent: u32, ok: u32 },
}

/// Breaker state and its accounting.
#[derive(Clone, Debug)]
pub(crate) struct Breaker {
    p: CircuitBreaker,
    state: State,
    window: Rolling,
    consecutive: u32,
    /// Times the breaker opened.
    pub opened: u64,
    /// Total time spent open.
    pub open_time: SimDuration,
}

impl Breaker {
    /// A closed breaker.
    pub(crate) fn new(p: CircuitBreaker) -> Self {
        Breaker {
            p,
            state: State::Closed,
            window: Rolling::new(p.window.0 / 1_000_000_000),
            consecutive: 0,
            opened: 0,
            open_time: SimDuration::ZERO,
        }
    }

    /// Whether an attempt may be sent now (counts a half-open probe when it may).
    #[inline]
    pub(crate) fn allow(&mut self, now: SimTime) -> bool {
        if let State::Open { since, until } = self.state {
            if now < until {
                return false;
            }
            self.open_time = self.open_time + (until - since);
            self.state = State::HalfOpen { sent: 0, ok: 0 };
        }
        match &mut self.state {
            State::Closed => true,
            State::HalfOpen { sent, .. } if *sent < self.p.half_open_probes => {
                *sent += 1;
                true
            }
            _ => false,
        }
    }

    /// Records the result of an attempt.
    #[inline]
    pub(crate) fn on_result(&mut self, now: SimTime, ok: bool) {
        match &mut self.state {
            State::Open { .. } => {}
            State::HalfOpen { ok: oks, .. } => {
                if !ok {
                    self.open(now);
                } else {
                    *oks += 1;
                    if *oks >= self.p.half_open_probes {
                        self.state = State::Closed;
                        self.window.clear();
                        self.consecutive = 0;
                    }
                }
            }
            State::Closed => {
                self.window.add(now, if ok { 0 } else { 1 });
                self.consecutive = if ok { 0 } else { self.consecutive + 1 };
                let [oks, fails] = self.window.sums(now);
                let total = oks + fails;
                let by_rate = total >= self.p.min_requests as u64
                    && total > 0
                    && fails as f64 >= self.p.failure_rate * total as f64;
                let by_run = self
                    .p
                    .consecutive_failures
                    .is_some_and(|n| self.consecutive >= n);
                if by_rate || by_run {
                    self.open(now);
                }
            }
        }
    }

    fn open(&mut self, now: SimTime) {
        self.state = State::Open {
            since: now,
            until: now + self.p.open_for,
        };
        self.opened += 1;
    }

    /// Time spent open up to `end` (for the report).
    pub(crate) fn open_time_until(&self, end: SimTime) -> SimDuration {
        match self.state {
            State::Open { since, until } => self.open_time + (until.min(end) - since),
            _ => self.open_time,
        }
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
                    "circuit_breaker: {failure_rate: 0}",
                    "circuit_breaker.failure_rate",
                    "must be a share in (0, 1]",
                ),
                (
                    "circuit_breaker: {failure_rate: 1.5}",
                    "circuit_breaker.failure_rate",
                    "must be a share in (0, 1]",
                ),
                (
                    "circuit_breaker: {window: 500ms}",
                    "circuit_breaker.window",
                    "must be a whole number of seconds between 1s and 1h",
                ),
                (
                    "circuit_breaker: {window: 2h}",
                    "circuit_breaker.window",
                    "must be a whole number of seconds between 1s and 1h",
                ),
                (
                    "circuit_breaker: {open_for: 0s}",
                    "circuit_breaker.open_for",
                    "must be longer than 0s",
                ),
                (
                    "circuit_breaker: {half_open_probes: 0}",
                    "circuit_breaker.half_open_probes",
                    "must be at least 1",
                ),
                (
                    "circuit_breaker: {consecutive_failures: 0}",
                    "circuit_breaker.consecutive_failures",
                    "must be at least 1",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "circuit_breaker: {}",
                "circuit_breaker: {failure_rate: 1, window: 1h}",
            ],
        );
    }

    fn breaker() -> Breaker {
        Breaker::new(CircuitBreaker {
            failure_rate: 0.5,
            window: SimDuration::from_secs(10),
            min_requests: 4,
            consecutive_failures: None,
            open_for: SimDuration::from_secs(5),
            half_open_probes: 2,
        })
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn opens_on_rate_only_past_the_minimum_volume() {
        let mut b = breaker();
        let t = SimTime(0);
        b.on_result(t, false);
        b.on_result(t, false);
        b.on_result(t, false);
        assert!(b.allow(t), "3 attempts < min_requests 4");
        b.on_result(t, true);
        assert!(!b.allow(t), "3 of 4 failed ≥ 50 %");
        assert_eq!(b.opened, 1);
    }

    #[test]
    fn half_open_probes_close_or_reopen() {
        let mut b = breaker();
        for _ in 0..4 {
            b.on_result(SimTime(0), false);
        }
        assert!(!b.allow(SimTime(4 * S)));
        assert!(b.allow(SimTime(5 * S)), "half-open after 5 s");
        assert!(b.allow(SimTime(5 * S)));
        assert!(!b.allow(SimTime(5 * S)), "only two probes");
        b.on_result(SimTime(5 * S), true);
        b.on_result(SimTime(5 * S), true);
        assert!(b.allow(SimTime(5 * S)), "closed again");
        assert_eq!(
            b.open_time_until(SimTime(100 * S)),
            SimDuration::from_secs(5)
        );
        for _ in 0..4 {
            b.on_result(SimTime(6 * S), false);
        }
        assert!(b.allow(SimTime(11 * S)));
        b.on_result(SimTime(11 * S), false);
        assert!(!b.allow(SimTime(11 * S)), "a failed probe reopens");
        assert_eq!(b.opened, 3);
    }

    #[test]
    fn consecutive_failures_open_without_volume() {
        let mut b = Breaker::new(CircuitBreaker {
            consecutive_failures: Some(2),
            min_requests: 1000,
            ..breaker().p
        });
        b.on_result(SimTime(0), false);
        assert!(b.allow(SimTime(0)));
        b.on_result(SimTime(0), false);
        assert!(!b.allow(SimTime(0)));
    }
}
