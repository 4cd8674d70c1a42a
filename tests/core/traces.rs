//! `loadsim import traces` (issue 27 item 2) on hand-built traces of each format, whose expected
//! figures are computed by hand in the comments: CLIENT/SERVER collapse, parallel vs sequential
//! calls, call probability, own-work arithmetic, orphan and skewed spans counted; bad input; and
//! real captured traces (tests/fixtures/traces/, and the larger captures CI keeps in the folder
//! `shared/traces` beside the repository).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use loadsim::import::traces::{TraceFormat, TraceImport, import};
use serde_json::{Value as Json, json};
use yaml_serde::Value;

const MS: u64 = 1_000_000;
/// An arbitrary epoch offset, so no time is near zero.
const T0: u64 = 1_700_000_000_000_000_000;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn imported(files: &[PathBuf], format: Option<TraceFormat>) -> (TraceImport, Value) {
    imported_with(files, format, &["client".into()])
}

/// As [`imported`], with `clients` the services whose root CLIENT spans are a client's requests.
fn imported_with(
    files: &[PathBuf],
    format: Option<TraceFormat>,
    clients: &[String],
) -> (TraceImport, Value) {
    let out = import(files, format, false, clients).unwrap_or_else(|e| panic!("{e}"));
    let v: Value = yaml_serde::from_str(&out.yaml).unwrap_or_else(|e| panic!("{e}\n{}", out.yaml));
    (out, v)
}

fn at<'v>(v: &'v Value, path: &str) -> &'v Value {
    let mut cur = v;
    for k in path.split('.') {
        cur = match cur {
            Value::Mapping(m) => m
                .get(Value::String(k.into()))
                .unwrap_or_else(|| panic!("no `{k}` in `{path}`")),
            Value::Sequence(s) => &s[k.parse::<usize>().unwrap()],
            _ => panic!("`{path}`: `{k}` under a scalar"),
        };
    }
    cur
}

fn keys(v: &Value) -> Vec<String> {
    v.as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect()
}

fn has(report: &[String], text: &str) -> bool {
    report.iter().any(|l| l.contains(text))
}

/// An OTLP span (times in ms after T0; ids short hex).
fn otlp_span(id: &str, parent: &str, kind: u8, name: &str, from: u64, to: u64) -> Json {
    json!({
        "traceId": "", "spanId": id, "parentSpanId": parent, "name": name, "kind": kind,
        "startTimeUnixNano": (T0 + from * MS).to_string(),
        "endTimeUnixNano": (T0 + to * MS).to_string(),
        "status": {}
    })
}

/// One OTLP export request: `spans` per service, all in trace `trace`.
fn otlp(trace: &str, by_service: &[(&str, Vec<Json>)]) -> Json {
    let rs: Vec<Json> = by_service
        .iter()
        .map(|(svc, spans)| {
            let spans: Vec<Json> = spans
                .iter()
                .map(|s| {
                    let mut s = s.clone();
                    s["traceId"] = json!(trace);
                    s
                })
                .collect();
            json!({
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": svc}}]},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]
            })
        })
        .collect();
    json!({ "resourceSpans": rs })
}

/// Trace 1: gateway [0, 100] calls a [10, 40] and b [20, 50] (overlapping), then c [60, 80].
/// Trace 2: gateway [0, 60] calls a [10, 40] and b [20, 50] only.
/// Own work of gateway: trace 1, 100 − |[10,50] ∪ [60,80]| = 100 − 60 = 40 ms; trace 2,
/// 60 − 40 = 20 ms. Quantiles with interpolation between order statistics of [20, 40]: p50 =
/// 30 ms, p99 = 20 + 0.99·20 = 39.8 ms. The SERVER spans of a, b, c sit 1 ms inside their CLIENT
/// spans: own work of a = 28 ms (its SERVER span [11, 39]).
fn otlp_shop() -> String {
    let t1 = otlp(
        "aaaa0000000000000000000000000001",
        &[
            (
                "gateway",
                vec![
                    otlp_span("01", "", 2, "GET /checkout", 0, 100),
                    otlp_span("02", "01", 3, "a", 10, 40),
                    otlp_span("03", "01", 3, "b", 20, 50),
                    otlp_span("04", "01", 3, "c", 60, 80),
                ],
            ),
            ("a", vec![otlp_span("05", "02", 2, "a", 11, 39)]),
            ("b", vec![otlp_span("06", "03", 2, "b", 21, 49)]),
            ("c", vec![otlp_span("07", "04", 2, "c", 61, 79)]),
        ],
    );
    let t2 = otlp(
        "aaaa0000000000000000000000000002",
        &[
            (
                "gateway",
                vec![
                    otlp_span("11", "", 2, "GET /checkout", 1000, 1060),
                    otlp_span("12", "11", 3, "a", 1010, 1040),
                    otlp_span("13", "11", 3, "b", 1020, 1050),
                ],
            ),
            ("a", vec![otlp_span("15", "12", 2, "a", 1011, 1039)]),
            ("b", vec![otlp_span("16", "13", 2, "b", 1021, 1049)]),
        ],
    );
    // The collector's file exporter: one export request per line.
    format!("{t1}\n{t2}\n")
}

#[test]
fn otlp_collapses_client_and_server_and_finds_stages_probability_and_own_work() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "shop.jsonl", &otlp_shop());
    let (out, v) = imported(&[f], None);
    // One service per service.name: the CLIENT spans made no service of their own.
    assert_eq!(keys(at(&v, "services")), ["gateway", "a", "b", "c"]);
    assert_eq!(
        out.yaml.matches("parallel: [a, b]").count(),
        1,
        "{}",
        out.yaml
    );
    let stages = at(&v, "services.gateway.stages").as_sequence().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(
        yaml_serde::to_string(&stages[1]).unwrap().trim(),
        "sequential:\n- c"
    );
    // c is called in 1 of 2 invocations; a and b in both (no probability key).
    assert_eq!(
        at(&v, "services.gateway.calls.c.probability").as_f64(),
        Some(0.5)
    );
    let a = at(&v, "services.gateway.calls.a").as_mapping().unwrap();
    assert!(!a.contains_key(Value::String("probability".into())));
    assert_eq!(
        at(&v, "services.gateway.service_time.p50").as_str(),
        Some("30ms")
    );
    assert_eq!(
        at(&v, "services.gateway.service_time.p99").as_str(),
        Some("39.8ms")
    );
    assert_eq!(
        at(&v, "services.a.service_time.value").as_str(),
        Some("28ms")
    );
    assert_eq!(at(&v, "client.entry").as_str(), Some("gateway"));
    assert!(
        has(&out.report, "2 traces, 12 spans read, 12 used, 0 not used"),
        "{:?}",
        out.report
    );
}

/// A Jaeger trace (times in µs): front [0, 100 000] calls back sequentially twice over CLIENT
/// spans: [10 000, 30 000] then [40 000, 60 000] (the second retried after the first failed).
/// Also: an orphan (parent `ff` is not in the trace) with one span under it, a back SERVER span
/// 5 ms late but shorter than its client (skew corrected: centred), and a SERVER span longer
/// than its CLIENT (skew that cannot be corrected: not used, with the span under it).
fn jaeger_trace() -> String {
    let span =
        |id: &str, parent: Option<&str>, p: &str, kind: &str, from: u64, dur: u64, err: bool| {
            let mut tags = vec![json!({"key": "span.kind", "type": "string", "value": kind})];
            if err {
                tags.push(json!({"key": "error", "type": "bool", "value": true}));
            }
            let refs: Vec<Json> = parent
                .map(|p| json!({"refType": "CHILD_OF", "traceID": "t1", "spanID": p}))
                .into_iter()
                .collect();
            json!({"traceID": "t1", "spanID": id, "operationName": "op", "references": refs,
               "startTime": 1_700_000_000_000_000u64 + from, "duration": dur, "tags": tags,
               "logs": [], "processID": p})
        };
    let t1 = json!({"traceID": "t1", "spans": [
        span("01", None, "p1", "server", 0, 100_000, false),
        span("02", Some("01"), "p1", "client", 10_000, 20_000, true),
        span("03", Some("02"), "p2", "server", 11_000, 18_000, true),
        span("04", Some("01"), "p1", "client", 40_000, 20_000, false),
        // 5 ms late: [46 000, 64 000] ends after its client [40 000, 60 000]; 18 ms fits in 20.
        span("05", Some("04"), "p2", "server", 46_000, 18_000, false),
        span("06", Some("ff"), "p2", "server", 70_000, 1_000, false),
        span("07", Some("06"), "p2", "client", 70_100, 500, false),
        // A third call whose server span outlasts the client: not used, with its child.
        span("08", Some("01"), "p1", "client", 80_000, 5_000, false),
        span("09", Some("08"), "p2", "server", 79_000, 8_000, false),
        span("10", Some("09"), "p2", "client", 80_000, 1_000, false),
    ], "processes": {"p1": {"serviceName": "front", "tags": []},
                     "p2": {"serviceName": "back", "tags": []}}});
    json!({"data": [t1], "total": 0, "limit": 0, "offset": 0, "errors": null}).to_string()
}

#[test]
fn jaeger_counts_orphans_and_skew_and_reports_repeated_calls() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "jaeger.json", &jaeger_trace());
    let (out, v) = imported(&[f], None);
    assert_eq!(keys(at(&v, "services")), ["front", "back"]);
    let r = &out.report;
    assert!(
        has(r, "1 traces, 10 spans read, 6 used, 4 not used"),
        "{r:?}"
    );
    assert!(has(r, "2 spans not used: orphan parent"), "{r:?}");
    assert!(
        has(
            r,
            "2 spans not used: outside its parent's interval (clock skew)"
        ),
        "{r:?}"
    );
    assert!(
        has(r, "1 spans used after a clock-skew correction"),
        "{r:?}"
    );
    assert!(has(r, "front → back: 2 calls in 1 invocations"), "{r:?}");
    assert!(
        has(
            r,
            "observed retries: front → back: 1 calls repeat a failed call"
        ),
        "{r:?}"
    );
    assert!(has(r, "errors: back: 1 of 2 invocations (50.0 %)"), "{r:?}");
    // Own work of back: 18 ms in both (the corrected one keeps its length). front lost a call
    // to skew, so it gives no own-work sample.
    assert_eq!(
        at(&v, "services.back.service_time.value").as_str(),
        Some("18ms")
    );
    assert!(
        out.yaml.contains("# no complete invocation"),
        "{}",
        out.yaml
    );
    // Sequential: no stages.
    assert!(!out.yaml.contains("stages:"), "{}", out.yaml);
}

/// A Zipkin v2 list: front's SERVER span [0, 50 ms] with a CLIENT span to back [5, 45] and
/// back's SERVER half sharing its id (`shared`), [10, 40]; back then calls an uninstrumented
/// `db` named by `remoteEndpoint` over [15, 25]; a span without `localEndpoint` is counted.
/// Own work: front 50 − 40 = 10 ms; back 30 − 10 = 20 ms; db 10 ms.
fn zipkin_list() -> String {
    let span = |id: &str,
                parent: Option<&str>,
                kind: &str,
                svc: Option<&str>,
                from: u64,
                dur: u64| {
        let mut s = json!({"traceId": "00000000000000000000000000000abc", "id": id, "kind": kind,
                           "name": "get /x", "timestamp": 1_700_000_000_000_000u64 + from,
                           "duration": dur});
        if let Some(p) = parent {
            s["parentId"] = json!(p);
        }
        if let Some(svc) = svc {
            s["localEndpoint"] = json!({"serviceName": svc});
        }
        s
    };
    let mut shared = span("b2", Some("a1"), "SERVER", Some("back"), 10_000, 30_000);
    shared["shared"] = json!(true);
    let mut db = span("c3", Some("b2"), "CLIENT", Some("back"), 15_000, 10_000);
    db["remoteEndpoint"] = json!({"serviceName": "db"});
    json!([
        span("a1", None, "SERVER", Some("front"), 0, 50_000),
        span("b2", Some("a1"), "CLIENT", Some("front"), 5_000, 40_000),
        shared,
        db,
        span("d4", Some("a1"), "CLIENT", None, 46_000, 1_000),
    ])
    .to_string()
}

#[test]
fn zipkin_splits_shared_span_ids_and_names_uninstrumented_callees() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "zipkin.json", &zipkin_list());
    let (out, v) = imported(&[f], Some(TraceFormat::Zipkin));
    assert_eq!(keys(at(&v, "services")), ["front", "back", "db"]);
    assert!(
        has(&out.report, "5 spans read, 4 used, 1 not used"),
        "{:?}",
        out.report
    );
    assert!(
        has(&out.report, "1 spans not used: no service name"),
        "{:?}",
        out.report
    );
    // front lost a child (no service name): no sample. back: 30 − 10 = 20 ms; db 10 ms.
    assert_eq!(
        at(&v, "services.back.service_time.value").as_str(),
        Some("20ms")
    );
    assert_eq!(
        at(&v, "services.db.service_time.value").as_str(),
        Some("10ms")
    );
    assert!(at(&v, "services.front.calls.back").is_mapping());
}

#[test]
fn root_operations_become_classes_with_their_shares_and_calls() {
    // Two root operations at gateway: /checkout calls pay, /browse does not.
    let mut lines = String::new();
    for i in 0..4u64 {
        let (op, pay) = if i % 2 == 0 {
            ("GET /checkout", true)
        } else {
            ("GET /browse", false)
        };
        let base = i * 1000;
        let mut gw = vec![otlp_span("01", "", 2, op, base, base + 50)];
        let mut by = Vec::new();
        if pay {
            gw.push(otlp_span("02", "01", 3, "pay", base + 10, base + 30));
            by.push((
                "pay",
                vec![otlp_span("03", "02", 2, "pay", base + 11, base + 29)],
            ));
        }
        by.insert(0, ("gateway", gw));
        lines.push_str(&otlp(&format!("{i:032x}"), &by).to_string());
        lines.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "classes.jsonl", &lines);
    let (_, v) = imported(&[f], None);
    assert_eq!(keys(at(&v, "clients")), ["get_checkout", "get_browse"]);
    assert_eq!(
        at(&v, "clients.get_checkout.entry").as_str(),
        Some("gateway")
    );
    let classes = at(&v, "services.gateway.calls.pay.classes");
    assert_eq!(
        yaml_serde::to_string(classes).unwrap().trim(),
        "- get_checkout"
    );
    // Within its class, every invocation calls pay: no probability.
    let pay = at(&v, "services.gateway.calls.pay").as_mapping().unwrap();
    assert!(!pay.contains_key(Value::String("probability".into())));
}

fn loadsim() -> Command {
    Command::cargo_bin("loadsim").unwrap()
}

#[test]
fn bad_trace_files_are_all_reported_with_file_and_line_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let malformed = write(d, "malformed.json", "{\"data\": [\n  {\"spans\": [}\n]}");
    let empty = write(d, "empty.json", "  \n");
    let unknown = write(d, "unknown.json", "{\"traces\": []}");
    let cycle = write(
        d,
        "cycle.json",
        &json!([
            {"traceId": "1", "id": "a", "parentId": "b", "timestamp": 1, "duration": 1,
             "localEndpoint": {"serviceName": "x"}},
            {"traceId": "1", "id": "b", "parentId": "a", "timestamp": 1, "duration": 1,
             "localEndpoint": {"serviceName": "x"}}
        ])
        .to_string(),
    );
    let times = write(
        d,
        "times.json",
        "[\n {\"traceId\": \"1\", \"id\": \"a\", \"timestamp\": \"soon\", \"duration\": -3,\n  \"localEndpoint\": {\"serviceName\": \"x\"}}\n]",
    );
    let out = loadsim()
        .args(["import", "traces"])
        .args([&malformed, &empty, &unknown, &cycle, &times])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    for expected in [
        "malformed.json:2:14",
        "is not valid JSON",
        "empty.json",
        "is empty",
        "unknown.json",
        "is not a trace format loadsim knows",
        "cycle.json",
        "span cycle in trace 1",
        "times.json:2",
        "`soon` is not a time",
        "`-3` is not a time",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
    loadsim()
        .args(["import", "traces", "--format", "xray"])
        .arg(&cycle)
        .assert()
        .code(2);
}

#[test]
fn the_output_never_overwrites_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "shop.jsonl", &otlp_shop());
    let before = std::fs::read(&f).unwrap();
    loadsim()
        .args(["import", "traces"])
        .arg(&f)
        .arg("--out")
        .arg(&f)
        .assert()
        .code(2);
    assert_eq!(std::fs::read(&f).unwrap(), before);
    let out = dir.path().join("shop.yaml");
    loadsim()
        .args(["import", "traces"])
        .arg(&f)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&out).unwrap().contains("services:"));
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/traces")
        .join(name)
}

/// The captured traces CI keeps beside the repository (`shared/traces`, see its README).
fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join("traces")
        .join(name)
}

/// Imports `file`, then loads and runs the scenario built from it, and returns the run.
fn import_and_run(file: &Path) -> (Value, loadsim::metrics::RunSummary) {
    assert!(file.exists(), "{} is missing", file.display());
    let (out, v) = imported(&[file.to_owned()], None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("imported.yaml");
    std::fs::write(&path, &out.yaml).unwrap();
    let sc = loadsim::scenario::Scenario::load(&path, &[], Some(7))
        .unwrap_or_else(|e| panic!("{e}\n{}", out.yaml));
    let run = loadsim::model::run(&sc).unwrap_or_else(|e| panic!("{e}"));
    (v, run)
}

#[test]
fn real_captured_traces_build_scenarios_that_run() {
    // Istio Bookinfo through Grafana Tempo (OTLP, base64 ids, `batches`).
    let (v, run) = import_and_run(&fixture("otlp_tempo_kiali_bookinfo_trace.json"));
    assert_eq!(
        keys(at(&v, "services")),
        [
            "istio-ingressgateway-istio-system",
            "productpage-bookinfo",
            "details-bookinfo",
            "reviews-bookinfo",
            "ratings-bookinfo"
        ]
    );
    assert!(
        run.metrics.success_rate.is_some_and(|s| s > 0.99),
        "{:?}",
        run.metrics.success_rate
    );
    // HotROD (Jaeger): frontend calls customer, driver and route; driver → redis.
    let (v, run) = import_and_run(&fixture("jaeger_hotrod_trace_5915e2d0.json"));
    assert_eq!(
        keys(at(&v, "services.frontend.calls")),
        ["customer", "driver", "route"]
    );
    assert!(at(&v, "services.driver.calls.redis").is_mapping());
    assert!(
        run.metrics.success_rate.is_some_and(|s| s > 0.99),
        "{:?}",
        run.metrics.success_rate
    );
}

#[test]
fn real_captured_load_traces_give_their_shape_and_rate() {
    // DeathStarBench hotel: frontend → search (→ geo, rate), reservation, profile, in sequence,
    // at 14.1 sampled roots/s with a probabilistic sampler of 0.3 (the README beside that file).
    let (v, run) = import_and_run(&shared("jaeger_dsb_hotel_load50_1000traces.json"));
    assert_eq!(
        keys(at(&v, "services.frontend.calls")),
        ["search", "reservation", "profile"]
    );
    assert_eq!(keys(at(&v, "services.search.calls")), ["geo", "rate"]);
    let rate = at(&v, "arrivals.rate").as_f64().unwrap();
    assert!((rate - 14.1 / 0.3).abs() < 1.0, "{rate}");
    assert!(
        run.metrics.success_rate.is_some_and(|s| s > 0.99),
        "{:?}",
        run.metrics.success_rate
    );
    // DeathStarBench media: nginx starts its four children at once.
    let (v, run) = import_and_run(&shared("jaeger_dsb_media_load25_first500.json"));
    let stage = at(&v, "services.nginx.stages.0.parallel")
        .as_sequence()
        .unwrap();
    assert_eq!(stage.len(), 4);
    assert!(
        run.metrics.success_rate.is_some_and(|s| s > 0.99),
        "{:?}",
        run.metrics.success_rate
    );
}

#[test]
fn a_root_client_span_is_a_service_unless_its_service_is_named_a_client() {
    // Bookinfo's ingress gateway writes one CLIENT span per request, the root of the trace. By
    // default it is a service of the system (its own work is the span less productpage's);
    // named with `--client` it is the client: the class is productpage's operation, entered at
    // productpage, and the gateway is no service.
    let file = fixture("otlp_tempo_kiali_bookinfo_trace.json");
    let (_, v) = imported(std::slice::from_ref(&file), None);
    assert!(keys(at(&v, "services")).contains(&"istio-ingressgateway-istio-system".into()));
    let (_, v) = imported_with(&[file], None, &["istio-ingressgateway.istio-system".into()]);
    assert_eq!(
        keys(at(&v, "services")),
        [
            "productpage-bookinfo",
            "details-bookinfo",
            "reviews-bookinfo",
            "ratings-bookinfo"
        ]
    );
    // One class: the scenario's single `client`.
    assert_eq!(
        at(&v, "client.entry").as_str(),
        Some("productpage-bookinfo")
    );
}
