//! Sweeps: one YAML file names scenarios and a grid of overrides; loadsim runs every cell and
//! writes tables that compare them. Owns the pipeline
//! `sweeps/*.yaml` → [`spec`] (the file, checked) → [`expand`](mod@expand) (cells, each validated as a
//! scenario before anything runs) → [`run`] (on the grid runner, [`journal`] of finished cells,
//! `--resume`, `--shard`) → [`aggregate`] (results.csv, results.md) and [`merge`] (shards into one
//! result). Outputs are byte-identical for any thread count, shard split or interruption: cells
//! carry their own seed, and outputs are rendered from the journal in cell order.

pub mod aggregate;
pub mod expand;
pub mod journal;
pub mod manifest;
pub mod merge;
pub mod run;
pub mod spec;

pub use expand::{Cell, Shard, expand};
pub use run::{SweepOptions, sweep};
pub use spec::SweepSpec;

use std::path::Path;

use crate::scenario::ConfigError;

/// Names of the files a sweep writes in its output folder.
pub const RESULTS_CSV: &str = "results.csv";
pub const RESULTS_MD: &str = "results.md";
pub const MANIFEST: &str = "manifest.json";
/// The machine-dependent record of a run (command, threads, wall time), not committed.
pub const TIMING: &str = "timing.json";

/// The files of fixed names a sweep (or a merge) writes in its output folder.
const FIXED: [&str; 6] = [
    RESULTS_CSV,
    RESULTS_MD,
    MANIFEST,
    journal::FILE,
    crate::report::html::REPORT_HTML,
    TIMING,
];

/// Whether a sweep (or a merge) writes a file of this name in its output folder: the results,
/// the manifest, the journal, the report page, the timing, the figures, the lock and the
/// temporary files of atomic writes.
pub fn writes(name: &str) -> bool {
    FIXED.contains(&name)
        || name == crate::runner::output::LOCK_FILE
        || (name.starts_with("figure_") && name.ends_with(".svg"))
        || (name.starts_with('.') && name.contains(".tmp-"))
}

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
        None => match FIXED.iter().find(|n| dir.join(n).exists()) {
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

/// Lower-case hex SHA-256 of `parts`, each prefixed by its length so that boundaries count.
pub fn sha256<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}
