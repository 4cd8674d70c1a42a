//! `loadsim run`: load scenarios, run each (in parallel, results in argument order), render; on
//! request also bin each run over time and write the time-series CSV (`--timeseries`) and the SVG
//! figures (`--plot`).

use std::path::PathBuf;

use rayon::prelude::*;

use super::load_all;
use crate::Error;
use crate::config::ConfigError;
use crate::guard;
use crate::metrics::{RunSummary, TimeSeries};
use crate::model::{RunOptions, run_with, run_with_series};
use crate::report::Format;
use crate::scenario::Scenario;
use crate::time::SimDuration;

/// Arguments of `loadsim run`, independent of clap.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub files: Vec<PathBuf>,
    pub sets: Vec<String>,
    pub seed: Option<u64>,
    pub options: RunOptions,
}

/// The optional outputs of `loadsim run` beyond the report on stdout.
#[derive(Clone, Debug)]
pub struct SeriesOutputs {
    /// `--timeseries FILE.csv`: the long time-series CSV.
    pub timeseries: Option<PathBuf>,
    /// `--plot DIR`: the SVG figures.
    pub plot_dir: Option<PathBuf>,
    /// `--timeseries-resolution`: the bin width (default 1 s).
    pub resolution: SimDuration,
}

impl Default for SeriesOutputs {
    fn default() -> Self {
        SeriesOutputs {
            timeseries: None,
            plot_dir: None,
            resolution: SimDuration::from_secs(1),
        }
    }
}

impl SeriesOutputs {
    /// Whether any output needs the time series.
    pub fn wanted(&self) -> bool {
        self.timeseries.is_some() || self.plot_dir.is_some()
    }
}

/// Most bins one run may have: beyond this, memory (bins × series × 8 bytes) grows past what a
/// time series is for.
pub const MAX_BINS: u64 = 1_000_000;

/// Loads every scenario of `req` and refuses, before running any, those whose event bound
/// exceeds `req.options.max_events` ([`guard::check_event_budget`]).
pub(crate) fn load_checked(req: &RunRequest) -> Result<Vec<Scenario>, Error> {
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
    Ok(scenarios)
}

/// Runs every scenario of `req`, in argument order.
pub fn run_all(req: &RunRequest) -> Result<Vec<RunSummary>, Error> {
    let scenarios = load_checked(req)?;
    let results: Vec<_> = scenarios
        .par_iter()
        .map(|s| run_with(s, req.options))
        .collect();
    results
        .into_iter()
        .map(|r| r.map_err(Error::from))
        .collect()
}

/// Runs every scenario of `req` with time series in bins of `resolution`, in argument order.
pub fn run_all_series(
    req: &RunRequest,
    resolution: SimDuration,
) -> Result<Vec<(RunSummary, TimeSeries)>, Error> {
    let scenarios = load_checked(req)?;
    check_resolution(&scenarios, resolution)?;
    let results: Vec<_> = scenarios
        .par_iter()
        .map(|s| run_with_series(s, req.options, resolution))
        .collect();
    results
        .into_iter()
        .map(|r| r.map_err(Error::from))
        .collect()
}

/// Refuses a resolution that is zero or would make more than [`MAX_BINS`] bins for a scenario.
pub fn check_resolution(scenarios: &[Scenario], resolution: SimDuration) -> Result<(), Error> {
    const FLAG: &str = "--timeseries-resolution";
    if resolution.is_zero() {
        return Err(ConfigError::flag(
            FLAG,
            "the bin width must be positive, e.g. `1s` or `100ms`",
        )
        .into());
    }
    for sc in scenarios {
        let span = sc.duration.0.saturating_add(sc.drain.0);
        if span.div_ceil(resolution.0) > MAX_BINS {
            return Err(ConfigError::flag(
                FLAG,
                format!(
                    "`{resolution}` makes more than {MAX_BINS} bins for scenario `{}` ({} of arrivals and drain); choose a wider bin",
                    sc.name,
                    SimDuration(span)
                ),
            )
            .into());
        }
    }
    Ok(())
}

/// Runs and renders in `format`.
pub fn run_and_render(req: &RunRequest, format: Format) -> Result<String, Error> {
    let runs = run_all(req)?;
    Ok(format.renderer().render(&runs))
}

/// Runs, writes the time-series CSV and figures `outputs` asks for, and renders the report in
/// `format`. Returns the report and the files written.
pub fn run_with_outputs(
    req: &RunRequest,
    format: Format,
    outputs: &SeriesOutputs,
) -> Result<(String, Vec<PathBuf>), Error> {
    if !outputs.wanted() {
        return Ok((run_and_render(req, format)?, Vec::new()));
    }
    let runs = run_all_series(req, outputs.resolution)?;
    let mut written = Vec::new();
    if let Some(path) = &outputs.timeseries {
        let pairs: Vec<(&str, &TimeSeries)> =
            runs.iter().map(|(s, t)| (s.scenario.as_str(), t)).collect();
        let csv = crate::report::timeseries::render_long(&pairs);
        std::fs::write(path, csv).map_err(|source| Error::Output {
            what: path.display().to_string(),
            source,
        })?;
        written.push(path.clone());
    }
    if let Some(dir) = &outputs.plot_dir {
        let pairs: Vec<(&RunSummary, &TimeSeries)> = runs.iter().map(|(s, t)| (s, t)).collect();
        written.extend(crate::plot::run_plots(dir, &pairs)?);
    }
    let summaries: Vec<RunSummary> = runs.into_iter().map(|(s, _)| s).collect();
    Ok((format.renderer().render(&summaries), written))
}
