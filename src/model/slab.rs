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
    /// Empties the slab as [`Slab::default`] would make it, keeping its allocations: the next
    /// records get the indices a fresh slab would give them.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.live = 0;
        self.peak = 0;
    }

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
    /// The record's slot in the slab.
    pub index: u32,
    /// The slot's generation when the record was inserted: a handle to a freed and reused slot
    /// no longer matches.
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
///
/// A slot's generation is odd while it holds a record and even while it is free (insert and take
/// each add one), and a handle carries the odd generation of its record. So one comparison tells
/// a live handle from a stale one, and a removed record's bytes can stay where they are: no
/// `Option` to write, test or clear on the hot path. Records are `Copy`, so leaving them is free.
#[derive(Debug)]
pub struct GenSlab<T> {
    entries: Vec<Entry<T>>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

/// One slot: its generation and its record (stale while the generation is even).
#[derive(Debug)]
struct Entry<T> {
    generation: u32,
    value: T,
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

impl<T: Copy> GenSlab<T> {
    /// Empties the slab as [`GenSlab::default`] would make it, keeping its allocations: the
    /// next records get the handles (indices and generations) a fresh slab would give them.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.live = 0;
        self.peak = 0;
    }

    /// Stores `value` and returns a fresh handle.
    #[inline]
    pub fn insert(&mut self, value: T) -> Handle {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        match self.free.pop() {
            Some(i) => {
                let e = &mut self.entries[i as usize];
                e.generation = e.generation.wrapping_add(1);
                e.value = value;
                Handle {
                    index: i,
                    generation: e.generation,
                }
            }
            None => {
                self.entries.push(Entry {
                    generation: 1,
                    value,
                });
                Handle {
                    index: (self.entries.len() - 1) as u32,
                    generation: 1,
                }
            }
        }
    }

    /// The record behind `h`, if it is still live.
    #[inline]
    pub fn get(&self, h: Handle) -> Option<&T> {
        match self.entries.get(h.index as usize) {
            Some(e) if e.generation == h.generation => Some(&e.value),
            _ => None,
        }
    }

    /// The record behind `h`, mutably, if it is still live.
    #[inline]
    pub fn get_mut(&mut self, h: Handle) -> Option<&mut T> {
        match self.entries.get_mut(h.index as usize) {
            Some(e) if e.generation == h.generation => Some(&mut e.value),
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
        if e.generation != h.generation {
            return None;
        }
        e.generation = e.generation.wrapping_add(1);
        self.free.push(h.index);
        self.live -= 1;
        Some(e.value)
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
        self.entries
            .iter()
            .filter(|e| e.generation % 2 == 1)
            .map(|e| &e.value)
    }
}

impl<T: Copy> std::ops::Index<Handle> for GenSlab<T> {
    type Output = T;
    /// Panics on a stale handle: use only where the record is known to be live.
    #[inline]
    fn index(&self, h: Handle) -> &T {
        self.get(h).expect("handle is live")
    }
}

impl<T: Copy> std::ops::IndexMut<Handle> for GenSlab<T> {
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

    #[test]
    fn genslab_iterates_only_live_records_and_never_revives_a_handle() {
        let mut s = GenSlab::default();
        let handles: Vec<Handle> = (0..4).map(|v| s.insert(v)).collect();
        s.take(handles[1]);
        s.take(handles[3]);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![0, 2]);
        // Slot 3 is reused twice: neither older handle reaches a later record.
        let h = s.insert(30);
        assert_eq!(h.index, 3);
        s.take(h);
        let h2 = s.insert(31);
        assert_eq!(h2.index, 3);
        for stale in [handles[3], h] {
            assert!(!s.is_live(stale));
            assert_eq!(s.get(stale), None);
        }
        assert_eq!(s[h2], 31);
        assert_eq!(s.len(), 3);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![0, 2, 31]);
    }
}
