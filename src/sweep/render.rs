//! What a sweep's aggregate ([`super::aggregate::Results`]) says: `results.csv` and `results.md`
//! (and the figures results.md embeds, as [`Figure`]s to draw). Owns the column order of
//! results.csv and the report tables. Both are pure functions of the aggregate: whatever order
//! cells finished in, on however many threads or shards, the bytes are the same. Writing them is
//! the exporter's ([`crate::runner::export::SWEEP`]).
//!
//! results.md opens with the sweep's description and its grid, then the verdict
//! ([`crate::report::verdict`], a row per scenario and grid values over the seeds), then the
//! tables of its `report:` section (or the headline table).
//!
//! results.csv columns: `scenario`, `seed`, one column per grid key other than `seed` (in the
//! order of `grid`; a duration axis, whose values are all durations like `2s`, is followed by its
//! numeric companion `<key>_s` in seconds, so that `10s` sorts after `2s` in pandas or DuckDB),
//! then every scalar metric as in `loadsim run --format csv` without `engine.*`:
//! `metrics.*`, then `services.<name>.*` per service, then `calls.<caller>-><callee>.*` per edge,
//! in the scenario's order; a cell without a column (another topology) leaves it empty, and so
//! does an undefined value (`null`, like `recovery_s` when the system never recovers).

use std::fmt::Write;

use rayon::prelude::*;
use serde_json::Value;

use super::aggregate::{
    AMPLIFICATION, Results, axis_numbers, band_of, display_order, duration_seconds, mean_min_max,
};
use super::figure::Figure;
use super::spec::{Fixed, SEED, SpreadKind};
use crate::metrics::RunSummary;
use crate::plot::labels::{self, figure_file as slug_file};
use crate::plot::{Band, ChartStyle, Line};
use crate::report::flat::{cell, union_columns};
use crate::report::markdown::MarkdownTable;
use crate::report::table::Table;
use crate::report::verdict::Judged;

/// Rows of results.csv written by one task: enough to outweigh a task's cost, few enough that a
/// sweep of some thousands of cells splits across the threads.
const CSV_ROWS_PER_PART: usize = 256;

impl Results<'_> {
    /// results.csv.
    pub fn csv(&self) -> String {
        let columns = union_columns(self.flat.values());
        let axes: Vec<usize> = (0..self.spec.axes.len())
            .filter(|&a| self.spec.axes[a].key != SEED)
            .collect();
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let header = ["scenario", "seed"]
            .into_iter()
            .map(str::to_owned)
            .chain(axes.iter().flat_map(|&a| {
                let axis = &self.spec.axes[a];
                let companion = duration_seconds(axis).map(|_| format!("{}_s", axis.key));
                std::iter::once(axis.key.clone()).chain(companion)
            }))
            .chain(columns.iter().cloned());
        w.write_record(header).expect("writing to memory");
        let mut bytes = w.into_inner().expect("flush to memory");
        // The rows in parts on the current pool, each part its own writer, joined in cell
        // order: a CSV writer keeps no state between records, so the text is the same.
        let rows: Vec<(&usize, &Vec<(String, Value)>)> = self.flat.iter().collect();
        let parts: Vec<Vec<u8>> = rows
            .par_chunks(CSV_ROWS_PER_PART)
            .map(|part| {
                let mut w = ::csv::Writer::from_writer(Vec::new());
                for &(index, flat) in part {
                    w.write_record(self.csv_row(*index, flat, &axes, &columns))
                        .expect("writing to memory");
                }
                w.into_inner().expect("flush to memory")
            })
            .collect();
        for part in parts {
            bytes.extend_from_slice(&part);
        }
        String::from_utf8(bytes).expect("CSV of UTF-8 fields")
    }

    /// The results.csv row of cell `index` (`flat`: its columns), for the `axes` that are not
    /// the seed and the union of `columns`.
    fn csv_row(
        &self,
        index: usize,
        flat: &[(String, Value)],
        axes: &[usize],
        columns: &[String],
    ) -> Vec<String> {
        let c = &self.cells[index];
        let r = self.records[&index];
        let map: std::collections::HashMap<&str, &Value> =
            flat.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let mut record = vec![
            self.spec.scenarios[c.scenario].name.clone(),
            r.summary.seed.to_string(),
        ];
        for &a in axes {
            let axis = &self.spec.axes[a];
            record.push(axis.values[c.values[a]].text.clone());
            if let Some(ns) = duration_seconds(axis) {
                record.push(crate::report::timeseries::seconds(ns[c.values[a]]));
            }
        }
        record.extend(
            columns
                .iter()
                .map(|k| map.get(k.as_str()).map(|v| cell(v)).unwrap_or_default()),
        );
        record
    }

    /// results.md: a short description of the sweep, then the comparison and sensitivity tables.
    pub fn markdown(&self) -> String {
        self.report().0
    }

    /// results.md and the figures it embeds (files beside it, drawn by [`Figure::svg`]).
    pub fn report(&self) -> (String, Vec<Figure>) {
        let mut figures = Vec::new();
        let spec = self.spec;
        let mut out = String::new();
        let _ = writeln!(out, "# Sweep `{}`\n", spec.name);
        if let Some(d) = &spec.description {
            let _ = writeln!(out, "{}\n", d.trim());
        }
        let names: Vec<String> = spec
            .scenarios
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect();
        let _ = writeln!(out, "- Scenarios (table columns): {}.", names.join(", "));
        for axis in &spec.axes {
            let values: Vec<&str> = axis.values.iter().map(|v| v.text.as_str()).collect();
            let _ = writeln!(out, "- `{}`: {}.", axis.key, values.join(", "));
        }
        for g in spec.groups.iter().filter(|g| g.len() > 1) {
            let keys: Vec<String> = g
                .iter()
                .map(|&a| format!("`{}`", spec.axes[a].key))
                .collect();
            let _ = writeln!(out, "- Varying together: {}.", keys.join(", "));
        }
        let total = self.cells.len();
        let present = self.records.len();
        if present == total {
            let _ = writeln!(
                out,
                "- Cells: {total}, one row each in `results.csv` (every number below is there)."
            );
        } else {
            let _ = writeln!(
                out,
                "- Cells: {present} of {total} present (a shard, or an unfinished sweep); one row each in `results.csv`."
            );
        }
        self.verdict(&mut out);
        for c in &spec.comparisons {
            self.comparison(&mut out, c.title.as_deref(), &c.fixed);
        }
        for s in &spec.sensitivities {
            self.sensitivity(&mut out, s, &mut figures);
        }
        for p in &spec.paired {
            self.paired(&mut out, p);
        }
        if spec.comparisons.is_empty() && spec.sensitivities.is_empty() && spec.paired.is_empty() {
            self.headline(&mut out);
        }
        (out, figures)
    }

    fn describe(&self, axes: &[usize], values: &[usize]) -> String {
        axes.iter()
            .zip(values)
            .map(|(&a, &v)| {
                format!(
                    "`{}` = {}",
                    self.spec.axes[a].key, self.spec.axes[a].values[v].text
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn fixed_text(&self, fixed: &Fixed) -> String {
        let (axes, values): (Vec<usize>, Vec<usize>) = fixed.iter().copied().unzip();
        self.describe(&axes, &values)
    }

    fn comparison(&self, out: &mut String, title: Option<&str>, fixed: &Fixed) {
        let free = self.free_axes(fixed, &[]);
        for (values, cells) in self.groups(fixed, &free) {
            let runs: Vec<RunSummary> = cells
                .iter()
                .filter_map(|c| self.records.get(&c.index))
                .map(|r| {
                    let mut s = r.summary.clone();
                    s.scenario = self.spec.scenarios[self.cells[r.index].scenario]
                        .name
                        .clone();
                    s
                })
                .collect();
            if runs.is_empty() {
                continue;
            }
            let mut heading = title.unwrap_or("Comparison").to_owned();
            if !free.is_empty() {
                let _ = write!(heading, " — {}", self.describe(&free, &values));
            }
            let _ = writeln!(out, "\n## {heading}\n");
            if !fixed.is_empty() {
                let _ = writeln!(out, "With {}.\n", self.fixed_text(fixed));
            }
            let _ = writeln!(out, "{}", Table::build(&runs));
        }
    }

    /// The verdict the report opens with ([`crate::report::verdict`]): a row per cell group
    /// ([`Results::cell_groups`]) over its seeds. Sweep cells are not linted here (no `check`
    /// column): `loadsim check` reads the scenario files.
    fn verdict(&self, out: &mut String) {
        let (axes, groups) = self.cell_groups();
        if groups.is_empty() {
            return;
        }
        let rows: Vec<Judged<'_>> = groups
            .iter()
            .map(|((sc, values), indices)| {
                let mut label = format!("`{}`", self.spec.scenarios[*sc].name);
                if !axes.is_empty() {
                    let _ = write!(label, ", {}", self.describe(&axes, values));
                }
                Judged {
                    label,
                    runs: indices.iter().map(|i| &self.records[i].summary).collect(),
                    findings: None,
                }
            })
            .collect();
        let what = if axes.is_empty() {
            "scenario"
        } else {
            "scenario, grid values"
        };
        let _ = write!(out, "\n{}", crate::report::verdict::markdown(what, &rows));
    }

    /// The table of a sweep without a `report:` section: one row per scenario and combination of
    /// the grid values other than the seed (a cell group), in expansion order, and the headline
    /// metrics ([`HEADLINE`]) over the group's seeds as `mean (min–max)`.
    fn headline(&self, out: &mut String) {
        let spec = self.spec;
        let seed = spec.axis(SEED);
        let (axes, groups) = self.cell_groups();
        if groups.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n## Headline metrics\n");
        let seeds = match seed {
            Some(a) => format!(
                "the mean over the seeds ({}) with min–max in parentheses",
                spec.axes[a]
                    .values
                    .iter()
                    .map(|v| v.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "the cell's value".to_owned(),
        };
        let _ = writeln!(
            out,
            "The sweep has no `report:` section, so this is its default table: a row per scenario and combination of grid values, each cell {seeds}. Amplification: the most arrivals in the fault window per user request arriving in it, over the services (`services.<s>.arrivals_during_fault_per_request`). never: no 3-second span with ≥ 99 % success after the window before arrivals stop. Every column of every cell is in `results.csv`.\n"
        );
        let mut header = vec!["scenario".to_owned()];
        header.extend(axes.iter().map(|&a| spec.axes[a].key.clone()));
        header.extend(HEADLINE.iter().map(|(_, label, _)| (*label).to_owned()));
        let mut t = MarkdownTable::new(header);
        for ((sc, values), indices) in &groups {
            let mut row = vec![spec.scenarios[*sc].name.clone()];
            row.extend(
                axes.iter()
                    .zip(values)
                    .map(|(&a, &v)| spec.axes[a].values[v].text.clone()),
            );
            for (column, _, decimals) in HEADLINE {
                let samples: Vec<Option<f64>> = indices
                    .iter()
                    .map(|&i| self.headline_value(i, column))
                    .collect();
                let is_recovery = column.ends_with("recovery_s");
                let unmeasurable = indices
                    .iter()
                    .filter(|&&i| self.unmeasurable(i, column))
                    .count();
                row.push(summarize(
                    &samples,
                    decimals,
                    is_recovery,
                    SpreadKind::MinMax,
                    unmeasurable,
                ));
            }
            t.row(row);
        }
        t.right_from(1 + axes.len());
        let _ = writeln!(out, "{t}");
    }

    /// A paired table: for each scenario but the baseline, the differences of `metric` to the
    /// baseline's cell with the same seed and grid values, as mean ± 95 % CI half-width, the
    /// interval and the number of pairs; one table per combination of the free axes.
    fn paired(&self, out: &mut String, p: &super::spec::Paired) {
        let spec = self.spec;
        let taken: Vec<usize> = spec.axis(SEED).into_iter().collect();
        let free = self.free_axes(&p.fixed, &taken);
        let decimals = p.decimals.map_or_else(
            || {
                if p.metric.contains("rate") || p.metric.contains("ratio") {
                    3
                } else {
                    2
                }
            },
            usize::from,
        );
        let base_name = &spec.scenarios[p.baseline].name;
        for (values, cells) in self.groups(&p.fixed, &free) {
            if !cells.iter().any(|c| self.records.contains_key(&c.index)) {
                continue;
            }
            let mut heading = p
                .title
                .clone()
                .unwrap_or_else(|| format!("`{}` minus `{base_name}`", p.metric));
            if !free.is_empty() {
                let _ = write!(heading, " — {}", self.describe(&free, &values));
            }
            let _ = writeln!(out, "\n## {heading}\n");
            let mut note = format!(
                "Each scenario's `{}` minus `{base_name}`'s in the cell with the same seed and grid values (common random numbers), as the mean over the pairs ± the half-width of its 95 % confidence interval (Student's t).",
                p.metric
            );
            if !p.fixed.is_empty() {
                let _ = write!(note, " With {}.", self.fixed_text(&p.fixed));
            }
            let _ = writeln!(out, "{note}\n");
            let base: std::collections::HashMap<&[usize], usize> = cells
                .iter()
                .filter(|c| c.scenario == p.baseline)
                .map(|c| (c.values.as_slice(), c.index))
                .collect();
            let mut t = MarkdownTable::new(["scenario", "difference", "95 % CI", "pairs"]);
            for (sc, scenario) in spec.scenarios.iter().enumerate() {
                if sc == p.baseline {
                    continue;
                }
                let mut diffs = Vec::new();
                let mut undefined = 0;
                for c in cells.iter().filter(|c| c.scenario == sc) {
                    let Some(&b) = base.get(c.values.as_slice()) else {
                        continue;
                    };
                    if !(self.records.contains_key(&c.index) && self.records.contains_key(&b)) {
                        continue;
                    }
                    match (
                        self.metric(c.index, &p.metric).flatten(),
                        self.metric(b, &p.metric).flatten(),
                    ) {
                        (Some(x), Some(y)) => diffs.push(x - y),
                        _ => undefined += 1,
                    }
                }
                let m = crate::stats::mean_ci95(&diffs);
                let (diff, ci) = match m {
                    None => ("—".to_owned(), "—".to_owned()),
                    Some(m) => match m.bounds() {
                        Some((lo, hi)) => (
                            format!("{:.decimals$} ± {:.decimals$}", m.mean, hi - m.mean),
                            format!("[{lo:.decimals$}, {hi:.decimals$}]"),
                        ),
                        None => (format!("{:.decimals$}", m.mean), "—".to_owned()),
                    },
                };
                let mut pairs = diffs.len().to_string();
                if undefined > 0 {
                    let _ = write!(pairs, "; undefined in {undefined}");
                }
                t.row([scenario.name.clone(), diff, ci, pairs]);
            }
            t.right_from(1);
            let _ = writeln!(out, "{t}");
        }
    }

    fn sensitivity(
        &self,
        out: &mut String,
        s: &super::spec::Sensitivity,
        figures: &mut Vec<Figure>,
    ) {
        let spec = self.spec;
        let seed = spec.axis(SEED).filter(|&a| a != s.axis);
        let mut taken = vec![s.axis];
        taken.extend(seed);
        let free = self.free_axes(&s.fixed, &taken);
        let is_recovery = s.metric.ends_with("recovery_s");
        let decimals = s.decimals.map_or_else(
            || {
                if s.metric.contains("rate") || s.metric.contains("ratio") {
                    3
                } else {
                    2
                }
            },
            usize::from,
        );
        let axis = &spec.axes[s.axis];
        let mut heat_rows: Vec<(Option<usize>, Vec<Line>)> = Vec::new();
        for (values, cells) in self.groups(&s.fixed, &free) {
            if !cells.iter().any(|c| self.records.contains_key(&c.index)) {
                continue;
            }
            let mut heading = s
                .title
                .clone()
                .unwrap_or_else(|| format!("`{}` by `{}`", s.metric, axis.key));
            if !free.is_empty() {
                let _ = write!(heading, " — {}", self.describe(&free, &values));
            }
            let _ = writeln!(out, "\n## {heading}\n");
            let mut note = format!("Rows: `{}`. Cells: `{}`", axis.key, s.metric);
            match seed {
                Some(a) if !s.fixed.iter().any(|&(f, _)| f == a) => {
                    let seeds: Vec<&str> = spec.axes[a]
                        .values
                        .iter()
                        .map(|v| v.text.as_str())
                        .collect();
                    let spread = match s.interval {
                        SpreadKind::MinMax => "with min–max in parentheses",
                        SpreadKind::Ci95 => {
                            "± the half-width of its 95 % confidence interval (Student's t)"
                        }
                    };
                    let _ = write!(note, ", mean over seeds {} {spread}", seeds.join(", "));
                }
                _ => {}
            }
            note.push('.');
            if !s.fixed.is_empty() {
                let _ = write!(note, " With {}.", self.fixed_text(&s.fixed));
            }
            if is_recovery {
                note.push_str(
                    " never: no 3-second span with ≥ 99 % success after the window before arrivals stop.",
                );
            }
            let _ = writeln!(out, "{note}\n");
            let mut header = vec![axis.key.clone()];
            header.extend(spec.scenarios.iter().map(|sc| sc.name.clone()));
            let mut t = MarkdownTable::new(header);
            let xs = axis_numbers(axis);
            let order = display_order(axis);
            let mut lines: Vec<Line> = spec
                .scenarios
                .iter()
                .map(|sc| Line {
                    scenario: sc.name.clone(),
                    points: Vec::new(),
                })
                .collect();
            for &v in &order {
                let mut row = vec![axis.values[v].text.clone()];
                for (sc, line) in lines.iter_mut().enumerate() {
                    let records: Vec<usize> = cells
                        .iter()
                        .filter(|c| c.scenario == sc && c.values[s.axis] == v)
                        .filter_map(|c| self.records.get(&c.index))
                        .map(|r| r.index)
                        .collect();
                    let samples: Vec<Option<f64>> = records
                        .iter()
                        .filter_map(|&i| self.metric(i, &s.metric))
                        .collect();
                    let unmeasurable = records
                        .iter()
                        .filter(|&&i| self.unmeasurable(i, &s.metric))
                        .count();
                    row.push(summarize(
                        &samples,
                        decimals,
                        is_recovery,
                        s.interval,
                        unmeasurable,
                    ));
                    let (mean, lo, hi) = band_of(&samples, s.band);
                    // A recovery no seed reached is "never" (+∞), drawn as a mark, not left out;
                    // one that no seed could measure is not drawn.
                    let never = is_recovery
                        && !samples.is_empty()
                        && mean.is_nan()
                        && unmeasurable < samples.len();
                    let mean = if never { f64::INFINITY } else { mean };
                    line.points.push((xs.values[v], mean, lo, hi));
                }
                t.row(row);
            }
            t.right_from(1);
            let _ = writeln!(out, "{t}");
            let file = figure_file(&heading, figures);
            let _ = writeln!(out, "\n![{heading}]({file})");
            figures.push(Figure::Sensitivity {
                file,
                title: heading.clone(),
                style: ChartStyle {
                    x_label: xs.label.clone(),
                    y_label: labels::metric_label(&s.metric),
                    x_kind: xs.kind.clone(),
                    y_kind: labels::metric_kind(&s.metric),
                    band: match s.band {
                        SpreadKind::MinMax => Band::MinMax,
                        SpreadKind::Ci95 => Band::Ci95,
                    },
                },
                metric_label: s.metric.clone(),
                lines: lines.clone(),
                empty_note: if is_recovery {
                    "never recovered"
                } else {
                    "no finite value"
                },
            });
            heat_rows.push((values.first().copied(), lines));
        }
        // Two axes (this one and one more besides seeds): a heatmap per scenario, the other axis
        // as rows.
        if let [other] = free[..] {
            let y_axis = &spec.axes[other];
            let x_values: Vec<String> = display_order(axis)
                .into_iter()
                .map(|v| axis.values[v].text.clone())
                .collect();
            for (sc, scenario) in spec.scenarios.iter().enumerate() {
                let mut y_values = Vec::new();
                let mut cells = Vec::new();
                for (y, lines) in &heat_rows {
                    let Some(y) = y else { continue };
                    y_values.push(y_axis.values[*y].text.clone());
                    cells.push(
                        lines[sc]
                            .points
                            .iter()
                            .map(|p| p.1.is_finite().then_some(p.1))
                            .collect::<Vec<_>>(),
                    );
                }
                let title = format!(
                    "{} — `{}`",
                    s.title.clone().unwrap_or_else(|| s.metric.clone()),
                    scenario.name
                );
                let file = figure_file(&title, figures);
                let _ = writeln!(out, "\n![{title}]({file})");
                figures.push(Figure::Heatmap {
                    file,
                    title,
                    x_label: labels::key_label(&axis.key, ""),
                    x_values: x_values.clone(),
                    y_label: labels::key_label(&y_axis.key, ""),
                    y_values,
                    cells,
                    never_label: if is_recovery { "never" } else { "—" },
                });
            }
        }
    }
}

/// The columns of the default table of a sweep without `report:`: (results.csv column, header,
/// decimals).
const HEADLINE: [(&str, &str, usize); 7] = [
    ("metrics.success_rate_before", "success before", 3),
    ("metrics.success_rate_during", "success in window", 3),
    ("metrics.success_rate_after", "success after", 3),
    ("metrics.recovery_s", "recovery (s)", 2),
    (
        "metrics.success_latency_p99_s",
        "p99 latency of successes (s)",
        3,
    ),
    (
        "metrics.client_attempts_per_request",
        "client attempts / request",
        2,
    ),
    (AMPLIFICATION, "amplification", 2),
];

/// `mean (min–max)` of the defined samples (`mean ± h` with [`SpreadKind::Ci95`]); undefined ones
/// are counted as `never` for recovery times and as `undefined` otherwise, except the
/// `unmeasurable` of them (recovery times whose `recovered` is absent), counted as "not
/// measurable".
fn summarize(
    samples: &[Option<f64>],
    decimals: usize,
    is_recovery: bool,
    interval: SpreadKind,
    unmeasurable: usize,
) -> String {
    let defined: Vec<f64> = samples.iter().flatten().copied().collect();
    let n = samples.len();
    let missing = n - defined.len() - unmeasurable;
    let word = if is_recovery { "never" } else { "undefined" };
    if samples.is_empty() {
        return "—".into();
    }
    if defined.is_empty() {
        return match (is_recovery, missing, unmeasurable) {
            (false, _, _) => "—".into(),
            (true, _, 0) => "never".into(),
            (true, 0, _) => "not measurable".into(),
            (true, m, u) => format!("never in {m} of {n}; not measurable in {u} of {n}"),
        };
    }
    let (mean, min, max) = mean_min_max(samples);
    let half_width = crate::stats::mean_ci95(&defined).and_then(|m| m.half_width);
    let mut s = match (interval, half_width) {
        (_, None) => format!("{mean:.decimals$}"),
        (SpreadKind::MinMax, Some(_)) => {
            format!("{mean:.decimals$} ({min:.decimals$}–{max:.decimals$})")
        }
        (SpreadKind::Ci95, Some(h)) => format!("{mean:.decimals$} ± {h:.decimals$}"),
    };
    if missing > 0 {
        let _ = write!(s, "; {word} in {missing} of {n}");
    }
    if unmeasurable > 0 {
        let _ = write!(s, "; not measurable in {unmeasurable} of {n}");
    }
    s
}

/// A figure's file name after its table's title, unique among `figures` ([`labels::figure_file`]).
fn figure_file(title: &str, figures: &[Figure]) -> String {
    let taken: Vec<String> = figures.iter().map(|f| f.file().to_owned()).collect();
    slug_file(title, &taken)
}

#[cfg(test)]
mod tests {
    use super::summarize;
    use crate::sweep::spec::SpreadKind;

    /// results.csv is written in parts of [`super::CSV_ROWS_PER_PART`] rows on the pool: over
    /// more than two parts and a remainder, at one thread and at two, it is the text one writer
    /// gives writing every row in order (the way it was written before the parts).
    #[test]
    fn results_csv_in_parts_is_the_text_of_one_writer() {
        use crate::runner::Runner;
        use crate::scenario::{Document, Scenario};
        use crate::sweep::aggregate::Results;
        use crate::sweep::expand::expand;
        use crate::sweep::journal::CellRecord;
        use crate::sweep::spec::SweepSpec;
        use std::path::Path;

        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let seeds: Vec<String> = (1..=300).map(|s| s.to_string()).collect();
        let text = format!(
            "name: t\nscenarios:\n  - ../scenarios/protected.yaml\ngrid:\n  \
             arrivals.rate: [100, 200]\n  seed: [{}]\n",
            seeds.join(", ")
        );
        let spec = SweepSpec::from_text(&root.join("sweeps/t.yaml"), &text).expect("a sweep");
        let cells = expand(&spec);
        assert!(cells.len() > 2 * super::CSV_ROWS_PER_PART + 1);
        // One short run's summary stands for every cell (the seed column tells them apart).
        let text = crate::protections::bad_snippets::scenario_text(
            crate::protections::bad_snippets::At::Client,
            "retries: 1",
        );
        let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
        let summary = crate::model::run(&Scenario::from_document(&doc).unwrap()).unwrap();
        let records: Vec<CellRecord> = cells
            .iter()
            .map(|c| {
                let mut summary = summary.clone();
                summary.seed = c.index as u64;
                CellRecord {
                    index: c.index,
                    key: c.key.clone(),
                    summary,
                }
            })
            .collect();
        let results = Results::new(&spec, &cells, &records);
        let one = Runner::new(Some(1)).unwrap().install(|| results.csv());
        let two = Runner::new(Some(2)).unwrap().install(|| results.csv());
        assert_eq!(one, two);
        let axes: Vec<usize> = (0..spec.axes.len())
            .filter(|&a| spec.axes[a].key != crate::sweep::spec::SEED)
            .collect();
        let columns = crate::report::flat::union_columns(results.flat.values());
        let header_end = one.find('\n').expect("a header") + 1;
        let mut w = ::csv::Writer::from_writer(one.as_bytes()[..header_end].to_vec());
        for (index, flat) in &results.flat {
            w.write_record(results.csv_row(*index, flat, &axes, &columns))
                .unwrap();
        }
        let whole = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(one, whole);
        assert_eq!(one.lines().count(), cells.len() + 1);
    }

    #[test]
    fn summaries_with_a_confidence_interval() {
        // 1, 2, 6: mean 3, s = √7, se = √(7/3), t(2) = 4.3027 → ±6.5725.
        assert_eq!(
            summarize(
                &[Some(1.0), Some(2.0), Some(6.0)],
                2,
                false,
                SpreadKind::Ci95,
                0
            ),
            "3.00 ± 6.57"
        );
        assert_eq!(
            summarize(&[Some(4.0), None, Some(4.0)], 1, true, SpreadKind::Ci95, 0),
            "4.0 ± 0.0; never in 1 of 3"
        );
        assert_eq!(
            summarize(&[Some(0.5)], 3, false, SpreadKind::Ci95, 0),
            "0.500"
        );
    }

    #[test]
    fn summaries_show_mean_range_and_never() {
        assert_eq!(
            summarize(
                &[Some(1.0), Some(2.0), Some(6.0)],
                2,
                true,
                SpreadKind::MinMax,
                0
            ),
            "3.00 (1.00–6.00)"
        );
        assert_eq!(
            summarize(&[None, None], 2, true, SpreadKind::MinMax, 0),
            "never"
        );
        assert_eq!(
            summarize(&[Some(4.0), None], 2, true, SpreadKind::MinMax, 0),
            "4.00; never in 1 of 2"
        );
        assert_eq!(
            summarize(&[Some(0.5)], 3, false, SpreadKind::MinMax, 0),
            "0.500"
        );
        // Recovery times that could not be measured are said so, apart from `never`.
        assert_eq!(
            summarize(&[None, None], 2, true, SpreadKind::MinMax, 2),
            "not measurable"
        );
        assert_eq!(
            summarize(&[None, None, None], 2, true, SpreadKind::MinMax, 1),
            "never in 2 of 3; not measurable in 1 of 3"
        );
        assert_eq!(
            summarize(&[Some(4.0), None, None], 2, true, SpreadKind::MinMax, 1),
            "4.00; never in 1 of 3; not measurable in 1 of 3"
        );
        assert_eq!(summarize(&[], 3, false, SpreadKind::MinMax, 0), "—");
    }
}
