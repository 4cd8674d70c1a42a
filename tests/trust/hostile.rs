//! Hostile input to the scenario loader: arbitrary bytes, random YAML and mutations of the
//! shipped `scenarios/*.yaml` end as diagnostics (or a valid scenario), never a panic; and the
//! shapes that used to cost minutes or gigabytes (deep nesting, alias expansion, huge keys) are
//! refused quickly. The sweep loader, once it lands, needs the same properties.

use std::path::Path;
use std::time::{Duration, Instant};

use loadsim::scenario::{Document, Scenario};
use proptest::prelude::*;

use super::common::scenario_path;

/// Loads `text` as a scenario file the way `loadsim run` does (through a real file, so the
/// UTF-8 and size checks run too). Any outcome but a panic is fine; errors must say something.
fn load_text(dir: &Path, name: &str, text: &[u8]) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    if let Err(e) = Scenario::load(&path, &[], None) {
        assert!(!e.diagnostics.is_empty());
        let shown = e.to_string();
        assert!(shown.starts_with("error: "), "{shown}");
    }
}

/// Times one load, which must end within `limit`.
fn load_within(text: &str, limit: Duration) -> Result<(), String> {
    let start = Instant::now();
    let r = Document::from_text(Path::new("h.yaml"), text)
        .and_then(|d| Scenario::from_document(&d))
        .map(drop)
        .map_err(|e| e.to_string());
    let took = start.elapsed();
    assert!(took < limit, "took {took:?}");
    r
}

/// Scalars that have broken parsers or validators somewhere.
const NASTY_SCALARS: &[&str] = &[
    ".nan",
    ".inf",
    "-.inf",
    "1e30",
    "-1",
    "1e15",
    "18446744073709551616",
    "4294967296",
    "0",
    "-0",
    "0x7fffffff",
    "~",
    "null",
    "''",
    "\"\"",
    "[]",
    "{}",
    "!!binary aGVsbG8=",
    "*nope",
    "&a x",
    "1000000000000s",
    "600000years",
    "99999999999999999999999s",
    "1ns",
    "0s",
    "-1s",
    "true",
    "[1, [2, [3]]]",
    "\"\\u0000\"",
    "{a: 1, a: 2}",
];

fn nasty_scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(NASTY_SCALARS).prop_map(str::to_owned),
        any::<i64>().prop_map(|x| x.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        "[a-z_]{0,12}",
        "[0-9]{1,25}(ms|s|us|ns|h|d|years)?",
    ]
}

/// Random YAML: nested mappings and sequences, flow and block, anchors and aliases, the keys a
/// scenario uses and nasty scalars.
fn random_yaml() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        prop::sample::select(vec![
            "duration",
            "drain",
            "seed",
            "arrivals",
            "rate",
            "client",
            "entry",
            "attempt_timeout",
            "retries",
            "services",
            "slots",
            "queue_cap",
            "calls",
            "service_time",
            "dist",
            "mean",
            "faults",
            "kind",
            "extends",
            "<<",
        ])
        .prop_map(str::to_owned),
        "[a-z]{1,6}",
    ];
    let leaf = nasty_scalar().boxed();
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|kv| {
                let body: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("{{{}}}", body.join(", "))
            }),
        ]
    })
}

/// Ways to damage a shipped file.
#[derive(Clone, Debug)]
pub(crate) enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    /// Replace the value after the first `:` of a line.
    ReplaceValue(usize, String),
    /// Insert bytes at a position.
    Insert(usize, Vec<u8>),
    /// Remove a range of bytes.
    Cut(usize, usize),
    /// Change the indentation of a line.
    Indent(usize, usize),
    SwapLines(usize, usize),
}

pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), nasty_scalar()).prop_map(|(l, v)| Mutation::ReplaceValue(l, v)),
        (
            any::<usize>(),
            prop::collection::vec(
                prop_oneof![
                    any::<u8>(),
                    prop::sample::select(b":-[]{}&*!|>'\"#%@` \n\t".to_vec())
                ],
                1..8
            )
        )
            .prop_map(|(at, b)| Mutation::Insert(at, b)),
        (any::<usize>(), 1usize..40).prop_map(|(at, n)| Mutation::Cut(at, n)),
        (any::<usize>(), 0usize..12).prop_map(|(l, n)| Mutation::Indent(l, n)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
    ]
}

pub(crate) fn apply(text: &str, m: &Mutation) -> Vec<u8> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len().max(1);
    match m {
        Mutation::DeleteLine(l) => {
            if !lines.is_empty() {
                lines.remove(l % n);
            }
        }
        Mutation::DuplicateLine(l) => {
            if !lines.is_empty() {
                let x = lines[l % n].clone();
                lines.insert(l % n, x);
            }
        }
        Mutation::ReplaceValue(l, v) => {
            if let Some(line) = lines.get_mut(l % n)
                && let Some(i) = line.find(':')
            {
                *line = format!("{}: {v}", &line[..i]);
            }
        }
        Mutation::Indent(l, k) => {
            if let Some(line) = lines.get_mut(l % n) {
                *line = format!("{}{}", " ".repeat(*k), line.trim_start());
            }
        }
        Mutation::SwapLines(a, b) => {
            if !lines.is_empty() {
                lines.swap(a % n, b % n);
            }
        }
        Mutation::Insert(at, bytes) => {
            let mut b = text.as_bytes().to_vec();
            let at = at % (b.len() + 1);
            b.splice(at..at, bytes.iter().copied());
            return b;
        }
        Mutation::Cut(at, len) => {
            let mut b = text.as_bytes().to_vec();
            let at = at % (b.len() + 1);
            let end = (at + len).min(b.len());
            b.drain(at..end);
            return b;
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

const SHIPPED: [&str; 5] = ["base", "naive", "deadline", "deadline_budget", "protected"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let dir = tempfile::tempdir().unwrap();
        load_text(dir.path(), "s.yaml", &bytes);
    }

    #[test]
    fn random_yaml_never_panics(doc in random_yaml()) {
        let dir = tempfile::tempdir().unwrap();
        load_text(dir.path(), "s.yaml", doc.as_bytes());
        // The same text as a `--set` value.
        let sets = vec![format!("services={doc}")];
        let _ = Scenario::load(&scenario_path("naive"), &sets, None);
    }

    /// Every shipped file, damaged one to three times, next to undamaged copies of the files
    /// it extends (so `extends` is followed), then loaded as `loadsim run` would.
    #[test]
    fn mutated_shipped_scenarios_never_panic(
        which in 0usize..SHIPPED.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        for name in SHIPPED {
            std::fs::copy(scenario_path(name), dir.path().join(format!("{name}.yaml"))).unwrap();
        }
        let name = SHIPPED[which];
        let mut text = std::fs::read(scenario_path(name)).unwrap();
        for m in &mutations {
            text = apply(&String::from_utf8_lossy(&text), m);
        }
        load_text(dir.path(), &format!("{name}.yaml"), &text);
    }
}

/// Billion laughs: nine levels of nine aliases each.
fn billion_laughs() -> String {
    let mut lines = vec!["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]".to_owned()];
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        lines.push(format!("a{i}: &a{i} [{refs}]"));
    }
    lines.join("\n")
}

#[test]
fn alias_bombs_are_refused_quickly() {
    let e = load_within(&billion_laughs(), Duration::from_secs(2)).unwrap_err();
    assert!(e.contains("aliases"), "{e}");
    // Few alias uses, each copying a big node: the typed parser's own limit (how often aliases
    // are followed) lets this through; it took gigabytes before the preflight walk.
    let big: Vec<String> = (0..20_000).map(|i| format!("k{i}: {i}")).collect();
    let text = format!(
        "a: &a {{{}}}\nb: [{}]\n",
        big.join(", "),
        vec!["*a"; 20_000].join(", ")
    );
    let e = load_within(&text, Duration::from_secs(5)).unwrap_err();
    assert!(e.contains("aliases") && e.contains("h.yaml:2:"), "{e}");
}

#[test]
fn deep_nesting_is_refused_quickly_with_a_line() {
    for text in [
        format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000)),
        format!("a: {}1{}", "{b: ".repeat(50_000), "}".repeat(50_000)),
        (0..200).map(|i| format!("{}k:\n", " ".repeat(i))).collect(),
        format!("a:\n  {}x\n", "- ".repeat(10_000)),
    ] {
        let e = load_within(&text, Duration::from_secs(2)).unwrap_err();
        assert!(e.contains("deeper than 64"), "{e}");
        assert!(e.contains("h.yaml:"), "{e}");
        assert!(e.len() < 2_000, "the diagnostic is {} bytes", e.len());
    }
    // Through `--set` as well.
    let sets = vec![format!("services={}", "[".repeat(10_000))];
    let e = Scenario::load(&scenario_path("naive"), &sets, None).unwrap_err();
    assert!(e.to_string().contains("deeper than 64"), "{e}");
}

#[test]
fn huge_keys_and_many_keys_cost_little() {
    // One long key above many children: indexing every child's dotted path would cost
    // key length × children bytes (here 400 KB × 100 000).
    let mut text = format!("? {}\n:\n", "x".repeat(400_000));
    for i in 0..100_000 {
        text.push_str(&format!("  c{i}: 1\n"));
    }
    let e = load_within(&text, Duration::from_secs(20)).unwrap_err();
    assert!(e.len() < 2_000, "the diagnostic is {} bytes", e.len());
    assert!(e.contains("unknown key"), "{}", &e[..200.min(e.len())]);
}

#[test]
fn a_thousand_services_in_a_chain_load_check_and_run() {
    let chain = |n: usize, cycle: bool| {
        let mut y = String::from(
            "duration: 1s\ndrain: 1s\narrivals: {rate: 20}\nclient: {entry: s0, attempt_timeout: 10s}\nservices:\n",
        );
        for i in 0..n {
            if i + 1 < n {
                y.push_str(&format!(
                    "  s{i}: {{slots: 4, calls: {{s{}: {{attempt_timeout: 10s}}}}}}\n",
                    i + 1
                ));
            } else if cycle {
                y.push_str(&format!(
                    "  s{i}: {{slots: 4, calls: {{s0: {{attempt_timeout: 10s}}}}}}\n"
                ));
            } else {
                y.push_str(&format!(
                    "  s{i}: {{slots: 4, service_time: {{dist: constant, value: 1ms}}}}\n"
                ));
            }
        }
        y
    };
    let e = load_within(&chain(1_001, false), Duration::from_secs(10)).unwrap_err();
    assert!(e.contains("at most 1000"), "{}", &e[..300.min(e.len())]);
    let e = load_within(&chain(1_000, true), Duration::from_secs(10)).unwrap_err();
    assert!(e.contains("cycle"), "{}", &e[..300.min(e.len())]);
    // The deepest accepted chain runs on a worker thread's stack (each request descends the chain
    // by nested calls within one event).
    let sc = super::common::parse(&chain(1_000, false)).unwrap();
    let r = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || loadsim::model::run(&sc).map(|r| r.metrics.succeeded))
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert!(r.unwrap() > 0);
}

#[test]
fn layered_graphs_with_exponentially_many_paths_check_quickly() {
    // 40 layers of two services, each calling both of the next layer: 2^39 call paths.
    let mut y = String::from(
        "duration: 1s\narrivals: {rate: 1}\nclient: {entry: s0_0, attempt_timeout: 1s}\nservices:\n",
    );
    for l in 0..40 {
        for j in 0..2 {
            if l == 39 {
                y.push_str(&format!("  s{l}_{j}: {{slots: 1}}\n"));
            } else {
                y.push_str(&format!(
                    "  s{l}_{j}: {{slots: 1, calls: {{s{n}_0: {{attempt_timeout: 1s}}, s{n}_1: {{attempt_timeout: 1s}}}}}}\n",
                    n = l + 1
                ));
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("layers.yaml");
    std::fs::write(&path, y).unwrap();
    let start = Instant::now();
    let text = loadsim::commands::check::check(std::slice::from_ref(&path), &[], false)
        .unwrap()
        .stdout;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(text.contains("call paths in all"), "{text}");
    // Running it is refused before it runs. R1 at the last layer is 2^39 attempts per request,
    // over any event limit; the pilot (here the whole 1 s run, exact) finds few events, and the
    // memory estimate refuses it: each first attempt's timer on 2^39 paths stays queued.
    let req = loadsim::commands::run::RunRequest {
        files: vec![path],
        sets: vec![],
        seed: None,
        options: loadsim::model::RunOptions::default(),
        yes: false,
    };
    let e = loadsim::commands::run::run_all(&req).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(
        e.to_string().contains("pending events") && e.to_string().contains("--max-memory"),
        "{e}"
    );
}

const SWEEPS: [&str; 3] = ["blog37", "timeouts", "protections"];

/// The sweep loader as `loadsim sweep` uses it, up to the point where cells would run: the spec,
/// the cell count guard, expansion and the check of every cell's scenario.
fn load_sweep(path: &Path) {
    use loadsim::sweep::expand::{Sources, cell_count, expand, prepare};
    use loadsim::sweep::spec::SweepSpec;
    let Ok(spec) = SweepSpec::load(path) else {
        return;
    };
    if loadsim::guard::check_cell_limit(cell_count(&spec), false).is_err() {
        return;
    }
    let cells = expand(&spec);
    if let Ok(sources) = Sources::load(&spec) {
        let _ = prepare(&spec, &sources, &cells);
    }
}

/// A copy of the repository's `scenarios/` and `sweeps/` in `dir`, so relative paths resolve.
fn sweep_tree(dir: &Path) {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let p = entry.unwrap().path();
            let target = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy_dir(&p, &target);
            } else {
                std::fs::copy(&p, target).unwrap();
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["scenarios", "sweeps"] {
        copy_dir(&root.join(sub), &dir.join(sub));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn the_sweep_loader_never_panics_on_bytes_or_random_yaml(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        doc in random_yaml(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("a.yaml", bytes), ("b.yaml", doc.into_bytes())] {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            load_sweep(&p);
        }
    }

    /// Each shipped sweep, damaged one to three times, next to the scenarios it names.
    #[test]
    fn mutated_shipped_sweeps_never_panic(
        which in 0usize..SWEEPS.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        sweep_tree(dir.path());
        let path = dir.path().join("sweeps").join(format!("{}.yaml", SWEEPS[which]));
        let mut text = std::fs::read(&path).unwrap();
        for m in &mutations {
            text = apply(&String::from_utf8_lossy(&text), m);
        }
        std::fs::write(&path, text).unwrap();
        load_sweep(&path);
    }
}
