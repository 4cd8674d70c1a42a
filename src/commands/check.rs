//! `loadsim check`: validate scenarios without running them and print what their policies imply
//! before any simulation ([`crate::analysis::lint`]): R1 with the chain of products that gives it,
//! each call's worst case against the time its caller serves under, the §7 queue-wait bound, and
//! offered load × amplification against capacity; then the warnings, each with a fix. Rendered as
//! Markdown tables, like `loadsim run`.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::Output;
use crate::Error;
use crate::analysis::lint::{
    self, Level, Lint, describe_call, describe_serves_under, regime_name, show_duration,
    show_factor, show_rate, show_secs,
};
use crate::report::diagnostics::{self, Annotation, ReportFormat};
use crate::report::markdown::{Align, MarkdownTable};
use crate::runner::load_scenarios;
use crate::scenario::Scenario;

/// Validates `files` and lints each scenario. With `deny_warnings`, any warning turns the result
/// into [`Error::Denied`], which still carries the report for stdout.
pub fn check(files: &[PathBuf], sets: &[String], deny_warnings: bool) -> Result<Output, Error> {
    check_as(files, sets, deny_warnings, ReportFormat::Text)
}

/// [`check`] in `format`: with [`ReportFormat::Json`] one JSON document on stdout — every error
/// or finding as an [`Annotation`] for CI — also when the input is refused (exit 2) or
/// `deny_warnings` fails the check (exit 1).
pub fn check_as(
    files: &[PathBuf],
    sets: &[String],
    deny_warnings: bool,
    format: ReportFormat,
) -> Result<Output, Error> {
    crate::error::json_on_refusal(format, check_inner(files, sets, deny_warnings, format))
}

fn check_inner(
    files: &[PathBuf],
    sets: &[String],
    deny_warnings: bool,
    format: ReportFormat,
) -> Result<Output, Error> {
    let loaded = load_scenarios(files, sets, None)?;
    // What `loadsim test` would refuse in `expect:` and `snapshot:` is refused here too.
    let mut problems = Vec::new();
    for ((_, sc), file) in loaded.iter().zip(files) {
        if let Err(e) = crate::expect::check_file(file, sc) {
            problems.extend(e.diagnostics);
        }
    }
    if !problems.is_empty() {
        return Err(crate::config::ConfigError {
            diagnostics: problems,
        }
        .into());
    }
    let mut out = String::new();
    let mut warnings = 0;
    let mut annotations = Vec::new();
    let mut checked = Vec::new();
    for (i, ((_, sc), file)) in loaded.iter().zip(files).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let l = lint::lint(sc);
        warnings += l.count(Level::Warning);
        match format {
            ReportFormat::Text => describe(&mut out, sc, file, &l),
            ReportFormat::Json => {
                checked.push(serde_json::json!({
                    "file": diagnostics::path_text(file),
                    "scenario": sc.name,
                    "warnings": l.count(Level::Warning),
                    "notes": l.count(Level::Note),
                    "worst_case_attempts_per_request": sc
                        .services
                        .iter()
                        .zip(sc.worst_case_attempts())
                        .map(|(s, n)| (s.name.clone(), serde_json::Value::from(n)))
                        .collect::<serde_json::Map<_, _>>(),
                }));
                annotations.extend(l.findings.iter().map(|f| finding(file, f)));
            }
        }
    }
    if format == ReportFormat::Json {
        out = diagnostics::text(&serde_json::json!({
            "schema_version": crate::report::SCHEMA_VERSION,
            "ok": !(deny_warnings && warnings > 0),
            "errors": 0,
            "warnings": warnings,
            "files": checked,
            "annotations": annotations,
        }));
    }
    if deny_warnings && warnings > 0 {
        return Err(Error::Denied {
            report: out,
            warnings,
        });
    }
    let mut output = Output::stdout(out);
    output.notes = loaded
        .iter()
        .flat_map(|(s, _)| s.doc.notes.iter().cloned())
        .collect();
    Ok(output)
}

/// A linter finding as a CI annotation: the file, the service or edge as its key, no line (the
/// linter reasons about the whole scenario, not a line of it).
fn finding(file: &Path, f: &lint::Finding) -> Annotation {
    Annotation {
        level: match f.level {
            Level::Warning => "warning",
            Level::Note => "note",
        },
        file: Some(diagnostics::path_text(file)),
        line: None,
        column: None,
        key: f.subject.clone(),
        argument: None,
        check: Some(f.check.name()),
        message: f.message.clone(),
        fix: f.fix.clone(),
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn describe(out: &mut String, sc: &Scenario, file: &Path, l: &Lint) {
    let _ = writeln!(
        out,
        "{}: ok — scenario `{}`: {}, {}",
        file.display(),
        sc.name,
        plural(l.count(Level::Warning), "warning"),
        plural(l.count(Level::Note), "note"),
    );
    r1(out, sc);
    budget(out, sc, l);
    queues(out, sc, l);
    loads(out, sc, l);
    for level in [Level::Warning, Level::Note] {
        let found: Vec<_> = l.findings.iter().filter(|f| f.level == level).collect();
        if found.is_empty() {
            continue;
        }
        let name = if level == Level::Warning {
            "warning"
        } else {
            "note"
        };
        let _ = writeln!(out, "\n{name}s:");
        for f in found {
            let _ = writeln!(
                out,
                "- {name}[{}] {}: {}",
                f.check.name(),
                f.subject,
                f.message
            );
            if let Some(fix) = &f.fix {
                let _ = writeln!(out, "  fix: {fix}");
            }
        }
    }
}

fn r1(out: &mut String, sc: &Scenario) {
    let _ = writeln!(out, "\nworst-case attempts per user request (R1):");
    let mut t = MarkdownTable::new(["service", "attempts", "chain"]);
    let worst = sc.worst_case_attempts();
    let paths = sc.path_counts();
    for s in sc.topological_order() {
        let chains = sc.attempt_chains(s);
        let products: Vec<String> = chains
            .iter()
            .map(|c| {
                let factors: Vec<String> = c.iter().map(|(_, n)| n.to_string()).collect();
                let hops: Vec<&str> = c.iter().map(|(h, _)| h.as_str()).collect();
                format!("{} ({})", factors.join("·"), hops.join(", "))
            })
            .collect();
        let how = if products.is_empty() {
            "not reachable from the client".to_owned()
        } else if (products.len() as u64) < paths[s] {
            format!(
                "{} + … ({} call paths in all, the first {} shown)",
                products.join(" + "),
                paths[s],
                products.len()
            )
        } else {
            products.join(" + ")
        };
        t.row(vec![sc.services[s].name.clone(), worst[s].to_string(), how]);
    }
    t.right_from(1);
    t.align(2, Align::Left);
    let _ = writeln!(out, "{t}");
}

fn budget(out: &mut String, sc: &Scenario, l: &Lint) {
    let _ = writeln!(
        out,
        "\nbudget: each call's worst case (attempts × attempt timeout + the longest backoffs) against the time its caller serves under:"
    );
    let mut t = MarkdownTable::new([
        "call",
        "worst case",
        "caller serves under",
        "attempts that fit",
    ]);
    let c = &l.client;
    let mut client = format!("{} × {}", c.attempts, show_duration(c.timeout));
    if c.attempts > 1 {
        let uncut = c
            .timeout
            .0
            .saturating_mul(c.attempts as u64)
            .saturating_add(c.interval.0.saturating_mul(c.attempts as u64 - 1));
        client.push_str(&format!(
            " + {} × {} = {}",
            c.attempts - 1,
            show_duration(c.interval),
            show_duration(crate::time::SimDuration(uncut))
        ));
    }
    if let Some(ct) = c.call_timeout {
        client.push_str(&format!(", cut to the {} call_timeout", show_duration(ct)));
    }
    t.row(vec![
        format!(
            "client->{}",
            sc.services[sc.classes[c.class].client.entry].name
        ),
        client,
        "the user: how long a failed request can take".into(),
        "—".into(),
    ]);
    for call in &l.calls {
        let (under, fit) = match (&call.caller_serves_under, call.fit) {
            (Some(u), Some(fit)) => {
                let mark = if call.worst.total > u.wait {
                    " ✗"
                } else {
                    ""
                };
                (
                    describe_serves_under(sc, u),
                    format!("{fit} of {}{mark}", call.worst.attempts),
                )
            }
            _ => ("—".into(), "—".into()),
        };
        t.row(vec![
            sc.edges[call.edge].name.clone(),
            describe_call(&call.worst),
            under,
            fit,
        ]);
    }
    let _ = writeln!(out, "{t}");
}

fn regime_headers(sc: &Scenario, l: &Lint, what: &str) -> Vec<String> {
    l.regimes
        .iter()
        .map(|&r| format!("{what} {}", regime_name(sc, r)))
        .collect()
}

fn queues(out: &mut String, sc: &Scenario, l: &Lint) {
    let _ = writeln!(
        out,
        "\nqueue wait (§7): queue_cap × mean service time / slots, against the time its callers wait (≥: a lower bound, the service waits on calls):"
    );
    let mut header = vec!["service".into(), "slots".into(), "queue_cap".into()];
    header.extend(regime_headers(sc, l, "wait"));
    header.push("callers wait".into());
    header.push("drops expired".into());
    let mut t = MarkdownTable::new(header);
    for q in &l.queues {
        let svc = &sc.services[q.service];
        let ge = if svc.calls.is_empty() { "" } else { "≥ " };
        let mut row = vec![
            svc.name.clone(),
            svc.slots.to_string(),
            svc.queue_cap
                .map_or("unbounded".to_owned(), |c| c.to_string()),
        ];
        match &q.bound_s {
            Some(b) => row.extend(b.iter().map(|&x| format!("{ge}{}", show_secs(x)))),
            None => row.extend(l.regimes.iter().map(|_| "unbounded".to_owned())),
        }
        let u = l.serves_under[q.service];
        row.push(u.map_or("—".into(), |u| show_duration(u.wait)));
        row.push(
            match (svc.drop_expired, u.is_some_and(|u| u.deadline)) {
                (true, true) => "yes",
                (true, false) => "set, but no deadline arrives",
                (false, _) => "no",
            }
            .into(),
        );
        t.row(row);
    }
    t.right_from(1);
    let _ = writeln!(out, "{t}");
}

fn loads(out: &mut String, sc: &Scenario, l: &Lint) {
    let _ = writeln!(
        out,
        "\nload: {} user requests/s × attempts per user request, against capacity = slots / mean service time (≥ / ≤: bounds, the service waits on calls):",
        show_factor(sc.rate())
    );
    let mut header = vec!["service".into()];
    header.extend(regime_headers(sc, l, "mean service time"));
    header.extend(regime_headers(sc, l, "capacity"));
    header.push("capacity when calls time out".into());
    header.extend([
        "first attempts".into(),
        "sustained failure".into(),
        "worst case (R1)".into(),
    ]);
    let mut t = MarkdownTable::new(header);
    for load in &l.loads {
        let s = load.service;
        let calls = !sc.services[s].calls.is_empty();
        let (ge, le) = if calls { ("≥ ", "≤ ") } else { ("", "") };
        let mut row = vec![sc.services[s].name.clone()];
        row.extend(
            l.mean_service_s
                .iter()
                .map(|m| format!("{ge}{}", show_secs(m[s]))),
        );
        row.extend(load.capacity.iter().map(|c| match c {
            Some(c) => format!("{le}{}", show_rate(*c)),
            None => "unbounded".into(),
        }));
        row.push(match (load.timeout_hold_s, load.timeout_capacity) {
            (Some(h), Some(c)) => format!("{} (held ≤ {})", show_rate(c), show_secs(h)),
            _ => "—".into(),
        });
        let per = |a: f64| format!("{} (×{})", show_rate(sc.rate() * a), show_factor(a));
        row.push(per(load.first));
        row.push(per(load.sustained));
        row.push(per(load.worst as f64));
        t.row(row);
    }
    t.right_from(1);
    let _ = writeln!(out, "{t}");
    let _ = writeln!(
        out,
        "(sustained failure: every attempt fails for long; a gRFC A6 throttle then allows at most 1 + token_ratio attempts per call)"
    );
}
