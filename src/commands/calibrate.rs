//! `loadsim calibrate`: fits 1–4 keys of a scenario to what a user observed of their system.
//! Owns the command: checking the request (the observed file, the keys and ranges, every corner
//! of the ranges) before anything runs; the runs themselves — the scenario without its faults,
//! with `metrics.quantiles` set to the quantiles the observed file names — on the grid runner,
//! journaled in `--out` so `--resume` runs only what is missing; the search (tune's, with the
//! loss of [`crate::analysis::calibrate`] as its objective and no requirement); and the report:
//! model against observed before and after the fit, the fitted values with the range the seeds'
//! noise leaves them, the keys the data do not identify, the figures no setting matches, and the
//! `extends` overlay that `--write` emits. Exit 1 when a figure stays outside its tolerance.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use yaml_serde::Value;

use super::Output;
use super::tune::candidate_scenario;
use super::tune::plan::set_args;
use crate::Error;
use crate::analysis::boundary::SearchAxis;
use crate::analysis::calibrate::{Figure, Observed, indistinguishable, loss, seed_means};
use crate::analysis::tune::{Scored, Search, TuneAxis, coarse_grid, most_candidates, search};
use crate::config::{ConfigError, Document};
use crate::guard;
use crate::metrics::RunSummary;
use crate::model::{RunOptions, run_with};
use crate::report::markdown::MarkdownTable;
use crate::runner::{FolderLock, OutputPlan, Progress, Runner, Subject, export, output_error};
use crate::scenario::Scenario;
use crate::sweep::journal::{self, CellRecord, Header, SearchJournal};
use crate::util::number::trimmed;

/// The report's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CalibrateFormat {
    /// Markdown on stdout.
    Text,
    /// One JSON document.
    Json,
}

/// Arguments of `loadsim calibrate`, independent of clap.
#[derive(Clone, Debug)]
pub struct CalibrateRequest {
    /// The scenario file whose keys are fitted.
    pub file: PathBuf,
    /// `--set KEY=VALUE` overrides, in order, applied to the scenario.
    pub sets: Vec<String>,
    /// One observed file per window (each at its `load`).
    pub observed: Vec<PathBuf>,
    /// `KEY=LOW..HIGH`, one to four.
    pub fit: Vec<String>,
    /// `--seeds`: the seeds every candidate runs on.
    pub seeds: Vec<u64>,
    /// `--steps`: coarse grid values per key, LOW and HIGH included.
    pub steps: usize,
    /// `--rounds`: refinement rounds after the grid, each at half the previous spacing.
    pub rounds: usize,
    /// `--write`: a scenario file to write the fitted values to, `extends` the input; `None`
    /// writes none.
    pub write: Option<PathBuf>,
    /// `--out`: the folder for calibrate.md, calibrate.json, candidates.csv and the journal;
    /// `None` writes only the report on stdout.
    pub out: Option<PathBuf>,
    /// `--format`: the report's format on stdout.
    pub format: CalibrateFormat,
    /// `--jobs`: runs at once; `None` for one per core.
    pub jobs: Option<usize>,
    /// `--resume`: keep the runs already journaled in `--out` and run only the others.
    pub resume: bool,
    /// Stop after this many runs (for testing `--resume`).
    pub max_runs: Option<usize>,
    /// `--yes`: run a search of more than [`guard::MAX_RUNS_WITHOUT_YES`] runs.
    pub yes: bool,
    /// `--quiet`: no progress bar.
    pub quiet: bool,
}

/// The files `--out` receives besides the journal.
/// A fitted key's share of its range (on its search scale) that candidates as good as the best
/// may span before the key counts as not identified by the data.
pub const FLAT_SHARE: f64 = 0.5;

/// One observed file: a window of the user's system at one load.
struct Window {
    /// Its name in the figures' keys and the journal: the file's stem (numbered when two files
    /// share one).
    label: String,
    observed: Observed,
    /// The scenario without faults, with the quantiles the figures need, at this window's load.
    healthy: Document,
}

/// Everything checked before anything runs.
struct Plan {
    subject: Subject,
    scenario: String,
    windows: Vec<Window>,
    /// Every window's figures, in order; with several windows each key starts with its window's
    /// label (`peak: services.db.utilization`).
    figures: Vec<Figure>,
    /// The observed files as the report names them, with their loads when that matters.
    observed_text: String,
    axes: Vec<TuneAxis>,
    seeds: Vec<u64>,
    duration_s: f64,
    inputs_sha256: String,
}

/// Runs the baseline and the search and renders the report.
pub fn calibrate(req: &CalibrateRequest) -> Result<Output, Error> {
    let plan = prepare(req)?;
    // The search's candidates and the baseline.
    let candidates = most_candidates(&plan.axes, req.steps, req.rounds).saturating_add(1);
    guard::check_run_limit(candidates.saturating_mul(plan.seeds.len() as u64), req.yes)?;
    let mut plan_out = OutputPlan::new(plan.subject.inputs());
    plan_out.add_inputs(req.observed.iter().map(PathBuf::as_path));
    let write = match &req.write {
        Some(w) => Some(plan_out.file("--write", w)?),
        None => None,
    };
    let folder = match &req.out {
        Some(dir) => Some(plan_out.folder("--out", dir, &export::CALIBRATE)?),
        None => None,
    };
    let _lock = match &req.out {
        Some(dir) => Some(FolderLock::acquire(dir, "--out")?),
        None => None,
    };
    let journal = SearchJournal::open(
        folder.as_ref(),
        req.resume,
        &Header::new(
            &format!("calibrate {}", plan.scenario),
            &plan.inputs_sha256,
            "1/1",
        ),
        "scenario, observed file, key range or seeds",
    )?;
    let runner = Runner::new(req.jobs)?;
    let ran = AtomicUsize::new(0);
    let progress = Progress::new(
        None,
        "runs",
        req.quiet || req.format == CalibrateFormat::Json,
    );
    let figures_of: Mutex<FiguresOf> = Mutex::new(HashMap::new());
    let windows = plan.windows.len();
    let run_batch = |batch: &[Vec<String>]| -> Result<Vec<Vec<Vec<Option<f64>>>>, Error> {
        // Candidate, then seed, then window: a seed's figures are its windows' in order.
        let cells: Vec<(usize, u64, usize)> = (0..batch.len())
            .flat_map(|c| {
                plan.seeds
                    .iter()
                    .flat_map(move |&s| (0..windows).map(move |w| (c, s, w)))
            })
            .collect();
        let results = runner.map(&cells, |&(c, seed, w)| -> Result<Vec<Option<f64>>, Error> {
            let window = &plan.windows[w];
            let key = if windows == 1 {
                format!("{} | seed {seed}", batch[c].join(" "))
            } else {
                format!("{} | {} | seed {seed}", batch[c].join(" "), window.label)
            };
            let summary = match journal.as_ref().and_then(|j| j.done.get(&key)) {
                Some(r) => r.summary.clone(),
                None => {
                    if let Some(max) = req.max_runs
                        && ran.fetch_add(1, Ordering::SeqCst) >= max
                    {
                        return Err(Error::Stopped(format!(
                            "stopped after {max} runs (--max-runs); finish with --resume"
                        )));
                    }
                    let sc = candidate_scenario(&window.healthy, &batch[c], seed)?;
                    // Through the resource model like every command that runs simulations
                    // (default limits: calibrate has no --max-events/--max-memory flags yet).
                    let options = guard::admit(&sc, &req.file, RunOptions::default())?;
                    let summary = run_with(&sc, options)?;
                    progress.inc();
                    match &journal {
                        Some(j) => {
                            let record = CellRecord {
                                index: 0,
                                key,
                                summary,
                            };
                            j.journal
                                .append(&record)
                                .map_err(|e| output_error(j.journal.path(), e))?
                                .summary
                        }
                        None => summary,
                    }
                }
            };
            Ok(figures(&plan, window, &summary))
        });
        let mut results = results.into_iter();
        let mut out = Vec::with_capacity(batch.len());
        for _ in batch {
            let mut per_seed = Vec::with_capacity(plan.seeds.len());
            for _ in &plan.seeds {
                let mut seed_figures = Vec::with_capacity(plan.figures.len());
                for r in results.by_ref().take(windows) {
                    seed_figures.extend(r?);
                }
                per_seed.push(seed_figures);
            }
            out.push(per_seed);
        }
        Ok(out)
    };
    let baseline = seed_means(&run_batch(&[Vec::new()])?[0]);
    let mut evaluate = |batch: &[Vec<f64>]| -> Result<Vec<Scored>, Error> {
        let sets: Vec<Vec<String>> = batch.iter().map(|v| set_args(&plan.axes, v)).collect();
        let per_candidate = run_batch(&sets)?;
        let mut map = figures_of.lock().expect("not poisoned");
        Ok(batch
            .iter()
            .zip(per_candidate)
            .map(|(values, per_seed)| {
                let objective = loss(&plan.figures, &seed_means(&per_seed));
                map.insert(bits(values), per_seed);
                Scored {
                    values: values.clone(),
                    round: 0,
                    objective: Some(objective),
                    // Calibrate judges seeds with its own per-seed losses, and takes the best
                    // fit (`tuned.best`), not tune's tie rule.
                    per_seed: Vec::new(),
                    failing: Vec::new(),
                    recovery: Vec::new(),
                }
            })
            .collect())
    };
    let search_settings = Search {
        steps: req.steps,
        rounds: req.rounds,
        seeds: plan.seeds.len(),
        needed: plan.seeds.len(),
        tolerance: 0.0,
    };
    let tuned = search(&plan.axes, &search_settings, &mut evaluate)?;
    drop(progress);
    let map = figures_of.into_inner().expect("not poisoned");
    let report = Report::new(&plan, &baseline, &tuned.tried, tuned.best, &map);
    let markdown = report.markdown();
    let json = serde_json::to_string_pretty(&report).expect("reports serialize") + "\n";
    let mut notes = Vec::new();
    if let Some(w) = &write {
        w.write(overlay(&plan, req, &report, w.path()).as_bytes())?;
        notes.push(format!("wrote the fitted values to {}", w.path().display()));
    }
    if let Some(folder) = &folder {
        let dir = folder.dir();
        folder.write("calibrate.md", markdown.as_bytes())?;
        folder.write("calibrate.json", json.as_bytes())?;
        folder.write("candidates.csv", &candidates_csv(&plan, &tuned.tried, &map))?;
        notes.push(format!(
            "wrote calibrate.md, calibrate.json, candidates.csv and {} in {}",
            journal::FILE,
            dir.display()
        ));
    }
    let text = match req.format {
        CalibrateFormat::Text => markdown,
        CalibrateFormat::Json => json,
    };
    let outside = report.fitted.iter().filter(|f| !f.within).count();
    if outside > 0 {
        for n in notes {
            eprintln!("{n}");
        }
        return Err(Error::Infeasible {
            report: text,
            summary: format!(
                "{outside} of {} figures stay outside their tolerance after the fit (see the report)",
                report.fitted.len()
            ),
        });
    }
    Ok(Output {
        stdout: text,
        notes,
    })
}

/// Per candidate (its values' bits), the figures of each seed's run.
type FiguresOf = HashMap<Vec<u64>, Vec<Vec<Option<f64>>>>;

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// Every figure of a window's observed file, read off one run at its load.
fn figures(plan: &Plan, window: &Window, run: &RunSummary) -> Vec<Option<f64>> {
    window
        .observed
        .figures
        .iter()
        .map(|f| f.model_value(run, plan.duration_s))
        .collect()
}

fn prepare(req: &CalibrateRequest) -> Result<Plan, Error> {
    if req.fit.is_empty() || req.fit.len() > 4 {
        return Err(ConfigError::flag(
            "--fit",
            "give one to four keys to fit, each as KEY=LOW..HIGH",
        )
        .into());
    }
    let mut axes: Vec<TuneAxis> = Vec::new();
    for v in &req.fit {
        let Some((k, r)) = v.split_once('=') else {
            return Err(ConfigError::flag(
                "--fit",
                format!("`{v}` is not KEY=LOW..HIGH, like `services.db.slots=4..64`"),
            )
            .into());
        };
        let axis = SearchAxis::parse(k, r).map_err(|m| ConfigError::flag("--fit", m))?;
        if axes.iter().any(|a| a.axis.key == axis.key) {
            return Err(
                ConfigError::flag("--fit", format!("`{}` is given twice", axis.key)).into(),
            );
        }
        axes.push(TuneAxis::new(axis));
    }
    if req.steps < 2 {
        return Err(ConfigError::flag("--steps", "must be at least 2 (LOW and HIGH)").into());
    }
    if req.seeds.is_empty() {
        return Err(ConfigError::flag("--seeds", "give at least one seed").into());
    }
    if req.observed.is_empty() {
        return Err(ConfigError::flag("--observed", "give at least one observed file").into());
    }
    // The observed files and the scenario: every problem of all of them at once.
    let observed: Vec<Result<Observed, ConfigError>> =
        req.observed.iter().map(|f| Observed::load(f)).collect();
    let subject = Subject::load(&req.file, &req.sets);
    let mut diagnostics = Vec::new();
    for e in observed.iter().filter_map(|o| o.as_ref().err()) {
        diagnostics.extend(e.diagnostics.iter().cloned());
    }
    if let Err(e) = &subject {
        diagnostics.extend(e.diagnostics.iter().cloned());
    }
    if !diagnostics.is_empty() {
        return Err(ConfigError { diagnostics }.into());
    }
    let observed: Vec<Observed> = observed.into_iter().flatten().collect();
    let subject = subject.expect("checked above");
    let mut healthy = subject.doc.clone();
    healthy.apply_set("faults={}")?;
    let base = Scenario::from_document(&healthy)?;
    let mut quantiles: Vec<f64> = observed.iter().flat_map(Observed::quantiles).collect();
    quantiles.extend(base.metrics.quantiles.iter().flatten().copied());
    quantiles.sort_by(f64::total_cmp);
    quantiles.dedup();
    if !quantiles.is_empty()
        && let Some(top) = healthy.value.as_mapping_mut()
    {
        let metrics = top
            .entry(Value::String("metrics".into()))
            .or_insert_with(|| Value::Mapping(Default::default()));
        if let Some(m) = metrics.as_mapping_mut() {
            m.insert(
                Value::String("quantiles".into()),
                Value::Sequence(quantiles.iter().map(|&q| Value::from(q)).collect()),
            );
        }
    }
    let mut problems = Vec::new();
    for o in &observed {
        if let Err(e) = o.check_against(&base) {
            problems.extend(e.diagnostics);
        }
    }
    // Each window's scenario: the healthy one at the window's load (`arrivals.scale` times the
    // scenario's own).
    let own_scale = healthy
        .value
        .get("arrivals")
        .and_then(|a| a.get("scale"))
        .and_then(Value::as_f64)
        .unwrap_or(1.0);
    let mut windows = Vec::with_capacity(observed.len());
    for (i, o) in observed.into_iter().enumerate() {
        let mut doc = healthy.clone();
        if o.load != 1.0 {
            doc.apply_set(&format!("arrivals.scale={}", own_scale * o.load))?;
        }
        let stem = o.file.file_stem().map_or_else(
            || format!("window {}", i + 1),
            |s| s.to_string_lossy().into_owned(),
        );
        let label = if req
            .observed
            .iter()
            .filter(|f| f.file_stem() == o.file.file_stem())
            .count()
            > 1
        {
            format!("{stem}#{}", i + 1)
        } else {
            stem
        };
        windows.push(Window {
            label,
            observed: o,
            healthy: doc,
        });
    }
    // Every corner of the ranges must validate, at every window's load.
    for w in &windows {
        for c in coarse_grid(&axes, 2) {
            if let Err(e) = candidate_scenario(&w.healthy, &set_args(&axes, &c), 0) {
                for d in e.diagnostics {
                    if !problems.contains(&d) {
                        problems.push(d);
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(ConfigError {
            diagnostics: problems,
        }
        .into());
    }
    let seeds_text: Vec<String> = req.seeds.iter().map(u64::to_string).collect();
    let identity = format!(
        "sets={:?} fit={:?} seeds={}",
        req.sets,
        req.fit,
        seeds_text.join(",")
    );
    // After every corner is validated: the files the scenario reads (imports, traces, sample
    // files) are recorded, so a changed one is another calibration (as in tune and sweep).
    let scenario_identity = subject.doc.identity();
    let inputs_sha256 = crate::util::sha256(
        scenario_identity
            .iter()
            .map(Vec::as_slice)
            .chain(
                windows
                    .iter()
                    .flat_map(|w| w.observed.doc.files.iter().map(|f| f.text.as_bytes())),
            )
            .chain([identity.as_bytes()]),
    );
    let several = windows.len() > 1;
    let figures = windows
        .iter()
        .flat_map(|w| {
            w.observed.figures.iter().map(move |f| {
                let mut f = f.clone();
                if several {
                    f.key = format!("{}: {}", w.label, f.key);
                }
                f
            })
        })
        .collect();
    let observed_text = windows
        .iter()
        .map(|w| {
            let file = w.observed.file.display();
            if several || w.observed.load != 1.0 {
                format!("{file} (load {})", trimmed(w.observed.load, 6))
            } else {
                file.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Plan {
        scenario: base.name.clone(),
        duration_s: base.duration.as_secs_f64(),
        subject,
        windows,
        figures,
        observed_text,
        axes,
        seeds: req.seeds.clone(),
        inputs_sha256,
    })
}

/// One figure, model against observed.
#[derive(Clone, Debug, Serialize)]
struct FigureReport {
    figure: String,
    observed: f64,
    /// The mean over the seeds (`null`: the runs leave it undefined).
    model: Option<f64>,
    /// `(model − observed) / observed`.
    relative_error: Option<f64>,
    tolerance: f64,
    within: bool,
}

/// One fitted key.
#[derive(Clone, Debug, Serialize)]
struct FittedKey {
    key: String,
    value: String,
    /// The lowest and highest value of the key among the candidates as good as the best within
    /// the seeds' noise.
    as_good_from: String,
    as_good_to: String,
    /// The data do not identify this key: candidates as good as the best span more than
    /// [`FLAT_SHARE`] of its range.
    identified: bool,
}

#[derive(Clone, Debug, Serialize)]
struct Report {
    scenario: String,
    observed_file: String,
    seeds: Vec<u64>,
    loss_before: f64,
    loss_after: f64,
    candidates_tried: usize,
    before: Vec<FigureReport>,
    fitted_values: Vec<FittedKey>,
    fitted: Vec<FigureReport>,
    /// Figures that no candidate tried brought within its tolerance.
    unmatched: Vec<String>,
    #[serde(skip)]
    best_values: Vec<f64>,
}

fn figure_reports(figs: &[Figure], model: &[Option<f64>]) -> Vec<FigureReport> {
    figs.iter()
        .zip(model)
        .map(|(f, m)| FigureReport {
            figure: f.key.clone(),
            observed: f.observed,
            model: *m,
            relative_error: m.map(|m| f.relative_error(m)).filter(|e| e.is_finite()),
            tolerance: f.tolerance,
            within: f.within(*m),
        })
        .collect()
}

impl Report {
    fn new(
        plan: &Plan,
        baseline: &[Option<f64>],
        tried: &[Scored],
        best: Option<usize>,
        figures_of: &FiguresOf,
    ) -> Report {
        let figs = &plan.figures;
        let best = best.expect("every candidate is feasible without requirements");
        let best_c = &tried[best];
        let per_seed_loss = |c: &Scored| -> Vec<f64> {
            figures_of[&bits(&c.values)]
                .iter()
                .map(|seed| loss(figs, seed))
                .collect()
        };
        let best_losses = per_seed_loss(best_c);
        let as_good: Vec<&Scored> = tried
            .iter()
            .filter(|c| indistinguishable(&best_losses, &per_seed_loss(c)))
            .collect();
        let fitted_values = plan
            .axes
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let vals = as_good.iter().map(|c| c.values[i]);
                let lo = vals.clone().fold(f64::INFINITY, f64::min);
                let hi = vals.fold(f64::NEG_INFINITY, f64::max);
                let scale = |v: f64| if a.log { v.ln() } else { v };
                let span = scale(a.axis.high) - scale(a.axis.low);
                let identified = span <= 0.0 || (scale(hi) - scale(lo)) <= FLAT_SHARE * span;
                FittedKey {
                    key: a.axis.key.clone(),
                    value: a.axis.show(best_c.values[i]),
                    as_good_from: a.axis.show(lo),
                    as_good_to: a.axis.show(hi),
                    identified,
                }
            })
            .collect();
        let best_means = seed_means(&figures_of[&bits(&best_c.values)]);
        let unmatched = figs
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                !tried.iter().any(|c| {
                    let m = seed_means(&figures_of[&bits(&c.values)]);
                    f.within(m[*i])
                })
            })
            .map(|(_, f)| f.key.clone())
            .collect();
        Report {
            scenario: plan.scenario.clone(),
            observed_file: plan.observed_text.clone(),
            seeds: plan.seeds.clone(),
            loss_before: loss(figs, baseline),
            loss_after: best_c.objective.unwrap_or(f64::INFINITY),
            candidates_tried: tried.len(),
            before: figure_reports(figs, baseline),
            fitted_values,
            fitted: figure_reports(figs, &best_means),
            unmatched,
            best_values: best_c.values.clone(),
        }
    }

    fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Calibration of {} against {}\n\nSeeds {}; the scenario runs without its faults. Loss (sum over figures of ln(model / observed)²): {} as written, {} fitted, over {} candidates.\n",
            self.scenario,
            self.observed_file,
            self.seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            trimmed(self.loss_before, 4),
            trimmed(self.loss_after, 4),
            self.candidates_tried
        );
        let _ = writeln!(s, "## Fitted values\n");
        let mut t = MarkdownTable::new([
            "key",
            "fitted",
            "as good within the seeds' noise",
            "identified",
        ]);
        for k in &self.fitted_values {
            t.row([
                format!("`{}`", k.key),
                k.value.clone(),
                format!("{} … {}", k.as_good_from, k.as_good_to),
                if k.identified {
                    "yes".to_owned()
                } else {
                    "no: the loss is flat over most of the range".to_owned()
                },
            ]);
        }
        s.push_str(&t.to_string());
        for (title, rows) in [
            ("## Model against observed, fitted", &self.fitted),
            ("## Model against observed, as written", &self.before),
        ] {
            let _ = writeln!(s, "\n\n{title}\n");
            let mut t = MarkdownTable::new([
                "figure",
                "observed",
                "model",
                "error",
                "tolerance",
                "within",
            ]);
            for r in rows {
                t.row([
                    format!("`{}`", r.figure),
                    show(&r.figure, r.observed),
                    r.model.map_or("undefined".into(), |m| show(&r.figure, m)),
                    r.relative_error
                        .map_or("—".into(), |e| format!("{:+.1} %", e * 100.0)),
                    format!("{} %", trimmed(r.tolerance * 100.0, 3)),
                    if r.within { "yes" } else { "**no**" }.to_owned(),
                ]);
            }
            s.push_str(&t.to_string());
        }
        s.push('\n');
        if !self.unmatched.is_empty() {
            let _ = writeln!(
                s,
                "\nNo setting tried brings these within their tolerance: {}. Widen a range, fit another key, or check the model's structure.",
                self.unmatched
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        s
    }
}

/// A figure's value for reading: latencies as durations, the rest as numbers.
fn show(figure: &str, v: f64) -> String {
    if figure.contains(".latency.") {
        crate::analysis::lint::show_secs(v)
    } else {
        trimmed(v, 4)
    }
}

/// A path to `target` from the folder `from` (both made absolute first).
fn relative_path(target: &Path, from: &Path) -> PathBuf {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_owned()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                c => out.push(c),
            }
        }
        out
    };
    let (t, f) = (abs(target), abs(from));
    let common = t
        .components()
        .zip(f.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in f.components().skip(common) {
        out.push("..");
    }
    for c in t.components().skip(common) {
        out.push(c);
    }
    out
}

/// Sets the dotted `key` in `root`, creating the mappings on the way.
fn insert_path(root: &mut Value, key: &str, value: Value) {
    let mut at = root;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        if !at.is_mapping() {
            *at = Value::Mapping(Default::default());
        }
        let m = at.as_mapping_mut().expect("made a mapping above");
        let k = Value::String((*p).to_owned());
        if i + 1 == parts.len() {
            m.insert(k, value);
            return;
        }
        at = m
            .entry(k)
            .or_insert_with(|| Value::Mapping(Default::default()));
    }
}

/// The `--write` overlay: `extends` the scenario, then the `--set`s and the fitted values.
fn overlay(plan: &Plan, req: &CalibrateRequest, report: &Report, out: &Path) -> String {
    let folder = out.parent().unwrap_or(Path::new(""));
    let base = relative_path(&req.file, folder);
    let mut root = Value::Mapping(Default::default());
    let mut set = |arg: &str| {
        if let Some((k, v)) = arg.split_once('=') {
            let value: Value = yaml_serde::from_str(v).unwrap_or(Value::String(v.to_owned()));
            insert_path(&mut root, k, value);
        }
    };
    for s in &req.sets {
        set(s);
    }
    for a in set_args(&plan.axes, &report.best_values) {
        set(&a);
    }
    let body = yaml_serde::to_string(&root).expect("values serialize");
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Calibrated by `loadsim calibrate` against {} (seeds {}): loss {} as written, {} fitted.",
        plan.observed_text,
        plan.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        trimmed(report.loss_before, 4),
        trimmed(report.loss_after, 4)
    );
    for k in &report.fitted_values {
        let _ = writeln!(
            s,
            "# {} = {} (as good within the seeds' noise: {} … {}{})",
            k.key,
            k.value,
            k.as_good_from,
            k.as_good_to,
            if k.identified {
                ""
            } else {
                "; not identified by the data"
            }
        );
    }
    let _ = writeln!(s, "extends: {}", base.to_string_lossy().replace('\\', "/"));
    s.push_str(&body);
    s
}

fn candidates_csv(plan: &Plan, tried: &[Scored], figures_of: &FiguresOf) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["round".into()];
    header.extend(plan.axes.iter().map(|a| a.axis.key.clone()));
    header.push("loss".into());
    header.extend(plan.figures.iter().map(|f| f.key.clone()));
    w.write_record(&header).expect("in memory");
    for c in tried {
        let means = seed_means(&figures_of[&bits(&c.values)]);
        let mut row: Vec<String> = vec![c.round.to_string()];
        row.extend(plan.axes.iter().zip(&c.values).map(|(a, &v)| a.axis.csv(v)));
        row.push(c.objective.map_or(String::new(), |o| format!("{o}")));
        row.extend(
            means
                .iter()
                .map(|m| m.map_or(String::new(), |m| format!("{m}"))),
        );
        w.write_record(&row).expect("in memory");
    }
    w.into_inner().expect("in memory")
}
