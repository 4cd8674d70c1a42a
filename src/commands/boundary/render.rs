//! What `loadsim boundary` says and writes, from the probes the command ran: the Markdown report
//! (headings, the scan table, each seed's boundary, the summary over scenarios, the phase table)
//! and the files of `--out` as bytes, named as [`crate::runner::export::BOUNDARY`] declares them
//! (`<scenario>.<key>.probes.csv`, `.boundary.csv`, `<scenario>.<x>.<y>.phase.csv`, `.phase.svg`).
//! Writing them is the exporter's.

use std::fmt::Write;

use crate::Error;
use crate::analysis::boundary::{
    Agreement, Criterion, Found, Phase, ProbeValue, SearchAxis, SeedSearch, agreement,
};
use crate::report::markdown::MarkdownTable;

/// The report's heading for a search over one key.
pub(super) fn search_heading(
    out: &mut String,
    axis: &SearchAxis,
    criterion: Criterion,
    steps: usize,
    tolerance: f64,
) {
    let _ = writeln!(
        out,
        "# Boundary over `{}` from {} to {}\n\ncriterion: {}.  \nscan: {} values, every {}; bisection until the interval is at most {} wide.",
        axis.key,
        axis.show(axis.low),
        axis.show(axis.high),
        criterion.describe(),
        axis.grid(steps).len(),
        axis.show((axis.high - axis.low) / (steps - 1) as f64),
        axis.show(tolerance),
    );
}

/// The report's heading for a phase diagram.
pub(super) fn phase_heading(
    out: &mut String,
    x: &SearchAxis,
    y: &SearchAxis,
    criterion: Criterion,
) {
    let _ = writeln!(
        out,
        "# Phase diagram over `{}` (x) × `{}` (y)\n\ncriterion: {}.",
        x.key,
        y.key,
        criterion.describe(),
    );
}

/// A recovery time in seconds, or `never`.
fn show_outcome(o: ProbeValue) -> String {
    match o {
        Some(s) => crate::util::number::trimmed(s, 2),
        None => "never".to_owned(),
    }
}

/// One seed's boundary: `(a, b]`, `≤ LOW`, `> HIGH`.
fn show_found(axis: &SearchAxis, f: Found) -> String {
    match f {
        Found::Between { recovers, never } => {
            format!("({}, {}]", axis.show(recovers), axis.show(never))
        }
        Found::AtLow => format!("≤ {} (never recovers at LOW)", axis.show(axis.low)),
        Found::AboveHigh => format!("> {} (recovers everywhere)", axis.show(axis.high)),
    }
}

fn show_agreement(axis: &SearchAxis, a: Agreement) -> String {
    match a {
        Agreement::Agree { recovers, never } => {
            format!("agree: ({}, {}]", axis.show(recovers), axis.show(never))
        }
        Agreement::Spread { lowest, highest } => format!(
            "disagree: from {} to {}",
            axis.show(lowest),
            axis.show(highest)
        ),
        Agreement::AllAboveHigh => format!("all recover up to {}", axis.show(axis.high)),
        Agreement::AllAtLow => format!("none recovers even at {}", axis.show(axis.low)),
        Agreement::Mixed => "mixed: some seeds at an end of the range".to_owned(),
    }
}

fn seed_columns(per_subject: &[Vec<SeedSearch>]) -> Vec<u64> {
    let mut seeds: Vec<u64> = Vec::new();
    for s in per_subject.iter().flatten() {
        if !seeds.contains(&s.seed) {
            seeds.push(s.seed);
        }
    }
    seeds
}

/// The summary table of a search over several scenarios (`names`, in order).
pub(super) fn summary(
    out: &mut String,
    axis: &SearchAxis,
    names: &[&str],
    per_subject: &[Vec<SeedSearch>],
) {
    let seeds = seed_columns(per_subject);
    let _ = writeln!(
        out,
        "\n## Summary: the smallest `{}` at which a run no longer recovers\n\n`(a, b]`: recovers at a, not at b. `*`: not monotone over the scan (see the scenario's section).\n",
        axis.key
    );
    let mut header = vec!["scenario".to_owned()];
    header.extend(seeds.iter().map(|s| format!("seed {s}")));
    header.push("seeds together".into());
    let mut t = MarkdownTable::new(header);
    for (name, results) in names.iter().zip(per_subject) {
        let mut row = vec![(*name).to_owned()];
        for seed in &seeds {
            row.push(match results.iter().find(|r| r.seed == *seed) {
                Some(r) => {
                    let mark = if r.monotone() { "" } else { " *" };
                    format!("{}{mark}", show_found(axis, r.found))
                }
                None => "—".into(),
            });
        }
        row.push(show_agreement(axis, agreement(axis, results)));
        t.row(row);
    }
    let _ = writeln!(out, "{t}");
}

/// One scenario's search: the scan table and each seed's boundary.
pub(super) fn search(out: &mut String, axis: &SearchAxis, name: &str, results: &[SeedSearch]) {
    let _ = writeln!(
        out,
        "\n## `{name}`\n\nrecovery time (s) at the scan values; `never`: `recovery_s` is null.\n"
    );
    let mut header = vec![axis.key.clone()];
    header.extend(results.iter().map(|r| format!("seed {}", r.seed)));
    let mut t = MarkdownTable::new(header);
    if let Some(first) = results.first() {
        for (i, &(v, _)) in first.scan.iter().enumerate() {
            let mut row = vec![axis.show(v)];
            row.extend(results.iter().map(|r| show_outcome(r.scan[i].1)));
            t.row(row);
        }
    }
    t.right_from(0);
    let _ = writeln!(out, "{t}\n");
    let mut t = MarkdownTable::new([
        "seed",
        "boundary",
        "runs",
        "bisection (value → recovery)",
        "monotone over the scan",
    ]);
    for r in results {
        let probes: Vec<String> = r
            .bisection
            .iter()
            .map(|&(v, o)| format!("{} → {}", axis.show(v), show_outcome(o)))
            .collect();
        let monotone = if r.monotone() {
            "yes".to_owned()
        } else {
            let again = &r.recovers_again_at;
            let first_never = r
                .scan
                .iter()
                .find(|(_, o)| o.is_none())
                .map_or(String::new(), |&(v, _)| axis.show(v));
            let shown: Vec<String> = again.iter().take(4).map(|&v| axis.show(v)).collect();
            let more = match again.len() {
                n if n > 4 => format!(" … ({n} scan values, up to {})", axis.show(again[n - 1])),
                _ => String::new(),
            };
            format!(
                "no: never at {first_never}, recovers again at {}{more}",
                shown.join(", ")
            )
        };
        t.row(vec![
            r.seed.to_string(),
            show_found(axis, r.found),
            format!("{} + {}", r.scan.len(), r.bisection.len()),
            if probes.is_empty() {
                "—".into()
            } else {
                probes.join("; ")
            },
            monotone,
        ]);
    }
    let _ = writeln!(out, "{t}\n");
    let _ = writeln!(
        out,
        "seeds {}.",
        show_agreement(axis, agreement(axis, results))
    );
}

/// One scenario's phase diagram as a table.
pub(super) fn phase(out: &mut String, x: &SearchAxis, y: &SearchAxis, name: &str, p: &Phase) {
    let seeds: Vec<String> = p.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        out,
        "\n## `{name}`\n\nrecovery time (s), the median over seeds {} with `never` counted as longest; `never`: the median seed does not recover; `(k/n)`: only k of n seeds recover. Rows: `{}`, columns: `{}`.\n",
        seeds.join(", "),
        y.key,
        x.key
    );
    let mut header = vec![format!("{} ╲ {}", y.key, x.key)];
    header.extend(p.xs.iter().map(|&v| x.show(v)));
    header.push("first never".into());
    let mut t = MarkdownTable::new(header);
    let medians = p.medians();
    for yi in (0..p.ys.len()).rev() {
        let mut row = vec![y.show(p.ys[yi])];
        for (xi, m) in medians[yi].iter().enumerate() {
            let cell = &p.cells[yi][xi];
            let k = cell.iter().filter(|o| o.is_some()).count();
            let mut text = show_outcome(*m);
            if k != 0 && k != cell.len() {
                text.push_str(&format!(" ({k}/{})", cell.len()));
            }
            row.push(text);
        }
        row.push(
            medians[yi]
                .iter()
                .position(Option::is_none)
                .map_or("—".to_owned(), |xi| x.show(p.xs[xi])),
        );
        t.row(row);
    }
    t.right_from(0);
    let _ = writeln!(out, "{t}");
}

/// `rows` as CSV text.
fn csv_bytes(rows: Vec<Vec<String>>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(&row).expect("writing CSV to memory");
    }
    w.into_inner().expect("flushing CSV to memory")
}

fn outcome_fields(o: ProbeValue) -> [String; 2] {
    [
        o.is_some().to_string(),
        o.map_or(String::new(), |s| s.to_string()),
    ]
}

/// The files of one search ([`export::BOUNDARY`]): `<scenario>.<key>.probes.csv` (every run) and
/// `<scenario>.<key>.boundary.csv` (per seed), named and rendered.
pub(super) fn search_files(
    axis: &SearchAxis,
    name: &str,
    results: &[SeedSearch],
) -> [(String, Vec<u8>); 2] {
    let mut rows = vec![vec![
        "scenario".to_owned(),
        "seed".into(),
        "key".into(),
        "phase".into(),
        "value".into(),
        "recovers".into(),
        "recovery_s".into(),
    ]];
    for r in results {
        let phases = [("scan", &r.scan), ("bisection", &r.bisection)];
        for (phase, probes) in phases {
            for &(v, o) in probes {
                let mut row = vec![
                    name.to_owned(),
                    r.seed.to_string(),
                    axis.key.clone(),
                    phase.to_owned(),
                    axis.csv(v),
                ];
                row.extend(outcome_fields(o));
                rows.push(row);
            }
        }
    }
    let probes = (format!("{name}.{}.probes.csv", axis.key), csv_bytes(rows));
    let mut rows = vec![vec![
        "scenario".to_owned(),
        "seed".into(),
        "key".into(),
        "found".into(),
        "recovers_at".into(),
        "never_at".into(),
        "monotone".into(),
        "recovers_again_at".into(),
    ]];
    for r in results {
        let (found, lo, hi) = match r.found {
            Found::Between { recovers, never } => ("between", axis.csv(recovers), axis.csv(never)),
            Found::AtLow => ("at_low", String::new(), axis.csv(axis.low)),
            Found::AboveHigh => ("above_high", axis.csv(axis.high), String::new()),
        };
        let again: Vec<String> = r.recovers_again_at.iter().map(|&v| axis.csv(v)).collect();
        rows.push(vec![
            name.to_owned(),
            r.seed.to_string(),
            axis.key.clone(),
            found.to_owned(),
            lo,
            hi,
            r.monotone().to_string(),
            again.join(" "),
        ]);
    }
    let found = (format!("{name}.{}.boundary.csv", axis.key), csv_bytes(rows));
    [probes, found]
}

/// The files of one phase diagram ([`export::BOUNDARY`]): `<scenario>.<x>.<y>.phase.csv`, one row
/// per grid point and seed, and `<scenario>.<x>.<y>.phase.svg`, its heatmap.
pub(super) fn phase_files(
    x: &SearchAxis,
    y: &SearchAxis,
    name: &str,
    p: &Phase,
) -> Result<[(String, Vec<u8>); 2], Error> {
    let mut rows = vec![
        [
            "scenario",
            "seed",
            "x_key",
            "x",
            "y_key",
            "y",
            "recovers",
            "recovery_s",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for (yi, row) in p.cells.iter().enumerate() {
        for (xi, cell) in row.iter().enumerate() {
            for (si, &o) in cell.iter().enumerate() {
                let [rec, secs] = outcome_fields(o);
                rows.push(vec![
                    name.to_owned(),
                    p.seeds[si].to_string(),
                    x.key.clone(),
                    x.csv(p.xs[xi]),
                    y.key.clone(),
                    y.csv(p.ys[yi]),
                    rec,
                    secs,
                ]);
            }
        }
    }
    let stem = format!("{name}.{}.{}.phase", x.key, y.key);
    let svg = heatmap_svg(
        &format!("{name}: recovery time (s)"),
        x,
        &p.xs,
        y,
        &p.ys,
        &p.medians(),
    )?;
    Ok([
        (format!("{stem}.csv"), csv_bytes(rows)),
        (format!("{stem}.svg"), svg.into_bytes()),
    ])
}

/// The phase diagram as an SVG heatmap (`loadsim::plot::heatmap_svg`): `cells[yi][xi]` is the
/// median recovery time over seeds (`None` = never, drawn as "never") at `x_values[xi]`,
/// `y_values[yi]`.
fn heatmap_svg(
    title: &str,
    x: &SearchAxis,
    x_values: &[f64],
    y: &SearchAxis,
    y_values: &[f64],
    cells: &[Vec<Option<f64>>],
) -> Result<String, Error> {
    let xs: Vec<String> = x_values.iter().map(|&v| x.show(v)).collect();
    let ys: Vec<String> = y_values.iter().map(|&v| y.show(v)).collect();
    Ok(crate::plot::heatmap_svg(
        title, &x.key, &xs, &y.key, &ys, cells, "never",
    )?)
}
