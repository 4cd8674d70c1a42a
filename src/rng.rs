//! Random streams. Owns the rule of docs/model.md §2.2: every random quantity comes from its own ChaCha
//! stream, derived from the scenario seed and a purpose label ("arrivals", "service/svc_b",
//! "jitter/svc_a->svc_b", "fault/slow_b"), so changing a policy never shifts the arrival sequence
//! (common random numbers). Sampling is written here, by inversion from 53-bit uniforms, so a
//! crate upgrade cannot silently move every result; only the heavier-tailed shapes use
//! `rand_distr`, whose version `Cargo.lock` pins.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 64-bit draws in the generator's buffer (ChaCha8Rng refills four 16-word blocks at a time):
/// the run [`Stream::fill_words`] copies at once and the distance beyond which
/// [`Stream::skip`] seeks instead of drawing.
const FILL_RUN: usize = 32;

/// One stream of random numbers for one purpose.
#[derive(Clone, Debug)]
pub struct Stream(ChaCha8Rng);

impl Stream {
    /// The stream for `purpose` under `seed`. Two different labels give independent streams; the
    /// same label and seed always give the same numbers.
    pub fn new(seed: u64, purpose: &str) -> Stream {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(fnv1a(purpose.as_bytes()));
        Stream(rng)
    }

    /// A uniform float in [0, 1) with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform float in the open interval (0, 1): the 53 random bits `k` of one word as
    /// `(k + ½) / 2⁵³`, so inverting a quantile function never meets 0 or 1.
    #[inline]
    pub fn open_unit(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// An exponential variate with the given mean, by inversion.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }

    /// A uniform integer in [0, upper] (inclusive), used for full-jitter backoff.
    #[inline]
    pub fn up_to(&mut self, upper: u64) -> u64 {
        if upper == 0 {
            return 0;
        }
        Stream::scale(self.0.next_u64(), upper)
    }

    /// What [`Stream::up_to`]`(upper)` gives for the 64-bit word it draws, for `upper` ≥ 1:
    /// Lemire's multiply-shift; the bias is below 2^-64 * upper, far under anything we measure.
    #[inline]
    pub fn scale(word: u64, upper: u64) -> u64 {
        ((word as u128 * (upper as u128 + 1)) >> 64) as u64
    }

    /// Fills `words` with the next 64-bit words of the stream: those `words.len()` calls of
    /// [`Stream::up_to`] would draw, and the stream ends where they leave it. Copied out of the
    /// generator's buffer a run at a time, for a caller that needs many draws at once.
    #[inline]
    pub fn fill_words(&mut self, words: &mut [u64]) {
        // A draw is two 32-bit words, the first the low half (rand_core's `next_u64`), which is
        // how the generator's little-endian bytes read back as `u64`s.
        let mut bytes = [0u8; 8 * FILL_RUN];
        for run in words.chunks_mut(FILL_RUN) {
            let bytes = &mut bytes[..8 * run.len()];
            self.0.fill_bytes(bytes);
            for (w, b) in run.iter_mut().zip(bytes.chunks_exact(8)) {
                *w = u64::from_le_bytes(b.try_into().expect("eight bytes"));
            }
        }
    }

    /// Moves the stream past `draws` 64-bit draws, as if they had been made. A seek refills the
    /// generator's buffer (four ChaCha blocks, 32 draws) whatever the distance, so up to a
    /// buffer's worth are drawn and dropped and more are sought past.
    #[inline]
    pub fn skip(&mut self, draws: u64) {
        if draws <= FILL_RUN as u64 {
            for _ in 0..draws {
                self.0.next_u64();
            }
        } else {
            self.0.set_word_pos(self.word_pos() + 2 * u128::from(draws));
        }
    }

    /// How far the stream has got, in 32-bit words (a 64-bit draw takes two).
    #[inline]
    pub fn word_pos(&self) -> u128 {
        self.0.get_word_pos()
    }

    /// Access to the raw generator, for `rand_distr` distributions.
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.0
    }
}

/// A keyed 64-bit hash of `n` under `key`: SplitMix64's output function (Steele, Lea and Flood,
/// "Fast splittable pseudorandom number generators", 2014) of `key + n`. For a fixed key it is a
/// bijection of `n`, so distinct `n` give distinct values. It draws from no stream: a decision
/// made from it (which requests `--span-sample` keeps) shifts no other random quantity.
pub(crate) fn mix64(key: u64, n: u64) -> u64 {
    let mut z = key.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of `purpose` under `seed` for [`mix64`].
pub(crate) fn hash_key(seed: u64, purpose: &str) -> u64 {
    mix64(fnv1a(purpose.as_bytes()), seed)
}

/// FNV-1a, 64 bit: a fixed, documented hash from a purpose label to a ChaCha stream number.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_purpose_repeat_and_purposes_differ() {
        let a: Vec<f64> = (0..4)
            .map({
                let mut s = Stream::new(7, "arrivals");
                move |_| s.unit()
            })
            .collect();
        let b: Vec<f64> = (0..4)
            .map({
                let mut s = Stream::new(7, "arrivals");
                move |_| s.unit()
            })
            .collect();
        let c: Vec<f64> = (0..4)
            .map({
                let mut s = Stream::new(7, "service/svc_b");
                move |_| s.unit()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn up_to_stays_in_range_and_reaches_both_ends() {
        let mut s = Stream::new(1, "jitter");
        let draws: Vec<u64> = (0..2000).map(|_| s.up_to(3)).collect();
        assert!(draws.iter().all(|&d| d <= 3));
        assert!(draws.contains(&0) && draws.contains(&3));
        assert_eq!(s.up_to(0), 0);
    }

    #[test]
    fn fill_words_and_skip_leave_the_stream_where_drawing_one_at_a_time_does() {
        // From every start within the generator's buffer and across it, for lengths around a
        // run and a buffer: the same words, and the next draw agrees.
        for start in 0..70u64 {
            for len in [0, 1, 2, 31, 32, 33, 63, 64, 65, 100] {
                let mut one = Stream::new(9, "lb/x");
                for _ in 0..start {
                    one.up_to(u64::MAX);
                }
                let (mut filled, mut skipped) = (one.clone(), one.clone());
                let drawn: Vec<u64> = (0..len).map(|_| one.up_to(u64::MAX)).collect();
                let mut words = vec![0; len];
                filled.fill_words(&mut words);
                skipped.skip(len as u64);
                assert_eq!(words, drawn, "start {start}, len {len}");
                assert_eq!(filled.word_pos(), one.word_pos());
                assert_eq!(skipped.word_pos(), one.word_pos());
                let next = one.up_to(u64::MAX);
                assert_eq!(filled.up_to(u64::MAX), next);
                assert_eq!(skipped.up_to(u64::MAX), next);
            }
        }
    }

    #[test]
    fn scale_is_what_up_to_draws() {
        let (mut a, mut b) = (Stream::new(4, "s"), Stream::new(4, "s"));
        for upper in 1..2_000u64 {
            let mut w = [0];
            b.fill_words(&mut w);
            assert_eq!(a.up_to(upper), Stream::scale(w[0], upper));
        }
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut s = Stream::new(3, "service/x");
        let n = 200_000;
        let mean = (0..n).map(|_| s.exponential(2.0)).sum::<f64>() / n as f64;
        // Standard error is 2/sqrt(n) ≈ 0.0045; 5 standard errors.
        assert!((mean - 2.0).abs() < 0.023, "mean {mean}");
    }
}
