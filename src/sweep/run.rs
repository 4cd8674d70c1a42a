//! `loadsim sweep`: check every cell, then run the missing ones on the grid runner
//! ([`crate::runner`]), journal each as it finishes, and write results.csv, results.md and
//! manifest.json atomically. Progress goes to stderr (a bar when stderr is a terminal), data to
//! the output folder.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::aggregate::Results;
use super::expand::{Cell, ReportColumns, Shard, Sources, cell_count, expand, prepare};
use super::journal::{self, CellRecord, Header, Journal};
use super::manifest::{Manifest, Timing};
use super::spec::SweepSpec;
use crate::Error;
use crate::config::{ConfigError, Diagnostic, read::read_text};
use crate::guard;
use crate::model::{Buffers, RunOptions, run_with_buffers};
use crate::runner::{Folder, FolderLock, OutputPlan, Progress, Runner, export, output_error};
use crate::scenario::Scenario;
use crate::util::Output;

/// Everything `loadsim sweep` takes besides the file.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Threads; `None` for one per core.
    pub jobs: Option<usize>,
    /// Output folder; `None` for `evidence/<name>/` (`evidence/<name>/shard-K-of-N/` for a shard).
    pub out: Option<PathBuf>,
    /// Keep the cells already in the folder's journal and run only the others.
    pub resume: bool,
    /// `--shard K/N`: run only that part of the cells; `None` for all of them.
    pub shard: Option<Shard>,
    /// Check and describe the sweep; run nothing.
    pub dry_run: bool,
    /// How `--dry-run` describes it (and, as JSON, the errors of a refused sweep).
    pub format: crate::report::diagnostics::ReportFormat,
    /// No progress bar and no notes on stderr.
    pub quiet: bool,
    /// Stop after running this many cells, leaving the sweep unfinished (for testing `--resume`).
    pub max_cells: Option<usize>,
    /// Run more than [`crate::guard::MAX_CELLS_WITHOUT_YES`] cells (`--yes`).
    pub yes: bool,
    /// `--max-memory`: the budget for the cells held at once, in bytes (0: the default).
    pub max_memory: u64,
    /// The command line, for the manifest.
    pub command: String,
    /// The limits on each cell's run (`--max-events`, `--max-memory`, …).
    pub run: RunOptions,
}

/// How many cells are validated at once: a large grid's scenarios are never all held together.
const CHECK_CHUNK: usize = 4096;
/// How many cells one thread of the pool builds and admits at a time within a chunk: small
/// enough that two threads share a chunk's work evenly, large enough that handing out the
/// parts costs nothing next to building a scenario.
const CHECK_PART: usize = 64;

/// What the checks of the cells leave for the run.
struct Checked {
    /// The most memory one cell's record can take ([`guard::bytes_per_cell`]).
    per_cell: u64,
    /// By cell index: the scenario built by the check, kept for the cell's run (`None`: built
    /// again where it runs — a cell this process does not run, or one past the budget).
    kept: Vec<Option<Scenario>>,
    /// The estimated memory of the kept scenarios ([`guard::bytes_per_scenario`]).
    kept_bytes: u64,
}

impl Checked {
    /// Drops every kept scenario: their cells build them again where they run.
    fn release(&mut self) {
        self.kept.iter_mut().for_each(|k| *k = None);
        self.kept_bytes = 0;
    }
}

/// Checks every cell as a scenario ([`prepare`]) and refuses, before anything runs, cells the
/// resource model refuses under `limits` ([`guard::admit`]: event bound, memory estimate, no
/// request; the first few named); a chunk of cells at a time. The scenarios of the cells `keep`
/// names are kept for their runs (each cell's scenario is then built and validated once) while
/// their estimated memory stays within `budget`; the others are dropped chunk by chunk, so a
/// large grid's scenarios are never all held together. The cells of a chunk are built and
/// admitted on `runner`'s threads, [`CHECK_PART`] at a time; what they give is gathered in cell
/// order, so the result and every message are the same at any thread count.
#[allow(
    clippy::too_many_arguments,
    reason = "the sweep's parts and the check's three rules"
)]
fn check_cells(
    runner: &Runner,
    file: &Path,
    spec: &SweepSpec,
    sources: &Sources,
    cells: &[Cell],
    limits: RunOptions,
    keep: impl Fn(&Cell) -> bool,
    budget: u64,
) -> Result<Checked, ConfigError> {
    const SHOWN: usize = 5;
    let mut invalid: Vec<Diagnostic> = Vec::new();
    let mut too_big = Vec::new();
    let mut over = 0usize;
    let mut checked = Checked {
        per_cell: 0,
        kept: Vec::new(),
        kept_bytes: 0,
    };
    checked.kept.resize_with(cells.len(), || None);
    let mut columns = ReportColumns::default();
    let admitted = |part: &&[Cell]| -> Result<Vec<_>, ConfigError> {
        let scenarios = prepare(spec, sources, part)?;
        Ok(part
            .iter()
            .zip(scenarios)
            .map(|(cell, sc)| {
                let name = PathBuf::from(format!("{} (cell {})", file.display(), cell.key));
                let verdict = guard::admit(&sc, &name, limits);
                (cell.index, sc, verdict)
            })
            .collect())
    };
    for chunk in cells.chunks(CHECK_CHUNK) {
        let parts: Vec<&[Cell]> = chunk.chunks(CHECK_PART).collect();
        for part in runner.map(&parts, admitted) {
            let part = match part {
                Ok(p) => p,
                Err(e) => {
                    for d in e.diagnostics {
                        if !invalid.contains(&d) {
                            invalid.push(d);
                        }
                    }
                    continue;
                }
            };
            for (index, sc, verdict) in part {
                columns.add(&sc);
                checked.per_cell = checked.per_cell.max(guard::bytes_per_cell(&sc));
                if let Err(e) = verdict {
                    over += 1;
                    if too_big.len() < SHOWN {
                        too_big.extend(e.diagnostics);
                    }
                    continue;
                }
                let bytes = guard::bytes_per_scenario(&sc);
                if invalid.is_empty() && keep(&cells[index]) && checked.kept_bytes + bytes <= budget
                {
                    checked.kept_bytes += bytes;
                    checked.kept[index] = Some(sc);
                }
            }
        }
    }
    if invalid.is_empty() {
        invalid = columns.check(spec);
    }
    if !invalid.is_empty() {
        return Err(ConfigError {
            diagnostics: invalid,
        });
    }
    if over > SHOWN {
        too_big.push(Diagnostic {
            origin: crate::config::Origin::Flag {
                flag: "--max-events".into(),
            },
            key: String::new(),
            message: format!("{over} cells in all are refused"),
        });
    }
    if too_big.is_empty() {
        Ok(checked)
    } else {
        Err(ConfigError {
            diagnostics: too_big,
        })
    }
}

/// The scenario of one checked cell, built again where it runs (when the check did not keep it).
fn cell_scenario(spec: &SweepSpec, sources: &Sources, cell: &Cell) -> Result<Scenario, Error> {
    let mut one = prepare(spec, sources, std::slice::from_ref(cell))?;
    Ok(one.pop().expect("one scenario per cell"))
}

/// Runs the sweep in `file`; returns what goes to stdout (the plan for `--dry-run`, else nothing).
pub fn sweep(file: &Path, o: &SweepOptions) -> Result<Output, Error> {
    if o.dry_run {
        return crate::error::json_on_refusal(o.format, sweep_inner(file, o));
    }
    sweep_inner(file, o)
}

fn sweep_inner(file: &Path, o: &SweepOptions) -> Result<Output, Error> {
    let started = Instant::now();
    let text = read_text(file)?;
    let spec = SweepSpec::from_text(file, &text)?;
    let shard = o.shard.unwrap_or(Shard::ALL);
    let total = cell_count(&spec);
    // Every cell is expanded and checked; only the shard's run, so only they need --yes (and a
    // dry run never does).
    guard::check_cell_limit(total, true)?;
    if !o.dry_run {
        let shard_cells =
            total / shard.n as u64 + u64::from(((shard.k - 1) as u64) < total % shard.n as u64);
        guard::check_cell_limit(shard_cells, o.yes)?;
    }
    let max_memory = if o.max_memory == 0 {
        crate::model::DEFAULT_MAX_MEMORY
    } else {
        o.max_memory
    };
    let expansion = total.saturating_mul(guard::BYTES_PER_EXPANDED_CELL);
    guard::check_memory(
        &format!("expanding the sweep's {total} cells"),
        expansion,
        max_memory,
        "narrow the grid",
    )?;
    let cells = expand(&spec);
    let sources = Sources::load(&spec)?;
    // The checked scenarios of this shard's cells are kept for their runs, within a quarter of
    // the memory budget (a dry run runs nothing and keeps none).
    let runner = Runner::new(o.jobs)?;
    let mut checked = check_cells(
        &runner,
        file,
        &spec,
        &sources,
        &cells,
        o.run,
        |c| !o.dry_run && shard.contains(c),
        max_memory / 4,
    )?;
    let per_cell = checked.per_cell;
    let mine: Vec<usize> = cells
        .iter()
        .filter(|c| shard.contains(c))
        .map(|c| c.index)
        .collect();
    let out = o.out.clone().unwrap_or_else(|| default_out(&spec, o.shard));
    if !o.dry_run {
        let shared = sources.inputs.held_bytes();
        let results = expansion
            .saturating_add((mine.len() as u64).saturating_mul(per_cell))
            .saturating_add(shared);
        // The kept scenarios go as their cells run and the records come: both at once only
        // while the budget allows, else every cell builds its scenario again where it runs.
        if results.saturating_add(checked.kept_bytes) > max_memory {
            checked.release();
        }
        guard::check_memory(
            &format!(
                "holding the results of {} cells{}",
                mine.len(),
                if shared > 0 {
                    format!(" and the {} of files they share", guard::show_bytes(shared))
                } else {
                    String::new()
                }
            ),
            results,
            max_memory,
            "split the sweep with --shard K/N (each shard holds its own cells)",
        )?;
    }
    if o.dry_run && o.format == crate::report::diagnostics::ReportFormat::Json {
        return Ok(Output::stdout(plan_json(
            &spec, &cells, o.shard, &mine, &out,
        )));
    }
    if o.dry_run {
        return Ok(Output::stdout(plan(
            &spec,
            &cells,
            o.shard,
            mine.len(),
            &out,
        )));
    }

    let mut plan = OutputPlan::new([file]);
    plan.add_inputs(sources.paths());
    let folder = plan.folder("--out", &out, &export::SWEEP)?;
    let _lock = FolderLock::acquire(&out, "--out")?;
    super::check_folder_sweep(&out, &spec.name)?;
    let identity = sources.identity();
    let inputs_sha256 = crate::util::sha256(
        std::iter::once(text.as_bytes()).chain(identity.iter().map(Vec::as_slice)),
    );
    let header = Header::new(&spec.name, &inputs_sha256, &shard.to_string());
    let journal_path = folder.path(export::JOURNAL)?;
    let mut done: Vec<CellRecord> = Vec::new();
    if o.resume {
        match journal::read(&journal_path)? {
            Some(mut contents) => {
                if contents.header != header {
                    return Err(resume_mismatch(&journal_path, &contents.header, &header).into());
                }
                done = mine
                    .iter()
                    .filter_map(|&i| contents.records.remove(&cells[i].key))
                    .filter(|r| r.index < cells.len() && cells[r.index].key == r.key)
                    .collect();
                note(
                    o,
                    format!(
                        "resuming: {} of {} cells already in {}{}",
                        done.len(),
                        mine.len(),
                        journal_path.display(),
                        if contents.torn {
                            " (a torn last line dropped: its cell runs again)".to_owned()
                        } else {
                            String::new()
                        }
                    ),
                );
            }
            None => note(
                o,
                format!("nothing to resume in {}: starting", out.display()),
            ),
        }
    }
    let journal = Journal::create(&journal_path, &header, &done)
        .map_err(|e| output_error(&journal_path, e))?;
    let done_keys: HashSet<usize> = done.iter().map(|r| r.index).collect();
    let pending: Vec<usize> = mine
        .iter()
        .copied()
        .filter(|i| !done_keys.contains(i))
        .collect();
    let to_run = &pending[..o.max_cells.unwrap_or(usize::MAX).min(pending.len())];

    let label = match o.shard {
        Some(sh) => format!("sweep {} (shard {sh})", spec.name),
        None => format!("sweep {}", spec.name),
    };
    let hint = format!(
        "Ctrl-C keeps every finished cell (journal.jsonl in {}); `loadsim sweep {} --resume` then runs only the rest",
        out.display(),
        file.display()
    );
    let progress = Progress::labelled(
        Some(to_run.len() as u64),
        "cells",
        Some((&label, &hint)),
        o.quiet,
    );
    let work: Vec<(usize, Option<Scenario>)> = to_run
        .iter()
        .map(|&i| (i, checked.kept[i].take()))
        .collect();
    drop(checked);
    let results: Vec<Result<CellRecord, Error>> =
        runner.map_owned_with(work, Buffers::default, |buffers, (i, kept)| {
            let sc = match kept {
                Some(sc) => sc,
                None => cell_scenario(&spec, &sources, &cells[i])?,
            };
            let summary = run_with_buffers(&sc, guard::limits_for(&sc, o.run), buffers)?;
            let record = CellRecord {
                index: i,
                key: cells[i].key.clone(),
                summary,
            };
            let record = journal
                .append(&record)
                .map_err(|e| output_error(journal.path(), e))?;
            progress.inc();
            Ok(record)
        });
    drop(progress);
    let mut records = done;
    for r in results {
        records.push(r?);
    }
    if to_run.len() < pending.len() {
        return Err(Error::Stopped(format!(
            "stopped after {} cells (--max-cells); {} of {} cells are in {}; finish with --resume",
            to_run.len(),
            records.len(),
            mine.len(),
            journal_path.display()
        )));
    }
    records.sort_by_key(|r| r.index);

    let manifest = Manifest {
        schema_version: Some(crate::report::SCHEMA_VERSION),
        loadsim_version: env!("CARGO_PKG_VERSION").into(),
        sweep: spec.name.clone(),
        sweep_file: file.display().to_string(),
        sweep_sha256: crate::util::sha256([text.as_bytes()]),
        inputs_sha256,
        cells_total: cells.len(),
        cells: records.len(),
        shard: o.shard.map(|s| s.to_string()),
        merged_from: Vec::new(),
        sweep_text: text,
    };
    let timing = Timing {
        command: o.command.clone(),
        jobs: Some(runner.threads()),
        wall_s: 0.0,
    };
    write_outputs(
        &runner, &folder, &spec, &cells, &records, &manifest, timing, started,
    )?;
    if o.quiet {
        return Ok(Output::default());
    }
    Ok(Output::note(format!(
        "sweep `{}`: {} cells ({} run now, {} from the journal) in {:.1} s → {}",
        spec.name,
        records.len(),
        to_run.len(),
        records.len() - to_run.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    )))
}

/// Writes results.csv, results.md, manifest.json, the figures, report.html and timing.json into
/// the sweep's folder ([`export::SWEEP`]). The aggregate and the two tables are computed on
/// `runner`'s threads (results.csv and results.md at the same time), then written in order.
#[allow(clippy::too_many_arguments)]
pub fn write_outputs(
    runner: &Runner,
    folder: &Folder,
    spec: &SweepSpec,
    cells: &[Cell],
    records: &[CellRecord],
    manifest: &Manifest,
    mut timing: Timing,
    started: Instant,
) -> Result<(), Error> {
    let (csv, (markdown, figures)) = runner.install(|| {
        let results = Results::new(spec, cells, records);
        rayon::join(|| results.csv(), || results.report())
    });
    let out = folder.dir();
    let earlier = crate::config::read::read_regular(&out.join(export::RESULTS_MD), 64 << 20)
        .unwrap_or_default();
    // The tables first: a figure never costs the results.
    folder.write(export::RESULTS_CSV, csv.as_bytes())?;
    folder.write(export::RESULTS_MD, markdown.as_bytes())?;
    folder.write(export::MANIFEST, manifest.to_text().as_bytes())?;
    for figure in &figures {
        let svg = match figure.svg() {
            Ok(svg) => svg,
            // Data the chart cannot show: the figure says why instead.
            Err(e) => crate::plot::placeholder_svg(figure.title(), &e.to_string())?,
        };
        folder.write(figure.file(), svg.as_bytes())?;
    }
    remove_stale_figures(folder, &figures, &earlier);
    let page = super::page::sweep_page(out, spec, &markdown, manifest);
    folder.write(export::REPORT_HTML, page.render().as_bytes())?;
    timing.wall_s = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    folder.write(export::TIMING, timing.to_text().as_bytes())?;
    Ok(())
}

/// Removes the figures an earlier report of this sweep drew that this one does not (a report
/// with fewer tables, or a table renamed), so results.md and the folder agree: the SVG files the
/// earlier results.md (`earlier`) embedded, and `figure_N.svg` files of the numbered names
/// figures had before they were named after their tables. Nothing else in the folder is touched.
fn remove_stale_figures(folder: &Folder, figures: &[super::figure::Figure], earlier: &str) {
    let embedded: Vec<&str> = earlier
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(file, _)| file))
        .filter(|file| file.ends_with(".svg") && !file.contains('/') && !file.contains('\\'))
        .collect();
    let Ok(entries) = std::fs::read_dir(folder.dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let numbered = name
            .strip_prefix("figure_")
            .and_then(|n| n.strip_suffix(".svg"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let stale = numbered || embedded.contains(&name.as_str());
        if stale && !figures.iter().any(|f| f.file() == name) {
            folder.remove(&name);
        }
    }
}

/// `evidence/<name>/`, or `evidence/<name>/shard-K-of-N/` for a shard.
pub fn default_out(spec: &SweepSpec, shard: Option<Shard>) -> PathBuf {
    let base = Path::new("evidence").join(&spec.name);
    match shard {
        Some(s) => base.join(format!("shard-{}-of-{}", s.k, s.n)),
        None => base,
    }
}

fn resume_mismatch(path: &Path, found: &Header, want: &Header) -> ConfigError {
    let why = if found.sweep != want.sweep {
        format!("it belongs to sweep `{}`", found.sweep)
    } else if found.shard != want.shard {
        format!("it holds shard {}, not {}", found.shard, want.shard)
    } else {
        "the sweep file or a scenario file changed since it was written (or a file a scenario reads: an import, a trace)".to_owned()
    };
    ConfigError::flag(
        "--resume",
        format!(
            "cannot resume from {}: {why}; run without --resume to start over, or choose another --out",
            path.display()
        ),
    )
}

/// A note on stderr while the sweep works (what the final [`Output`] cannot say in time).
fn note(o: &SweepOptions, message: String) {
    if !o.quiet {
        eprintln!("{message}");
    }
}

/// What `--dry-run --format json` prints: the sweep, its axes (a duration axis with its values
/// in seconds), the cells of this shard with their keys, and the output folder.
fn plan_json(
    spec: &SweepSpec,
    cells: &[Cell],
    shard: Option<Shard>,
    mine: &[usize],
    out: &Path,
) -> String {
    use serde_json::json;
    let axes: Vec<serde_json::Value> = spec
        .axes
        .iter()
        .map(|a| {
            let mut v = json!({
                "key": a.key,
                "values": a.values.iter().map(|v| v.text.clone()).collect::<Vec<_>>(),
            });
            if let Some(ns) = super::aggregate::duration_seconds(a) {
                v["values_s"] = ns.iter().map(|&n| n as f64 / 1e9).collect();
            }
            v
        })
        .collect();
    let zipped: Vec<Vec<&str>> = spec
        .groups
        .iter()
        .filter(|g| g.len() > 1)
        .map(|g| g.iter().map(|&a| spec.axes[a].key.as_str()).collect())
        .collect();
    let listed: Vec<serde_json::Value> = mine
        .iter()
        .map(|&i| {
            let c = &cells[i];
            json!({
                "index": c.index,
                "key": c.key,
                "scenario": spec.scenarios[c.scenario].name,
            })
        })
        .collect();
    crate::report::diagnostics::text(&json!({
        "schema_version": crate::report::SCHEMA_VERSION,
        "ok": true,
        "sweep": spec.name,
        "cells_total": cells.len(),
        "scenarios": spec.scenarios.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        "axes": axes,
        "zipped": zipped,
        "shard": shard.map(|s| s.to_string()),
        "cells": listed,
        "output": out.display().to_string(),
    }))
}

/// What `--dry-run` prints.
fn plan(spec: &SweepSpec, cells: &[Cell], shard: Option<Shard>, mine: usize, out: &Path) -> String {
    let mut s = String::new();
    let mut factors = vec![format!("{} scenarios", spec.scenarios.len())];
    for g in &spec.groups {
        let keys: Vec<&str> = g.iter().map(|&a| spec.axes[a].key.as_str()).collect();
        factors.push(format!(
            "{} ({})",
            spec.axes[g[0]].values.len(),
            keys.join(" + ")
        ));
    }
    let _ = writeln!(
        s,
        "sweep `{}`: {} cells = {}",
        spec.name,
        cells.len(),
        factors.join(" × ")
    );
    let names: Vec<&str> = spec.scenarios.iter().map(|x| x.name.as_str()).collect();
    let _ = writeln!(s, "  scenarios: {}", names.join(", "));
    for a in &spec.axes {
        let values: Vec<&str> = a.values.iter().map(|v| v.text.as_str()).collect();
        let _ = writeln!(s, "  {}: {}", a.key, values.join(", "));
    }
    for g in spec.groups.iter().filter(|g| g.len() > 1) {
        let keys: Vec<&str> = g.iter().map(|&a| spec.axes[a].key.as_str()).collect();
        let _ = writeln!(s, "  zipped: {}", keys.join(", "));
    }
    if let Some(sh) = shard {
        let _ = writeln!(s, "  shard {sh}: {mine} cells");
    }
    let _ = writeln!(s, "  output: {}", out.display());
    let _ = writeln!(
        s,
        "every cell is a valid scenario; nothing was run (--dry-run)"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep of four cells of the article's protected scenario.
    fn small() -> (SweepSpec, Sources, Vec<Cell>) {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps/t.yaml");
        let text = "name: t\nscenarios:\n  - ../scenarios/protected.yaml\ngrid:\n  \
                    duration: [2s]\n  faults.slow_b.from: [1s]\n  faults.slow_b.duration: [500ms]\n  \
                    seed: [1, 2, 3, 4]\n";
        let spec = SweepSpec::from_text(&file, text).expect("a valid sweep");
        let sources = Sources::load(&spec).expect("its scenario loads");
        let cells = expand(&spec);
        (spec, sources, cells)
    }

    #[test]
    fn the_check_keeps_the_scenarios_of_the_cells_to_run_as_their_runs_would_build_them() {
        let (spec, sources, cells) = small();
        let shard = Shard { k: 2, n: 2 };
        let checked = check_cells(
            &Runner::new(Some(2)).unwrap(),
            Path::new("t.yaml"),
            &spec,
            &sources,
            &cells,
            RunOptions::default(),
            |c| shard.contains(c),
            u64::MAX,
        )
        .expect("every cell is valid");
        let mut bytes = 0;
        for c in &cells {
            match &checked.kept[c.index] {
                Some(sc) => {
                    assert!(shard.contains(c), "cell {} is not this shard's", c.key);
                    let built = cell_scenario(&spec, &sources, c).expect("valid");
                    assert_eq!(format!("{sc:?}"), format!("{built:?}"), "cell {}", c.key);
                    bytes += guard::bytes_per_scenario(sc);
                }
                None => assert!(!shard.contains(c), "cell {} was not kept", c.key),
            }
        }
        assert_eq!(checked.kept_bytes, bytes);
    }

    /// The check runs on the pool, a part of the cells per thread: its verdict, its messages
    /// and what it keeps are the same at one thread and at two, over several parts (300 cells,
    /// half of them invalid) and over valid ones.
    #[test]
    fn the_check_is_the_same_at_any_thread_count() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps/t.yaml");
        let seeds: Vec<String> = (1..=150).map(|s| s.to_string()).collect();
        let sweep = |rates: &str| {
            let text = format!(
                "name: t\nscenarios:\n  - ../scenarios/protected.yaml\ngrid:\n  \
                 duration: [2s]\n  faults.slow_b.from: [1s]\n  faults.slow_b.duration: [500ms]\n  \
                 arrivals.rate: [{rates}]\n  seed: [{}]\n",
                seeds.join(", ")
            );
            let spec = SweepSpec::from_text(&file, &text).expect("a valid sweep");
            let sources = Sources::load(&spec).expect("its scenario loads");
            let cells = expand(&spec);
            (spec, sources, cells)
        };
        let check = |(spec, sources, cells): &(SweepSpec, Sources, Vec<Cell>), jobs| {
            check_cells(
                &Runner::new(Some(jobs)).unwrap(),
                Path::new("t.yaml"),
                spec,
                sources,
                cells,
                RunOptions::default(),
                |c| c.index % 3 == 0,
                u64::MAX,
            )
            .map(|c| {
                let kept: Vec<bool> = c.kept.iter().map(Option::is_some).collect();
                (c.per_cell, kept, c.kept_bytes)
            })
            .map_err(|e| e.to_string())
        };
        let bad = sweep("100, -1");
        let one = check(&bad, 1).expect_err("a negative rate is refused");
        assert_eq!(check(&bad, 2).expect_err("refused"), one);
        assert!(one.contains("arrivals.rate"), "{one}");
        let good = sweep("100, 200");
        let one = check(&good, 1).expect("valid");
        assert_eq!(one.1.iter().filter(|&&k| k).count(), 100);
        assert_eq!(check(&good, 2).expect("valid"), one);
    }

    #[test]
    fn the_check_keeps_scenarios_only_within_its_budget() {
        let (spec, sources, cells) = small();
        let check = |budget| {
            check_cells(
                &Runner::new(Some(2)).unwrap(),
                Path::new("t.yaml"),
                &spec,
                &sources,
                &cells,
                RunOptions::default(),
                |_| true,
                budget,
            )
            .expect("every cell is valid")
        };
        let one = guard::bytes_per_scenario(&cell_scenario(&spec, &sources, &cells[0]).unwrap());
        let two = check(2 * one + one / 2);
        let kept: Vec<bool> = two.kept.iter().map(Option::is_some).collect();
        assert_eq!(kept, [true, true, false, false]);
        assert_eq!(two.kept_bytes, 2 * one);
        let mut none = check(0);
        assert!(none.kept.iter().all(Option::is_none));
        let mut all = check(u64::MAX);
        assert!(all.kept.iter().all(Option::is_some));
        all.release();
        none.release();
        assert!(all.kept.iter().all(Option::is_none) && all.kept_bytes == 0);
    }
}
