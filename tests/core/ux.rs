//! Fitting the user's tools: the editor schema (generated, committed, and every shipped file valid
//! against it), `loadsim new` templates that load and run, completions, help with examples,
//! colour only when wanted, and the long CSV.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use loadsim::commands::new::{Template, render};
use loadsim::config::duration::parse_duration;
use loadsim::scenario::Scenario;
use serde_json::Value;

use super::common::{POLICIES, scenario_path};

pub(super) fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The YAML files under `dir`, at any depth, sorted.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The modeline that points a shipped file at the committed schema `schema/<kind>.schema.json`.
fn modeline(file: &Path, kind: &str) -> String {
    let depth = file
        .strip_prefix(root())
        .unwrap()
        .components()
        .count()
        .saturating_sub(1);
    format!(
        "# yaml-language-server: $schema={}schema/{kind}.schema.json",
        "../".repeat(depth)
    )
}

/// Every shipped file of `dir` validates against `schema`, and names it on its first line.
fn shipped_files_validate(dir: &str, kind: &str, schema: &Value) {
    let v = validator(schema);
    let files = yaml_files(&root().join(dir));
    assert!(!files.is_empty(), "no files in {dir}/");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let errors = schema_errors(&v, &yaml_as_json(&text));
        assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
        let line = modeline(&f, kind);
        assert_eq!(
            text.lines().next(),
            Some(line.as_str()),
            "{}: make `{line}` its first line so editors find the schema",
            f.display()
        );
    }
}

fn yaml_as_json(text: &str) -> Value {
    let v: yaml_serde::Value = yaml_serde::from_str(text).unwrap();
    serde_json::to_value(v).unwrap()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft7::new(schema).expect("the generated schema is a valid draft-7 schema")
}

fn schema_errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn every_shipped_scenario_validates_against_the_generated_schema() {
    shipped_files_validate("scenarios", "scenario", &loadsim::schema::scenario());
}

#[test]
fn every_shipped_sweep_validates_against_the_generated_schema() {
    shipped_files_validate("sweeps", "sweep", &loadsim::schema::sweep());
}

#[test]
fn the_committed_schemas_are_the_generated_ones() {
    for (kind, schema) in [
        ("scenario", loadsim::schema::scenario()),
        ("sweep", loadsim::schema::sweep()),
        ("report", loadsim::report::schema::run_report()),
    ] {
        let generated = loadsim::schema::to_text(&schema);
        let rel = format!("schema/{kind}.schema.json");
        let path = root().join(&rel);
        if std::env::var_os("LOADSIM_UPDATE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{rel} is out of date; regenerate it with `cargo run -- schema {kind} > {rel}` \
             (or LOADSIM_UPDATE_SCHEMA=1 cargo test)"
        );
    }
}

#[test]
fn the_sweep_schema_catches_typos() {
    let v = validator(&loadsim::schema::sweep());
    let text = std::fs::read_to_string(root().join("sweeps/blog37.yaml")).unwrap();
    for (what, bad) in [
        ("top-level typo", text.replace("grid:", "gird:")),
        ("table typo", text.replacen("metric:", "metrc:", 1)),
        (
            "scenarios not a list",
            text.replace("scenarios:\n", "scenarios: 3\nx:\n"),
        ),
    ] {
        assert!(
            !schema_errors(&v, &yaml_as_json(&bad)).is_empty(),
            "{what}: the schema accepted it"
        );
    }
}

#[test]
fn the_schema_catches_what_the_loader_refuses() {
    let v = validator(&loadsim::schema::scenario());
    let base = std::fs::read_to_string(scenario_path("base")).unwrap();
    let bad = [
        (
            "typo",
            base.replace("slots: 16", "slots: 16\n    queue_capp: 3"),
        ),
        ("bare number", base.replace("drain: 30s", "drain: 30")),
        ("no unit", base.replace("from: 10s", "from: '10'")),
        ("wrong enum", base.replace("kind: slow", "kind: slowly")),
        ("missing key", base.replace("  entry: gateway\n", "")),
        ("negative", base.replace("slots: 16", "slots: -1")),
    ];
    for (what, text) in bad {
        assert!(
            !schema_errors(&v, &yaml_as_json(&text)).is_empty(),
            "{what}: the schema accepted it"
        );
    }
    // A file with `extends` states only what differs: nothing is required, but keys are checked.
    let partial = yaml_as_json("extends: base.yaml\nservices:\n  svc_b: { queue_cap: 4 }\n");
    assert!(schema_errors(&v, &partial).is_empty());
    let partial_typo = yaml_as_json("extends: base.yaml\nservices:\n  svc_b: { queue_capp: 4 }\n");
    assert!(!schema_errors(&v, &partial_typo).is_empty());
    // `null` removes a key of the base.
    let removal = yaml_as_json("extends: base.yaml\nfaults: { slow_b: null }\nseed: ~\n");
    assert!(schema_errors(&v, &removal).is_empty());
    let removal_typo = yaml_as_json("extends: base.yaml\nfaults: { slow_b: {kind: slowly} }\n");
    assert!(!schema_errors(&v, &removal_typo).is_empty());
}

#[test]
fn the_duration_pattern_agrees_with_the_parser() {
    let v = validator(&loadsim::schema::scenario());
    let duration_ok = |s: &str| v.is_valid(&yaml_as_json(&format!("extends: x\nduration: '{s}'")));
    for s in [
        "20ms", "1s", "0s", "500us", "1m 30s", "1m30s", "1.5s", "2h", "3 days", "10 ms", "7µs",
        "1week",
    ] {
        assert!(parse_duration(s).is_ok(), "parser refuses {s}");
        assert!(duration_ok(s), "schema refuses {s}");
    }
    for s in ["20", "1.5", "", "ms", "20 parsecs", "-1s", "1s,", "1.s"] {
        assert!(parse_duration(s).is_err(), "parser accepts {s}");
        assert!(!duration_ok(s), "schema accepts {s}");
    }
}

#[test]
fn each_template_is_its_shipped_scenario_written_out() {
    let dir = tempfile::tempdir().unwrap();
    for t in Template::ALL {
        let file = dir.path().join(format!("{}.yaml", t.name()));
        std::fs::write(&file, render(t, t.name(), "x.yaml", Some("s.json"))).unwrap();
        let written = Scenario::load(&file, &[], None).unwrap_or_else(|e| panic!("{e}"));
        let shipped = Scenario::load(&scenario_path(t.name()), &[], None).unwrap();
        assert_eq!(written, shipped, "template {} drifted", t.name());
    }
    assert_eq!(
        Template::ALL.map(Template::name),
        POLICIES,
        "one template per shipped policy"
    );
}

/// The lines after "uncomment to try", with their `# ` removed, as a user would.
fn uncomment_all(text: &str) -> String {
    let mut out = String::new();
    let mut on = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        match trimmed.strip_prefix("# ") {
            Some(rest) if on => out.push_str(&format!("{indent}{rest}")),
            _ => {
                on = trimmed.starts_with('#') && trimmed.contains("uncomment to try");
                out.push_str(line);
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn the_commented_out_protections_in_templates_are_valid() {
    let dir = tempfile::tempdir().unwrap();
    for t in Template::ALL {
        let text = uncomment_all(&render(t, t.name(), "x.yaml", None));
        assert!(text.contains("\n        circuit_breaker:"), "{text}");
        assert!(text.contains("\n    codel:"), "{text}");
        let file = dir.path().join(format!("{}.yaml", t.name()));
        std::fs::write(&file, text).unwrap();
        Scenario::load(&file, &[], None).unwrap_or_else(|e| panic!("{}: {e}", t.name()));
    }
}

#[test]
fn new_writes_a_scenario_that_runs_as_is_and_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    for t in ["naive", "deadline", "deadline_budget", "protected"] {
        let name = format!("my_{t}");
        loadsim()
            .current_dir(dir.path())
            .args(["new", &format!("chains/{name}"), "--from", t])
            .assert()
            .success()
            .stdout("");
        let file = dir.path().join("chains").join(format!("{name}.yaml"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("# yaml-language-server: $schema=scenario.schema.json\n"));
        let out = loadsim()
            .current_dir(dir.path())
            .args(["run", "--format", "json"])
            .arg(&file)
            .assert()
            .success();
        let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(v[0]["scenario"], name.as_str());
    }
    let schema = std::fs::read_to_string(dir.path().join("chains/scenario.schema.json")).unwrap();
    assert_eq!(
        schema,
        loadsim::schema::to_text(&loadsim::schema::scenario())
    );
    // An existing file is not overwritten without --force.
    let again = loadsim()
        .current_dir(dir.path())
        .args(["new", "chains/my_naive"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&again.get_output().stderr).into_owned();
    assert!(err.contains("already exists"), "{err}");
    loadsim()
        .current_dir(dir.path())
        .args(["new", "chains/my_naive", "--force", "--no-schema"])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("chains/my_naive.yaml")).unwrap();
    assert!(!text.contains("yaml-language-server"));
}

#[test]
fn new_inside_a_project_with_a_schema_folder_points_at_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("schema")).unwrap();
    std::fs::write(dir.path().join("schema/scenario.schema.json"), "{}").unwrap();
    loadsim()
        .current_dir(dir.path())
        .args(["new", "scenarios/teams/checkout"])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("scenarios/teams/checkout.yaml")).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=../../schema/scenario.schema.json\n"),
        "{text}"
    );
    assert!(
        !dir.path()
            .join("scenarios/teams/scenario.schema.json")
            .exists()
    );
    // The project's schema is not touched.
    let kept = std::fs::read_to_string(dir.path().join("schema/scenario.schema.json")).unwrap();
    assert_eq!(kept, "{}");
}

#[test]
fn schema_command_prints_each_schema() {
    for (kind, schema) in [
        ("scenario", loadsim::schema::scenario()),
        ("sweep", loadsim::schema::sweep()),
        ("report", loadsim::report::schema::run_report()),
    ] {
        let out = loadsim().args(["schema", kind]).assert().success();
        let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        assert_eq!(v, schema);
    }
}

#[test]
fn completions_for_each_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = loadsim().args(["completions", shell]).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        for word in [
            "run", "check", "sweep", "merge", "new", "schema", "csv-long",
        ] {
            assert!(text.contains(word), "{shell}: no `{word}`");
        }
    }
}

/// The subcommands listed by `loadsim --help`.
pub(super) fn subcommands() -> Vec<String> {
    let out = loadsim().arg("--help").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_subcommand_help_has_a_worked_example() {
    let subs = subcommands();
    for known in [
        "run",
        "check",
        "sweep",
        "merge",
        "new",
        "schema",
        "completions",
    ] {
        assert!(
            subs.iter().any(|s| s == known),
            "{known} missing from {subs:?}"
        );
    }
    for sub in &subs {
        let out = loadsim().args([sub, "--help"]).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(
            text.contains("Examples:"),
            "`loadsim {sub} --help` has no worked example: add an `after_help` with an \
             \"Examples:\" section to its variant in src/cli.rs"
        );
        assert!(text.contains(&format!("loadsim {sub}")), "{sub} --help");
    }
    let out = loadsim().arg("--help").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("Exit codes:"), "{text}");
}

/// A scenario with a typo, for the colour tests.
fn typo_file(dir: &Path) -> PathBuf {
    let base = std::fs::read_to_string(scenario_path("base")).unwrap();
    let f = dir.join("typo.yaml");
    std::fs::write(
        &f,
        base.replace("slots: 16", "slots: 16\n    queue_capp: 3"),
    )
    .unwrap();
    f
}

fn stderr_of(f: &Path, env: &[(&str, &str)]) -> String {
    let mut cmd = loadsim();
    cmd.env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg("check").arg(f).assert().code(2);
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

#[test]
fn diagnostics_are_coloured_only_when_wanted() {
    let dir = tempfile::tempdir().unwrap();
    let f = typo_file(dir.path());
    // Not a terminal: plain text, with the suggestion, the line and the caret.
    let plain = stderr_of(&f, &[]);
    assert!(!plain.contains('\u{1b}'), "{plain:?}");
    assert!(plain.contains("did you mean `queue_cap`?"), "{plain}");
    assert!(plain.contains("typo.yaml:34:5"), "{plain}");
    assert!(plain.contains("|     queue_capp: 3\n"), "{plain}");
    assert!(plain.contains("|     ^"), "{plain}");
    // Forced on (as a terminal would be): coloured, and the same text once styles are stripped.
    let forced = stderr_of(&f, &[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains("\u{1b}["), "{forced:?}");
    let mut stripped = String::new();
    let mut chars = forced.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            stripped.push(c);
        }
    }
    assert_eq!(stripped, plain);
    // NO_COLOR wins over everything.
    let no_color = stderr_of(&f, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert_eq!(no_color, plain);
}

#[test]
fn csv_long_has_one_row_per_scenario_and_metric() {
    let out = loadsim()
        .args(["run", "--format", "csv-long"])
        .arg(scenario_path("naive"))
        .arg(scenario_path("protected"))
        .assert()
        .success();
    let mut rdr = csv::Reader::from_reader(out.get_output().stdout.as_slice());
    assert_eq!(
        rdr.headers().unwrap(),
        vec![
            "scenario", "seed", "metric", "scope", "entity", "name", "value"
        ]
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    // The wide CSV's columns are exactly the long CSV's metrics, per scenario.
    let wide = loadsim()
        .args(["run", "--format", "csv"])
        .arg(scenario_path("naive"))
        .assert()
        .success();
    let mut wide = csv::Reader::from_reader(wide.get_output().stdout.as_slice());
    let wide_cols: Vec<String> = wide
        .headers()
        .unwrap()
        .iter()
        .skip(2)
        .map(String::from)
        .collect();
    let naive_metrics: Vec<&str> = rows
        .iter()
        .filter(|r| &r[0] == "naive")
        .map(|r| &r[2])
        .collect();
    assert_eq!(naive_metrics, wide_cols);
    assert_eq!(rows.len(), 2 * wide_cols.len());
    let find = |scenario: &str, metric: &str| {
        rows.iter()
            .find(|r| &r[0] == scenario && &r[2] == metric)
            .unwrap_or_else(|| panic!("{scenario} {metric}"))
            .clone()
    };
    let q = find("protected", "services.svc_b.max_queue");
    assert_eq!(
        (&q[3], &q[4], &q[5], &q[6]),
        ("services", "svc_b", "max_queue", "16")
    );
    let e = find("naive", "calls.svc_a->svc_b.retries");
    assert_eq!((&e[3], &e[4], &e[5]), ("calls", "svc_a->svc_b", "retries"));
    let never = find("naive", "metrics.recovery_s");
    assert_eq!((&never[3], &never[4], &never[6]), ("metrics", "", ""));
}
