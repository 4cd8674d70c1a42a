//! `loadsim boundary`: where a scenario stops recovering. One `--vary` searches, per seed, for the
//! smallest value of the key at which a run no longer recovers (scan, then bisection:
//! [`crate::analysis::boundary`]); two draw the phase diagram over a grid of both keys. Runs on the
//! grid runner ([`crate::runner`]): every scan value of every file and seed at once, then the
//! bisections side by side. This file orchestrates (checks the request, plans the output folder,
//! runs the probes); [`render`] makes the Markdown on stdout and, with `--out`, the files the
//! exporter writes ([`crate::runner::export::BOUNDARY`]): every probe and cell as CSV, and the
//! diagram as an SVG heatmap.

use std::path::PathBuf;

use super::Output;
use crate::Error;
use crate::analysis::boundary::{
    Criterion, Phase, PhasePoint, ProbeValue, SearchAxis, SeedSearch, bisect, max_bisections,
};
use crate::config::ConfigError;
use crate::guard;
use crate::model::{RunOptions, run_with};
use crate::runner::{OutputPlan, Progress, Runner, Subject, collect_all, export};

mod render;

/// Arguments of `loadsim boundary`, independent of clap.
#[derive(Clone, Debug)]
pub struct BoundaryRequest {
    /// The scenario files, searched one by one.
    pub files: Vec<PathBuf>,
    /// `--set KEY=VALUE` overrides, in order, applied to every scenario file.
    pub sets: Vec<String>,
    /// Keys to vary (one or two), each with the range at the same index of `ranges`.
    pub vary: Vec<String>,
    /// `--range LOW..HIGH` for each `--vary` key, in order.
    pub ranges: Vec<String>,
    /// Empty: each scenario's own seed.
    pub seeds: Vec<u64>,
    /// `--criterion`: what counts as recovering.
    pub criterion: Criterion,
    /// `--steps`: scan points per key, LOW and HIGH included.
    pub steps: usize,
    /// In the range's unit; `None` for a hundredth of the range.
    pub tolerance: Option<String>,
    /// `--out`: the folder for the CSV files (probes, per-seed boundaries, phase cells); `None`
    /// writes only the report.
    pub out: Option<PathBuf>,
    /// Run more than [`guard::MAX_RUNS_WITHOUT_YES`] runs (`--yes`).
    pub yes: bool,
    /// `--max-memory`: the budget for the probes held at once, in bytes.
    pub max_memory: u64,
    /// `--quiet`: no progress bar.
    pub quiet: bool,
    /// `--max-events` and `--max-memory`: the limits each probe's run is admitted under
    /// ([`guard::admit`]).
    pub options: RunOptions,
}

/// A scenario file searched: loaded once with the user's `--set`s, its name and seeds.
struct Searched {
    subject: Subject,
    name: String,
    seeds: Vec<u64>,
}

impl Searched {
    /// Runs the scenario with `values` on the axes and `seed`, and applies the criterion.
    fn probe(
        &self,
        axes: &[SearchAxis],
        values: &[f64],
        seed: u64,
        criterion: Criterion,
        limits: RunOptions,
    ) -> Result<ProbeValue, Error> {
        let sets: Vec<String> = axes
            .iter()
            .zip(values)
            .map(|(a, &v)| a.set_arg(v))
            .collect();
        let sc = self.subject.scenario(&sets, Some(seed))?;
        let options = guard::admit(&sc, &self.subject.file, limits)?;
        let summary = run_with(&sc, options)?;
        Ok(match criterion {
            Criterion::Recovers => summary.metrics.recovery_s,
        })
    }
}

/// Runs the search or the phase diagram for every file and renders the report.
pub fn boundary(req: &BoundaryRequest) -> Result<Output, Error> {
    let axes = parse_axes(req)?;
    let tolerance = match (&req.tolerance, axes.len()) {
        (None, _) => axes[0].default_tolerance(),
        (Some(t), 1) => axes[0]
            .parse_tolerance(t)
            .map_err(|m| ConfigError::flag("--tolerance", m))?,
        (Some(_), _) => {
            return Err(ConfigError::flag(
                "--tolerance",
                "a phase diagram (two --vary) has no bisection; set the grid with --steps instead",
            )
            .into());
        }
    };
    if req.steps < 2 {
        return Err(ConfigError::flag("--steps", "must be at least 2 (LOW and HIGH)").into());
    }
    check_budget(req, &axes, tolerance)?;
    let searched = load_searched(req, &axes)?;
    let folder = match &req.out {
        Some(dir) => {
            let mut plan = OutputPlan::new(searched.iter().flat_map(|s| s.subject.inputs()));
            Some(plan.folder("--out", dir, &export::BOUNDARY)?)
        }
        None => None,
    };
    let runner = Runner::new(None)?;
    let mut out = String::new();
    if let [axis] = &axes[..] {
        let per_subject = search_all(&runner, &searched, &axes, req, tolerance)?;
        render::search_heading(&mut out, axis, req.criterion, req.steps, tolerance);
        if searched.len() > 1 {
            let names: Vec<&str> = searched.iter().map(|s| s.name.as_str()).collect();
            render::summary(&mut out, axis, &names, &per_subject);
        }
        for (s, seeds) in searched.iter().zip(&per_subject) {
            render::search(&mut out, axis, &s.name, seeds);
            if let Some(folder) = &folder {
                for (file, bytes) in render::search_files(axis, &s.name, seeds) {
                    folder.write(&file, &bytes)?;
                }
            }
        }
    } else {
        let (x, y) = (&axes[0], &axes[1]);
        render::phase_heading(&mut out, x, y, req.criterion);
        let phases = phase_all(&runner, &searched, &axes, req)?;
        for (s, p) in searched.iter().zip(&phases) {
            render::phase(&mut out, x, y, &s.name, p);
            if let Some(folder) = &folder {
                for (file, bytes) in render::phase_files(x, y, &s.name, p)? {
                    folder.write(&file, &bytes)?;
                }
            }
        }
    }
    Ok(Output::stdout(out))
}

/// Refuses, before anything is loaded or allocated, a search whose runs need `--yes` or whose
/// probes would not fit `--max-memory`.
fn check_budget(req: &BoundaryRequest, axes: &[SearchAxis], tolerance: f64) -> Result<(), Error> {
    let per_seed = match axes {
        [a] => a
            .grid_len(req.steps)
            .saturating_add(max_bisections(a, req.steps, tolerance)),
        [x, y] => x.grid_len(req.steps).saturating_mul(y.grid_len(req.steps)),
        _ => 0,
    };
    let seeds = req.seeds.len().max(1) as u64;
    let runs = per_seed
        .saturating_mul(seeds)
        .saturating_mul(req.files.len() as u64);
    guard::check_memory(
        &format!("the search's {runs} runs"),
        runs.saturating_mul(guard::BYTES_PER_PROBE),
        req.max_memory,
        "lower --steps",
    )?;
    guard::check_run_limit(runs, req.yes)?;
    Ok(())
}

/// One-key searches of every file and seed: every scan value of every search runs at once, then
/// the bisections (each sequential) side by side. Searches by file, seeds in order.
fn search_all(
    runner: &Runner,
    searched: &[Searched],
    axes: &[SearchAxis],
    req: &BoundaryRequest,
    tolerance: f64,
) -> Result<Vec<Vec<SeedSearch>>, Error> {
    let axis = &axes[0];
    let grid = axis.grid(req.steps);
    let jobs: Vec<(usize, u64)> = searched
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.seeds.iter().map(move |&seed| (i, seed)))
        .collect();
    let scan_points: Vec<(usize, u64, f64)> = jobs
        .iter()
        .flat_map(|&(i, seed)| grid.iter().map(move |&v| (i, seed, v)))
        .collect();
    let progress = Progress::new(None, "runs", req.quiet);
    let probe = |i: usize, seed: u64, v: f64| {
        let o = searched[i].probe(axes, &[v], seed, req.criterion, req.options);
        progress.inc();
        o
    };
    let scanned = runner.map(&scan_points, |&(i, seed, v)| probe(i, seed, v));
    let mut scanned = scanned.into_iter();
    let mut scans = Vec::with_capacity(jobs.len());
    for _ in &jobs {
        let outcomes = scanned
            .by_ref()
            .take(grid.len())
            .collect::<Result<Vec<ProbeValue>, Error>>()?;
        scans.push(grid.iter().copied().zip(outcomes).collect::<Vec<_>>());
    }
    let searches: Vec<usize> = (0..jobs.len()).collect();
    let results = runner.map(&searches, |&n| {
        let (i, seed) = jobs[n];
        bisect(axis, seed, scans[n].clone(), tolerance, &|v| {
            probe(i, seed, v)
        })
    });
    let mut per_subject: Vec<Vec<SeedSearch>> = vec![Vec::new(); searched.len()];
    for (&(i, _), r) in jobs.iter().zip(results) {
        per_subject[i].push(r?);
    }
    Ok(per_subject)
}

/// Phase diagrams of every file: every grid point of every file and seed at once.
fn phase_all(
    runner: &Runner,
    searched: &[Searched],
    axes: &[SearchAxis],
    req: &BoundaryRequest,
) -> Result<Vec<Phase>, Error> {
    let (x, y) = (&axes[0], &axes[1]);
    let points: Vec<(usize, PhasePoint)> = searched
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            Phase::points(x, y, req.steps, &s.seeds)
                .into_iter()
                .map(move |p| (i, p))
        })
        .collect();
    let progress = Progress::new(Some(points.len() as u64), "runs", req.quiet);
    let outcomes = runner.map(&points, |(i, p)| {
        let o = searched[*i].probe(axes, &[p.x, p.y], p.seed, req.criterion, req.options);
        progress.inc();
        o
    });
    drop(progress);
    let mut outcomes = outcomes.into_iter();
    searched
        .iter()
        .map(|s| {
            let n = Phase::points(x, y, req.steps, &s.seeds).len();
            let mine = outcomes
                .by_ref()
                .take(n)
                .collect::<Result<Vec<ProbeValue>, Error>>()?;
            Ok(Phase::from_outcomes(x, y, req.steps, &s.seeds, mine))
        })
        .collect()
}

fn parse_axes(req: &BoundaryRequest) -> Result<Vec<SearchAxis>, Error> {
    if req.vary.len() != req.ranges.len() {
        return Err(ConfigError::flag(
            "--range",
            format!(
                "give one --range per --vary, in the same order (got {} --vary and {} --range)",
                req.vary.len(),
                req.ranges.len()
            ),
        )
        .into());
    }
    if req.vary.is_empty() || req.vary.len() > 2 {
        return Err(ConfigError::flag(
            "--vary",
            "give one key (a boundary) or two (a phase diagram)",
        )
        .into());
    }
    let axes = req
        .vary
        .iter()
        .zip(&req.ranges)
        .map(|(k, r)| SearchAxis::parse(k, r).map_err(|m| ConfigError::flag("--range", m)))
        .collect::<Result<Vec<SearchAxis>, ConfigError>>()?;
    if axes.len() == 2 && axes[0].key == axes[1].key {
        return Err(ConfigError::flag("--vary", "the two keys must differ").into());
    }
    Ok(axes)
}

/// Loads every file and validates it at every corner of the ranges, so a key or range the
/// scenario rejects is reported (exit 2) before anything runs.
fn load_searched(req: &BoundaryRequest, axes: &[SearchAxis]) -> Result<Vec<Searched>, Error> {
    let corners: Vec<Vec<f64>> = match axes {
        [a] => vec![vec![a.low], vec![a.high]],
        [a, b] => vec![
            vec![a.low, b.low],
            vec![a.low, b.high],
            vec![a.high, b.low],
            vec![a.high, b.high],
        ],
        _ => unreachable!("parse_axes allows one or two keys"),
    };
    let searched = req.files.iter().map(|file| {
        let subject = Subject::load(file, &req.sets)?;
        let mut problems = Vec::new();
        let mut name = String::new();
        for c in &corners {
            let sets: Vec<String> = axes.iter().zip(c).map(|(a, &v)| a.set_arg(v)).collect();
            match subject.scenario(&sets, None) {
                Ok(sc) => {
                    if sc.faults.is_empty() && req.criterion == Criterion::Recovers {
                        problems.extend(
                            ConfigError::file(
                                &subject.file,
                                "has no fault, so no run can recover (recovery is measured from the end of the fault window); add a fault or vary a scenario that has one",
                            )
                            .diagnostics,
                        );
                    }
                    name = sc.name;
                }
                Err(e) => problems.extend(e.diagnostics),
            }
        }
        let mut seeds = req.seeds.clone();
        if seeds.is_empty() {
            match subject.scenario(&[], None) {
                Ok(sc) => seeds.push(sc.seed),
                Err(e) => problems.extend(e.diagnostics),
            }
        }
        if problems.is_empty() {
            Ok(Searched {
                subject,
                name,
                seeds,
            })
        } else {
            Err(ConfigError {
                diagnostics: problems,
            })
        }
    });
    Ok(collect_all(searched)?)
}
