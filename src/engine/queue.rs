//! The pending-event set: a radix heap on integer time, 64-way (six bits a digit), whose bucket
//! for the current instant is a FIFO lane. Ties at one instant pop in scheduling order, exactly as
//! a `(time, seq)` min-heap would pop them.
//!
//! A radix heap exploits two facts of a discrete-event run: times are integers, and nothing is
//! ever scheduled before the last instant popped (`last`). An event at time `t` is filed by the
//! highest six-bit digit in which `t` differs from `last` (its level) and by its own value of that
//! digit (its slot); events at exactly `last` wait in `current`. Every event of a lower (level,
//! slot) is earlier than every event of a higher one, so a pop takes from `current` and, when it
//! runs dry, empties the lowest non-empty bucket: its minimum becomes `last` and the rest fall to
//! lower levels. A push is an xor, a leading-zero count and a `Vec` push; an event moves down a
//! level at most 10 times. In the article's `protected` run an event not due at the current
//! instant is filed 2.5 times on average (a one-bit radix heap filed it 5.1 times; a binary heap
//! moves 16-byte keys `log n` times per pop).
//!
//! **Settled events are dropped, not popped.** A pop may name a predicate that tells live events
//! from settled ones (the model's: an attempt's timeout after the attempt was answered). When a
//! refill moves an event down a level it tests it, and drops it if settled; so a timeout whose
//! attempt was answered long before its deadline is filed once, tested once when its bucket is
//! emptied, and never refiled, popped or dispatched. The predicate must be monotone — once
//! settled, always settled — and then dropping is exact: the other events keep their order, and
//! a dropped event would have done nothing when popped. The queue counts what it dropped and
//! keeps the latest time among them, which is all a caller needs to end a run where it ended when
//! such events were popped.
//!
//! **Why ties keep scheduling order without a sequence number.** All pending events of one instant
//! are always in the same bucket (the bucket depends only on the time and `last`). Pushes append
//! in scheduling order; emptying a bucket walks it front to back and appends into buckets of lower
//! levels, which are all empty then, so relative order is kept.

use crate::time::SimTime;

/// Bits per digit, and so slots per level.
const DIGIT: u32 = 6;
const SLOTS: usize = 1 << DIGIT;
/// Levels needed to cover 64-bit times.
const LEVELS: usize = 64_usize.div_ceil(DIGIT as usize);

/// An emptied bucket keeps its allocation up to this many events.
const KEEP_CAPACITY: usize = 512;

/// Pending events ordered by `(time, scheduling order)`.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// Events at exactly `last`, in scheduling order; `current[head..]` are still pending.
    current: Vec<E>,
    head: usize,
    /// `buckets[level * SLOTS + slot]`: `(time, event)` whose highest digit differing from `last`
    /// is `level`, with `slot` its value of that digit.
    buckets: Box<[Vec<(u64, E)>; LEVELS * SLOTS]>,
    /// Bit `level` is set when some slot of that level is non-empty.
    levels: u16,
    /// Per level, bit `slot` is set when that bucket is non-empty.
    slots: [u64; LEVELS],
    /// The instant of the events in `current`: the last time popped (or about to be).
    last: u64,
    len: usize,
    peak: usize,
    /// Events dropped as settled, and the latest time among them (0 when none).
    dropped: u64,
    dropped_latest: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// `(level, slot)` of an event at `t != last`.
#[inline]
fn bucket_of(t: u64, last: u64) -> (usize, usize) {
    // t != last, so the xor is non-zero; the mask only tells the compiler the index is in range.
    let high_bit = (63 - (t ^ last).leading_zeros()) & 63;
    let level = high_bit / DIGIT;
    (
        level as usize,
        ((t >> (level * DIGIT)) as usize) & (SLOTS - 1),
    )
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            current: Vec::new(),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            levels: 0,
            slots: [0; LEVELS],
            last: 0,
            len: 0,
            peak: 0,
            dropped: 0,
            dropped_latest: 0,
        }
    }

    /// Adds `event` at `at`. `at` should not be earlier than the last instant popped; if it is
    /// (only possible after a pop refused by its horizon), the queue re-sorts itself, slowly.
    #[inline(always)]
    pub fn push(&mut self, at: SimTime, event: E) {
        let t = at.0;
        if t == self.last {
            self.current.push(event);
        } else if t > self.last {
            self.file(t, event);
        } else {
            self.rebase(t);
            self.current.push(event);
        }
        self.len += 1;
        if self.len > self.peak {
            self.peak = self.len;
        }
    }

    /// Puts an event at `t != last` in its bucket.
    #[inline]
    fn file(&mut self, t: u64, event: E) {
        let (level, slot) = bucket_of(t, self.last);
        self.buckets[level * SLOTS + slot].push((t, event));
        self.slots[level] |= 1 << slot;
        self.levels |= 1 << level;
    }

    /// Removes and returns the earliest event if its time is at most `horizon`.
    #[inline]
    pub fn pop_if_at_most(&mut self, horizon: SimTime) -> Option<(SimTime, E)> {
        self.pop_live_if_at_most(horizon, |_| true)
    }

    /// Removes and returns the earliest pending event if its time is at most `horizon`, dropping
    /// on the way the settled events (`live` false) that a refill moves down a level (see the
    /// module doc). A settled event can still be returned: one pushed for the current instant,
    /// or one due at the instant a refill makes current; the caller's handler must treat it as
    /// a no-op, as it did before events were dropped.
    #[inline]
    pub fn pop_live_if_at_most(
        &mut self,
        horizon: SimTime,
        mut live: impl FnMut(&E) -> bool,
    ) -> Option<(SimTime, E)> {
        if self.head == self.current.len() && !self.refill(&mut live) {
            return None;
        }
        if self.last > horizon.0 {
            return None;
        }
        let event = self.current[self.head];
        self.head += 1;
        self.len -= 1;
        Some((SimTime(self.last), event))
    }

    /// `current` ran dry: empties the lowest non-empty bucket, its minimum becoming `last`; the
    /// events due then go to `current`, the rest fall to lower levels or, settled, are dropped.
    /// False when nothing is pending.
    #[inline]
    fn refill(&mut self, live: &mut impl FnMut(&E) -> bool) -> bool {
        self.current.clear();
        self.head = 0;
        if self.levels == 0 {
            return false;
        }
        let level = self.levels.trailing_zeros() as usize;
        let slot = self.slots[level].trailing_zeros() as usize;
        self.slots[level] &= !(1 << slot);
        if self.slots[level] == 0 {
            self.levels &= !(1 << level);
        }
        let mut bucket = std::mem::take(&mut self.buckets[level * SLOTS + slot]);
        let m = bucket
            .iter()
            .map(|&(t, _)| t)
            .min()
            .expect("occupied bucket is non-empty");
        self.last = m;
        // One test of `live` each time an event moves down a level. The events due at `m` are
        // not tested: at least one must land in `current`, and testing them too cost more than
        // the few tombstones it saved (measured: evidence/perf.md).
        let (mut dropped, mut dropped_latest) = (0, self.dropped_latest);
        for entry in &bucket {
            if entry.0 == m {
                self.current.push(entry.1);
            } else if live(&entry.1) {
                self.file(entry.0, entry.1);
            } else {
                dropped += 1;
                dropped_latest = dropped_latest.max(entry.0);
            }
        }
        self.dropped += dropped;
        self.dropped_latest = dropped_latest;
        self.len -= dropped as usize;
        // Keep a small bucket's allocation for reuse; give a large one back, or the 704 buckets
        // would each hold on to the most they ever held (megabytes for hour-long runs).
        if bucket.capacity() <= KEEP_CAPACITY {
            bucket.clear();
            self.buckets[level * SLOTS + slot] = bucket;
        }
        true
    }

    /// Moves `last` back to `t` and re-files everything: the slow path for a push earlier than
    /// `last`, which a running simulation never makes.
    #[cold]
    #[inline(never)]
    fn rebase(&mut self, t: u64) {
        let mut all: Vec<(u64, E)> = self.current[self.head..]
            .iter()
            .map(|&e| (self.last, e))
            .collect();
        self.current.clear();
        self.head = 0;
        for bucket in self.buckets.iter_mut() {
            all.append(bucket);
        }
        self.levels = 0;
        self.slots = [0; LEVELS];
        self.last = t;
        for (time, event) in all {
            self.file(time, event);
        }
    }

    /// Empties the queue for another run, as [`EventQueue::new`] would make it, but keeping the
    /// allocations an emptied bucket keeps (up to `KEEP_CAPACITY` events each) and `current`'s.
    pub fn reset(&mut self) {
        self.current.clear();
        self.head = 0;
        for bucket in self.buckets.iter_mut() {
            if bucket.capacity() <= KEEP_CAPACITY {
                bucket.clear();
            } else {
                *bucket = Vec::new();
            }
        }
        self.levels = 0;
        self.slots = [0; LEVELS];
        self.last = 0;
        self.len = 0;
        self.peak = 0;
        self.dropped = 0;
        self.dropped_latest = 0;
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The largest `len()` ever reached.
    pub fn peak_len(&self) -> usize {
        self.peak
    }

    /// Events dropped as settled so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The latest time among the events dropped as settled (`None` when none was).
    pub fn latest_dropped(&self) -> Option<SimTime> {
        (self.dropped > 0).then_some(SimTime(self.dropped_latest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn drain(q: &mut EventQueue<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| q.pop_if_at_most(SimTime::NEVER).map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn ties_pop_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 1);
        q.push(SimTime(3), 2);
        q.push(SimTime(5), 3);
        q.push(SimTime(3), 4);
        assert_eq!(drain(&mut q), vec![(3, 2), (3, 4), (5, 1), (5, 3)]);
    }

    #[test]
    fn events_scheduled_now_run_after_those_scheduled_earlier_for_the_same_instant() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), 1); // scheduled long ago for t=10
        let (t, e) = q.pop_if_at_most(SimTime::NEVER).unwrap();
        assert_eq!((t.0, e), (10, 1));
        q.push(SimTime(20), 9); // pretend: already pending
        q.push(SimTime(10), 2); // now
        q.push(SimTime(10), 3); // now
        q.push(SimTime(11), 4);
        assert_eq!(drain(&mut q), vec![(10, 2), (10, 3), (11, 4), (20, 9)]);
    }

    #[test]
    fn same_instant_entry_scheduled_earlier_beats_one_scheduled_at_that_instant() {
        let mut q = EventQueue::new();
        q.push(SimTime(7), 1);
        q.push(SimTime(7), 2);
        let _ = q.pop_if_at_most(SimTime::NEVER); // now = 7, event 2 still pending
        q.push(SimTime(7), 3); // scheduled at the current instant, later
        assert_eq!(drain(&mut q), vec![(7, 2), (7, 3)]);
    }

    #[test]
    fn ties_keep_order_through_redistributions() {
        // Two instants far apart, interleaved, each pushed from different `last`s.
        let mut q = EventQueue::new();
        q.push(SimTime(1 << 40), 1);
        q.push(SimTime(3), 2);
        q.push(SimTime(1 << 40), 3);
        assert_eq!(q.pop_if_at_most(SimTime::NEVER), Some((SimTime(3), 2)));
        q.push(SimTime(1 << 40), 4);
        q.push(SimTime((1 << 40) - 1), 5);
        q.push(SimTime(1 << 40), 6);
        assert_eq!(
            drain(&mut q),
            vec![
                ((1 << 40) - 1, 5),
                (1 << 40, 1),
                (1 << 40, 3),
                (1 << 40, 4),
                (1 << 40, 6)
            ]
        );
    }

    #[test]
    fn horizon_stops_the_pop_and_len_tracks_peak() {
        let mut q = EventQueue::new();
        q.push(SimTime(1), 1);
        q.push(SimTime(100), 2);
        assert_eq!(q.peak_len(), 2);
        assert!(q.pop_if_at_most(SimTime(50)).is_some());
        assert!(q.pop_if_at_most(SimTime(50)).is_none());
        assert_eq!(q.len(), 1);
        // A push before the refused event (between the horizon and it) still pops first.
        q.push(SimTime(60), 3);
        assert_eq!(drain(&mut q), vec![(60, 3), (100, 2)]);
    }

    /// One operation of the model-based test: push at `now + delay`, or pop up to a horizon.
    #[derive(Clone, Debug)]
    enum Op {
        Push(u64),
        Pop(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            // Small delays make ties common; large ones cross many bucket boundaries.
            3 => (0u64..4).prop_map(Op::Push),
            3 => (0u64..1 << 20).prop_map(Op::Push),
            1 => any::<u32>().prop_map(|d| Op::Push(d as u64 * 977)),
            4 => (0u64..1 << 21).prop_map(Op::Pop),
        ]
    }

    #[test]
    fn settled_events_are_dropped_when_they_move_down_a_level() {
        let mut q = EventQueue::new();
        // Level 1, slot 1 holds 100..128; level 2, slot 1 holds 4096..8192 (last = 0).
        for (t, e) in [(120, 1), (100, 4), (5000, 3), (4200, 6), (100, 7)] {
            q.push(SimTime(t), e);
        }
        // Odd events are settled. 1 and 3 move down a level when their buckets are emptied and
        // are dropped; 7 is due at its bucket's minimum, goes to `current` untested and is
        // returned (the caller's handler ignores it, as before).
        let live = |e: &u32| e.is_multiple_of(2);
        let mut pops = Vec::new();
        while let Some((t, e)) = q.pop_live_if_at_most(SimTime::NEVER, live) {
            pops.push((t.0, e));
        }
        assert_eq!(pops, vec![(100, 4), (100, 7), (4200, 6)]);
        assert_eq!((q.dropped(), q.len()), (2, 0));
        assert_eq!(q.latest_dropped(), Some(SimTime(5000)));
        assert_eq!(EventQueue::<u32>::new().latest_dropped(), None);
    }

    /// The queue under test beside its `(time, seq)` min-heap reference; events are numbered in
    /// push order and pushed at `now + delay`.
    struct Paired {
        q: EventQueue<u32>,
        reference: BinaryHeap<Reverse<(u64, u32)>>,
        now: u64,
        seq: u32,
    }

    impl Paired {
        fn new() -> Self {
            Paired {
                q: EventQueue::new(),
                reference: BinaryHeap::new(),
                now: 0,
                seq: 0,
            }
        }

        fn push(&mut self, delay: u64) {
            self.q.push(SimTime(self.now + delay), self.seq);
            self.reference.push(Reverse((self.now + delay, self.seq)));
            self.seq += 1;
        }
    }

    proptest! {
        /// The queue pops exactly what a `(time, seq)` binary min-heap pops, horizons included.
        #[test]
        fn matches_a_time_seq_min_heap(ops in proptest::collection::vec(op(), 1..400)) {
            let mut p = Paired::new();
            for op in ops {
                match op {
                    Op::Push(d) => p.push(d),
                    Op::Pop(h) => {
                        let horizon = p.now + h;
                        let want = match p.reference.peek() {
                            Some(&Reverse((t, _))) if t <= horizon => p.reference.pop().map(|Reverse(x)| x),
                            _ => None,
                        };
                        let got = p.q.pop_if_at_most(SimTime(horizon)).map(|(t, e)| (t.0, e));
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got {
                            p.now = t;
                        }
                    }
                }
                prop_assert_eq!(p.q.len(), p.reference.len());
            }
            let rest: Vec<_> = std::iter::from_fn(|| p.reference.pop().map(|Reverse(x)| x)).collect();
            prop_assert_eq!(drain(&mut p.q), rest);
        }

        /// With a predicate, the queue pops what the min-heap pops except some settled events:
        /// everything it skips was settled, and every pushed event is popped, dropped or pending.
        #[test]
        fn drops_only_settled_events(
            ops in proptest::collection::vec(op(), 1..400),
            settle in proptest::collection::vec(any::<bool>(), 400),
        ) {
            let mut p = Paired::new();
            let mut popped = 0u64;
            // An event is settled from the step after its push on, when `settle[seq]` says so.
            let mut settled = vec![false; 400];
            for op in ops {
                match op {
                    Op::Push(d) => p.push(d),
                    Op::Pop(h) => {
                        let horizon = p.now + h;
                        let got = p
                            .q
                            .pop_live_if_at_most(SimTime(horizon), |e| !settled[*e as usize])
                            .map(|(t, e)| (t.0, e));
                        // The reference's pops up to `got` (or up to the horizon): all but `got`
                        // must be settled.
                        loop {
                            let next = match p.reference.peek() {
                                Some(&Reverse((t, e))) if t <= horizon => (t, e),
                                _ => {
                                    prop_assert_eq!(got, None);
                                    break;
                                }
                            };
                            p.reference.pop();
                            if Some(next) == got {
                                break;
                            }
                            prop_assert!(settled[next.1 as usize], "{:?} skipped but live", next);
                        }
                        if let Some((t, _)) = got {
                            p.now = t;
                            popped += 1;
                        }
                    }
                }
                let seq = p.seq as usize;
                if seq > 0 && settle[seq - 1] {
                    settled[seq - 1] = true;
                }
                prop_assert_eq!(popped + p.q.dropped() + p.q.len() as u64, seq as u64);
            }
        }
    }
}
