//! `loadsim test`, `run --seeds` and `--version` as users call them: assertions (every reading,
//! paired), snapshot rules (write, compare, rounding, accept, CI, review), JUnit and JSON output,
//! the shipped examples/ci, bad input, and exit codes.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use loadsim::expect::snapshot::Snapshot;

use super::common::{run, scenario_path};

fn loadsim() -> Command {
    let mut c = Command::cargo_bin("loadsim").unwrap();
    // Each test says whether it runs "on CI"; the CI running these tests must not decide.
    c.env_remove("CI");
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A small, fast scenario: one service, a short slow window.
const TINY: &str = "\
duration: 5s
drain: 5s
seed: 3
arrivals: { rate: 50 }
client: { entry: api, attempt_timeout: 1s }
services:
  api:
    slots: 4
    service_time: { dist: exponential, mean: 20ms }
faults:
  slow:
    kind: slow
    service: api
    from: 1s
    duration: 1s
    service_time: { dist: exponential, mean: 100ms }
";

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn test_cmd(args: &[&str], dir: &Path, ci: bool) -> Out {
    let mut c = loadsim();
    c.current_dir(dir).arg("test").args(args);
    if ci {
        c.env("CI", "true");
    }
    let o = c.output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn last_line(text: &str) -> &str {
    text.lines().last().unwrap_or("")
}

/// Copies `scenarios/` and `examples/ci/` into `dir`, keeping their relative paths.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &target);
        } else {
            std::fs::copy(&p, &target).unwrap();
        }
    }
}

#[test]
fn shipped_examples_pass_and_a_one_key_policy_change_fails_naming_the_metrics() {
    // In place, on CI: every assertion holds and every snapshot matches; nothing is written.
    let out = test_cmd(&["examples/ci"], &root(), true);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(last_line(&out.stdout), "9 passed, 0 failed");
    let pending: Vec<_> = std::fs::read_dir(root().join("examples/ci/snapshots"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().to_string_lossy().ends_with(".new"))
        .collect();
    assert!(pending.is_empty(), "{pending:?}");

    // A copy with svc_b's queue cap raised from 16 to 64 (its `extends` paths still resolve).
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&root().join("scenarios"), &dir.path().join("scenarios"));
    copy_tree(&root().join("examples/ci"), &dir.path().join("examples/ci"));
    let file = dir.path().join("examples/ci/checkout.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        format!("{text}services:\n  svc_b:\n    queue_cap: 64\n"),
    )
    .unwrap();
    let out = test_cmd(&["examples/ci"], dir.path(), true);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("FAIL examples/ci/checkout.yaml expect[2]: services.svc_b.max_queue le 16"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("FAIL examples/ci/checkout.yaml snapshot:"),
        "{}",
        out.stdout
    );
    // The diff names the changed metrics, old → new.
    assert!(
        out.stdout.contains("services.svc_b.max_queue: 16 → "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("metrics.success_rate_during: "),
        "{}",
        out.stdout
    );
    let summary = last_line(&out.stdout);
    assert!(
        summary.ends_with(" failed") && !summary.ends_with(" 0 failed"),
        "{summary}"
    );
    assert!(
        dir.path()
            .join("examples/ci/snapshots/checkout.snap.new")
            .exists()
    );
    // The other scenario is untouched and still passes.
    assert!(
        out.stdout
            .contains("PASS examples/ci/checkout_lifo.yaml snapshot: matches")
    );
}

/// Every `*.yaml` scenario under `dir` (recursively): files with `services:` or `extends:`.
fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            scenario_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&p).unwrap();
            if text
                .lines()
                .any(|l| l.starts_with("services:") || l.starts_with("extends:"))
            {
                out.push(p);
            }
        }
    }
}

/// A snapshot of every shipped scenario and example, accepted and then checked again on CI, must
/// match: every kind of value a run produces (booleans, `null`, class, replica, autoscaler and
/// window metrics) reads back. Each file is tested through a one-line file in a temporary folder
/// that extends it and asks for `snapshot: true`, so the repository is left as it was.
#[test]
fn snapshots_of_every_shipped_scenario_round_trip() {
    let mut files = Vec::new();
    scenario_files(&root().join("scenarios"), &mut files);
    scenario_files(&root().join("examples"), &mut files);
    files.sort();
    assert!(files.len() >= 60, "{files:?}");
    let dir = tempfile::tempdir().unwrap();
    let wrap = |name: &str, extends: &Path, extra: &str| {
        let extends = serde_json::to_string(&extends.to_string_lossy()).unwrap();
        let text = format!("extends: {extends}\n{extra}snapshot: true\n");
        std::fs::write(dir.path().join(format!("{name}.yaml")), text).unwrap();
    };
    for f in &files {
        let rel = f.strip_prefix(root()).unwrap().with_extension("");
        wrap(&rel.to_string_lossy().replace(['/', '\\'], "_"), f, "");
    }
    // No shipped scenario names measurement windows or extra quantiles, or ends too soon after
    // its fault to measure recovery (`recovery_measurable: false`): one that does all three.
    wrap(
        "classes_windows_short",
        &root().join("scenarios/workload/classes_priority.yaml"),
        "duration: 32s\nmetrics:\n  quantiles: [0.5, 0.999]\n  windows: { early: [0s, 10s], late: [20s, 32s] }\n",
    );
    let n = files.len() + 1;

    let out = test_cmd(&["--accept", "."], dir.path(), false);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(last_line(&out.stdout), format!("{n} passed, 0 failed"));
    let snaps = dir.path().join("snapshots");
    let all: String = std::fs::read_dir(&snaps)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    // The corpus holds every kind of value this test is about.
    for kind in [
        "classes.checkout.recovered: true",
        "metrics.recovery_measurable: false",
        ": null\n",
        ".replica_stats.1.utilization: 0.",
        ".autoscale.timeline.1.replicas: ",
        "metrics.windows.late.success_latency.p99_9_s: 0.",
        "metrics.latency_quantiles.success_p99_9_s: 0.",
    ] {
        assert!(all.contains(kind), "no `{kind}` in any snapshot");
    }

    let out = test_cmd(&["."], dir.path(), true);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(last_line(&out.stdout), format!("{n} passed, 0 failed"));
    assert_eq!(
        out.stdout.matches("snapshot: matches").count(),
        n,
        "{}",
        out.stdout
    );
    let pending: Vec<_> = std::fs::read_dir(&snaps)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().to_string_lossy().ends_with(".new"))
        .collect();
    assert!(pending.is_empty(), "{pending:?}");
}

/// Issue 29's "done when": a fixed configuration with request classes, replicas, parallel calls
/// and an imported call policy (examples/shop) passes `loadsim check --deny-warnings` and
/// `loadsim test` with `snapshot: true` twice in a row on CI, its committed snapshot matching
/// both times. Run on a copy, so a failure writes nothing into the repository.
#[test]
fn the_shop_example_passes_check_and_its_snapshot_twice() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&root().join("examples/shop"), &dir.path().join("shop"));
    let sc = std::fs::read_to_string(dir.path().join("shop/shop.yaml")).unwrap();
    for part in [
        "clients:",
        "replicas: 3",
        "parallel: true",
        "import: { grpc:",
    ] {
        assert!(sc.contains(part), "examples/shop/shop.yaml lost `{part}`");
    }
    let out = loadsim()
        .current_dir(dir.path())
        .args(["check", "--deny-warnings", "shop/shop.yaml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(": 0 warnings"), "{stdout}");
    let snap = std::fs::read_to_string(dir.path().join("shop/snapshots/shop.snap")).unwrap();
    assert!(snap.contains("classes.checkout.recovered: true"), "{snap}");
    for _ in 0..2 {
        let out = test_cmd(&["shop"], dir.path(), true);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("PASS shop/shop.yaml snapshot: matches"),
            "{}",
            out.stdout
        );
        assert_eq!(last_line(&out.stdout), "3 passed, 0 failed");
    }
    assert!(!dir.path().join("shop/snapshots/shop.snap.new").exists());
}

#[test]
fn snapshot_rules_missing_ci_accept_and_match() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tiny.yaml"),
        format!("{TINY}snapshot: true\n"),
    )
    .unwrap();
    let snap = dir.path().join("snapshots/tiny.snap");
    let new = dir.path().join("snapshots/tiny.snap.new");

    // Missing, not on CI: passes with a note and writes .snap.new.
    let out = test_cmd(&[], dir.path(), false);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("no snapshot yet"), "{}", out.stdout);
    assert!(new.exists() && !snap.exists());
    assert_eq!(last_line(&out.stdout), "1 passed, 0 failed");

    // Missing, on CI: fails.
    let out = test_cmd(&[], dir.path(), true);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert_eq!(last_line(&out.stdout), "0 passed, 1 failed");

    // --accept writes .snap and removes .snap.new; then CI passes.
    let out = test_cmd(&["--accept"], dir.path(), true);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(snap.exists() && !new.exists());
    let text = std::fs::read_to_string(&snap).unwrap();
    assert!(text.contains("  model_version: 1\n"), "{text}");
    assert!(
        text.contains("  seed: 3\n") && text.contains("  digits: 6\n"),
        "{text}"
    );
    assert!(
        !text.contains("engine."),
        "engine costs are never snapshotted"
    );
    let out = test_cmd(&[], dir.path(), true);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("snapshot: matches"), "{}", out.stdout);

    // A change fails with the changed metrics and leaves .snap.new; --accept takes it.
    let changed = format!("{TINY}snapshot: true\n").replace("slots: 4", "slots: 3");
    std::fs::write(dir.path().join("tiny.yaml"), changed).unwrap();
    let out = test_cmd(&[], dir.path(), false);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("metrics changed"), "{}", out.stdout);
    assert!(
        out.stdout.contains("services.api.utilization: "),
        "{}",
        out.stdout
    );
    assert!(new.exists());
    let out = test_cmd(&["--accept"], dir.path(), false);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains("accepted into"), "{}", out.stdout);
    assert!(!new.exists());
    assert_eq!(test_cmd(&[], dir.path(), true).code, 0);
}

#[test]
fn rounding_hides_last_bit_changes_but_not_real_ones() {
    let base = run("protected", &[], 7);
    let old = Snapshot::of_run(&base, "protected.yaml", 6);
    // A float changed in its last bits: the same snapshot at 6 digits.
    let mut nudged = base.clone();
    let x = nudged.metrics.success_rate_during.unwrap();
    nudged.metrics.success_rate_during = Some(x * (1.0 + 1e-12));
    assert!(
        Snapshot::of_run(&nudged, "protected.yaml", 6)
            .changes_from(&old)
            .is_empty()
    );
    // In the 4th digit: one change, named.
    nudged.metrics.success_rate_during = Some(x * 1.001);
    let changes = Snapshot::of_run(&nudged, "protected.yaml", 6).changes_from(&old);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].metric, "metrics.success_rate_during");
    // ...which 2 digits would hide.
    let old2 = Snapshot::of_run(&base, "protected.yaml", 2);
    assert!(
        Snapshot::of_run(&nudged, "protected.yaml", 2)
            .changes_from(&old2)
            .is_empty()
    );
    // Counts are exact whatever the digits.
    let mut more = base.clone();
    more.metrics.requests += 1;
    assert_eq!(
        Snapshot::of_run(&more, "protected.yaml", 1)
            .changes_from(&Snapshot::of_run(&base, "protected.yaml", 1))
            .len(),
        1
    );
}

#[test]
fn edited_or_foreign_snapshots_are_bad_input_until_accepted() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            format!("{TINY}snapshot: true\n"),
        )
        .unwrap();
    }
    assert_eq!(test_cmd(&["--accept"], dir.path(), false).code, 0);
    let a = dir.path().join("snapshots/a.snap");
    let b = dir.path().join("snapshots/b.snap");
    let text = std::fs::read_to_string(&a).unwrap();

    // Hand-edited: exit 2 at the digest's line.
    let line = text
        .lines()
        .find(|l| l.starts_with("metrics.requests: "))
        .unwrap()
        .to_owned();
    std::fs::write(&a, text.replace(&line, "metrics.requests: 1")).unwrap();
    let out = test_cmd(&["a.yaml"], dir.path(), false);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("a.snap:10:"), "{}", out.stderr);
    assert!(out.stderr.contains("`info.digest`"), "{}", out.stderr);
    assert!(out.stderr.contains("edited by hand"), "{}", out.stderr);

    // Garbage: exit 2 at line 1.
    std::fs::write(&a, "not a snapshot\n").unwrap();
    let out = test_cmd(&["a.yaml"], dir.path(), false);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("a.snap:1:1: is not a loadsim snapshot"),
        "{}",
        out.stderr
    );

    // Another scenario's snapshot: exit 2 naming both.
    std::fs::write(&b, &text).unwrap();
    let out = test_cmd(&["b.yaml"], dir.path(), false);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("b.snap:7:"), "{}", out.stderr);
    assert!(
        out.stderr.contains("snapshot of scenario `a`, not of `b`"),
        "{}",
        out.stderr
    );

    // --accept writes both again from their runs.
    let out = test_cmd(&["--accept"], dir.path(), false);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(test_cmd(&[], dir.path(), true).code, 0);
}

#[test]
fn seed_readings_and_paired_differences_on_hand_checked_cases() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("twin.yaml"), TINY).unwrap();
    // Against itself on the same seeds, the paired difference is exactly 0 on every seed: its
    // mean is 0 with a zero-width interval.
    let file = format!(
        "{TINY}expect:
  - {{ metric: metrics.requests, eq: 0, seeds: 5, compare: {{ baseline: twin.yaml }} }}
  - {{ metric: metrics.success_rate, between: [0, 0], seeds: [2, 4], mean: true, compare: {{ baseline: twin.yaml }} }}
  - {{ metric: metrics.requests, gt: 0, seeds: 4, share: 1 }}
  - {{ metric: services.api.worst_case_attempts_per_request, eq: 1, seeds: 3, mean: true }}
"
    );
    std::fs::write(dir.path().join("self.yaml"), file).unwrap();
    let out = test_cmd(&["self.yaml", "--format", "json"], dir.path(), false);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        (v["passed"].as_u64(), v["failed"].as_u64()),
        (Some(4), Some(0))
    );
    let cases = &v["files"][0]["cases"];
    let seeds: Vec<u64> = cases[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [1, 2, 3, 4, 5]);
    assert!(
        cases[0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["value"] == 0.0)
    );
    assert_eq!(cases[1]["mean"]["mean"], 0.0);
    assert_eq!(cases[1]["mean"]["ci95"], serde_json::json!([0.0, 0.0]));
    assert_eq!(cases[1]["message"], "mean 0 ± 0 (95 % CI [0, 0], n = 2)");
    assert_eq!(cases[3]["mean"]["mean"], 1.0);
    // The closing line goes to stderr with --format json.
    assert_eq!(last_line(&out.stderr), "4 passed, 0 failed");

    // The requests of seeds 1..4, from `run --seeds`, decide a share assertion by hand.
    let runs = loadsim()
        .current_dir(dir.path())
        .args(["run", "twin.yaml", "--seeds", "1..4", "--format", "json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let mut requests: Vec<f64> = r[0]["metrics"]["metrics.requests"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    requests.sort_by(f64::total_cmp);
    // Between the 2nd smallest and the largest: holds on exactly 3 of 4 seeds.
    let share = format!(
        "{TINY}expect:
  - {{ metric: metrics.requests, ge: {}, seeds: 4, share: 0.75 }}
  - {{ metric: metrics.requests, ge: {}, seeds: 4, share: 0.76 }}
  - {{ metric: metrics.requests, ge: {}, seeds: 4 }}
",
        requests[1], requests[1], requests[1]
    );
    std::fs::write(dir.path().join("share.yaml"), share).unwrap();
    let out = test_cmd(&["share.yaml"], dir.path(), false);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with("    PASS") && lines[0].contains("holds on 3 of 4 seeds (needs 3)"),
        "{}",
        out.stdout
    );
    assert!(
        lines[1].starts_with("    FAIL") && lines[1].contains("holds on 3 of 4 seeds (needs 4)"),
        "{}",
        out.stdout
    );
    assert!(
        lines[2].starts_with("    FAIL") && lines[2].contains("(needs 4)"),
        "{}",
        out.stdout
    );
    assert_eq!(last_line(&out.stdout), "1 passed, 2 failed");
}

#[test]
fn junit_has_one_testcase_per_assertion_and_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.yaml"),
        format!(
            "{TINY}expect:
  - {{ metric: metrics.requests, gt: 0 }}
  - {{ metric: metrics.requests, lt: 0 }}
  - {{ metric: services.api.arrivals, ge: 0 }}
snapshot: true
"
        ),
    )
    .unwrap();
    let xml = dir.path().join("out/junit.xml");
    std::fs::create_dir_all(xml.parent().unwrap()).unwrap();
    let out = test_cmd(&["--junit", "out/junit.xml"], dir.path(), true);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let text = std::fs::read_to_string(&xml).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 4, "3 assertions and a snapshot");
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(failures, 2, "lt 0, and a missing snapshot on CI");
    assert_eq!(root.attribute("tests"), Some("4"));
    assert_eq!(root.attribute("failures"), Some("2"));
    let names: Vec<&str> = cases.iter().filter_map(|c| c.attribute("name")).collect();
    assert_eq!(names[2], "expect[2]: services.api.arrivals ge 0");
    assert_eq!(names[3], "snapshot");
    // JUnit's `time`: seconds of the runs each case read; the suite counts its one run once.
    let time = |n: &roxmltree::Node| -> f64 {
        let t = n.attribute("time").expect("a `time` attribute");
        t.parse::<f64>()
            .unwrap_or_else(|_| panic!("`{t}` is not a number"))
    };
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    let suite_time = time(&suite);
    for c in &cases {
        let t = time(c);
        assert!(t >= 0.0 && t.is_finite(), "{t}");
        assert_eq!(
            t, suite_time,
            "every case of this file read its one run, which the suite counts once"
        );
    }
}

#[test]
fn bad_expectations_are_located_with_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            "  - { metric: metrics.recovery, le: 5 }\n",
            &[
                "bad.yaml:18:7: `expect[0].metric`: unknown metric `metrics.recovery`, did you mean `metrics.recovery_s`?",
            ],
        ),
        (
            "  - { metric: metrics.recovery_s, le: fast }\n",
            &["bad.yaml:18:", "`expect[0].le`", "expected a number"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, seeds: 10, share: 1.5 }\n",
            &["`expect[0].share`: must be in (0, 1]", "not 1.5"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, seeds: 10, share: 0 }\n",
            &["`expect[0].share`: must be in (0, 1]"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, share: 0.9 }\n",
            &["`expect[0].share`: `share` reads many seeds; add `seeds: N`"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, ge: 1 }\n",
            &["`expect[0].ge`: `le` and `ge` in one assertion"],
        ),
        (
            "  - { metric: metrics.recovery_s }\n",
            &["`expect[0]`: has no comparison"],
        ),
        (
            "  - { metric: metrics.success_rate, is: never }\n",
            &["`expect[0].is`: `is: never` is for `metrics.recovery_s`"],
        ),
        (
            "  - { metric: metrics.recovery_s, is: sometimes }\n",
            &["`expect[0].is`", "unknown value `sometimes`"],
        ),
        (
            "  - { metric: metrics.recovery_s, between: [5, 1] }\n",
            &["`expect[0].between`: `[5, 1]` is empty"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, seeds: [1, 2, 1] }\n",
            &["`expect[0].seeds`: lists seed 1 twice"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, seeds: nine }\n",
            &["`expect[0].seeds`: must be a number of seeds"],
        ),
        (
            "  - { metric: engine.wall_s, le: 5 }\n",
            &["`expect[0].metric`: `engine.wall_s` is what the run cost"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, compare: { baseline: missing.yaml } }\n",
            &["`expect[0].compare.baseline`: cannot load the baseline `missing.yaml`"],
        ),
        (
            "  - { metric: metrics.recovery_s, le: 5, lte: 3 }\n",
            &["`expect[0].lte`", "unknown key `lte`, did you mean `lt`?"],
        ),
    ];
    for (entry, wants) in cases {
        std::fs::write(
            dir.path().join("bad.yaml"),
            format!("{TINY}expect:\n{entry}"),
        )
        .unwrap();
        let out = test_cmd(&["bad.yaml"], dir.path(), false);
        assert_eq!(out.code, 2, "{entry}: {}{}", out.stdout, out.stderr);
        for want in *wants {
            assert!(
                out.stderr.contains(want),
                "{entry}: `{want}` not in\n{}",
                out.stderr
            );
        }
        assert!(
            out.stdout.is_empty(),
            "nothing runs on bad input: {}",
            out.stdout
        );
    }
    // `loadsim check` refuses them too, before `loadsim test` would.
    std::fs::write(
        dir.path().join("bad.yaml"),
        format!("{TINY}expect:\n  - {{ metric: metrics.recovery, le: 5 }}\n"),
    )
    .unwrap();
    let out = loadsim()
        .current_dir(dir.path())
        .args(["check", "bad.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("bad.yaml:18:7: `expect[0].metric`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A snapshot with impossible digits, and a file with nothing to test.
    std::fs::write(
        dir.path().join("bad.yaml"),
        format!("{TINY}snapshot: {{ digits: 30 }}\n"),
    )
    .unwrap();
    let out = test_cmd(&["bad.yaml"], dir.path(), false);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("bad.yaml:17:13: `snapshot.digits`: must be from 1 to 17"),
        "{}",
        out.stderr
    );
    std::fs::write(dir.path().join("bad.yaml"), TINY).unwrap();
    let out = test_cmd(&["bad.yaml"], dir.path(), false);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("nothing to check"), "{}", out.stderr);
    // A folder with no test at all.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(test_cmd(&[], empty.path(), false).code, 2);
}

#[test]
fn expect_and_snapshot_do_not_change_a_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain.yaml"), TINY).unwrap();
    std::fs::write(
        dir.path().join("tested.yaml"),
        format!("{TINY}expect:\n  - {{ metric: metrics.requests, gt: 0 }}\nsnapshot: true\n"),
    )
    .unwrap();
    let csv = |f: &str| {
        let o = loadsim()
            .current_dir(dir.path())
            .args(["run", f, "--format", "csv-long"])
            .output()
            .unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .filter(|l| !l.contains(",engine,"))
            .map(|l| l.replacen("plain,", "tested,", 1))
            .collect::<Vec<_>>()
    };
    assert_eq!(csv("plain.yaml"), csv("tested.yaml"));
}

#[test]
fn review_refuses_without_a_terminal_and_walks_pending_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), format!("{TINY}snapshot: true\n")).unwrap();
    let out = test_cmd(&["--review"], dir.path(), false);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--review"), "{}", out.stderr);

    // The review itself, answering from a buffer: accept the first, reject the second.
    let snaps = dir.path().join("snapshots");
    std::fs::create_dir_all(&snaps).unwrap();
    let pending: Vec<_> = ["x", "y"]
        .iter()
        .map(|n| {
            let new = snaps.join(format!("{n}.snap.new"));
            std::fs::write(&new, "pending").unwrap();
            loadsim::commands::test::Pending {
                file: format!("{n}.yaml"),
                snap: snaps.join(format!("{n}.snap")),
                new,
                details: vec!["metrics.requests: 1 → 2".into()],
                case_failed: true,
            }
        })
        .collect();
    let mut shown = Vec::new();
    let done = loadsim::commands::test::review(
        &pending,
        &mut std::io::Cursor::new("what\na\nr\n"),
        &mut shown,
    )
    .unwrap();
    assert_eq!((done.accepted, done.rejected, done.skipped), (1, 1, 0));
    assert_eq!(done.accepted_failures, 1);
    assert!(snaps.join("x.snap").exists() && !snaps.join("x.snap.new").exists());
    assert!(!snaps.join("y.snap").exists() && !snaps.join("y.snap.new").exists());
    let shown = String::from_utf8(shown).unwrap();
    assert!(shown.contains("metrics.requests: 1 → 2"), "{shown}");
}

#[test]
fn run_seeds_reports_means_with_intervals_and_every_seed_in_json() {
    let out = loadsim()
        .args(["run", "--seeds", "3,5,9", "--format", "json"])
        .arg(scenario_path("protected"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["seeds"], serde_json::json!([3, 5, 9]));
    let m = &v[0]["metrics"]["metrics.success_rate_during"];
    let values: Vec<f64> = m["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    // Each seed's value is that seed's own run.
    for (i, seed) in [3u64, 5, 9].into_iter().enumerate() {
        let single = run("protected", &[], seed)
            .metrics
            .success_rate_during
            .unwrap();
        assert_eq!(values[i], single, "seed {seed}");
    }
    let mean = values.iter().sum::<f64>() / 3.0;
    assert!((m["mean"].as_f64().unwrap() - mean).abs() < 1e-12);
    let [lo, hi] = [
        m["ci95"][0].as_f64().unwrap(),
        m["ci95"][1].as_f64().unwrap(),
    ];
    assert!(lo < mean && mean < hi);
    // The table: one row per metric, `mean ± half-width`.
    let table = loadsim()
        .args(["run", "--seeds", "1..3"])
        .arg(scenario_path("protected"))
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("over seeds 1..3"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("metrics.success_rate_during") && l.contains(" ± ")),
        "{text}"
    );
    // Bad lists are exit 2.
    for bad in ["5..1", "1,x", "1,1"] {
        loadsim()
            .args(["run", "--seeds", bad])
            .arg(scenario_path("protected"))
            .assert()
            .code(2);
    }
}

#[test]
fn version_names_the_commit_and_verbose_the_model_version() {
    let out = loadsim().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("loadsim {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    assert!(!text.contains("model version"));
    let out = loadsim().args(["-V", "--verbose"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("model version {}", loadsim::MODEL_VERSION)),
        "{text}"
    );
    // --verbose alone is a usage error.
    loadsim().arg("--verbose").assert().code(2);
}

#[test]
fn example_scenarios_validate_against_the_schema_and_name_it() {
    let schema = loadsim::schema::scenario();
    let v = jsonschema::draft7::new(&schema).unwrap();
    for name in ["checkout", "checkout_lifo"] {
        let text =
            std::fs::read_to_string(root().join(format!("examples/ci/{name}.yaml"))).unwrap();
        assert_eq!(
            text.lines().next(),
            Some("# yaml-language-server: $schema=../../schema/scenario.schema.json")
        );
        let yaml: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
        let doc = serde_json::to_value(yaml).unwrap();
        let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
    // The schema knows the new keys: a typo in an assertion is flagged in the editor too.
    let bad = serde_json::json!({"extends": "x.yaml", "expect": [{"metric": "m", "lee": 5}]});
    assert!(!v.is_valid(&bad));
}
