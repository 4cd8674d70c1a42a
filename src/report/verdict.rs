//! The verdict a report opens with (`run --html`, a sweep's report): for each run, whether it
//! recovered after its fault window and when, the success of the requests that arrived in the
//! window, the largest amplification (the most attempts per user request at any service), and
//! what `loadsim check` found — the answers a reader came for, before the tables. One row per run
//! (or per sweep cell group, over its seeds) in a [`MarkdownTable`], then the linter's findings as
//! a list. The words for a missing recovery time are the run table's ("never", "not measurable";
//! `—` without a fault window).

use std::fmt::Write as _;

use super::markdown::MarkdownTable;
use super::table::undefined_recovery;
use crate::metrics::{RunMetrics, RunSummary};

/// One row of the verdict: a run, or a sweep's cell group (one scenario and grid values, over
/// its seeds), and the linter's findings on its scenario, each a line of text (`warning (budget)
/// `api->db`: …`); `None` when the scenario was not checked (a sweep's cells are checked by
/// `loadsim check` on their files, not here).
pub struct Judged<'a> {
    /// What the row is: the scenario's name, for a sweep followed by its grid values.
    pub label: String,
    /// The runs of the row (at least one): one for `run --html`, a cell group's seeds for a sweep.
    pub runs: Vec<&'a RunSummary>,
    /// The linter's findings on the row's scenario; `None` when it was not checked.
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

/// The recovery of a row: one run's word, or over several: `yes` or a word when all agree,
/// else `yes in k of n seeds`.
fn recovered_of(runs: &[&RunSummary]) -> String {
    let words: Vec<&str> = runs.iter().map(|r| recovered(&r.metrics)).collect();
    if words.iter().all(|w| *w == words[0]) {
        return words[0].to_owned();
    }
    let yes = words.iter().filter(|w| **w == "yes").count();
    format!("yes in {yes} of {} seeds", words.len())
}

/// `mean (min–max)` of values to `decimals` (the value alone for one), `None` for none.
fn spread(values: &[f64], decimals: usize) -> Option<String> {
    let (&first, rest) = values.split_first()?;
    if rest.is_empty() {
        return Some(format!("{first:.decimals$}"));
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(format!(
        "{mean:.decimals$} ({lo:.decimals$}–{hi:.decimals$})"
    ))
}

/// The recovery time of a row: one run's, or over several the spread of the seeds that
/// recovered (`over k of n` when not all did), or the word all share.
fn recovery_time_of(runs: &[&RunSummary]) -> String {
    if let [one] = runs {
        return recovery_time(&one.metrics);
    }
    let times: Vec<f64> = runs.iter().filter_map(|r| r.metrics.recovery_s).collect();
    match spread(&times, 2) {
        Some(s) if times.len() == runs.len() => s,
        Some(s) => format!("{s} over {} of {} seeds", times.len(), runs.len()),
        None => recovered_of(runs).replace("yes", "—"),
    }
}

/// The verdict section, as Markdown: a `## Verdict` heading, the table (its first column headed
/// `what`), and the findings.
pub fn markdown(what: &str, rows: &[Judged<'_>]) -> String {
    let checked = rows.iter().any(|j| j.findings.is_some());
    let mut header = vec![
        what,
        "recovered",
        "recovery time (s)",
        "success in window",
        "largest amplification (attempts / user request)",
    ];
    if checked {
        header.push("`loadsim check`");
    }
    let mut t = MarkdownTable::new(header);
    for j in rows {
        let success: Vec<f64> = j
            .runs
            .iter()
            .filter_map(|r| r.metrics.success_rate_during)
            .collect();
        let amplification = j.runs.iter().filter_map(|r| largest_amplification(r)).fold(
            None,
            |best: Option<(&str, f64)>, (n, a)| match best {
                Some((_, b)) if b >= a => best,
                _ => Some((n, a)),
            },
        );
        let mut row = vec![
            j.label.clone(),
            recovered_of(&j.runs),
            recovery_time_of(&j.runs),
            spread(&success, 3).unwrap_or_else(|| "—".to_owned()),
            amplification.map_or_else(|| "—".to_owned(), |(s, a)| format!("{a:.2} at `{s}`")),
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
    let mut out = "## Verdict\n\n".to_owned();
    if rows.iter().any(|j| j.runs.len() > 1) {
        out.push_str(
            "Over each row's seeds: whether they recovered after the fault window (`yes in k of n seeds` when they differ), the mean (min–max) of the recovery time of those that did and of the success of the requests arriving in the window, and the largest amplification of any seed.\n\n",
        );
    }
    let _ = writeln!(out, "{t}");
    for j in rows {
        let Some(findings) = j.findings.filter(|f| !f.is_empty()) else {
            continue;
        };
        let _ = writeln!(out, "\n`loadsim check` on {}:\n", j.label);
        for f in findings {
            let _ = writeln!(out, "- {}", f.text);
        }
    }
    out
}
