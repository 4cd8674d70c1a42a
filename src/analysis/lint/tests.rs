//! The linter against the shipped scenarios and hand-computed cases.

use super::*;
use crate::scenario::{Document, EdgeIx};
use std::path::Path;

const MS: u64 = 1_000_000;

fn scenario(yaml: &str) -> Scenario {
    let doc = Document::from_text(Path::new("t.yaml"), yaml).unwrap();
    Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{e}"))
}

fn shipped(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.yaml"));
    Scenario::load(&p, &[], None).unwrap()
}

fn edge(sc: &Scenario, name: &str) -> EdgeIx {
    EdgeIx::new(sc.edges.iter().position(|e| e.name == name).unwrap())
}

fn warnings(l: &Lint, check: Check, subject: &str) -> usize {
    l.findings
        .iter()
        .filter(|f| f.level == Level::Warning && f.check == check && f.subject == subject)
        .count()
}

#[test]
fn naive_budget_needs_4_07s_where_1s_is_waited() {
    let sc = shipped("naive");
    let l = lint(&sc);
    // svc_a->svc_b: 4 attempts × 1 s + max backoffs 10 + 20 + 40 ms = 4.07 s.
    let e = edge(&sc, "svc_a->svc_b");
    let w = call_worst_case(&sc.edges[e]);
    assert_eq!(w.attempts, 4);
    assert_eq!(
        w.backoffs,
        vec![
            SimDuration(10 * MS),
            SimDuration(20 * MS),
            SimDuration(40 * MS)
        ]
    );
    assert_eq!(w.total, SimDuration(4_070 * MS));
    // svc_a serves under gateway->svc_a's 1 s attempt timeout (no deadline reaches it):
    // 1 attempt fits (1 s ≤ 1 s), a second would need 1 s + 10 ms + 1 s.
    let under = serves_under(&sc)[sc.service_id("svc_a").unwrap()].unwrap();
    assert_eq!(under.wait, SimDuration(1_000 * MS));
    assert_eq!(under.set_by, Waiter::Edge(edge(&sc, "gateway->svc_a")));
    assert!(!under.deadline);
    assert_eq!(attempts_that_fit(&w, under.wait), 1);
    // Both retrying edges are flagged; the client is what users wait for: 3 × 1 s + 2 × 50 ms.
    assert_eq!(warnings(&l, Check::Budget, "svc_a->svc_b"), 1);
    assert_eq!(warnings(&l, Check::Budget, "gateway->svc_a"), 1);
    assert_eq!(l.client.total, SimDuration(3_100 * MS));
    // Unbounded queues without drop_expired at every service.
    for s in ["gateway", "svc_a", "svc_b"] {
        assert_eq!(warnings(&l, Check::Queue, s), 1, "{s}");
    }
    // svc_b: 16 slots / 20 ms = 800/s; under sustained failure 400/s × 3·4·4 = 19 200/s with
    // nothing to shed it.
    let b = sc.service_id("svc_b").unwrap();
    let load = l.loads.iter().find(|x| x.service == b).unwrap();
    assert!((load.capacity[0].unwrap() - 800.0).abs() < 1e-9);
    assert!((load.capacity[1].unwrap() - 80.0).abs() < 1e-9);
    assert_eq!(load.sustained, 48.0);
    // svc_a holds a slot up to its call's 4.07 s when svc_b times out (no deadline cuts it):
    // 128 / 4.07 s ≈ 31.4/s against 400/s × 3·4 = 4800/s. The gateway, with deadlines
    // (deadline_budget), up to min(1 × 1 s, 1 s) = 1 s: 512/s.
    let a = sc.service_id("svc_a").unwrap();
    let load = l.loads.iter().find(|x| x.service == a).unwrap();
    assert!((load.timeout_hold_s.unwrap() - 4.07).abs() < 1e-9);
    assert!((load.timeout_capacity.unwrap() - 128.0 / 4.07).abs() < 1e-9);
    let db = shipped("deadline_budget");
    let g = db.service_id("gateway").unwrap();
    let db_lint = lint(&db);
    let load = db_lint.loads.iter().find(|x| x.service == g).unwrap();
    assert_eq!(load.timeout_capacity, Some(512.0));
    assert_eq!(warnings(&l, Check::Load, "svc_b"), 1);
}

#[test]
fn deadline_budget_fits_and_protected_queues_hold() {
    // deadline_budget: svc_a serves under min(gateway->svc_a 1 s, the client's 1 s deadline)
    // = 1 s; svc_a->svc_b: 3 × 300 ms + 10 ms + 20 ms = 930 ms ≤ 1 s. gateway->svc_a: 1 × 1 s
    // ≤ 1 s.
    let sc = shipped("deadline_budget");
    let l = lint(&sc);
    let e = edge(&sc, "svc_a->svc_b");
    assert_eq!(call_worst_case(&sc.edges[e]).total, SimDuration(930 * MS));
    assert_eq!(l.count(Level::Warning), 0, "{:#?}", l.findings);
    // Throttled svc_a->svc_b under sustained failure: min(3, 1 + 0.1) = 1.1 per call, so
    // svc_b sees 3 (client) × 1 × 1.1 = 3.3 attempts per user request.
    let b = sc.service_id("svc_b").unwrap();
    let load = l.loads.iter().find(|x| x.service == b).unwrap();
    assert!((load.sustained - 3.3).abs() < 1e-12);
    assert_eq!(load.worst, 9);

    // protected, §7: svc_b 16 × 20 ms / 16 = 20 ms normally, 16 × 200 ms / 16 = 200 ms in
    // slow_b, against svc_a->svc_b's 300 ms (more than half: a note). svc_a (no own work)
    // holds a slot ≥ svc_b's mean: 64 × 20 ms / 128 = 10 ms, 64 × 200 ms / 128 = 100 ms.
    let sc = shipped("protected");
    let l = lint(&sc);
    assert_eq!(l.count(Level::Warning), 0, "{:#?}", l.findings);
    let q = |name: &str| {
        let s = sc.service_id(name).unwrap();
        l.queues
            .iter()
            .find(|q| q.service == s)
            .unwrap()
            .bound_s
            .clone()
            .unwrap()
    };
    let (b, a) = (q("svc_b"), q("svc_a"));
    assert!(
        (b[0] - 0.020).abs() < 1e-12 && (b[1] - 0.200).abs() < 1e-12,
        "{b:?}"
    );
    assert!(
        (a[0] - 0.010).abs() < 1e-12 && (a[1] - 0.100).abs() < 1e-12,
        "{a:?}"
    );
    assert!(l.findings.iter().any(|f| f.level == Level::Note
        && f.check == Check::Queue
        && f.subject == "svc_b"
        && f.message.contains("in slow_b")));
}

#[test]
fn deadline_flags_the_retries_the_deadline_cuts() {
    // deadline: svc_a->svc_b 4 × 300 ms + 10 + 20 + 40 ms = 1.27 s against a 1 s deadline:
    // 3 attempts fit (3 × 300 + 10 + 20 = 930 ms), the 4th would end at 1.27 s. The fix is
    // deadline_budget's `retries: 2`.
    let sc = shipped("deadline");
    let l = lint(&sc);
    let f = l
        .findings
        .iter()
        .find(|f| f.check == Check::Budget && f.subject == "svc_a->svc_b")
        .unwrap();
    assert!(f.message.contains("3 of them fit"), "{}", f.message);
    assert!(f.fix.as_deref().unwrap().contains("retries: 2"));
    // Expired work is dropped, so svc_b's 19 200/s of retries are shed: a note.
    assert_eq!(warnings(&l, Check::Load, "svc_b"), 0);
    assert_eq!(warnings(&l, Check::Queue, "svc_b"), 0);
}

#[test]
fn deadlines_cut_the_wait_and_tightest_caller_wins() {
    // client (2 s, deadline) → a; a → c (5 s, propagated) and a → b (1 s, not propagated);
    // b → c (300 ms, propagated). a serves under 2 s; c is reached by a→c with min(5 s, 2 s)
    // = 2 s and by b→c with 300 ms (b has no deadline, so no cut): the tightest is 300 ms.
    // Both a→c and b→c propagate, so c's requests carry a deadline; a→b does not, so b's
    // do not.
    let sc = scenario(
        "duration: 1s\narrivals: { rate: 1 }\n\
         client: { entry: a, attempt_timeout: 2s, propagate_deadline: true }\n\
         services:\n  a:\n    slots: 1\n    calls:\n      c: { attempt_timeout: 5s, propagate_deadline: true }\n      b: { attempt_timeout: 1s }\n  b:\n    slots: 1\n    calls:\n      c: { attempt_timeout: 300ms, propagate_deadline: true }\n  c:\n    slots: 1\n    service_time: { dist: constant, value: 10ms }\n",
    );
    let u = serves_under(&sc);
    let (a, b, c) = (0, 1, 2);
    assert_eq!(u[a].unwrap().wait, SimDuration(2_000 * MS));
    assert_eq!(u[b].unwrap().wait, SimDuration(1_000 * MS));
    assert!(!u[b].unwrap().deadline);
    let uc = u[c].unwrap();
    assert_eq!(uc.wait, SimDuration(300 * MS));
    assert_eq!(uc.set_by, Waiter::Edge(edge(&sc, "b->c")));
    assert!(uc.deadline);
    // a→c: one 5 s attempt against a's 2 s: none fits, suggest a timeout below 2 s.
    let l = lint(&sc);
    let f = l
        .findings
        .iter()
        .find(|f| f.subject == "a->c" && f.check == Check::Budget)
        .unwrap();
    assert!(f.message.contains("not one attempt fits"), "{}", f.message);
    // Mean service times: c 10 ms; b ≥ 10 ms; a ≥ 10 ms (a→c) + 10 ms (a→b) = 20 ms.
    let m = mean_service_time(&sc, Regime::Normal);
    assert!((m[a] - 0.020).abs() < 1e-12 && (m[b] - 0.010).abs() < 1e-12);
}

#[test]
fn fit_arithmetic() {
    // 3 attempts × 300 ms, backoff base 100 ms cap 150 ms: waits ≤ 100 ms, 150 ms.
    // Worst: 900 + 100 + 150 = 1150 ms. In 1 s: 300 | +100+300 = 700 | +150+300 = 1150 → 2.
    // A timeout that keeps 3 attempts in 1 s: (1000 − 250) / 3 = 250 ms.
    let sc = scenario(
        "duration: 1s\narrivals: { rate: 1 }\n\
         client: { entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 1\n    calls:\n      b: { attempt_timeout: 300ms, retries: 2, backoff: { base: 100ms, cap: 150ms } }\n  b:\n    slots: 1\n    service_time: { dist: constant, value: 10ms }\n",
    );
    let w = call_worst_case(&sc.edges[0]);
    assert_eq!(w.total, SimDuration(1_150 * MS));
    assert_eq!(attempts_that_fit(&w, SimDuration(1_000 * MS)), 2);
    assert_eq!(attempts_that_fit(&w, SimDuration(1_150 * MS)), 3);
    assert_eq!(attempts_that_fit(&w, SimDuration(299 * MS)), 0);
    assert_eq!(
        timeout_that_fits(&w, SimDuration(1_000 * MS)),
        Some(SimDuration(250 * MS))
    );
    assert_eq!(timeout_that_fits(&w, SimDuration(200 * MS)), None);
    assert_eq!(describe_call(&w), "3 × 300ms + 100ms + 150ms = 1.15s");
}

#[test]
fn queue_wait_over_the_timeout_is_a_warning_with_a_cap_that_fits() {
    // 4 slots, 100 ms mean, cap 50: 50 × 100 ms / 4 = 1.25 s ≥ the client's 1 s. A cap under
    // half of 1 s: 0.5 × 1 s × 4 / 100 ms = 20 (at 30/s, 15 arrive in half a second: fewer,
    // so the cap suggested is 15).
    let sc = scenario(
        "duration: 1s\narrivals: { rate: 30 }\n\
         client: { entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 4\n    queue_cap: 50\n    service_time: { dist: exponential, mean: 100ms }\n",
    );
    let l = lint(&sc);
    assert!((l.queues[0].bound_s.as_ref().unwrap()[0] - 1.25).abs() < 1e-12);
    let f = l.findings.iter().find(|f| f.check == Check::Queue).unwrap();
    assert_eq!(f.level, Level::Warning);
    assert!(f.fix.as_deref().unwrap().contains("queue_cap: 15"), "{f:?}");
    // Capacity 4 / 100 ms = 40/s against 30/s: no load finding.
    assert!(l.findings.iter().all(|f| f.check != Check::Load));
}

#[test]
fn drop_expired_without_a_deadline_does_nothing() {
    let sc = scenario(
        "duration: 1s\narrivals: { rate: 1 }\n\
         client: { entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 1\n    drop_expired: true\n    service_time: { dist: constant, value: 1ms }\n",
    );
    let l = lint(&sc);
    assert_eq!(warnings(&l, Check::Deadline, "a"), 1);
    let f = l
        .findings
        .iter()
        .find(|f| f.check == Check::Deadline)
        .unwrap();
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("client.propagate_deadline: true")
    );
}

#[test]
fn overload_without_fault_is_a_warning() {
    // 2 slots × 1 / 50 ms = 40/s against 100/s: raise slots above 100 / 40 × 2 = 5.
    let sc = scenario(
        "duration: 1s\narrivals: { rate: 100 }\n\
         client: { entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 2\n    queue_cap: 1\n    service_time: { dist: constant, value: 50ms }\n",
    );
    let l = lint(&sc);
    let f = l.findings.iter().find(|f| f.check == Check::Load).unwrap();
    assert_eq!(f.level, Level::Warning);
    assert!(
        f.message.contains("100/s") && f.message.contains("40/s"),
        "{}",
        f.message
    );
    assert!(f.fix.as_deref().unwrap().contains("above 5"));
}

#[test]
fn a_capacity_fault_cuts_capacity_in_its_window() {
    // 8 slots × 1 / 50 ms = 160/s normally; the fault leaves 2 slots: 2 / 50 ms = 40/s.
    let sc = scenario(
        "duration: 10s\narrivals: { rate: 100 }\n\
         client: { entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 8\n    queue_cap: 4\n    service_time: { dist: constant, value: 50ms }\n\
         faults:\n  cut: { kind: capacity, service: a, slots: 2, from: 1s, duration: 2s }\n",
    );
    let l = lint(&sc);
    let load = l
        .loads
        .iter()
        .find(|x| x.service == ServiceIx::new(0))
        .unwrap();
    assert_eq!(load.capacity, vec![Some(160.0), Some(40.0)]);
    let f = l.findings.iter().find(|f| f.check == Check::Load).unwrap();
    assert!(
        f.message.contains("cut") && f.message.contains("40/s"),
        "{}",
        f.message
    );
}

#[test]
fn numbers_print_short() {
    assert_eq!(show_duration(SimDuration(4_070 * MS)), "4.07s");
    assert_eq!(show_duration(SimDuration(300 * MS)), "300ms");
    assert_eq!(show_duration(SimDuration(500_000)), "0.5ms");
    assert_eq!(show_rate(19_200.0), "19200/s");
    assert_eq!(show_rate(128.0 / 0.93), "137.6/s");
    assert_eq!(show_factor(3.3000000000000003), "3.3");
}

/// Issue 18: a service no request can reach was accepted without a word; it is a warning, and
/// a service reached only through another unreachable one is one too. Reachable ones are not.
#[test]
fn unreachable_services_are_warned_about() {
    let sc = scenario(
        "duration: 10s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1, calls: {b: {attempt_timeout: 100ms}}}\n  b: {slots: 1}\n  orphan: {slots: 1, calls: {c: {attempt_timeout: 100ms}}}\n  c: {slots: 1}\n",
    );
    let l = lint(&sc);
    for s in ["orphan", "c"] {
        assert_eq!(warnings(&l, Check::Reach, s), 1, "{s}: {:?}", l.findings);
    }
    for s in ["a", "b"] {
        assert_eq!(warnings(&l, Check::Reach, s), 0, "{s}");
    }
    for name in ["naive", "deadline", "deadline_budget", "protected"] {
        assert!(
            lint(&shipped(name))
                .findings
                .iter()
                .all(|f| f.check != Check::Reach),
            "{name}"
        );
    }
}

#[test]
fn limiter_settings_that_cannot_act_are_flagged() {
    let scenario_with = |edge: &str, service: &str| {
        scenario(&format!(
            "duration: 60s\narrivals: {{rate: 10}}\nclient: {{entry: a, attempt_timeout: 1s}}\n\
             services:\n  a:\n    slots: 4\n    calls:\n      b:\n        attempt_timeout: 1s\n\
             \x20       {edge}\n  b:\n    slots: 16\n    service_time: {{dist: constant, value: 1ms}}\n\
             \x20   {service}\nfaults:\n  slow:\n    kind: slow\n    service: b\n    from: 10s\n\
             \x20   duration: 2s\n    service_time: {{dist: constant, value: 10ms}}\n"
        ))
    };
    // A server-side fixed limit of 2000 above b's 16 slots: 1984 wait behind them, 1984 × 10 ms
    // / 16 = 1.24 s in the fault, not under the 1 s a->b waits; and an Envoy update interval as
    // long as the 2 s fault on the edge.
    let sc = scenario_with(
        "concurrency_limit: {algorithm: envoy_gradient, concurrency_update_interval: 2s, min_rtt_calc_interval: 30s}",
        "concurrency_limit: {algorithm: fixed, limit: 2000}",
    );
    let l = lint(&sc);
    assert_eq!(warnings(&l, Check::Limiter, "b"), 1, "{:#?}", l.findings);
    let f = l
        .findings
        .iter()
        .find(|f| f.subject == "b" && f.check == Check::Limiter)
        .unwrap();
    assert!(
        f.message.contains("1984 × 10ms / 16 = 1.24s in slow"),
        "{}",
        f.message
    );
    // At most 16 + ⌊0.5 × 1 s × 16 / 10 ms⌋ = 816 keeps the wait under half of 1 s.
    assert!(f.fix.as_deref().unwrap().contains("at most 816"), "{f:?}");
    assert_eq!(warnings(&l, Check::Limiter, "a->b"), 1);
    let note = l
        .findings
        .iter()
        .find(|f| f.check == Check::Limiter && f.message.contains("minRTT"))
        .unwrap();
    assert!(note.message.contains("every 30s"), "{}", note.message);
    // Within the slots and shorter than the fault: nothing.
    let sc = scenario_with(
        "rate_limit: {max_tokens: 10, fill_interval: 1s}",
        "concurrency_limit: {algorithm: gradient2, min_limit: 4}",
    );
    let l = lint(&sc);
    assert_eq!(
        l.findings
            .iter()
            .filter(|f| f.check == Check::Limiter)
            .count(),
        0
    );
    // AIMD's default minimum (20) is 4 above the 16 slots: they wait 4 × 10 ms / 16 = 2.5 ms at
    // most, well under the 1 s: a note, not a warning.
    let sc = scenario_with("", "concurrency_limit: {algorithm: aimd, timeout: 100ms}");
    let l = lint(&sc);
    assert_eq!(warnings(&l, Check::Limiter, "b"), 0, "{:#?}", l.findings);
    assert!(l.findings.iter().any(|f| f.subject == "b"
        && f.level == Level::Note
        && f.message.contains("at most 2.5ms in slow")));
}

/// Issue 29: a client-side limit (an imported Envoy `max_requests`) is one for the edge, over
/// every replica of the callee: it is compared with slots × replicas (× `max_replicas` when
/// autoscaled), and a callee whose own bounded queue fills first makes it a note.
#[test]
fn a_call_limit_counts_every_replica_of_the_callee_and_its_queue() {
    let text = |b: &str| {
        scenario(&format!(
            "duration: 60s\narrivals: {{rate: 100}}\nclient: {{entry: a, attempt_timeout: 2s}}\n\
             services:\n  a:\n    slots: 64\n    queue_cap: 64\n    calls:\n      b:\n\
             \x20       attempt_timeout: 1s\n        concurrency_limit: {{algorithm: fixed, limit: 4096}}\n\
             \x20 b:\n    slots: 32\n    service_time: {{dist: constant, value: 10ms}}\n{b}"
        ))
    };
    // One replica, unbounded queue: 4064 wait behind 32 slots, 4064 × 10 ms / 32 = 1.27 s ≥ 1 s.
    let l = lint(&text(""));
    assert_eq!(warnings(&l, Check::Limiter, "a->b"), 1, "{:#?}", l.findings);
    // 6 replicas: 192 slots, 3904 × 10 ms / 192 = 203 ms: a note, naming the replicas.
    let l = lint(&text("    replicas: 6\n"));
    assert_eq!(warnings(&l, Check::Limiter, "a->b"), 0, "{:#?}", l.findings);
    let f = l.findings.iter().find(|f| f.subject == "a->b").unwrap();
    assert!(
        f.message
            .contains("the 192 slots of b's 6 replicas (32 each)"),
        "{}",
        f.message
    );
    // Autoscaled from 1 to 6 replicas: the most it may have.
    let l = lint(&text(
        "    autoscale: {target_utilization: 0.7, min_replicas: 1, max_replicas: 6}\n",
    ));
    assert_eq!(warnings(&l, Check::Limiter, "a->b"), 0, "{:#?}", l.findings);
    // One replica with a bounded queue of 64: b rejects before the limit can refuse.
    let l = lint(&text("    queue_cap: 64\n"));
    assert_eq!(warnings(&l, Check::Limiter, "a->b"), 0, "{:#?}", l.findings);
    assert!(l.findings.iter().any(|f| f.subject == "a->b"
        && f.level == Level::Note
        && f.message.contains("b rejects first")));
}

/// Issue 29: `call_timeout` ends a call (and a client's request) whatever its retries: the
/// budget is the call timeout when it is shorter.
#[test]
fn a_call_timeout_bounds_the_budget() {
    let text = |call_timeout: &str| {
        scenario(&format!(
            "duration: 10s\narrivals: {{rate: 10}}\nclient: {{entry: a, attempt_timeout: 1s}}\n\
             services:\n  a:\n    slots: 8\n    queue_cap: 8\n    calls:\n      b: {{attempt_timeout: 1s, retries: 3{call_timeout}}}\n\
             \x20 b:\n    slots: 8\n    queue_cap: 8\n    service_time: {{dist: constant, value: 10ms}}\n"
        ))
    };
    // 4 × 1 s (no backoff) = 4 s against a's 1 s: a warning, offering a call timeout.
    let l = lint(&text(""));
    assert_eq!(warnings(&l, Check::Budget, "a->b"), 1);
    let f = l.findings.iter().find(|f| f.subject == "a->b").unwrap();
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("`services.a.calls.b.call_timeout: 1s`"),
        "{f:?}"
    );
    // With `call_timeout: 1s` the call ends by then: silent, and the worst case says why.
    let l = lint(&text(", call_timeout: 1s"));
    assert_eq!(warnings(&l, Check::Budget, "a->b"), 0, "{:#?}", l.findings);
    let w = &l.calls[0].worst;
    assert_eq!(w.total, SimDuration(1_000 * MS));
    assert_eq!(
        describe_call(w),
        "4 × 1s + 0s + 0s + 0s = 4s, cut to the 1s call_timeout"
    );
    // A call timeout shorter than the attempt timeout cuts what b serves under too.
    let sc = text(", call_timeout: 200ms");
    assert_eq!(serves_under(&sc)[1].unwrap().wait, SimDuration(200 * MS));
    // The client's call timeout bounds what a user waits.
    let sc = scenario(
        "duration: 10s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s, retries: 3, call_timeout: 1500ms}\n\
         services:\n  a: {slots: 8, queue_cap: 8, service_time: {dist: constant, value: 10ms}}\n",
    );
    assert_eq!(lint(&sc).client.total, SimDuration(1_500 * MS));
}

/// Issue 29: the `parallel: true` shorthand holds a slot for its longest call, not the sum;
/// sequential calls add up. Both for the mean hold and for the hold when calls time out.
#[test]
fn parallel_calls_take_the_longest_and_sequential_ones_the_sum() {
    let text = |parallel: bool| {
        scenario(&format!(
            "duration: 10s\narrivals: {{rate: 10}}\nclient: {{entry: a, attempt_timeout: 2s}}\n\
             services:\n  a:\n    slots: 8\n    queue_cap: 8\n    parallel: {parallel}\n    calls:\n\
             \x20     b: {{attempt_timeout: 300ms}}\n      c: {{attempt_timeout: 500ms}}\n\
             \x20 b: {{slots: 8, queue_cap: 8, service_time: {{dist: constant, value: 40ms}}}}\n\
             \x20 c: {{slots: 8, queue_cap: 8, service_time: {{dist: constant, value: 10ms}}}}\n"
        ))
    };
    let par = text(true);
    let l = lint(&par);
    assert!((l.mean_service_s[0][0] - 0.040).abs() < 1e-12);
    let a = l
        .loads
        .iter()
        .find(|x| x.service == ServiceIx::new(0))
        .unwrap();
    assert!((a.timeout_hold_s.unwrap() - 0.5).abs() < 1e-12, "{a:?}");
    let seq = text(false);
    let l = lint(&seq);
    assert!((l.mean_service_s[0][0] - 0.050).abs() < 1e-12);
    let a = l
        .loads
        .iter()
        .find(|x| x.service == ServiceIx::new(0))
        .unwrap();
    assert!((a.timeout_hold_s.unwrap() - 0.8).abs() < 1e-12, "{a:?}");
}

/// Issue 29: a queue cap is never suggested beyond what arrives at a replica in half of the
/// callers' wait (`queue_cap: 5434782` for a proxy of many slots was the complaint).
#[test]
fn suggested_queue_caps_stay_within_what_arrives() {
    // 4096 slots, 10 ms: half of 2 s holds 409 600 by the wait alone; at 700/s, 700 arrive in
    // 1 s, so 700.
    let sc = scenario(
        "duration: 10s\narrivals: {rate: 700}\nclient: {entry: a, attempt_timeout: 2s}\n\
         services:\n  a: {slots: 4096, service_time: {dist: constant, value: 10ms}}\n",
    );
    let l = lint(&sc);
    let f = l
        .findings
        .iter()
        .find(|f| f.check == Check::Queue && f.level == Level::Warning)
        .unwrap();
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("queue_cap: 700` "), "{fix}");
    assert!(fix.contains("at up to 700/s"), "{fix}");
    // Where the wait binds first, the wait's number: 4 slots × 0.5 × 1 s / 100 ms = 20.
    let sc = scenario(
        "duration: 10s\narrivals: {rate: 700}\nclient: {entry: a, attempt_timeout: 1s}\n\
         services:\n  a: {slots: 4, service_time: {dist: constant, value: 100ms}}\n",
    );
    let l = lint(&sc);
    let f = l
        .findings
        .iter()
        .find(|f| f.check == Check::Queue && f.level == Level::Warning)
        .unwrap();
    assert!(
        f.fix.as_deref().unwrap().contains("queue_cap: 20` "),
        "{f:?}"
    );
}

/// Issue 29: an autoscaled service's capacity counts the replicas the autoscaler may add.
#[test]
fn overload_counts_the_replicas_an_autoscaler_may_add() {
    let text = |max: u32| {
        scenario(&format!(
            "duration: 60s\narrivals: {{rate: 1000}}\nclient: {{entry: a, attempt_timeout: 1s}}\n\
             services:\n  a:\n    slots: 8\n    queue_cap: 8\n    replicas: 1\n\
             \x20   service_time: {{dist: constant, value: 20ms}}\n\
             \x20   autoscale: {{target_utilization: 0.7, min_replicas: 1, max_replicas: {max}, interval: 5s, warmup: 5s}}\n"
        ))
    };
    // 8 slots / 20 ms = 400/s a replica: 2 replicas (800/s) cannot take 1000/s.
    let l = lint(&text(2));
    let f = l
        .findings
        .iter()
        .find(|f| f.check == Check::Load && f.message.starts_with("overloaded"))
        .unwrap();
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("autoscale.max_replicas` above 3"),
        "{f:?}"
    );
    // Up to 4 replicas (1600/s): not overloaded.
    let l = lint(&text(4));
    assert!(
        !l.findings
            .iter()
            .any(|f| f.check == Check::Load && f.message.starts_with("overloaded")),
        "{:#?}",
        l.findings
    );
}

/// Every shipped scenario meant to be healthy has no warning. Meant to be healthy, by their
/// comments: the protected chain and the variants that add protections to it or run it under
/// other faults, loads and classes; the fixed examples (examples/ci, examples/tune, examples/shop);
/// every admission-control variant. Not in the list, because their findings are real: the
/// naive, deadline and production-default chains (retries that outlast their callers' waits,
/// unbounded queues), the fleet demonstrations (backend's queue of 200 × 20 ms / 8 = 500 ms per
/// replica outlasts api's 300 ms attempt timeout; contention_collapse is metastable on purpose;
/// autoscale_storm keeps the naive retries) and the load profiles that pass capacity on purpose
/// (diurnal, step).
#[test]
fn healthy_shipped_scenarios_have_no_warnings() {
    const HEALTHY: &[&str] = &[
        "scenarios/protected.yaml",
        "scenarios/deadline_budget.yaml",
        "scenarios/faults/capacity.yaml",
        "scenarios/faults/error.yaml",
        "scenarios/faults/outage.yaml",
        "scenarios/faults/surge.yaml",
        "scenarios/protections/adaptive_lifo.yaml",
        "scenarios/protections/codel.yaml",
        "scenarios/protections/hedging.yaml",
        "scenarios/protections/hedging_none.yaml",
        "scenarios/protections/protected_cancel.yaml",
        "scenarios/protections/pushback.yaml",
        "scenarios/protections/pushback_none.yaml",
        "scenarios/protections/queue_time.yaml",
        "scenarios/protections/queue_time_cancel.yaml",
        "scenarios/topologies/fanout.yaml",
        "scenarios/workload/classes_fifo.yaml",
        "scenarios/workload/classes_priority.yaml",
        "scenarios/workload/closed_deadline_budget.yaml",
        "scenarios/workload/closed_protected.yaml",
        "scenarios/admission/classes_gradient2.yaml",
        "scenarios/admission/classes_gradient2_partitioned.yaml",
        "scenarios/admission/edge_gradient2.yaml",
        "scenarios/admission/svc_a_aimd.yaml",
        "scenarios/admission/svc_a_envoy_gradient.yaml",
        "scenarios/admission/svc_a_fixed.yaml",
        "scenarios/admission/svc_a_gradient2.yaml",
        "scenarios/admission/svc_a_vegas.yaml",
        "scenarios/admission/svc_b_aimd.yaml",
        "scenarios/admission/svc_b_envoy_gradient.yaml",
        "scenarios/admission/svc_b_fixed.yaml",
        "scenarios/admission/svc_b_gradient2.yaml",
        "scenarios/admission/svc_b_rate_limit.yaml",
        "scenarios/admission/svc_b_vegas.yaml",
        "examples/ci/checkout.yaml",
        "examples/ci/checkout_lifo.yaml",
        "examples/tune/envoy_budget.yaml",
        "examples/tune/envoy_budget_protected.yaml",
        "examples/shop/shop.yaml",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for f in HEALTHY {
        let sc = Scenario::load(&root.join(f), &[], None).unwrap_or_else(|e| panic!("{f}: {e}"));
        let l = lint(&sc);
        let w: Vec<_> = l
            .findings
            .iter()
            .filter(|x| x.level == Level::Warning)
            .collect();
        assert!(w.is_empty(), "{f}: {w:#?}");
    }
}
#[test]
fn priority_without_classes_of_different_priority_is_a_warning() {
    let one = "duration: 10s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1, queue_cap: 4, queue_discipline: priority, shed: priority}\n";
    let l = lint(&scenario(one));
    let f: Vec<_> = l
        .findings
        .iter()
        .filter(|f| f.check == Check::Queue && f.level == Level::Warning)
        .collect();
    assert_eq!(f.len(), 1, "{:?}", l.findings);
    assert!(
        f[0].message
            .contains("`queue_discipline: priority` and `shed: priority`")
    );
    let two = "duration: 10s\nclients:\n  x: {priority: 1, arrivals: {rate: 10}, entry: a, attempt_timeout: 1s}\n  y: {arrivals: {rate: 10}, entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1, queue_cap: 4, queue_discipline: priority, shed: priority}\n";
    let l = lint(&scenario(two));
    assert!(
        !l.findings
            .iter()
            .any(|f| f.message.contains("acts on request-class priorities")),
        "{:?}",
        l.findings
    );
}

#[test]
fn outlier_detection_toward_one_replica_is_flagged() {
    let text = |replicas: u32| {
        format!(
            "duration: 10s\narrivals: {{ rate: 10 }}\nclient: {{ entry: a, attempt_timeout: 1s }}\n\
             services:\n  a:\n    slots: 8\n    calls:\n      b:\n        attempt_timeout: 100ms\n\
             \x20       outlier_detection: {{}}\n  b:\n    slots: 8\n    replicas: {replicas}\n\
             \x20   service_time: {{ dist: constant, value: 5ms }}\n"
        )
    };
    let l = lint(&scenario(&text(1)));
    let f = l
        .findings
        .iter()
        .find(|f| f.subject == "a->b")
        .expect("a finding on a->b");
    assert_eq!(f.level, Level::Warning);
    assert!(f.message.contains("one replica"), "{}", f.message);
    assert_eq!(
        f.fix.as_deref(),
        Some("set `services.b.replicas` above 1, or remove `services.a.calls.b.outlier_detection`")
    );
    let l = lint(&scenario(&text(3)));
    assert!(!l.findings.iter().any(|f| f.subject == "a->b"));
}

#[test]
fn contention_is_read_as_the_usl_peak_and_its_full_slot_capacity() {
    // 10 ms work, sigma 0.02, kappa 0.002: n / (10 ms × (1 + 0.02(n−1) + 0.002 n(n−1))) peaks at
    // n = 22 (22 / 0.023444 = 938.4... checked against the neighbours) and is 64 / 0.103240 =
    // 619.9/s at 64 slots.
    let c = crate::scenario::contention::Contention {
        sigma: 0.02,
        kappa: 0.002,
    };
    let (n, best) = contention::peak(&c, 64, 0.010, 0.0);
    assert_eq!(n, 22);
    let x = |n: f64| n / (0.010 * (1.0 + 0.02 * (n - 1.0) + 0.002 * n * (n - 1.0)));
    assert!((best - x(22.0)).abs() < 1e-9 && x(21.0) < best && x(23.0) < best);
    let text = |rate: u32| {
        format!(
            "duration: 10s\narrivals: {{ rate: {rate} }}\nclient: {{ entry: a, attempt_timeout: 1s }}\n\
             services:\n  a:\n    slots: 64\n    service_time: {{ dist: constant, value: 10ms }}\n\
             \x20   contention: {{ sigma: 0.02, kappa: 0.002 }}\n"
        )
    };
    let finding = |rate: u32| {
        lint(&scenario(&text(rate)))
            .findings
            .into_iter()
            .find(|f| f.message.contains("contention"))
            .unwrap()
    };
    // 700/s: under the peak, above the full-slot 619.9/s: metastable.
    let f = finding(700);
    assert_eq!(f.level, Level::Warning);
    assert!(
        f.message.contains("metastable") && f.message.contains("619.9/s"),
        "{}",
        f.message
    );
    assert_eq!(
        f.fix.as_deref(),
        Some(
            "set `services.a.slots: 22` (the most busy slots that still pay), or put a \
             concurrency limit in front of it"
        )
    );
    // 1000/s: above the peak.
    assert!(
        finding(1000)
            .message
            .starts_with("overloaded by contention")
    );
    // 500/s: a note only.
    assert_eq!(finding(500).level, Level::Note);
}

#[test]
fn a_call_probability_scales_the_load_and_a_parallel_stage_holds_its_longest_call() {
    let sc = scenario(
        "duration: 10s\narrivals: { rate: 100 }\nclient: { entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 8\n    stages: [{parallel: [b, c]}]\n    calls:\n\
         \x20     b: { attempt_timeout: 100ms, probability: 0.3 }\n      c: { attempt_timeout: 100ms }\n\
         \x20 b:\n    slots: 8\n    service_time: { dist: constant, value: 40ms }\n\
         \x20 c:\n    slots: 8\n    service_time: { dist: constant, value: 10ms }\n",
    );
    let first = amplification(&sc, |_| 1.0, |_| 1.0);
    assert_eq!(first, vec![1.0, 0.3, 1.0]);
    // a holds its slot for max(0.3 × 40 ms, 10 ms) = 12 ms at least.
    let hold = mean_service_time(&sc, Regime::Normal);
    assert!((hold[0] - 0.012).abs() < 1e-12, "{hold:?}");
}

#[test]
fn a_call_made_by_some_classes_counts_their_share_of_the_load_and_the_hold() {
    let sc = scenario(
        "duration: 10s\nclients:\n\
         \x20 browse: { arrivals: { rate: 20 }, entry: a, attempt_timeout: 1s }\n\
         \x20 checkout: { arrivals: { rate: 10 }, entry: a, attempt_timeout: 1s }\n\
         services:\n  a:\n    slots: 8\n    service_time: { dist: constant, value: 1ms }\n    calls:\n\
         \x20     b: { attempt_timeout: 100ms }\n      c: { attempt_timeout: 100ms, classes: [checkout] }\n\
         \x20 b:\n    slots: 8\n    service_time: { dist: constant, value: 10ms }\n\
         \x20 c:\n    slots: 8\n    service_time: { dist: constant, value: 50ms }\n",
    );
    // Per user request (the classes weighted by their rates): c gets checkout's third.
    let first = amplification(&sc, |_| 1.0, |_| 1.0);
    assert_eq!(first.len(), 3);
    assert!((first[2] - 1.0 / 3.0).abs() < 1e-12, "{first:?}");
    assert!((first[1] - 1.0).abs() < 1e-12, "{first:?}");
    // a holds 1 + 10 + 50/3 ms on average.
    let hold = mean_service_time(&sc, Regime::Normal);
    assert!((hold[0] - (0.011 + 0.050 / 3.0)).abs() < 1e-12, "{hold:?}");
}
