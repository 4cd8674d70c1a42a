//! `loadsim test`: the regression check of users' own scenarios. Finds scenario files with
//! `expect:` or `snapshot:` (files named, or `*.yaml` under folders), checks all of them before
//! running anything, runs every (scenario, seed) they need once — in parallel, results in order —
//! then judges each assertion and compares each snapshot, and writes the result as text, JSON and
//! JUnit XML. Snapshot rules follow insta's: a missing snapshot is written as `.snap.new` and
//! fails only on CI (`CI` set); a changed one fails and leaves its `.snap.new`; `--accept` writes
//! `.snap` instead; [`review`] walks the pending ones interactively.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use rayon::prelude::*;

use crate::Error;
use crate::config::read::read_text;
use crate::expect::report::{CaseKind, CaseReport, FileReport, MeanReport, SeedValue, TestReport};
use crate::expect::snapshot::{self, Snapshot};
use crate::expect::{self, Expectations};
use crate::guard;
use crate::metrics::RunSummary;
use crate::model::{RunError, RunOptions, run_with};
use crate::report::flat::{EngineColumns, flatten};
use crate::runner::{OutputPlan, Progress, Target};
use crate::scenario::{ConfigError, Scenario};

/// Arguments of `loadsim test`, independent of clap.
#[derive(Clone, Debug)]
pub struct TestRequest {
    /// Files or folders; folders are searched for `*.yaml` with `expect:` or `snapshot:`.
    pub paths: Vec<PathBuf>,
    /// Write new and changed snapshots as `.snap` (accepting them) instead of `.snap.new`.
    pub accept: bool,
    /// Running on CI (insta's rule: `CI` is set): a missing snapshot fails.
    pub ci: bool,
    /// `--junit FILE`: also write the result as JUnit XML.
    pub junit: Option<PathBuf>,
    /// `--max-events` and `--max-memory`: the limits every run is admitted under.
    pub options: RunOptions,
    /// `--quiet`: no progress bar.
    pub quiet: bool,
}

/// Whether the environment says this is CI: `CI` set to anything but empty, `0` or `false`.
pub fn ci_from_env() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// A snapshot written as `.snap.new` by this run, for [`review`].
#[derive(Clone, Debug)]
pub struct Pending {
    /// The scenario file, as reported.
    pub file: String,
    /// The accepted snapshot (`.snap`), which accepting replaces.
    pub snap: PathBuf,
    /// The snapshot this run wrote (`.snap.new`).
    pub new: PathBuf,
    /// What changed (`metric: old → new`) and notes; empty for a first snapshot.
    pub details: Vec<String>,
    /// Whether its test case failed (accepting it in review turns the failure into a pass).
    pub case_failed: bool,
}

/// The outcome of `loadsim test`.
#[derive(Clone, Debug)]
pub struct TestRun {
    /// Every case's result, for the text, JSON or JUnit report.
    pub report: TestReport,
    /// The snapshots written as `.snap.new`, for `--review`; empty with `--accept`.
    pub pending: Vec<Pending>,
}

/// A scenario file to test, checked.
struct TestFile {
    path: PathBuf,
    shown: String,
    scenario: Scenario,
    expectations: Expectations,
    /// The committed snapshot when the file wants one and it exists (and is readable).
    old: Option<Snapshot>,
    /// Every file the test reads: the scenario, its `extends` chain, imports and traces, its
    /// baselines' files, its `.snap`.
    inputs: Vec<PathBuf>,
    /// The files its snapshot may write: `.snap.new`, and `.snap` with `--accept`.
    writes: Vec<PathBuf>,
}

/// Runs the tests of `req`. Bad input (a file, a key, a snapshot) is an error before anything
/// runs; failed cases are in the report, not an error.
pub fn test(req: &TestRequest) -> Result<TestRun, Error> {
    let files = discover(&req.paths)?;
    let loaded: Vec<Result<TestFile, ConfigError>> = files
        .par_iter()
        .map(|(path, named)| load(path, *named, req))
        .filter_map(|r| r.transpose())
        .collect();
    let mut tests = Vec::new();
    let mut problems = Vec::new();
    for r in loaded {
        match r {
            Ok(t) => tests.push(t),
            Err(e) => problems.extend(e.diagnostics),
        }
    }
    if !problems.is_empty() {
        return Err(ConfigError {
            diagnostics: problems,
        }
        .into());
    }
    if tests.is_empty() {
        let shown: Vec<String> = req.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(ConfigError::file(
            shown.join(" "),
            "has no scenario file with `expect:` or `snapshot: true`; add one (see docs/cookbook.md, \"Guard your scenarios in CI\")",
        )
        .into());
    }
    // Checked once every input is known, as `run --output` is: the JUnit file is none of them.
    let junit = match &req.junit {
        Some(path) => {
            let mut plan = OutputPlan::new(tests.iter().flat_map(|t| t.inputs.iter()));
            for t in &tests {
                for w in &t.writes {
                    plan.written_elsewhere(&format!("the snapshot of {}", t.shown), w);
                }
            }
            Some(plan.file("--junit", path)?)
        }
        None => None,
    };

    let jobs = Jobs::plan(&tests);
    let progress = Progress::new(Some(jobs.scenarios.len() as u64), "runs", req.quiet);
    let results: Vec<Result<Ran, RunError>> = jobs
        .scenarios
        .par_iter()
        .map(|sc| {
            let ran = run_with(sc, guard::limits_for(sc, req.options)).map(|summary| {
                let values = flatten(&summary, EngineColumns::Exclude)
                    .into_iter()
                    .map(|(k, v)| (k, v.as_f64()))
                    .collect();
                Ran { summary, values }
            });
            progress.inc();
            ran
        })
        .collect();
    drop(progress);

    let mut report = TestReport::default();
    let mut pending = Vec::new();
    for t in &tests {
        let mut cases = Vec::new();
        let mut read = std::collections::BTreeSet::new();
        for a in &t.expectations.assertions {
            let runs = jobs.runs_of(t, a);
            let mut case = judge(t, a, &jobs, &results);
            case.wall_s = wall_s(&results, &runs);
            read.extend(runs);
            cases.push(case);
        }
        if let Some(settings) = t.expectations.snapshot {
            let i = jobs.index(&t.path, t.scenario.seed);
            let mut case = compare_snapshot(t, settings, &results[i], req, &mut pending)?;
            case.wall_s = wall_s(&results, &[i]);
            read.insert(i);
            cases.push(case);
        }
        let read: Vec<usize> = read.into_iter().collect();
        report.push(FileReport {
            file: t.shown.clone(),
            scenario: t.scenario.name.clone(),
            cases,
            wall_s: wall_s(&results, &read),
        });
    }
    if let Some(target) = &junit {
        target.write(expect::junit::render(&report).as_bytes())?;
    }
    Ok(TestRun { report, pending })
}

/// The scenario files to test: each named file (which must have `expect:` or `snapshot:`), and
/// every `*.yaml` under each named folder that has one of them as a top-level line (hidden
/// folders and `target/` skipped). Sorted within a folder; each file once.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<(PathBuf, bool)>, ConfigError> {
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| ConfigError::file(p, format!("cannot read it: {e}")))?;
        let found = if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.into_iter().map(|f| (f, false)).collect()
        } else {
            vec![(p.clone(), true)]
        };
        for (f, named) in found {
            let key = f.canonicalize().unwrap_or_else(|_| f.clone());
            if seen.insert(key) {
                out.push((f, named));
            }
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ConfigError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| ConfigError::file(dir, format!("cannot list the folder: {e}")))?;
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `symlink_metadata`: a link to a parent folder must not loop.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if !name.starts_with('.') && name != "target" {
                walk(&path, out)?;
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            let text = read_text(&path)?;
            if expect::mentions_test_keys(&text) {
                out.push(path);
            }
        }
    }
    Ok(())
}

/// Loads a file to test; `Ok(None)` for a file found in a folder that turns out to have nothing
/// to test.
fn load(path: &Path, named: bool, req: &TestRequest) -> Result<Option<TestFile>, ConfigError> {
    let doc = crate::import::load_all(path)?;
    let scenario = Scenario::from_document(&doc)?;
    guard::admit(&scenario, path, req.options)?;
    let limits = req.options;
    let baselines = std::cell::RefCell::new(Vec::new());
    let load_baseline = |p: &Path| -> Result<Scenario, ConfigError> {
        let base = crate::import::load(p)?;
        let sc = Scenario::from_document(&base)?;
        baselines.borrow_mut().extend(base.input_paths());
        guard::admit(&sc, p, limits)?;
        Ok(sc)
    };
    let Some(expectations) = expect::read(&doc, &scenario, &load_baseline)? else {
        if named {
            return Err(ConfigError::file(
                path,
                "has no `expect:` and no `snapshot: true`, so `loadsim test` has nothing to check in it",
            ));
        }
        return Ok(None);
    };
    let old = match expectations.snapshot {
        None => None,
        Some(_) => {
            let snap = snapshot::path_for(path);
            if snap.exists() {
                let text = read_text(&snap)?;
                match Snapshot::parse(&snap, &text, &scenario.name) {
                    Ok(s) => Some(s),
                    // `--accept` writes it again from the run.
                    Err(_) if req.accept => None,
                    Err(e) => return Err(e),
                }
            } else {
                None
            }
        }
    };
    let mut inputs = doc.input_paths();
    inputs.extend(baselines.into_inner());
    let mut writes = Vec::new();
    if expectations.snapshot.is_some() {
        let snap = snapshot::path_for(path);
        writes.push(snapshot::pending_path(&snap));
        writes.push(snap.clone());
        inputs.push(snap);
    }
    Ok(Some(TestFile {
        path: path.to_owned(),
        shown: path.display().to_string(),
        scenario,
        expectations,
        old,
        inputs,
        writes,
    }))
}

/// A finished run and its metrics by dotted name.
struct Ran {
    summary: RunSummary,
    values: IndexMap<String, Option<f64>>,
}

/// Every distinct (scenario file, seed) the tests need, each run once.
struct Jobs {
    scenarios: Vec<Scenario>,
    by_key: HashMap<(PathBuf, u64), usize>,
}

impl Jobs {
    fn plan(tests: &[TestFile]) -> Jobs {
        let mut jobs = Jobs {
            scenarios: Vec::new(),
            by_key: HashMap::new(),
        };
        for t in tests {
            let mut seeds = vec![t.scenario.seed];
            for a in &t.expectations.assertions {
                let list = a.seeds.clone().unwrap_or_else(|| vec![t.scenario.seed]);
                for &s in &list {
                    if let Some(b) = &a.baseline {
                        jobs.add(&b.path, &b.scenario, s);
                    }
                }
                seeds.extend(list);
            }
            for s in seeds {
                jobs.add(&t.path, &t.scenario, s);
            }
        }
        jobs
    }

    fn key(path: &Path, seed: u64) -> (PathBuf, u64) {
        (
            path.canonicalize().unwrap_or_else(|_| path.to_owned()),
            seed,
        )
    }

    fn add(&mut self, path: &Path, sc: &Scenario, seed: u64) {
        let key = Self::key(path, seed);
        if !self.by_key.contains_key(&key) {
            let mut sc = sc.clone();
            sc.seed = seed;
            self.by_key.insert(key, self.scenarios.len());
            self.scenarios.push(sc);
        }
    }

    fn index(&self, path: &Path, seed: u64) -> usize {
        self.by_key[&Self::key(path, seed)]
    }

    /// The runs assertion `a` of `t` reads: its scenario and its baseline at each of its seeds.
    fn runs_of(&self, t: &TestFile, a: &expect::Assertion) -> Vec<usize> {
        let seeds = a.seeds.clone().unwrap_or_else(|| vec![t.scenario.seed]);
        let mut runs = Vec::new();
        for s in seeds {
            runs.push(self.index(&t.path, s));
            if let Some(b) = &a.baseline {
                runs.push(self.index(&b.path, s));
            }
        }
        runs
    }
}

/// Wall-clock seconds of the runs `runs` (a run that stopped counts nothing).
fn wall_s(results: &[Result<Ran, RunError>], runs: &[usize]) -> f64 {
    runs.iter()
        .filter_map(|&i| results[i].as_ref().ok())
        .map(|r| r.summary.engine.wall_s)
        .sum()
}

/// Judges one assertion from the runs.
fn judge(
    t: &TestFile,
    a: &expect::Assertion,
    jobs: &Jobs,
    results: &[Result<Ran, RunError>],
) -> CaseReport {
    let seeds = a.seeds.clone().unwrap_or_else(|| vec![t.scenario.seed]);
    let mut values = Vec::new();
    for &s in &seeds {
        let own = &results[jobs.index(&t.path, s)];
        let base = a
            .baseline
            .as_ref()
            .map(|b| &results[jobs.index(&b.path, s)]);
        let value = |r: &Result<Ran, RunError>| -> Result<Option<f64>, String> {
            match r {
                Ok(ran) => Ok(ran.values.get(&a.metric).copied().flatten()),
                Err(e) => Err(e.to_string()),
            }
        };
        let v = match (value(own), base.map(value)) {
            (Err(e), _) | (_, Some(Err(e))) => {
                return CaseReport {
                    kind: CaseKind::Assertion,
                    name: a.name(),
                    passed: false,
                    message: format!("the run on seed {s} stopped: {e}"),
                    details: Vec::new(),
                    values: None,
                    mean: None,
                    snapshot: None,
                    pending: None,
                    wall_s: 0.0,
                };
            }
            (Ok(v), None) => v,
            (Ok(v), Some(Ok(b))) => v.zip(b).map(|(v, b)| v - b),
        };
        values.push((s, v));
    }
    let verdict = a.judge(values);
    CaseReport {
        kind: CaseKind::Assertion,
        name: a.name(),
        passed: verdict.passed,
        message: verdict.observed,
        details: Vec::new(),
        values: Some(
            verdict
                .values
                .iter()
                .map(|&(seed, value)| SeedValue { seed, value })
                .collect(),
        ),
        mean: verdict.mean.map(|m| MeanReport {
            n: m.n,
            mean: m.mean,
            ci95: m.bounds().map(|(lo, hi)| [lo, hi]),
        }),
        snapshot: None,
        pending: None,
        wall_s: 0.0,
    }
}

/// Compares the run at the scenario's own seed with its snapshot, and writes `.snap` or
/// `.snap.new` as the rules say.
fn compare_snapshot(
    t: &TestFile,
    settings: snapshot::Settings,
    own: &Result<Ran, RunError>,
    req: &TestRequest,
    pending: &mut Vec<Pending>,
) -> Result<CaseReport, Error> {
    let snap = snapshot::path_for(&t.path);
    let new_path = snapshot::pending_path(&snap);
    let mut case = CaseReport {
        kind: CaseKind::Snapshot,
        name: "snapshot".into(),
        passed: false,
        message: String::new(),
        details: Vec::new(),
        values: None,
        mean: None,
        snapshot: Some(snap.display().to_string()),
        pending: None,
        wall_s: 0.0,
    };
    let ran = match own {
        Ok(r) => r,
        Err(e) => {
            case.message = format!("the run stopped: {e}");
            return Ok(case);
        }
    };
    let source = t
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let new = Snapshot::of_run(&ran.summary, &source, settings.digits);
    let write = |path: &Path, snap: &Snapshot| -> Result<(), Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::Output {
                what: path.display().to_string(),
                source,
            })?;
        }
        Target::unplanned(path).write(snap.to_text().as_bytes())
    };
    let remove_stale = || {
        let _ = std::fs::remove_file(&new_path);
    };
    match &t.old {
        Some(old) => {
            let changes = new.changes_from(old);
            if changes.is_empty() {
                remove_stale();
                case.passed = true;
                case.message = format!("matches {}", snap.display());
                return Ok(case);
            }
            case.details = changes.iter().map(|c| c.to_string()).collect();
            case.details.extend(new.header_notes(old));
            let n = changes.len();
            let what = if n == 1 {
                "1 metric changed".to_owned()
            } else {
                format!("{n} metrics changed")
            };
            if req.accept {
                write(&snap, &new)?;
                remove_stale();
                case.passed = true;
                case.message = format!("{what}; accepted into {}", snap.display());
            } else {
                write(&new_path, &new)?;
                case.message = format!(
                    "{what}; the new snapshot is {} (accept it with `loadsim test --accept` or `--review`)",
                    new_path.display()
                );
                case.pending = Some(new_path.display().to_string());
                pending.push(Pending {
                    file: t.shown.clone(),
                    snap: snap.clone(),
                    new: new_path.clone(),
                    details: case.details.clone(),
                    case_failed: true,
                });
            }
        }
        None if req.accept => {
            write(&snap, &new)?;
            remove_stale();
            case.passed = true;
            case.message = format!("new snapshot written to {}", snap.display());
        }
        None => {
            write(&new_path, &new)?;
            case.pending = Some(new_path.display().to_string());
            pending.push(Pending {
                file: t.shown.clone(),
                snap: snap.clone(),
                new: new_path.clone(),
                details: Vec::new(),
                case_failed: req.ci,
            });
            if req.ci {
                case.message = format!(
                    "no snapshot {} on CI; the run's snapshot is {}: review it, accept it (`loadsim test --accept`) and commit it",
                    snap.display(),
                    new_path.display()
                );
            } else {
                case.passed = true;
                case.message = format!(
                    "no snapshot yet; wrote {} (accept it with `loadsim test --accept`, then commit it; on CI a missing snapshot fails)",
                    new_path.display()
                );
            }
        }
    }
    Ok(case)
}

/// What [`review`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reviewed {
    /// Snapshots accepted (`.snap.new` became `.snap`).
    pub accepted: usize,
    /// Accepted snapshots whose test case had failed.
    pub accepted_failures: usize,
    /// Snapshots rejected (`.snap.new` deleted).
    pub rejected: usize,
    /// Snapshots skipped (`.snap.new` kept for later).
    pub skipped: usize,
}

/// Walks the pending snapshots: shows each change and asks to accept (`a`: `.snap.new` becomes
/// `.snap`), reject (`r`: `.snap.new` is deleted) or skip (`s`, or end of input: kept for later).
pub fn review(
    pending: &[Pending],
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> std::io::Result<Reviewed> {
    let mut done = Reviewed::default();
    for (i, p) in pending.iter().enumerate() {
        writeln!(
            output,
            "\n[{}/{}] {} → {}",
            i + 1,
            pending.len(),
            p.file,
            p.snap.display()
        )?;
        if p.details.is_empty() {
            writeln!(output, "  a new snapshot (none was committed)")?;
        }
        for d in &p.details {
            writeln!(output, "  {d}")?;
        }
        loop {
            write!(output, "accept (a), reject (r) or skip (s)? ")?;
            output.flush()?;
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                done.skipped += pending.len() - i;
                return Ok(done);
            }
            match line.trim() {
                "a" | "accept" => {
                    std::fs::rename(&p.new, &p.snap)?;
                    done.accepted += 1;
                    done.accepted_failures += usize::from(p.case_failed);
                }
                "r" | "reject" => {
                    std::fs::remove_file(&p.new)?;
                    done.rejected += 1;
                }
                "s" | "skip" | "" => done.skipped += 1,
                _ => continue,
            }
            break;
        }
    }
    Ok(done)
}
