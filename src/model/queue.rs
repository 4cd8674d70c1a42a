//! A service's queue of waiting jobs. Owns the order (FIFO, LIFO, adaptive LIFO) and lazy removal:
//! a job cancelled while queued stays in the deque as a stale handle, skipped when it reaches the
//! end being served, and not counted in the queue's length.

use std::collections::VecDeque;

use super::slab::Handle;

/// Queued jobs plus the count of stale (cancelled) entries among them.
#[derive(Debug, Default)]
pub struct ServiceQueue {
    entries: VecDeque<Handle>,
    stale: usize,
}

/// Which end to serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Oldest,
    Newest,
}

impl ServiceQueue {
    /// Live queued jobs.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len() - self.stale
    }

    /// Whether no live job waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a job at the newest end.
    #[inline]
    pub fn push(&mut self, job: Handle) {
        self.entries.push_back(job);
    }

    /// A queued job was cancelled: its entry is now stale.
    #[inline]
    pub fn mark_stale(&mut self) {
        self.stale += 1;
    }

    /// The entry at `end` without removing it (it may be stale).
    #[inline]
    pub fn peek(&self, end: End) -> Option<Handle> {
        match end {
            End::Oldest => self.entries.front().copied(),
            End::Newest => self.entries.back().copied(),
        }
    }

    /// Removes the entry at `end`; `stale` says whether it was a cancelled job's.
    #[inline]
    pub fn pop(&mut self, end: End, stale: bool) -> Option<Handle> {
        let h = match end {
            End::Oldest => self.entries.pop_front(),
            End::Newest => self.entries.pop_back(),
        };
        if stale && h.is_some() {
            self.stale -= 1;
        }
        h
    }
}
