//! The clock and the event queue. Owns simulated "now" and the pending set of events keyed by
//! `(time, sequence)`: events at the same instant run in the order they were scheduled, so a run
//! is a pure function of its scenario. Knows nothing about RPCs; the model's closed `Event` enum is
//! a type parameter.
//!
//! Events scheduled for the current instant (replies, zero-delay hand-offs) skip the heap and go to
//! a FIFO lane; their sequence numbers are all larger than anything already pending at `now`, so
//! the lane preserves the `(time, seq)` order while saving a heap push and pop for the commonest
//! case.

mod queue;

pub use queue::EventQueue;

use crate::time::{SimDuration, SimTime};

/// The simulation clock plus its pending events.
#[derive(Debug)]
pub struct Engine<E> {
    now: SimTime,
    queue: EventQueue<E>,
    processed: u64,
}

impl<E: Copy> Default for Engine<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Engine<E> {
    /// An engine at time zero with nothing pending.
    pub fn new() -> Self {
        Engine {
            now: SimTime::ZERO,
            queue: EventQueue::new(),
            processed: 0,
        }
    }

    /// The current instant.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `now + delay`.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        let at = self.now + delay;
        self.queue.push(at, self.now, event);
    }

    /// Schedules `event` at the absolute instant `at` (never earlier than now).
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        let at = at.max(self.now);
        self.queue.push(at, self.now, event);
    }

    /// Pops the next event at or before `horizon`, advancing the clock to it.
    #[inline]
    pub fn next_before(&mut self, horizon: SimTime) -> Option<E> {
        let (at, event) = self.queue.pop_if_at_most(horizon)?;
        self.now = at;
        self.processed += 1;
        Some(event)
    }

    /// Moves the clock forward to `t` (used to close a run at its horizon).
    pub fn advance_to(&mut self, t: SimTime) {
        self.now = self.now.max(t);
    }

    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still pending.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// The largest number of events that were ever pending at once.
    pub fn peak_pending(&self) -> usize {
        self.queue.peak_len()
    }
}
