//! The table format: the article's table, generalized. Rows are metrics (the article's rows first,
//! then per-service and per-edge detail), columns are scenarios; a scenario without a service or
//! edge shows `—`. Rendered as a Markdown table so the same text reads on a terminal and on GitHub.

use super::Render;
use super::markdown::MarkdownTable;
use crate::metrics::{RunMetrics, RunSummary, ServiceMetrics};

/// Metrics × scenarios.
pub struct Table;

/// How a value prints.
#[derive(Clone, Copy)]
enum Fmt {
    /// A share in [0, 1], three decimals.
    Rate,
    /// Seconds, two decimals.
    Secs,
    /// A ratio, two decimals.
    Ratio,
    /// A count.
    Count,
}

fn show(v: Option<f64>, f: Fmt) -> String {
    match v {
        None => "—".into(),
        Some(x) => match f {
            Fmt::Rate => format!("{x:.3}"),
            Fmt::Secs | Fmt::Ratio => format!("{x:.2}"),
            Fmt::Count => format!("{}", x as u64),
        },
    }
}

type Getter = Box<dyn Fn(&RunSummary) -> Option<f64>>;

/// For a recovery row: the run's or class's metrics, which say why a missing recovery time is
/// missing ([`undefined_recovery`]).
type RecoveryOf = Box<dyn Fn(&RunSummary) -> Option<&RunMetrics>>;

/// One row: its label, how its values print, the value of a run, and for recovery rows where
/// the reason for a missing value comes from.
struct Row {
    label: String,
    fmt: Fmt,
    get: Getter,
    recovery_of: Option<RecoveryOf>,
}

impl From<(String, Fmt, Getter)> for Row {
    fn from((label, fmt, get): (String, Fmt, Getter)) -> Row {
        Row {
            label,
            fmt,
            get,
            recovery_of: None,
        }
    }
}

/// A class's metrics in a run.
fn class_metrics(name: String) -> RecoveryOf {
    Box::new(move |r| r.classes.get(&name))
}

/// What a recovery time without a value says, the same in the overall row and in a class's:
/// "not measurable" when no recovery span fits after the fault window, "never" when one fits and
/// none recovered, `None` (shown `—`) when there is no fault window.
pub(crate) fn undefined_recovery(m: &RunMetrics) -> Option<&'static str> {
    if !m.recovery_measurable {
        Some("not measurable")
    } else if m.fault_end_s.is_some() {
        Some("never")
    } else {
        None
    }
}

fn service_row(
    name: &str,
    label: &str,
    f: Fmt,
    get: fn(&ServiceMetrics) -> Option<f64>,
) -> (String, Fmt, Getter) {
    let n = name.to_owned();
    (
        format!("`{name}` {label}"),
        f,
        Box::new(move |r: &RunSummary| r.services.get(&n).and_then(get)),
    )
}

/// The rows for `runs`, in display order.
fn rows(runs: &[RunSummary]) -> Vec<Row> {
    let mut services: Vec<String> = Vec::new();
    let mut edges: Vec<String> = Vec::new();
    for r in runs {
        for k in r.services.keys() {
            if !services.contains(k) {
                services.push(k.clone());
            }
        }
        for k in r.calls.keys() {
            if !edges.contains(k) {
                edges.push(k.clone());
            }
        }
    }
    // The article lists the deepest service first.
    let deepest_first: Vec<String> = services.iter().rev().cloned().collect();
    let entry = services.first().cloned().unwrap_or_default();
    let rows: Vec<(String, Fmt, Getter)> = vec![
        (
            "success before window".into(),
            Fmt::Rate,
            Box::new(|r: &RunSummary| r.metrics.success_rate_before),
        ),
        (
            "success in window".into(),
            Fmt::Rate,
            Box::new(|r: &RunSummary| r.metrics.success_rate_during),
        ),
        (
            "success after window".into(),
            Fmt::Rate,
            Box::new(|r: &RunSummary| r.metrics.success_rate_after),
        ),
    ];
    let mut rows: Vec<Row> = rows.into_iter().map(Row::from).collect();
    rows.push(Row {
        label: "recovery time (s)".into(),
        fmt: Fmt::Secs,
        get: Box::new(|r: &RunSummary| r.metrics.recovery_s),
        recovery_of: Some(Box::new(|r| Some(&r.metrics))),
    });
    rows.push(Row::from(service_row(
        &entry,
        "attempts / user request",
        Fmt::Ratio,
        |s| s.attempts_per_request,
    )));
    for s in &deepest_first {
        rows.push(Row::from(service_row(
            s,
            "arrivals in window / user request in window",
            Fmt::Ratio,
            |m| m.arrivals_during_fault_per_request,
        )));
    }
    for s in &deepest_first {
        rows.push(Row::from(service_row(s, "max queue", Fmt::Count, |m| {
            Some(m.counts.max_queue as f64)
        })));
    }
    for s in &deepest_first {
        rows.push(Row::from(service_row(
            s,
            "share of completions serving a success",
            Fmt::Rate,
            |m| m.goodput_ratio,
        )));
    }
    rows.push(Row::from((
        "median latency of failed requests (s)".into(),
        Fmt::Secs,
        Box::new(|r: &RunSummary| r.metrics.failed_latency_p50_s) as Getter,
    )));
    rows.push(Row::from((
        "p99 latency of successful requests (s)".into(),
        Fmt::Secs,
        Box::new(|r: &RunSummary| r.metrics.success_latency_p99_s) as Getter,
    )));
    rows.push(Row::from((
        "user requests".into(),
        Fmt::Count,
        Box::new(|r: &RunSummary| Some(r.metrics.requests as f64)) as Getter,
    )));
    rows.push(Row::from((
        "success overall".into(),
        Fmt::Rate,
        Box::new(|r: &RunSummary| r.metrics.success_rate) as Getter,
    )));
    // Request classes (only with `clients:` of several): each class's headline outcomes.
    let mut classes: Vec<String> = Vec::new();
    for r in runs {
        for k in r.classes.keys() {
            if !classes.contains(k) {
                classes.push(k.clone());
            }
        }
    }
    type ClassGet = fn(&crate::metrics::RunMetrics) -> Option<f64>;
    let per_class: [(&str, Fmt, ClassGet); 6] = [
        ("user requests", Fmt::Count, |m| Some(m.requests as f64)),
        ("success before window", Fmt::Rate, |m| {
            m.success_rate_before
        }),
        ("success in window", Fmt::Rate, |m| m.success_rate_during),
        ("success after window", Fmt::Rate, |m| m.success_rate_after),
        ("recovery time (s)", Fmt::Secs, |m| m.recovery_s),
        ("p99 latency of successful requests (s)", Fmt::Secs, |m| {
            m.success_latency_p99_s
        }),
    ];
    for c in &classes {
        for (label, fmt, get) in per_class {
            let name = c.clone();
            let recovery_of = label_is_recovery(label).then(|| class_metrics(c.clone()));
            rows.push(Row {
                label: format!("class `{c}` {label}"),
                fmt,
                get: Box::new(move |r: &RunSummary| r.classes.get(&name).and_then(get)),
                recovery_of,
            });
        }
    }
    for s in &deepest_first {
        rows.push(Row::from(service_row(
            s,
            "worst-case attempts / user request (R1)",
            Fmt::Count,
            |m| Some(m.worst_case_attempts_per_request as f64),
        )));
        rows.push(Row::from(service_row(s, "admitted", Fmt::Count, |m| {
            Some(m.counts.admitted as f64)
        })));
        rows.push(Row::from(service_row(
            s,
            "rejected (queue full)",
            Fmt::Count,
            |m| Some(m.counts.rejected_full as f64),
        )));
        rows.push(Row::from(service_row(
            s,
            "dropped (expired)",
            Fmt::Count,
            |m| Some(m.counts.dropped_expired as f64),
        )));
        rows.push(Row::from(service_row(
            s,
            "wasted share of completions",
            Fmt::Rate,
            |m| m.wasted_ratio,
        )));
    }
    // Decisions of the protections beyond the article: shown only where some run made them.
    for s in &deepest_first {
        for (label, get) in [
            (
                "rejected (outage)",
                (|m: &ServiceMetrics| m.counts.rejected_outage) as fn(&ServiceMetrics) -> u64,
            ),
            ("failed by error fault", |m| m.counts.failed_by_fault),
            ("dropped (queue time)", |m| m.counts.dropped_queue_time),
            ("dropped (CoDel)", |m| m.counts.dropped_codel),
            ("cancelled", |m| m.counts.cancelled),
        ] {
            if runs
                .iter()
                .any(|r| r.services.get(s).is_some_and(|m| get(m) > 0))
            {
                let n = s.clone();
                rows.push(Row::from((
                    format!("`{s}` {label}"),
                    Fmt::Count,
                    Box::new(move |r: &RunSummary| r.services.get(&n).map(|m| get(m) as f64))
                        as Getter,
                )));
            }
        }
    }
    for e in &edges {
        type Get = fn(&crate::metrics::CallMetrics) -> f64;
        for (label, fmt, get) in [
            (
                "retries denied by budget",
                Fmt::Count,
                (|c: &crate::metrics::CallMetrics| c.retries_budget_denied as f64) as Get,
            ),
            ("throttled locally", Fmt::Count, |c| {
                c.throttled_locally as f64
            }),
            ("rejected (circuit open)", Fmt::Count, |c| {
                c.rejected_circuit_open as f64
            }),
            ("circuit open (s)", Fmt::Secs, |c| c.circuit_open_s),
            ("hedges", Fmt::Count, |c| c.hedges as f64),
            ("cancellations sent", Fmt::Count, |c| c.cancels_sent as f64),
            ("retries after retry-after", Fmt::Count, |c| {
                c.pushback_honored as f64
            }),
            ("retries refused by pushback", Fmt::Count, |c| {
                c.pushback_no_retry as f64
            }),
        ] {
            if runs
                .iter()
                .any(|r| r.calls.get(e).is_some_and(|c| get(c) > 0.0))
            {
                let n = e.clone();
                rows.push(Row::from((
                    format!("`{e}` {label}"),
                    fmt,
                    Box::new(move |r: &RunSummary| r.calls.get(&n).map(get)) as Getter,
                )));
            }
        }
    }
    for e in &edges {
        for (label, get) in [
            (
                "retries",
                (|c: &crate::metrics::CallMetrics| c.retries)
                    as fn(&crate::metrics::CallMetrics) -> u64,
            ),
            ("retries throttled", |c| c.retries_throttled),
            ("timeouts", |c| c.timeouts),
        ] {
            let n = e.clone();
            rows.push(Row::from((
                format!("`{e}` {label}"),
                Fmt::Count,
                Box::new(move |r: &RunSummary| r.calls.get(&n).map(|c| get(c) as f64)) as Getter,
            )));
        }
    }
    rows
}

impl Table {
    /// The table, for callers that embed it in a larger text (a sweep's results.md).
    pub fn build(runs: &[RunSummary]) -> MarkdownTable {
        let mut header = vec!["metric".to_owned()];
        header.extend(runs.iter().map(|r| r.scenario.clone()));
        let mut t = MarkdownTable::new(header);
        for row in rows(runs) {
            let mut cells = vec![row.label];
            for r in runs {
                let v = (row.get)(r);
                let why = match (&row.recovery_of, v) {
                    (Some(of), None) => of(r).and_then(undefined_recovery),
                    _ => None,
                };
                cells.push(why.map_or_else(|| show(v, row.fmt), str::to_owned));
            }
            t.row(cells);
        }
        t.right_from(1);
        t
    }
}

fn label_is_recovery(label: &str) -> bool {
    label.starts_with("recovery time")
}

impl Render for Table {
    fn render(&self, runs: &[RunSummary]) -> String {
        let mut s = Table::build(runs).to_string();
        s.push('\n');
        s
    }
}
