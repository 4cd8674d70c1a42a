//! The clock and the event queue. Owns simulated "now" and the pending set of events keyed by
//! `(time, sequence)`: events at the same instant run in the order they were scheduled, so a run
//! is a pure function of its scenario. Knows nothing about RPCs; the model's closed `Event` enum is
//! a type parameter.
//!
//! The queue is a radix heap (`queue.rs`): simulated time is an integer that never goes back, which
//! makes push and pop a few instructions each instead of a binary heap's `log n` key moves.

mod queue;

pub use queue::EventQueue;

use crate::time::{SimDuration, SimTime};

/// One operation on the event queue, as recorded by [`Engine::record_queue_ops`]: the input of the
/// queue-floor benchmark, which replays a real run's pending-set profile on the queue alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOp {
    /// An event was scheduled.
    Push {
        /// How far after the current instant (ns).
        delay: u64,
    },
    /// The next event was taken.
    Pop,
}

/// The simulation clock plus its pending events.
#[derive(Debug)]
pub struct Engine<E> {
    now: SimTime,
    queue: EventQueue<E>,
    processed: u64,
    /// Queue operations, when recording.
    ops: Option<Vec<QueueOp>>,
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
            ops: None,
        }
    }

    /// Starts recording every push and pop (see [`QueueOp`]).
    pub fn record_queue_ops(&mut self) {
        self.ops = Some(Vec::new());
    }

    /// The operations recorded so far (empty when not recording).
    pub fn take_queue_ops(&mut self) -> Vec<QueueOp> {
        self.ops.take().unwrap_or_default()
    }

    /// The current instant.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `now + delay`.
    #[inline(always)]
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        let at = self.now + delay;
        self.push(at, event);
    }

    /// Schedules `event` at the absolute instant `at` (never earlier than now).
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        let at = at.max(self.now);
        self.push(at, event);
    }

    #[inline(always)]
    fn push(&mut self, at: SimTime, event: E) {
        if let Some(ops) = &mut self.ops {
            ops.push(QueueOp::Push {
                delay: (at - self.now).0,
            });
        }
        self.queue.push(at, event);
    }

    /// Pops the next event at or before `horizon`, advancing the clock to it. Settled events
    /// (`live` false) that the queue meets on the way are dropped, neither counted nor reaching
    /// the clock (see [`EventQueue::pop_live_if_at_most`]).
    #[inline]
    pub fn next_live_before(
        &mut self,
        horizon: SimTime,
        live: impl FnMut(&E) -> bool,
    ) -> Option<E> {
        let (at, event) = self.queue.pop_live_if_at_most(horizon, live)?;
        if let Some(ops) = &mut self.ops {
            ops.push(QueueOp::Pop);
        }
        self.now = at;
        self.processed += 1;
        Some(event)
    }

    /// The latest time among the events dropped as settled (`None` when none was).
    pub fn latest_dropped(&self) -> Option<SimTime> {
        self.queue.latest_dropped()
    }

    /// Back to a fresh engine (clock at zero, nothing pending or processed, no recording) for
    /// another run, keeping the queue's allocations.
    pub fn reset(&mut self) {
        self.now = SimTime::ZERO;
        self.queue.reset();
        self.processed = 0;
        self.ops = None;
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
