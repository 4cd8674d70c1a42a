//! `loadsim import grpc`: a gRPC service config (JSON) → one edge's keys. Owns the reading of
//! the service config as gRFC A6 specifies it (grpc/proposal A6-client-retries.md, "Integration
//! with Service Config"; the message `MethodConfig` of grpc/grpc
//! src/proto/grpc/service_config/service_config.proto): the methodConfig that applies to a
//! service and method (an exact `{service, method}` name first, then the service's default
//! `{service}`, then the global default `{}`), its `timeout`, `retryPolicy` or `hedgingPolicy`,
//! and the server-wide `retryThrottling`.
//!
//! Translation (docs/production.md, "loadsim import"): `timeout` → `call_timeout` and
//! `attempt_timeout` (a gRPC attempt has no timeout of its own: it runs until the call's deadline,
//! A6 "Maximum Number of Retries"); `maxAttempts` (values above 5 taken as 5, A6 "Limits on
//! Retries and Hedges") → `retries: maxAttempts − 1` or `hedge.max_hedges`; `initialBackoff`,
//! `maxBackoff`, `backoffMultiplier` → `backoff {base, cap, multiplier}` with A6's full jitter
//! (`random(0, min(initialBackoff·backoffMultiplier^(n−1), maxBackoff))`); status codes →
//! `retry_on` (DEADLINE_EXCEEDED → timeout, UNAVAILABLE / RESOURCE_EXHAUSTED → reject, any other
//! → error); `retryThrottling {maxTokens, tokenRatio}` → `retry_throttle`.

use std::path::Path;

use yaml_serde::Value;

use super::imported::{
    Imported, Source, duration_at, duration_value, float_at, join, map_of, number_at, number_value,
    retry_on_kinds, retry_on_value, uint_at,
};
use crate::config::error::ConfigError;
use crate::time::SimDuration;

/// gRPC clients treat any `maxAttempts` above this as this (A6, "Limits on Retries and Hedges").
pub const MAX_ATTEMPTS: u64 = 5;
/// gRPC's largest `retryThrottling.maxTokens` (grpc-go and C-core refuse more).
pub const MAX_TOKENS: f64 = 1000.0;

/// Which methodConfig to read.
#[derive(Clone, Debug, Default)]
pub struct Select {
    /// `package.Service`.
    pub service: Option<String>,
    /// The method's name (`--method`); with `service` `None` too, the file's only methodConfig.
    pub method: Option<String>,
}

/// The gRPC status codes (google.rpc.Code), by number.
pub const STATUS_CODES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// The loadsim failure kind a status code stands for.
pub fn failure_of(code: &str) -> &'static str {
    match code {
        "DEADLINE_EXCEEDED" => "timeout",
        "UNAVAILABLE" | "RESOURCE_EXHAUSTED" => "reject",
        _ => "error",
    }
}

/// Reads `path` and translates the methodConfig `select` names.
pub fn import(path: &Path, select: &Select) -> Result<Imported, ConfigError> {
    let mut src = Source::read(path, true)?;
    let root = src.doc.value.clone();
    let mut out = Imported::default();
    let Some(top) = root.as_mapping() else {
        return Err(ConfigError::file(path, "must be a JSON object"));
    };
    for (k, _) in top {
        let k = k.as_str().unwrap_or_default();
        match k {
            "methodConfig" | "retryThrottling" | "loadBalancingPolicy" | "loadBalancingConfig" => {}
            "healthCheckConfig" => out.unsupported(k, "loadsim has no health checks"),
            _ => out.unsupported(k, "not a service config field loadsim knows"),
        }
    }
    let configs: Vec<Value> = match top.get("methodConfig") {
        None => Vec::new(),
        Some(Value::Sequence(items)) => items.clone(),
        Some(_) => {
            src.problem("methodConfig", "must be a list of method configs");
            return src.done(out);
        }
    };
    read_balancer(&mut src, &mut out, top);
    let chosen = choose(&mut src, &configs, select);
    // gRPC refuses the whole service config when any method config is invalid, so each is
    // checked, not only the one imported.
    for (i, mc) in configs.iter().enumerate() {
        if chosen.as_ref().is_some_and(|c| c.0 == i) || !mc.is_mapping() {
            continue;
        }
        read_method_config(
            &mut src,
            &mut Imported::default(),
            &format!("methodConfig[{i}]"),
            mc,
        );
    }
    let Some((index, how)) = chosen else {
        if let Some(t) = top.get("retryThrottling") {
            read_throttling(&mut src, &mut Imported::default(), t);
        }
        return src.done(out);
    };
    out.source = format!("methodConfig[{index}] ({how})");
    let at = format!("methodConfig[{index}]");
    let mc = configs[index].clone();
    read_method_config(&mut src, &mut out, &at, &mc);
    if let Some(t) = top.get("retryThrottling") {
        read_throttling(&mut src, &mut out, t);
    }
    out.notes.push(
        "gRPC clients honour server pushback (grpc-retry-pushback-ms); loadsim's \
         `honor_retry_after: true` waits at least the hint where A6 waits exactly it, so it is not \
         set"
        .into(),
    );
    src.done(out)
}

/// The index of the methodConfig that applies, and how it was found; `None` after recording
/// the problem.
fn choose(src: &mut Source, configs: &[Value], select: &Select) -> Option<(usize, String)> {
    // Every name of every config, checked first.
    let mut names: Vec<(usize, String, String)> = Vec::new();
    let mut written: Vec<String> = Vec::new();
    for (i, mc) in configs.iter().enumerate() {
        let at = format!("methodConfig[{i}]");
        let Some(m) = mc.as_mapping() else {
            src.problem(&at, "must be an object");
            continue;
        };
        match m.get("name") {
            None => {}
            Some(Value::Sequence(list)) => {
                for (j, n) in list.iter().enumerate() {
                    let nat = format!("{at}.name[{j}]");
                    let Some(n) = n.as_mapping() else {
                        src.problem(&nat, "must be an object {service, method}");
                        continue;
                    };
                    for (k, _) in n {
                        let k = k.as_str().unwrap_or_default();
                        if k != "service" && k != "method" {
                            src.problem(
                                &join(&nat, k),
                                format!("unknown field `{k}`; a name has `service` and `method`"),
                            );
                        }
                    }
                    let text = |k: &str| match n.get(k) {
                        None | Some(Value::Null) => Some(String::new()),
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(_) => None,
                    };
                    let (Some(s), Some(me)) = (text("service"), text("method")) else {
                        src.problem(&nat, "`service` and `method` must be strings");
                        continue;
                    };
                    if s.is_empty() && !me.is_empty() {
                        src.problem(
                            &nat,
                            "a `method` needs its `service` (an empty service is the default for \
                             all methods)",
                        );
                        continue;
                    }
                    // gRPC refuses a service config that names a method twice
                    // (service_config.proto, `MethodConfig.name`: "Each name entry must be unique
                    // across the entire ServiceConfig").
                    if let Some(first) = names.iter().position(|n| n.1 == s && n.2 == me) {
                        src.problem(
                            &nat,
                            format!(
                                "names {} again (first at {}); gRPC refuses a service config \
                                 whose names are not unique",
                                match (s.is_empty(), me.is_empty()) {
                                    (true, _) => "the default for all methods".to_owned(),
                                    (false, true) => format!("service \"{s}\""),
                                    (false, false) => format!("service \"{s}\", method \"{me}\""),
                                },
                                written[first]
                            ),
                        );
                        continue;
                    }
                    names.push((i, s, me));
                    written.push(nat);
                }
            }
            Some(_) => src.problem(&join(&at, "name"), "must be a list of {service, method}"),
        }
    }
    if !src.problems.is_empty() {
        return None;
    }
    let described = |(_, s, m): &(usize, String, String)| match (s.is_empty(), m.is_empty()) {
        (true, _) => "the default for all methods".to_owned(),
        (false, true) => format!("service \"{s}\""),
        (false, false) => format!("service \"{s}\", method \"{m}\""),
    };
    let listing = || {
        names
            .iter()
            .map(|n| format!("[{}] {}", n.0, described(n)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    match (&select.service, &select.method) {
        (None, None) => {
            if configs.len() == 1 {
                let how = names
                    .iter()
                    .find(|n| n.0 == 0)
                    .map_or("the only method config".to_owned(), described);
                return Some((0, how));
            }
            src.problem(
                "methodConfig",
                format!(
                    "has {} method configs; name one with --service and --method (in a scenario: \
                     `service:`, `method:`): {}",
                    configs.len(),
                    listing()
                ),
            );
            None
        }
        (service, method) => {
            let m = method.clone().unwrap_or_default();
            let exact = |s: &str| {
                names
                    .iter()
                    .find(|n| n.1 == s && !m.is_empty() && n.2 == m)
                    .or_else(|| names.iter().find(|n| n.1 == s && n.2.is_empty()))
            };
            let found = match service {
                Some(s) => exact(s).or_else(|| names.iter().find(|n| n.1.is_empty())),
                None => {
                    let hits: Vec<_> = names.iter().filter(|n| n.2 == m).collect();
                    if hits.len() > 1 {
                        src.problem(
                            "methodConfig",
                            format!(
                                "method \"{m}\" is named in more than one service: {}; add \
                                 --service",
                                hits.iter()
                                    .map(|n| format!("[{}] {}", n.0, described(n)))
                                    .collect::<Vec<_>>()
                                    .join("; ")
                            ),
                        );
                        return None;
                    }
                    hits.first()
                        .copied()
                        .or_else(|| names.iter().find(|n| n.1.is_empty()))
                }
            };
            match found {
                Some(n) => Some((n.0, described(n))),
                None => {
                    let what = match (service, method) {
                        (Some(s), Some(me)) => format!("method \"{s}/{me}\""),
                        (Some(s), None) => format!("service \"{s}\""),
                        (None, Some(me)) => format!("method \"{me}\""),
                        (None, None) => unreachable!(),
                    };
                    src.problem(
                        "methodConfig",
                        format!(
                            "no method config applies to {what} (gRPC looks for the exact name, \
                             then the service's default, then the default for all); the file has: \
                             {}",
                            if names.is_empty() {
                                "none with a name".to_owned()
                            } else {
                                listing()
                            }
                        ),
                    );
                    None
                }
            }
        }
    }
}

fn read_method_config(src: &mut Source, out: &mut Imported, at: &str, mc: &Value) {
    let Some(m) = mc.as_mapping() else { return };
    let retry = m.get("retryPolicy");
    let hedge = m.get("hedgingPolicy");
    if retry.is_some() && hedge.is_some() {
        src.problem(
            &join(at, "hedgingPolicy"),
            "a method config sets `retryPolicy` or `hedgingPolicy`, not both (gRFC A6)",
        );
        return;
    }
    for (k, _) in m {
        let k = k.as_str().unwrap_or_default();
        match k {
            "name" | "timeout" | "retryPolicy" | "hedgingPolicy" => {}
            "waitForReady" => out.unsupported(
                join(at, k),
                "loadsim has no connection state to wait for; an attempt is sent at once",
            ),
            "maxRequestMessageBytes" | "maxResponseMessageBytes" => {
                out.unsupported(join(at, k), "loadsim has no message sizes")
            }
            _ => out.unsupported(join(at, k), "not a method config field loadsim knows"),
        }
    }
    match m.get("timeout") {
        Some(t) => {
            let key = join(at, "timeout");
            if let Some(d) = duration_at(src, &key, t) {
                if d.is_zero() {
                    src.problem(&key, "must be longer than 0s");
                } else {
                    out.push(
                        "attempt_timeout",
                        duration_value(d),
                        &key,
                        "timeout: an attempt runs until the call's deadline (A6)",
                    );
                    out.push(
                        "call_timeout",
                        duration_value(d),
                        &key,
                        "timeout: the deadline covers every attempt and backoff (A6)",
                    );
                }
            }
        }
        None => out.unsupported(
            join(at, "timeout"),
            "absent: the call has no deadline in gRPC, and a loadsim edge needs \
             `attempt_timeout`; write one beside the imported keys",
        ),
    }
    if let Some(r) = retry {
        read_retry(src, out, &join(at, "retryPolicy"), r);
    } else if let Some(h) = hedge {
        read_hedge(src, out, &join(at, "hedgingPolicy"), h);
    } else {
        out.notes
            .push("no retryPolicy or hedgingPolicy: gRPC neither retries nor hedges".into());
    }
}

/// Checks the fields of an object at `at` against `known`; an unknown one is a problem.
fn fields<'v>(
    src: &mut Source,
    at: &str,
    v: &'v Value,
    known: &[&str],
) -> Option<&'v yaml_serde::Mapping> {
    let Some(m) = v.as_mapping() else {
        src.problem(at, "must be an object");
        return None;
    };
    for (k, _) in m {
        let k = k.as_str().unwrap_or_default();
        if !known.contains(&k) {
            let hint = crate::config::suggest::did_you_mean(k, known.iter().copied());
            src.problem(
                &join(at, k),
                format!("unknown field `{k}`{hint} (known: {})", known.join(", ")),
            );
        }
    }
    Some(m)
}

/// Reads `maxAttempts` at `at` (required, at least 2, taken as at most 5).
fn max_attempts(
    src: &mut Source,
    out: &mut Imported,
    at: &str,
    m: &yaml_serde::Mapping,
) -> Option<u64> {
    let key = join(at, "maxAttempts");
    let Some(v) = m.get("maxAttempts") else {
        src.problem(at, "missing field `maxAttempts` (required, at least 2)");
        return None;
    };
    let n = uint_at(src, &key, v)?;
    if n < 2 {
        src.problem(
            &key,
            "must be at least 2 (gRFC A6: the original attempt and one more)",
        );
        return None;
    }
    if n > MAX_ATTEMPTS {
        out.notes.push(format!(
            "{key} {n} is taken as {MAX_ATTEMPTS}, as gRPC clients do (A6, \"Limits on Retries \
             and Hedges\")"
        ));
    }
    Some(n.min(MAX_ATTEMPTS))
}

/// Reads a status-code list at `key` into `retry_on` kinds (in loadsim's order).
fn codes(src: &mut Source, key: &str, v: &Value, required: bool) -> Option<Vec<&'static str>> {
    let Some(list) = v.as_sequence() else {
        src.problem(
            key,
            "must be a list of status codes, like [\"UNAVAILABLE\"]",
        );
        return None;
    };
    if list.is_empty() && required {
        src.problem(key, "must list at least one status code (gRFC A6)");
        return None;
    }
    let mut kinds = Vec::new();
    let mut ok = true;
    for (i, c) in list.iter().enumerate() {
        let ckey = format!("{key}[{i}]");
        let name = match c {
            Value::String(s) => STATUS_CODES.iter().find(|n| **n == s.as_str()).copied(),
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| STATUS_CODES.get(n as usize))
                .copied(),
            _ => None,
        };
        match name {
            Some("OK") => {
                src.problem(&ckey, "OK is not a failure and cannot be retried");
                ok = false;
            }
            Some(name) => {
                let k = failure_of(name);
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
            None => {
                let shown = super::flow(c);
                let hint = crate::config::suggest::did_you_mean(
                    &shown.to_uppercase(),
                    STATUS_CODES.iter().copied(),
                );
                src.problem(
                    &ckey,
                    format!(
                        "unknown status code `{shown}`{hint} (a code is a name like \
                         \"UNAVAILABLE\" or its number 0–16)"
                    ),
                );
                ok = false;
            }
        }
    }
    ok.then(|| retry_on_kinds(&kinds))
}

fn read_retry(src: &mut Source, out: &mut Imported, at: &str, v: &Value) {
    let known = [
        "maxAttempts",
        "initialBackoff",
        "maxBackoff",
        "backoffMultiplier",
        "retryableStatusCodes",
    ];
    let Some(m) = fields(src, at, v, &known) else {
        return;
    };
    for k in &known[1..] {
        if !m.contains_key(*k) {
            src.problem(at, format!("missing field `{k}` (required, gRFC A6)"));
        }
    }
    let attempts = max_attempts(src, out, at, m);
    let positive = |src: &mut Source, k: &str| -> Option<SimDuration> {
        let key = join(at, k);
        let d = duration_at(src, &key, m.get(k)?)?;
        if d.is_zero() {
            src.problem(&key, "must be longer than 0s (gRFC A6)");
            return None;
        }
        Some(d)
    };
    let initial = positive(src, "initialBackoff");
    let max = positive(src, "maxBackoff");
    let multiplier = m.get("backoffMultiplier").and_then(|v| {
        let key = join(at, "backoffMultiplier");
        // A protobuf `float` (service_config.proto `backoff_multiplier`).
        let x = float_at(src, &key, v)?;
        if x <= 0.0 {
            src.problem(&key, "must be greater than 0 (gRFC A6)");
            return None;
        }
        Some(x)
    });
    let kinds = m
        .get("retryableStatusCodes")
        .and_then(|v| codes(src, &join(at, "retryableStatusCodes"), v, true));
    let (Some(attempts), Some(initial), Some(max), Some(multiplier), Some(kinds)) =
        (attempts, initial, max, multiplier, kinds)
    else {
        return;
    };
    out.push(
        "retries",
        Value::Number((attempts - 1).into()),
        join(at, "maxAttempts"),
        format!("retryPolicy.maxAttempts {attempts} − 1"),
    );
    // v = min(maxBackoff, initialBackoff·multiplierⁿ); when maxBackoff < initialBackoff every
    // v is maxBackoff, which loadsim writes as base = cap = maxBackoff.
    let base = initial.min(max);
    let mut backoff = vec![("base", duration_value(base)), ("cap", duration_value(max))];
    let mut from = "initialBackoff, maxBackoff, backoffMultiplier; A6's jitter is full: \
                    U[0, min(initial·mⁿ, max)]"
        .to_owned();
    if initial > max {
        from.push_str(" (maxBackoff < initialBackoff: every wait is U[0, maxBackoff])");
    }
    if multiplier < 1.0 {
        out.unsupported(
            join(at, "backoffMultiplier"),
            format!(
                "{multiplier} < 1 shrinks the backoff; loadsim's multiplier is at least 1, so \
                 the default 2 applies"
            ),
        );
    } else if initial <= max {
        backoff.push(("multiplier", number_value(multiplier)));
    }
    out.push("backoff", map_of(backoff), at, from);
    out.push(
        "retry_on",
        retry_on_value(&kinds),
        join(at, "retryableStatusCodes"),
        "retryableStatusCodes (DEADLINE_EXCEEDED → timeout, UNAVAILABLE/RESOURCE_EXHAUSTED → \
         reject, others → error)",
    );
}

fn read_hedge(src: &mut Source, out: &mut Imported, at: &str, v: &Value) {
    let known = ["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"];
    let Some(m) = fields(src, at, v, &known) else {
        return;
    };
    let attempts = max_attempts(src, out, at, m);
    let delay = match m.get("hedgingDelay") {
        None => Some(SimDuration::ZERO),
        Some(v) => duration_at(src, &join(at, "hedgingDelay"), v),
    };
    let kinds = match m.get("nonFatalStatusCodes") {
        None => Some(Vec::new()),
        Some(v) => codes(src, &join(at, "nonFatalStatusCodes"), v, false),
    };
    let (Some(attempts), Some(delay), Some(kinds)) = (attempts, delay, kinds) else {
        return;
    };
    if delay.is_zero() {
        out.unsupported(
            join(at, "hedgingDelay"),
            "0s (or absent) sends every attempt at once; loadsim's `hedge.delay` must be longer \
             than 0s, so no hedge is set",
        );
    } else {
        out.push(
            "hedge",
            map_of(vec![
                ("delay", duration_value(delay)),
                ("max_hedges", Value::Number((attempts - 1).into())),
            ]),
            at,
            format!("hedgingPolicy: hedgingDelay, maxAttempts {attempts} − 1"),
        );
    }
    if kinds.is_empty() {
        out.unsupported(
            join(at, "nonFatalStatusCodes"),
            "empty or absent: every failure is fatal in gRPC; loadsim's `retry_on` lists at least \
             one kind, so it is not set (a hedged edge then treats every failure as non-fatal)",
        );
    } else {
        out.push(
            "retry_on",
            retry_on_value(&kinds),
            join(at, "nonFatalStatusCodes"),
            "nonFatalStatusCodes (a listed failure sends the next hedge at once; any other \
             cancels the call)",
        );
    }
}

fn read_throttling(src: &mut Source, out: &mut Imported, v: &Value) {
    let at = "retryThrottling";
    let Some(m) = fields(src, at, v, &["maxTokens", "tokenRatio"]) else {
        return;
    };
    let get = |src: &mut Source, k: &str| -> Option<f64> {
        let key = join(at, k);
        let Some(v) = m.get(k) else {
            src.problem(at, format!("missing field `{k}` (required, gRFC A6)"));
            return None;
        };
        let x = if k == "tokenRatio" {
            // A protobuf `float` (service_config.proto `token_ratio`).
            float_at(src, &key, v)?
        } else {
            number_at(src, &key, v)?
        };
        if x <= 0.0 {
            src.problem(&key, "must be greater than 0 (gRFC A6)");
            return None;
        }
        Some(x)
    };
    let max_tokens = get(src, "maxTokens");
    let ratio = get(src, "tokenRatio");
    if let Some(t) = max_tokens
        && t > MAX_TOKENS
    {
        src.problem(
            &join(at, "maxTokens"),
            format!("must be at most {MAX_TOKENS} (gRPC's limit)"),
        );
        return;
    }
    let (Some(max_tokens), Some(ratio)) = (max_tokens, ratio) else {
        return;
    };
    out.push(
        "retry_throttle",
        map_of(vec![
            ("max_tokens", number_value(max_tokens)),
            ("token_ratio", number_value(ratio)),
        ]),
        at,
        "retryThrottling (per server in gRPC, per edge in loadsim)",
    );
}

/// The most `choice_count` a gRPC least-request balancer uses: larger values are taken as 10
/// (gRFC A48 "xDS Least Request LB Policy"; grpc-java `LeastRequestLoadBalancerProvider`).
pub const MAX_CHOICE_COUNT: u64 = 10;

/// `loadBalancingConfig` (else the deprecated `loadBalancingPolicy`) → the edge's
/// `load_balancer`. gRPC takes the first policy of the list it supports (service_config.proto
/// `LoadBalancingConfig`); loadsim takes the first it models: `round_robin` → `round_robin`,
/// `least_request_experimental {choice_count}` → `least_request` (A48: at least 2, above 10 taken
/// as 10). `pick_first` (gRPC's default) sends every RPC of a channel to one backend and
/// `weighted_round_robin` weighs backends by their reported load: loadsim has neither, so they are
/// reported.
fn read_balancer(src: &mut Source, out: &mut Imported, top: &yaml_serde::Mapping) {
    if let Some(list) = top.get("loadBalancingConfig") {
        if top.contains_key("loadBalancingPolicy") {
            out.unsupported(
                "loadBalancingPolicy",
                "ignored by gRPC when `loadBalancingConfig` is set (service_config.proto)",
            );
        }
        let Some(items) = list.as_sequence() else {
            src.problem(
                "loadBalancingConfig",
                "must be a list of policies, like [{\"round_robin\": {}}]",
            );
            return;
        };
        for (i, item) in items.iter().enumerate() {
            let at = format!("loadBalancingConfig[{i}]");
            let Some(m) = item.as_mapping().filter(|m| m.len() == 1) else {
                src.problem(
                    &at,
                    "must be an object with exactly one policy, like {\"round_robin\": {}} \
                     (service_config.proto `LoadBalancingConfig`)",
                );
                return;
            };
            let (name, config) = m.iter().next().expect("one entry");
            let name = name.as_str().unwrap_or_default();
            let pat = join(&at, name);
            match name {
                "round_robin" => {
                    fields(src, &pat, config, &[]);
                    out.push(
                        "load_balancer",
                        map_of(vec![("policy", Value::String("round_robin".into()))]),
                        pat,
                        "loadBalancingConfig round_robin: each backend in turn",
                    );
                    return;
                }
                "least_request_experimental" => {
                    let Some(c) = fields(src, &pat, config, &["choice_count"]) else {
                        return;
                    };
                    let mut count = 2;
                    if let Some(v) = c.get("choice_count") {
                        let key = join(&pat, "choice_count");
                        match uint_at(src, &key, v) {
                            Some(n) if n < 2 => {
                                src.problem(&key, "must be at least 2 (gRFC A48)");
                                return;
                            }
                            Some(n) => {
                                if n > MAX_CHOICE_COUNT {
                                    out.notes.push(format!(
                                        "{key} {n} is taken as {MAX_CHOICE_COUNT}, as gRPC does \
                                         (gRFC A48)"
                                    ));
                                }
                                count = n.min(MAX_CHOICE_COUNT);
                            }
                            None => return,
                        }
                    }
                    out.push(
                        "load_balancer",
                        map_of(vec![
                            ("policy", Value::String("least_request".into())),
                            ("choice_count", Value::Number(count.into())),
                        ]),
                        pat,
                        "loadBalancingConfig least_request_experimental: the fewest outstanding \
                         of choice_count random backends (gRFC A48)",
                    );
                    return;
                }
                "pick_first" => {
                    out.unsupported(
                        pat,
                        "pick_first sends every RPC of a channel to one backend (the first \
                         address that connects); loadsim has no such balancer (to model it, give \
                         the callee `replicas: 1`)",
                    );
                    return;
                }
                "weighted_round_robin" => {
                    out.unsupported(
                        pat,
                        "weights backends by the load they report; loadsim's balancers do not \
                         weigh replicas",
                    );
                }
                _ => out.unsupported(pat, "not a load-balancing policy loadsim models"),
            }
        }
        return;
    }
    if let Some(p) = top.get("loadBalancingPolicy") {
        match p.as_str().map(str::to_ascii_lowercase).as_deref() {
            Some("round_robin") => out.push(
                "load_balancer",
                map_of(vec![("policy", Value::String("round_robin".into()))]),
                "loadBalancingPolicy",
                "loadBalancingPolicy round_robin: each backend in turn",
            ),
            Some("pick_first") => out.unsupported(
                "loadBalancingPolicy",
                "pick_first sends every RPC of a channel to one backend (the first address that \
                 connects); loadsim has no such balancer (to model it, give the callee \
                 `replicas: 1`)",
            ),
            Some(_) => out.unsupported(
                "loadBalancingPolicy",
                "not a load-balancing policy loadsim models",
            ),
            None => src.problem(
                "loadBalancingPolicy",
                "must be a policy name, like \"round_robin\"",
            ),
        }
        return;
    }
    out.notes.push(
        "no loadBalancingConfig: gRPC's default is pick_first (every RPC of a channel to one \
         backend), which loadsim does not model; the edge keeps loadsim's round_robin"
            .into(),
    );
}
