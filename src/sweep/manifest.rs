//! `manifest.json`: what produced an output folder — loadsim's version, the sweep file (its text
//! too, so `loadsim merge` can render the report without the original files), hashes of the sweep
//! file and of every input, the cell counts and the shard. Like results.csv and results.md it is the
//! same on every machine and every run of the same inputs, so a committed folder stays unchanged
//! when the sweep runs again. What depends on the machine and the invocation — the exact command,
//! the thread count, the wall time — goes to `timing.json` ([`Timing`]) beside it, which is not
//! committed.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::config::read::{MAX_FILE_BYTES, read_regular};

/// Largest manifest read: it holds the sweep file's text (at most [`MAX_FILE_BYTES`]) and a few
/// hashes and counts.
const MAX_MANIFEST_BYTES: u64 = 2 * MAX_FILE_BYTES;

/// `manifest.json` of a sweep's output folder (see the module's note).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// [`crate::report::SCHEMA_VERSION`] of the loadsim that wrote it; `None` before it existed.
    #[serde(default)]
    pub schema_version: Option<u32>,
    /// The version of the loadsim that wrote it (its crate version).
    pub loadsim_version: String,
    /// The sweep's `name`.
    pub sweep: String,
    /// The sweep file as given on the command line.
    pub sweep_file: String,
    /// SHA-256 of the sweep file's bytes.
    pub sweep_sha256: String,
    /// SHA-256 of the sweep file and every file its scenarios read (`extends` chains, imports,
    /// traces); `--resume` and `loadsim merge` refuse folders whose inputs differ.
    pub inputs_sha256: String,
    /// Cells of the whole sweep.
    pub cells_total: usize,
    /// Cells in this folder's results.
    pub cells: usize,
    /// `K/N` for a shard, `null` for a whole sweep or a merge.
    pub shard: Option<String>,
    /// For a merge: the folders merged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// The sweep file's text.
    pub sweep_text: String,
}

impl Manifest {
    /// As written to disk.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("manifests serialize");
        s.push('\n');
        s
    }

    /// Reads the manifest of an output folder.
    pub fn read(dir: &Path) -> Result<Manifest, ConfigError> {
        let path = dir.join(crate::runner::export::MANIFEST);
        let text = read_regular(&path, MAX_MANIFEST_BYTES).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ConfigError::file(
                    &path,
                    "does not exist: this folder holds no finished sweep or shard; finish it with `loadsim sweep … --resume`",
                )
            } else {
                ConfigError::file(&path, format!("cannot read the file: {e}"))
            }
        })?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            ConfigError::file(&path, format!("is not a loadsim sweep manifest: {e}"))
        })?;
        if m.schema_version != Some(crate::report::SCHEMA_VERSION) {
            return Err(ConfigError::file(
                &path,
                format!(
                    "was written by a loadsim with output schema {}, and this loadsim reads and writes schema {}: run that sweep or shard again with this loadsim (without --resume) before merging",
                    super::journal::version_text(m.schema_version),
                    crate::report::SCHEMA_VERSION
                ),
            ));
        }
        Ok(m)
    }

    /// The `sweep` named by the manifest of `dir`, whatever loadsim wrote it; `None` when there
    /// is no readable manifest.
    pub fn sweep_of(dir: &Path) -> Option<String> {
        let text = read_regular(
            &dir.join(crate::runner::export::MANIFEST),
            MAX_MANIFEST_BYTES,
        )
        .ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.get("sweep")?.as_str().map(str::to_owned)
    }
}

/// `timing.json`: how this folder was last written, on this machine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Timing {
    /// The command line that wrote this folder.
    pub command: String,
    /// Threads used (`--jobs`); `null` for a merge.
    pub jobs: Option<usize>,
    /// Wall time of the command, seconds.
    pub wall_s: f64,
}

impl Timing {
    /// As written to disk.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("timings serialize");
        s.push('\n');
        s
    }
}
