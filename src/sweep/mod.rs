//! Sweeps: one YAML file names scenarios and a grid of overrides; loadsim runs every cell and
//! writes tables that compare them. Owns the pipeline
//! `sweeps/*.yaml` → [`spec`] (the file, checked) → [`expand`](mod@expand) (cells, each validated as a
//! scenario before anything runs) → [`run`] (on the grid runner, [`journal`] of finished cells,
//! `--resume`, `--shard`) → [`aggregate`] (the finished cells over seeds) → [`render`]
//! (results.csv, results.md) and [`figure`] (the figures results.md embeds), and [`merge`] (shards
//! into one result). Outputs are byte-identical for any thread count, shard split or interruption: cells
//! carry their own seed, and outputs are rendered from the journal in cell order.

pub mod aggregate;
pub mod expand;
pub mod figure;
pub mod journal;
pub mod manifest;
pub mod merge;
pub mod page;
pub mod render;
pub mod run;
pub mod spec;

pub use expand::{Cell, Shard, expand};
pub use run::{SweepOptions, sweep};
pub use spec::SweepSpec;

use std::path::Path;

use crate::scenario::ConfigError;

/// Refuses an output folder that holds another sweep's results or journal: one folder, one
/// sweep (its figures and tables would otherwise mix). A folder that is no sweep's (no manifest
/// or journal of a sweep) but holds a file of a name a sweep writes (`results.csv`, …) is
/// refused too: that file is someone else's, and the sweep would overwrite it.
pub fn check_folder_sweep(dir: &Path, sweep: &str) -> Result<(), ConfigError> {
    let found = manifest::Manifest::sweep_of(dir).or_else(|| {
        journal::read(&dir.join(journal::FILE))
            .ok()
            .flatten()
            .map(|c| c.header.sweep)
    });
    match found {
        Some(other) if other != sweep => Err(ConfigError::flag(
            "--out",
            format!(
                "`{}` holds the results of sweep `{other}`, not `{sweep}`; a folder holds one sweep: choose another --out, or remove the folder",
                dir.display()
            ),
        )),
        Some(_) => Ok(()),
        // A journal of an older loadsim: a sweep's folder all the same.
        None if journal::written_by_loadsim(&dir.join(journal::FILE)) => Ok(()),
        // A file of a name only a sweep writes there makes the folder a sweep's.
        None => match crate::runner::export::SWEEP
            .fixed_names()
            .find(|n| dir.join(n).exists())
        {
            Some(name) => Err(ConfigError::flag(
                "--out",
                format!(
                    "`{}` holds {name} but is not a sweep's folder (it has no manifest.json or journal.jsonl of a sweep), and a sweep writes {name} there: choose another --out, or move the file",
                    dir.display()
                ),
            )),
            None => Ok(()),
        },
    }
}
