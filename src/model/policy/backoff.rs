//! Full-jitter exponential backoff (AWS Builders' Library): before retry n (0-based) wait a
//! uniform draw from [0, min(cap, base·2^n)], from the caller's own jitter stream.

use crate::rng::Stream;
use crate::scenario::Backoff;
use crate::time::SimDuration;

/// The wait before retry `n`.
#[inline]
pub fn full_jitter(backoff: &Backoff, n: u32, stream: &mut Stream) -> SimDuration {
    if backoff.base.is_zero() {
        return SimDuration::ZERO;
    }
    let upper = backoff
        .base
        .0
        .saturating_mul(1u64.checked_shl(n).unwrap_or(u64::MAX));
    let upper = backoff.cap.map_or(upper, |c| upper.min(c.0));
    SimDuration(stream.up_to(upper))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_within_the_doubling_bound_and_the_cap() {
        let mut s = Stream::new(1, "t");
        let b = Backoff {
            base: SimDuration::from_millis(10),
            cap: Some(SimDuration::from_millis(25)),
        };
        for n in 0..6 {
            let bound = (10u64 << n).min(25) * 1_000_000;
            let draws: Vec<u64> = (0..500).map(|_| full_jitter(&b, n, &mut s).0).collect();
            assert!(draws.iter().all(|&d| d <= bound), "retry {n}");
            assert!(
                draws.iter().any(|&d| d > bound / 2),
                "retry {n} never used the upper half"
            );
            assert!(
                draws.iter().any(|&d| d < bound / 2),
                "retry {n} never used the lower half"
            );
        }
    }

    #[test]
    fn zero_base_means_no_wait_and_huge_exponents_do_not_overflow() {
        let mut s = Stream::new(1, "t");
        let none = Backoff {
            base: SimDuration::ZERO,
            cap: None,
        };
        assert_eq!(full_jitter(&none, 3, &mut s), SimDuration::ZERO);
        let huge = Backoff {
            base: SimDuration::from_secs(1),
            cap: None,
        };
        let _ = full_jitter(&huge, 200, &mut s);
    }
}
