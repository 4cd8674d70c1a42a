//! Production retry policies (issue 15) on tiny scenarios worked out by hand: `retry_on`,
//! non-retryable errors and the gRFC A6 throttle, `call_timeout` on an edge and at the client,
//! Finagle's ratio retry budget, and backoff shapes over several seeds.

use super::common::run_text;

/// Client → `a` (100 slots) → `b`; arrivals every 10 ms for `duration`; `edge`, `b` and `faults`
/// are YAML lines placed under the edge, under `b` and under `faults:`.
fn chain(duration: &str, client: &str, edge: &str, b: &str, faults: &str) -> String {
    let faults = if faults.is_empty() {
        String::new()
    } else {
        format!("faults:\n{faults}")
    };
    format!(
        "duration: {duration}\ndrain: 30s\narrivals: {{ rate: 100, process: constant }}\n\
         client: {{ entry: a, attempt_timeout: 10s{client} }}\n\
         services:\n  a:\n    slots: 100\n    calls:\n      b: {{ {edge} }}\n\
         \x20 b:\n    slots: 100\n{b}{faults}"
    )
}

#[test]
fn a_failure_not_in_retry_on_ends_the_call() {
    // `b` takes 100 ms; the edge times out at 30 ms and may retry twice.
    let b = "    service_time: { dist: constant, value: 100ms }\n";
    let all = run_text(&chain("1s", "", "attempt_timeout: 30ms, retries: 2", b, ""));
    assert_eq!(all.calls["a->b"].attempts, 300, "100 calls × 3 attempts");
    let reject_only = run_text(&chain(
        "1s",
        "",
        "attempt_timeout: 30ms, retries: 2, retry_on: [reject, error]",
        b,
        "",
    ));
    assert_eq!(reject_only.calls["a->b"].attempts, 100);
    assert_eq!(reject_only.calls["a->b"].retries, 0);
    assert_eq!(reject_only.calls["a->b"].timeouts, 100);
}

#[test]
fn non_retryable_errors_end_the_call_and_take_no_a6_token() {
    // 0–5 s: every arrival at `b` fails with a non-retryable error. 5–5.1 s: every arrival fails
    // with a retryable one. A6 bucket of 10 tokens, retries only while tokens > 5.
    // If the 500 fatal errors of the first 5 s had taken tokens, the bucket would be empty at
    // 5 s and no retry would ever be sent. They take none: at 5 s the bucket is full, the first
    // call's attempts fail at 10 → 9 → 8 → 7 → 6 tokens (3 retries, all allowed), the next
    // call's failure leaves 5 and its retry is refused. Exactly 3 retries.
    let edge =
        "attempt_timeout: 1s, retries: 3, retry_throttle: { max_tokens: 10, token_ratio: 0.1 }";
    let faults = "  fatal: { kind: error, service: b, from: 0s, to: 5s, fraction: 1, retryable_fraction: 0 }\n\
                  \x20 transient: { kind: error, service: b, from: 5s, to: 5100ms, fraction: 1 }\n";
    let b = "    service_time: { dist: constant, value: 1ms }\n";
    let r = run_text(&chain("6s", "", edge, b, faults));
    let c = &r.calls["a->b"];
    assert_eq!(c.retries, 3, "{c:?}");
    assert_eq!(c.retries_throttled, 9, "the calls at 5.01 … 5.09 s: {c:?}");
    // 600 calls, one attempt each, plus the 3 retries.
    assert_eq!(c.attempts, 603);
    assert_eq!(r.services["b"].counts.failed_by_fault, 510 + 3);
    // Marked retryable, the same first 5 s drain the bucket: no retry after the first call's.
    let counted = run_text(&chain(
        "6s",
        "",
        edge,
        b,
        &faults.replace("retryable_fraction: 0", "retryable_fraction: 1"),
    ));
    assert_eq!(counted.calls["a->b"].retries, 3, "the first call, at t = 0");
    // Every later call before 5.1 s is refused its retry: 510 − 1.
    assert_eq!(counted.calls["a->b"].retries_throttled, 509);
}

#[test]
fn a_services_non_retryable_share_is_drawn_from_its_own_stream() {
    // `b` fails every call to `c` (outage) and replies an error to `a`; `a` retries up to 3
    // times. With `retryable_fraction: 0.25` about three quarters of b's errors end a's call.
    let yaml = |fraction: &str| {
        format!(
            "duration: 10s\narrivals: {{ rate: 100, process: constant }}\n\
             client: {{ entry: a, attempt_timeout: 10s }}\n\
             services:\n  a:\n    slots: 100\n    calls:\n      b: {{ attempt_timeout: 1s, retries: 3 }}\n\
             \x20 b:\n    slots: 100\n{fraction}    calls:\n      c: {{ attempt_timeout: 1s }}\n\
             \x20 c:\n    slots: 1\n\
             faults:\n  down: {{ kind: outage, service: c, from: 0s, to: 10s }}\n"
        )
    };
    let all = run_text(&yaml(""));
    assert_eq!(all.calls["a->b"].attempts, 4000);
    for seed_line in ["", "seed: 2\n", "seed: 3\n"] {
        let r = run_text(&format!(
            "{seed_line}{}",
            yaml("    retryable_fraction: 0.25\n")
        ));
        // Attempts per call: 1 + P(retry) + … with p = 0.25: 1 + p + p² + p³ ≈ 1.328.
        let per_call = r.calls["a->b"].attempts as f64 / 1000.0;
        assert!((1.25..1.41).contains(&per_call), "{per_call}");
        // The arrivals at `c` (its own outage) are untouched by the draw.
        assert_eq!(r.services["c"].counts.arrivals, r.calls["b->c"].attempts);
    }
}

#[test]
fn call_timeout_bounds_attempts_and_backoffs_together() {
    let b = "    service_time: { dist: constant, value: 100ms }\n";
    // Attempts at 0 and 30 ms time out at 30 and 60 ms; the third is cut to the 10 ms left and
    // times out at 70 ms; then the call has no time left: 3 attempts, failed at 70 ms.
    let r = run_text(&chain(
        "1s",
        "",
        "attempt_timeout: 30ms, retries: 5, call_timeout: 70ms",
        b,
        "",
    ));
    assert_eq!(r.calls["a->b"].attempts, 300);
    assert_eq!(r.calls["a->b"].retries, 200);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.070).abs() < 0.070 * 0.002, "failed at {p50}");
    // With a fixed 25 ms backoff and a 50 ms call timeout: attempt 0–30 ms, then a wait that
    // would end at 55 ms is cut to the deadline: the call fails at 50 ms after 1 attempt, and
    // the retry that found no time left is counted as deadline-exhausted.
    let r = run_text(&chain(
        "1s",
        "",
        "attempt_timeout: 30ms, retries: 5, call_timeout: 50ms, backoff: { base: 25ms, jitter: none, multiplier: 1 }",
        b,
        "",
    ));
    assert_eq!(r.calls["a->b"].attempts, 100);
    assert_eq!(r.calls["a->b"].deadline_exhausted, 100);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.050).abs() < 0.050 * 0.002, "failed at {p50}");
    // Without it, 6 attempts of 30 ms: 180 ms.
    let r = run_text(&chain("1s", "", "attempt_timeout: 30ms, retries: 5", b, ""));
    assert_eq!(r.calls["a->b"].attempts, 600);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.180).abs() < 0.180 * 0.002, "failed at {p50}");
}

#[test]
fn client_call_timeout_and_retry_on() {
    let yaml = |client: &str| {
        format!(
            "duration: 1s\ndrain: 10s\narrivals: {{ rate: 10, process: constant }}\n\
             client: {{ entry: s, {client} }}\n\
             services:\n  s:\n    slots: 100\n    service_time: {{ dist: constant, value: 100ms }}\n"
        )
    };
    // Attempts of 30 ms, 20 ms apart: 0–30, 50–80, then the wait to 100 ms is cut to the call
    // timeout of 90 ms, where the request fails: 2 attempts each.
    let r = run_text(&yaml(
        "attempt_timeout: 30ms, retries: 5, retry_interval: 20ms, call_timeout: 90ms",
    ));
    assert_eq!(r.services["s"].counts.arrivals, 20);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.090).abs() < 0.090 * 0.002, "failed at {p50}");
    // A client that retries only rejects does not retry its timeouts.
    let r = run_text(&yaml(
        "attempt_timeout: 30ms, retries: 5, retry_on: [reject]",
    ));
    assert_eq!(r.services["s"].counts.arrivals, 10);
    // A backoff at the client: no jitter, 10 ms doubling: attempts at 0, 40, 90, 160 ms.
    let r = run_text(&yaml(
        "attempt_timeout: 30ms, retries: 3, backoff: { base: 10ms, jitter: none }",
    ));
    assert_eq!(r.services["s"].counts.arrivals, 40);
    let p50 = r.metrics.failed_latency_p50_s.unwrap();
    assert!((p50 - 0.190).abs() < 0.190 * 0.002, "failed at {p50}");
}

#[test]
fn ratio_budget_allows_one_retry_per_five_calls() {
    // Finagle, retry_ratio 0.2 without reserve: a call deposits 1000, a retry withdraws 5000.
    // Every attempt is rejected (outage): the 5th, 10th, … call may retry, 1000 calls in 10 s,
    // no deposit expires before the arrivals end: exactly 200 retries.
    let edge = "attempt_timeout: 1s, retries: 1, retry_budget: { kind: ratio, retry_ratio: 0.2, min_retries_per_second: 0, ttl: 10s }";
    let faults = "  down: { kind: outage, service: b, from: 0s, to: 10s }\n";
    let r = run_text(&chain("10s", "", edge, "", faults));
    assert_eq!(r.calls["a->b"].retries, 200);
    assert_eq!(r.calls["a->b"].retries_budget_denied, 800);
    // With Finagle's reserve of 10 retries per second over 10 s: 100 more at the start.
    let r = run_text(&chain(
        "10s",
        "",
        &edge.replace("min_retries_per_second: 0", "min_retries_per_second: 10"),
        "",
        faults,
    ));
    assert_eq!(r.calls["a->b"].retries, 300);
}

#[test]
fn backoff_shapes_spread_retries_as_specified() {
    // Every attempt is rejected at once (outage); one retry each. The retry's send time is the
    // backoff, so the span of `b`'s arrivals shows its bounds; measured through the latency of
    // failed requests: 0.5 ms reject delay + wait + 0.5 ms.
    let faults = "  down: { kind: outage, service: b, from: 0s, to: 10s }\n";
    for seed in [7, 11, 13] {
        let run = |backoff: &str| {
            let yaml = format!(
                "seed: {seed}\n{}",
                chain(
                    "10s",
                    "",
                    &format!("attempt_timeout: 1s, retries: 1, backoff: {backoff}"),
                    "",
                    faults
                )
            );
            run_text(&yaml)
        };
        // Equal jitter on a 100 ms base: the wait is in [50, 100] ms, median ≈ 75 ms.
        let r = run("{ base: 100ms, jitter: equal }");
        let p50 = r.metrics.failed_latency_p50_s.unwrap();
        assert!((0.070..0.082).contains(&p50), "seed {seed}: equal {p50}");
        // Full jitter: U[0, 100] ms, median ≈ 50 ms.
        let r = run("{ base: 100ms }");
        let p50 = r.metrics.failed_latency_p50_s.unwrap();
        assert!((0.044..0.057).contains(&p50), "seed {seed}: full {p50}");
        // Decorrelated: U[100, 300] ms for the first retry, median ≈ 200 ms.
        let r = run("{ base: 100ms, jitter: decorrelated }");
        let p50 = r.metrics.failed_latency_p50_s.unwrap();
        assert!(
            (0.185..0.215).contains(&p50),
            "seed {seed}: decorrelated {p50}"
        );
        // No jitter: exactly 100 ms (+ 2 × 0.5 ms reject delay).
        let r = run("{ base: 100ms, jitter: none }");
        let p50 = r.metrics.failed_latency_p50_s.unwrap();
        assert!(
            (p50 - 0.101).abs() < 0.101 * 0.002,
            "seed {seed}: none {p50}"
        );
    }
}

#[test]
fn aws_standard_quota_runs_out_after_500_units() {
    // Every attempt is rejected (outage): botocore's standard mode takes 5 per retry from 500,
    // and no call succeeds to give any back. 3 attempts per call: the first 50 calls retry twice
    // (50 × 2 × 5 = 500), every later call is refused its first retry: 950 refusals.
    let faults = "  down: { kind: outage, service: b, from: 0s, to: 10s }\n";
    let edge = "attempt_timeout: 1s, retry_quota: { kind: aws_standard }, backoff: { base: 1ms, jitter: none }";
    let r = run_text(&chain("10s", "", edge, "", faults));
    assert_eq!(r.calls["a->b"].retries, 100);
    assert_eq!(r.calls["a->b"].retries_budget_denied, 950);
    assert_eq!(r.calls["a->b"].attempts, 1100);
    // After timeouts a retry costs 10: 50 retries. Call k (from 10(k−1) ms) asks at 10k ms for
    // its first retry and at 10k + 11 ms for its second (10 ms timeout, 1 ms wait, 10 ms), so
    // the asks go c1, c2, c1', c3, c2', …: the 50th grant is call 26's first retry; call 25's and
    // call 26's second retries are refused, and so is every later call's first: 2 + 974 = 976.
    let b = "    service_time: { dist: constant, value: 100ms }\n";
    let edge = "attempt_timeout: 10ms, retry_quota: { kind: aws_standard }, backoff: { base: 1ms, jitter: none }";
    let r = run_text(&chain("10s", "", edge, b, ""));
    assert_eq!(r.calls["a->b"].retries, 50);
    assert_eq!(r.calls["a->b"].retries_budget_denied, 976);
    // Successes give 1 back each: with `b` healthy nothing is ever refused, and a call that
    // fails once per 10 (error fault) still leaves the quota far from empty.
    let r = run_text(&chain(
        "10s",
        "",
        "attempt_timeout: 1s, retry_quota: { kind: aws_standard }, backoff: { base: 1ms, jitter: none }",
        "    service_time: { dist: constant, value: 1ms }\n",
        "  some: { kind: error, service: b, from: 0s, to: 10s, fraction: 0.1 }\n",
    ));
    assert_eq!(r.calls["a->b"].retries_budget_denied, 0);
    assert!(r.calls["a->b"].retries > 50, "{:?}", r.calls["a->b"]);
}

/// Everything a run reports but its name and the machine's timings.
fn results(mut s: loadsim::metrics::RunSummary) -> String {
    s.scenario.clear();
    let mut v = serde_json::to_value(&s).expect("serializable");
    v.as_object_mut().expect("an object").remove("engine");
    v.to_string()
}

#[test]
fn aws_adaptive_is_the_standard_mode_until_a_throttle() {
    // Errors and timeouts are not throttling errors: the rate limiter stays off (botocore's
    // ClientRateLimiter enables its bucket on the first throttling response only), so the
    // adaptive mode runs exactly as the standard one, retries and quota included.
    let b = "    service_time: { dist: exponential, mean: 5ms }\n";
    let faults = "  flaky: { kind: error, service: b, from: 1s, to: 2s, fraction: 0.5 }\n\
                  \x20 slow: { kind: slow, service: b, from: 2s, to: 3s, service_time: { dist: constant, value: 80ms } }\n";
    for seed in [7, 11, 13] {
        let run = |kind: &str| {
            run_text(&format!(
                "seed: {seed}\n{}",
                chain(
                    "4s",
                    "",
                    &format!("attempt_timeout: 50ms, retry_quota: {{ kind: {kind} }}"),
                    b,
                    faults
                )
            ))
        };
        let standard = run("aws_standard");
        assert!(
            standard.calls["a->b"].retries > 20,
            "the faults cause retries"
        );
        assert_eq!(
            results(run("aws_adaptive")),
            results(standard),
            "seed {seed}"
        );
    }
}

#[test]
fn aws_adaptive_holds_sends_to_the_minimum_fill_rate_under_throttling() {
    // Worked by hand from botocore (adaptive.py, bucket.py, throttling.py). Calls every 10 ms,
    // no retries, every attempt rejected (a throttle) while `b` is down. The first send (10 ms)
    // goes out with the limiter off; its reject at 10.5 ms turns it on: the measured rate is
    // still 0 (no half-second bucket has ended), so CUBIC's new rate is 0.7 × 0 and the bucket
    // gets the minimum fill rate 0.5/s, capacity 1, holding the 0.0105 token the starting rate
    // (1/s) filled. The next send waits (1 − 0.01525)/0.5 ≈ 1.97 s and goes at ≈ 1.99 s; every
    // later reject keeps the rate at the floor, so one send per 2 s: ≈ 3.99, 5.99, 7.99, 9.99 s.
    // The standard mode sends every call at once: 100 per second.
    let arrivals_during = |kind: &str, to: &str| {
        let faults = format!("  down: {{ kind: outage, service: b, from: 0s, to: {to} }}\n");
        let r = run_text(&chain(
            "12s",
            "",
            &format!("attempt_timeout: 1s, retries: 0, retry_quota: {{ kind: {kind} }}"),
            "",
            &faults,
        ));
        r.services["b"].counts.arrivals_during_fault
    };
    assert_eq!(arrivals_during("aws_adaptive", "9s"), 5);
    assert_eq!(arrivals_during("aws_adaptive", "10500ms"), 6);
    assert_eq!(arrivals_during("aws_standard", "9s"), 900);
}
