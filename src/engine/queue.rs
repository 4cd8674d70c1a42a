//! The pending-event set: a binary min-heap on a packed `(time, seq)` key, plus a FIFO lane for
//! events scheduled at the current instant. Ties at one instant pop in scheduling order.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    /// `time << 64 | seq`: one integer comparison orders by time, then by scheduling order.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the smallest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Pending events ordered by `(time, seq)`.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// Events for the instant `lane_time`, in scheduling order, each with its sequence number.
    lane: VecDeque<(u64, E)>,
    lane_time: SimTime,
    seq: u64,
    peak: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            lane: VecDeque::new(),
            lane_time: SimTime::ZERO,
            seq: 0,
            peak: 0,
        }
    }

    /// Adds `event` at `at`; `now` is the current instant (`at >= now`).
    #[inline]
    pub fn push(&mut self, at: SimTime, now: SimTime, event: E) {
        let seq = self.seq;
        self.seq += 1;
        if at == now && (self.lane.is_empty() || self.lane_time == now) {
            self.lane_time = now;
            self.lane.push_back((seq, event));
        } else {
            self.heap.push(Entry {
                key: ((at.0 as u128) << 64) | seq as u128,
                event,
            });
        }
        let len = self.len();
        if len > self.peak {
            self.peak = len;
        }
    }

    /// Removes and returns the earliest event if its time is at most `horizon`.
    #[inline]
    pub fn pop_if_at_most(&mut self, horizon: SimTime) -> Option<(SimTime, E)> {
        let heap_key = self.heap.peek().map(|e| e.key);
        if let Some(&(lane_seq, lane_event)) = self.lane.front() {
            let lane_key = ((self.lane_time.0 as u128) << 64) | lane_seq as u128;
            if heap_key.is_none_or(|k| lane_key < k) {
                if self.lane_time > horizon {
                    return None;
                }
                self.lane.pop_front();
                return Some((self.lane_time, lane_event));
            }
        }
        let key = heap_key?;
        let at = SimTime((key >> 64) as u64);
        if at > horizon {
            return None;
        }
        let entry = self.heap.pop().expect("peeked entry exists");
        Some((at, entry.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lane.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest `len()` ever reached.
    pub fn peak_len(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue<u32>) -> Vec<(u64, u32)> {
        std::iter::from_fn(|| q.pop_if_at_most(SimTime::NEVER).map(|(t, e)| (t.0, e))).collect()
    }

    #[test]
    fn ties_pop_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), SimTime(0), 1);
        q.push(SimTime(3), SimTime(0), 2);
        q.push(SimTime(5), SimTime(0), 3);
        q.push(SimTime(3), SimTime(0), 4);
        assert_eq!(drain(&mut q), vec![(3, 2), (3, 4), (5, 1), (5, 3)]);
    }

    #[test]
    fn lane_events_run_after_heap_events_scheduled_earlier_for_the_same_instant() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), SimTime(0), 1); // scheduled long ago for t=10
        let (t, e) = q.pop_if_at_most(SimTime::NEVER).unwrap();
        assert_eq!((t.0, e), (10, 1));
        q.push(SimTime(20), SimTime(0), 9); // pretend: already pending
        q.push(SimTime(10), SimTime(10), 2); // lane
        q.push(SimTime(10), SimTime(10), 3); // lane
        q.push(SimTime(11), SimTime(10), 4);
        assert_eq!(drain(&mut q), vec![(10, 2), (10, 3), (11, 4), (20, 9)]);
    }

    #[test]
    fn same_instant_heap_entry_with_smaller_seq_beats_the_lane() {
        let mut q = EventQueue::new();
        q.push(SimTime(7), SimTime(0), 1);
        q.push(SimTime(7), SimTime(0), 2);
        let _ = q.pop_if_at_most(SimTime::NEVER); // now = 7, event 2 still in the heap
        q.push(SimTime(7), SimTime(7), 3); // lane, larger seq
        assert_eq!(drain(&mut q), vec![(7, 2), (7, 3)]);
    }

    #[test]
    fn horizon_stops_the_pop_and_len_tracks_peak() {
        let mut q = EventQueue::new();
        q.push(SimTime(1), SimTime(0), 1);
        q.push(SimTime(100), SimTime(0), 2);
        assert_eq!(q.peak_len(), 2);
        assert!(q.pop_if_at_most(SimTime(50)).is_some());
        assert!(q.pop_if_at_most(SimTime(50)).is_none());
        assert_eq!(q.len(), 1);
    }
}
