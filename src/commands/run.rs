//! `loadsim run`: load scenarios, run each (in parallel, results in argument order), render.

use rayon::prelude::*;

use super::load_all;
use crate::Error;
use crate::guard;
use crate::metrics::RunSummary;
use crate::model::{RunOptions, run_with};
use crate::report::Format;
use crate::scenario::ConfigError;
use std::path::PathBuf;

/// Arguments of `loadsim run`, independent of clap.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub files: Vec<PathBuf>,
    pub sets: Vec<String>,
    pub seed: Option<u64>,
    pub options: RunOptions,
}

/// Runs every scenario of `req`, in argument order. Refuses, before running any, scenarios whose
/// event bound exceeds `req.options.max_events` ([`guard::check_event_budget`]).
pub fn run_all(req: &RunRequest) -> Result<Vec<RunSummary>, Error> {
    let scenarios = load_all(&req.files, &req.sets, req.seed)?;
    let mut too_big = Vec::new();
    for (sc, file) in scenarios.iter().zip(&req.files) {
        if let Err(e) = guard::check_event_budget(sc, file, req.options.max_events) {
            too_big.extend(e.diagnostics);
        }
    }
    if !too_big.is_empty() {
        return Err(ConfigError {
            diagnostics: too_big,
        }
        .into());
    }
    let results: Vec<_> = scenarios
        .par_iter()
        .map(|s| run_with(s, req.options))
        .collect();
    results
        .into_iter()
        .map(|r| r.map_err(Error::from))
        .collect()
}

/// Runs and renders in `format`.
pub fn run_and_render(req: &RunRequest, format: Format) -> Result<String, Error> {
    let runs = run_all(req)?;
    Ok(format.renderer().render(&runs))
}
