//! `loadsim tune`: recommends settings of 1–4 scenario keys that meet every requirement under
//! every fault of a fault set, and among those the cheapest in healthy load. Owns the command:
//! checking the request (keys, ranges, metrics, the fault set) before anything runs, running each
//! batch of candidates on the grid runner ([`crate::runner`]) with every run journaled in `--out`
//! (the sweep journal, [`crate::sweep::journal`], so `--resume` runs only what is missing), and
//! the report — the recommendation as YAML to paste, the feasible region per fault, the Pareto
//! front of objective against the worst fault's recovery (table and SVG) and why rejected
//! candidates failed — as Markdown or JSON. The search itself is [`crate::analysis::tune`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use yaml_serde::Value;

use super::Output;
use crate::Error;
use crate::analysis::boundary::{Kind, SearchAxis};
use crate::analysis::faultset::FaultSet;
use crate::analysis::tune::{
    DEFAULT_OBJECTIVE, DEFAULT_REQUIREMENTS, EXTRA_ROUNDS, RECOVERY, Requirement, Scored, Search,
    TuneAxis, Tuned, coarse_grid, median_recovery, pareto, search,
};
use crate::config::suggest::did_you_mean;
use crate::config::{ConfigError, Document};
use crate::expect::needed_seeds;
use crate::guard;
use crate::metrics::RunSummary;
use crate::model::{RunOptions, run_with};
use crate::report::flat::{EngineColumns, flatten};
use crate::report::markdown::MarkdownTable;
use crate::runner::{
    FolderLock, OutputPlan, Progress, Runner, Subject, output_error, write_output,
};
use crate::scenario::Scenario;
use crate::sweep::expand::metric_columns;
use crate::sweep::journal::{self, CellRecord, Header, Journal};

/// The fault set used without `--faults` (the file `faults/standard.yaml`, built in).
pub const STANDARD_FAULTS: &str = include_str!("../../faults/standard.yaml");
/// How the built-in fault set is named in reports.
pub const STANDARD_FAULTS_NAME: &str = "faults/standard.yaml";

/// The report's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TuneFormat {
    /// Markdown on stdout.
    Text,
    /// One JSON document.
    Json,
}

/// Arguments of `loadsim tune`, independent of clap.
#[derive(Clone, Debug)]
pub struct TuneRequest {
    pub file: PathBuf,
    pub sets: Vec<String>,
    /// `KEY=LOW..HIGH`, one to four.
    pub vary: Vec<String>,
    /// `None`: the built-in `faults/standard.yaml`.
    pub faults: Option<PathBuf>,
    /// `None`: the service of the scenario's first fault.
    pub target: Option<String>,
    pub seeds: Vec<u64>,
    pub objective: Option<String>,
    /// Empty: [`DEFAULT_REQUIREMENTS`].
    pub require: Vec<String>,
    pub share: f64,
    pub steps: usize,
    pub rounds: usize,
    pub out: Option<PathBuf>,
    pub format: TuneFormat,
    pub jobs: Option<usize>,
    pub resume: bool,
    /// Stop after this many runs (for testing `--resume`).
    pub max_runs: Option<usize>,
    pub yes: bool,
    pub quiet: bool,
    /// `--max-events` and `--max-memory`: the limits every run is admitted under
    /// ([`guard::admit`]).
    pub options: RunOptions,
}

/// Parses `--seeds`: a count N (seeds 1 to N), `A..B` or a list `3,5,9`.
pub fn parse_tune_seeds(text: &str) -> Result<Vec<u64>, String> {
    if !text.contains(',') && !text.contains("..") {
        let n: u64 = text
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a number of seeds, a range A..B or a list"))?;
        if n == 0 || n > crate::stats::MAX_SEEDS as u64 {
            return Err(format!(
                "give between 1 and {} seeds",
                crate::stats::MAX_SEEDS
            ));
        }
        return Ok((1..=n).collect());
    }
    super::seeds::parse_seeds(text)
}

/// One scenario a candidate runs in: healthy load or one fault of the set.
struct Variant {
    /// `healthy`, or the fault's name.
    name: String,
    doc: Document,
    /// The `--set` arguments that turn the scenario file into this variant.
    reproduce: Vec<String>,
}

/// Everything checked before anything runs.
struct Plan {
    subject: Subject,
    scenario: String,
    axes: Vec<TuneAxis>,
    faults_name: String,
    target: String,
    /// `variants[0]` is healthy load; then one per fault, in the fault set's order.
    variants: Vec<Variant>,
    requirements: Vec<Requirement>,
    objective: String,
    search: Search,
    seeds: Vec<u64>,
    inputs_sha256: String,
}

/// Runs the search and renders the report; no feasible setting is [`Error::Infeasible`] (exit
/// 1) carrying the report with the closest setting.
pub fn tune(req: &TuneRequest) -> Result<Output, Error> {
    let plan = prepare(req)?;
    let runs_per = plan.variants.len() as u64 * plan.seeds.len() as u64;
    let d = plan.axes.len() as u32;
    let ints = plan
        .axes
        .iter()
        .filter(|a| a.axis.kind == Kind::Integer)
        .count() as u32;
    // Counted before it is built: a grid of more than MAX_CELLS points is not allocated.
    let grid = match (req.steps as u64).saturating_pow(d) {
        n if n > guard::MAX_CELLS => n,
        _ => coarse_grid(&plan.axes, req.steps).len() as u64,
    };
    let candidates = grid
        .saturating_add((req.rounds as u64).saturating_mul(3u64.pow(d)))
        .saturating_add(EXTRA_ROUNDS as u64 * 3u64.pow(ints));
    guard::check_run_limit(candidates.saturating_mul(runs_per), req.yes)?;
    // Every variant (healthy load, each fault) is admitted as the scenario gives it before
    // anything runs; each candidate is admitted again when it runs.
    for v in &plan.variants {
        let sc = candidate_scenario(&v.doc, &[], plan.seeds[0])?;
        guard::admit(&sc, &req.file, req.options)?;
    }
    if let Some(dir) = &req.out {
        let mut plan_out = OutputPlan::new(plan.subject.inputs());
        if let Some(f) = &req.faults {
            plan_out.add_inputs([f.as_path()]);
        }
        plan_out.folder("--out", dir, |n| {
            OUT_FILES.contains(&n) || n == journal::FILE
        })?;
    }
    let _lock = match &req.out {
        Some(dir) => Some(FolderLock::acquire(dir, "--out")?),
        None => None,
    };
    let journal = open_journal(req, &plan)?;
    let runner = Runner::new(req.jobs)?;
    let ran = AtomicUsize::new(0);
    let progress = Progress::new(None, "runs", req.quiet || req.format == TuneFormat::Json);
    let mut evaluate = |batch: &[Vec<f64>]| -> Result<Vec<Scored>, Error> {
        let (n_variants, seeds) = (plan.variants.len(), &plan.seeds);
        let cells: Vec<(usize, usize, u64)> = (0..batch.len())
            .flat_map(|c| (0..n_variants).flat_map(move |v| seeds.iter().map(move |&s| (c, v, s))))
            .collect();
        let results = runner.map(&cells, |&(c, v, seed)| {
            let sets = set_args(&plan.axes, &batch[c]);
            let key = cell_key(&sets, &plan.variants[v].name, seed);
            if let Some(j) = &journal
                && let Some(r) = j.done.get(&key)
            {
                return Ok(r.summary.clone());
            }
            if let Some(max) = req.max_runs
                && ran.fetch_add(1, Ordering::SeqCst) >= max
            {
                return Err(Error::Stopped(format!(
                    "stopped after {max} runs (--max-runs); finish with --resume"
                )));
            }
            let sc = candidate_scenario(&plan.variants[v].doc, &sets, seed)?;
            let options = guard::admit(&sc, &req.file, req.options)?;
            let summary = run_with(&sc, options)?;
            progress.inc();
            if let Some(j) = &journal {
                let record = CellRecord {
                    index: 0,
                    key,
                    summary,
                };
                let back = j
                    .journal
                    .append(&record)
                    .map_err(|e| output_error(j.journal.path(), e))?;
                return Ok(back.summary);
            }
            Ok(summary)
        });
        let mut results = results.into_iter();
        let mut scored = Vec::with_capacity(batch.len());
        for values in batch {
            let mut per_variant: Vec<Vec<RunSummary>> = Vec::new();
            for _ in &plan.variants {
                let runs = results
                    .by_ref()
                    .take(plan.seeds.len())
                    .collect::<Result<Vec<_>, Error>>()?;
                per_variant.push(runs);
            }
            scored.push(score(&plan, values.clone(), &per_variant));
        }
        Ok(scored)
    };
    let tuned = search(&plan.axes, &plan.search, &mut evaluate)?;
    drop(progress);
    let report = Report::new(&plan, &tuned);
    let text = match req.format {
        TuneFormat::Text => report.markdown(&plan),
        TuneFormat::Json => {
            serde_json::to_string_pretty(&report).expect("reports serialize") + "\n"
        }
    };
    let mut notes = Vec::new();
    if let Some(dir) = &req.out {
        write_output(&dir.join("tune.md"), report.markdown(&plan).as_bytes())?;
        write_output(
            &dir.join("tune.json"),
            (serde_json::to_string_pretty(&report).expect("reports serialize") + "\n").as_bytes(),
        )?;
        write_output(&dir.join("candidates.csv"), &candidates_csv(&plan, &tuned))?;
        write_pareto_svg(&dir.join("pareto.svg"), &plan, &tuned)?;
        notes.push(format!(
            "wrote tune.md, tune.json, candidates.csv, pareto.svg and {} in {}",
            journal::FILE,
            dir.display()
        ));
    }
    if report.recommended.is_none() {
        return Err(Error::Infeasible {
            report: text,
            summary: report.verdict.clone(),
        });
    }
    Ok(Output {
        stdout: text,
        notes,
    })
}

/// The files `--out` receives besides the journal.
const OUT_FILES: [&str; 4] = ["tune.md", "tune.json", "candidates.csv", "pareto.svg"];

fn set_args(axes: &[TuneAxis], values: &[f64]) -> Vec<String> {
    axes.iter()
        .zip(values)
        .map(|(a, &v)| a.axis.set_arg(v))
        .collect()
}

fn cell_key(sets: &[String], variant: &str, seed: u64) -> String {
    format!("{} | {variant} | seed {seed}", sets.join(" "))
}

fn candidate_scenario(doc: &Document, sets: &[String], seed: u64) -> Result<Scenario, ConfigError> {
    let mut doc = doc.clone();
    for s in sets {
        doc.apply_set(s)?;
    }
    let mut sc = Scenario::from_document(&doc)?;
    sc.seed = seed;
    Ok(sc)
}

/// The value of a dotted metric in a run (`None` when undefined).
fn metric(run: &RunSummary, name: &str) -> Option<f64> {
    flatten(run, EngineColumns::Exclude)
        .into_iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.as_f64())
}

fn score(plan: &Plan, values: Vec<f64>, per_variant: &[Vec<RunSummary>]) -> Scored {
    let healthy = &per_variant[0];
    let objective: Option<Vec<f64>> = healthy.iter().map(|r| metric(r, &plan.objective)).collect();
    let objective = objective.map(|v| v.iter().sum::<f64>() / v.len() as f64);
    let faulted = &per_variant[1..];
    let failing = faulted
        .iter()
        .map(|runs| {
            plan.requirements
                .iter()
                .map(|r| {
                    runs.iter()
                        .filter(|run| !r.comparison.holds(metric(run, &r.metric)))
                        .count()
                })
                .collect()
        })
        .collect();
    let recovery = faulted
        .iter()
        .map(|runs| {
            let per_seed: Vec<Option<f64>> = runs.iter().map(|r| metric(r, RECOVERY)).collect();
            median_recovery(&per_seed)
        })
        .collect();
    Scored {
        values,
        round: 0,
        objective,
        failing,
        recovery,
    }
}

/// An open journal and the runs it already held.
struct OpenJournal {
    journal: Journal,
    done: HashMap<String, CellRecord>,
}

fn open_journal(req: &TuneRequest, plan: &Plan) -> Result<Option<OpenJournal>, Error> {
    let Some(dir) = &req.out else {
        if req.resume {
            return Err(ConfigError::flag(
                "--resume",
                "resumes from the journal in --out; give --out DIR",
            )
            .into());
        }
        return Ok(None);
    };
    let header = Header::new(
        &format!("tune {}", plan.scenario),
        &plan.inputs_sha256,
        "1/1",
    );
    let path = dir.join(journal::FILE);
    let mut done = HashMap::new();
    if req.resume
        && let Some(contents) = journal::read(&path)?
    {
        if contents.header != header {
            return Err(ConfigError::flag(
                "--resume",
                format!(
                    "cannot resume from {}: it was written for another scenario (or a file it reads, like a trace), fault set, target, key range or seeds; run without --resume to start over, or choose another --out",
                    path.display()
                ),
            )
            .into());
        }
        done = contents.records;
    }
    let records: Vec<CellRecord> = {
        let mut v: Vec<CellRecord> = done.values().cloned().collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    };
    let journal = Journal::create(&path, &header, &records).map_err(|e| output_error(&path, e))?;
    Ok(Some(OpenJournal { journal, done }))
}

fn prepare(req: &TuneRequest) -> Result<Plan, Error> {
    if req.vary.is_empty() || req.vary.len() > 4 {
        return Err(ConfigError::flag(
            "--vary",
            "give one to four keys to tune, each as KEY=LOW..HIGH",
        )
        .into());
    }
    let mut axes = Vec::new();
    for v in &req.vary {
        let Some((k, r)) = v.split_once('=') else {
            return Err(ConfigError::flag(
                "--vary",
                format!("`{v}` is not KEY=LOW..HIGH, like `services.svc_a.calls.svc_b.retry_throttle.max_tokens=1..100`"),
            )
            .into());
        };
        let axis = SearchAxis::parse(k, r).map_err(|m| ConfigError::flag("--vary", m))?;
        if axes.iter().any(|a: &TuneAxis| a.axis.key == axis.key) {
            return Err(
                ConfigError::flag("--vary", format!("`{}` is given twice", axis.key)).into(),
            );
        }
        axes.push(TuneAxis::new(axis));
    }
    if !(req.share > 0.0 && req.share <= 1.0) {
        return Err(ConfigError::flag("--share", "must be a share in (0, 1], like 0.9").into());
    }
    if req.steps < 2 {
        return Err(ConfigError::flag("--steps", "must be at least 2 (LOW and HIGH)").into());
    }
    if req.seeds.is_empty() {
        return Err(ConfigError::flag("--seeds", "give at least one seed").into());
    }
    let subject = Subject::load(&req.file, &req.sets)?;
    let base = subject.scenario(&[], None)?;
    let target = match &req.target {
        Some(t) => t.clone(),
        None => base
            .faults
            .iter()
            .find_map(|f| f.kind.service())
            .map(|s| base.services[s].name.clone())
            .ok_or_else(|| {
                ConfigError::flag(
                    "--target",
                    "the scenario has no fault on a service to take the target from; name the service the fault set acts on, like `--target svc_b`",
                )
            })?,
    };
    if !base.services.iter().any(|s| s.name == target) {
        let names: Vec<&str> = base.services.iter().map(|s| s.name.as_str()).collect();
        return Err(ConfigError::flag(
            "--target",
            format!(
                "`{target}` is not a service of the scenario (it has {}){}",
                names.join(", "),
                did_you_mean(&target, names.iter().copied())
            ),
        )
        .into());
    }
    let (faults_name, fault_set, fault_text) = match &req.faults {
        Some(f) => {
            let set = FaultSet::load(f)?;
            let text = set
                .doc
                .files
                .iter()
                .map(|f| f.text.clone())
                .collect::<String>();
            (f.display().to_string(), set, text)
        }
        None => {
            let doc = Document::from_text(Path::new(STANDARD_FAULTS_NAME), STANDARD_FAULTS)?;
            (
                format!("{STANDARD_FAULTS_NAME} (built in)"),
                FaultSet::from_document(Path::new(STANDARD_FAULTS_NAME), doc)?,
                STANDARD_FAULTS.to_owned(),
            )
        }
    };
    // Healthy load: the scenario without its faults.
    let mut healthy = subject.doc.clone();
    if let Some(m) = healthy.value.as_mapping_mut() {
        m.insert(
            Value::String("faults".into()),
            Value::Mapping(Default::default()),
        );
    }
    let mut problems = Vec::new();
    let mut variants = vec![Variant {
        name: "healthy".into(),
        doc: healthy,
        reproduce: vec!["faults={}".into()],
    }];
    for (i, (name, _)) in fault_set.faults.iter().enumerate() {
        match fault_set.apply(i, &subject.doc, &target) {
            Ok(doc) => {
                let mut reproduce = vec![format!("faults={}", FaultSet::faults_json(&doc))];
                if let Some(d) = doc.value.get("duration").and_then(Value::as_str)
                    && subject.doc.value.get("duration").and_then(Value::as_str) != Some(d)
                {
                    reproduce.push(format!("duration={d}"));
                }
                variants.push(Variant {
                    name: name.clone(),
                    doc,
                    reproduce,
                });
            }
            Err(e) => problems.extend(e.diagnostics),
        }
    }
    // Every corner of the ranges must validate in every variant.
    let corners = coarse_grid(&axes, 2);
    let mut columns: Option<Vec<String>> = None;
    for v in &variants {
        for c in &corners {
            match candidate_scenario(&v.doc, &set_args(&axes, c), 0) {
                Ok(sc) => {
                    if columns.is_none() {
                        columns = Some(metric_columns(&sc));
                    }
                }
                Err(e) => {
                    for d in e.diagnostics {
                        if !problems.contains(&d) {
                            problems.push(d);
                        }
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
    let columns = columns.unwrap_or_default();
    let known = |flag: &str, m: &str| -> Result<(), ConfigError> {
        if columns.iter().any(|c| c == m) {
            Ok(())
        } else {
            Err(ConfigError::flag(
                flag,
                format!(
                    "`{m}` is not a metric of this scenario's runs (see `loadsim run --format csv`){}",
                    did_you_mean(m, columns.iter().map(String::as_str))
                ),
            ))
        }
    };
    let objective = req
        .objective
        .clone()
        .unwrap_or_else(|| DEFAULT_OBJECTIVE.to_owned());
    known("--objective", &objective)?;
    let texts: Vec<String> = if req.require.is_empty() {
        DEFAULT_REQUIREMENTS.iter().map(|s| s.to_string()).collect()
    } else {
        req.require.clone()
    };
    let mut requirements = Vec::new();
    for t in &texts {
        let r = Requirement::parse(t).map_err(|m| ConfigError::flag("--require", m))?;
        known("--require", &r.metric)?;
        requirements.push(r);
    }
    let needed = needed_seeds(req.share, req.seeds.len()).max(1);
    let seeds_text: Vec<String> = req.seeds.iter().map(u64::to_string).collect();
    let identity = format!(
        "sets={:?} vary={:?} target={target} seeds={}",
        req.sets,
        req.vary,
        seeds_text.join(",")
    );
    // After every corner is validated: the files the scenario reads (a trace) are recorded.
    let scenario_identity = subject.doc.identity();
    let inputs_sha256 = crate::sweep::sha256(
        scenario_identity
            .iter()
            .map(Vec::as_slice)
            .chain([fault_text.as_bytes(), identity.as_bytes()]),
    );
    Ok(Plan {
        scenario: base.name.clone(),
        subject,
        axes,
        faults_name,
        target,
        variants,
        requirements,
        objective,
        search: Search {
            steps: req.steps,
            rounds: req.rounds,
            seeds: req.seeds.len(),
            needed,
        },
        seeds: req.seeds.clone(),
        inputs_sha256,
    })
}

/// One key's value, for reports.
#[derive(Clone, Debug, Serialize)]
struct Setting {
    key: String,
    /// As it would be written in the scenario (`10`, `0.1`, `800ms`).
    value: String,
}

/// A candidate, for reports.
#[derive(Clone, Debug, Serialize)]
struct CandidateReport {
    settings: Vec<Setting>,
    /// `KEY=VALUE` arguments for `loadsim run --set`.
    set: Vec<String>,
    round: usize,
    feasible: bool,
    objective: Option<f64>,
    /// The worst fault's median recovery over the seeds, s (`null`: never).
    worst_recovery_s: Option<f64>,
    /// The fault with the worst recovery.
    worst_fault: Option<String>,
    /// Per fault, per requirement: seeds on which it fails (only the failing ones).
    failing: BTreeMap<String, BTreeMap<String, usize>>,
}

/// A fault's feasible region.
#[derive(Clone, Debug, Serialize)]
struct FaultRegion {
    fault: String,
    /// The `--set` arguments that put this fault (alone) into the scenario file.
    reproduce: Vec<String>,
    feasible: usize,
    tried: usize,
    /// Per key: the smallest and largest value among the candidates feasible under this fault.
    ranges: Vec<Option<[String; 2]>>,
}

/// Why some candidates were rejected.
#[derive(Clone, Debug, Serialize)]
struct Rejection {
    fault: String,
    requirement: String,
    /// Candidates on which it failed on more seeds than allowed.
    candidates: usize,
    /// Per key: the range of those candidates' values.
    ranges: Vec<[String; 2]>,
    /// Seeds failing, summed over those candidates, out of candidates × seeds.
    seeds_failing: usize,
    seeds_run: usize,
}

#[derive(Clone, Debug, Serialize)]
struct Report {
    scenario: String,
    faults: String,
    target: String,
    keys: Vec<KeyReport>,
    seeds: Vec<u64>,
    share: f64,
    needed_seeds: usize,
    requirements: Vec<String>,
    objective: String,
    search: SearchReport,
    /// One line: the recommendation, or that no setting meets the requirements.
    verdict: String,
    recommended: Option<CandidateReport>,
    /// The YAML to paste into the scenario.
    recommended_yaml: Option<String>,
    /// With no feasible setting: the one closest to meeting every requirement.
    closest: Option<CandidateReport>,
    regions: Vec<FaultRegion>,
    pareto: Vec<CandidateReport>,
    rejections: Vec<Rejection>,
    candidates: Vec<CandidateReport>,
}

#[derive(Clone, Debug, Serialize)]
struct KeyReport {
    key: String,
    low: String,
    high: String,
    scale: &'static str,
}

#[derive(Clone, Debug, Serialize)]
struct SearchReport {
    method: &'static str,
    steps: usize,
    rounds: usize,
    candidates: usize,
    runs: usize,
}

fn show(a: &TuneAxis, v: f64) -> String {
    a.axis
        .set_arg(v)
        .split_once('=')
        .map(|(_, v)| v.to_owned())
        .unwrap_or_default()
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) => crate::report::number::trimmed(v, 4),
        None => "never".into(),
    }
}

impl Report {
    fn new(plan: &Plan, t: &Tuned) -> Report {
        let s = &plan.search;
        let faults: Vec<&str> = plan.variants[1..].iter().map(|v| v.name.as_str()).collect();
        let candidate = |c: &Scored| {
            let worst = c
                .recovery
                .iter()
                .enumerate()
                .max_by(|a, b| {
                    a.1.unwrap_or(f64::INFINITY)
                        .total_cmp(&b.1.unwrap_or(f64::INFINITY))
                        .then(b.0.cmp(&a.0))
                })
                .map(|(i, _)| faults[i].to_owned());
            let mut failing = BTreeMap::new();
            for (f, per) in c.failing.iter().enumerate() {
                let m: BTreeMap<String, usize> = per
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(r, n)| (plan.requirements[r].describe(), *n))
                    .collect();
                if !m.is_empty() {
                    failing.insert(faults[f].to_owned(), m);
                }
            }
            CandidateReport {
                settings: plan
                    .axes
                    .iter()
                    .zip(&c.values)
                    .map(|(a, &v)| Setting {
                        key: a.axis.key.clone(),
                        value: show(a, v),
                    })
                    .collect(),
                set: set_args(&plan.axes, &c.values),
                round: c.round,
                feasible: c.feasible(s.seeds, s.needed),
                objective: c.objective,
                worst_recovery_s: c.worst_recovery(),
                worst_fault: worst,
                failing,
            }
        };
        let range_of = |idx: &[usize], k: usize| -> Option<[String; 2]> {
            let a = &plan.axes[k];
            let lo = idx.iter().map(|&i| t.tried[i].values[k]).reduce(f64::min)?;
            let hi = idx.iter().map(|&i| t.tried[i].values[k]).reduce(f64::max)?;
            Some([show(a, lo), show(a, hi)])
        };
        let regions = plan.variants[1..]
            .iter()
            .enumerate()
            .map(|(f, v)| {
                let ok: Vec<usize> = (0..t.tried.len())
                    .filter(|&i| t.tried[i].feasible_under(f, s.seeds, s.needed))
                    .collect();
                FaultRegion {
                    fault: v.name.clone(),
                    reproduce: v.reproduce.clone(),
                    feasible: ok.len(),
                    tried: t.tried.len(),
                    ranges: (0..plan.axes.len()).map(|k| range_of(&ok, k)).collect(),
                }
            })
            .collect();
        let mut rejections = Vec::new();
        for (f, name) in faults.iter().enumerate() {
            for (r, req) in plan.requirements.iter().enumerate() {
                let bad: Vec<usize> = (0..t.tried.len())
                    .filter(|&i| s.seeds - t.tried[i].failing[f][r] < s.needed)
                    .collect();
                if bad.is_empty() {
                    continue;
                }
                rejections.push(Rejection {
                    fault: (*name).to_owned(),
                    requirement: req.describe(),
                    candidates: bad.len(),
                    ranges: (0..plan.axes.len())
                        .filter_map(|k| range_of(&bad, k))
                        .collect(),
                    seeds_failing: bad.iter().map(|&i| t.tried[i].failing[f][r]).sum(),
                    seeds_run: bad.len() * s.seeds,
                });
            }
        }
        let recommended = t.best.map(|i| candidate(&t.tried[i]));
        let closest = t.closest.map(|i| candidate(&t.tried[i]));
        let shown = |c: &CandidateReport| {
            c.settings
                .iter()
                .map(|s| format!("{} = {}", s.key, s.value))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let verdict = match (&recommended, &closest) {
            (Some(r), _) => format!(
                "recommended: {} ({} {} in healthy load)",
                shown(r),
                plan.objective,
                num(r.objective)
            ),
            (None, Some(c)) => format!(
                "no setting in the range meets every requirement under every fault on {} of {} seeds; the closest is {}",
                s.needed,
                s.seeds,
                shown(c)
            ),
            (None, None) => "no setting was tried".to_owned(),
        };
        let runs = t.tried.len() * plan.variants.len() * plan.seeds.len();
        Report {
            scenario: plan.scenario.clone(),
            faults: plan.faults_name.clone(),
            target: plan.target.clone(),
            keys: plan
                .axes
                .iter()
                .map(|a| KeyReport {
                    key: a.axis.key.clone(),
                    low: show(a, a.axis.low),
                    high: show(a, a.axis.high),
                    scale: if a.log { "log" } else { "linear" },
                })
                .collect(),
            seeds: plan.seeds.clone(),
            share: s.needed as f64 / s.seeds as f64,
            needed_seeds: s.needed,
            requirements: plan
                .requirements
                .iter()
                .map(Requirement::describe)
                .collect(),
            objective: plan.objective.clone(),
            search: SearchReport {
                method: "coarse grid, then refinement around the incumbent at half the spacing per round",
                steps: s.steps,
                rounds: s.rounds,
                candidates: t.tried.len(),
                runs,
            },
            verdict,
            recommended_yaml: t.best.map(|i| yaml_snippet(&plan.axes, &t.tried[i].values)),
            recommended,
            closest,
            regions,
            pareto: pareto(&t.tried)
                .into_iter()
                .map(|i| candidate(&t.tried[i]))
                .collect(),
            rejections,
            candidates: t.tried.iter().map(candidate).collect(),
        }
    }

    fn markdown(&self, plan: &Plan) -> String {
        let mut out = String::new();
        let keys: Vec<String> = self.keys.iter().map(|k| format!("`{}`", k.key)).collect();
        let _ = writeln!(out, "# Tune `{}` over {}\n", self.scenario, keys.join(", "));
        let seeds: Vec<String> = self.seeds.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "fault set: {} ({} faults, each alone) on `{}`.  \nseeds: {} (the same for every candidate); a requirement must hold on {} of {}.  \nrequirements, under every fault: {}.  \nobjective: the mean over the seeds of `{}` in healthy load (no fault), lower is better.  \nsearch: a grid of {} values per key ({}), then {} refinement rounds around the incumbent; {} candidates, {} runs.\n",
            self.faults,
            self.regions.len(),
            self.target,
            seeds.join(", "),
            self.needed_seeds,
            self.seeds.len(),
            self.requirements
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", "),
            self.objective,
            self.search.steps,
            self.keys
                .iter()
                .map(|k| format!("`{}` {}..{} {}", k.key, k.low, k.high, k.scale))
                .collect::<Vec<_>>()
                .join(", "),
            self.search.rounds,
            self.search.candidates,
            self.search.runs,
        );
        match (&self.recommended, &self.closest) {
            (Some(r), _) => {
                let _ = writeln!(
                    out,
                    "## Recommendation\n\n{}; worst fault's recovery: {} ({}).\n\n```yaml\n{}```\n",
                    self.verdict,
                    r.worst_recovery_s
                        .map_or("never".to_owned(), |s| format!("{} s", num(Some(s)))),
                    r.worst_fault.clone().unwrap_or_default(),
                    self.recommended_yaml.clone().unwrap_or_default()
                );
            }
            (None, Some(c)) => {
                let _ = writeln!(
                    out,
                    "## No setting in the range meets every requirement\n\n{}.\n\nIt still fails:\n",
                    self.verdict
                );
                for (fault, reqs) in &c.failing {
                    for (r, n) in reqs {
                        let _ = writeln!(
                            out,
                            "- under `{fault}`: `{r}` on {n} of {} seeds",
                            self.seeds.len()
                        );
                    }
                }
                let _ = writeln!(out);
            }
            (None, None) => {}
        }
        let _ = writeln!(
            out,
            "## Feasible region per fault\n\nCandidates meeting every requirement under the fault alone, and the range of their values.\n"
        );
        let mut header = vec!["fault".to_owned(), "feasible".to_owned()];
        header.extend(self.keys.iter().map(|k| format!("`{}`", k.key)));
        let mut t = MarkdownTable::new(header);
        for r in &self.regions {
            let mut row = vec![r.fault.clone(), format!("{} of {}", r.feasible, r.tried)];
            row.extend(r.ranges.iter().map(|x| match x {
                Some([a, b]) if a == b => a.clone(),
                Some([a, b]) => format!("{a} – {b}"),
                None => "—".into(),
            }));
            t.row(row);
        }
        let _ = writeln!(out, "{t}\n");
        let _ = writeln!(
            out,
            "## Pareto front: objective against the worst fault's recovery\n\nCandidates no other beats on both (median recovery over the seeds; `never`: the median seed does not recover).\n"
        );
        let mut header: Vec<String> = self.keys.iter().map(|k| format!("`{}`", k.key)).collect();
        header.extend([
            "objective".to_owned(),
            "worst recovery (s)".into(),
            "worst fault".into(),
            "feasible".into(),
        ]);
        let mut t = MarkdownTable::new(header);
        for c in &self.pareto {
            let mut row: Vec<String> = c.settings.iter().map(|s| s.value.clone()).collect();
            row.extend([
                num(c.objective),
                num(c.worst_recovery_s),
                c.worst_fault.clone().unwrap_or_default(),
                if c.feasible { "yes" } else { "no" }.into(),
            ]);
            t.row(row);
        }
        let _ = writeln!(out, "{t}\n");
        let _ = writeln!(
            out,
            "## Why candidates were rejected\n\nPer fault and requirement: the candidates it rejected (failing on more than {} of {} seeds), where they lie, and the seeds failing among them.\n",
            self.seeds.len() - self.needed_seeds,
            self.seeds.len()
        );
        if self.rejections.is_empty() {
            let _ = writeln!(out, "None: every candidate tried is feasible.\n");
        } else {
            let mut header = vec!["fault".to_owned(), "requirement".into(), "rejected".into()];
            header.extend(self.keys.iter().map(|k| format!("`{}`", k.key)));
            header.push("seeds failing".into());
            let mut t = MarkdownTable::new(header);
            for r in &self.rejections {
                let mut row = vec![
                    r.fault.clone(),
                    format!("`{}`", r.requirement),
                    format!("{} of {}", r.candidates, self.search.candidates),
                ];
                row.extend(r.ranges.iter().map(|[a, b]| {
                    if a == b {
                        a.clone()
                    } else {
                        format!("{a} – {b}")
                    }
                }));
                row.push(format!("{} of {}", r.seeds_failing, r.seeds_run));
                t.row(row);
            }
            let _ = writeln!(out, "{t}\n");
        }
        let _ = writeln!(
            out,
            "Reproduce a fault's runs with `loadsim run {} --set KEY=VALUE… --set 'faults=…' --seeds …` (the `--set` arguments per fault are in `--format json`, `regions[].reproduce`).",
            plan.subject.file.display()
        );
        out
    }
}

/// The settings as nested YAML, keys as in the scenario file.
fn yaml_snippet(axes: &[TuneAxis], values: &[f64]) -> String {
    // (path, value) pairs, rendered as a tree with shared prefixes merged.
    let mut out = String::new();
    let mut previous: Vec<&str> = Vec::new();
    let mut pairs: Vec<(Vec<&str>, String)> = axes
        .iter()
        .zip(values)
        .map(|(a, &v)| (a.axis.key.split('.').collect(), show(a, v)))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, value) in &pairs {
        let common = previous
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count()
            .min(path.len() - 1);
        for (depth, part) in path.iter().enumerate().skip(common) {
            let indent = "  ".repeat(depth);
            if depth + 1 == path.len() {
                let _ = writeln!(out, "{indent}{part}: {value}");
            } else {
                let _ = writeln!(out, "{indent}{part}:");
            }
        }
        previous = path.clone();
    }
    out
}

fn candidates_csv(plan: &Plan, t: &Tuned) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = plan.axes.iter().map(|a| a.axis.key.clone()).collect();
    header.extend(["round".into(), "feasible".into(), "objective".into()]);
    let mut seen = HashSet::new();
    for v in &plan.variants[1..] {
        if seen.insert(v.name.clone()) {
            header.push(format!("{}.recovery_s", v.name));
            for r in &plan.requirements {
                header.push(format!("{}.failing[{}]", v.name, r.describe()));
            }
        }
    }
    w.write_record(&header).expect("CSV to memory");
    for c in &t.tried {
        let mut row: Vec<String> = plan
            .axes
            .iter()
            .zip(&c.values)
            .map(|(a, &v)| a.axis.csv(v))
            .collect();
        row.push(c.round.to_string());
        row.push(
            c.feasible(plan.search.seeds, plan.search.needed)
                .to_string(),
        );
        row.push(c.objective.map_or(String::new(), |o| o.to_string()));
        for (f, rec) in c.recovery.iter().enumerate() {
            row.push(rec.map_or(String::new(), |r| r.to_string()));
            row.extend(c.failing[f].iter().map(usize::to_string));
        }
        w.write_record(&row).expect("CSV to memory");
    }
    w.into_inner().expect("CSV to memory")
}

/// The Pareto front as a line chart (objective on x, worst fault's recovery on y).
fn write_pareto_svg(path: &Path, plan: &Plan, t: &Tuned) -> Result<(), Error> {
    let front = pareto(&t.tried);
    let point = |i: usize| {
        let c = &t.tried[i];
        let r = c.worst_recovery().unwrap_or(f64::NAN);
        (c.objective.unwrap_or(f64::NAN), r, r, r)
    };
    let feasible: Vec<(f64, f64, f64, f64)> = front
        .iter()
        .filter(|&&i| t.tried[i].feasible(plan.search.seeds, plan.search.needed))
        .map(|&i| point(i))
        .collect();
    let mut lines = vec![crate::plot::Line {
        scenario: "Pareto front".into(),
        points: front.iter().map(|&i| point(i)).collect(),
    }];
    if !feasible.is_empty() {
        lines.push(crate::plot::Line {
            scenario: "feasible".into(),
            points: feasible,
        });
    }
    let drawable = lines[0]
        .points
        .iter()
        .any(|p| p.0.is_finite() && p.1.is_finite());
    let title = format!("{}: tuning trade-off", plan.scenario);
    if drawable {
        crate::plot::sensitivity_chart(
            path,
            &title,
            &format!("{} in healthy load (mean over seeds)", plan.objective),
            "worst fault's recovery (s, median over seeds)",
            &lines,
        )?;
    } else {
        crate::plot::placeholder(
            path,
            &title,
            "no candidate on the Pareto front recovers under every fault",
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_nest_shared_key_paths() {
        let axes = [
            TuneAxis::new(
                SearchAxis::parse(
                    "services.svc_a.calls.svc_b.retry_throttle.max_tokens",
                    "1..100",
                )
                .unwrap(),
            ),
            TuneAxis::new(
                SearchAxis::parse(
                    "services.svc_a.calls.svc_b.retry_throttle.token_ratio",
                    "0.01..1",
                )
                .unwrap(),
            ),
            TuneAxis::new(
                SearchAxis::parse("services.svc_a.calls.svc_b.attempt_timeout", "100ms..2s")
                    .unwrap(),
            ),
        ];
        assert_eq!(
            yaml_snippet(&axes, &[10.0, 0.1, 0.8]),
            "services:\n  svc_a:\n    calls:\n      svc_b:\n        attempt_timeout: 800ms\n        retry_throttle:\n          max_tokens: 10\n          token_ratio: 0.1\n"
        );
    }

    #[test]
    fn seeds_are_a_count_a_range_or_a_list() {
        assert_eq!(parse_tune_seeds("3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_tune_seeds("5..7").unwrap(), vec![5, 6, 7]);
        assert_eq!(parse_tune_seeds("4,9").unwrap(), vec![4, 9]);
        assert!(parse_tune_seeds("0").is_err());
        assert!(parse_tune_seeds("x").is_err());
    }
}
