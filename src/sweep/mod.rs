//! Sweeps: one YAML file names scenarios and a grid of overrides; loadsim runs every cell and
//! writes tables that compare them. Owns the pipeline
//! `sweeps/*.yaml` → [`spec`] (the file, checked) → [`expand`] (cells, each validated as a
//! scenario before anything runs) → [`run`] (rayon, progress bar, [`journal`] of finished cells,
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

use std::io::Write;
use std::path::Path;

pub use expand::{Cell, Shard, expand};
pub use run::{SweepOptions, sweep};
pub use spec::SweepSpec;

/// Names of the files a sweep writes in its output folder.
pub const RESULTS_CSV: &str = "results.csv";
pub const RESULTS_MD: &str = "results.md";
pub const MANIFEST: &str = "manifest.json";

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so readers
/// see the old file or the new one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
