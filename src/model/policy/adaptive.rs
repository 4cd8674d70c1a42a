//! Client-side adaptive throttling (Google SRE book, "Handling Overload"): the caller rejects a
//! request locally with probability max(0, (requests − K·accepts) / (requests + 1)), both counted
//! over a trailing window. `requests` counts every attempt the caller tries to send (including
//! those it then rejects locally), `accepts` every attempt the backend answered with success.

use super::rolling::Rolling;
use crate::scenario::AdaptiveThrottle;
use crate::time::SimTime;

/// Adaptive throttling state of one edge.
#[derive(Clone, Debug)]
pub struct Adaptive {
    k: f64,
    window: Rolling,
}

impl Adaptive {
    /// Empty history.
    pub fn new(p: AdaptiveThrottle) -> Self {
        Adaptive {
            k: p.k,
            window: Rolling::new(p.window.0 / 1_000_000_000),
        }
    }

    /// Counts a request about to be sent and returns the local-reject probability for it.
    #[inline]
    pub fn on_request(&mut self, now: SimTime) -> f64 {
        let [requests, accepts] = self.window.sums(now);
        let p = (requests as f64 - self.k * accepts as f64) / (requests as f64 + 1.0);
        self.window.add(now, 0);
        p.max(0.0)
    }

    /// Counts an accepted request.
    #[inline]
    pub fn on_accept(&mut self, now: SimTime) {
        self.window.add(now, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

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
