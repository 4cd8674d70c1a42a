//! Analyses over scenarios, beyond a single run. Owns what `loadsim check` and `loadsim boundary`
//! compute: [`lint`] checks a scenario's policies against the article's budget rules without
//! simulating (pure functions over [`crate::Scenario`]); [`boundary`] searches, by scanning and
//! bisecting over one key, for the smallest value at which a run no longer recovers, and lays out
//! the 2-D phase diagram over two keys; [`tune`] searches settings that survive a set of faults
//! ([`faultset`]: the fault-set files it reads). Rendering lives in `commands`.

pub mod boundary;
pub mod calibrate;
pub mod faultset;
pub mod lint;
pub mod tune;
