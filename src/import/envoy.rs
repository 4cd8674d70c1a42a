//! `loadsim import envoy`: an Envoy route and/or cluster (YAML; a bootstrap, a RouteConfiguration
//! or a list of clusters — routes and clusters are found by `name` anywhere in the document) →
//! one edge's keys. Owns the reading of envoyproxy/envoy api/envoy/config/route/v3/
//! route_components.proto (`RouteAction.timeout`, `RetryPolicy`, the `VirtualHost.retry_policy`
//! a route without its own inherits) and api/envoy/config/cluster/v3/circuit_breaker.proto
//! (`CircuitBreakers.Thresholds` of the DEFAULT priority).
//!
//! Translation (docs/production.md, "loadsim import"): route `timeout` (default 15 s, 0 disables)
//! → `call_timeout`; `per_try_timeout` (default: the route timeout) → `attempt_timeout`;
//! `num_retries` (default 1) → `retries`; `retry_on` conditions → `retry_on` kinds;
//! `retry_back_off {base_interval (default 25 ms), max_interval (default 10 × base)}` →
//! `backoff {base, cap, jitter: envoy}`, Envoy's own jittered backoff (source/common/common/
//! backoff_strategy.cc `JitteredBackOffStrategy`). Cluster `max_requests` (default 1024) →
//! `concurrency_limit {algorithm: fixed, limit}`; `max_retries` (default 3) → a concurrent retry
//! budget with no percentage and `min_retry_concurrency: max_retries`; `retry_budget
//! {budget_percent (default 20), min_retry_concurrency (default 3)}` → `retry_budget`, in place of
//! `max_retries` as in Envoy.

use std::path::Path;

use yaml_serde::{Mapping, Value};

use super::imported::{
    Imported, Source, duration_at, duration_value, join, map_of, retry_on_kinds, retry_on_value,
    uint_at,
};
use crate::config::error::ConfigError;
use crate::time::SimDuration;

/// Envoy's route timeout when `timeout` is absent.
pub const DEFAULT_ROUTE_TIMEOUT: SimDuration = SimDuration(15_000_000_000);
/// Envoy's `num_retries` when a retry policy leaves it out.
pub const DEFAULT_NUM_RETRIES: u64 = 1;
/// Envoy's retry backoff base interval when `retry_back_off` is absent.
pub const DEFAULT_BASE_INTERVAL: SimDuration = SimDuration(25_000_000);
/// Envoy's `max_interval` default, as a multiple of the base interval.
pub const DEFAULT_MAX_FACTOR: u64 = 10;
/// Envoy's default circuit-breaker thresholds (circuit_breaker.proto): `max_requests`,
/// `max_retries`.
pub const DEFAULT_MAX_REQUESTS: u64 = 1024;
/// Envoy's default circuit-breaker `max_retries`: retries outstanding at once.
pub const DEFAULT_MAX_RETRIES: u64 = 3;
/// Envoy's retry budget defaults: `budget_percent` 20 %, `min_retry_concurrency` 3.
pub const DEFAULT_BUDGET_PERCENT: f64 = 20.0;
/// Envoy's retry budget default `min_retry_concurrency`: retries always allowed at once.
pub const DEFAULT_MIN_RETRY_CONCURRENCY: u64 = 3;

/// The fields of each message read, as its proto declares them (envoyproxy/data-plane-api at
/// 84e8436, api/envoy/config/route/v3/route_components.proto, cluster/v3/cluster.proto,
/// circuit_breaker.proto, outlier_detection.proto). Envoy refuses a configuration with a field its
/// message does not have, so loadsim does too; a field it has that loadsim does not model is
/// reported unsupported.
pub mod proto {
    /// `envoy.config.route.v3.Route`.
    pub const ROUTE: &[&str] = &[
        "name",
        "match",
        "route",
        "redirect",
        "direct_response",
        "filter_action",
        "non_forwarding_action",
        "metadata",
        "decorator",
        "typed_per_filter_config",
        "request_headers_to_add",
        "request_headers_to_remove",
        "response_headers_to_add",
        "response_headers_to_remove",
        "tracing",
        "per_request_buffer_limit_bytes",
        "stat_prefix",
        "request_body_buffer_limit",
    ];
    /// `envoy.config.route.v3.RouteAction`.
    pub const ROUTE_ACTION: &[&str] = &[
        "cluster",
        "cluster_header",
        "weighted_clusters",
        "cluster_specifier_plugin",
        "inline_cluster_specifier_plugin",
        "cluster_not_found_response_code",
        "metadata_match",
        "prefix_rewrite",
        "regex_rewrite",
        "path_rewrite_policy",
        "path_rewrite",
        "host_rewrite_literal",
        "auto_host_rewrite",
        "host_rewrite_header",
        "host_rewrite_path_regex",
        "host_rewrite",
        "append_x_forwarded_host",
        "timeout",
        "idle_timeout",
        "flush_timeout",
        "early_data_policy",
        "retry_policy",
        "retry_policy_typed_config",
        "request_mirror_policies",
        "priority",
        "rate_limits",
        "include_vh_rate_limits",
        "hash_policy",
        "cors",
        "max_grpc_timeout",
        "grpc_timeout_offset",
        "upgrade_configs",
        "internal_redirect_policy",
        "internal_redirect_action",
        "max_internal_redirects",
        "hedge_policy",
        "max_stream_duration",
    ];
    /// `envoy.config.route.v3.RetryPolicy`.
    pub const RETRY_POLICY: &[&str] = &[
        "retry_on",
        "num_retries",
        "per_try_timeout",
        "per_try_idle_timeout",
        "retry_priority",
        "retry_host_predicate",
        "retry_options_predicates",
        "host_selection_retry_max_attempts",
        "retriable_status_codes",
        "retry_back_off",
        "rate_limited_retry_back_off",
        "retriable_headers",
        "retriable_request_headers",
    ];
    /// `envoy.config.cluster.v3.Cluster`.
    pub const CLUSTER: &[&str] = &[
        "transport_socket_matches",
        "transport_socket_matcher",
        "name",
        "alt_stat_name",
        "type",
        "cluster_type",
        "eds_cluster_config",
        "connect_timeout",
        "per_connection_buffer_limit_bytes",
        "lb_policy",
        "load_assignment",
        "health_checks",
        "max_requests_per_connection",
        "circuit_breakers",
        "upstream_http_protocol_options",
        "common_http_protocol_options",
        "http_protocol_options",
        "http2_protocol_options",
        "typed_extension_protocol_options",
        "dns_refresh_rate",
        "dns_jitter",
        "dns_failure_refresh_rate",
        "respect_dns_ttl",
        "dns_lookup_family",
        "dns_resolvers",
        "use_tcp_for_dns_lookups",
        "dns_resolution_config",
        "typed_dns_resolver_config",
        "wait_for_warm_on_init",
        "outlier_detection",
        "cleanup_interval",
        "upstream_bind_config",
        "lb_subset_config",
        "ring_hash_lb_config",
        "maglev_lb_config",
        "original_dst_lb_config",
        "least_request_lb_config",
        "round_robin_lb_config",
        "common_lb_config",
        "transport_socket",
        "metadata",
        "protocol_selection",
        "upstream_connection_options",
        "close_connections_on_host_health_failure",
        "ignore_health_on_host_removal",
        "filters",
        "load_balancing_policy",
        "lrs_server",
        "lrs_report_endpoint_metrics",
        "track_timeout_budgets",
        "upstream_config",
        "track_cluster_stats",
        "preconnect_policy",
        "connection_pool_per_downstream_connection",
    ];
    /// `envoy.config.cluster.v3.Cluster.LeastRequestLbConfig`.
    pub const LEAST_REQUEST_LB_CONFIG: &[&str] =
        &["choice_count", "active_request_bias", "slow_start_config"];
    /// `envoy.config.cluster.v3.CircuitBreakers`.
    pub const CIRCUIT_BREAKERS: &[&str] = &["thresholds", "per_host_thresholds"];
    /// `envoy.config.cluster.v3.CircuitBreakers.Thresholds`.
    pub const THRESHOLDS: &[&str] = &[
        "priority",
        "max_connections",
        "max_pending_requests",
        "max_requests",
        "max_retries",
        "retry_budget",
        "track_remaining",
        "max_connection_pools",
    ];
    /// `envoy.config.cluster.v3.OutlierDetection`.
    pub const OUTLIER_DETECTION: &[&str] = &[
        "consecutive_5xx",
        "interval",
        "base_ejection_time",
        "max_ejection_percent",
        "enforcing_consecutive_5xx",
        "enforcing_success_rate",
        "success_rate_minimum_hosts",
        "success_rate_request_volume",
        "success_rate_stdev_factor",
        "consecutive_gateway_failure",
        "enforcing_consecutive_gateway_failure",
        "split_external_local_origin_errors",
        "consecutive_local_origin_failure",
        "enforcing_consecutive_local_origin_failure",
        "enforcing_local_origin_success_rate",
        "failure_percentage_threshold",
        "enforcing_failure_percentage",
        "enforcing_failure_percentage_local_origin",
        "failure_percentage_minimum_hosts",
        "failure_percentage_request_volume",
        "max_ejection_time",
        "max_ejection_time_jitter",
        "successful_active_health_check_uneject_host",
        "monitors",
        "always_eject_one_host",
    ];
    /// The values of `envoy.config.cluster.v3.Cluster.LbPolicy`.
    pub const LB_POLICIES: &[&str] = &[
        "ROUND_ROBIN",
        "LEAST_REQUEST",
        "RING_HASH",
        "RANDOM",
        "MAGLEV",
        "CLUSTER_PROVIDED",
        "LOAD_BALANCING_POLICY_CONFIG",
    ];
}

/// Records a problem for a field of `at` that its message `(name, fields)` does not declare;
/// `true` when the field is declared.
fn declared(src: &mut Source, at: &str, k: &str, message: (&str, &[&str])) -> bool {
    if message.1.contains(&k) {
        return true;
    }
    let hint = crate::config::suggest::did_you_mean(k, message.1.iter().copied());
    src.problem(
        &join(at, k),
        format!(
            "unknown field `{k}`{hint} (Envoy's `{}` has no such field, and Envoy refuses a \
             configuration with one; loadsim reads the proto's snake_case names)",
            message.0
        ),
    );
    false
}

/// Which route and cluster to read.
#[derive(Clone, Debug, Default)]
pub struct Select {
    /// The route to read, by name (`--route`; `None`: no route).
    pub route: Option<String>,
    /// The cluster to read, by name (`--cluster`; `None`: no cluster).
    pub cluster: Option<String>,
}

/// Envoy's `retry_on` conditions (router filter, "x-envoy-retry-on" and "x-envoy-retry-grpc-on"):
/// the loadsim kinds each retries, or why it has none.
fn condition(c: &str) -> Option<Result<&'static [&'static str], &'static str>> {
    const NO_CONNECTIONS: &str =
        "loadsim models no connections, so no failure is a reset or a connect failure";
    Some(match c {
        "5xx" => Ok(&["timeout", "reject", "error"]),
        "gateway-error" => Ok(&["timeout", "reject"]),
        "reset"
        | "reset-before-request"
        | "connect-failure"
        | "refused-stream"
        | "http3-post-connect-failure" => Err(NO_CONNECTIONS),
        "retriable-4xx" => Err("loadsim has no 409 Conflict"),
        "envoy-ratelimited" => Err(
            "loadsim's rejects carry no x-envoy-ratelimited header; a callee's rate-limit reject \
             is a `reject`, which `5xx`/`gateway-error` cover",
        ),
        "retriable-headers" => Err("loadsim replies carry no headers"),
        "retriable-status-codes" => Ok(&[]),
        "cancelled" => Err("loadsim's callees do not reply CANCELLED"),
        "deadline-exceeded" => Ok(&["timeout"]),
        "internal" => Ok(&["error"]),
        "resource-exhausted" | "unavailable" => Ok(&["reject"]),
        _ => return None,
    })
}

const CONDITIONS: [&str; 16] = [
    "5xx",
    "gateway-error",
    "reset",
    "reset-before-request",
    "connect-failure",
    "envoy-ratelimited",
    "retriable-4xx",
    "refused-stream",
    "retriable-status-codes",
    "retriable-headers",
    "http3-post-connect-failure",
    "cancelled",
    "deadline-exceeded",
    "internal",
    "resource-exhausted",
    "unavailable",
];

/// Reads `path` and translates the route and/or cluster `select` names.
pub fn import(path: &Path, select: &Select) -> Result<Imported, ConfigError> {
    let mut src = Source::read(path, false)?;
    let root = src.doc.value.clone();
    let mut out = Imported::default();
    let mut found_routes = Vec::new();
    let mut found_clusters = Vec::new();
    collect(&root, "", &mut found_routes, &mut found_clusters);
    let mut what = Vec::new();
    if let Some(name) = &select.route {
        match pick(&mut src, &found_routes, name, "route") {
            Some((at, vh)) => {
                what.push(format!("route \"{name}\" ({at})"));
                let route = get(&root, &at).cloned().unwrap_or(Value::Null);
                let vh_policy = vh.and_then(|v| {
                    let p = join(&v, "retry_policy");
                    get(&root, &p).cloned().map(|pol| (p, pol))
                });
                read_route(
                    &mut src,
                    &mut out,
                    &at,
                    &route,
                    vh_policy,
                    &found_clusters,
                    select,
                );
            }
            None => return src.done(out),
        }
    }
    if let Some(name) = &select.cluster {
        match pick(&mut src, &found_clusters, name, "cluster") {
            Some((at, _)) => {
                what.push(format!("cluster \"{name}\" ({at})"));
                let cluster = get(&root, &at).cloned().unwrap_or(Value::Null);
                read_cluster(&mut src, &mut out, &at, &cluster);
            }
            None => return src.done(out),
        }
    }
    if what.is_empty() {
        src.problem(
            "",
            "name a route (--route NAME) or a cluster (--cluster NAME), or both",
        );
    }
    out.source = what.join(" and ");
    src.done(out)
}

/// The value at an indexed path (`a.b[2].c`).
fn get<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    let mut node = root;
    if path.is_empty() {
        return Some(node);
    }
    for part in path.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            node = node.as_mapping()?.get(name)?;
        }
        for idx in rest.split('[') {
            let idx = idx.trim_end_matches(']');
            if idx.is_empty() {
                continue;
            }
            node = node.as_sequence()?.get(idx.parse::<usize>().ok()?)?;
        }
    }
    Some(node)
}

/// Every named route (with the path of the virtual host holding it) and every named cluster,
/// anywhere in the document: the items of a `routes:` list and of a `clusters:` list.
fn collect(
    v: &Value,
    at: &str,
    routes: &mut Vec<(String, String, Option<String>)>,
    clusters: &mut Vec<(String, String, Option<String>)>,
) {
    match v {
        Value::Mapping(m) => {
            for (k, child) in m {
                let Some(k) = k.as_str() else { continue };
                let path = join(at, k);
                if let (Value::Sequence(items), "routes" | "clusters") = (child, k) {
                    for (i, item) in items.iter().enumerate() {
                        let ipath = format!("{path}[{i}]");
                        if let Some(name) = item.get("name").and_then(Value::as_str) {
                            if k == "routes" {
                                routes.push((name.to_owned(), ipath.clone(), Some(at.to_owned())));
                            } else {
                                clusters.push((name.to_owned(), ipath.clone(), None));
                            }
                        }
                        collect(item, &ipath, routes, clusters);
                    }
                    continue;
                }
                collect(child, &path, routes, clusters);
            }
        }
        Value::Sequence(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, &format!("{at}[{i}]"), routes, clusters);
            }
        }
        _ => {}
    }
}

/// The path of the one entry named `name` (and its virtual host's path, for a route).
fn pick(
    src: &mut Source,
    found: &[(String, String, Option<String>)],
    name: &str,
    what: &str,
) -> Option<(String, Option<String>)> {
    let hits: Vec<_> = found.iter().filter(|f| f.0 == name).collect();
    match hits.len() {
        1 => Some((hits[0].1.clone(), hits[0].2.clone())),
        0 => {
            let names: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
            let hint = crate::config::suggest::did_you_mean(name, names.iter().copied());
            src.problem(
                "",
                format!(
                    "no {what} named \"{name}\"{hint} (the file's {what}s: {})",
                    if names.is_empty() {
                        "none with a name".to_owned()
                    } else {
                        names.join(", ")
                    }
                ),
            );
            None
        }
        _ => {
            src.problem(
                &hits[1].1,
                format!(
                    "more than one {what} is named \"{name}\" (also at {})",
                    hits[0].1
                ),
            );
            None
        }
    }
}

/// Checks that `v` at `at` is a mapping of the proto `message`'s fields; every key the message
/// does not declare is a problem, every declared one not in `known` is reported unsupported with
/// `why`.
fn mapping<'v>(
    src: &mut Source,
    out: &mut Imported,
    at: &str,
    v: &'v Value,
    message: (&str, &[&str]),
    known: &[&str],
    why: &str,
) -> Option<&'v Mapping> {
    let Some(m) = v.as_mapping() else {
        src.problem(at, "must be a mapping");
        return None;
    };
    for (k, _) in m {
        let k = k.as_str().unwrap_or_default();
        if declared(src, at, k, message) && !known.contains(&k) {
            out.unsupported(join(at, k), why);
        }
    }
    Some(m)
}

/// A duration field, truncated to whole milliseconds as Envoy reads it
/// (`PROTOBUF_GET_MS_OR_DEFAULT`).
fn millis(d: SimDuration) -> SimDuration {
    SimDuration(d.0 / 1_000_000 * 1_000_000)
}

#[allow(clippy::too_many_arguments)]
fn read_route(
    src: &mut Source,
    out: &mut Imported,
    at: &str,
    route: &Value,
    vh_policy: Option<(String, Value)>,
    clusters: &[(String, String, Option<String>)],
    select: &Select,
) {
    let Some(r) = mapping(
        src,
        out,
        at,
        route,
        ("envoy.config.route.v3.Route", proto::ROUTE),
        &["name", "match", "route"],
        "not a call policy loadsim models",
    ) else {
        return;
    };
    let Some(action) = r.get("route") else {
        src.problem(
            at,
            "has no `route` action (a redirect or a direct response makes no upstream call)",
        );
        return;
    };
    let aat = join(at, "route");
    let Some(a) = mapping(
        src,
        out,
        &aat,
        action,
        ("envoy.config.route.v3.RouteAction", proto::ROUTE_ACTION),
        &["cluster", "timeout", "retry_policy"],
        "routing, not a call policy: no loadsim meaning",
    ) else {
        return;
    };
    // Route timeout → call_timeout.
    let timeout = match a.get("timeout") {
        Some(v) => duration_at(src, &join(&aat, "timeout"), v).map(millis),
        None => Some(DEFAULT_ROUTE_TIMEOUT),
    };
    let (policy_at, policy) = match a.get("retry_policy") {
        Some(p) => (join(&aat, "retry_policy"), Some(p.clone())),
        None => match vh_policy {
            Some((p, v)) => {
                out.notes.push(format!(
                    "the route has no retry_policy: the virtual host's ({p}) applies"
                ));
                (p, Some(v))
            }
            None => (String::new(), None),
        },
    };
    let mut per_try = None;
    let mut rest: Vec<(&'static str, Value, String, String)> = Vec::new();
    if let Some(policy) = &policy {
        let known = [
            "retry_on",
            "num_retries",
            "per_try_timeout",
            "retriable_status_codes",
            "retry_back_off",
        ];
        let whys: &[(&str, &str)] = &[
            (
                "per_try_idle_timeout",
                "loadsim attempts stream nothing, so there is no idle time",
            ),
            ("retry_priority", "loadsim has no locality priorities"),
            (
                "retry_host_predicate",
                "loadsim's load balancer does not avoid previously tried hosts: a retry picks a \
                 replica as a first attempt does",
            ),
            (
                "host_selection_retry_max_attempts",
                "goes with retry_host_predicate, which loadsim does not model",
            ),
            (
                "rate_limited_retry_back_off",
                "loadsim replies carry no reset headers",
            ),
            ("retriable_headers", "loadsim replies carry no headers"),
            (
                "retriable_request_headers",
                "loadsim requests carry no headers",
            ),
            (
                "retry_options_predicates",
                "loadsim has no upstream connection options",
            ),
        ];
        let Some(m) = policy.as_mapping() else {
            src.problem(&policy_at, "must be a mapping");
            return;
        };
        for (k, _) in m {
            let k = k.as_str().unwrap_or_default();
            if known.contains(&k)
                || !declared(
                    src,
                    &policy_at,
                    k,
                    ("envoy.config.route.v3.RetryPolicy", proto::RETRY_POLICY),
                )
            {
                continue;
            }
            let why = whys
                .iter()
                .find(|w| w.0 == k)
                .map_or("not a RetryPolicy field loadsim knows", |w| w.1);
            out.unsupported(join(&policy_at, k), why);
        }
        if let Some(v) = m.get("per_try_timeout") {
            per_try = duration_at(src, &join(&policy_at, "per_try_timeout"), v).map(millis);
        }
        let num = match m.get("num_retries") {
            Some(v) => uint_at(src, &join(&policy_at, "num_retries"), v),
            None => Some(DEFAULT_NUM_RETRIES),
        };
        let kinds = read_retry_on(src, out, &policy_at, m);
        let backoff = read_backoff(src, &policy_at, m);
        let (Some(num), Some(kinds), Some((base, cap, from))) = (num, kinds, backoff) else {
            return;
        };
        if kinds.is_empty() {
            rest.push((
                "retries",
                Value::Number(0.into()),
                join(&policy_at, "retry_on"),
                "retry_on names no failure loadsim models: no retry".into(),
            ));
        } else {
            rest.push((
                "retries",
                Value::Number(num.into()),
                if m.contains_key("num_retries") {
                    join(&policy_at, "num_retries")
                } else {
                    policy_at.clone()
                },
                if m.contains_key("num_retries") {
                    "num_retries".into()
                } else {
                    "num_retries (Envoy's default 1)".into()
                },
            ));
            rest.push((
                "retry_on",
                retry_on_value(&kinds),
                join(&policy_at, "retry_on"),
                "retry_on (5xx → timeout, reject, error; gateway-error → timeout, reject)".into(),
            ));
            rest.push((
                "backoff",
                map_of(vec![
                    ("base", duration_value(base)),
                    ("cap", duration_value(cap)),
                    ("jitter", Value::String("envoy".into())),
                ]),
                if m.contains_key("retry_back_off") {
                    join(&policy_at, "retry_back_off")
                } else {
                    policy_at.clone()
                },
                from,
            ));
        }
    } else {
        out.notes
            .push("no retry_policy on the route or its virtual host: Envoy does not retry".into());
    }
    let Some(timeout) = timeout else { return };
    // Timeouts: per_try_timeout, else the route timeout, bounds an attempt.
    let attempt = per_try
        .filter(|d| !d.is_zero())
        .or((!timeout.is_zero()).then_some(timeout));
    let per_try_given = per_try.is_some_and(|d| !d.is_zero());
    match attempt {
        Some(d) => {
            out.push(
                "attempt_timeout",
                duration_value(d),
                if per_try_given {
                    join(&policy_at, "per_try_timeout")
                } else {
                    join(&aat, "timeout")
                },
                if per_try_given {
                    "retry_policy.per_try_timeout"
                } else {
                    "no per_try_timeout: an attempt is bounded by the route timeout"
                },
            );
            // Envoy resets the upstream request when a timeout fires, the per-try timeout
            // included: only `hedge_on_per_try_timeout` leaves it running
            // (route_components.proto `HedgePolicy.hedge_on_per_try_timeout`: "a retry will be
            // issued without resetting the original request"), and loadsim reports
            // `hedge_policy` unsupported. loadsim's cancellation is that reset reaching the
            // callee.
            out.push(
                "cancel_on_abandon",
                Value::Bool(true),
                if per_try_given {
                    join(&policy_at, "per_try_timeout")
                } else {
                    join(&aat, "timeout")
                },
                "Envoy resets the upstream request when a timeout fires; the callee drops it",
            );
        }
        None => out.unsupported(
            join(&aat, "timeout"),
            "0 disables Envoy's route timeout and no per_try_timeout is set: the call has no \
             timeout, and a loadsim edge needs `attempt_timeout`; write one beside the imported \
             keys",
        ),
    }
    if !timeout.is_zero() {
        out.push(
            "call_timeout",
            duration_value(timeout),
            if a.contains_key("timeout") {
                join(&aat, "timeout")
            } else {
                aat.clone()
            },
            if a.contains_key("timeout") {
                "route timeout: covers every attempt and backoff"
            } else {
                "route timeout (Envoy's default 15s): covers every attempt and backoff"
            },
        );
    }
    for (k, v, field, from) in rest {
        out.push(k, v, field, from);
    }
    if select.cluster.is_none()
        && let Some(c) = a.get("cluster").and_then(Value::as_str)
    {
        let known = clusters.iter().any(|f| f.0 == c);
        out.notes.push(format!(
            "the route sends to cluster \"{c}\"{}; its circuit breakers (Envoy's defaults \
             max_requests 1024, max_retries 3 if it sets none) apply too: add --cluster {c}",
            if known { ", which is in this file" } else { "" }
        ));
    }
}

/// The `retry_on` conditions (and `retriable_status_codes`) as loadsim kinds.
fn read_retry_on(
    src: &mut Source,
    out: &mut Imported,
    at: &str,
    m: &Mapping,
) -> Option<Vec<&'static str>> {
    let key = join(at, "retry_on");
    let Some(v) = m.get("retry_on") else {
        out.notes
            .push(format!("{key} is absent: Envoy retries on no condition"));
        return Some(Vec::new());
    };
    let Some(text) = v.as_str() else {
        src.problem(&key, "must be a comma-separated string, like \"5xx,reset\"");
        return None;
    };
    let mut kinds: Vec<&'static str> = Vec::new();
    let mut ok = true;
    let mut codes_named = false;
    for c in text.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        match condition(c) {
            Some(Ok(ks)) => {
                if c == "retriable-status-codes" {
                    codes_named = true;
                }
                kinds.extend(ks.iter().copied());
            }
            Some(Err(why)) => out.unsupported(format!("{key}: {c}"), why),
            None => {
                let hint = crate::config::suggest::did_you_mean(c, CONDITIONS.iter().copied());
                src.problem(
                    &key,
                    format!(
                        "unknown retry condition `{c}`{hint} (Envoy's: {})",
                        CONDITIONS.join(", ")
                    ),
                );
                ok = false;
            }
        }
    }
    if let Some(v) = m.get("retriable_status_codes") {
        let ckey = join(at, "retriable_status_codes");
        match v.as_sequence() {
            None => {
                src.problem(&ckey, "must be a list of HTTP status codes");
                ok = false;
            }
            Some(list) => {
                if !codes_named {
                    out.unsupported(
                        ckey.clone(),
                        "listed without the `retriable-status-codes` condition, so Envoy ignores \
                         it",
                    );
                }
                for (i, c) in list.iter().enumerate() {
                    let ikey = format!("{ckey}[{i}]");
                    match c.as_u64() {
                        Some(429 | 503) if codes_named => kinds.push("reject"),
                        Some(500..=599) if codes_named => kinds.push("error"),
                        Some(100..=599) if codes_named => out.unsupported(
                            ikey,
                            "loadsim's failures are timeouts, rejects (429/503) and errors (5xx)",
                        ),
                        Some(100..=599) => {}
                        _ => {
                            src.problem(&ikey, "must be an HTTP status code (100–599)");
                            ok = false;
                        }
                    }
                }
            }
        }
    }
    ok.then(|| retry_on_kinds(&kinds))
}

/// `retry_back_off` → (base, cap, comment), Envoy's defaults filled in.
fn read_backoff(
    src: &mut Source,
    at: &str,
    m: &Mapping,
) -> Option<(SimDuration, SimDuration, String)> {
    let Some(v) = m.get("retry_back_off") else {
        return Some((
            DEFAULT_BASE_INTERVAL,
            SimDuration(DEFAULT_BASE_INTERVAL.0 * DEFAULT_MAX_FACTOR),
            "no retry_back_off: Envoy's default 25ms base, 10 × base max, its own jitter".into(),
        ));
    };
    let bat = join(at, "retry_back_off");
    let Some(b) = v.as_mapping() else {
        src.problem(&bat, "must be a mapping {base_interval, max_interval}");
        return None;
    };
    for (k, _) in b {
        let k = k.as_str().unwrap_or_default();
        if k != "base_interval" && k != "max_interval" {
            let hint = crate::config::suggest::did_you_mean(k, ["base_interval", "max_interval"]);
            src.problem(
                &join(&bat, k),
                format!("unknown field `{k}`{hint} (RetryBackOff has base_interval, max_interval)"),
            );
        }
    }
    let Some(bv) = b.get("base_interval") else {
        src.problem(&bat, "missing field `base_interval` (required by Envoy)");
        return None;
    };
    let base = millis(duration_at(src, &join(&bat, "base_interval"), bv)?);
    if base.is_zero() {
        src.problem(
            &join(&bat, "base_interval"),
            "must be at least 1ms (Envoy requires it above 0 and counts whole milliseconds)",
        );
        return None;
    }
    let (cap, given) = match b.get("max_interval") {
        Some(v) => (
            millis(duration_at(src, &join(&bat, "max_interval"), v)?),
            true,
        ),
        None => (SimDuration(base.0 * DEFAULT_MAX_FACTOR), false),
    };
    if cap < base {
        src.problem(
            &join(&bat, "max_interval"),
            "must be at least `base_interval` (Envoy refuses a smaller one)",
        );
        return None;
    }
    Some((
        base,
        cap,
        if given {
            "retry_back_off base_interval, max_interval; Envoy's jitter".into()
        } else {
            "retry_back_off base_interval, max_interval 10 × base (Envoy's default); Envoy's \
             jitter"
                .into()
        },
    ))
}

fn read_cluster(src: &mut Source, out: &mut Imported, at: &str, cluster: &Value) {
    let Some(c) = cluster.as_mapping() else {
        src.problem(at, "must be a mapping");
        return;
    };
    for (k, _) in c {
        let k = k.as_str().unwrap_or_default();
        if !declared(
            src,
            at,
            k,
            ("envoy.config.cluster.v3.Cluster", proto::CLUSTER),
        ) {
            continue;
        }
        match k {
            "name"
            | "circuit_breakers"
            | "outlier_detection"
            | "lb_policy"
            | "least_request_lb_config" => {}
            _ => out.unsupported(join(at, k), "not a call policy loadsim models"),
        }
    }
    read_lb_policy(src, out, at, c);
    if let Some(od) = c.get("outlier_detection") {
        read_outlier(src, out, &join(at, "outlier_detection"), od);
    }
    let mut max_requests = (
        DEFAULT_MAX_REQUESTS,
        "max_requests (Envoy's default 1024)",
        at.to_owned(),
    );
    let mut max_retries = (
        DEFAULT_MAX_RETRIES,
        "max_retries (Envoy's default 3)".to_owned(),
        at.to_owned(),
    );
    let mut budget: Option<(f64, u64, String)> = None;
    if let Some(cb) = c.get("circuit_breakers") {
        let cat = join(at, "circuit_breakers");
        let Some(cbm) = mapping(
            src,
            out,
            &cat,
            cb,
            (
                "envoy.config.cluster.v3.CircuitBreakers",
                proto::CIRCUIT_BREAKERS,
            ),
            &["thresholds"],
            "loadsim has no per-host limits",
        ) else {
            return;
        };
        if let Some(t) = cbm.get("thresholds") {
            let tat = join(&cat, "thresholds");
            let Some(list) = t.as_sequence() else {
                src.problem(&tat, "must be a list of thresholds");
                return;
            };
            for (i, th) in list.iter().enumerate() {
                let iat = format!("{tat}[{i}]");
                let Some(m) = th.as_mapping() else {
                    src.problem(&iat, "must be a mapping");
                    continue;
                };
                match m.get("priority").map(|p| p.as_str()) {
                    None | Some(Some("DEFAULT")) => {}
                    Some(Some("HIGH")) => {
                        out.unsupported(iat, "loadsim has no HIGH routing priority");
                        continue;
                    }
                    Some(_) => {
                        src.problem(&join(&iat, "priority"), "must be DEFAULT or HIGH");
                        continue;
                    }
                }
                for (k, _) in m {
                    let k = k.as_str().unwrap_or_default();
                    if !declared(
                        src,
                        &iat,
                        k,
                        (
                            "envoy.config.cluster.v3.CircuitBreakers.Thresholds",
                            proto::THRESHOLDS,
                        ),
                    ) {
                        continue;
                    }
                    let why = match k {
                        "priority" | "max_requests" | "max_retries" | "retry_budget" => continue,
                        "max_connections" | "max_connection_pools" => {
                            "loadsim models no connections"
                        }
                        "max_pending_requests" => {
                            "loadsim's callers have no pending queue of their own: an attempt \
                             over the concurrency limit is rejected at once"
                        }
                        "track_remaining" => "a statistics switch",
                        _ => "not a circuit-breaker threshold loadsim knows",
                    };
                    out.unsupported(join(&iat, k), why);
                }
                if let Some(v) = m.get("max_requests") {
                    let n = uint_at(src, &join(&iat, "max_requests"), v);
                    if let Some(n) = n {
                        if n == 0 {
                            src.problem(&join(&iat, "max_requests"), "must be at least 1");
                        }
                        max_requests = (
                            n,
                            "circuit_breakers max_requests",
                            join(&iat, "max_requests"),
                        );
                    }
                }
                if let Some(v) = m.get("max_retries")
                    && let Some(n) = uint_at(src, &join(&iat, "max_retries"), v)
                {
                    max_retries = (
                        n,
                        "circuit_breakers max_retries".into(),
                        join(&iat, "max_retries"),
                    );
                }
                if let Some(v) = m.get("retry_budget") {
                    budget = read_budget(src, &join(&iat, "retry_budget"), v)
                        .map(|(p, m)| (p, m, join(&iat, "retry_budget")));
                }
            }
        }
    }
    out.unsupported(
        format!("{at}.circuit_breakers max_requests"),
        "approximated: Envoy never retries an attempt refused by its circuit breaker (an \
         overflow); loadsim's limiter refusal is a `reject`, which `retry_on` may retry",
    );
    out.push(
        "concurrency_limit",
        map_of(vec![
            ("algorithm", Value::String("fixed".into())),
            ("limit", Value::Number(max_requests.0.max(1).into())),
        ]),
        max_requests.2.clone(),
        format!(
            "{}: attempts in flight above it are refused",
            max_requests.1
        ),
    );
    match budget {
        Some((percent, min, field)) => out.push(
            "retry_budget",
            map_of(vec![
                ("budget_percent", super::imported::number_value(percent)),
                ("min_retry_concurrency", Value::Number(min.into())),
            ]),
            field,
            "circuit_breakers retry_budget (it replaces max_retries, as in Envoy)",
        ),
        None => out.push(
            "retry_budget",
            map_of(vec![
                ("budget_percent", Value::Number(0.into())),
                ("min_retry_concurrency", Value::Number(max_retries.0.into())),
            ]),
            max_retries.2,
            format!("{}: retries in flight stay below it", max_retries.1),
        ),
    }
}

fn read_budget(src: &mut Source, at: &str, v: &Value) -> Option<(f64, u64)> {
    let Some(m) = v.as_mapping() else {
        src.problem(
            at,
            "must be a mapping {budget_percent, min_retry_concurrency}",
        );
        return None;
    };
    for (k, _) in m {
        let k = k.as_str().unwrap_or_default();
        if k != "budget_percent" && k != "min_retry_concurrency" {
            src.problem(
                &join(at, k),
                format!(
                    "unknown field `{k}` (RetryBudget has budget_percent, min_retry_concurrency)"
                ),
            );
        }
    }
    let percent = match m.get("budget_percent") {
        None => Some(DEFAULT_BUDGET_PERCENT),
        Some(p) => {
            let key = join(at, "budget_percent");
            let x = p.get("value").and_then(Value::as_f64);
            match x {
                Some(x) if (0.0..=100.0).contains(&x) => Some(x),
                _ => {
                    src.problem(&key, "must be a Percent {value: 0–100}");
                    None
                }
            }
        }
    };
    let min = match m.get("min_retry_concurrency") {
        None => Some(DEFAULT_MIN_RETRY_CONCURRENCY),
        Some(v) => uint_at(src, &join(at, "min_retry_concurrency"), v),
    };
    Some((percent?, min?))
}

/// The cluster's `outlier_detection` (envoy/config/cluster/v3/outlier_detection.proto) as
/// loadsim's `outlier_detection` on the call: the consecutive-5xx detector, field for field.
/// Envoy's other detectors and switches are named unsupported; `enforcing_consecutive_5xx: 0`
/// turns the detector off (nothing is written).
fn read_outlier(src: &mut Source, out: &mut Imported, at: &str, v: &Value) {
    const EXACT: [&str; 5] = [
        "consecutive_5xx",
        "interval",
        "base_ejection_time",
        "max_ejection_percent",
        "max_ejection_time",
    ];
    const SWITCHES: [&str; 3] = [
        "enforcing_consecutive_5xx",
        "always_eject_one_host",
        "max_ejection_time_jitter",
    ];
    let Some(m) = v.as_mapping() else {
        src.problem(at, "must be a mapping");
        return;
    };
    let message = (
        "envoy.config.cluster.v3.OutlierDetection",
        proto::OUTLIER_DETECTION,
    );
    let mut unknown = false;
    for (k, _) in m {
        unknown |= !declared(src, at, k.as_str().unwrap_or_default(), message);
    }
    if unknown {
        return;
    }
    // A detector whose enforcement is 0 ejects nothing, as loadsim: its fields change nothing.
    let mut percent = |key: &str, default: u64| match m.get(key) {
        Some(v) => uint_at(src, &join(at, key), v).unwrap_or(default),
        None => default,
    };
    let success_rate_on = percent("enforcing_success_rate", 100) > 0;
    let gateway_on = percent("enforcing_consecutive_gateway_failure", 0) > 0;
    let failure_percentage_on = percent("enforcing_failure_percentage", 0) > 0;
    let split = matches!(
        m.get("split_external_local_origin_errors"),
        Some(Value::Bool(true))
    );
    for (k, _) in m {
        let k = k.as_str().unwrap_or_default();
        if EXACT.contains(&k) || SWITCHES.contains(&k) {
            continue;
        }
        let why = if k.starts_with("success_rate") || k == "enforcing_success_rate" {
            if !success_rate_on {
                continue;
            }
            "loadsim models the consecutive-failure detector only, not success-rate ejection"
        } else if k.contains("local_origin") || k == "split_external_local_origin_errors" {
            if !split {
                continue;
            }
            "loadsim does not tell local-origin failures from the upstream's: every failed \
             attempt counts as a 5xx"
        } else if k.starts_with("failure_percentage") || k == "enforcing_failure_percentage" {
            if !failure_percentage_on {
                continue;
            }
            "loadsim models the consecutive-failure detector only, not failure-percentage ejection"
        } else if k.contains("gateway_failure") {
            if !gateway_on {
                continue;
            }
            "loadsim has no status codes: every failed attempt counts toward `consecutive_5xx`"
        } else if k == "successful_active_health_check_uneject_host" {
            "loadsim models no active health checking"
        } else {
            "not an outlier-detection field loadsim knows"
        };
        out.unsupported(join(at, k), why);
    }
    let enforcing = match m.get("enforcing_consecutive_5xx") {
        Some(v) => uint_at(src, &join(at, "enforcing_consecutive_5xx"), v),
        None => Some(100),
    };
    match enforcing {
        Some(0) => {
            out.unsupported(
                join(at, "enforcing_consecutive_5xx"),
                "0: Envoy ejects nothing by consecutive 5xx, so no outlier_detection is written",
            );
            return;
        }
        Some(100) | None => {}
        Some(p) => out.unsupported(
            join(at, "enforcing_consecutive_5xx"),
            format!(
                "approximated: Envoy ejects {p} % of detected outliers at random; loadsim ejects \
                 every one"
            ),
        ),
    }
    if !matches!(m.get("always_eject_one_host"), Some(Value::Bool(true))) {
        out.unsupported(
            join(at, "always_eject_one_host"),
            "approximated: loadsim always lets one replica be ejected (Envoy's \
             `always_eject_one_host: true`); without it Envoy ejects nothing while one host is \
             more than `max_ejection_percent` of the cluster",
        );
    }
    if let Some(j) = m.get("max_ejection_time_jitter") {
        let key = join(at, "max_ejection_time_jitter");
        if duration_at(src, &key, j).is_some_and(|d| !d.is_zero()) {
            out.unsupported(key, "loadsim adds no jitter to ejection times");
        }
    }
    if success_rate_on && !m.contains_key("enforcing_success_rate") {
        out.unsupported(
            join(at, "enforcing_success_rate"),
            "approximated: Envoy also runs its success-rate detector by default (100) on \
             clusters of at least 5 hosts with 100 requests per interval each; loadsim does not \
             (set it to 0 for an exact match)",
        );
    }
    let mut fields: Vec<(&str, Value)> = Vec::new();
    let mut from: Vec<&str> = Vec::new();
    if let Some(v) = m.get("consecutive_5xx") {
        let key = join(at, "consecutive_5xx");
        match uint_at(src, &key, v) {
            Some(0) => src.problem(
                &key,
                "is 0: Envoy's count never equals 0, so the detector would never eject; remove \
                 outlier_detection instead",
            ),
            Some(n) => {
                fields.push(("consecutive_failures", Value::Number(n.into())));
                from.push("consecutive_5xx");
            }
            None => {}
        }
    }
    for (envoy, ours) in [
        ("interval", "interval"),
        ("base_ejection_time", "base_ejection_time"),
        ("max_ejection_time", "max_ejection_time"),
    ] {
        if let Some(v) = m.get(envoy) {
            let key = join(at, envoy);
            if let Some(d) = duration_at(src, &key, v).map(millis) {
                if d.is_zero() {
                    src.problem(&key, "must be at least 1ms (Envoy requires it above 0)");
                } else {
                    fields.push((ours, duration_value(d)));
                    from.push(envoy);
                }
            }
        }
    }
    if let Some(v) = m.get("max_ejection_percent") {
        let key = join(at, "max_ejection_percent");
        match uint_at(src, &key, v) {
            Some(p) if p > 100 => src.problem(&key, "must be at most 100"),
            Some(p) => {
                fields.push(("max_ejection_percent", Value::Number(p.into())));
                from.push("max_ejection_percent");
            }
            None => {}
        }
    }
    let how = if from.is_empty() {
        "outlier_detection with Envoy's defaults (consecutive_5xx 5, interval 10s, \
         base_ejection_time 30s, max_ejection_percent 10, max_ejection_time 300s)"
            .to_owned()
    } else {
        format!(
            "outlier_detection {}; the rest Envoy's defaults",
            from.join(", ")
        )
    };
    out.push("outlier_detection", map_of(fields), at, how);
}

/// The cluster's `lb_policy` (cluster.proto `Cluster.LbPolicy`, default `ROUND_ROBIN`) as the
/// edge's `load_balancer`: `ROUND_ROBIN` → `round_robin`, `RANDOM` → `random`, `LEAST_REQUEST` →
/// `least_request` with `least_request_lb_config.choice_count` (default 2, at least 2). loadsim's
/// balancers are Envoy's with equal host weights (src/protections/load_balancer.rs); the other
/// policies hash or delegate, and are reported.
fn read_lb_policy(src: &mut Source, out: &mut Imported, at: &str, c: &Mapping) {
    let key = join(at, "lb_policy");
    let policy = match c.get("lb_policy") {
        None => "ROUND_ROBIN",
        Some(v) => match v.as_str() {
            Some(p) if proto::LB_POLICIES.contains(&p) => p,
            _ => {
                let shown = super::flow(v);
                let hint = crate::config::suggest::did_you_mean(
                    &shown,
                    proto::LB_POLICIES.iter().copied(),
                );
                src.problem(
                    &key,
                    format!(
                        "unknown load-balancing policy `{shown}`{hint} (Envoy's: {})",
                        proto::LB_POLICIES.join(", ")
                    ),
                );
                return;
            }
        },
    };
    let lr_at = join(at, "least_request_lb_config");
    let lr = c.get("least_request_lb_config");
    if lr.is_some() && policy != "LEAST_REQUEST" {
        out.unsupported(
            lr_at.clone(),
            format!("ignored by Envoy: the cluster's lb_policy is {policy}, not LEAST_REQUEST"),
        );
    }
    let field = if c.contains_key("lb_policy") {
        key.clone()
    } else {
        at.to_owned()
    };
    let written = |p: &str| map_of(vec![("policy", Value::String(p.into()))]);
    match policy {
        "ROUND_ROBIN" => out.push(
            "load_balancer",
            written("round_robin"),
            field,
            if c.contains_key("lb_policy") {
                "lb_policy ROUND_ROBIN: each host in turn"
            } else {
                "lb_policy ROUND_ROBIN (Envoy's default): each host in turn"
            },
        ),
        "RANDOM" => out.push(
            "load_balancer",
            written("random"),
            field,
            "lb_policy RANDOM: a uniform host per request",
        ),
        "LEAST_REQUEST" => {
            let mut count = 2;
            if let Some(lr) = lr {
                let Some(m) = lr.as_mapping() else {
                    src.problem(&lr_at, "must be a mapping");
                    return;
                };
                for (k, _) in m {
                    let k = k.as_str().unwrap_or_default();
                    if !declared(
                        src,
                        &lr_at,
                        k,
                        (
                            "envoy.config.cluster.v3.Cluster.LeastRequestLbConfig",
                            proto::LEAST_REQUEST_LB_CONFIG,
                        ),
                    ) {
                        return;
                    }
                    match k {
                        "choice_count" => {}
                        "active_request_bias" => out.notes.push(format!(
                            "{lr_at}.active_request_bias changes nothing here: Envoy applies it \
                             only when hosts have different weights, and loadsim's replicas are \
                             equal"
                        )),
                        _ => out.unsupported(
                            join(&lr_at, k),
                            "loadsim has no slow start: a replica takes its share at once",
                        ),
                    }
                }
                if let Some(v) = m.get("choice_count") {
                    let ckey = join(&lr_at, "choice_count");
                    match uint_at(src, &ckey, v) {
                        Some(n) if n < 2 => {
                            src.problem(&ckey, "must be at least 2 (cluster.proto: gte 2)");
                            return;
                        }
                        Some(n) => count = n,
                        None => return,
                    }
                }
            }
            out.push(
                "load_balancer",
                map_of(vec![
                    ("policy", Value::String("least_request".into())),
                    ("choice_count", Value::Number(count.into())),
                ]),
                if lr.is_some() { lr_at } else { field },
                "lb_policy LEAST_REQUEST: the fewest active requests of choice_count random \
                 hosts (least_request_lb_config.choice_count, Envoy's default 2)",
            );
        }
        _ => out.unsupported(
            key,
            format!("{policy}: loadsim's balancers are round robin, random and least request"),
        ),
    }
}
