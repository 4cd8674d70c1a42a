//! Index-addressed storage for the records that live while a request is in flight (user requests,
//! server-side jobs, attempts). Owns slot reuse through a free list, so the hot path allocates only
//! when the number of live records reaches a new peak, and generation-checked handles for records
//! that stale events may still name (an attempt's timeout after its reply).

/// A slab of `T` with a free list.
#[derive(Debug)]
pub struct Slab<T> {
    entries: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            entries: Vec::new(),
            free: Vec::new(),
            live: 0,
            peak: 0,
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value` and returns its index.
    #[inline]
    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = Some(value);
                i
            }
            None => {
                self.entries.push(Some(value));
                (self.entries.len() - 1) as u32
            }
        }
    }

    /// Removes and returns the record at `i`.
    #[inline]
    pub fn remove(&mut self, i: u32) -> T {
        let v = self.entries[i as usize].take().expect("slab index is live");
        self.free.push(i);
        self.live -= 1;
        v
    }

    /// Number of live records.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether nothing is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The most records ever live at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Slots ever allocated (live or free): the bound for per-slot side arrays.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Live records in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|v| (i as u32, v)))
    }
}

impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        self.entries[i as usize]
            .as_ref()
            .expect("slab index is live")
    }
}

impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        self.entries[i as usize]
            .as_mut()
            .expect("slab index is live")
    }
}

/// A handle to a generation-checked record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    pub index: u32,
    pub generation: u32,
}

impl Handle {
    /// A handle that never names a record.
    pub const NONE: Handle = Handle {
        index: u32::MAX,
        generation: u32::MAX,
    };

    /// Whether this is [`Handle::NONE`].
    #[inline]
    pub fn is_none(self) -> bool {
        self.index == u32::MAX
    }
}

/// A slab whose handles go stale when their record is removed (tombstone cancellation): events
/// that name a removed record find nothing and do nothing.
#[derive(Debug)]
pub struct GenSlab<T> {
    entries: Vec<(u32, Option<T>)>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl<T> Default for GenSlab<T> {
    fn default() -> Self {
        GenSlab {
            entries: Vec::new(),
            free: Vec::new(),
            live: 0,
            peak: 0,
        }
    }
}

impl<T> GenSlab<T> {
    /// Stores `value` and returns a fresh handle.
    #[inline]
    pub fn insert(&mut self, value: T) -> Handle {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        match self.free.pop() {
            Some(i) => {
                let e = &mut self.entries[i as usize];
                e.1 = Some(value);
                Handle {
                    index: i,
                    generation: e.0,
                }
            }
            None => {
                self.entries.push((0, Some(value)));
                Handle {
                    index: (self.entries.len() - 1) as u32,
                    generation: 0,
                }
            }
        }
    }

    /// The record behind `h`, if it is still live.
    #[inline]
    pub fn get(&self, h: Handle) -> Option<&T> {
        match self.entries.get(h.index as usize) {
            Some((g, Some(v))) if *g == h.generation => Some(v),
            _ => None,
        }
    }

    /// The record behind `h`, mutably, if it is still live.
    #[inline]
    pub fn get_mut(&mut self, h: Handle) -> Option<&mut T> {
        match self.entries.get_mut(h.index as usize) {
            Some((g, Some(v))) if *g == h.generation => Some(v),
            _ => None,
        }
    }

    /// Whether `h` names a live record.
    #[inline]
    pub fn is_live(&self, h: Handle) -> bool {
        self.get(h).is_some()
    }

    /// Removes the record behind `h` if live; its handle (and every copy) goes stale.
    #[inline]
    pub fn take(&mut self, h: Handle) -> Option<T> {
        let e = self.entries.get_mut(h.index as usize)?;
        if e.0 != h.generation || e.1.is_none() {
            return None;
        }
        e.0 = e.0.wrapping_add(1);
        self.free.push(h.index);
        self.live -= 1;
        e.1.take()
    }

    /// Number of live records.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether nothing is live.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The most records ever live at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Slots ever allocated: the bound for per-slot side tables.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Live records in index order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().filter_map(|e| e.1.as_ref())
    }
}

impl<T> std::ops::Index<Handle> for GenSlab<T> {
    type Output = T;
    /// Panics on a stale handle: use only where the record is known to be live.
    #[inline]
    fn index(&self, h: Handle) -> &T {
        self.get(h).expect("handle is live")
    }
}

impl<T> std::ops::IndexMut<Handle> for GenSlab<T> {
    #[inline]
    fn index_mut(&mut self, h: Handle) -> &mut T {
        self.get_mut(h).expect("handle is live")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_reuses_freed_slots_and_tracks_peak() {
        let mut s = Slab::default();
        let a = s.insert('a');
        let _b = s.insert('b');
        assert_eq!(s.remove(a), 'a');
        let c = s.insert('c');
        assert_eq!(c, a);
        assert_eq!(s.peak(), 2);
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn genslab_handles_go_stale_after_take() {
        let mut s = GenSlab::default();
        let h = s.insert(1);
        assert_eq!(s.take(h), Some(1));
        assert_eq!(s.get(h), None);
        let h2 = s.insert(2);
        assert_eq!(h2.index, h.index);
        assert_eq!(s.take(h), None, "old handle must not reach the new record");
        assert_eq!(s.get(h2), Some(&2));
    }
}
