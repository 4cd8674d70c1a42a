//! Exact mechanics on tiny scenarios with constant arrivals and service times, where every
//! number can be worked out by hand.

use super::common::run_text;

/// One service, one slot, constant 1 s work; arrivals every 100 ms for 1 s (10 requests).
fn single(extra_service: &str, client: &str) -> String {
    format!(
        "duration: 1s\ndrain: 30s\narrivals: {{ rate: 10, process: constant }}\n\
         client: {{ entry: s, {client} }}\n\
         services:\n  s:\n    slots: 1\n    service_time: {{ dist: constant, value: 1s }}\n{extra_service}"
    )
}

#[test]
fn full_queue_rejects_after_reject_delay() {
    // t=0 starts, t=0.1 queues (cap 1), t=0.2 … t=0.9 are rejected after 7 ms.
    let r = run_text(&single(
        "    queue_cap: 1\n    reject_delay: 7ms\n",
        "attempt_timeout: 10s",
    ));
    let s = &r.services["s"];
    assert_eq!(s.counts.arrivals, 10);
    assert_eq!(s.counts.rejected_full, 8);
    assert_eq!(s.counts.admitted, 2);
    assert_eq!(s.counts.max_queue, 1);
    assert_eq!(r.metrics.succeeded, 2);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.007).abs() < 0.007 * 0.002, "failed median {p50}");
}

#[test]
fn expired_requests_are_dropped_at_dequeue() {
    // Deadline = arrival + 500 ms. At t=1 s the slot frees: arrivals at 0.1 … 0.5 have expired
    // (deadline ≤ 1.0) and are dropped; 0.6 starts (deadline 1.1) and runs to 2.0, when
    // 0.7 … 0.9 have expired too.
    let r = run_text(&single(
        "    drop_expired: true\n",
        "attempt_timeout: 500ms, propagate_deadline: true",
    ));
    let s = &r.services["s"];
    assert_eq!(s.counts.admitted, 10);
    assert_eq!(s.counts.completed, 2, "t=0 and t=0.6 ran");
    assert_eq!(s.counts.dropped_expired, 8);
    assert_eq!(
        s.counts.completed_abandoned, 2,
        "both finished after their caller gave up"
    );
    assert_eq!(r.metrics.succeeded, 0);
    assert_eq!(s.wasted_ratio, Some(1.0));
}

#[test]
fn without_drop_expired_the_queue_serves_dead_requests() {
    let r = run_text(&single(
        "",
        "attempt_timeout: 500ms, propagate_deadline: true",
    ));
    let s = &r.services["s"];
    assert_eq!(s.counts.completed, 10);
    assert_eq!(s.counts.dropped_expired, 0);
    assert_eq!(s.counts.completed_abandoned, 10);
}

#[test]
fn client_retries_after_the_interval_and_counts_attempts() {
    // 1 slot, 300 ms work, one request: attempt timeout 100 ms, 2 retries, 50 ms apart:
    // attempts at 0, 150 ms, 300 ms; the third reaches a busy slot... all time out.
    let yaml = "duration: 100ms\ndrain: 10s\narrivals: { rate: 10, process: constant }\n\
                client: { entry: s, attempt_timeout: 100ms, retries: 2, retry_interval: 50ms }\n\
                services:\n  s:\n    slots: 1\n    service_time: { dist: constant, value: 300ms }\n";
    let r = run_text(yaml);
    assert_eq!(r.metrics.requests, 1);
    assert_eq!(r.services["s"].counts.arrivals, 3);
    assert_eq!(r.metrics.failed, 1);
    // Fails when the third attempt times out: 0 + 100 + 50 + 100 + 50 + 100 = 400 ms.
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.4).abs() < 0.4 * 0.002, "{p50}");
}

#[test]
fn attempt_timeout_is_cut_to_the_remaining_deadline() {
    // Client deadline 250 ms propagated; the edge's own timeout is 1 s but must be cut to what is
    // left, so `a` gives up on `b` at 250 ms and frees its slot instead of holding it for 1 s.
    let yaml = "duration: 100ms\ndrain: 10s\narrivals: { rate: 10, process: constant }\n\
                client: { entry: a, attempt_timeout: 250ms, propagate_deadline: true }\n\
                services:\n  a:\n    slots: 1\n    calls:\n      b: { attempt_timeout: 1s, propagate_deadline: true }\n\
                \x20 b:\n    slots: 1\n    service_time: { dist: constant, value: 400ms }\n";
    let r = run_text(yaml);
    assert_eq!(r.calls["a->b"].timeouts, 1);
    assert_eq!(r.metrics.failed, 1);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!(
        (p50 - 0.25).abs() < 0.25 * 0.002,
        "the call gave up with the client at 250 ms: {p50}"
    );
    // The gateway's slot was freed at 250 ms, not held for 1 s.
    assert!(r.services["a"].sojourn_mean_s.unwrap() < 0.26);
}

#[test]
fn lifo_serves_the_newest_request_first() {
    // Arrivals at 0, 0.1, 0.2, 0.3; one slot of 1 s work; 2.5 s client timeout, no retries.
    // FIFO serves 0 (done 1 s), 0.1 (done 2 s, latency 1.9 s), then 0.2 too late.
    // LIFO serves 0, then the newest, 0.3 (done 2 s, latency 1.7 s), then 0.2 too late.
    let base = "duration: 400ms\ndrain: 30s\narrivals: { rate: 10, process: constant }\n\
                client: { entry: s, attempt_timeout: 2500ms }\n\
                services:\n  s:\n    slots: 1\n    service_time: { dist: constant, value: 1s }\n";
    let fifo = run_text(base);
    let lifo = run_text(&format!("{base}    queue_discipline: lifo\n"));
    assert_eq!(fifo.metrics.succeeded, 2);
    assert_eq!(lifo.metrics.succeeded, 2);
    // FIFO's second success waited 0.9 s; LIFO's waited 0.7 s: the success p99 shows it.
    let f = fifo.metrics.success_latency_p99_s.unwrap();
    let l = lifo.metrics.success_latency_p99_s.unwrap();
    assert!(
        (f - 1.9).abs() < 0.01 && (l - 1.7).abs() < 0.01,
        "fifo {f} lifo {l}"
    );
}
