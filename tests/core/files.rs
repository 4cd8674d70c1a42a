//! Issue 30 (items 1, 2, 6, 9 and 11): every file a command writes goes through the output plan
//! (`--junit` too), and every file a scenario reads — a trace as much as the scenario, a base it
//! `extends` or an import — is an input of that plan and of the journal's identity, so no output
//! overwrites it and `--resume` and `merge` refuse what changed; special files are refused
//! wherever a path is read; a sweep's cells share one copy of a trace, which `--max-memory`
//! counts once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use assert_cmd::Command;

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

/// A run of `args` in `dir` (at most 60 s): exit code and stderr.
fn call(dir: &Path, args: &[&str]) -> (i32, String) {
    let o = loadsim()
        .current_dir(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Expects exit code 2 and `words` on stderr.
fn refused(dir: &Path, args: &[&str], words: &str) {
    let (code, err) = call(dir, args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains(words), "{args:?}: want `{words}` in:\n{err}");
}

/// A scenario replaying the trace `trace` (a path relative to the scenario's folder).
fn trace_scenario(trace: &str, duration: &str) -> String {
    format!(
        "duration: {duration}
drain: 2s
seed: 3
arrivals: {{ trace: {trace} }}
client: {{ entry: api, attempt_timeout: 1s, retries: 0 }}
services:
  api:
    slots: 4
    queue_cap: 4
    service_time: {{ dist: constant, value: 5ms }}
"
    )
}

/// A trace of `rows` rows `step` seconds apart.
fn trace_text(rows: usize, step: f64) -> String {
    let mut t = String::from("time\n");
    for i in 0..rows {
        t.push_str(&format!("{}\n", i as f64 * step));
    }
    t
}

/// A sweep over `scenario` with seeds 1 to `seeds`.
fn sweep_file(dir: &Path, scenario: &str, seeds: usize) -> PathBuf {
    let list: Vec<String> = (1..=seeds).map(|s| s.to_string()).collect();
    let p = dir.join("sw.yaml");
    std::fs::write(
        &p,
        format!(
            "name: tr\nscenarios: [{scenario}]\ngrid:\n  seed: [{}]\n",
            list.join(", ")
        ),
    )
    .unwrap();
    p
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Item 1: `loadsim test --junit` wrote its XML over the scenario, its `extends` base and its
/// `.snap` with exit 0, and created its folder before the inputs were checked.
#[test]
fn junit_never_overwrites_an_input_and_creates_nothing_when_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("base.yaml"),
        "duration: 2s\ndrain: 2s\nseed: 3\narrivals: { rate: 50 }\n\
         client: { entry: api, attempt_timeout: 1s }\n\
         services:\n  api:\n    slots: 4\n    service_time: { dist: constant, value: 5ms }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("s.yaml"),
        "extends: base.yaml\nexpect:\n  - { metric: metrics.requests, gt: 0 }\nsnapshot: true\n",
    )
    .unwrap();
    let (code, err) = call(d, &["test", "s.yaml", "--accept"]);
    assert_eq!(code, 0, "{err}");
    let snap = d.join("snapshots/s.snap");
    assert!(snap.exists());
    for (target, words) in [
        ("s.yaml", "an input of this command"),
        ("base.yaml", "an input of this command"),
        (
            "./snapshots/../snapshots/s.snap",
            "an input of this command",
        ),
        (
            "snapshots/s.snap.new",
            "also written by the snapshot of s.yaml",
        ),
    ] {
        let before: Vec<String> = ["s.yaml", "base.yaml", "snapshots/s.snap"]
            .iter()
            .map(|f| read(&d.join(f)))
            .collect();
        refused(d, &["test", "s.yaml", "--junit", target], words);
        let after: Vec<String> = ["s.yaml", "base.yaml", "snapshots/s.snap"]
            .iter()
            .map(|f| read(&d.join(f)))
            .collect();
        assert_eq!(before, after, "--junit {target} changed an input");
        assert!(!d.join("snapshots/s.snap.new").exists());
    }
    // A refused input leaves no folder behind, as with `run --output`.
    std::fs::write(d.join("bad.yaml"), "duration: 0s\nexpect: []\n").unwrap();
    refused(
        d,
        &["test", "bad.yaml", "--junit", "new/junit.xml"],
        "bad.yaml",
    );
    assert!(!d.join("new").exists(), "--junit created its folder");
    refused(
        d,
        &["run", "bad.yaml", "--output", "new/out.json"],
        "bad.yaml",
    );
    assert!(!d.join("new").exists(), "--output created its folder");
    // An output refused as an input through a folder that does not exist yet creates nothing.
    refused(
        d,
        &["test", "s.yaml", "--junit", "made/../s.yaml"],
        "an input of this command",
    );
    assert!(!d.join("made").exists());
    // A good one is written, its folder created.
    let (code, err) = call(d, &["test", "s.yaml", "--junit", "out/deep/j.xml"]);
    assert_eq!(code, 0, "{err}");
    assert!(read(&d.join("out/deep/j.xml")).contains("<testsuites"));
}

/// Item 2: a trace was no input: `run --output` and `--timeseries` wrote over it, a sweep wrote
/// results.csv over a trace of that name in its folder, and `sweep`/`merge --out` wrote over
/// results.csv and results.md of a folder that no sweep wrote.
#[test]
fn a_trace_is_an_input_and_a_folder_no_sweep_wrote_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = trace_text(100, 0.01);
    std::fs::write(d.join("arrivals.csv"), &trace).unwrap();
    std::fs::write(d.join("s.yaml"), trace_scenario("arrivals.csv", "2s")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("arrivals.csv"), d.join("link.csv")).unwrap();
    for args in [
        &["run", "s.yaml", "--output", "arrivals.csv"][..],
        &["run", "s.yaml", "--timeseries", "arrivals.csv"],
        &[
            "run",
            "s.yaml",
            "--output",
            "./arrivals.csv",
            "--format",
            "csv",
        ],
        #[cfg(unix)]
        &["run", "s.yaml", "--output", "link.csv"],
    ] {
        refused(d, args, "an input of this command");
        assert_eq!(read(&d.join("arrivals.csv")), trace, "{args:?}");
    }
    // The run itself works, and reads the trace.
    let (code, err) = call(
        d,
        &["run", "s.yaml", "--output", "r.json", "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(read(&d.join("r.json")).contains("\"requests\": 100"));

    // A sweep whose scenario replays `out/results.csv`, into `out`.
    std::fs::create_dir(d.join("out")).unwrap();
    std::fs::write(d.join("out/results.csv"), &trace).unwrap();
    std::fs::write(
        d.join("in_out.yaml"),
        trace_scenario("out/results.csv", "2s"),
    )
    .unwrap();
    sweep_file(d, "in_out.yaml", 2);
    refused(
        d,
        &["sweep", "sw.yaml", "--out", "out", "--quiet"],
        "an input of this command",
    );
    assert_eq!(read(&d.join("out/results.csv")), trace);

    // A folder no sweep wrote, holding results.csv or results.md of its own.
    sweep_file(d, "s.yaml", 2);
    for name in ["results.csv", "results.md"] {
        let plain = d.join(format!("plain-{name}"));
        std::fs::create_dir(&plain).unwrap();
        std::fs::write(plain.join(name), "mine\n").unwrap();
        let out = plain.to_str().unwrap();
        refused(
            d,
            &["sweep", "sw.yaml", "--out", out, "--quiet"],
            "is not a sweep's folder",
        );
        assert_eq!(read(&plain.join(name)), "mine\n");
        let (code, err) = call(d, &["sweep", "sw.yaml", "--out", "done", "--quiet"]);
        assert_eq!(code, 0, "{err}");
        refused(
            d,
            &["merge", "done", "--out", out, "--quiet"],
            "is not a sweep's folder",
        );
        assert_eq!(read(&plain.join(name)), "mine\n");
    }
    // A sweep's own folder is written again, and merged into a fresh one.
    let (code, err) = call(d, &["sweep", "sw.yaml", "--out", "done", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = call(d, &["merge", "done", "--out", "merged", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        read(&d.join("done/results.csv")),
        read(&d.join("merged/results.csv"))
    );
}

/// Item 6: a trace from a named pipe hung, `/dev/zero` was read without bound and `/dev/stdin`
/// was accepted. Each is refused before it is read, by name, exit 2; a trace over the byte bound
/// is refused with the bound, without reading it.
#[cfg(unix)]
#[test]
fn special_and_oversized_traces_are_refused_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let made = std::process::Command::new("mkfifo")
        .arg(d.join("pipe.csv"))
        .status()
        .unwrap();
    assert!(made.success());
    for (trace, words) in [
        ("pipe.csv", "is a named pipe, not a regular file"),
        ("/dev/zero", "is a device, not a regular file"),
        ("/dev/null", "is a device, not a regular file"),
        (".", "is a directory, not a regular file"),
    ] {
        std::fs::write(d.join("s.yaml"), trace_scenario(trace, "2s")).unwrap();
        refused(d, &["check", "s.yaml"], words);
        refused(d, &["run", "s.yaml"], words);
        sweep_file(d, "s.yaml", 1);
        refused(d, &["sweep", "sw.yaml", "--dry-run"], words);
    }
    // A folder to merge whose manifest is a named pipe: refused, not a hang.
    std::fs::create_dir(d.join("fake")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(d.join("fake/manifest.json"))
        .status()
        .unwrap();
    assert!(made.success());
    refused(
        d,
        &["merge", "fake", "--out", "m", "--quiet"],
        "is a named pipe, not a regular file",
    );
    // `/dev/stdin` is refused whatever stdin is: a pipe, or a regular file redirected.
    std::fs::write(d.join("t.csv"), trace_text(10, 0.1)).unwrap();
    std::fs::write(d.join("s.yaml"), trace_scenario("/dev/stdin", "2s")).unwrap();
    for stdin in [
        std::process::Stdio::piped(),
        std::fs::File::open(d.join("t.csv")).unwrap().into(),
    ] {
        let o = std::process::Command::new(assert_cmd::cargo::cargo_bin!("loadsim"))
            .current_dir(d)
            .args(["check", "s.yaml"])
            .stdin(stdin)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("/dev/stdin") && err.contains("not a regular file"),
            "{err}"
        );
    }
    // Over the bound (a sparse file: nothing is written to disk, and nothing is read).
    let big = std::fs::File::create(d.join("big.csv")).unwrap();
    big.set_len(loadsim::scenario::trace::MAX_TRACE_BYTES + 1)
        .unwrap();
    std::fs::write(d.join("s.yaml"), trace_scenario("big.csv", "2s")).unwrap();
    refused(
        d,
        &["check", "s.yaml"],
        &format!(
            "is {} bytes; loadsim reads a trace of at most {} bytes",
            loadsim::scenario::trace::MAX_TRACE_BYTES + 1,
            loadsim::scenario::trace::MAX_TRACE_BYTES
        ),
    );
}

/// Item 9: each cell of a sweep held its own copy of the trace (500 cells over an 11 MB trace
/// took 3.9 GB for a dry run), and `--max-memory` did not count it. The cells now share one copy,
/// counted once.
#[test]
fn a_sweep_shares_one_copy_of_a_trace_and_max_memory_counts_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), trace_text(100_000, 0.001)).unwrap();
    std::fs::write(d.join("s.yaml"), trace_scenario("t.csv", "101s")).unwrap();
    std::fs::write(d.join("also.yaml"), trace_scenario("t.csv", "101s")).unwrap();
    let file = sweep_file(d, "s.yaml", 4);
    std::fs::write(
        &file,
        read(&file).replace("[s.yaml]", "[s.yaml, also.yaml]"),
    )
    .unwrap();

    // Every cell of both scenarios holds the same instants.
    let spec = loadsim::sweep::SweepSpec::from_text(&file, &read(&file)).unwrap();
    let sources = loadsim::sweep::expand::Sources::load(&spec).unwrap();
    let cells = loadsim::sweep::expand(&spec);
    assert_eq!(cells.len(), 8);
    let scenarios = loadsim::sweep::expand::prepare(&spec, &sources, &cells).unwrap();
    let first = scenarios[0].classes[0].arrivals.trace.clone().unwrap();
    assert_eq!(first.len(), 100_000);
    for sc in &scenarios {
        let t = sc.classes[0].arrivals.trace.as_ref().unwrap();
        assert!(Arc::ptr_eq(&first, t), "one copy for every cell");
    }
    assert_eq!(sources.inputs.held_bytes(), 800_000, "counted once");

    // 8 cells need about 33 KiB besides the trace's 781 KiB: 900000 bytes are enough when the
    // trace counts once (8 copies would take 6.1 MiB), 700000 are not.
    let (code, err) = call(
        d,
        &[
            "sweep",
            "sw.yaml",
            "--out",
            "o",
            "--max-memory",
            "900000",
            "--max-cells",
            "0",
        ],
    );
    assert_eq!(
        code, 1,
        "past the memory check, stopped before any cell: {err}"
    );
    assert!(err.contains("stopped after 0 cells"), "{err}");
    refused(
        d,
        &["sweep", "sw.yaml", "--out", "o", "--max-memory", "700000"],
        "and the 781.2 KiB of files they share",
    );
}

/// Item 11: `sweep --resume` and `tune --resume` did not notice a changed trace (a sweep mixed
/// old and new traces; tune recommended from stale runs), and `merge` took shards run on
/// different traces. The trace's hash is part of the journal's identity.
#[test]
fn resume_and_merge_refuse_a_changed_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old = trace_text(100, 0.01);
    let new = trace_text(150, 0.01);
    std::fs::write(d.join("t.csv"), &old).unwrap();
    std::fs::write(d.join("s.yaml"), trace_scenario("t.csv", "2s")).unwrap();
    sweep_file(d, "s.yaml", 4);

    let (code, err) = call(d, &["sweep", "sw.yaml", "--out", "o", "--max-cells", "1"]);
    assert_eq!(code, 1, "{err}");
    std::fs::write(d.join("t.csv"), &new).unwrap();
    refused(
        d,
        &["sweep", "sw.yaml", "--out", "o", "--resume"],
        "a file a scenario reads: an import, a trace",
    );
    // The same trace again: the identity is the same, and the sweep resumes.
    std::fs::write(d.join("t.csv"), &old).unwrap();
    let (code, err) = call(d, &["sweep", "sw.yaml", "--out", "o", "--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("resuming: 1 of 4 cells"), "{err}");

    // Shards run on different traces do not merge.
    for (k, trace) in [(1, &old), (2, &new)] {
        std::fs::write(d.join("t.csv"), trace).unwrap();
        let shard = format!("{k}/2");
        let out = format!("shard{k}");
        let (code, err) = call(d, &["sweep", "sw.yaml", "--out", &out, "--shard", &shard]);
        assert_eq!(code, 0, "{err}");
    }
    refused(
        d,
        &["merge", "shard1", "shard2", "--out", "m", "--quiet"],
        "merge only shards of one sweep file run on the same scenario files",
    );

    // tune: stopped, the trace changed, resumed.
    std::fs::write(d.join("t.csv"), &old).unwrap();
    std::fs::write(
        d.join("faults.yaml"),
        "faults:\n  slow: { kind: slow, slowdown: 10, from: 0.5s, duration: 0.5s }\n",
    )
    .unwrap();
    let tune = |extra: &[&str]| {
        let mut args = vec![
            "tune",
            "s.yaml",
            "--faults",
            "faults.yaml",
            "--target",
            "api",
            "--vary",
            "services.api.queue_cap=1..8",
            "--objective",
            "services.api.rejected_full",
            "--require",
            "services.api.max_queue <= 4",
            "--seeds",
            "1",
            "--out",
            "tuned",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        call(d, &args)
    };
    let (code, err) = tune(&["--max-runs", "3"]);
    assert_eq!(code, 1, "{err}");
    std::fs::write(d.join("t.csv"), &new).unwrap();
    let (code, err) = tune(&["--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot resume") && err.contains("a file it reads, like a trace"),
        "{err}"
    );
    std::fs::write(d.join("t.csv"), &old).unwrap();
    let (code, err) = tune(&["--resume"]);
    assert_eq!(code, 0, "{err}");
}

/// A path in a file resolves against that file's folder: a trace named by a base in another
/// folder is read from the base's folder, and is an input of the run.
#[test]
fn a_trace_named_by_a_base_resolves_against_the_base() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("lib")).unwrap();
    std::fs::write(d.join("lib/t.csv"), trace_text(40, 0.01)).unwrap();
    std::fs::write(d.join("lib/base.yaml"), trace_scenario("t.csv", "2s")).unwrap();
    std::fs::write(d.join("child.yaml"), "extends: lib/base.yaml\nseed: 4\n").unwrap();
    let (code, err) = call(
        d,
        &[
            "run",
            "child.yaml",
            "--output",
            "r.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(read(&d.join("r.json")).contains("\"requests\": 40"));
    refused(
        d,
        &["run", "child.yaml", "--output", "lib/t.csv"],
        "an input of this command",
    );
}

/// A scenario whose api's service time is an `empirical` distribution read from `samples`.
fn samples_scenario(samples: &str) -> String {
    format!(
        "duration: 2s
drain: 2s
seed: 3
arrivals: {{ rate: 50 }}
client: {{ entry: api, attempt_timeout: 1s, retries: 0 }}
services:
  api:
    slots: 4
    service_time: {{ dist: empirical, file: {samples} }}
"
    )
}

#[test]
fn an_empirical_samples_file_is_an_input_read_safely_and_resumed_only_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old = "5ms\n7ms\n9ms\n";
    std::fs::write(d.join("lat.txt"), old).unwrap();
    std::fs::write(d.join("s.yaml"), samples_scenario("lat.txt")).unwrap();
    // An input of the output plan: no output may overwrite it.
    for args in [
        &["run", "s.yaml", "--output", "lat.txt"][..],
        &["run", "s.yaml", "--timeseries", "lat.txt"],
    ] {
        refused(d, args, "an input of this command");
        assert_eq!(read(&d.join("lat.txt")), old, "{args:?}");
    }
    // Read safely: a named pipe is refused at once instead of blocking.
    #[cfg(unix)]
    {
        let fifo = d.join("fifo.txt");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        std::fs::write(d.join("f.yaml"), samples_scenario("fifo.txt")).unwrap();
        refused(d, &["check", "f.yaml"], "fifo.txt");
    }
    // Part of a journal's identity: a changed samples file is not resumed.
    sweep_file(d, "s.yaml", 4);
    let (code, err) = call(d, &["sweep", "sw.yaml", "--out", "o", "--max-cells", "1"]);
    assert_eq!(code, 1, "{err}");
    std::fs::write(d.join("lat.txt"), "50ms\n70ms\n").unwrap();
    refused(
        d,
        &["sweep", "sw.yaml", "--out", "o", "--resume"],
        "a file a scenario reads",
    );
    std::fs::write(d.join("lat.txt"), old).unwrap();
    let (code, err) = call(d, &["sweep", "sw.yaml", "--out", "o", "--resume"]);
    assert_eq!(code, 0, "{err}");
}
