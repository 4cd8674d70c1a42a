//! Typed indices: what a number that names a service, a replica slot, a call edge or a request
//! class is, written into its type. Each is a newtype over the narrowest integer the model stores
//! it in, so a record keeps its size, and mixing them up — a replica slot passed where a service is
//! meant, a class where an edge is meant — no longer compiles. The class-0 fallback bug (89e7806)
//! came from such a mix-up of bare integers.
//!
//! An index is made with `new(usize)` from a position in the table it indexes and read back with
//! `index()`. Plain tables (`Vec<T>` and slices, as the scenario keeps its services, edges and
//! classes) are indexed by it directly, and by a plain `usize` too, so a loop over positions stays a
//! loop; a table that two kinds of index could be confused over — the simulation's per-replica
//! state, which a service's index would also fit — is an [`IxVec`], indexed by its own kind only.

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

macro_rules! typed_index {
    ($(#[$doc:meta])* $name:ident($repr:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name($repr);

        impl $name {
            /// The index of position `i` of its table. Debug builds check that it fits.
            #[inline(always)]
            pub const fn new(i: usize) -> Self {
                debug_assert!(i <= <$repr>::MAX as usize);
                $name(i as $repr)
            }

            /// The position it names in its table.
            #[inline(always)]
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// The first `n` indices, in order.
            pub fn first(n: usize) -> impl DoubleEndedIterator<Item = Self> + Clone {
                (0..n).map(Self::new)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl<T> Index<$name> for [T] {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $name) -> &T {
                &self[i.index()]
            }
        }

        impl<T> IndexMut<$name> for [T] {
            #[inline(always)]
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self[i.index()]
            }
        }

        impl<T> Index<$name> for Vec<T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $name) -> &T {
                &self[i.index()]
            }
        }

        impl<T> IndexMut<$name> for Vec<T> {
            #[inline(always)]
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self[i.index()]
            }
        }
    };
}

typed_index! {
    /// A service: its position in `Scenario::services` (the order of the YAML map).
    ServiceIx(u32)
}

typed_index! {
    /// A call edge: its position in `Scenario::edges`.
    EdgeIx(u32)
}

typed_index! {
    /// A request class: its position in `Scenario::classes` (class 0 when the file has none).
    ClassIx(u16)
}

typed_index! {
    /// A replica of one service: 0 for the first (and only, without a fleet), up to the service's
    /// most replicas.
    ReplicaIx(u16)
}

typed_index! {
    /// A replica slot of the whole run: its position in the simulation's table of serving units,
    /// every service's replicas side by side (a service's replica 0 has the service's own index).
    UnitIx(u32)
}

/// A table indexed by one kind of index `I` only (not by `usize`, nor by another kind).
#[derive(Clone, Debug, PartialEq)]
pub struct IxVec<I, T> {
    items: Vec<T>,
    kind: PhantomData<fn(I) -> I>,
}

impl<I, T> IxVec<I, T> {
    /// The table of `items`, the first at index 0.
    pub fn from_vec(items: Vec<T>) -> Self {
        IxVec {
            items,
            kind: PhantomData,
        }
    }

    /// Its rows, in index order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Its rows, in index order, to change.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.items.iter_mut()
    }

    /// How many rows it has.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds a row at the end.
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Removes every row, keeping the allocation.
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

impl<I, T> Default for IxVec<I, T> {
    fn default() -> Self {
        IxVec::from_vec(Vec::new())
    }
}

impl<I, T> FromIterator<T> for IxVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        IxVec::from_vec(iter.into_iter().collect())
    }
}

impl<'a, I, T> IntoIterator for &'a IxVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

macro_rules! ix_vec_index {
    ($($name:ident),*) => {$(
        impl<T> Index<$name> for IxVec<$name, T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $name) -> &T {
                &self.items[i.index()]
            }
        }

        impl<T> IndexMut<$name> for IxVec<$name, T> {
            #[inline(always)]
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self.items[i.index()]
            }
        }
    )*};
}

ix_vec_index!(ServiceIx, EdgeIx, ClassIx, ReplicaIx, UnitIx);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_reads_back_its_position_and_indexes_its_table() {
        let names: Vec<&str> = ["gateway", "api", "db"].into();
        let s = ServiceIx::new(2);
        assert_eq!(s.index(), 2);
        assert_eq!(names[s], "db");
        assert_eq!(names[..][ServiceIx::new(1)], "api");
        let mut counts = vec![0u32; 3];
        counts[EdgeIx::new(1)] += 5;
        assert_eq!(counts, [0, 5, 0]);
        assert_eq!(ClassIx::default(), ClassIx::new(0));
        assert_eq!(ReplicaIx::new(7).to_string(), "7");
        let mut units: IxVec<UnitIx, u32> = IxVec::from_vec(vec![10, 20]);
        units[UnitIx::new(1)] += 1;
        assert_eq!(units.iter().copied().collect::<Vec<_>>(), [10, 21]);
    }

    #[test]
    fn an_index_is_as_small_as_the_integer_it_wraps() {
        assert_eq!(size_of::<ServiceIx>(), 4);
        assert_eq!(size_of::<EdgeIx>(), 4);
        assert_eq!(size_of::<UnitIx>(), 4);
        assert_eq!(size_of::<ClassIx>(), 2);
        assert_eq!(size_of::<ReplicaIx>(), 2);
    }
}
