//! One runner for grids of runs. `loadsim run` (several files), `loadsim sweep` (the cells of a
//! sweep file) and `loadsim boundary` (the probes of a search or a phase diagram) — and any later
//! command that runs a scenario many times, like a tuner — share what is not specific to them:
//!
//! - [`load`]: scenario files loaded once with the user's `--set`s ([`Subject`]), every file's
//!   problems reported together, and each run built from a copy with its own overrides and seed;
//! - [`map`]: the order-preserving parallel map on a pool of `--jobs` threads ([`Runner`]) and the
//!   progress bars on stderr ([`Progress`] for many runs, [`RunProgress`] for one long run in
//!   simulated time; hidden when stderr is not a terminal or the command is quiet);
//! - [`export`]: every file a command writes — declared in one table per command, checked before
//!   anything runs (an output is never one of the inputs or another output, and its folder is
//!   created the same way for every flag), written atomically (temporary file, then rename), with
//!   one error path, and the lock a sweep folder is held by while a command writes into it.
//!
//! A command is then: load subjects, plan and check outputs, map runs, render, write.

pub mod export;
pub mod load;
pub mod map;

pub use export::{Folder, FolderLock, OutputPlan, Target, output_error};
pub use load::{Subject, collect_all, load_scenarios, load_subjects};
pub use map::{Progress, RunProgress, Runner};
