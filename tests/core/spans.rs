//! `loadsim run --spans` (issue 27 item 3): the round trip through `loadsim import traces`
//! (same services, calls, probabilities, classes and stages; own work and user latency back
//! within stated bounds), determinism and the `--span-sample` subset, failure reasons on a
//! faulted scenario, ids, and bad input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value as Json;
use yaml_serde::Value;

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Two classes; a gateway with a parallel stage (catalog ∥ pricing, pricing taken with
/// probability 0.5) then a sequential call (orders, class `buy` only), orders → db. Light load:
/// every service has far more slots than it keeps busy (the gateway, which holds its slot for a
/// whole request of about 40 ms, keeps some 10 of 64 busy at 250 requests/s), so requests do not
/// queue and each SERVER span minus its calls is the service's own work. Every service time is
/// given by two quantiles (a lognormal through both, the shape import writes back), with a p99
/// at most 2.5 × its p50, so the p99 of 10 000 draws (db, the least called) has a relative
/// standard error of about 1.5 %.
const SHOP: &str = "\
description: round trip of spans
duration: 100s
seed: 3
clients:
  browse:
    arrivals: { rate: 150 }
    entry: gateway
    attempt_timeout: 30s
  buy:
    arrivals: { rate: 100 }
    entry: gateway
    attempt_timeout: 30s
services:
  gateway:
    slots: 64
    service_time: { p50: 2ms, p99: 4ms }
    stages:
      - { parallel: [catalog, pricing] }
      - { sequential: [orders] }
    calls:
      catalog: { attempt_timeout: 30s }
      pricing: { attempt_timeout: 30s, probability: 0.5 }
      orders: { attempt_timeout: 30s, classes: [buy] }
  catalog:
    slots: 64
    service_time: { p50: 10ms, p99: 25ms }
  pricing:
    slots: 64
    service_time: { p50: 5ms, p99: 10ms }
  orders:
    slots: 64
    service_time: { p50: 20ms, p99: 40ms }
    calls:
      db: { attempt_timeout: 30s }
  db:
    slots: 64
    service_time: { p50: 3ms, p99: 6ms }
";

/// The source p50 and p99 of each service's own work, in ms (from [`SHOP`]).
const OWN_WORK_MS: [(&str, f64, f64); 5] = [
    ("gateway", 2.0, 4.0),
    ("catalog", 10.0, 25.0),
    ("pricing", 5.0, 10.0),
    ("orders", 20.0, 40.0),
    ("db", 3.0, 6.0),
];

fn run_json(scenario: &Path, extra: &[&str]) -> Json {
    let out = loadsim()
        .arg("run")
        .arg(scenario)
        .args(["--format", "json", "-q"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Json = serde_json::from_slice(&out.stdout).unwrap();
    for r in v.as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("engine");
    }
    v
}

/// `loadsim import traces SPANS --out OUT`, which must succeed; returns its stderr.
fn import_traces(spans: &Path, out: &Path) -> String {
    let run = loadsim()
        .args(["import", "traces"])
        .arg(spans)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    stderr
}

fn at<'v>(v: &'v Value, path: &str) -> &'v Value {
    let mut cur = v;
    for k in path.split('.') {
        cur = cur
            .as_mapping()
            .and_then(|m| m.get(Value::String(k.into())))
            .unwrap_or_else(|| panic!("no `{k}` in `{path}`"));
    }
    cur
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect()
}

fn ms(v: &Value) -> f64 {
    let text = match v {
        Value::String(s) => s.clone(),
        other => panic!("not a duration: {other:?}"),
    };
    let (num, scale) = if let Some(x) = text.strip_suffix("ms") {
        (x, 1.0)
    } else if let Some(x) = text.strip_suffix("us") {
        (x, 1e-3)
    } else if let Some(x) = text.strip_suffix('s') {
        (x, 1e3)
    } else {
        panic!("no unit in `{text}`")
    };
    num.parse::<f64>().unwrap() * scale
}

/// Every span of an OTLP JSON lines file, with its resource's `service.name`.
fn spans(file: &Path) -> Vec<(String, Json)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let doc: Json = serde_json::from_str(line).unwrap();
        for rs in doc["resourceSpans"].as_array().unwrap() {
            let attrs = rs["resource"]["attributes"].as_array().unwrap();
            let service = attrs
                .iter()
                .find(|a| a["key"] == "service.name")
                .map(|a| a["value"]["stringValue"].as_str().unwrap().to_owned())
                .unwrap();
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for sp in ss["spans"].as_array().unwrap() {
                    out.push((service.clone(), sp.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn spans_import_back_to_the_same_topology_own_work_and_latency() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write(dir.path(), "shop.yaml", SHOP);
    let spans_file = dir.path().join("shop.spans.jsonl");
    let original = run_json(&shop, &["--spans", spans_file.to_str().unwrap()]);
    let imported = dir.path().join("imported.yaml");
    let stderr = import_traces(&spans_file, &imported);
    assert!(stderr.contains("0 not used"), "{stderr}");
    let text = std::fs::read_to_string(&imported).unwrap();
    let v: Value = yaml_serde::from_str(&text).unwrap();

    // Topology: the same services (the client is not one), the same calls, classes and stages.
    let services = at(&v, "services");
    assert_eq!(
        keys(services),
        ["catalog", "db", "gateway", "orders", "pricing"]
            .map(String::from)
            .into()
    );
    let calls = |s: &str| keys(at(services, &format!("{s}.calls")));
    assert_eq!(
        calls("gateway"),
        ["catalog", "orders", "pricing"].map(String::from).into()
    );
    assert_eq!(calls("orders"), ["db"].map(String::from).into());
    for leaf in ["catalog", "pricing", "db"] {
        assert!(
            at(services, leaf)
                .as_mapping()
                .unwrap()
                .get("calls")
                .is_none(),
            "{leaf} makes no call:\n{text}"
        );
    }
    assert_eq!(
        keys(at(&v, "clients")),
        ["browse", "buy"].map(String::from).into()
    );
    for class in ["browse", "buy"] {
        assert_eq!(
            at(&v, &format!("clients.{class}.entry")).as_str(),
            Some("gateway")
        );
    }
    let stages = at(services, "gateway.stages").as_sequence().unwrap();
    assert_eq!(stages.len(), 2, "{text}");
    let group = |i: usize, kind: &str| -> BTreeSet<String> {
        at(&stages[i], kind)
            .as_sequence()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        group(0, "parallel"),
        ["catalog", "pricing"].map(String::from).into()
    );
    assert_eq!(group(1, "sequential"), ["orders"].map(String::from).into());
    let p = at(services, "gateway.calls.pricing.probability")
        .as_f64()
        .unwrap();
    // 25 000 draws of probability 0.5: standard error 0.0032.
    assert!((p - 0.5).abs() < 0.02, "pricing probability {p}");
    assert!(
        at(services, "gateway.calls.catalog")
            .as_mapping()
            .unwrap()
            .get("probability")
            .is_none()
    );
    let only: Vec<&str> = at(services, "gateway.calls.orders.classes")
        .as_sequence()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(only, ["buy"]);

    // Own work: each service's p50 and p99 within 5 % of its source distribution's.
    for (s, p50, p99) in OWN_WORK_MS {
        let got50 = ms(at(services, &format!("{s}.service_time.p50")));
        let got99 = ms(at(services, &format!("{s}.service_time.p99")));
        assert!(
            (got50 / p50 - 1.0).abs() < 0.05,
            "{s} p50 {got50} ms vs {p50}"
        );
        assert!(
            (got99 / p99 - 1.0).abs() < 0.05,
            "{s} p99 {got99} ms vs {p99}"
        );
    }

    // The imported scenario runs, and its user latency is the original's within 10 %.
    let rerun = run_json(&imported, &[]);
    for q in ["success_latency_p50_s", "success_latency_p99_s"] {
        let a = original[0]["metrics"][q].as_f64().unwrap();
        let b = rerun[0]["metrics"][q].as_f64().unwrap();
        assert!((b / a - 1.0).abs() < 0.10, "{q}: original {a}, re-run {b}");
        for class in ["browse", "buy"] {
            let a = original[0]["classes"][class][q].as_f64().unwrap();
            let b = rerun[0]["classes"][class][q].as_f64().unwrap();
            assert!(
                (b / a - 1.0).abs() < 0.10,
                "{class} {q}: original {a}, re-run {b}"
            );
        }
    }
}

#[test]
fn sampled_spans_state_their_rate_and_import_back_to_the_offered_arrival_rate() {
    // Traced with probability 0.25, every span carries OpenTelemetry's sampling threshold
    // (`ot=th:c`: 2^56 · 0.75 = 0xc0000000000000) and the import scales the arrivals it counts
    // back up by 4. 40 s at 150 and 100 requests/s keeps about 1 500 and 1 000 roots: standard
    // errors 2.2 % and 2.7 % of the rate, well inside 10 %.
    let dir = tempfile::tempdir().unwrap();
    let shop = write(dir.path(), "shop.yaml", SHOP);
    let spans_file = dir.path().join("sampled.jsonl");
    run_json(
        &shop,
        &[
            "--set",
            "duration=40s",
            "--spans",
            spans_file.to_str().unwrap(),
            "--span-sample",
            "0.25",
        ],
    );
    let all = spans(&spans_file);
    assert!(!all.is_empty());
    for (_, sp) in &all {
        assert_eq!(sp["traceState"].as_str(), Some("ot=th:c"), "{sp}");
    }
    let imported = dir.path().join("imported.yaml");
    import_traces(&spans_file, &imported);
    let text = std::fs::read_to_string(&imported).unwrap();
    let v: Value = yaml_serde::from_str(&text).unwrap();
    for (class, rate) in [("browse", 150.0), ("buy", 100.0)] {
        let got = at(&v, &format!("clients.{class}.arrivals.rate"))
            .as_f64()
            .unwrap_or_else(|| panic!("{class}: no single rate\n{text}"));
        assert!(
            (got / rate - 1.0).abs() < 0.10,
            "{class}: {got} vs {rate}\n{text}"
        );
    }
}

/// Spans keyed by trace id, each trace's spans as sorted JSON texts, without the `traceState`
/// that states the sampling rate (the one field a sampled run's spans add).
fn by_trace(spans: &[(String, Json)]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (service, sp) in spans {
        let mut sp = sp.clone();
        sp.as_object_mut().unwrap().shift_remove("traceState");
        out.entry(sp["traceId"].as_str().unwrap().to_owned())
            .or_default()
            .insert(format!("{service} {sp}"));
    }
    out
}

#[test]
fn spans_are_deterministic_sampled_as_a_subset_and_change_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write(dir.path(), "shop.yaml", SHOP);
    let short = ["--set", "duration=10s"];
    let file = |name: &str| dir.path().join(name);
    let plain = run_json(&shop, &short);
    let with = |name: &str, sample: &str| {
        let path = file(name);
        let mut args = short.to_vec();
        args.extend(["--spans", path.to_str().unwrap(), "--span-sample", sample]);
        let v = run_json(&shop, &args);
        (v, std::fs::read(&path).unwrap())
    };
    let (a, bytes_a) = with("a.jsonl", "1");
    let (b, bytes_b) = with("b.jsonl", "1");
    let (c, _) = with("c.jsonl", "0.3");
    assert_eq!(bytes_a, bytes_b, "same seed, same bytes");
    assert_eq!(plain, a, "results with --spans");
    assert_eq!(plain, b);
    assert_eq!(plain, c, "results with --span-sample");

    let full = spans(&file("a.jsonl"));
    let sampled = spans(&file("c.jsonl"));
    let (full_t, sampled_t) = (by_trace(&full), by_trace(&sampled));
    let requests = plain[0]["metrics"]["requests"].as_u64().unwrap() as usize;
    assert_eq!(full_t.len(), requests, "one trace per user request");
    // 2 500 requests kept with probability 0.3: standard deviation 23.
    let share = sampled_t.len() as f64 / full_t.len() as f64;
    assert!((share - 0.3).abs() < 0.03, "kept {share}");
    for (trace, set) in &sampled_t {
        assert_eq!(
            Some(set),
            full_t.get(trace),
            "a sampled trace is its full-run self"
        );
    }

    // Ids: non-zero hex of the OTLP lengths, unique, every parent present in its trace.
    let mut seen = BTreeSet::new();
    let mut ids: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (_, sp) in &full {
        let (t, s) = (
            sp["traceId"].as_str().unwrap(),
            sp["spanId"].as_str().unwrap(),
        );
        assert_eq!((t.len(), s.len()), (32, 16));
        assert!(t.chars().chain(s.chars()).all(|c| c.is_ascii_hexdigit()));
        assert!(!t.trim_start_matches('0').is_empty() && !s.trim_start_matches('0').is_empty());
        assert!(seen.insert((t, s)), "span id {s} twice in trace {t}");
        ids.entry(t).or_default().insert(s);
    }
    for (_, sp) in &full {
        if let Some(p) = sp.get("parentSpanId").and_then(Json::as_str) {
            assert!(ids[sp["traceId"].as_str().unwrap()].contains(p));
        }
        let start: u64 = sp["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u64 = sp["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        // The documented epoch, 2025-01-01T00:00:00Z, plus at most the run.
        assert!(start >= 1_735_689_600_000_000_000 && end >= start);
        assert!(end < 1_735_689_600_000_000_000 + 60_000_000_000);
    }
}

#[test]
fn a_faulted_run_shows_failures_with_error_status_and_their_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("protected.jsonl");
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/protected.yaml");
    run_json(
        &scenario,
        &[
            "--seed",
            "7",
            "--spans",
            file.to_str().unwrap(),
            "--span-sample",
            "0.1",
        ],
    );
    let all = spans(&file);
    let reasons: BTreeMap<(&str, i64), usize> = all
        .iter()
        .filter(|(_, sp)| sp["status"]["code"] == 2)
        .fold(BTreeMap::new(), |mut m, (_, sp)| {
            let kind = sp["kind"].as_i64().unwrap();
            *m.entry((sp["status"]["message"].as_str().unwrap(), kind))
                .or_default() += 1;
            m
        });
    // The slow svc_b fills its bounded queue (refused: a SERVER span `rejected_full`, its
    // caller's CLIENT span `rejected`), attempts time out, and the jobs whose calls failed end in
    // error (`call_failed`).
    for (reason, kind) in [
        ("rejected_full", 2),
        ("rejected", 3),
        ("timeout", 3),
        ("call_failed", 2),
    ] {
        assert!(
            reasons.contains_key(&(reason, kind)),
            "no `{reason}` on a span of kind {kind}: {reasons:?}"
        );
    }
    // Queued work carries its wait as a `dequeued` event.
    assert!(
        all.iter()
            .any(|(_, sp)| sp["events"][0]["name"] == "dequeued")
    );
    // And the importer reads it, counting the errors per service.
    let out = loadsim()
        .args(["import", "traces"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("errors: svc_b:"));
}

#[test]
fn bad_span_flags_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write(dir.path(), "shop.yaml", SHOP);
    let out = dir.path().join("out.jsonl");
    let out = out.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let r = loadsim().arg("run").args(args).output().unwrap();
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    };
    let s = shop.to_str().unwrap();
    refused(
        &[s, "--spans", out, "--span-sample", "0"],
        "is not in (0, 1]",
    );
    refused(
        &[s, "--spans", out, "--span-sample", "1.5"],
        "is not in (0, 1]",
    );
    refused(
        &[s, "--spans", out, "--span-sample", "x"],
        "is not a number",
    );
    refused(&[s, "--span-sample", "0.5"], "--spans");
    refused(&[s, "--spans", out, "--seeds", "1..3"], "--seeds");
    refused(&[s, s, "--spans", out], "2 scenarios were given");
    refused(&[s, "--spans", s], "an input of this command");
    assert!(!Path::new(out).exists());
    assert_eq!(std::fs::read_to_string(&shop).unwrap(), SHOP);
}

/// `--max-spans-size`: a run whose spans cannot fit even at one smallest span per traced request
/// is refused before it runs; one that passes that floor but writes past the limit stops with
/// exit 2 and leaves nothing at FILE (nor its temporary file); a share of the requests fits.
#[test]
fn spans_past_max_spans_size_are_refused_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write(dir.path(), "shop.yaml", SHOP);
    let s = shop.to_str().unwrap();
    let out = dir.path().join("out.jsonl");
    let o = out.to_str().unwrap();
    let run = |extra: &[&str]| {
        loadsim()
            .args(["run", s, "--spans", o])
            .args(extra)
            .output()
            .unwrap()
    };
    // The full run, for its size and span count.
    let full = run(&["--quiet"]);
    assert_eq!(full.status.code(), Some(0));
    let size = std::fs::metadata(&out).unwrap().len();
    let traced = spans(&out).len() as u64;
    let requests = run_json(&shop, &[])[0]["metrics"]["requests"]
        .as_u64()
        .unwrap();
    // The floor is a floor: at least one span per user request, each above the stated size.
    assert!(traced >= requests, "{traced} spans for {requests} requests");
    assert!(size >= traced * loadsim::report::otlp::BYTES_PER_SPAN_FLOOR);
    std::fs::remove_file(&out).unwrap();

    // Below requests × the floor: refused up front, naming the flag.
    let floor = requests * loadsim::report::otlp::BYTES_PER_SPAN_FLOOR;
    let below = (floor / 2).to_string();
    let r = run(&["--max-spans-size", &below]);
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("--max-spans-size") && stderr.contains("--span-sample"),
        "{stderr}"
    );
    assert!(r.stdout.is_empty(), "refused before running");

    // Above the floor, below the real size: the writing stops, exit 2, nothing left behind.
    let between = (size / 2).max(floor + 1).to_string();
    let r = run(&["--max-spans-size", &between, "--quiet"]);
    assert_eq!(r.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("pass the limit") && stderr.contains("--max-spans-size"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only shop.yaml is left"
    );

    // A tenth of the requests fits the same limit.
    let r = run(&[
        "--max-spans-size",
        &between,
        "--span-sample",
        "0.1",
        "--quiet",
    ]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(std::fs::metadata(&out).unwrap().len() <= size / 2);
}
