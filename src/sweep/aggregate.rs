//! The aggregate of a sweep: its finished cells with the spec and expansion that give them
//! meaning ([`Results`]), each cell's metrics flattened once to results.csv's columns, the cell
//! groups the tables show (by scenario and grid values, or by the values a table leaves free), a
//! metric of a cell by column, an axis's values as numbers for a chart, and the numbers over a
//! group's seeds (mean, min–max, the mean's 95 % confidence band). All are pure functions of the
//! sweep spec and the journaled cells, ordered by cell index: whatever order cells finished in, on
//! however many threads or shards, the aggregate is the same. Wall-clock numbers (`engine.*`)
//! never appear.
//!
//! What results.md and results.csv say is [`super::render`]; the figures results.md embeds are
//! [`super::figure`]; writing them is the exporter's ([`crate::runner::export::SWEEP`]).

use std::collections::BTreeMap;

use indexmap::IndexMap;
use rayon::prelude::*;
use serde_json::Value;

use super::expand::Cell;
use super::journal::CellRecord;
use super::spec::{Fixed, SEED, SpreadKind, SweepSpec};
use crate::plot::labels::{self, AxisKind};
use crate::report::flat::{EngineColumns, flatten};

/// The finished cells of a sweep, with the spec and expansion that give them meaning.
pub struct Results<'a> {
    /// The sweep, for its axes, scenarios and report tables.
    pub spec: &'a SweepSpec,
    /// The full expansion (every cell, present or not).
    pub cells: &'a [Cell],
    /// Finished cells by index.
    pub records: BTreeMap<usize, &'a CellRecord>,
    /// Each finished cell's metrics flattened to results.csv columns, computed once.
    pub(super) flat: BTreeMap<usize, Vec<(String, Value)>>,
}

impl<'a> Results<'a> {
    /// The results of `records` (finished cells, in any order) within the expansion `cells`.
    pub fn new(spec: &'a SweepSpec, cells: &'a [Cell], records: &'a [CellRecord]) -> Self {
        Results {
            spec,
            cells,
            records: records.iter().map(|r| (r.index, r)).collect(),
            // Flattening is most of the aggregate's time over many cells: on the current pool.
            flat: records
                .par_iter()
                .map(|r| (r.index, flatten(&r.summary, EngineColumns::Exclude)))
                .collect(),
        }
    }

    /// A metric of a finished cell by its results.csv column: `None` when the run has no such
    /// column, `Some(None)` when the value is undefined (`null`).
    pub(super) fn metric(&self, index: usize, column: &str) -> Option<Option<f64>> {
        self.flat[&index]
            .iter()
            .find(|(k, _)| k == column)
            .map(|(_, v)| v.as_f64())
    }

    /// Axes a table neither fixes nor aggregates nor shows as rows: one table per combination.
    pub(super) fn free_axes(&self, fixed: &Fixed, taken: &[usize]) -> Vec<usize> {
        let mut bound: Vec<usize> = Vec::new();
        for &a in fixed.iter().map(|(a, _)| a).chain(taken) {
            bound.extend_from_slice(self.spec.partners(a));
            bound.push(a);
        }
        // An axis with one value splits nothing (the header of results.md lists it).
        (0..self.spec.axes.len())
            .filter(|&a| !bound.contains(&a) && self.spec.axes[a].values.len() > 1)
            .collect()
    }

    /// Cells matching `fixed`, grouped by their values of `free` (groups in expansion order).
    pub(super) fn groups(
        &self,
        fixed: &Fixed,
        free: &[usize],
    ) -> IndexMap<Vec<usize>, Vec<&'a Cell>> {
        let mut groups: IndexMap<Vec<usize>, Vec<&Cell>> = IndexMap::new();
        for c in self.cells {
            if fixed.iter().all(|&(a, v)| c.values[a] == v) {
                let key: Vec<usize> = free.iter().map(|&a| c.values[a]).collect();
                groups.entry(key).or_default().push(c);
            }
        }
        groups
    }

    /// The cell groups of the finished cells: one per scenario and combination of the values of
    /// the axes other than the seed that have more than one value (returned first), scenario
    /// first, then in the order of the grid; each with its cells' indices.
    #[allow(clippy::type_complexity)]
    pub(super) fn cell_groups(&self) -> (Vec<usize>, Vec<((usize, Vec<usize>), Vec<usize>)>) {
        let spec = self.spec;
        let seed = spec.axis(SEED);
        let axes: Vec<usize> = (0..spec.axes.len())
            .filter(|&a| Some(a) != seed && spec.axes[a].values.len() > 1)
            .collect();
        let mut groups: IndexMap<(usize, Vec<usize>), Vec<usize>> = IndexMap::new();
        for c in self.cells {
            if self.records.contains_key(&c.index) {
                let key: Vec<usize> = axes.iter().map(|&a| c.values[a]).collect();
                groups.entry((c.scenario, key)).or_default().push(c.index);
            }
        }
        let mut groups: Vec<_> = groups.into_iter().collect();
        groups.sort_by_key(|((sc, _), cells)| (*sc, cells[0]));
        (axes, groups)
    }

    /// Whether cell `index` has no `column` because it is a recovery time that is not
    /// measurable: its companion `recovered` is absent or null.
    pub(super) fn unmeasurable(&self, index: usize, column: &str) -> bool {
        let Some(base) = column.strip_suffix("recovery_s") else {
            return false;
        };
        let recovered = format!("{base}recovered");
        self.metric(index, column).flatten().is_none()
            && self.flat[&index]
                .iter()
                .find(|(k, _)| *k == recovered)
                .is_none_or(|(_, v)| v.is_null())
    }

    /// A headline value of a cell: a results.csv column, or the largest
    /// `services.*.arrivals_during_fault_per_request` for [`AMPLIFICATION`].
    pub(super) fn headline_value(&self, index: usize, column: &str) -> Option<f64> {
        if column == AMPLIFICATION {
            return self.flat[&index]
                .iter()
                .filter(|(k, _)| {
                    k.starts_with("services.") && k.ends_with(".arrivals_during_fault_per_request")
                })
                .filter_map(|(_, v)| v.as_f64())
                .reduce(f64::max);
        }
        self.metric(index, column).flatten()
    }
}

/// Stands for the largest `services.<s>.arrivals_during_fault_per_request` of a cell.
pub(super) const AMPLIFICATION: &str = "amplification";

/// The nanoseconds of each value of a duration axis: `Some` when every value is a duration
/// written with a unit (`2s`, `500ms`), `None` for any other axis (plain numbers included).
pub fn duration_seconds(axis: &super::spec::Axis) -> Option<Vec<u64>> {
    axis.values
        .iter()
        .map(|v| match &v.yaml {
            yaml_serde::Value::String(t) => {
                crate::config::duration::parse_duration(t).ok().map(|d| d.0)
            }
            _ => None,
        })
        .collect()
}

/// The order in which a table shows an axis's values: by length for a duration axis (the grid's
/// `[10s, 2s]` shows 2s first), the grid's order otherwise.
pub(super) fn display_order(axis: &super::spec::Axis) -> Vec<usize> {
    let mut order: Vec<usize> = (0..axis.values.len()).collect();
    if let Some(ns) = duration_seconds(axis) {
        order.sort_by_key(|&v| ns[v]);
    }
    order
}

/// An axis's values as numbers for a chart: plain numbers, durations in seconds, or else the
/// position of each value (a categorical axis, whose ticks are named); with the axis's human label.
pub(super) struct AxisNumbers {
    pub(super) values: Vec<f64>,
    pub(super) label: String,
    pub(super) kind: AxisKind,
}

pub(super) fn axis_numbers(axis: &super::spec::Axis) -> AxisNumbers {
    let texts: Vec<&str> = axis.values.iter().map(|v| v.text.as_str()).collect();
    if let Some(values) = texts
        .iter()
        .map(|t| t.parse::<f64>().ok())
        .collect::<Option<Vec<_>>>()
    {
        let integer = texts.iter().all(|t| t.parse::<i64>().is_ok());
        return AxisNumbers {
            values,
            label: labels::key_label(&axis.key, ""),
            kind: if integer {
                AxisKind::Integer
            } else {
                AxisKind::Number
            },
        };
    }
    let durations: Option<Vec<f64>> = texts
        .iter()
        .map(|t| {
            crate::config::duration::parse_duration(t)
                .ok()
                .map(|d| d.as_secs_f64())
        })
        .collect();
    match durations {
        Some(values) => AxisNumbers {
            values,
            label: labels::key_label(&axis.key, " (s)"),
            kind: AxisKind::Number,
        },
        None => AxisNumbers {
            values: (0..texts.len()).map(|i| i as f64).collect(),
            label: labels::key_label(&axis.key, ""),
            kind: AxisKind::Categories(texts.iter().map(|t| (*t).to_owned()).collect()),
        },
    }
}

/// The mean of the defined samples and the band drawn around it: min–max, or the bounds of the
/// mean's 95 % confidence interval (the mean itself when fewer than two samples are defined).
/// NaN throughout when none is defined.
pub(super) fn band_of(samples: &[Option<f64>], band: SpreadKind) -> (f64, f64, f64) {
    let (mean, min, max) = mean_min_max(samples);
    match band {
        SpreadKind::MinMax => (mean, min, max),
        SpreadKind::Ci95 => {
            let defined: Vec<f64> = samples.iter().flatten().copied().collect();
            match crate::stats::mean_ci95(&defined).and_then(|m| m.bounds()) {
                Some((lo, hi)) => (mean, lo, hi),
                None => (mean, mean, mean),
            }
        }
    }
}

/// Mean, minimum and maximum of the defined samples (NaN when none is defined).
pub(super) fn mean_min_max(samples: &[Option<f64>]) -> (f64, f64, f64) {
    let defined: Vec<f64> = samples.iter().flatten().copied().collect();
    if defined.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = defined.iter().sum::<f64>() / defined.len() as f64;
    let min = defined.iter().copied().fold(f64::INFINITY, f64::min);
    let max = defined.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}
