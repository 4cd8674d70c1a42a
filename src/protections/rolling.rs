//! A trailing window of per-second counts, for adaptive throttling and circuit breakers. Owns the
//! ring of one-second buckets and their running sums; memory is one bucket pair per second of
//! window, whatever the traffic.

use crate::time::SimTime;

/// Two counts (for example requests and accepts) over the last `len` whole seconds.
#[derive(Clone, Debug)]
pub(crate) struct Rolling {
    buckets: Vec<[u64; 2]>,
    sums: [u64; 2],
    /// The whole second the newest bucket stands for.
    head_sec: u64,
}

impl Rolling {
    /// A window of `seconds` one-second buckets (at least one).
    pub(crate) fn new(seconds: u64) -> Self {
        Rolling {
            buckets: vec![[0, 0]; seconds.max(1) as usize],
            sums: [0, 0],
            head_sec: 0,
        }
    }

    /// Moves the window forward to `now`, forgetting buckets that fell out of it.
    #[inline]
    fn advance(&mut self, now: SimTime) {
        let sec = now.whole_secs();
        if sec <= self.head_sec {
            return;
        }
        let n = self.buckets.len() as u64;
        let steps = (sec - self.head_sec).min(n);
        for s in 1..=steps {
            let b = &mut self.buckets[((self.head_sec + s) % n) as usize];
            self.sums[0] -= b[0];
            self.sums[1] -= b[1];
            *b = [0, 0];
        }
        self.head_sec = sec;
    }

    /// Adds to count `which` (0 or 1) at `now`.
    #[inline]
    pub(crate) fn add(&mut self, now: SimTime, which: usize) {
        self.advance(now);
        let n = self.buckets.len() as u64;
        self.buckets[(self.head_sec % n) as usize][which] += 1;
        self.sums[which] += 1;
    }

    /// Both counts over the window ending at `now`.
    #[inline]
    pub(crate) fn sums(&mut self, now: SimTime) -> [u64; 2] {
        self.advance(now);
        self.sums
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = [0, 0]);
        self.sums = [0, 0];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn counts_fall_out_after_the_window() {
        let mut r = Rolling::new(3);
        r.add(SimTime(0), 0);
        r.add(SimTime(S), 0);
        r.add(SimTime(S), 1);
        assert_eq!(r.sums(SimTime(2 * S)), [2, 1]);
        assert_eq!(r.sums(SimTime(3 * S)), [1, 1], "second 0 left the window");
        assert_eq!(r.sums(SimTime(100 * S)), [0, 0]);
        r.add(SimTime(100 * S + 5), 1);
        assert_eq!(r.sums(SimTime(101 * S)), [0, 1]);
    }
}
