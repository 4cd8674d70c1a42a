//! The verdict a report opens with (`run --html`, a sweep's report): for each run, whether it
//! recovered after its fault window and when, the success of the requests that arrived in the
//! window, the largest amplification (the most attempts per user request at any service), and
//! what `loadsim check` found — the answers a reader came for, before the tables. One row per run
//! in a [`MarkdownTable`], then the linter's findings as a list. The words for a missing recovery
//! time are the run table's ("never", "not measurable"; `—` without a fault window).

use std::fmt::Write as _;

use super::markdown::MarkdownTable;
use super::table::undefined_recovery;
use crate::metrics::{RunMetrics, RunSummary};

/// One run and the linter's findings on its scenario, each a line of text (`warning (budget)
/// `api->db`: …`); `None` when the scenario was not checked (a sweep's cells are checked by
/// `loadsim check` on their files, not here).
pub struct Judged<'a> {
    pub run: &'a RunSummary,
    pub findings: Option<&'a [Finding]>,
}

/// A linter finding as the verdict shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// `true` for a warning (fails `check --deny-warnings`), `false` for a note.
    pub warning: bool,
    /// `warning (budget) `api->db`: … fix: …`.
    pub text: String,
}

/// "yes", or why not: "never", "not measurable", "no fault window".
pub fn recovered(m: &RunMetrics) -> &'static str {
    match m.recovered {
        Some(true) => "yes",
        Some(false) => "never",
        None => undefined_recovery(m).unwrap_or("no fault window"),
    }
}

/// The recovery time in seconds, or the word that stands for it.
pub fn recovery_time(m: &RunMetrics) -> String {
    match m.recovery_s {
        Some(s) => format!("{s:.2}"),
        None => undefined_recovery(m).unwrap_or("—").to_owned(),
    }
}

/// The service with the most attempts per user request, and that number.
pub fn largest_amplification(run: &RunSummary) -> Option<(&str, f64)> {
    run.services
        .iter()
        .filter_map(|(name, s)| s.attempts_per_request.map(|a| (name.as_str(), a)))
        .fold(None, |best: Option<(&str, f64)>, (n, a)| match best {
            Some((_, b)) if b >= a => best,
            _ => Some((n, a)),
        })
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The verdict section, as Markdown: a `## Verdict` heading, the table, and the findings.
pub fn markdown(runs: &[Judged<'_>]) -> String {
    let checked = runs.iter().any(|j| j.findings.is_some());
    let mut header = vec![
        "scenario",
        "recovered",
        "recovery time (s)",
        "success in window",
        "largest amplification (attempts / user request)",
    ];
    if checked {
        header.push("`loadsim check`");
    }
    let mut t = MarkdownTable::new(header);
    for j in runs {
        let m = &j.run.metrics;
        let mut row = vec![
            format!("`{}`", j.run.scenario),
            recovered(m).to_owned(),
            recovery_time(m),
            m.success_rate_during
                .map_or_else(|| "—".to_owned(), |r| format!("{r:.3}")),
            largest_amplification(j.run)
                .map_or_else(|| "—".to_owned(), |(s, a)| format!("{a:.2} at `{s}`")),
        ];
        if checked {
            row.push(match j.findings {
                None => "—".to_owned(),
                Some([]) => "no findings".to_owned(),
                Some(f) => {
                    let warnings = f.iter().filter(|f| f.warning).count();
                    format!(
                        "{}, {}",
                        plural(warnings, "warning"),
                        plural(f.len() - warnings, "note")
                    )
                }
            });
        }
        t.row(row);
    }
    t.right_from(2);
    let mut out = format!("## Verdict\n\n{t}\n");
    for j in runs {
        let Some(findings) = j.findings.filter(|f| !f.is_empty()) else {
            continue;
        };
        let _ = writeln!(out, "\n`loadsim check` on `{}`:\n", j.run.scenario);
        for f in findings {
            let _ = writeln!(out, "- {}", f.text);
        }
    }
    out
}
