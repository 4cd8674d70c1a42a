//! Client-side adaptive throttling (Google SRE book, "Handling Overload") on one edge
//! (`services.<caller>.calls.<callee>.adaptive_throttle`): the caller rejects a request locally
//! with probability max(0, (requests − K·accepts) / (requests + 1)), both counted over a trailing
//! window. `requests` counts every attempt the caller tries to send (including those it then
//! rejects locally), `accepts` every attempt the backend answered with success.

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::rolling::Rolling;
use super::{Problems, whole_seconds_window};
use crate::time::{SimDuration, SimTime};

/// Default multiplier K of accepts (the SRE book's value).
pub(crate) const DEFAULT_K: f64 = 2.0;
/// Default trailing window.
pub(crate) const DEFAULT_WINDOW: SimDuration = SimDuration::from_secs(120);

/// Adaptive throttling: reject locally with probability max(0, (requests − k·accepts) /
/// (requests + 1)) over a trailing window.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveThrottleRaw {
    /// The multiplier of accepts.
    #[schemars(extend("default" = DEFAULT_K))]
    pub k: Option<f64>,
    /// The trailing window, whole seconds.
    #[schemars(extend("default" = DEFAULT_WINDOW.to_string()))]
    pub window: Option<DurationText>,
}

/// Client-side adaptive throttling on one edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveThrottle {
    /// The multiplier K.
    pub k: f64,
    /// Trailing window, whole seconds.
    pub window: SimDuration,
}

impl AdaptiveThrottle {
    /// How long what happened stays in its state: the trailing window. A pilot run watches the
    /// regime after a fault at least this long ([`crate::guard::settling_time`]).
    pub fn memory(&self) -> SimDuration {
        self.window
    }
}

/// Checks `adaptive_throttle` at `key`.
pub(crate) fn validate(
    key: &str,
    t: &AdaptiveThrottleRaw,
    p: &mut impl Problems,
) -> Option<AdaptiveThrottle> {
    let k = t.k.unwrap_or(DEFAULT_K);
    if !(k.is_finite() && (1.0..=100.0).contains(&k)) {
        p.problem(&format!("{key}.k"), "must be in [1, 100]".into());
        return None;
    }
    let window = whole_seconds_window(&format!("{key}.window"), t.window, DEFAULT_WINDOW, p)?;
    Some(AdaptiveThrottle { k, window })
}

/// Adaptive throttling state of one edge.
#[derive(Clone, Debug)]
pub(crate) struct Adaptive {
    k: f64,
    window: Rolling,
}

impl Adaptive {
    /// Empty history.
    pub(crate) fn new(p: AdaptiveThrottle) -> Self {
        Adaptive {
            k: p.k,
            window: Rolling::new(p.window.0 / 1_000_000_000),
        }
    }

    /// Counts a request about to be sent and returns the local-reject probability for it.
    #[inline]
    pub(crate) fn on_request(&mut self, now: SimTime) -> f64 {
        let [requests, accepts] = self.window.sums(now);
        let p = (requests as f64 - self.k * accepts as f64) / (requests as f64 + 1.0);
        self.window.add(now, 0);
        p.max(0.0)
    }

    /// Counts an accepted request.
    #[inline]
    pub(crate) fn on_accept(&mut self, now: SimTime) {
        self.window.add(now, 1);
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
                    "adaptive_throttle: {k: 0.5}",
                    "adaptive_throttle.k",
                    "must be in [1, 100]",
                ),
                (
                    "adaptive_throttle: {k: .nan}",
                    "adaptive_throttle.k",
                    "must be in [1, 100]",
                ),
                (
                    "adaptive_throttle: {window: 1500ms}",
                    "adaptive_throttle.window",
                    "must be a whole number of seconds between 1s and 1h",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "adaptive_throttle: {}",
                "adaptive_throttle: {k: 1, window: 1s}",
            ],
        );
    }

    #[test]
    fn no_rejection_while_accepts_keep_up_then_the_sre_formula() {
        let mut a = Adaptive::new(AdaptiveThrottle {
            k: 2.0,
            window: SimDuration::from_secs(120),
        });
        let t = SimTime(0);
        for _ in 0..10 {
            assert_eq!(a.on_request(t), 0.0);
            a.on_accept(t);
        }
        // 10 requests, 10 accepts: 10 − 20 < 0.
        assert_eq!(a.on_request(t), 0.0);
        // Now 11 requests, 10 accepts; add 29 failing requests: 40 requests, 10 accepts.
        for _ in 0..29 {
            a.on_request(t);
        }
        let p = a.on_request(t);
        assert!((p - (40.0 - 20.0) / 41.0).abs() < 1e-12, "{p}");
    }
}
