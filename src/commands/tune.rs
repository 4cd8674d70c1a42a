//! `loadsim tune`: recommends settings of 1–4 scenario keys that meet every requirement under
//! every fault of a fault set, and among those the cheapest in healthy load. Owns the command:
//! checking the request (keys, ranges, metrics, the fault set) before anything runs, running each
//! batch of candidates on the grid runner ([`crate::runner`]) with every run journaled in `--out`
//! (the sweep journal, [`crate::sweep::journal`], so `--resume` runs only what is missing), and
//! the report's files. What the report says and its forms (Markdown, JSON, CSV, SVG) are
//! [`render`]; the search itself is [`crate::analysis::tune`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use yaml_serde::Value;

use super::Output;
use crate::Error;
use crate::analysis::boundary::SearchAxis;
use crate::analysis::faultset::FaultSet;
use crate::analysis::tune::{
    DEFAULT_OBJECTIVE, DEFAULT_REQUIREMENTS, RECOVERY, Requirement, Scored, Search, TuneAxis,
    coarse_grid, median_recovery, most_candidates, search, split_scope,
};
use crate::config::suggest::did_you_mean;
use crate::config::{ConfigError, Document};
use crate::expect::needed_seeds;
use crate::guard;
use crate::metrics::RunSummary;
use crate::model::{RunOptions, run_with};
use crate::report::flat::metric_columns;
use crate::report::flat::{EngineColumns, flatten};
use crate::runner::{FolderLock, OutputPlan, Progress, Runner, Subject, export, output_error};
use crate::scenario::Scenario;
use crate::sweep::journal::{self, CellRecord, Header, SearchJournal};
use plan::{Plan, Variant, set_args};
use render::{Report, candidates_csv, pareto_svg};

pub(crate) mod plan;
mod render;

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
    /// The scenario file whose keys are tuned.
    pub file: PathBuf,
    /// `--set KEY=VALUE` overrides, in order, applied to the scenario.
    pub sets: Vec<String>,
    /// `KEY=LOW..HIGH`, one to four.
    pub vary: Vec<String>,
    /// `None`: the built-in `faults/standard.yaml`.
    pub faults: Option<PathBuf>,
    /// `None`: the service of the scenario's first fault.
    pub target: Option<String>,
    /// `--seeds`: the seeds every candidate runs on.
    pub seeds: Vec<u64>,
    /// `[FAULT:] METRIC`; `None`: [`DEFAULT_OBJECTIVE`] in healthy load.
    pub objective: Option<String>,
    /// `[FAULT:] METRIC OP NUMBER` each; empty: [`DEFAULT_REQUIREMENTS`].
    pub require: Vec<String>,
    /// Relative tolerance of the tie rule ([`crate::analysis::tune::ties_with`]).
    pub tie_tolerance: f64,
    /// `--share`: the fraction of the seeds on which each requirement must hold, in (0, 1].
    pub share: f64,
    /// `--steps`: coarse grid values per key, LOW and HIGH included.
    pub steps: usize,
    /// `--rounds`: refinement rounds after the grid, each at half the previous spacing.
    pub rounds: usize,
    /// `--out`: the folder for tune.md, tune.json, candidates.csv, pareto.svg and the journal;
    /// `None` writes only the report on stdout.
    pub out: Option<PathBuf>,
    /// `--format`: the report's format on stdout.
    pub format: TuneFormat,
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

/// The name of the variant with no fault (healthy load), in reports, the journal and scopes.
const HEALTHY: &str = "healthy";

/// The service of the scenario's first fault that names one, read from the YAML as written
/// (the scenario's own faults are not validated: the fault set replaces them).
fn first_fault_service(doc: &Document) -> Option<String> {
    doc.value
        .get("faults")?
        .as_mapping()?
        .values()
        .find_map(|f| f.get("service").and_then(Value::as_str))
        .map(str::to_owned)
}

/// Runs the search and renders the report; no feasible setting is [`Error::Infeasible`] (exit
/// 1) carrying the report with the closest setting.
pub fn tune(req: &TuneRequest) -> Result<Output, Error> {
    let plan = prepare(req)?;
    let runs_per = plan.variants.len() as u64 * plan.seeds.len() as u64;
    let candidates = most_candidates(&plan.axes, req.steps, req.rounds);
    guard::check_run_limit(candidates.saturating_mul(runs_per), req.yes)?;
    // Every variant (healthy load, each fault) is admitted as the scenario gives it before
    // anything runs; each candidate is admitted again when it runs.
    for v in &plan.variants {
        let sc = candidate_scenario(&v.doc, &[], plan.seeds[0])?;
        guard::admit(&sc, &req.file, req.options)?;
    }
    let folder = match &req.out {
        Some(dir) => {
            let mut plan_out = OutputPlan::new(plan.subject.inputs());
            if let Some(f) = &req.faults {
                plan_out.add_inputs([f.as_path()]);
            }
            Some(plan_out.folder("--out", dir, &export::TUNE)?)
        }
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
            &format!("tune {}", plan.scenario),
            &plan.inputs_sha256,
            "1/1",
        ),
        "scenario (or a file it reads, like a trace), fault set, target, key range or seeds",
    )?;
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
    let mut notes: Vec<String> = report
        .warnings
        .iter()
        .map(|w| format!("warning: {w}"))
        .collect();
    if let Some(folder) = &folder {
        folder.write("tune.md", report.markdown(&plan).as_bytes())?;
        folder.write(
            "tune.json",
            (serde_json::to_string_pretty(&report).expect("reports serialize") + "\n").as_bytes(),
        )?;
        folder.write("candidates.csv", &candidates_csv(&plan, &tuned))?;
        folder.write("pareto.svg", pareto_svg(&plan, &tuned)?.as_bytes())?;
        notes.push(format!(
            "wrote tune.md, tune.json, candidates.csv, pareto.svg and {} in {}",
            journal::FILE,
            folder.dir().display()
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
fn cell_key(sets: &[String], variant: &str, seed: u64) -> String {
    format!("{} | {variant} | seed {seed}", sets.join(" "))
}

pub(crate) fn candidate_scenario(
    doc: &Document,
    sets: &[String],
    seed: u64,
) -> Result<Scenario, ConfigError> {
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
    let measured = &per_variant[plan.objective_variant];
    let per_seed: Option<Vec<f64>> = measured
        .iter()
        .map(|r| metric(r, &plan.objective))
        .collect();
    let objective = per_seed
        .as_ref()
        .map(|v| v.iter().sum::<f64>() / v.len() as f64);
    let faulted = &per_variant[1..];
    let failing = faulted
        .iter()
        .zip(&plan.variants[1..])
        .map(|(runs, variant)| {
            plan.requirements
                .iter()
                .map(|r| {
                    if !r.applies_to(&variant.name) {
                        return 0;
                    }
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
        per_seed: per_seed.unwrap_or_default(),
        failing,
        recovery,
    }
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
    // The fault set replaces the scenario's own faults: they are neither validated nor run.
    // Healthy load is the scenario without them.
    let mut healthy = subject.doc.clone();
    if let Some(m) = healthy.value.as_mapping_mut() {
        m.insert(
            Value::String("faults".into()),
            Value::Mapping(Default::default()),
        );
    }
    let base = Scenario::from_document(&healthy)?;
    let target = match &req.target {
        Some(t) => t.clone(),
        None => first_fault_service(&subject.doc)
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
    let mut problems = Vec::new();
    let mut variants = vec![Variant {
        name: HEALTHY.into(),
        doc: healthy,
        reproduce: vec!["faults={}".into()],
    }];
    for (i, (name, _)) in fault_set.faults.iter().enumerate() {
        if name == HEALTHY {
            problems.push(fault_set.doc.diagnostic(
                &format!("faults.{name}"),
                "`healthy` names the runs with no fault in tune's reports and journal; give this fault another name",
            ));
            continue;
        }
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
    // A scope names a fault of the set (or, for the objective, `healthy`).
    let fault_names: Vec<&str> = variants[1..].iter().map(|v| v.name.as_str()).collect();
    let scope_of = |flag: &str, scope: &str, healthy_too: bool| -> Result<usize, ConfigError> {
        if healthy_too && scope == HEALTHY {
            return Ok(0);
        }
        match fault_names.iter().position(|n| *n == scope) {
            Some(i) => Ok(i + 1),
            None => {
                let mut names = fault_names.clone();
                if healthy_too {
                    names.insert(0, HEALTHY);
                }
                Err(ConfigError::flag(
                    flag,
                    format!(
                        "`{scope}` is not a fault of {faults_name} (it has {}){}",
                        names.join(", "),
                        did_you_mean(scope, names.iter().copied())
                    ),
                ))
            }
        }
    };
    let objective_text = req
        .objective
        .clone()
        .unwrap_or_else(|| DEFAULT_OBJECTIVE.to_owned());
    let (scope, objective) =
        split_scope(&objective_text).map_err(|m| ConfigError::flag("--objective", m))?;
    let objective_variant = match scope {
        Some(f) => scope_of("--objective", f, true)?,
        None => 0,
    };
    let objective = objective.to_owned();
    known("--objective", &objective)?;
    let texts: Vec<String> = if req.require.is_empty() {
        DEFAULT_REQUIREMENTS.iter().map(|s| s.to_string()).collect()
    } else {
        req.require.clone()
    };
    let mut requirements = Vec::new();
    for t in &texts {
        let r = Requirement::parse(t).map_err(|m| ConfigError::flag("--require", m))?;
        if let Some(f) = &r.fault {
            scope_of("--require", f, false)?;
        }
        known("--require", &r.metric)?;
        requirements.push(r);
    }
    if !(req.tie_tolerance.is_finite() && (0.0..1.0).contains(&req.tie_tolerance)) {
        return Err(ConfigError::flag(
            "--tie-tolerance",
            "must be a share in [0, 1), like 0.01 (1 %); 0 leaves only the seeds' noise",
        )
        .into());
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
    let inputs_sha256 = crate::util::sha256(
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
        objective_variant,
        search: Search {
            steps: req.steps,
            rounds: req.rounds,
            seeds: req.seeds.len(),
            needed,
            tolerance: req.tie_tolerance,
        },
        seeds: req.seeds.clone(),
        inputs_sha256,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_a_count_a_range_or_a_list() {
        assert_eq!(parse_tune_seeds("3").unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_tune_seeds("5..7").unwrap(), vec![5, 6, 7]);
        assert_eq!(parse_tune_seeds("4,9").unwrap(), vec![4, 9]);
        assert!(parse_tune_seeds("0").is_err());
        assert!(parse_tune_seeds("x").is_err());
    }
}
