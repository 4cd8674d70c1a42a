//! The resource model of issue 30 seen from the command line: every command that runs
//! simulations refuses up front (exit 2, naming the file or the flag) what would exhaust memory or
//! time, and a run that still outgrows its limits or stops advancing simulated time stops with a
//! sentence (exit 2) instead of aborting. Each numbered item of the issue has its regression test;
//! then a property test draws small hostile scenarios and runs each in a child process under a
//! memory and time limit.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::common::scenario_path;

/// The built binary.
fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loadsim"))
}

/// Address space a child may take: far above a run within the default 2 GiB `--max-memory`'s
/// records plus the program, far below what the refused inputs used to take (2.2–2.8 GB).
const CHILD_MEMORY_KB: u64 = 3_500_000;

/// Runs `loadsim args…` in `dir` under [`CHILD_MEMORY_KB`] of address space (`ulimit -v`), killed
/// after `secs`; returns the exit code (`None`: killed or a signal), stdout and stderr.
fn limited(dir: &Path, args: &[&str], secs: u64) -> (Option<i32>, String, String) {
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {CHILD_MEMORY_KB}; exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh runs");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `text` as `s.yaml` in a fresh folder and runs `loadsim <command> s.yaml args…` there.
fn run_text(command: &str, text: &str, args: &[&str], secs: u64) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let mut all = vec![command, "s.yaml"];
    all.extend_from_slice(args);
    limited(dir.path(), &all, secs)
}

/// Expects exit code 2 within the limits and returns stderr.
fn refused(command: &str, text: &str, args: &[&str]) -> String {
    let (code, _, err) = run_text(command, text, args, 30);
    assert_eq!(code, Some(2), "{err}");
    err
}

const ONE_SLOT: &str = "client: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1}\n";

/// Item 3: a closed loop with zero think time and zero work never advanced time and aborted out
/// of memory in 1.4 s; it now stops with a sentence, the clock's standstill named.
#[test]
fn a_run_that_does_not_advance_time_stops() {
    for duration in ["1s", "1ms"] {
        let text = format!(
            "duration: {duration}\narrivals: {{process: closed, users: 10, think_time: {{dist: constant, value: 0s}}}}\n{ONE_SLOT}"
        );
        let err = refused("run", &text, &[]);
        assert!(err.contains("without the clock moving"), "{err}");
        assert!(err.contains("scenario `s`"), "{err}");
    }
}

/// A closed loop whose users do not think has no rate the scenario states (it is as fast as the
/// replies): the guard's bound, taken from the rate capped at 1e7/s, bounded nothing, and such a
/// run could stop at --max-events with exit 1 (the hostile proptest drew one). Its events are
/// now judged by the pilot alone: refused up front with the pilot's estimate, or run to the end.
#[test]
fn a_closed_loop_without_think_time_is_judged_by_its_pilot() {
    let text = |duration: &str, timeout: &str, work: &str| {
        format!(
            "duration: {duration}\narrivals: {{process: closed, users: 100, think_time: {{dist: constant, value: 0s}}}}\n\
             client: {{entry: a, attempt_timeout: {timeout}, retries: 2}}\nservices:\n  \
             a: {{slots: 2, service_time: {{dist: constant, value: {work}}}, calls: {{b: {{attempt_timeout: {timeout}, retries: 2}}}}}}\n  \
             b: {{slots: 1, service_time: {{dist: exponential, mean: {work}}}}}\n"
        )
    };
    for (timeout, work) in [("1ns", "1ns"), ("1ms", "1ns")] {
        let err = refused("run", &text("1s", timeout, work), &[]);
        assert!(
            err.contains("s.yaml") && err.contains("a pilot run"),
            "{err}"
        );
    }
    let (code, _, err) = run_text("run", &text("1ms", "1ms", "1ns"), &[], 60);
    assert_eq!(code, Some(0), "{err}");
}

/// Item 4: 1e7 requests/s into one slot, or a 30-day attempt timeout, aborted at 2.2–2.8 GB
/// under the event limit; the memory estimate now refuses them before they run.
#[test]
fn runs_that_would_exhaust_memory_are_refused_up_front() {
    let flood = "duration: 20s\narrivals: {rate: 10000000}\nclient: {entry: a, attempt_timeout: 1s}\n\
                 services:\n  a: {slots: 1, service_time: {dist: constant, value: 1s}}\n";
    let err = refused("run", flood, &[]);
    assert!(
        err.contains("s.yaml") && err.contains("--max-memory"),
        "{err}"
    );
    assert!(err.contains("queued jobs"), "{err}");
    let long_timeout = "duration: 60s\narrivals: {rate: 1000000}\nclient: {entry: a, attempt_timeout: 30days}\n\
                        services:\n  a: {slots: 1000000, service_time: {dist: constant, value: 1ms}}\n";
    let err = refused("run", long_timeout, &[]);
    assert!(err.contains("pending events"), "{err}");
    // The same flag raises the limit: with 100 GiB the estimate passes (and the event guard,
    // with a small enough count, lets `check` alone run nothing here).
    let (code, _, err) = run_text(
        "run",
        long_timeout,
        &["--max-memory", "100G", "--max-events", "1"],
        30,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--max-events"), "{err}");
}

/// Item 4, during the run: a run whose live records outgrow `--max-memory` stops (exit 2).
#[test]
fn a_run_over_its_memory_limit_stops() {
    let text = "duration: 2s\narrivals: {rate: 100000}\nclient: {entry: a, attempt_timeout: 1m}\n\
                services:\n  a: {slots: 1000000, service_time: {dist: constant, value: 1ms}}\n";
    // The estimate: 1e5/s × 1 m of timers ≈ 2e5 × 24 B, below 8 MiB; the run holds more (every
    // timeout timer of 2 s of arrivals) and stops at its check.
    let (code, _, err) = run_text("run", text, &["--max-memory", "1M"], 30);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("above the limit") && err.contains("--max-memory"),
        "{err}"
    );
}

/// Item 5: `boundary` and `tune` never called the event guard.
#[test]
fn boundary_and_tune_go_through_the_guard() {
    let naive = scenario_path("naive");
    let naive = naive.to_str().unwrap();
    let (code, _, err) = limited(
        Path::new("."),
        &[
            "boundary",
            naive,
            "--vary",
            "arrivals.rate",
            "--range",
            "9999999..10000000",
            "--steps",
            "2",
            // Within the default 2e9 the pilot estimates its ~1e9 events and admits it (the
            // memory estimate then refuses it); below its 6e8 arrivals it is refused on events.
            "--max-events",
            "1e8",
        ],
        30,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("could take up to") && err.contains("naive.yaml"),
        "{err}"
    );
    let (code, _, err) = limited(
        Path::new("."),
        &[
            "tune",
            naive,
            "--vary",
            "services.svc_a.queue_cap=1..4",
            "--set",
            "duration=30days",
            "--seeds",
            "1",
            "--steps",
            "2",
            "--rounds",
            "0",
        ],
        30,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("could take up to") || err.contains("memory"),
        "{err}"
    );
}

/// Item 7: controller intervals below the 1 ms floor are refused at their key.
#[test]
fn controller_intervals_below_the_floor_are_refused() {
    let autoscale = "duration: 1s\narrivals: {rate: 100}\nclient: {entry: a, attempt_timeout: 1s}\n\
                     services:\n  a: {slots: 1, service_time: {dist: constant, value: 1ms}, autoscale: {max_replicas: 3, interval: 1us}}\n";
    let err = refused("check", autoscale, &[]);
    assert!(
        err.contains("s.yaml:5") && err.contains("autoscale.interval") && err.contains("1ms"),
        "{err}"
    );
    let gradient = "duration: 1s\narrivals: {rate: 100}\nclient: {entry: a, attempt_timeout: 1s}\n\
                    services:\n  a: {slots: 1, service_time: {dist: constant, value: 1ms}, concurrency_limit: {algorithm: envoy_gradient, concurrency_update_interval: 1ns, min_rtt_calc_interval: 1s}}\n";
    let err = refused("check", gradient, &[]);
    assert!(
        err.contains("concurrency_update_interval") && err.contains("1ms"),
        "{err}"
    );
}

/// Item 8: `tune --steps 1000000000` allocated 8 GB before any check; `run --seeds 1..10000`
/// ran without asking for `--yes`.
#[test]
fn search_sizes_are_checked_before_allocating() {
    let naive = scenario_path("naive");
    let naive = naive.to_str().unwrap();
    let (code, _, err) = limited(
        Path::new("."),
        &[
            "tune",
            naive,
            "--vary",
            "services.svc_a.queue_cap=1..100",
            "--steps",
            "1000000000",
        ],
        30,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--yes"), "{err}");
    let (code, _, err) = limited(Path::new("."), &["run", naive, "--seeds", "1..1001"], 30);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--yes") && err.contains("1001 runs"), "{err}");
}

/// Item 10: `aws_adaptive` held sends re-waited once per sender that took their token first
/// (57 million events and 37 s for this 10 s run); each now waits once.
#[test]
fn aws_adaptive_held_sends_wait_once_each() {
    let text = "duration: 10s\narrivals: {rate: 2000}\nclient: {entry: a, attempt_timeout: 10days}\n\
                services:\n  a: {slots: 100000, calls: {b: {attempt_timeout: 10days, retries: 0, retry_quota: {kind: aws_adaptive}}}}\n  \
                b: {slots: 1, queue_cap: 1, service_time: {dist: constant, value: 10ms}}\n";
    let (code, out, err) = run_text("run", text, &["--format", "json"], 60);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let events = v[0]["engine"]["events"].as_f64().unwrap();
    let requests = v[0]["metrics"]["requests"].as_f64().unwrap();
    let sc = loadsim::scenario::Scenario::from_document(
        &loadsim::scenario::Document::from_text(Path::new("s.yaml"), text).unwrap(),
    )
    .unwrap();
    let bound = loadsim::guard::event_bound_for(&sc, requests);
    assert!(events <= bound, "{events} events above the bound {bound}");
}

/// Item 13: a run with no request at all exited 0 with `requests: 0`.
#[test]
fn a_run_without_requests_is_an_error_unless_intended() {
    let late = format!(
        "duration: 1s\narrivals: {{process: closed, users: 10, think_time: {{dist: constant, value: 10s}}}}\n{ONE_SLOT}"
    );
    let err = refused("run", &late, &[]);
    assert!(
        err.contains("s.yaml") && err.contains("allow_no_requests"),
        "{err}"
    );
    let surge = format!(
        "duration: 10s\narrivals: {{rate: 100}}\n{ONE_SLOT}faults:\n  calm: {{kind: surge, factor: 1e-300, from: 0s, to: 10s}}\n"
    );
    let err = refused("run", &surge, &[]);
    assert!(err.contains("fewer than one"), "{err}");
    let (code, _, err) = run_text("run", &format!("allow_no_requests: true\n{late}"), &[], 30);
    assert_eq!(code, Some(0), "{err}");
}

/// Issue 28, item 2: `--max-events` takes scientific notation.
#[test]
fn max_events_takes_scientific_notation() {
    let naive = scenario_path("naive");
    let (code, _, err) = limited(
        Path::new("."),
        &[
            "run",
            naive.to_str().unwrap(),
            "--set",
            "duration=1s",
            "--set",
            "faults={}",
            "--max-events",
            "1e10",
        ],
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = limited(
        Path::new("."),
        &["run", naive.to_str().unwrap(), "--max-events", "1.5"],
        10,
    );
    assert_eq!(code, Some(2), "{err}");
}

/// One hostile scenario under 10 KB: extreme rates, intervals, timeouts, think times, classes
/// and a trace.
fn hostile() -> impl Strategy<Value = (String, Option<String>)> {
    let duration = prop_oneof![
        Just("1ms"),
        Just("1s"),
        Just("10s"),
        Just("1h"),
        Just("30days")
    ];
    let rate = prop_oneof![
        Just("1e-9"),
        Just("0.5"),
        Just("100"),
        Just("1e5"),
        Just("1e7")
    ];
    let timeout = prop_oneof![Just("1ns"), Just("1ms"), Just("1s"), Just("30days")];
    let think = prop_oneof![Just("0s"), Just("1ns"), Just("1ms"), Just("1h")];
    let work = prop_oneof![Just("0s"), Just("1ns"), Just("1ms"), Just("10s")];
    let interval = prop_oneof![Just("1ns"), Just("1us"), Just("1ms"), Just("15s")];
    let arrivals = prop_oneof![
        rate.clone().prop_map(|r| format!("{{rate: {r}}}")),
        (1u32..5, think).prop_map(|(u, t)| format!(
            "{{process: closed, users: {}, think_time: {{dist: constant, value: {t}}}}}",
            10u64.pow(u)
        )),
        Just("{trace: t.csv}".to_owned()),
    ];
    (
        duration,
        arrivals,
        timeout,
        work,
        prop_oneof![Just(""), Just(", queue_cap: 10")],
        proptest::option::of(interval),
        0u32..3,
        prop::bool::ANY,
        (1u32..4, 0u32..100),
    )
        .prop_map(
            |(duration, arrivals, timeout, work, cap, interval, retries, classes, (rows, gap))| {
                let scale = interval.map_or(String::new(), |i| {
                    format!(", autoscale: {{max_replicas: 4, interval: {i}, warmup: 0s}}")
                });
                let client = format!("entry: a, attempt_timeout: {timeout}, retries: {retries}");
                let load = if classes {
                    format!(
                        "clients:\n  x: {{arrivals: {arrivals}, {client}, priority: 1}}\n  \
                         y: {{arrivals: {{rate: 10}}, {client}}}\n"
                    )
                } else {
                    format!("arrivals: {arrivals}\nclient: {{{client}}}\n")
                };
                let text = format!(
                    "duration: {duration}\n{load}services:\n  a: {{slots: 2{cap}, service_time: \
                     {{dist: constant, value: {work}}}, calls: {{b: {{attempt_timeout: {timeout}, \
                     retries: {retries}}}}}{scale}}}\n  b: {{slots: 1{cap}, service_time: \
                     {{dist: exponential, mean: {work}}}}}\n"
                );
                let trace = (0..10u32.pow(rows))
                    .map(|i| format!("{}\n", (i * gap) as f64 / 1000.0))
                    .collect::<String>();
                (text, Some(format!("t_s\n{trace}")))
            },
        )
}

/// Random hostile scenarios end as a located refusal (exit 2) or a finished run whose request
/// balance holds, each within the memory limit and 60 s (`PROPTEST_CASES` raises the count; the
/// default keeps this test near a minute on two cores; docs/trust.md gives the soak).
#[test]
fn hostile_scenarios_are_refused_or_finish_within_limits() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(24);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&hostile(), |(text, trace)| {
            prop_assert!(text.len() <= 10 * 1024);
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("s.yaml"), &text).unwrap();
            if let Some(t) = &trace {
                prop_assert!(t.len() <= 10 * 1024);
                std::fs::write(dir.path().join("t.csv"), t).unwrap();
            }
            // Limits that keep a case to seconds in a debug build too: what they refuse is refused
            // the same way (exit 2, located), and a run within them must finish.
            let args = [
                "run",
                "s.yaml",
                "--format",
                "json",
                "--max-events",
                "2e7",
                "--max-memory",
                "512M",
            ];
            let (code, out, err) = limited(dir.path(), &args, 60);
            match code {
                Some(2) => prop_assert!(
                    err.contains("s.yaml") || err.contains("scenario `s`") || err.contains("t.csv"),
                    "a refusal names the file: {err}\n{text}"
                ),
                Some(0) => {
                    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                    let m = &v[0]["metrics"];
                    let n = |k: &str| m[k].as_u64().unwrap_or(0);
                    prop_assert_eq!(
                        n("requests"),
                        n("succeeded") + n("failed") + n("unfinished"),
                        "{}",
                        text
                    );
                }
                other => prop_assert!(
                    false,
                    "exit {other:?} (killed: over the time or memory limit)\n{err}\n{text}"
                ),
            }
            Ok(())
        })
        .unwrap();
}
