//! Latency histograms. Owns [`MicrosHistogram`], the microsecond HDR histogram the recorder fills
//! for user latencies and queueing times, with an exact array for short durations.

use hdrhistogram::Histogram;

use crate::time::SimDuration;

/// The longest latency a histogram tells apart: 100 days in microseconds (longer ones count as
/// this).
const HIGHEST_MICROS: u64 = 100 * 86_400 * 1_000_000;

/// A latency histogram in microseconds, 1 µs to 100 days, 3 significant digits.
///
/// Its counts array grows with the largest value recorded (`auto`), instead of being allocated
/// and zeroed for 100 days up front (272 KB per histogram, a fifth of a short sweep cell's
/// instructions). Growing changes no bucket: the layout depends on the lowest value and the
/// significant digits only, so every quantile is the one a histogram bounded at 100 days gives
/// (tested below).
pub fn latency_histogram() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 2, 3).expect("static bounds are valid");
    h.auto(true);
    h
}

/// Below this many microseconds an HDR histogram with 3 significant digits stores every value
/// exactly (2048 sub-buckets of width 1), so counting such values in a plain array and adding them
/// when the histogram is read gives the very histogram that recording each would give.
const EXACT_MICROS: usize = 2048;

/// A latency histogram in microseconds ([`latency_histogram`]) with a cheap path for short
/// durations: most queueing times are zero or a few milliseconds, and an array increment costs a
/// tenth of an HDR record. Read it through [`MicrosHistogram::histogram`].
#[derive(Clone, Debug)]
pub struct MicrosHistogram {
    /// `exact[v]`: how many values of `v` µs (v < [`EXACT_MICROS`]) are not yet in `hdr`.
    exact: Box<[u64]>,
    hdr: Histogram<u64>,
}

impl Default for MicrosHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl MicrosHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        MicrosHistogram {
            exact: vec![0; EXACT_MICROS].into_boxed_slice(),
            hdr: latency_histogram(),
        }
    }

    /// Records `d`, in whole microseconds clamped to the histogram's range.
    #[inline]
    pub fn record(&mut self, d: SimDuration) {
        let us = (d.0 / 1_000).max(1);
        match self.exact.get_mut(us as usize) {
            Some(count) => *count += 1,
            None => self
                .hdr
                .record(us.min(HIGHEST_MICROS))
                .expect("clamped into range"),
        }
    }

    /// Everything recorded, as one HDR histogram: the exact counts move into it (so reading
    /// takes `&mut`, copies nothing, and recording may go on after).
    pub fn histogram(&mut self) -> &Histogram<u64> {
        for (us, n) in self.exact.iter_mut().enumerate().filter(|(_, n)| **n > 0) {
            self.hdr
                .record_n(us as u64, *n)
                .expect("exact values are in range");
            *n = 0;
        }
        &self.hdr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_histogram_equals_direct_hdr_recording() {
        // The histogram this one must equal: bounded at 100 days from the start, as it was.
        let mut direct = Histogram::<u64>::new_with_bounds(1, HIGHEST_MICROS, 3).unwrap();
        let mut fast = MicrosHistogram::new();
        let durations = (0..5_000u64)
            .map(|i| SimDuration(i * i * 7_919 % 50_000_000_000))
            .chain([SimDuration::ZERO, SimDuration(999), SimDuration(u64::MAX)]);
        for d in durations {
            fast.record(d);
            let us = (d.0 / 1_000).clamp(1, direct.high());
            direct.record(us).unwrap();
        }
        let merged = fast.histogram().clone();
        assert_eq!(merged, direct);
        for q in [0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), direct.value_at_quantile(q));
        }
    }

    #[test]
    fn a_histogram_grown_to_its_largest_value_gives_the_bounded_quantiles() {
        // Values up to 12 s only: the histogram stays far below 100 days, and every quantile,
        // the extremes and the count are those of the histogram bounded at 100 days.
        let mut bounded = Histogram::<u64>::new_with_bounds(1, HIGHEST_MICROS, 3).unwrap();
        let mut fast = MicrosHistogram::new();
        for i in 0..20_000u64 {
            let d = SimDuration(i * i * 104_729 % 12_000_000_000);
            fast.record(d);
            bounded.record((d.0 / 1_000).max(1)).unwrap();
        }
        let grown = fast.histogram().clone();
        assert!(grown.high() < bounded.high());
        assert_eq!(grown.len(), bounded.len());
        assert_eq!((grown.min(), grown.max()), (bounded.min(), bounded.max()));
        for k in 0..=1_000 {
            let q = k as f64 / 1_000.0;
            assert_eq!(
                grown.value_at_quantile(q),
                bounded.value_at_quantile(q),
                "q = {q}"
            );
        }
    }
}
