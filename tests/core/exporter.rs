//! The exporter's promises, from the outside: after each command that writes a folder (sweep,
//! merge, boundary, tune, man, run --plot) the folder holds only names its table in
//! `loadsim::runner::export` declares; a refused output leaves the folder as it was; each
//! command's `--help` names only declared files, and all of them where it lists them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use loadsim::runner::export::{self, FolderTable};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn loadsim() -> Command {
    let mut c = Command::cargo_bin("loadsim").unwrap();
    c.current_dir(repo());
    c
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file under `dir` (relative path → bytes), to see a folder did not change.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                all.insert(p.strip_prefix(dir).unwrap().to_owned(), Vec::new());
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                all.insert(p.strip_prefix(dir).unwrap().to_owned(), bytes);
            }
        }
    }
    all
}

/// Asserts `dir` holds only names `table` declares (and no leftover lock or temporary file),
/// and every name in `must`.
fn assert_declared(dir: &Path, table: &FolderTable, must: &[&str]) {
    let names = listing(dir);
    for n in &names {
        assert!(
            table.declares(n) && n != export::LOCK_FILE && !n.contains(".tmp-"),
            "`{n}` in {} is not declared by `{} {}`: {names:?}",
            dir.display(),
            table.command,
            table.flag
        );
    }
    for m in must {
        assert!(names.iter().any(|n| n == m), "no {m} in {names:?}");
    }
}

/// An overloaded single server (tests/core/tune.rs): a scenario of one file.
const CAP: &str = "duration: 23s\ndrain: 10s\nseed: 1\narrivals: { rate: 200 }\nclient: { entry: svc, attempt_timeout: 10s, retries: 0 }\nservices:\n  svc:\n    slots: 1\n    queue_cap: 4\n    reject_delay: 1ms\n    service_time: { dist: constant, value: 10ms }\n";

/// The small sweep of tests/sweep.rs: 2 scenarios × 2 seeds × 2 windows of 8 s.
fn small_sweep(dir: &Path) -> PathBuf {
    let s = repo().join("scenarios");
    let text = format!(
        "name: small\nscenarios:\n  - {s}/naive.yaml\n  - {s}/protected.yaml\ngrid:\n  duration: [8s]\n  seed: [1, 2]\n  faults.slow_b.duration: [1s, 2s]\n  faults.slow_b.from: [1s]\nreport:\n  sensitivity:\n    - axis: faults.slow_b.duration\n      metric: metrics.success_rate_after\n",
        s = s.display()
    );
    let path = dir.join("small.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn sweep_and_merge_write_only_their_declared_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_sweep(dir.path());
    let out = dir.path().join("out");
    loadsim()
        .arg("sweep")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .assert()
        .success();
    let fixed: Vec<&str> = export::SWEEP.fixed_names().collect();
    assert_declared(&out, &export::SWEEP, &fixed);
    assert!(
        listing(&out).iter().any(|n| n.ends_with(".svg")),
        "a figure: {:?}",
        listing(&out)
    );
    let merged = dir.path().join("merged");
    loadsim()
        .arg("merge")
        .arg(&out)
        .arg("--out")
        .arg(&merged)
        .arg("--quiet")
        .assert()
        .success();
    let fixed: Vec<&str> = export::SWEEP.fixed_names().collect();
    assert_declared(&merged, &export::SWEEP, &fixed);
}

#[test]
fn a_refused_sweep_folder_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_sweep(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join(export::RESULTS_MD), "# my notes\n").unwrap();
    let before = contents(&out);
    let assert = loadsim()
        .arg("sweep")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("is not a sweep's folder"), "{err}");
    assert_eq!(contents(&out), before, "the folder is unchanged");
}

#[test]
fn a_refused_run_output_creates_no_folder() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("s.yaml");
    std::fs::write(&sc, CAP).unwrap();
    let before = contents(dir.path());
    let assert = loadsim()
        .arg("run")
        .arg(&sc)
        .arg("--output")
        .arg(&sc)
        .arg("--plot")
        .arg(dir.path().join("plots"))
        .arg("--quiet")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(err.contains("an input of this command"), "{err}");
    assert_eq!(
        contents(dir.path()),
        before,
        "no folder, the input untouched"
    );
}

#[test]
fn run_plot_writes_only_its_declared_figures() {
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("plots");
    // A scenario with a concurrency limiter: the fourth figure is drawn too.
    loadsim()
        .args(["run", "scenarios/admission/svc_a_gradient2.yaml", "--quiet"])
        .arg("--plot")
        .arg(&plots)
        .assert()
        .success();
    let all: Vec<&str> = export::RUN_PLOT.files.iter().map(|d| d.name).collect();
    assert_declared(&plots, &export::RUN_PLOT, &all);
}

#[test]
fn boundary_writes_only_its_declared_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    loadsim()
        .args(["boundary", "scenarios/naive.yaml"])
        .args(["--vary", "faults.slow_b.duration", "--range", "0s..20s"])
        .args([
            "--steps",
            "3",
            "--tolerance",
            "10s",
            "--seeds",
            "7",
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert_declared(
        &out,
        &export::BOUNDARY,
        &[
            "naive.faults.slow_b.duration.probes.csv",
            "naive.faults.slow_b.duration.boundary.csv",
        ],
    );
    let phase = dir.path().join("phase");
    loadsim()
        .args(["boundary", "scenarios/naive.yaml"])
        .args(["--vary", "faults.slow_b.duration", "--range", "0s..10s"])
        .args(["--vary", "arrivals.rate", "--range", "100..200"])
        .args(["--steps", "2", "--seeds", "7", "--quiet"])
        .arg("--out")
        .arg(&phase)
        .assert()
        .success();
    assert_declared(
        &phase,
        &export::BOUNDARY,
        &[
            "naive.faults.slow_b.duration.arrivals.rate.phase.csv",
            "naive.faults.slow_b.duration.arrivals.rate.phase.svg",
        ],
    );
}

#[test]
fn tune_writes_only_its_declared_files() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("cap.yaml");
    std::fs::write(&sc, CAP).unwrap();
    let faults = dir.path().join("faults.yaml");
    std::fs::write(
        &faults,
        "faults:\n  slow: { kind: slow, slowdown: 10, from: 1s, duration: 2s }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    loadsim()
        .arg("tune")
        .arg(&sc)
        .arg("--faults")
        .arg(&faults)
        .args(["--target", "svc"])
        .args(["--vary", "services.svc.queue_cap=1..40"])
        .args(["--objective", "services.svc.rejected_full"])
        .args(["--require", "services.svc.max_queue <= 12"])
        .args(["--seeds", "1", "--quiet"])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let all: Vec<&str> = export::TUNE.files.iter().map(|d| d.name).collect();
    assert_declared(&out, &export::TUNE, &all);
}

#[test]
fn man_writes_only_its_declared_pages() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man");
    loadsim()
        .arg("man")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert_declared(&out, &export::MAN, &["loadsim.1", "loadsim-sweep.1"]);
}

/// The file names a help text mentions (`results.md`, `loadsim-<command>.1`), not paths.
fn named_files(help: &str) -> Vec<String> {
    help.split(|c: char| c.is_whitespace() || ",()`'\"[]:;".contains(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| {
            !w.contains(['/', '=']) && w.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        })
        .filter(|w| {
            [".csv", ".md", ".json", ".jsonl", ".svg", ".html", ".1"]
                .iter()
                .any(|ext| w.ends_with(ext) && w.len() > ext.len())
        })
        .map(str::to_owned)
        .collect()
}

fn help(command: &str) -> String {
    let out = loadsim().args([command, "--help"]).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn each_commands_help_names_only_declared_files_and_all_where_it_lists_them() {
    // Where the help lists every file of the folder (`complete`), each fixed name must be there.
    let cases: [(&str, &FolderTable, bool); 6] = [
        ("sweep", &export::SWEEP, false),
        ("merge", &export::SWEEP, false),
        ("tune", &export::TUNE, true),
        ("calibrate", &export::CALIBRATE, true),
        ("boundary", &export::BOUNDARY, false),
        ("man", &export::MAN, true),
    ];
    for (command, table, complete) in cases {
        let text = help(command);
        for name in named_files(&text) {
            assert!(
                table.declares(&name.replace("<command>", "x")),
                "`loadsim {command} --help` names {name}, which `{} {}` does not declare",
                table.command,
                table.flag
            );
        }
        if complete {
            for d in table.files.iter().filter(|d| !d.name.contains('*')) {
                let shown = if d.name == export::JOURNAL {
                    text.contains("journal")
                } else {
                    text.contains(d.name)
                };
                assert!(shown, "`loadsim {command} --help` does not name {}", d.name);
            }
        }
    }
    // run's help lists every figure of --plot.
    let text = help("run");
    for d in export::RUN_PLOT.files {
        assert!(
            text.contains(d.name),
            "`loadsim run --help` does not name {}",
            d.name
        );
    }
}

#[test]
fn every_file_flag_is_an_option_of_its_command() {
    for f in export::FILE_FLAGS {
        if !f.flag.starts_with("--") {
            continue;
        }
        let text = help(f.command);
        assert!(
            text.contains(f.flag),
            "`loadsim {} --help` has no {}",
            f.command,
            f.flag
        );
    }
}
