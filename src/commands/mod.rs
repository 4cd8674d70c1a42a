//! The subcommands as library functions. Owns what each command does between parsed arguments and
//! text on stdout, so the binary stays a thin shell and tests can call commands directly.

pub mod boundary;
pub mod check;
pub mod new;
pub mod run;
pub mod schema;
pub mod seeds;
pub mod sweep;
pub mod test;

use std::path::PathBuf;

use rayon::prelude::*;

use crate::Error;
use crate::config::ConfigError;
use crate::scenario::Scenario;

/// Loads every file with the same overrides; all files' problems are reported together.
pub fn load_all(
    files: &[PathBuf],
    sets: &[String],
    seed: Option<u64>,
) -> Result<Vec<Scenario>, Error> {
    let results: Vec<Result<Scenario, ConfigError>> = files
        .par_iter()
        .map(|f| Scenario::load(f, sets, seed))
        .collect();
    let mut scenarios = Vec::new();
    let mut problems = Vec::new();
    for r in results {
        match r {
            Ok(s) => scenarios.push(s),
            Err(e) => problems.extend(e.diagnostics),
        }
    }
    if problems.is_empty() {
        Ok(scenarios)
    } else {
        problems.dedup();
        Err(ConfigError {
            diagnostics: problems,
        }
        .into())
    }
}
