//! `loadsim boundary`: where a scenario stops recovering. One `--vary` searches, per seed, for the
//! smallest value of the key at which a run no longer recovers (scan, then bisection:
//! [`crate::analysis::boundary`]); two draw the phase diagram over a grid of both keys. Renders
//! Markdown on stdout and, with `--out`, writes every probe and cell as CSV. A count of finished
//! runs goes to stderr while it works, only when stderr is a terminal.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, ContentArrangement, Table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::Error;
use crate::analysis::boundary::{
    Agreement, Axis, Criterion, Found, Outcome, Phase, SeedSearch, agreement, phase, search,
};
use crate::config::{ConfigError, Document};
use crate::model::{RunOptions, run_with};
use crate::scenario::Scenario;

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
}

/// Counts finished runs on stderr; draws nothing when stderr is not a terminal.
fn progress(total: Option<u64>) -> ProgressBar {
    let (bar, template) = match total {
        Some(n) => (ProgressBar::new(n), "{bar:30} {pos}/{len} runs, {elapsed}"),
        None => (
            ProgressBar::new_spinner(),
            "{spinner} {pos} runs, {elapsed}",
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// A scenario file, loaded once with the user's `--set`s; every probe starts from a copy.
struct Subject {
    doc: Document,
    name: String,
    seeds: Vec<u64>,
}

impl Subject {
    /// Runs the scenario with `values` on the axes and `seed`, and applies the criterion.
    fn probe(
        &self,
        axes: &[Axis],
        values: &[f64],
        seed: u64,
        criterion: Criterion,
    ) -> Result<Outcome, Error> {
        let sc = self.scenario(axes, values, seed)?;
        let summary = run_with(&sc, RunOptions::default())?;
        Ok(match criterion {
            Criterion::Recovers => summary.metrics.recovery_s,
        })
    }

    fn scenario(&self, axes: &[Axis], values: &[f64], seed: u64) -> Result<Scenario, ConfigError> {
        let mut doc = self.doc.clone();
        for (a, &v) in axes.iter().zip(values) {
            doc.apply_set(&a.set_arg(v))?;
        }
        let mut sc = Scenario::from_document(&doc)?;
        sc.seed = seed;
        Ok(sc)
    }
}

/// Runs the search or the phase diagram for every file and renders the report.
pub fn boundary(req: &BoundaryRequest) -> Result<String, Error> {
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
    let subjects = load_subjects(req, &axes)?;
    let mut out = String::new();
    if axes.len() == 1 {
        let axis = &axes[0];
        let jobs: Vec<(usize, u64)> = subjects
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.seeds.iter().map(move |&seed| (i, seed)))
            .collect();
        let bar = progress(None);
        let results: Vec<Result<SeedSearch, Error>> = jobs
            .par_iter()
            .map(|&(i, seed)| {
                let subject = &subjects[i];
                let probe = |v: f64| {
                    let o = subject.probe(&axes, &[v], seed, req.criterion);
                    bar.inc(1);
                    o
                };
                search(axis, seed, req.steps, tolerance, &probe)
            })
            .collect();
        bar.finish_and_clear();
        let mut per_subject: Vec<Vec<SeedSearch>> = vec![Vec::new(); subjects.len()];
        for (&(i, _), r) in jobs.iter().zip(results) {
            per_subject[i].push(r?);
        }
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
        if subjects.len() > 1 {
            render_summary(&mut out, axis, &subjects, &per_subject);
        }
        for (s, seeds) in subjects.iter().zip(&per_subject) {
            render_search(&mut out, axis, &s.name, seeds);
            if let Some(dir) = &req.out {
                write_search_csv(dir, axis, &s.name, seeds)?;
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
        for s in &subjects {
            let cells = x.grid(req.steps).len() * y.grid(req.steps).len() * s.seeds.len();
            let bar = progress(Some(cells as u64));
            let probe = |seed: u64, xv: f64, yv: f64| {
                let o = s.probe(&axes, &[xv, yv], seed, req.criterion);
                bar.inc(1);
                o
            };
            let p = phase(x, y, req.steps, &s.seeds, &probe);
            bar.finish_and_clear();
            let p = p?;
            render_phase(&mut out, x, y, &s.name, &p);
            if let Some(dir) = &req.out {
                write_phase_csv(dir, x, y, &s.name, &p)?;
                let stem = format!("{}.{}.{}.phase", s.name, x.key, y.key);
                write_heatmap(
                    &dir.join(format!("{stem}.svg")),
                    &format!("{}: recovery time (s)", s.name),
                    x,
                    &p.xs,
                    y,
                    &p.ys,
                    &p.medians(),
                )?;
            }
        }
    }
    Ok(out)
}

fn parse_axes(req: &BoundaryRequest) -> Result<Vec<Axis>, Error> {
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
        .map(|(k, r)| Axis::parse(k, r).map_err(|m| ConfigError::flag("--range", m)))
        .collect::<Result<Vec<Axis>, ConfigError>>()?;
    if axes.len() == 2 && axes[0].key == axes[1].key {
        return Err(ConfigError::flag("--vary", "the two keys must differ").into());
    }
    Ok(axes)
}

/// Loads every file and validates it at every corner of the ranges, so a key or range the
/// scenario rejects is reported (exit 2) before anything runs.
fn load_subjects(req: &BoundaryRequest, axes: &[Axis]) -> Result<Vec<Subject>, Error> {
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
    let mut subjects = Vec::new();
    let mut problems = Vec::new();
    for file in &req.files {
        let loaded = (|| {
            let mut doc = Document::load(file)?;
            for s in &req.sets {
                doc.apply_set(s)?;
            }
            Ok::<Document, ConfigError>(doc)
        })();
        let doc = match loaded {
            Ok(d) => d,
            Err(e) => {
                problems.extend(e.diagnostics);
                continue;
            }
        };
        let mut subject = Subject {
            doc,
            name: String::new(),
            seeds: req.seeds.clone(),
        };
        for c in &corners {
            match subject.scenario(axes, c, 0) {
                Ok(sc) => {
                    if sc.faults.is_empty() && req.criterion == Criterion::Recovers {
                        problems.push(
                            ConfigError::file(
                                file,
                                "has no fault, so no run can recover (recovery is measured from the end of the fault window); add a fault or vary a scenario that has one",
                            )
                            .diagnostics
                            .remove(0),
                        );
                    }
                    subject.name = sc.name.clone();
                }
                Err(e) => problems.extend(e.diagnostics),
            }
        }
        if subject.seeds.is_empty() {
            let own = Scenario::from_document(&subject.doc).map(|sc| sc.seed);
            match own {
                Ok(seed) => subject.seeds.push(seed),
                Err(e) => problems.extend(e.diagnostics),
            }
        }
        subjects.push(subject);
    }
    if problems.is_empty() {
        Ok(subjects)
    } else {
        problems.dedup();
        Err(ConfigError {
            diagnostics: problems,
        }
        .into())
    }
}

fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    t
}

fn right_align(t: &mut Table, from: usize) {
    for i in from..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// A recovery time in seconds, or `never`.
fn show_outcome(o: Outcome) -> String {
    match o {
        Some(s) => crate::report::number::trimmed(s, 2),
        None => "never".to_owned(),
    }
}

/// One seed's boundary: `(a, b]`, `≤ LOW`, `> HIGH`.
fn show_found(axis: &Axis, f: Found) -> String {
    match f {
        Found::Between { recovers, never } => {
            format!("({}, {}]", axis.show(recovers), axis.show(never))
        }
        Found::AtLow => format!("≤ {} (never recovers at LOW)", axis.show(axis.low)),
        Found::AboveHigh => format!("> {} (recovers everywhere)", axis.show(axis.high)),
    }
}

fn show_agreement(axis: &Axis, a: Agreement) -> String {
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
    axis: &Axis,
    subjects: &[Subject],
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
    let mut t = table(header);
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
        t.add_row(row);
    }
    let _ = writeln!(out, "{t}");
}

fn render_search(out: &mut String, axis: &Axis, name: &str, results: &[SeedSearch]) {
    let _ = writeln!(
        out,
        "\n## `{name}`\n\nrecovery time (s) at the scan values; `never`: `recovery_s` is null.\n"
    );
    let mut header = vec![axis.key.clone()];
    header.extend(results.iter().map(|r| format!("seed {}", r.seed)));
    let mut t = table(header);
    if let Some(first) = results.first() {
        for (i, &(v, _)) in first.scan.iter().enumerate() {
            let mut row = vec![axis.show(v)];
            row.extend(results.iter().map(|r| show_outcome(r.scan[i].1)));
            t.add_row(row);
        }
    }
    right_align(&mut t, 0);
    let _ = writeln!(out, "{t}\n");
    let mut t = table(vec![
        "seed".into(),
        "boundary".into(),
        "runs".into(),
        "bisection (value → recovery)".into(),
        "monotone over the scan".into(),
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
        t.add_row(vec![
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

fn render_phase(out: &mut String, x: &Axis, y: &Axis, name: &str, p: &Phase) {
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
    let mut t = table(header);
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
        t.add_row(row);
    }
    right_align(&mut t, 0);
    let _ = writeln!(out, "{t}");
}

fn csv_error(path: &Path, e: csv::Error) -> Error {
    Error::Output {
        what: path.display().to_string(),
        source: std::io::Error::other(e),
    }
}

fn csv_writer(dir: &Path, file: &str) -> Result<(csv::Writer<std::fs::File>, PathBuf), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Output {
        what: dir.display().to_string(),
        source,
    })?;
    let path = dir.join(file);
    let w = csv::Writer::from_path(&path).map_err(|e| csv_error(&path, e))?;
    Ok((w, path))
}

fn outcome_fields(o: Outcome) -> [String; 2] {
    [
        o.is_some().to_string(),
        o.map_or(String::new(), |s| s.to_string()),
    ]
}

/// `<scenario>.<key>.probes.csv` (every run) and `<scenario>.<key>.boundary.csv` (per seed).
fn write_search_csv(
    dir: &Path,
    axis: &Axis,
    name: &str,
    results: &[SeedSearch],
) -> Result<(), Error> {
    let (mut w, path) = csv_writer(dir, &format!("{name}.{}.probes.csv", axis.key))?;
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
    for row in rows {
        w.write_record(&row).map_err(|e| csv_error(&path, e))?;
    }
    w.flush().map_err(|source| Error::Output {
        what: path.display().to_string(),
        source,
    })?;
    let (mut w, path) = csv_writer(dir, &format!("{name}.{}.boundary.csv", axis.key))?;
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
    for row in rows {
        w.write_record(&row).map_err(|e| csv_error(&path, e))?;
    }
    w.flush().map_err(|source| Error::Output {
        what: path.display().to_string(),
        source,
    })
}

/// `<scenario>.<x>.<y>.phase.csv`: one row per grid point and seed.
fn write_phase_csv(dir: &Path, x: &Axis, y: &Axis, name: &str, p: &Phase) -> Result<(), Error> {
    let (mut w, path) = csv_writer(dir, &format!("{name}.{}.{}.phase.csv", x.key, y.key))?;
    w.write_record([
        "scenario",
        "seed",
        "x_key",
        "x",
        "y_key",
        "y",
        "recovers",
        "recovery_s",
    ])
    .map_err(|e| csv_error(&path, e))?;
    for (yi, row) in p.cells.iter().enumerate() {
        for (xi, cell) in row.iter().enumerate() {
            for (si, &o) in cell.iter().enumerate() {
                let [rec, secs] = outcome_fields(o);
                w.write_record([
                    name.to_owned(),
                    p.seeds[si].to_string(),
                    x.key.clone(),
                    x.csv(p.xs[xi]),
                    y.key.clone(),
                    y.csv(p.ys[yi]),
                    rec,
                    secs,
                ])
                .map_err(|e| csv_error(&path, e))?;
            }
        }
    }
    w.flush().map_err(|source| Error::Output {
        what: path.display().to_string(),
        source,
    })
}

/// The phase diagram as an SVG heatmap (`loadsim::plot::heatmap`): `cells[yi][xi]` is the
/// median recovery time over seeds (`None` = never, drawn as "never") at `x_values[xi]`,
/// `y_values[yi]`.
fn write_heatmap(
    path: &Path,
    title: &str,
    x: &Axis,
    x_values: &[f64],
    y: &Axis,
    y_values: &[f64],
    cells: &[Vec<Option<f64>>],
) -> Result<(), Error> {
    let xs: Vec<String> = x_values.iter().map(|&v| x.show(v)).collect();
    let ys: Vec<String> = y_values.iter().map(|&v| y.show(v)).collect();
    crate::plot::heatmap(path, title, &x.key, &xs, &y.key, &ys, cells, "never")?;
    Ok(())
}
