//! `loadsim sweep` and `loadsim merge`: the pipeline lives in [`crate::sweep`]; these are its
//! entry points for the binary.

pub use crate::sweep::Shard;
pub use crate::sweep::merge::merge;
pub use crate::sweep::run::{SweepOptions, sweep};
