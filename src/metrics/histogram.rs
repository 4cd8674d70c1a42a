//! Latency histograms. Owns [`MicrosHistogram`], the microsecond HDR histogram the recorder fills
//! for user latencies and queueing times, with an exact array for short durations.

use hdrhistogram::Histogram;

use crate::time::SimDuration;

/// A latency histogram in microseconds, 1 µs to 100 days, 3 significant digits.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 100 * 86_400 * 1_000_000, 3).expect("static bounds are valid")
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
                .record(us.min(self.hdr.high()))
                .expect("clamped into range"),
        }
    }

    /// Everything recorded, as one HDR histogram.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = self.hdr.clone();
        for (us, &n) in self.exact.iter().enumerate().filter(|(_, n)| **n > 0) {
            h.record_n(us as u64, n).expect("exact values are in range");
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_histogram_equals_direct_hdr_recording() {
        let mut direct = latency_histogram();
        let mut fast = MicrosHistogram::new();
        let durations = (0..5_000u64)
            .map(|i| SimDuration(i * i * 7_919 % 50_000_000_000))
            .chain([SimDuration::ZERO, SimDuration(999), SimDuration(u64::MAX)]);
        for d in durations {
            fast.record(d);
            let us = (d.0 / 1_000).clamp(1, direct.high());
            direct.record(us).unwrap();
        }
        let merged = fast.histogram();
        assert_eq!(merged, direct);
        for q in [0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), direct.value_at_quantile(q));
        }
    }
}
