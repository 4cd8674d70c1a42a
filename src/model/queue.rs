//! A service's busy slots and its queue of waiting jobs. Owns [`Station`], through whose methods
//! (`occupy`, `release`, `enqueue`, `dequeue`, `cancel_queued`) every change of either level goes,
//! each first telling the service's [`LevelMeter`] the levels that held until then, so the time
//! integrals behind utilisation and queue length cannot miss a change. Also owns the queue's order
//! (which end is served) and lazy removal: a job cancelled while queued stays in the deque as a
//! stale handle, skipped when it reaches the end being served, and not counted in the queue's
//! length. A service that orders or sheds by request-class priority keeps one FIFO lane per
//! priority (lane 0 the most important); which lane to serve is the service's choice, the lanes
//! are here.

use std::collections::VecDeque;

use super::slab::Handle;
use crate::metrics::levels::{LevelAreas, LevelMeter, LevelSample};
use crate::time::SimTime;

/// Which end to serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    Oldest,
    Newest,
}

/// Busy slots and queued jobs of one service, with their time integrals.
#[derive(Debug)]
pub(super) struct Station {
    busy: u32,
    /// Queued jobs, stale (cancelled) entries included: lane 0.
    entries: VecDeque<Handle>,
    /// Lanes 1.. of a station with priority lanes (empty otherwise).
    more: Vec<VecDeque<Handle>>,
    /// Entries in all lanes, stale ones included.
    len: usize,
    stale: usize,
    meter: LevelMeter,
}

impl Station {
    /// An idle station with `lanes` priority lanes (1 for a plain queue); `arrivals_end` bounds
    /// the period the summary averages over.
    pub(super) fn new(arrivals_end: SimTime, lanes: usize) -> Self {
        Station {
            busy: 0,
            entries: VecDeque::new(),
            more: (1..lanes).map(|_| VecDeque::new()).collect(),
            len: 0,
            stale: 0,
            meter: LevelMeter::new(arrivals_end),
        }
    }

    /// Number of priority lanes.
    #[inline]
    pub(super) fn lanes(&self) -> usize {
        1 + self.more.len()
    }

    #[inline]
    fn lane(&self, lane: usize) -> &VecDeque<Handle> {
        if lane == 0 {
            &self.entries
        } else {
            &self.more[lane - 1]
        }
    }

    #[inline]
    fn lane_mut(&mut self, lane: usize) -> &mut VecDeque<Handle> {
        if lane == 0 {
            &mut self.entries
        } else {
            &mut self.more[lane - 1]
        }
    }

    /// Slots in use.
    #[inline]
    pub(super) fn busy(&self) -> u32 {
        self.busy
    }

    /// Live queued jobs.
    #[inline]
    pub(super) fn queued(&self) -> usize {
        self.len - self.stale
    }

    /// Whether the queue holds no entry at all, live or stale.
    #[inline]
    pub(super) fn has_no_entries(&self) -> bool {
        self.len == 0
    }

    /// Whether no live job waits.
    #[inline]
    pub(super) fn queue_is_empty(&self) -> bool {
        self.queued() == 0
    }

    /// Accounts for the levels that held until `now`, just before one changes.
    #[inline]
    fn advance(&mut self, now: SimTime) {
        self.meter.advance(now, self.busy, self.queued());
    }

    /// A job takes a slot at `now`.
    #[inline]
    pub(super) fn occupy(&mut self, now: SimTime) {
        self.advance(now);
        self.busy += 1;
    }

    /// A job gives its slot back at `now`.
    #[inline]
    pub(super) fn release(&mut self, now: SimTime) {
        self.advance(now);
        self.busy -= 1;
    }

    /// A job joins lane `lane` at the newest end at `now`; returns the queue's new length.
    #[inline]
    pub(super) fn enqueue(&mut self, now: SimTime, job: Handle, lane: usize) -> usize {
        self.advance(now);
        self.lane_mut(lane).push_back(job);
        self.len += 1;
        self.queued()
    }

    /// The live job at `end` of `lane` leaves the queue at `now` (the caller checked it is live
    /// with [`Station::peek`]): served, or evicted.
    #[inline]
    pub(super) fn dequeue(&mut self, now: SimTime, lane: usize, end: End) -> Option<Handle> {
        self.advance(now);
        self.pop(lane, end)
    }

    /// A queued job was cancelled at `now`: it no longer counts, its entry is now stale.
    #[inline]
    pub(super) fn cancel_queued(&mut self, now: SimTime) {
        self.advance(now);
        self.stale += 1;
    }

    /// Removes the stale entry at `end` of `lane` (no level changes).
    #[inline]
    pub(super) fn discard_stale(&mut self, lane: usize, end: End) {
        if self.pop(lane, end).is_some() {
            self.stale -= 1;
        }
    }

    /// The entry at `end` of `lane` without removing it (it may be stale).
    #[inline]
    pub(super) fn peek(&self, lane: usize, end: End) -> Option<Handle> {
        let q = self.lane(lane);
        match end {
            End::Oldest => q.front().copied(),
            End::Newest => q.back().copied(),
        }
    }

    #[inline]
    fn pop(&mut self, lane: usize, end: End) -> Option<Handle> {
        let q = self.lane_mut(lane);
        let h = match end {
            End::Oldest => q.pop_front(),
            End::Newest => q.pop_back(),
        };
        if h.is_some() {
            self.len -= 1;
        }
        h
    }

    /// The levels' integrals and peaks at a time-series bin boundary `at`.
    pub(super) fn sample(&mut self, at: SimTime) -> LevelSample {
        self.meter.sample(at, self.busy, self.queued())
    }

    /// ∫ busy slots dt from 0 to `now` (the autoscaler's reading).
    pub(super) fn busy_area(&self, now: SimTime) -> u128 {
        self.meter.busy_area_at(now, self.busy)
    }

    /// The levels' integrals over the arrival period.
    pub(super) fn period_areas(&self) -> LevelAreas {
        self.meter.period_areas(self.busy, self.queued())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ns: u64) -> SimTime {
        SimTime(ns)
    }

    #[test]
    fn every_level_change_is_integrated_and_stale_entries_do_not_count() {
        let mut st = Station::new(t(100), 1);
        st.occupy(t(10)); // busy 1 from 10
        assert_eq!(st.enqueue(t(20), Handle::NONE, 0), 1); // queue 1 from 20
        assert_eq!(st.enqueue(t(30), Handle::NONE, 0), 2); // queue 2 from 30
        st.cancel_queued(t(40)); // queue 1 from 40: one entry is stale
        assert_eq!((st.busy(), st.queued()), (1, 1));
        st.discard_stale(0, End::Newest); // no level change
        assert_eq!(st.queued(), 1);
        st.release(t(50)); // busy 0 from 50
        assert!(st.dequeue(t(60), 0, End::Oldest).is_some()); // queue 0 from 60
        st.occupy(t(60)); // busy 1 from 60 to the end of arrivals
        assert!(st.queue_is_empty());
        assert_eq!(
            st.period_areas(),
            LevelAreas {
                busy: 40 + 40,
                queue: 10 + 2 * 10 + 20,
            }
        );
        let s = st.sample(t(200));
        assert_eq!((s.busy_max, s.queue_max), (1, 2));
        assert_eq!(s.areas.busy, 40 + 140);
    }
}
