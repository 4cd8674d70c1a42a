//! `loadsim sweep`: check every cell, then run the missing ones on a rayon pool, journal each as
//! it finishes, and write results.csv, results.md and manifest.json atomically. Progress goes to
//! stderr (an indicatif bar when stderr is a terminal), data to the output folder.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use super::aggregate::Results;
use super::expand::{Cell, Shard, Sources, cell_count, expand, prepare};
use super::journal::{self, CellRecord, Header, Journal};
use super::manifest::Manifest;
use super::spec::SweepSpec;
use crate::Error;
use crate::config::{ConfigError, source::read_text};
use crate::guard;
use crate::model::{RunOptions, run_with};

/// Everything `loadsim sweep` takes besides the file.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Threads; `None` for one per core.
    pub jobs: Option<usize>,
    /// Output folder; `None` for `evidence/<name>/` (`evidence/<name>/shard-K-of-N/` for a shard).
    pub out: Option<PathBuf>,
    /// Keep the cells already in the folder's journal and run only the others.
    pub resume: bool,
    pub shard: Option<Shard>,
    /// Check and describe the sweep; run nothing.
    pub dry_run: bool,
    /// No progress bar and no notes on stderr.
    pub quiet: bool,
    /// Stop after running this many cells, leaving the sweep unfinished (for testing `--resume`).
    pub max_cells: Option<usize>,
    /// Run a grid above [`crate::guard::MAX_CELLS_WITHOUT_YES`] cells (`--yes`).
    pub yes: bool,
    /// The command line, for the manifest.
    pub command: String,
    pub run: RunOptions,
}

/// Refuses, before anything runs, cells whose event bound exceeds `max_events`
/// ([`guard::check_event_budget`]); names the first few.
fn check_event_budgets(
    file: &Path,
    cells: &[Cell],
    scenarios: &[crate::scenario::Scenario],
    max_events: u64,
) -> Result<(), ConfigError> {
    const SHOWN: usize = 5;
    let mut problems = Vec::new();
    let mut over = 0usize;
    for (cell, sc) in cells.iter().zip(scenarios) {
        let name = PathBuf::from(format!("{} (cell {})", file.display(), cell.key));
        if let Err(e) = guard::check_event_budget(sc, &name, max_events) {
            over += 1;
            if problems.len() < SHOWN {
                problems.extend(e.diagnostics);
            }
        }
    }
    if over > SHOWN {
        problems.push(crate::config::Diagnostic {
            origin: crate::config::Origin::Flag {
                flag: "--max-events".into(),
            },
            key: String::new(),
            message: format!("{over} cells in all are over the limit"),
        });
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ConfigError {
            diagnostics: problems,
        })
    }
}

/// Runs the sweep in `file`; returns what goes to stdout (the plan for `--dry-run`, else nothing).
pub fn sweep(file: &Path, o: &SweepOptions) -> Result<String, Error> {
    let started = Instant::now();
    let text = read_text(file)?;
    let spec = SweepSpec::from_text(file, &text)?;
    guard::check_cell_limit(cell_count(&spec), o.yes)?;
    let cells = expand(&spec);
    let sources = Sources::load(&spec)?;
    let scenarios = prepare(&spec, &sources, &cells)?;
    check_event_budgets(file, &cells, &scenarios, o.run.max_events)?;
    let shard = o.shard.unwrap_or(Shard::ALL);
    let mine: Vec<usize> = cells
        .iter()
        .filter(|c| shard.contains(c))
        .map(|c| c.index)
        .collect();
    let out = o.out.clone().unwrap_or_else(|| default_out(&spec, o.shard));
    if o.dry_run {
        return Ok(plan(&spec, &cells, o.shard, mine.len(), &out));
    }

    std::fs::create_dir_all(&out).map_err(|e| output_error(&out, e))?;
    let inputs_sha256 =
        super::sha256(std::iter::once(text.as_bytes()).chain(sources.texts().map(str::as_bytes)));
    let header = Header::new(&spec.name, &inputs_sha256, &shard.to_string());
    let journal_path = out.join(journal::FILE);
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
                        if contents.dropped > 0 {
                            format!(" ({} torn line(s) dropped)", contents.dropped)
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

    let bar = progress_bar(o, to_run.len() as u64);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.jobs.unwrap_or(0))
        .build()
        .map_err(|e| ConfigError::flag("--jobs", format!("cannot start the threads: {e}")))?;
    let results: Vec<Result<CellRecord, Error>> = pool.install(|| {
        to_run
            .par_iter()
            .map(|&i| {
                let summary = run_with(&scenarios[i], o.run)?;
                let record = CellRecord {
                    index: i,
                    key: cells[i].key.clone(),
                    summary,
                };
                let record = journal
                    .append(&record)
                    .map_err(|e| output_error(journal.path(), e))?;
                bar.inc(1);
                Ok(record)
            })
            .collect()
    });
    bar.finish_and_clear();
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
        loadsim_version: env!("CARGO_PKG_VERSION").into(),
        sweep: spec.name.clone(),
        sweep_file: file.display().to_string(),
        sweep_sha256: super::sha256([text.as_bytes()]),
        inputs_sha256,
        cells_total: cells.len(),
        cells: records.len(),
        shard: o.shard.map(|s| s.to_string()),
        merged_from: Vec::new(),
        command: o.command.clone(),
        jobs: Some(pool.current_num_threads()),
        wall_s: 0.0,
        sweep_text: text,
    };
    write_outputs(&out, &spec, &cells, &records, manifest, started)?;
    note(
        o,
        format!(
            "sweep `{}`: {} cells ({} run now, {} from the journal) in {:.1} s → {}",
            spec.name,
            records.len(),
            to_run.len(),
            records.len() - to_run.len(),
            started.elapsed().as_secs_f64(),
            out.display()
        ),
    );
    Ok(String::new())
}

/// Writes results.csv, results.md and manifest.json into `out`, each atomically.
pub fn write_outputs(
    out: &Path,
    spec: &SweepSpec,
    cells: &[Cell],
    records: &[CellRecord],
    mut manifest: Manifest,
    started: Instant,
) -> Result<(), Error> {
    let results = Results::new(spec, cells, records);
    let (markdown, figures) = results.report();
    for figure in &figures {
        figure.draw(out)?;
    }
    for (name, text) in [
        (super::RESULTS_CSV, results.csv()),
        (super::RESULTS_MD, markdown),
    ] {
        let path = out.join(name);
        super::write_atomically(&path, text.as_bytes()).map_err(|e| output_error(&path, e))?;
    }
    manifest.wall_s = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let path = out.join(super::MANIFEST);
    super::write_atomically(&path, manifest.to_text().as_bytes())
        .map_err(|e| output_error(&path, e))
}

/// `evidence/<name>/`, or `evidence/<name>/shard-K-of-N/` for a shard.
pub fn default_out(spec: &SweepSpec, shard: Option<Shard>) -> PathBuf {
    let base = Path::new("evidence").join(&spec.name);
    match shard {
        Some(s) => base.join(format!("shard-{}-of-{}", s.k, s.n)),
        None => base,
    }
}

pub(crate) fn output_error(path: &Path, source: std::io::Error) -> Error {
    Error::Output {
        what: path.display().to_string(),
        source,
    }
}

fn resume_mismatch(path: &Path, found: &Header, want: &Header) -> ConfigError {
    let why = if found.sweep != want.sweep {
        format!("it belongs to sweep `{}`", found.sweep)
    } else if found.shard != want.shard {
        format!("it holds shard {}, not {}", found.shard, want.shard)
    } else {
        "the sweep file or a scenario file changed since it was written".to_owned()
    };
    ConfigError::flag(
        "--resume",
        format!(
            "cannot resume from {}: {why}; run without --resume to start over, or choose another --out",
            path.display()
        ),
    )
}

fn note(o: &SweepOptions, message: String) {
    if !o.quiet {
        eprintln!("{message}");
    }
}

fn progress_bar(o: &SweepOptions, cells: u64) -> ProgressBar {
    if o.quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(cells), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40} {pos}/{len} cells  {rate}  elapsed {elapsed}  ETA {eta}",
    ) {
        bar.set_style(style.with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} cells/s", state.per_sec());
            },
        ));
    }
    bar
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
