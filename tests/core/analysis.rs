//! `loadsim check` as a linter and `loadsim boundary`: the bisection on a scenario whose boundary
//! is worked out by hand, the CLI's outputs and exit codes, and thread-count independence.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use loadsim::analysis::boundary::{Found, SearchAxis, search};
use loadsim::model::run;
use loadsim::scenario::{Document, Scenario};

use super::common::scenario_path;

/// One slot, constant 10 ms work (100/s), constant arrivals every 10 ms (exactly the capacity),
/// a client that waits 995 ms, no retries. From 1 s the work takes 20 ms for the window's length.
///
/// By hand: the arrival at 1 s finds the slot free (the previous job ends at that instant, and
/// its end was scheduled first) and is the first job started in the window. Jobs then start
/// every 20 ms while the window lasts: n = ⌈W / 20 ms⌉ of them, the last ending at 1 s + n·20 ms.
/// By then arrivals 0 … 100 + 2n have come and jobs 0 … 100 + n − 1 have started, so job
/// 100 + n + m starts at 1 s + n·20 ms + m·10 ms and arrived at 1 s + (n + m)·10 ms: after the
/// window every request waits exactly n·10 ms, for ever (arrivals match the capacity, so the
/// backlog of n never drains). It succeeds iff n·10 ms + 10 ms < 995 ms, i.e. n ≤ 98. So a run
/// recovers iff ⌈W / 20 ms⌉ ≤ 98 ⇔ W ≤ 1.96 s: the boundary is 1.96 s, exactly.
const KNEE: &str = "\
duration: 10s
drain: 5s
arrivals: { rate: 100, process: constant }
client: { entry: s, attempt_timeout: 995ms }
services:
  s:
    slots: 1
    service_time: { dist: constant, value: 10ms }
faults:
  slow:
    kind: slow
    service: s
    from: 1s
    duration: 1s
    service_time: { dist: constant, value: 20ms }
";

fn knee_with(set: &str) -> Scenario {
    let mut doc = Document::from_text(Path::new("knee.yaml"), KNEE).unwrap();
    doc.apply_set(set).unwrap();
    Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{e}"))
}

fn knee_file(dir: &Path) -> PathBuf {
    let f = dir.join("knee.yaml");
    std::fs::write(&f, KNEE).unwrap();
    f
}

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

#[test]
fn the_knee_recovers_at_1_96s_and_not_a_nanosecond_later() {
    let at = |w: &str| run(&knee_with(&format!("faults.slow.duration={w}"))).unwrap();
    let r = at("1960ms");
    assert!(r.metrics.recovery_s.is_some());
    assert_eq!(r.services["s"].counts.max_queue, 98);
    let r = at("1960000001ns");
    assert_eq!(r.metrics.recovery_s, None);
    assert_eq!(r.services["s"].counts.max_queue, 99);
}

#[test]
fn bisection_finds_the_knee_within_the_tolerance() {
    let axis = SearchAxis::parse("faults.slow.duration", "0s..5s").unwrap();
    let probe = |w: f64| {
        let summary = run(&knee_with(&axis.set_arg(w)))?;
        Ok::<_, loadsim::model::RunError>(summary.metrics.recovery_s)
    };
    let s = search(&axis, 1, 11, 0.001, &probe).unwrap();
    let Found::Between { recovers, never } = s.found else {
        panic!("{:?}", s.found)
    };
    assert!(recovers <= 1.96 && 1.96 < never, "({recovers}, {never}]");
    assert!(never - recovers <= 0.001);
    assert!(s.monotone());
}

#[test]
fn boundary_cli_prints_the_interval_and_writes_csv() {
    let dir = tempfile::tempdir().unwrap();
    let f = knee_file(dir.path());
    let out_dir = dir.path().join("out");
    let out = loadsim()
        .arg("boundary")
        .arg(&f)
        .args(["--vary", "faults.slow.duration", "--range", "0s..5s"])
        .args([
            "--tolerance",
            "1ms",
            "--seeds",
            "1,2",
            "--criterion",
            "recovers",
        ])
        .arg("--out")
        .arg(&out_dir)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("(1.96s, 1.961s]"), "{text}");
    assert!(text.contains("seeds agree"), "{text}");
    let probes =
        std::fs::read_to_string(out_dir.join("knee.faults.slow.duration.probes.csv")).unwrap();
    assert!(probes.starts_with("scenario,seed,key,phase,value,recovers,recovery_s\n"));
    assert_eq!(probes.lines().count(), 1 + 2 * (11 + 9));
    let bounds =
        std::fs::read_to_string(out_dir.join("knee.faults.slow.duration.boundary.csv")).unwrap();
    assert_eq!(bounds.lines().count(), 3, "{bounds}");
}

#[test]
fn phase_diagram_is_the_same_on_one_thread_and_many() {
    let dir = tempfile::tempdir().unwrap();
    let f = knee_file(dir.path());
    let args = |c: &mut Command| {
        c.arg("boundary")
            .arg(&f)
            .args(["--vary", "faults.slow.duration", "--range", "0s..4s"])
            .args(["--vary", "arrivals.rate", "--range", "90..110"])
            .args(["--steps", "5", "--seeds", "1,2"]);
    };
    let mut one = loadsim();
    args(&mut one);
    one.env("RAYON_NUM_THREADS", "1");
    let mut many = loadsim();
    args(&mut many);
    many.env("RAYON_NUM_THREADS", "4");
    let a = one.assert().success().get_output().stdout.clone();
    let b = many.assert().success().get_output().stdout.clone();
    assert_eq!(a, b);
    let text = String::from_utf8(a).unwrap();
    // At 100/s: 0 s and 1 s recover, 2 s and more do not (the knee is at 1.96 s).
    let row = text
        .lines()
        .find(|l| l.split('|').nth(1).map(str::trim) == Some("100"))
        .unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(&cells[2..7], ["0", "0", "never", "never", "never"], "{row}");
    assert!(text.contains("first never"), "{text}");
}

#[test]
fn check_flags_the_naive_budget_and_deny_warnings_exits_1() {
    let out = loadsim()
        .args(["check", "--deny-warnings"])
        .arg(scenario_path("naive"))
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("3·4·4"), "{text}");
    assert!(
        text.contains("retries cannot fit inside the caller's deadline"),
        "{text}"
    );
    assert!(text.contains("4.07s"), "{text}");
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("--deny-warnings"), "{err}");
    // Without the flag the same report exits 0; a clean policy passes with it.
    loadsim()
        .arg("check")
        .arg(scenario_path("naive"))
        .assert()
        .success();
    loadsim()
        .args(["check", "--deny-warnings"])
        .arg(scenario_path("deadline_budget"))
        .arg(scenario_path("protected"))
        .assert()
        .success();
}

#[test]
fn boundary_rejects_bad_requests_with_exit_2() {
    let naive = scenario_path("naive");
    let cases: [&[&str]; 5] = [
        &[
            "--vary",
            "arrivals.rate",
            "--range",
            "200..700",
            "--range",
            "1..2",
        ],
        &["--vary", "arrivals.rate", "--range", "700..200"],
        &["--vary", "arrivals.rate", "--range", "200s..700"],
        // A 60 s window from 10 s ends past the 60 s of arrivals: the scenario refuses it.
        &["--vary", "faults.slow_b.duration", "--range", "0s..60s"],
        &[
            "--vary",
            "arrivals.rate",
            "--range",
            "200..700",
            "--steps",
            "1",
        ],
    ];
    for args in cases {
        let out = loadsim()
            .arg("boundary")
            .arg(&naive)
            .args(args)
            .assert()
            .code(2);
        assert!(out.get_output().stdout.is_empty(), "{args:?}");
    }
    let out = loadsim()
        .arg("boundary")
        .arg(&naive)
        .args([
            "--set",
            "faults={}",
            "--vary",
            "arrivals.rate",
            "--range",
            "200..700",
        ])
        .assert()
        .code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("no fault"), "{err}");
}
