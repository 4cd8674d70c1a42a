//! `loadsim merge`: shards (or any finished sweep folders) into one result. Owns the refusals —
//! folders of different sweeps or inputs, a cell present in two folders, cells missing — and
//! writes the same results.csv and results.md a single run would, plus a journal so the merged
//! folder can itself be resumed or merged.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::expand::expand;
use super::journal::{self, CellRecord, Header, Journal};
use super::manifest::{Manifest, Timing};
use super::run::write_outputs;
use super::spec::SweepSpec;
use crate::Error;
use crate::config::ConfigError;
use crate::runner::{FolderLock, OutputPlan, Runner, export, output_error};
use crate::util::Output;

/// Merges the folders `dirs` into `out`; returns the stdout text (nothing).
pub fn merge(dirs: &[PathBuf], out: &Path, command: &str, quiet: bool) -> Result<Output, Error> {
    let started = Instant::now();
    let mut manifests = Vec::new();
    let mut problems = Vec::new();
    for d in dirs {
        match Manifest::read(d) {
            Ok(m) => manifests.push(m),
            Err(e) => problems.extend(e.diagnostics),
        }
    }
    if !problems.is_empty() {
        return Err(ConfigError {
            diagnostics: problems,
        }
        .into());
    }
    let Some(first) = manifests.first() else {
        return Err(ConfigError::flag("loadsim merge", "name at least one folder to merge").into());
    };
    for (m, d) in manifests.iter().zip(dirs).skip(1) {
        if m.inputs_sha256 != first.inputs_sha256 || m.sweep != first.sweep {
            return Err(ConfigError::file(
                d.join(export::MANIFEST),
                format!(
                    "comes from sweep `{}` with inputs {}, but {} comes from sweep `{}` with inputs {}; merge only shards of one sweep file run on the same scenario files",
                    m.sweep,
                    short(&m.inputs_sha256),
                    dirs[0].display(),
                    first.sweep,
                    short(&first.inputs_sha256)
                ),
            )
            .into());
        }
    }
    let spec = SweepSpec::from_text(Path::new(&first.sweep_file), &first.sweep_text)?;
    let cells = expand(&spec);
    let by_key: HashMap<&str, usize> = cells.iter().map(|c| (c.key.as_str(), c.index)).collect();

    let mut owner: Vec<Option<usize>> = vec![None; cells.len()];
    let mut records: Vec<CellRecord> = Vec::new();
    for (n, d) in dirs.iter().enumerate() {
        let path = d.join(journal::FILE);
        let contents = journal::read(&path)?.ok_or_else(|| {
            ConfigError::file(&path, "does not exist; a sweep folder keeps its journal")
        })?;
        if contents.torn {
            return Err(ConfigError::file(
                &path,
                "ends with a torn line (its sweep stopped while writing it); finish the shard with `loadsim sweep … --resume` and merge again",
            )
            .into());
        }
        if contents.header.inputs_sha256 != first.inputs_sha256 {
            return Err(ConfigError::file(
                &path,
                "belongs to other inputs than its manifest; run the shard again",
            )
            .into());
        }
        let mut mine: Vec<CellRecord> = contents.records.into_values().collect();
        mine.sort_by_key(|r| r.index);
        for r in mine {
            let Some(&i) = by_key.get(r.key.as_str()) else {
                return Err(ConfigError::file(
                    &path,
                    format!("holds cell `{}`, which the sweep does not have", r.key),
                )
                .into());
            };
            if let Some(other) = owner[i] {
                return Err(ConfigError::file(
                    &path,
                    format!(
                        "holds cell `{}`, which {} holds too; merge each cell once (shards of one split, or one whole run)",
                        r.key,
                        dirs[other].display()
                    ),
                )
                .into());
            }
            owner[i] = Some(n);
            records.push(CellRecord { index: i, ..r });
        }
    }
    let missing: Vec<&str> = cells
        .iter()
        .filter(|c| owner[c.index].is_none())
        .map(|c| c.key.as_str())
        .collect();
    if let Some(example) = missing.first() {
        return Err(ConfigError::flag(
            "loadsim merge",
            format!(
                "the folders hold {} of {} cells; {} missing, like `{example}`: run the missing shards (or finish them with --resume) and merge again",
                cells.len() - missing.len(),
                cells.len(),
                missing.len()
            ),
        )
        .into());
    }
    records.sort_by_key(|r| r.index);

    let inputs: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| [d.join(export::MANIFEST), d.join(journal::FILE)])
        .collect();
    let folder = OutputPlan::new(inputs.iter().map(PathBuf::as_path)).folder(
        "--out",
        out,
        &export::SWEEP,
    )?;
    let _lock = FolderLock::acquire(out, "--out")?;
    super::check_folder_sweep(out, &spec.name)?;
    let header = Header::new(&spec.name, &first.inputs_sha256, "1/1");
    let journal_path = folder.path(export::JOURNAL)?;
    Journal::create(&journal_path, &header, &records)
        .map_err(|e| output_error(&journal_path, e))?;
    let manifest = Manifest {
        schema_version: Some(crate::report::SCHEMA_VERSION),
        loadsim_version: env!("CARGO_PKG_VERSION").into(),
        sweep: spec.name.clone(),
        sweep_file: first.sweep_file.clone(),
        sweep_sha256: first.sweep_sha256.clone(),
        inputs_sha256: first.inputs_sha256.clone(),
        cells_total: cells.len(),
        cells: records.len(),
        shard: None,
        merged_from: dirs.iter().map(|d| d.display().to_string()).collect(),
        sweep_text: first.sweep_text.clone(),
    };
    let timing = Timing {
        command: command.to_owned(),
        jobs: None,
        wall_s: 0.0,
    };
    let runner = Runner::new(None)?;
    write_outputs(
        &runner, &folder, &spec, &cells, &records, &manifest, timing, started,
    )?;
    if quiet {
        return Ok(Output::default());
    }
    Ok(Output::note(format!(
        "merged {} folders: {} cells of sweep `{}` → {}",
        dirs.len(),
        records.len(),
        spec.name,
        out.display()
    )))
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}
