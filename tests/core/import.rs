//! `loadsim import grpc|envoy` and `calls.<callee>.import` (issue 15) on the fixtures in
//! tests/fixtures/import/, written from the specifications (grpc/proposal A6-client-retries.md,
//! envoyproxy/envoy route_components.proto and circuit_breaker.proto): imported policies run
//! byte-identically to their hand-written equivalents, the printed YAML pasted by hand runs the
//! same, unsupported fields are named, and invalid files fail with the file, path and line.

use std::path::{Path, PathBuf};

use loadsim::commands::import::{ImportRequest, import};
use loadsim::import::{envoy, grpc};
use loadsim::metrics::RunSummary;
use loadsim::scenario::{Document, Scenario};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
}

fn run_file(path: &Path, seed: u64) -> RunSummary {
    let sc = Scenario::load(path, &[], Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    loadsim::model::run(&sc).unwrap_or_else(|e| panic!("{e}"))
}

/// Everything a run reports but its name and the machine's timings, as JSON text.
fn results(mut s: RunSummary) -> String {
    s.scenario.clear();
    let mut v = serde_json::to_value(&s).expect("serializable");
    v.as_object_mut().expect("an object").remove("engine");
    v.to_string()
}

fn grpc_request(file: &str, service: Option<&str>, method: Option<&str>) -> ImportRequest {
    ImportRequest::Grpc {
        file: fixture(file),
        select: grpc::Select {
            service: service.map(str::to_owned),
            method: method.map(str::to_owned),
        },
        strict: false,
    }
}

#[test]
fn an_imported_grpc_policy_runs_as_the_hand_written_one() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/production");
    for (imported, by_hand) in [
        ("grpc_retry_imported.yaml", "grpc_retry.yaml"),
        ("grpc_hedge_imported.yaml", "grpc_hedge.yaml"),
    ] {
        for seed in [7, 11] {
            let a = results(run_file(&fixture(imported), seed));
            let b = results(run_file(&shipped.join(by_hand), seed));
            assert_eq!(a, b, "{imported} vs {by_hand}, seed {seed}");
        }
    }
}

#[test]
fn an_imported_envoy_policy_runs_as_the_hand_written_one() {
    for seed in [7, 13] {
        let a = run_file(&fixture("envoy_imported.yaml"), seed);
        let b = run_file(&fixture("envoy_by_hand.yaml"), seed);
        assert!(a.calls["svc_a->svc_b"].retries > 0, "the policy retries");
        assert_eq!(results(a), results(b), "seed {seed}");
    }
}

/// The printed YAML, pasted under the edge of a small chain, runs exactly as the scenario import.
#[test]
fn the_printed_policy_pasted_by_hand_runs_as_the_import() {
    let chain = |edge: &str| {
        format!(
            "duration: 4s\ndrain: 10s\nseed: 3\narrivals: {{ rate: 200 }}\n\
             client: {{ entry: a, attempt_timeout: 5s }}\n\
             services:\n  a:\n    slots: 50\n    calls:\n      b:\n{edge}\
             \x20 b:\n    slots: 4\n    service_time: {{ dist: exponential, mean: 30ms }}\n\
             faults:\n  outage: {{ kind: error, service: b, from: 1s, to: 2s, fraction: 0.5 }}\n"
        )
    };
    let cases = [
        (
            grpc_request("grpc_retry.json", None, None),
            "        import: { grpc: grpc_retry.json }\n",
        ),
        (
            grpc_request("grpc_many.json", Some("shop.Cart"), Some("Other")),
            "        import: { grpc: grpc_many.json, service: shop.Cart, method: Other }\n",
        ),
        (
            ImportRequest::Envoy {
                file: fixture("envoy.yaml"),
                select: envoy::Select {
                    route: Some("gateway".into()),
                    cluster: Some("svc_c".into()),
                },
                strict: false,
            },
            "        import: { envoy: envoy.yaml, route: gateway, cluster: svc_c }\n",
        ),
    ];
    for (request, import_line) in cases {
        let printed = import(&request).unwrap_or_else(|e| panic!("{e}")).stdout;
        let pasted: String = printed.lines().map(|l| format!("        {l}\n")).collect();
        let by_hand = Document::from_text(&fixture("pasted.yaml"), &chain(&pasted))
            .unwrap_or_else(|e| panic!("{e}\n{printed}"));
        let by_hand = Scenario::from_document(&by_hand).unwrap_or_else(|e| panic!("{e}"));
        let path = std::env::temp_dir().join(format!(
            "loadsim-import-{}-{}.yaml",
            std::process::id(),
            import_line.len()
        ));
        // The scenario that imports must sit beside the fixtures (its path is relative).
        let beside = fixture(path.file_name().and_then(|n| n.to_str()).expect("a name"));
        std::fs::write(&beside, chain(import_line)).expect("writable fixtures folder");
        let imported = Scenario::load(&beside, &[], None);
        let _ = std::fs::remove_file(&beside);
        let imported = imported.unwrap_or_else(|e| panic!("{e}"));
        let a = loadsim::model::run(&imported).expect("runs");
        let b = loadsim::model::run(&by_hand).expect("runs");
        assert!(a.calls["a->b"].attempts > 0);
        assert_eq!(results(a), results(b), "{printed}");
    }
}

#[test]
fn the_grpc_translation_follows_a6() {
    let out = import(&grpc_request("grpc_many.json", Some("shop.Cart"), None)).expect("imports");
    // maxAttempts 7 is taken as 5; multiplier 1.5; codes 4 (DEADLINE_EXCEEDED), UNAVAILABLE,
    // INTERNAL, RESOURCE_EXHAUSTED → all three kinds.
    assert!(out.stdout.contains("retries: 4 "), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("backoff: {base: 100ms, cap: 1s 500ms, multiplier: 1.5}"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("retry_on: [timeout, reject, error]"));
    assert!(out.stdout.contains("is taken as 5"));
    // Exact method beats the service default; maxBackoff < initialBackoff → base = cap.
    let out = import(&grpc_request(
        "grpc_many.json",
        Some("shop.Cart"),
        Some("Checkout"),
    ))
    .expect("imports");
    assert!(out.stdout.contains("methodConfig[2]"));
    assert!(out.stdout.contains("backoff: {base: 50ms, cap: 50ms}"));
    assert!(out.stdout.contains("retry_on: [timeout]"));
    // A method named in one service only is found without --service.
    let out = import(&grpc_request("grpc_many.json", None, Some("Charge"))).expect("imports");
    assert!(out.stdout.contains("method \"Charge\""));
    // The hedging policy.
    let out = import(&grpc_request("grpc_hedge.json", None, None)).expect("imports");
    assert!(out.stdout.contains("hedge: {delay: 50ms, max_hedges: 2}"));
    assert!(!out.stdout.contains("retries:"));
}

#[test]
fn unsupported_fields_are_named_and_strict_refuses_them() {
    let out = import(&grpc_request("grpc_many.json", Some("shop.Cart"), None)).expect("imports");
    let notes = out.notes.join("\n");
    // `loadBalancingConfig` round_robin is imported (load_balancing_policies_are_imported).
    assert!(notes.contains("unsupported `methodConfig[1].waitForReady`"));
    assert_eq!(out.notes.len(), 1, "{notes}");
    let e = import(&ImportRequest::Grpc {
        file: fixture("grpc_many.json"),
        select: grpc::Select {
            service: Some("shop.Cart".into()),
            method: None,
        },
        strict: true,
    })
    .expect_err("strict refuses");
    let text = e.to_string();
    assert!(text.contains("grpc_many.json:11:7"), "{text}");
    assert!(text.contains("unsupported (--strict)"), "{text}");

    let out = import(&ImportRequest::Envoy {
        file: fixture("envoy.yaml"),
        select: envoy::Select {
            route: Some("checkout".into()),
            cluster: Some("svc_b".into()),
        },
        strict: false,
    })
    .expect("imports");
    let notes = out.notes.join("\n");
    for named in [
        "retry_policy.retry_host_predicate`",
        "retry_policy.retry_on: reset`",
        "retry_policy.retry_on: connect-failure`",
        "clusters[0].connect_timeout`",
        "thresholds[0].max_pending_requests`",
        "thresholds[1]`",
        "circuit_breakers max_requests`: approximated",
    ] {
        assert!(notes.contains(named), "{named} missing in:\n{notes}");
    }
    assert!(out.stdout.contains("retries: 3 "));
    assert!(out.stdout.contains("attempt_timeout: 250ms"));
    assert!(out.stdout.contains("call_timeout: 2s"));
    assert!(
        out.stdout
            .contains("backoff: {base: 10ms, cap: 200ms, jitter: envoy}")
    );
    assert!(
        out.stdout
            .contains("retry_budget: {budget_percent: 25, min_retry_concurrency: 5}")
    );
    // Envoy's defaults: a virtual host's retry_policy {retry_on: 5xx}, 1 retry, 25 ms / 250 ms.
    let out = import(&ImportRequest::Envoy {
        file: fixture("envoy.yaml"),
        select: envoy::Select {
            route: Some("defaults".into()),
            cluster: None,
        },
        strict: false,
    })
    .expect("imports");
    for line in [
        "attempt_timeout: 15s ",
        "call_timeout: 15s ",
        "retries: 1 ",
        "backoff: {base: 25ms, cap: 250ms, jitter: envoy}",
    ] {
        assert!(out.stdout.contains(line), "{line} in\n{}", out.stdout);
    }
}

/// Every problem of an invalid file at once, each with the file, the path and the line.
#[test]
fn invalid_files_name_the_file_path_and_line() {
    let err = |r: ImportRequest| import(&r).expect_err("invalid").to_string();
    let e = err(grpc_request("grpc_bad_syntax.json", None, None));
    assert!(
        e.contains("grpc_bad_syntax.json:3:58: is not valid JSON"),
        "{e}"
    );
    let e = err(grpc_request("grpc_bad_values.json", None, None));
    for want in [
        "grpc_bad_values.json:7:9: `methodConfig[0].retryPolicy.maxAttempts`: must be at least 2",
        "grpc_bad_values.json:8:9: `methodConfig[0].retryPolicy.initialBackoff`: `-0.1s` is negative",
        "grpc_bad_values.json:11:49: `methodConfig[0].retryPolicy.retryableStatusCodes[1]`: unknown status code `UNAVAILBLE`, did you mean `UNAVAILABLE`?",
    ] {
        assert!(e.contains(want), "{want}\nin\n{e}");
    }
    let e = err(grpc_request(
        "grpc_retry.json",
        Some("other.Svc"),
        Some("Get"),
    ));
    assert!(
        e.contains("grpc_retry.json:2:3: `methodConfig`: no method config applies to method \"other.Svc/Get\""),
        "{e}"
    );
    let envoy_req = |file: &str, route: &str| ImportRequest::Envoy {
        file: fixture(file),
        select: envoy::Select {
            route: Some(route.into()),
            cluster: None,
        },
        strict: false,
    };
    let e = err(envoy_req("envoy_bad.yaml", "r1"));
    for want in [
        "envoy_bad.yaml:5:7: `routes[0].route.timeout`: `-1s` is negative",
        "envoy_bad.yaml:7:9: `routes[0].route.retry_policy.retry_on`: unknown retry condition `sometimes`",
        "envoy_bad.yaml:8:9: `routes[0].route.retry_policy.num_retries`: must be a whole number",
        "envoy_bad.yaml:9:48: `routes[0].route.retry_policy.retry_back_off.max_interval`: must be at least `base_interval`",
    ] {
        assert!(e.contains(want), "{want}\nin\n{e}");
    }
    let e = err(envoy_req("envoy_bad.yaml", "twice"));
    assert!(
        e.contains("envoy_bad.yaml:12:5: `routes[2]`: more than one route is named \"twice\""),
        "{e}"
    );
    let e = err(envoy_req("envoy_bad.yaml", "redirect"));
    assert!(e.contains("has no `route` action"), "{e}");
    let e = err(envoy_req("envoy.yaml", "nope"));
    assert!(e.contains("envoy.yaml: no route named \"nope\""), "{e}");
    let e = err(envoy_req("envoy_bad_syntax.yaml", "r"));
    assert!(
        e.contains("envoy_bad_syntax.yaml:4:1: not valid YAML"),
        "{e}"
    );
}

#[test]
fn a_bad_import_key_names_the_scenario_line() {
    let e = Scenario::load(&fixture("bad_import.yaml"), &[], None)
        .expect_err("invalid")
        .to_string();
    assert!(
        e.contains("bad_import.yaml:6:9: `services.svc_a.calls.svc_b.import`: `route` and `cluster` go with `envoy`"),
        "{e}"
    );
    assert!(e.contains("missing.json: cannot read the file"), "{e}");
    assert!(
        e.contains("(imported by `services.gateway.calls.svc_a.import`)"),
        "{e}"
    );
    // Written with --set, `import` is refused (it is read when the file is loaded).
    let e = Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/naive.yaml"),
        &["services.svc_a.calls.svc_b.import={grpc: x.json}".to_owned()],
        None,
    )
    .expect_err("refused")
    .to_string();
    assert!(
        e.contains("is read when the scenario file is loaded"),
        "{e}"
    );
}

/// An Envoy cluster's `outlier_detection` becomes the edge's, field for field; what loadsim does
/// not model is named, and a detector enforced at 0 % writes nothing.
#[test]
fn envoy_outlier_detection_is_imported_and_its_gaps_named() {
    let envoy_import = |file: PathBuf| {
        import(&ImportRequest::Envoy {
            file,
            select: envoy::Select {
                route: Some("gateway".into()),
                cluster: Some("svc_c".into()),
            },
            strict: false,
        })
        .expect("imports")
    };
    let out = envoy_import(fixture("envoy.yaml"));
    assert!(
        out.stdout.contains(
            "outlier_detection: {consecutive_failures: 3, interval: 2s, base_ejection_time: 5s, \
             max_ejection_percent: 50}"
        ),
        "{}",
        out.stdout
    );
    let notes = out.notes.join("\n");
    assert!(
        notes.contains("outlier_detection.always_eject_one_host`: approximated"),
        "{notes}"
    );
    // The fixture sets enforcing_success_rate: 0 and leaves gateway failures unenforced: both
    // detectors are off in Envoy too, so neither is reported.
    assert!(!notes.contains("enforcing_success_rate"), "{notes}");
    assert!(!notes.contains("consecutive_gateway_failure"), "{notes}");

    let text = std::fs::read_to_string(fixture("envoy.yaml")).unwrap();
    let dir = std::env::temp_dir().join(format!("loadsim-import-od-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let variant = |name: &str, from: &str, to: &str| {
        assert!(text.contains(from));
        let path = dir.join(name);
        std::fs::write(&path, text.replace(from, to)).unwrap();
        path
    };
    // Envoy's defaults: the success-rate detector is on, and loadsim says it does not run it.
    let out = envoy_import(variant(
        "defaults.yaml",
        "        enforcing_success_rate: 0\n",
        "        enforcing_consecutive_gateway_failure: 100\n        always_eject_one_host: true\n",
    ));
    let notes = out.notes.join("\n");
    for named in [
        "outlier_detection.enforcing_success_rate`: approximated",
        "outlier_detection.consecutive_gateway_failure`: loadsim has no status codes",
    ] {
        assert!(notes.contains(named), "{named} missing in:\n{notes}");
    }
    assert!(!notes.contains("always_eject_one_host"), "{notes}");
    // Enforced at 0 %: no detector.
    let out = envoy_import(variant(
        "off.yaml",
        "        consecutive_5xx: 3\n",
        "        consecutive_5xx: 3\n        enforcing_consecutive_5xx: 0\n",
    ));
    assert!(
        !out.stdout.contains("outlier_detection: {"),
        "{}",
        out.stdout
    );
    assert!(
        out.notes
            .join("\n")
            .contains("so no outlier_detection is written")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn envoy_request(file: &str, route: Option<&str>, cluster: Option<&str>) -> ImportRequest {
    ImportRequest::Envoy {
        file: fixture(file),
        select: envoy::Select {
            route: route.map(str::to_owned),
            cluster: cluster.map(str::to_owned),
        },
        strict: false,
    }
}

/// Issue 30 item 12: what the source's own validator refuses is refused, every problem of the
/// file at once, at the source's line: gRPC's unique method names (service_config.proto
/// `MethodConfig.name`), uint32 and protobuf `float` ranges; Envoy's unknown fields and uint32
/// ranges, and `choice_count` ≥ 2 (cluster.proto).
#[test]
fn what_the_source_refuses_is_refused_at_its_line() {
    let e = import(&grpc_request("grpc_invalid.json", None, Some("Get")))
        .expect_err("invalid")
        .to_string();
    for want in [
        "grpc_invalid.json:7:9: `methodConfig[0].retryPolicy.maxAttempts`: 4294967296 is above \
         4294967295",
        "grpc_invalid.json:10:9: `methodConfig[0].retryPolicy.backoffMultiplier`: 1e300 is out of \
         the range of a protobuf `float`",
        "grpc_invalid.json:15:16: `methodConfig[1].name[0]`: names service \"svc.B\", method \
         \"Get\" again (first at methodConfig[0].name[0])",
    ] {
        assert!(e.contains(want), "{want}\nin\n{e}");
    }
    let e = import(&envoy_request("envoy_invalid.yaml", Some("r1"), Some("c1")))
        .expect_err("invalid")
        .to_string();
    for want in [
        "envoy_invalid.yaml:11:9: `routes[0].route.retry_policy.num_retries`: 4294967296 is above \
         4294967295",
        "envoy_invalid.yaml:12:9: `routes[0].route.retry_policy.num_retires`: unknown field \
         `num_retires`, did you mean `num_retries`?",
        "envoy_invalid.yaml:16:32: `clusters[0].least_request_lb_config.choice_count`: must be at \
         least 2",
        "envoy_invalid.yaml:19:11: `clusters[0].circuit_breakers.thresholds[0].max_requets`: \
         unknown field",
    ] {
        assert!(e.contains(want), "{want}\nin\n{e}");
    }
}

/// Issue 29 item 4: Envoy's `lb_policy` and gRPC's `loadBalancingConfig` become the edge's
/// `load_balancer`; what loadsim has no balancer for is reported.
#[test]
fn load_balancing_policies_are_imported() {
    for (cluster, line) in [
        (
            "least",
            "load_balancer: {policy: least_request, choice_count: 3}",
        ),
        (
            "least_default",
            "load_balancer: {policy: least_request, choice_count: 2}",
        ),
        ("random", "load_balancer: {policy: random}"),
    ] {
        let out = import(&envoy_request("envoy_lb.yaml", None, Some(cluster))).expect("imports");
        assert!(
            out.stdout.contains(line),
            "{cluster}: {line} in\n{}",
            out.stdout
        );
        assert!(
            !out.notes.join("\n").contains("lb_policy"),
            "{cluster}: {:?}",
            out.notes
        );
    }
    let out = import(&envoy_request("envoy_lb.yaml", None, Some("ring"))).expect("imports");
    assert!(!out.stdout.contains("load_balancer:"), "{}", out.stdout);
    assert!(
        out.notes
            .join("\n")
            .contains("unsupported `clusters[3].lb_policy`: RING_HASH"),
        "{:?}",
        out.notes
    );
    // Envoy's default is round robin.
    let out = import(&envoy_request("envoy.yaml", None, Some("svc_b"))).expect("imports");
    assert!(
        out.stdout.contains("load_balancer: {policy: round_robin}"),
        "{}",
        out.stdout
    );

    let out = import(&grpc_request("grpc_lb.json", None, None)).expect("imports");
    assert!(
        out.stdout
            .contains("load_balancer: {policy: least_request, choice_count: 10}"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("choice_count 12 is taken as 10"),
        "{}",
        out.stdout
    );
    let out = import(&grpc_request("grpc_pick_first.json", None, None)).expect("imports");
    assert!(!out.stdout.contains("load_balancer:"), "{}", out.stdout);
    assert!(
        out.notes
            .join("\n")
            .contains("unsupported `loadBalancingPolicy`: pick_first"),
        "{:?}",
        out.notes
    );
    let out = import(&grpc_request("grpc_many.json", Some("shop.Cart"), None)).expect("imports");
    assert!(
        out.stdout.contains("load_balancer: {policy: round_robin}"),
        "{}",
        out.stdout
    );
}

/// Issue 29 item 4: Envoy resets the upstream request when a timeout fires (only
/// `hedge_on_per_try_timeout` keeps it), which is loadsim's `cancel_on_abandon`.
#[test]
fn an_envoy_timeout_cancels_the_upstream_request() {
    let out = import(&envoy_request("envoy.yaml", Some("checkout"), None)).expect("imports");
    assert!(
        out.stdout.contains("cancel_on_abandon: true "),
        "{}",
        out.stdout
    );
    // The route timeout disabled, the per-try timeout still resets.
    let out = import(&envoy_request("envoy.yaml", Some("gateway"), None)).expect("imports");
    assert!(
        out.stdout.contains("cancel_on_abandon: true "),
        "{}",
        out.stdout
    );
}

/// Issue 30 item 12: a value the source accepts but loadsim refuses names the source file and
/// the field's line, not the scenario's `import` line; an acknowledged field is not a note, an
/// unknown acknowledged name is an error, and every problem comes in one pass.
#[test]
fn imported_values_are_located_in_their_source_and_acknowledged_by_name() {
    let e = Scenario::load(&fixture("located.yaml"), &[], None)
        .expect_err("invalid")
        .to_string();
    for want in [
        "located.yaml:7:5: `services.svc_a.slots`: must be at least 1",
        "grpc_long.json:7:7: `services.svc_a.calls.svc_b.backoff.multiplier`",
        "grpc_long.json:16:3: `services.svc_a.calls.svc_b.retry_throttle.token_ratio`",
        "`services.svc_a.calls.svc_b.import.acknowledge[1]`: `methodConfig[0].waitForReaddy` is \
         not a field this import reports unsupported",
        "grpc_invalid.json:15:16: `methodConfig[1].name[0]`",
    ] {
        assert!(e.contains(want), "{want}\nin\n{e}");
    }
    assert!(!e.contains("scenarios/base.yaml"), "{e}");
}

/// Issue 29 item 4: unsupported-field notes come from `loadsim import` and `loadsim check`, not
/// from every `run`; `acknowledge` silences the named ones.
#[test]
fn unsupported_notes_are_for_check_not_run_and_acknowledged_ones_are_silent() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = |ack: &str| {
        let path = dir.path().join(format!("s{}.yaml", ack.len()));
        std::fs::write(
            &path,
            format!(
                "extends: {}\nservices:\n  svc_a:\n    calls:\n      svc_b:\n        import:\n          \
                 grpc: {}\n          service: shop.Cart\n{ack}",
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("scenarios/naive.yaml")
                    .display(),
                fixture("grpc_many.json").display()
            ),
        )
        .unwrap();
        path
    };
    let plain = scenario("");
    let cmd = |args: &[&str], path: &Path| {
        let out = assert_cmd::Command::cargo_bin("loadsim")
            .unwrap()
            .args(args)
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stderr).unwrap()
    };
    let checked = cmd(&["check"], &plain);
    assert!(
        checked.contains("unsupported `methodConfig[1].waitForReady`"),
        "{checked}"
    );
    let ran = cmd(&["run"], &plain);
    assert!(!ran.contains("unsupported"), "{ran}");
    let acknowledged = scenario("          acknowledge: [\"methodConfig[1].waitForReady\"]\n");
    let checked = cmd(&["check"], &acknowledged);
    assert!(!checked.contains("waitForReady"), "{checked}");
}
