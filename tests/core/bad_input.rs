//! Bad input: every problem names the file, the key path and the line, and loading never panics.
//! Each case edits the shipped `base.yaml` in one place.

use std::path::{Path, PathBuf};

use loadsim::scenario::{ConfigError, Origin, Scenario};

use super::common::scenario_path;

fn base_text() -> String {
    std::fs::read_to_string(scenario_path("base")).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn load_err(path: &Path, sets: &[&str]) -> ConfigError {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match Scenario::load(path, &sets, None) {
        Ok(_) => panic!("{} loaded, expected an error", path.display()),
        Err(e) => e,
    }
}

/// (what, replace this, with this, expected key, expected words in the message)
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "unknown key",
        "slots: 16",
        "slots: 16\n    queue_capp: 3",
        "services.svc_b.queue_capp",
        "did you mean `queue_cap`?",
    ),
    (
        "wrong type",
        "slots: 16",
        "slots: many",
        "services.svc_b.slots",
        "wrong type",
    ),
    (
        "zero slots",
        "slots: 16",
        "slots: 0",
        "services.svc_b.slots",
        "at least 1",
    ),
    (
        "negative slots",
        "slots: 16",
        "slots: -4",
        "services.svc_b.slots",
        "-4",
    ),
    (
        "zero rate",
        "rate: 400",
        "rate: 0",
        "arrivals.rate",
        "positive",
    ),
    (
        "negative rate",
        "rate: 400",
        "rate: -3",
        "arrivals.rate",
        "positive",
    ),
    (
        "zero queue cap",
        "slots: 16",
        "slots: 16\n    queue_cap: 0",
        "services.svc_b.queue_cap",
        "remove it for an unbounded queue",
    ),
    (
        "call to an unknown service",
        "      svc_b:\n        attempt_timeout: 1s",
        "      svc_c:\n        attempt_timeout: 1s",
        "services.svc_a.calls.svc_c",
        "no service `svc_c`",
    ),
    (
        "a call cycle",
        "    slots: 16\n",
        "    slots: 16\n    calls:\n      gateway: { attempt_timeout: 1s }\n",
        "services.svc_b.calls.gateway",
        "cycle",
    ),
    (
        "fault on an unknown service",
        "service: svc_b",
        "service: svc_z",
        "faults.slow_b.service",
        "no service `svc_z`",
    ),
    (
        "fault window outside duration",
        "from: 10s",
        "from: 70s",
        "faults.slow_b.from",
        "outside the arrival period",
    ),
    (
        "fault ending past duration",
        "duration: 20s\n    service_time",
        "duration: 55s\n    service_time",
        "faults.slow_b.duration",
        "outside the arrival period",
    ),
    (
        "to before from",
        "duration: 20s\n    service_time",
        "to: 5s\n    service_time",
        "faults.slow_b.to",
        "after `from`",
    ),
    (
        "malformed duration",
        "retry_interval: 50ms",
        "retry_interval: 20 parsecs",
        "client.retry_interval",
        "not a duration",
    ),
    (
        "duration without unit",
        "retry_interval: 50ms",
        "retry_interval: 50",
        "client.retry_interval",
        "no unit",
    ),
    (
        "unknown distribution",
        "dist: exponential, mean: 20ms",
        "dist: gaussian, mean: 20ms",
        "services.svc_b.service_time.dist",
        "unknown value `gaussian`",
    ),
    (
        "parameter of another distribution",
        "dist: exponential, mean: 20ms",
        "dist: exponential, value: 20ms",
        "services.svc_b.service_time.value",
        "not a parameter of `exponential`",
    ),
    (
        "unknown entry service",
        "entry: gateway",
        "entry: gatewy",
        "client.entry",
        "did you mean `gateway`?",
    ),
    (
        "missing required key",
        "  attempt_timeout: 1s  # the user",
        "  # the user",
        "client",
        "attempt_timeout",
    ),
    (
        "unknown limiter algorithm",
        "slots: 16",
        "slots: 16\n    concurrency_limit: {algorithm: gradient}",
        "services.svc_b.concurrency_limit.algorithm",
        "did you mean `gradient2`?",
    ),
    (
        "negative limit",
        "slots: 16",
        "slots: 16\n    concurrency_limit: {algorithm: fixed, limit: -3}",
        "services.svc_b.concurrency_limit.limit",
        "-3",
    ),
    (
        "zero limit",
        "slots: 16",
        "slots: 16\n    concurrency_limit: {algorithm: fixed, limit: 0}",
        "services.svc_b.concurrency_limit.limit",
        "must be between 1 and",
    ),
    (
        "limiter min above max",
        "slots: 16",
        "slots: 16\n    concurrency_limit: {algorithm: gradient2, min_limit: 50, max_limit: 10}",
        "services.svc_b.concurrency_limit.max_limit",
        "at least the minimum limit",
    ),
    (
        "limiter ratio outside its range",
        "slots: 16",
        "slots: 16\n    concurrency_limit: {algorithm: aimd, backoff_ratio: 1.5}",
        "services.svc_b.concurrency_limit.backoff_ratio",
        "[0.5, 1)",
    ),
    (
        "limiter missing interval",
        "slots: 16",
        "slots: 16\n    concurrency_limit: {algorithm: envoy_gradient, min_rtt_calc_interval: 30s}",
        "services.svc_b.concurrency_limit.concurrency_update_interval",
        "is required",
    ),
    (
        "rate limit missing interval",
        "slots: 16",
        "slots: 16\n    rate_limit: {max_tokens: 10}",
        "services.svc_b.rate_limit.fill_interval",
        "is required",
    ),
    (
        "rate limit zero tokens",
        "slots: 16",
        "slots: 16\n    rate_limit: {max_tokens: 0, fill_interval: 1s}",
        "services.svc_b.rate_limit.max_tokens",
        "at least 1",
    ),
    (
        "ejection percentage above 100",
        "backoff: { base: 10ms }   # full",
        "backoff: { base: 10ms }\n        outlier_detection: {max_ejection_percent: 150}   # full",
        "services.gateway.calls.svc_a.outlier_detection.max_ejection_percent",
        "between 0 and 100",
    ),
    (
        "negative contention coefficient",
        "slots: 16",
        "slots: 16\n    contention: {sigma: 0.01, kappa: -0.001}",
        "services.svc_b.contention.kappa",
        "0 or more",
    ),
    (
        "call probability above 1",
        "backoff: { base: 10ms }   # full",
        "backoff: { base: 10ms }\n        probability: 2   # full",
        "services.gateway.calls.svc_a.probability",
        "between 0 and 1",
    ),
    (
        "empty stages",
        "slots: 128 ",
        "stages: []\n    slots: 128 ",
        "services.svc_a.stages",
        "lists no stage",
    ),
    (
        "quantiles that decrease",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { p50: 20ms, p99: 10ms }   # capacity",
        "services.svc_b.service_time.p99",
        "cannot decrease",
    ),
    (
        "p0 is not a quantile",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { p0: 1ms, p50: 20ms, p99: 180ms }   # capacity",
        "services.svc_b.service_time.p0",
        "give `min`",
    ),
    (
        "p100 is not a quantile",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { p50: 20ms, p100: 1s }   # capacity",
        "services.svc_b.service_time.p100",
        "give `max`",
    ),
    (
        "one quantile",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { p50: 20ms }   # capacity",
        "services.svc_b.service_time",
        "at least two",
    ),
    (
        "a zero quantile",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { p50: 0s, p99: 1s }   # capacity",
        "services.svc_b.service_time.p50",
        "longer than 0s",
    ),
    (
        "min above the lowest quantile",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { p50: 20ms, p99: 180ms, min: 30ms }   # capacity",
        "services.svc_b.service_time.min",
        "above `p50`",
    ),
    (
        "quantiles beside dist",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: exponential, mean: 20ms, p99: 1s }   # capacity",
        "services.svc_b.service_time.p99",
        "remove `dist`",
    ),
    (
        "unsorted histogram buckets",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: histogram, buckets: [{le: 10ms, count: 5}, {le: 5ms, count: 9}] }   # capacity",
        "services.svc_b.service_time.buckets[1].le",
        "increasing `le`",
    ),
    (
        "histogram counts decreasing",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: histogram, buckets: [{le: 5ms, count: 9}, {le: 10ms, count: 5}] }   # capacity",
        "services.svc_b.service_time.buckets[1].count",
        "never decrease",
    ),
    (
        "+Inf bucket not last",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: histogram, buckets: [{le: +Inf, count: 9}, {le: 10ms, count: 9}] }   # capacity",
        "services.svc_b.service_time.buckets[1].le",
        "must be the last",
    ),
    (
        "empty histogram",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: histogram, buckets: [{le: 5ms, count: 0}] }   # capacity",
        "services.svc_b.service_time.buckets",
        "empty",
    ),
    (
        "empty samples",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: empirical, samples: [] }   # capacity",
        "services.svc_b.service_time.samples",
        "is empty",
    ),
    (
        "samples and file",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: empirical, samples: [1ms], file: x.csv }   # capacity",
        "services.svc_b.service_time.file",
        "not both",
    ),
    (
        "samples file missing",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: empirical, file: no-such-samples.csv }   # capacity",
        "services.svc_b.service_time.file",
        "cannot read the samples",
    ),
    (
        "samples file not a regular file",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: empirical, file: /dev/null }   # capacity",
        "services.svc_b.service_time.file",
        "not a regular file",
    ),
    (
        "zero scale",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: exponential, mean: 20ms, scale: 0 }   # capacity",
        "services.svc_b.service_time.scale",
        "(0, 1000000]",
    ),
    (
        "histogram key on exponential",
        "service_time: { dist: exponential, mean: 20ms }   # capacity",
        "service_time: { dist: exponential, mean: 20ms, buckets: [] }   # capacity",
        "services.svc_b.service_time.buckets",
        "not a parameter of `exponential`",
    ),
    (
        "negative slowdown",
        "service_time: { dist: exponential, mean: 200ms }  # capacity",
        "slowdown: -1  # capacity",
        "faults.slow_b.slowdown",
        "(0, 1000000]",
    ),
    (
        "slowdown and service_time",
        "from: 10s",
        "from: 10s\n    slowdown: 3",
        "faults.slow_b.slowdown",
        "not both",
    ),
    (
        "zero arrivals scale",
        "rate: 400",
        "rate: 400\n  scale: 0",
        "arrivals.scale",
        "(0, 1000]",
    ),
];

#[test]
fn every_bad_edit_is_reported_at_its_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_text();
    for (what, from, to, key, words) in CASES {
        assert!(
            base.contains(from),
            "{what}: base.yaml no longer contains {from:?}"
        );
        let text = base.replacen(from, to, 1);
        let path = write(dir.path(), "s.yaml", &text);
        let err = load_err(&path, &[]);
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == *key)
            .unwrap_or_else(|| panic!("{what}: no diagnostic at `{key}`; got:\n{err}"));
        assert!(
            d.message.contains(words),
            "{what}: message {:?} lacks {words:?}",
            d.message
        );
        match &d.origin {
            Origin::File { path: p, line, .. } => {
                assert_eq!(p, &path, "{what}");
                let line = line.unwrap_or_else(|| panic!("{what}: no line"));
                let written = text.lines().nth(line - 1).unwrap();
                let last = key.rsplit('.').next().unwrap();
                assert!(
                    written.contains(last)
                        || written.contains(&key.replace('.', ""))
                        || what.contains("missing"),
                    "{what}: line {line} is {written:?}, expected it to name `{last}`"
                );
            }
            other => panic!("{what}: origin {other:?}"),
        }
        let shown = err.to_string();
        assert!(shown.contains("s.yaml:"), "{what}: {shown}");
    }
}

#[test]
fn all_problems_of_a_file_are_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    let text = base_text()
        .replace("slots: 16", "slots: 0")
        .replace("rate: 400", "rate: 0");
    let err = load_err(&write(dir.path(), "s.yaml", &text), &[]);
    let keys: Vec<&str> = err.diagnostics.iter().map(|d| d.key.as_str()).collect();
    assert!(
        keys.contains(&"services.svc_b.slots") && keys.contains(&"arrivals.rate"),
        "{keys:?}"
    );
}

#[test]
fn extends_cycle_and_missing_base_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", "extends: b.yaml\n");
    let b = write(dir.path(), "b.yaml", "extends: a.yaml\n");
    let err = load_err(&b, &[]);
    assert!(err.to_string().contains("cycle"), "{err}");
    let c = write(dir.path(), "c.yaml", "extends: nowhere.yaml\n");
    let err = load_err(&c, &[]);
    assert!(err.to_string().contains("nowhere.yaml"), "{err}");
}

#[test]
fn missing_and_unreadable_files_are_errors() {
    let err = load_err(Path::new("/definitely/not/here.yaml"), &[]);
    assert!(err.to_string().contains("cannot read"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = load_err(dir.path(), &[]);
    assert!(err.to_string().contains("directory"), "{err}");
    let bin = write(dir.path(), "bin.yaml", "");
    std::fs::write(&bin, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let err = load_err(&bin, &[]);
    assert!(err.to_string().contains("UTF-8"), "{err}");
}

#[test]
fn bad_set_paths_and_values_name_the_argument() {
    let naive = scenario_path("naive");
    let cases: &[(&str, &str)] = &[
        ("services.svc_x.slots=3", "no key `svc_x`"),
        ("services.svc_b.slots=many", "wrong type"),
        ("services.svc_b.queue_capp=3", "did you mean `queue_cap`?"),
        ("slots", "KEY=VALUE"),
        ("services.svc_b.slots=[1, 2", "not valid YAML"),
        ("services..slots=1", "empty segment"),
        // A map the `--set` creates on its way is checked like any key, at the argument.
        (
            "services.svc_b.contension.kappa=0.1",
            "did you mean `contention`?",
        ),
        ("services.svc_a.calls.svc_x.retries=1", "no key `svc_x`"),
    ];
    for (arg, words) in cases {
        let err = load_err(&naive, &[arg]);
        let d = &err.diagnostics[0];
        assert!(
            matches!(&d.origin, Origin::Set { argument, .. } if argument == arg),
            "{arg}: {:?}",
            d.origin
        );
        assert!(
            d.message.contains(words),
            "{arg}: {:?} lacks {words:?}",
            d.message
        );
    }
}

#[test]
fn a_yaml_syntax_error_has_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "s.yaml",
        "duration: 60s\narrivals: {rate: 4\nclient: x\n",
    );
    let err = load_err(&p, &[]);
    match &err.diagnostics[0].origin {
        Origin::File { line: Some(_), .. } => {}
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("not valid YAML"), "{err}");
}

/// Independent mistakes of different classes, each an in-place edit of one line of `base.yaml`:
/// (class, replace this, with this, expected key, expected words).
const MISTAKES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "unknown key",
        "drain: 30s ",
        "drian: 30s ",
        "drian",
        "did you mean `drain`?",
    ),
    (
        "wrong type",
        "rate: 400 ",
        "rate: fast ",
        "arrivals.rate",
        "wrong type",
    ),
    (
        "unit-less duration",
        "retry_interval: 50ms",
        "retry_interval: 50",
        "client.retry_interval",
        "no unit",
    ),
    (
        "unknown key",
        "propagate_deadline: false",
        "propagate_dedline: false",
        "client.propagate_dedline",
        "did you mean `propagate_deadline`?",
    ),
    (
        "bad enum value",
        "dist: exponential, mean: 20ms",
        "dist: exponentail, mean: 20ms",
        "services.svc_b.service_time.dist",
        "did you mean `exponential`?",
    ),
    (
        "wrong fault kind",
        "kind: slow",
        "kind: slowness",
        "faults.slow_b.kind",
        "did you mean `slow`?",
    ),
    (
        "unit-less duration",
        "duration: 20s",
        "duration: 20",
        "faults.slow_b.duration",
        "no unit",
    ),
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

    /// Every problem at once: a file with k independent mistakes yields exactly k messages, each
    /// at its own key and line, in the order of the file.
    #[test]
    fn k_independent_mistakes_give_k_located_messages(
        chosen in proptest::sample::subsequence((0..MISTAKES.len()).collect::<Vec<_>>(), 1..=4)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut text = base_text();
        let mut expected = Vec::new();
        for &i in &chosen {
            let (_, from, to, key, words) = MISTAKES[i];
            let at = text.find(from).unwrap_or_else(|| panic!("base.yaml lacks {from:?}"));
            let line = text[..at].matches('\n').count() + 1;
            text = text.replacen(from, to, 1);
            expected.push((line, key, words));
        }
        expected.sort();
        let err = load_err(&write(dir.path(), "s.yaml", &text), &[]);
        let got: Vec<(usize, &str)> = err
            .diagnostics
            .iter()
            .map(|d| match &d.origin {
                Origin::File { line: Some(l), .. } => (*l, d.key.as_str()),
                other => panic!("no line: {other:?}\n{err}"),
            })
            .collect();
        let want: Vec<(usize, &str)> = expected.iter().map(|&(l, k, _)| (l, k)).collect();
        proptest::prop_assert_eq!(&got, &want, "{}", err);
        for (d, (_, _, words)) in err.diagnostics.iter().zip(&expected) {
            proptest::prop_assert!(d.message.contains(words), "{:?} lacks {:?}", d.message, words);
        }
    }
}

#[test]
fn a_duplicate_key_is_reported_at_its_own_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = base_text().replacen(
        "  retry_interval: 50ms\n",
        "  retry_interval: 50ms\n  retries: 5\n",
        1,
    );
    let err = load_err(&write(dir.path(), "s.yaml", &text), &[]);
    let second = text.lines().position(|l| l == "  retries: 5").unwrap() + 1;
    let first = text
        .lines()
        .position(|l| l.starts_with("  retries: 2"))
        .unwrap()
        + 1;
    let d = &err.diagnostics[0];
    assert_eq!(d.key, "client.retries", "{err}");
    match &d.origin {
        Origin::File { line, column, .. } => {
            assert_eq!((*line, *column), (Some(second), Some(3)), "{err}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        d.message.contains(&format!("first at line {first}")),
        "{err}"
    );
}

/// An extending file of `base.yaml` whose only content is `null` at the dotted `path`.
fn null_at(path: &str) -> String {
    let parts: Vec<&str> = path.split('.').collect();
    let mut text = "null".to_owned();
    for p in parts.iter().rev() {
        text = format!("{{{p}: {text}}}");
    }
    format!(
        "extends: {}\n{}\n",
        scenario_path("base").display(),
        &text[1..text.len() - 1]
    )
}

/// `null` removes only what exists: in a file that extends another, every key path of the base
/// with its last key misspelt, set to `null`, is an unknown key (with the suggestion) at its line.
#[test]
fn a_null_must_name_a_key_the_base_can_have() {
    let dir = tempfile::tempdir().unwrap();
    let base = loadsim::import::load(&scenario_path("base")).unwrap();
    let mut paths: Vec<&String> = base.files[0]
        .keys
        .keys()
        .filter(|k| !k.contains('['))
        .collect();
    paths.sort();
    let mut tried = 0;
    for path in paths {
        let typo = format!("{path}x");
        let file = write(dir.path(), "child.yaml", &null_at(&typo));
        let err = load_err(&file, &[]);
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == typo)
            .unwrap_or_else(|| panic!("{typo}: no diagnostic at the key; got:\n{err}"));
        assert!(
            d.message.contains("unknown key") || d.message.contains("in the base to remove"),
            "{typo}: {}",
            d.message
        );
        assert!(
            d.message
                .contains(&format!("`{}`", path.rsplit('.').next().unwrap())),
            "{typo}: no suggestion in {}",
            d.message
        );
        assert!(
            matches!(&d.origin, Origin::File { path: p, line: Some(2), .. } if p == &file),
            "{typo}: {:?}",
            d.origin
        );
        tried += 1;
    }
    assert!(tried >= 30, "{tried}");
}

#[test]
fn null_removes_only_optional_keys_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let base = scenario_path("base");
    let child = |body: &str| {
        write(
            dir.path(),
            "child.yaml",
            &format!("extends: {}\n{body}", base.display()),
        )
    };
    let cases: &[(&str, &str, &str)] = &[
        (
            "services:\n  gateway:\n    calls:\n      svc_a:\n        retry_throtle: null\n",
            "services.gateway.calls.svc_a.retry_throtle",
            "did you mean `retry_throttle`?",
        ),
        ("slow_b: null\n", "slow_b", "unknown key `slow_b`"),
        (
            "faults: {slow_bb: null}\n",
            "faults.slow_bb",
            "there is no `slow_bb` in the base to remove, did you mean `slow_b`?",
        ),
        ("duration: null\n", "duration", "is required"),
        (
            "services:\n  svc_b:\n    slots: null\n",
            "services.svc_b.slots",
            "is required",
        ),
    ];
    for (body, key, words) in cases {
        let err = load_err(&child(body), &[]);
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == *key)
            .unwrap_or_else(|| panic!("{body}: nothing at `{key}`:\n{err}"));
        assert!(d.message.contains(words), "{body}: {}", d.message);
        assert!(
            matches!(d.origin, Origin::File { line: Some(l), .. } if l > 1),
            "{body}: {:?}",
            d.origin
        );
    }
    // What exists and is optional goes.
    let sc = Scenario::load(&child("faults: {slow_b: null}\nseed: null\n"), &[], None).unwrap();
    assert!(sc.faults.is_empty());
    assert_eq!(sc.seed, 1);
}

#[test]
fn set_null_removes_like_a_file_and_an_empty_value_is_refused() {
    let naive = scenario_path("naive");
    let sc = Scenario::load(&naive, &["faults.slow_b=null".into()], None).unwrap();
    assert!(sc.faults.is_empty());
    for (arg, key, words) in [
        (
            "faults.slow_bb=null",
            "faults.slow_bb",
            "did you mean `slow_b`?",
        ),
        ("duration=null", "duration", "is required"),
        (
            "client.retires=~",
            "client.retires",
            "did you mean `retries`?",
        ),
    ] {
        let err = load_err(&naive, &[arg]);
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == key)
            .unwrap_or_else(|| panic!("{arg}: {err}"));
        assert!(d.message.contains(words), "{arg}: {}", d.message);
        assert!(
            matches!(&d.origin, Origin::Set { argument, .. } if argument == arg),
            "{arg}"
        );
    }
    for arg in ["seed=", "seed=  "] {
        let err = load_err(&naive, &[arg]);
        assert!(
            err.to_string().contains("the value is empty"),
            "{arg}: {err}"
        );
    }
}

/// Services `p` → `q->r` and `p->q` → `r` both made the edge `p->q->r`, and one edge's metrics
/// vanished. Names are restricted so that no two edges (or key paths) can share a name.
#[test]
fn service_names_that_could_collide_are_refused_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = "duration: 10s\narrivals: {rate: 10}\nclient: {entry: p, attempt_timeout: 1s}\n\
                services:\n  p:\n    slots: 1\n    calls: {\"q->r\": {attempt_timeout: 1s}}\n  \
                \"q->r\": {slots: 1}\n  \"p->q\":\n    slots: 1\n    calls: {r: {attempt_timeout: 1s}}\n  \
                r: {slots: 1}\n  \"a b\": {slots: 1}\n  x.y: {slots: 1}\n";
    let path = write(dir.path(), "s.yaml", text);
    let err = load_err(&path, &[]);
    for (name, line) in [("q->r", 8), ("p->q", 9), ("a b", 13), ("x.y", 14)] {
        let d = err
            .diagnostics
            .iter()
            .find(|d| d.key == format!("services.{name}"))
            .unwrap_or_else(|| panic!("{name}: {err}"));
        assert!(d.message.contains("cannot name a service"), "{}", d.message);
        assert!(
            matches!(&d.origin, Origin::File { line: Some(l), .. } if *l == line),
            "{name}: {:?}",
            d.origin
        );
    }
}

/// Shape problems and problems of meaning come in one run: the value with a shape problem is
/// left out and the rest is checked, so `slots: 0` is reported beside the unknown key above it.
#[test]
fn shape_and_meaning_problems_come_together_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let text = base_text()
        .replacen("drain: 30s ", "drian: 30s ", 1)
        .replacen("slots: 16", "slots: 0", 1)
        .replacen("retry_interval: 50ms", "retry_interval: 50", 1);
    let err = load_err(&write(dir.path(), "s.yaml", &text), &[]);
    let keys: Vec<&str> = err.diagnostics.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(
        keys,
        ["drian", "client.retry_interval", "services.svc_b.slots"],
        "{err}"
    );
}

/// Issue 30 item 14: one pass reports every problem of a file — shape (types, unknown keys),
/// meaning (ranges, fault windows), a call cycle and a failed import — together.
#[test]
fn shape_meaning_cycles_and_imports_are_reported_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let import_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let text = format!(
        "extends: {base}\nduration: 0s\nservices:\n  svc_a:\n    slots: 0\n    bogus: 1\n    \
         queue_cap: many\n    calls:\n      svc_b:\n        import: {{grpc: {grpc}, method: \
         Nope}}\n        retries: -1\n  svc_b:\n    calls:\n      svc_a: {{attempt_timeout: \
         1s}}\nfaults:\n  late:\n    kind: outage\n    service: svc_b\n    from: 5s\n    to: 1s\n",
        base = scenario_path("naive").display(),
        grpc = import_dir.join("grpc_retry.json").display(),
    );
    let path = write(dir.path(), "many.yaml", &text);
    let e = load_err(&path, &[]);
    let keys: Vec<&str> = e.diagnostics.iter().map(|d| d.key.as_str()).collect();
    for key in [
        "duration",
        "services.svc_a.slots",
        "services.svc_a.bogus",
        "services.svc_a.queue_cap",
        "services.svc_a.calls.svc_b.retries",
        "services.svc_b.calls.svc_a",
        "faults.late.to",
        "methodConfig",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}\n{e}");
    }
    let text = e.to_string();
    assert!(text.contains("calls form a cycle"), "{text}");
    assert!(
        text.contains("no method config applies to method \"Nope\""),
        "{text}"
    );
}

/// Issue 30 item 15, each small refusal with its location and a readable message.
#[test]
fn the_small_refusals_of_hardening_iii() {
    let dir = tempfile::tempdir().unwrap();
    // A fault name with `.` cannot be addressed by --set.
    let text = base_text();
    let first_fault = text
        .lines()
        .skip_while(|l| !l.starts_with("faults:"))
        .nth(1)
        .expect("base.yaml has a fault")
        .trim()
        .trim_end_matches(':')
        .to_owned();
    let bad = text.replacen(&format!("  {first_fault}:"), "  slow.b:", 1);
    let e = load_err(&write(dir.path(), "dotted.yaml", &bad), &[]);
    let d = e
        .diagnostics
        .iter()
        .find(|d| d.key == "faults.slow.b")
        .unwrap_or_else(|| panic!("{e}"));
    assert!(d.message.contains("cannot name a fault"), "{e}");
    assert!(
        matches!(d.origin, Origin::File { line: Some(_), .. }),
        "{e}"
    );

    // A bad priority says what the key takes, not the Rust type's name.
    let classes =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/workload/classes_fifo.yaml");
    for bad in ["\"high\"", "1.5"] {
        let e = load_err(&classes, &[&format!("clients.checkout.priority={bad}")]).to_string();
        assert!(!e.contains("PriorityRaw"), "{e}");
        assert!(
            e.contains("must be a whole number (higher is more important) or one of"),
            "{e}"
        );
    }

    // The tiny-rate refusal prints the rate as written, not 300 digits.
    let e = load_err(&scenario_path("naive"), &["arrivals.rate=1e-300"]).to_string();
    assert!(e.contains("1e-300 requests per second"), "{e}");
    assert!(e.len() < 500, "{} characters: {e}", e.len());

    // Traces: a byte-order mark is skipped; a header is the first row or an error, wherever the
    // second one is; 1e400 is not a finite time.
    let scenario = write(
        dir.path(),
        "traced.yaml",
        &format!(
            "extends: {}\narrivals: {{rate: null, trace: t.csv}}\n",
            scenario_path("naive").display()
        ),
    );
    let trace = |text: &str| {
        write(dir.path(), "t.csv", text);
        Scenario::load(&scenario, &[], None).map_err(|e| e.to_string())
    };
    trace("\u{feff}time\n0.5\n1\n").expect("a BOM before the header is skipped");
    trace("\u{feff}0.5\n1\n").expect("a BOM before the first row is skipped");
    for (text, row) in [
        ("time\ntime\n1\n", 2),
        ("time\n1\ntime\n", 3),
        ("1\ntime\n", 2),
    ] {
        let e = trace(text).expect_err(text);
        assert!(
            e.contains(&format!(
                "t.csv:{row}: a header row (`time`) may only be the first row"
            )),
            "{text:?}: {e}"
        );
    }
    let e = trace("0.5\n1e400\n").expect_err("1e400");
    assert!(
        e.contains("t.csv:2: `1e400` is not a finite number of seconds"),
        "{e}"
    );
    let e = trace("-1\n").expect_err("negative");
    assert!(e.contains("must be zero or more seconds"), "{e}");
}

/// Issue 30 item 14: a required key with a shape problem (`duration: abc`, `slots: many`, a
/// `dist` that is no distribution, a fault without `from`) no longer stops the checks of meaning:
/// a placeholder stands in for it, and only what depends on it goes unchecked.
#[test]
fn required_keys_with_shape_problems_are_reported_with_the_meaning_problems() {
    let dir = tempfile::tempdir().unwrap();
    let text = "duration: abc\narrivals: {rate: 100}\nclient: {entry: svc_a, attempt_timeout: 1s}\n\
                services:\n  svc_a:\n    slots: many\n    queue_cap: 0\n    service_time: {dist: \
                bogus, mean: 5ms}\n    calls:\n      svc_b: {attempt_timeout: 1s}\n  svc_b:\n    \
                slots: 0\n    calls:\n      svc_a: {attempt_timeout: 1s}\nfaults:\n  late:\n    \
                kind: outage\n    service: svc_b\n    from: 5s\n    to: 1s\n  nofrom:\n    kind: \
                outage\n    service: svc_b\n    to: 2s\n";
    let e = load_err(&write(dir.path(), "req.yaml", text), &[]);
    let keys: Vec<&str> = e.diagnostics.iter().map(|d| d.key.as_str()).collect();
    for key in [
        // shape
        "duration",
        "services.svc_a.slots",
        "services.svc_a.service_time.dist",
        "faults.nofrom",
        // meaning, in the same pass
        "services.svc_a.queue_cap",
        "services.svc_b.slots",
        "faults.late.to",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}\n{e}");
    }
    let text = e.to_string();
    assert!(text.contains("calls form a cycle"), "{text}");
    // What the placeholders imply is no news: no "longer than 0s" for the duration, nothing
    // about the bad distribution's `mean`, each key once.
    assert!(!text.contains("must be longer than 0s"), "{text}");
    assert!(
        !keys.contains(&"services.svc_a.service_time.mean"),
        "{text}"
    );
    let mut unique = keys.clone();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "{text}");

    // With the shape problems fixed, the meaning problems are the same ones: nothing was held
    // back for a second round.
    let fixed = write(
        dir.path(),
        "fixed.yaml",
        &std::fs::read_to_string(dir.path().join("req.yaml"))
            .unwrap()
            .replace("duration: abc", "duration: 60s")
            .replace("slots: many", "slots: 1")
            .replace("dist: bogus", "dist: exponential")
            .replace("    to: 2s\n", "    from: 1s\n    to: 2s\n"),
    );
    let again = load_err(&fixed, &[]);
    let meaning: Vec<&str> = again.diagnostics.iter().map(|d| d.key.as_str()).collect();
    for key in &meaning {
        assert!(
            keys.contains(key),
            "{key} only in the second round:\n{again}"
        );
    }
}

/// Issue 30 item 15: `null` on a key the `extends` base does not give is refused (it removes
/// nothing); `null` on one it gives still removes it.
#[test]
fn null_on_a_key_the_base_lacks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let base = scenario_path("naive");
    let naive = std::fs::read_to_string(&base).unwrap();
    assert!(
        !naive.contains("max_queue_time"),
        "the test needs a key naive.yaml lacks"
    );
    let path = write(
        dir.path(),
        "stale.yaml",
        &format!(
            "extends: {}\nservices:\n  svc_a:\n    max_queue_time: null\n",
            base.display()
        ),
    );
    let e = load_err(&path, &[]);
    let d = e
        .diagnostics
        .iter()
        .find(|d| d.key == "services.svc_a.max_queue_time")
        .unwrap_or_else(|| panic!("{e}"));
    assert!(
        d.message
            .contains("there is no `max_queue_time` in the base to remove"),
        "{e}"
    );
    assert!(
        matches!(&d.origin, Origin::File { path: p, line: Some(4), .. } if p == &path),
        "{e}"
    );
    // The same key given by the base is removed as before.
    let with = write(
        dir.path(),
        "with.yaml",
        &format!(
            "extends: {}\nservices:\n  svc_a:\n    max_queue_time: 1s\n",
            base.display()
        ),
    );
    let path = write(
        dir.path(),
        "removes.yaml",
        &format!(
            "extends: {}\nservices:\n  svc_a:\n    max_queue_time: null\n",
            with.display()
        ),
    );
    let sc = Scenario::load(&path, &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.services[0].max_queue_time, None);
    // And `--set KEY=null` on a key that is not there says so too.
    let e = load_err(&base, &["services.svc_a.max_queue_time=null"]).to_string();
    assert!(
        e.contains("there is no `max_queue_time` in the base to remove"),
        "{e}"
    );
}

/// Issue 30 item 15: a number beyond f64's range (`le: 1e400`) is not "wrong type: string".
#[test]
fn a_number_beyond_range_is_not_a_finite_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "huge.yaml",
        &format!(
            "extends: {}\nexpect:\n  - {{metric: metrics.recovery_s, le: 1e400}}\n",
            scenario_path("naive").display()
        ),
    );
    let e = load_err(&path, &[]);
    let d = e
        .diagnostics
        .iter()
        .find(|d| d.key == "expect[0].le")
        .unwrap_or_else(|| panic!("{e}"));
    assert!(d.message.contains("`1e400` is not a finite number"), "{e}");
    assert!(!d.message.contains("wrong type"), "{e}");
    assert!(
        matches!(d.origin, Origin::File { line: Some(3), .. }),
        "{e}"
    );
    // The same in a scenario key that takes a number.
    let e = load_err(&scenario_path("naive"), &["arrivals.rate=-1e400"]).to_string();
    assert!(e.contains("`-1e400` is not a finite number"), "{e}");
}

/// Issue 30 item 15: a fault window too late for the run is the fault set's problem, at the
/// line that ends the window, not at the scenario's `duration`.
#[test]
fn a_fault_set_window_too_late_points_at_the_fault_set() {
    use loadsim::analysis::faultset::FaultSet;
    let dir = tempfile::tempdir().unwrap();
    let set = write(
        dir.path(),
        "k.yaml",
        "faults:\n  fine:\n    kind: outage\n    from: 1s\n    duration: 1s\n  late:\n    kind: \
         outage\n    from: 1s\n    to: 40days\n",
    );
    let set = FaultSet::load(&set).unwrap();
    let base = loadsim::import::load(&scenario_path("naive")).unwrap();
    set.apply(0, &base, "svc_b")
        .unwrap_or_else(|e| panic!("{e}"));
    let e = set.apply(1, &base, "svc_b").expect_err("a 40-day window");
    let [d] = &e.diagnostics[..] else {
        panic!("one problem: {e}");
    };
    assert_eq!(d.key, "faults.late.to", "{e}");
    assert!(
        matches!(&d.origin, Origin::File { path, line: Some(9), .. } if path.ends_with("k.yaml")),
        "{e}"
    );
    assert!(d.message.contains("must be at most 30days"), "{e}");
}

/// Issue 30 item 14: in a sweep, a problem with a file a scenario imports no longer stops the
/// checks of the cells: both come in one run.
#[test]
fn a_sweep_reports_an_import_problem_with_the_cells_problems() {
    let dir = tempfile::tempdir().unwrap();
    let grpc = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/grpc_retry.json");
    write(
        dir.path(),
        "imp.yaml",
        &format!(
            "extends: {}\nservices:\n  svc_a:\n    calls:\n      svc_b:\n        import: {{grpc: \
             {}, method: Nope}}\n",
            scenario_path("naive").display(),
            grpc.display()
        ),
    );
    let sweep = write(
        dir.path(),
        "sw.yaml",
        "name: t\nscenarios: [imp.yaml]\ngrid:\n  services.svc_a.queue_cap: [0, 4]\n",
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loadsim"))
        .args(["sweep", "--dry-run"])
        .arg(&sweep)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no method config applies to method \"Nope\""),
        "{err}"
    );
    assert!(
        err.contains("with the value `0`: must be at least 1"),
        "{err}"
    );
}
