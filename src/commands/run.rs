//! `loadsim run`: load scenarios, run each (in parallel, results in argument order), render.

use rayon::prelude::*;

use super::load_all;
use crate::Error;
use crate::metrics::RunSummary;
use crate::model::{RunOptions, run_with};
use crate::report::Format;
use std::path::PathBuf;

/// Arguments of `loadsim run`, independent of clap.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub files: Vec<PathBuf>,
    pub sets: Vec<String>,
    pub seed: Option<u64>,
    pub options: RunOptions,
}

/// Runs every scenario of `req`, in argument order.
pub fn run_all(req: &RunRequest) -> Result<Vec<RunSummary>, Error> {
    let scenarios = load_all(&req.files, &req.sets, req.seed)?;
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
