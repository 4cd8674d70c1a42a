//! The gate layer's tests: every protection key of the schema is registered (a gate, or why
//! not), each gate compiles to the guards it names, the hooks ask the guards in their documented
//! order, and edge and service admission answer alike (one code).

use std::collections::BTreeSet;
use std::path::Path;

use super::edge::{EdgeGate, RetryAsk, Settled};
use super::service::ServiceGate;
use super::{CallMemo, EDGE_KEYS, Reason, Registration, SERVICE_KEYS, Verdict};
use crate::model::Outcome;
use crate::protections::bad_snippets::{At, scenario_text};
use crate::protections::concurrency_limit::Permit;
use crate::rng::Stream;
use crate::scenario::{ClassIx, Document, Scenario};
use crate::time::{SimDuration, SimTime};

/// The scenario with `snippet` at the edge `a -> b` or at service `b`.
fn scenario(at: At, snippet: &str) -> Scenario {
    let text = scenario_text(at, snippet);
    let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
    Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{snippet}: {e}"))
}

fn edge_gate(snippet: &str) -> EdgeGate {
    let sc = scenario(At::Edge, snippet);
    EdgeGate::compile(&sc, &sc.edges[0], &["default"])
}

fn service_gate(snippet: &str) -> ServiceGate {
    let sc = scenario(At::Service, snippet);
    let b = &sc.services[sc.service_id("b").unwrap()];
    ServiceGate::compile(b, || Stream::new(7, "limiter/b"), &["default"])
}

/// The property names of `definition` in the scenario schema.
fn schema_keys(definition: &str) -> BTreeSet<String> {
    let schema = crate::schema::scenario();
    schema["definitions"][definition]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no {definition} in the schema"))
        .keys()
        .cloned()
        .collect()
}

/// Each key of `definition` is registered exactly once, and each registered key is in the
/// schema; each gate's example compiles to a gate holding the guards it names.
fn check_registration(
    definition: &str,
    table: &[(&str, Registration)],
    guards_of: impl Fn(&str) -> Vec<&'static str>,
) {
    let keys = schema_keys(definition);
    let registered: Vec<&str> = table.iter().map(|(k, _)| *k).collect();
    let unique: BTreeSet<&str> = registered.iter().copied().collect();
    assert_eq!(unique.len(), registered.len(), "a key registered twice");
    for key in &keys {
        assert!(
            unique.contains(key.as_str()),
            "`{key}` of {definition} has no gate registered in model::gate (add its guard, or \
             list it as NotAGate with the reason)"
        );
    }
    for key in &unique {
        assert!(
            keys.contains(*key),
            "`{key}` is registered but {definition} has no such key"
        );
    }
    for (key, reg) in table {
        match reg {
            Registration::Gate { guards, example } => {
                assert!(example.starts_with(&format!("{key}:")), "{key}: {example}");
                assert_eq!(&guards_of(example), guards, "{key}: {example}");
            }
            Registration::NotAGate(why) => assert!(!why.is_empty(), "{key}: say why"),
        }
    }
}

#[test]
fn every_edge_key_of_the_schema_is_registered() {
    check_registration("CallRaw", EDGE_KEYS, |example| edge_gate(example).names());
}

#[test]
fn every_service_key_of_the_schema_is_registered() {
    check_registration("ServiceRaw", SERVICE_KEYS, |example| {
        service_gate(example).names()
    });
}

#[test]
fn a_key_without_a_registration_fails_the_check() {
    let without_codel: Vec<(&str, Registration)> = SERVICE_KEYS
        .iter()
        .copied()
        .filter(|(k, _)| *k != "codel")
        .collect();
    let r = std::panic::catch_unwind(|| {
        check_registration("ServiceRaw", &without_codel, |e| service_gate(e).names())
    });
    assert!(r.is_err(), "a missing key must fail the check");
}

#[test]
fn an_edge_without_protections_has_an_empty_gate() {
    let mut g = edge_gate("retries: 2");
    assert!(g.names().is_empty());
    let mut permit = None;
    assert_eq!(
        g.before_send(SimTime::ZERO, ClassIx::new(0), &mut permit),
        Verdict::Pass
    );
    assert!(permit.is_none());
    assert!(!g.paces());
    assert_eq!(g.events_per_attempt(), 0);
    assert!(service_gate("queue_cap: 4").names().is_empty());
}

#[test]
fn guards_are_in_hook_order() {
    let g = edge_gate(
        "honor_retry_after: true\nretry_throttle: {max_tokens: 10, token_ratio: 0.1}\n\
         retry_budget: {kind: ratio, retry_ratio: 0.2}\nretry_quota: {kind: aws_adaptive}\n\
         circuit_breaker: {failure_rate: 0.5}\nadaptive_throttle: {k: 2}\n\
         rate_limit: {max_tokens: 5, fill_interval: 1s}\n\
         concurrency_limit: {algorithm: fixed, limit: 4}",
    );
    assert_eq!(
        g.names(),
        [
            "pushback",
            "throttle",
            "ratio_budget",
            "quota",
            "pace",
            "breaker",
            "adaptive",
            "rate_limit",
            "concurrency_limit"
        ]
    );
    assert!(g.paces());
    assert_eq!(g.events_per_attempt(), 1, "the AWS rate limiter holds once");
    let s = service_gate(
        "rate_limit: {max_tokens: 5, fill_interval: 1s}\n\
         concurrency_limit: {algorithm: fixed, limit: 4}\ndrop_expired: true\n\
         max_queue_time: 100ms\ncodel: {target: 5ms, interval: 100ms}",
    );
    assert_eq!(
        s.names(),
        [
            "rate_limit",
            "concurrency_limit",
            "drop_expired",
            "max_queue_time",
            "codel"
        ]
    );
    assert_eq!(s.events_per_request(), 0);
}

/// Edge and service admission are one code: the same configuration answers the same sequence of
/// requests alike on both sides — the rate limit first, then the limiter, whose permit goes back
/// at settle / finish.
#[test]
fn edge_and_service_admission_answer_alike() {
    let config = "rate_limit: {max_tokens: 3, fill_interval: 1s}\n\
                  concurrency_limit: {algorithm: fixed, limit: 2}";
    let mut edge = edge_gate(config);
    let mut service = service_gate(config);
    let t = |ms: u64| SimTime(ms * 1_000_000);
    let mut permits = vec![Permit::default(); 8];
    let mut verdicts = Vec::new();
    for i in 0..4 {
        let (mut pe, mut ps) = (None, None);
        let ve = edge.before_send(t(i), ClassIx::new(0), &mut pe);
        let vs = service.admit(t(i), ClassIx::new(0), &mut ps);
        assert_eq!(ve, vs, "request {i}");
        assert_eq!(pe, ps, "request {i}");
        if let Some(p) = pe {
            permits[i as usize] = p;
        }
        verdicts.push(ve);
    }
    assert_eq!(
        verdicts,
        [
            Verdict::Pass,
            Verdict::Pass,
            Verdict::Refuse(Reason::Limited),
            Verdict::Refuse(Reason::RateLimited)
        ]
    );
    // The first request ends: its permit goes back on both sides, and the next second's token
    // lets one more through.
    edge.on_settle(t(10), Settled::Abandoned, &permits, 0, CallMemo::default());
    service.finish(
        t(10),
        &permits,
        0,
        crate::protections::concurrency_limit::Release::Ignored,
        false,
    );
    let (mut pe, mut ps) = (None, None);
    let second = SimTime::ZERO + SimDuration::from_secs(1);
    assert_eq!(
        edge.before_send(second, ClassIx::new(0), &mut pe),
        Verdict::Pass
    );
    assert_eq!(
        service.admit(second, ClassIx::new(0), &mut ps),
        Verdict::Pass
    );
}

#[test]
fn the_breaker_refuses_once_open_and_ends_the_call() {
    let mut g = edge_gate("circuit_breaker: {failure_rate: 0.5, min_requests: 2}");
    let now = SimTime(1_000_000_000);
    let settle = |g: &mut EdgeGate| {
        let failed = Settled::Replied {
            outcome: Outcome::Error,
            counts: true,
        };
        g.on_settle(now, failed, &[], 0, CallMemo::default());
    };
    let mut permit = None;
    assert_eq!(
        g.before_send(now, ClassIx::new(0), &mut permit),
        Verdict::Pass
    );
    settle(&mut g);
    settle(&mut g);
    settle(&mut g);
    let refused = g.before_send(now, ClassIx::new(0), &mut permit);
    assert_eq!(refused, Verdict::Refuse(Reason::CircuitOpen));
    assert!(Reason::CircuitOpen.ends_call());
    assert!(!Reason::ThrottledLocally.ends_call());
}

#[test]
fn before_retry_asks_in_order_and_a_hedge_asks_only_the_a6_bucket() {
    let mut g = edge_gate(
        "honor_retry_after: true\nretry_throttle: {max_tokens: 2, token_ratio: 0.1}\n\
         retry_budget: {budget_percent: 0, min_retry_concurrency: 0}",
    );
    let mut memo = CallMemo::default();
    let ask = RetryAsk {
        now: SimTime::ZERO,
        hedge: false,
        pushback_us: 0,
        timed_out: false,
        active: 1,
        active_retries: 0,
    };
    // "Do not retry" comes first, before the budget that would refuse too.
    let no_retry = RetryAsk {
        pushback_us: crate::protections::pushback::NO_RETRY_US,
        ..ask
    };
    assert_eq!(
        g.before_retry(no_retry, &mut memo),
        Verdict::Refuse(Reason::PushbackNoRetry)
    );
    assert_eq!(
        g.before_retry(ask, &mut memo),
        Verdict::Refuse(Reason::BudgetDenied)
    );
    // A hedge is judged by the A6 bucket alone: the budget does not count it.
    let hedge = RetryAsk { hedge: true, ..ask };
    assert_eq!(g.before_retry(hedge, &mut memo), Verdict::Pass);
    // Two failures empty the bucket: now it refuses first, a retry and a hedge alike.
    for _ in 0..2 {
        let failed = Settled::TimedOut { counts: true };
        g.on_settle(SimTime::ZERO, failed, &[], 0, memo);
    }
    assert_eq!(
        g.before_retry(ask, &mut memo),
        Verdict::Refuse(Reason::RetriesThrottled)
    );
    assert_eq!(
        g.before_retry(hedge, &mut memo),
        Verdict::Refuse(Reason::HedgesThrottled)
    );
}

#[test]
fn a_retry_after_hint_holds_the_retry_and_the_quota_keeps_its_cost() {
    let mut g = edge_gate("honor_retry_after: true\nretry_quota: {kind: aws_standard}");
    let mut memo = CallMemo::default();
    let ask = RetryAsk {
        now: SimTime::ZERO,
        hedge: false,
        pushback_us: 250_000,
        timed_out: true,
        active: 1,
        active_retries: 0,
    };
    assert_eq!(
        g.before_retry(ask, &mut memo),
        Verdict::Hold(SimDuration::from_millis(250), Reason::PushbackHonored)
    );
    assert_eq!(
        memo.quota_cost as u32,
        crate::protections::quota::Quota::cost(true)
    );
}

#[test]
fn dequeue_drops_in_order() {
    let mut s = service_gate("drop_expired: true\nmax_queue_time: 100ms");
    let now = SimTime(1_000_000_000);
    let long = SimDuration::from_millis(200);
    assert_eq!(
        s.dequeue(now, now, long),
        Verdict::Refuse(Reason::DroppedExpired)
    );
    assert_eq!(
        s.dequeue(now, SimTime::NEVER, long),
        Verdict::Refuse(Reason::DroppedQueueTime)
    );
    assert_eq!(
        s.dequeue(now, SimTime::NEVER, SimDuration::from_millis(50)),
        Verdict::Pass
    );
}
