//! `loadsim boundary`: where a scenario stops recovering. One `--vary` searches, per seed, for the
//! smallest value of the key at which a run no longer recovers (scan, then bisection:
//! [`crate::analysis::boundary`]); two draw the phase diagram over a grid of both keys. Runs on the
//! grid runner ([`crate::runner`]): every scan value of every file and seed at once, then the
//! bisections side by side. Renders Markdown on stdout and, with `--out`, writes every probe and
//! cell as CSV (and the diagram as an SVG heatmap).

use std::fmt::Write;
use std::path::PathBuf;

use super::Output;
use crate::Error;
use crate::analysis::boundary::{
    Agreement, Criterion, Found, Phase, PhasePoint, ProbeValue, SearchAxis, SeedSearch, agreement,
    bisect, max_bisections,
};
use crate::config::ConfigError;
use crate::guard;
use crate::model::{RunOptions, run_with};
use crate::report::markdown::MarkdownTable;
use crate::runner::{OutputPlan, Progress, Runner, Subject, collect_all, export};

/// Arguments of `loadsim boundary`, independent of clap.
#[derive(Clone, Debug)]
pub struct BoundaryRequest {
    pub files: Vec<PathBuf>,
    pub sets: Vec<String>,
    /// Keys to vary (one or two), each with the range at the same index of `ranges`.
    pub vary: Vec<String>,
    pub ranges: Vec<String>,
    /// Empty: each scenario's own seed.
    pub seeds: Vec<u64>,
    pub criterion: Criterion,
    pub steps: usize,
    /// In the range's unit; `None` for a hundredth of the range.
    pub tolerance: Option<String>,
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
        let _ = writeln!(
            out,
            "# Boundary over `{}` from {} to {}\n\ncriterion: {}.  \nscan: {} values, every {}; bisection until the interval is at most {} wide.",
            axis.key,
            axis.show(axis.low),
            axis.show(axis.high),
            req.criterion.describe(),
            axis.grid(req.steps).len(),
            axis.show((axis.high - axis.low) / (req.steps - 1) as f64),
            axis.show(tolerance),
        );
        if searched.len() > 1 {
            render_summary(&mut out, axis, &searched, &per_subject);
        }
        for (s, seeds) in searched.iter().zip(&per_subject) {
            render_search(&mut out, axis, &s.name, seeds);
            if let Some(folder) = &folder {
                for (file, bytes) in search_files(axis, &s.name, seeds) {
                    folder.write(&file, &bytes)?;
                }
            }
        }
    } else {
        let (x, y) = (&axes[0], &axes[1]);
        let _ = writeln!(
            out,
            "# Phase diagram over `{}` (x) × `{}` (y)\n\ncriterion: {}.",
            x.key,
            y.key,
            req.criterion.describe(),
        );
        let phases = phase_all(&runner, &searched, &axes, req)?;
        for (s, p) in searched.iter().zip(&phases) {
            render_phase(&mut out, x, y, &s.name, p);
            if let Some(folder) = &folder {
                for (file, bytes) in phase_files(x, y, &s.name, p)? {
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

/// A recovery time in seconds, or `never`.
fn show_outcome(o: ProbeValue) -> String {
    match o {
        Some(s) => crate::util::number::trimmed(s, 2),
        None => "never".to_owned(),
    }
}

/// One seed's boundary: `(a, b]`, `≤ LOW`, `> HIGH`.
fn show_found(axis: &SearchAxis, f: Found) -> String {
    match f {
        Found::Between { recovers, never } => {
            format!("({}, {}]", axis.show(recovers), axis.show(never))
        }
        Found::AtLow => format!("≤ {} (never recovers at LOW)", axis.show(axis.low)),
        Found::AboveHigh => format!("> {} (recovers everywhere)", axis.show(axis.high)),
    }
}

fn show_agreement(axis: &SearchAxis, a: Agreement) -> String {
    match a {
        Agreement::Agree { recovers, never } => {
            format!("agree: ({}, {}]", axis.show(recovers), axis.show(never))
        }
        Agreement::Spread { lowest, highest } => format!(
            "disagree: from {} to {}",
            axis.show(lowest),
            axis.show(highest)
        ),
        Agreement::AllAboveHigh => format!("all recover up to {}", axis.show(axis.high)),
        Agreement::AllAtLow => format!("none recovers even at {}", axis.show(axis.low)),
        Agreement::Mixed => "mixed: some seeds at an end of the range".to_owned(),
    }
}

fn seed_columns(per_subject: &[Vec<SeedSearch>]) -> Vec<u64> {
    let mut seeds: Vec<u64> = Vec::new();
    for s in per_subject.iter().flatten() {
        if !seeds.contains(&s.seed) {
            seeds.push(s.seed);
        }
    }
    seeds
}

fn render_summary(
    out: &mut String,
    axis: &SearchAxis,
    subjects: &[Searched],
    per_subject: &[Vec<SeedSearch>],
) {
    let seeds = seed_columns(per_subject);
    let _ = writeln!(
        out,
        "\n## Summary: the smallest `{}` at which a run no longer recovers\n\n`(a, b]`: recovers at a, not at b. `*`: not monotone over the scan (see the scenario's section).\n",
        axis.key
    );
    let mut header = vec!["scenario".to_owned()];
    header.extend(seeds.iter().map(|s| format!("seed {s}")));
    header.push("seeds together".into());
    let mut t = MarkdownTable::new(header);
    for (s, results) in subjects.iter().zip(per_subject) {
        let mut row = vec![s.name.clone()];
        for seed in &seeds {
            row.push(match results.iter().find(|r| r.seed == *seed) {
                Some(r) => {
                    let mark = if r.monotone() { "" } else { " *" };
                    format!("{}{mark}", show_found(axis, r.found))
                }
                None => "—".into(),
            });
        }
        row.push(show_agreement(axis, agreement(axis, results)));
        t.row(row);
    }
    let _ = writeln!(out, "{t}");
}

fn render_search(out: &mut String, axis: &SearchAxis, name: &str, results: &[SeedSearch]) {
    let _ = writeln!(
        out,
        "\n## `{name}`\n\nrecovery time (s) at the scan values; `never`: `recovery_s` is null.\n"
    );
    let mut header = vec![axis.key.clone()];
    header.extend(results.iter().map(|r| format!("seed {}", r.seed)));
    let mut t = MarkdownTable::new(header);
    if let Some(first) = results.first() {
        for (i, &(v, _)) in first.scan.iter().enumerate() {
            let mut row = vec![axis.show(v)];
            row.extend(results.iter().map(|r| show_outcome(r.scan[i].1)));
            t.row(row);
        }
    }
    t.right_from(0);
    let _ = writeln!(out, "{t}\n");
    let mut t = MarkdownTable::new([
        "seed",
        "boundary",
        "runs",
        "bisection (value → recovery)",
        "monotone over the scan",
    ]);
    for r in results {
        let probes: Vec<String> = r
            .bisection
            .iter()
            .map(|&(v, o)| format!("{} → {}", axis.show(v), show_outcome(o)))
            .collect();
        let monotone = if r.monotone() {
            "yes".to_owned()
        } else {
            let again = &r.recovers_again_at;
            let first_never = r
                .scan
                .iter()
                .find(|(_, o)| o.is_none())
                .map_or(String::new(), |&(v, _)| axis.show(v));
            let shown: Vec<String> = again.iter().take(4).map(|&v| axis.show(v)).collect();
            let more = match again.len() {
                n if n > 4 => format!(" … ({n} scan values, up to {})", axis.show(again[n - 1])),
                _ => String::new(),
            };
            format!(
                "no: never at {first_never}, recovers again at {}{more}",
                shown.join(", ")
            )
        };
        t.row(vec![
            r.seed.to_string(),
            show_found(axis, r.found),
            format!("{} + {}", r.scan.len(), r.bisection.len()),
            if probes.is_empty() {
                "—".into()
            } else {
                probes.join("; ")
            },
            monotone,
        ]);
    }
    let _ = writeln!(out, "{t}\n");
    let _ = writeln!(
        out,
        "seeds {}.",
        show_agreement(axis, agreement(axis, results))
    );
}

fn render_phase(out: &mut String, x: &SearchAxis, y: &SearchAxis, name: &str, p: &Phase) {
    let seeds: Vec<String> = p.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        out,
        "\n## `{name}`\n\nrecovery time (s), the median over seeds {} with `never` counted as longest; `never`: the median seed does not recover; `(k/n)`: only k of n seeds recover. Rows: `{}`, columns: `{}`.\n",
        seeds.join(", "),
        y.key,
        x.key
    );
    let mut header = vec![format!("{} ╲ {}", y.key, x.key)];
    header.extend(p.xs.iter().map(|&v| x.show(v)));
    header.push("first never".into());
    let mut t = MarkdownTable::new(header);
    let medians = p.medians();
    for yi in (0..p.ys.len()).rev() {
        let mut row = vec![y.show(p.ys[yi])];
        for (xi, m) in medians[yi].iter().enumerate() {
            let cell = &p.cells[yi][xi];
            let k = cell.iter().filter(|o| o.is_some()).count();
            let mut text = show_outcome(*m);
            if k != 0 && k != cell.len() {
                text.push_str(&format!(" ({k}/{})", cell.len()));
            }
            row.push(text);
        }
        row.push(
            medians[yi]
                .iter()
                .position(Option::is_none)
                .map_or("—".to_owned(), |xi| x.show(p.xs[xi])),
        );
        t.row(row);
    }
    t.right_from(0);
    let _ = writeln!(out, "{t}");
}

/// `rows` as CSV text.
fn csv_bytes(rows: Vec<Vec<String>>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(&row).expect("writing CSV to memory");
    }
    w.into_inner().expect("flushing CSV to memory")
}

fn outcome_fields(o: ProbeValue) -> [String; 2] {
    [
        o.is_some().to_string(),
        o.map_or(String::new(), |s| s.to_string()),
    ]
}

/// The files of one search ([`export::BOUNDARY`]): `<scenario>.<key>.probes.csv` (every run) and
/// `<scenario>.<key>.boundary.csv` (per seed), named and rendered.
fn search_files(axis: &SearchAxis, name: &str, results: &[SeedSearch]) -> [(String, Vec<u8>); 2] {
    let mut rows = vec![vec![
        "scenario".to_owned(),
        "seed".into(),
        "key".into(),
        "phase".into(),
        "value".into(),
        "recovers".into(),
        "recovery_s".into(),
    ]];
    for r in results {
        let phases = [("scan", &r.scan), ("bisection", &r.bisection)];
        for (phase, probes) in phases {
            for &(v, o) in probes {
                let mut row = vec![
                    name.to_owned(),
                    r.seed.to_string(),
                    axis.key.clone(),
                    phase.to_owned(),
                    axis.csv(v),
                ];
                row.extend(outcome_fields(o));
                rows.push(row);
            }
        }
    }
    let probes = (format!("{name}.{}.probes.csv", axis.key), csv_bytes(rows));
    let mut rows = vec![vec![
        "scenario".to_owned(),
        "seed".into(),
        "key".into(),
        "found".into(),
        "recovers_at".into(),
        "never_at".into(),
        "monotone".into(),
        "recovers_again_at".into(),
    ]];
    for r in results {
        let (found, lo, hi) = match r.found {
            Found::Between { recovers, never } => ("between", axis.csv(recovers), axis.csv(never)),
            Found::AtLow => ("at_low", String::new(), axis.csv(axis.low)),
            Found::AboveHigh => ("above_high", axis.csv(axis.high), String::new()),
        };
        let again: Vec<String> = r.recovers_again_at.iter().map(|&v| axis.csv(v)).collect();
        rows.push(vec![
            name.to_owned(),
            r.seed.to_string(),
            axis.key.clone(),
            found.to_owned(),
            lo,
            hi,
            r.monotone().to_string(),
            again.join(" "),
        ]);
    }
    let found = (format!("{name}.{}.boundary.csv", axis.key), csv_bytes(rows));
    [probes, found]
}

/// The files of one phase diagram ([`export::BOUNDARY`]): `<scenario>.<x>.<y>.phase.csv`, one row
/// per grid point and seed, and `<scenario>.<x>.<y>.phase.svg`, its heatmap.
fn phase_files(
    x: &SearchAxis,
    y: &SearchAxis,
    name: &str,
    p: &Phase,
) -> Result<[(String, Vec<u8>); 2], Error> {
    let mut rows = vec![
        [
            "scenario",
            "seed",
            "x_key",
            "x",
            "y_key",
            "y",
            "recovers",
            "recovery_s",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for (yi, row) in p.cells.iter().enumerate() {
        for (xi, cell) in row.iter().enumerate() {
            for (si, &o) in cell.iter().enumerate() {
                let [rec, secs] = outcome_fields(o);
                rows.push(vec![
                    name.to_owned(),
                    p.seeds[si].to_string(),
                    x.key.clone(),
                    x.csv(p.xs[xi]),
                    y.key.clone(),
                    y.csv(p.ys[yi]),
                    rec,
                    secs,
                ]);
            }
        }
    }
    let stem = format!("{name}.{}.{}.phase", x.key, y.key);
    let svg = heatmap_svg(
        &format!("{name}: recovery time (s)"),
        x,
        &p.xs,
        y,
        &p.ys,
        &p.medians(),
    )?;
    Ok([
        (format!("{stem}.csv"), csv_bytes(rows)),
        (format!("{stem}.svg"), svg.into_bytes()),
    ])
}

/// The phase diagram as an SVG heatmap (`loadsim::plot::heatmap_svg`): `cells[yi][xi]` is the
/// median recovery time over seeds (`None` = never, drawn as "never") at `x_values[xi]`,
/// `y_values[yi]`.
fn heatmap_svg(
    title: &str,
    x: &SearchAxis,
    x_values: &[f64],
    y: &SearchAxis,
    y_values: &[f64],
    cells: &[Vec<Option<f64>>],
) -> Result<String, Error> {
    let xs: Vec<String> = x_values.iter().map(|&v| x.show(v)).collect();
    let ys: Vec<String> = y_values.iter().map(|&v| y.show(v)).collect();
    Ok(crate::plot::heatmap_svg(
        title, &x.key, &xs, &y.key, &ys, cells, "never",
    )?)
}
