//! The gRFC A6 retry throttle, one bucket per caller per downstream: tokens start at
//! `max_tokens`; each failed attempt takes one (not below zero), each success adds `token_ratio`
//! (not above `max_tokens`); a retry is allowed only while tokens > `max_tokens / 2`. Kept in
//! thousandths of a token, as A6 allows three decimal places, so the arithmetic is exact.

use crate::scenario::Throttle;

/// One A6 token bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    tokens_milli: u64,
    max_milli: u64,
    ratio_milli: u64,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(t: Throttle) -> Self {
        TokenBucket {
            tokens_milli: t.max_milli,
            max_milli: t.max_milli,
            ratio_milli: t.ratio_milli,
        }
    }

    /// A failed attempt (timeout, reject, error): one token less.
    #[inline]
    pub fn on_failure(&mut self) {
        self.tokens_milli = self.tokens_milli.saturating_sub(1000);
    }

    /// A successful attempt: `token_ratio` more, up to the maximum.
    #[inline]
    pub fn on_success(&mut self) {
        self.tokens_milli = (self.tokens_milli + self.ratio_milli).min(self.max_milli);
    }

    /// Whether a retry may be sent now.
    #[inline]
    pub fn allows_retry(&self) -> bool {
        self.tokens_milli * 2 > self.max_milli
    }

    /// Current tokens.
    pub fn tokens(&self) -> f64 {
        self.tokens_milli as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket() -> TokenBucket {
        TokenBucket::new(Throttle {
            max_milli: 10_000,
            ratio_milli: 100,
        })
    }

    #[test]
    fn starts_full_and_allows_retries() {
        let b = bucket();
        assert_eq!(b.tokens(), 10.0);
        assert!(b.allows_retry());
    }

    #[test]
    fn threshold_is_strictly_above_half() {
        let mut b = bucket();
        for _ in 0..4 {
            b.on_failure();
        }
        assert_eq!(b.tokens(), 6.0);
        assert!(b.allows_retry());
        b.on_failure();
        assert_eq!(b.tokens(), 5.0);
        assert!(!b.allows_retry(), "exactly max/2 must refuse");
        b.on_success();
        assert_eq!(b.tokens(), 5.1);
        assert!(b.allows_retry(), "5.1 > 5 allows again");
    }

    #[test]
    fn never_below_zero_nor_above_max() {
        let mut b = bucket();
        for _ in 0..50 {
            b.on_failure();
        }
        assert_eq!(b.tokens(), 0.0);
        for _ in 0..500 {
            b.on_success();
        }
        assert_eq!(b.tokens(), 10.0);
    }
}
