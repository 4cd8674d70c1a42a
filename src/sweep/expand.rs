//! From a sweep spec to cells. Owns the expansion order (scenarios outermost, then the grid's
//! groups in the order written, the last varying fastest; a zip group moves as one), the cell key
//! that names a cell in the journal and across shards, the shard split, and the check of every
//! cell as a scenario before anything runs — problems point at the sweep file's grid key.

use std::collections::HashSet;
use std::fmt;

use super::spec::{SweepSpec, nested};
use crate::config::inputs::Inputs;
use crate::config::source::set_path;
use crate::config::suggest::did_you_mean;
use crate::config::{ConfigError, Diagnostic, Document};

use crate::report::flat::metric_columns;
use crate::scenario::Scenario;

/// One point of the sweep: a scenario and one value of every axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Position in the full expansion; outputs are ordered by it.
    pub index: usize,
    /// Index into [`SweepSpec::scenarios`].
    pub scenario: usize,
    /// For each axis, the index of its value.
    pub values: Vec<usize>,
    /// `naive|seed=7|faults.slow_b.duration=2s`: the scenario name, then `key=value` per axis.
    pub key: String,
}

/// How many cells `spec` expands to, without expanding it (saturating: a hostile grid's product
/// overflows `usize`). Check it with [`crate::guard::check_cell_limit`] before [`expand`].
pub fn cell_count(spec: &SweepSpec) -> u64 {
    spec.groups
        .iter()
        .map(|g| spec.axes[g[0]].values.len() as u64)
        .fold(spec.scenarios.len() as u64, u64::saturating_mul)
}

/// Every cell of `spec`, in output order.
pub fn expand(spec: &SweepSpec) -> Vec<Cell> {
    let lens: Vec<usize> = spec
        .groups
        .iter()
        .map(|g| spec.axes[g[0]].values.len())
        .collect();
    let per_scenario: usize = lens.iter().product();
    let mut cells = Vec::with_capacity(spec.scenarios.len() * per_scenario);
    for s in 0..spec.scenarios.len() {
        let mut odometer = vec![0usize; lens.len()];
        for _ in 0..per_scenario {
            let mut values = vec![0usize; spec.axes.len()];
            for (g, group) in spec.groups.iter().enumerate() {
                for &a in group {
                    values[a] = odometer[g];
                }
            }
            let mut key = spec.scenarios[s].name.clone();
            for (a, &v) in values.iter().enumerate() {
                key.push('|');
                key.push_str(&spec.axes[a].key);
                key.push('=');
                key.push_str(&spec.axes[a].values[v].text);
            }
            cells.push(Cell {
                index: cells.len(),
                scenario: s,
                values,
                key,
            });
            for g in (0..lens.len()).rev() {
                odometer[g] += 1;
                if odometer[g] < lens[g] {
                    break;
                }
                odometer[g] = 0;
            }
        }
    }
    cells
}

/// Part `k` of `n` of a sweep (1-based): cells whose index is `k - 1` modulo `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1 to `n`.
    pub k: usize,
    /// How many parts the sweep is split into (at least 1).
    pub n: usize,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { k: 1, n: 1 };

    /// Whether `cell` belongs to this shard.
    pub fn contains(&self, cell: &Cell) -> bool {
        cell.index % self.n == self.k - 1
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `K/N` with 1 ≤ K ≤ N.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not K/N with 1 ≤ K ≤ N, like `2/8`");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// The scenario files a sweep names, loaded once.
pub struct Sources {
    /// Each scenario file's document (with its `extends` chain), in the order of
    /// [`SweepSpec::scenarios`].
    pub docs: Vec<Document>,
    /// The other files the cells read (traces), shared by every scenario's document: a file
    /// that several cells or scenarios name is read once and held once.
    pub inputs: Inputs,
    /// The problems of the files they import (see [`crate::import::load_all`]), reported by
    /// [`prepare`] with the problems of every cell.
    pub problems: Vec<Diagnostic>,
}

impl Sources {
    /// Loads every scenario file (with its `extends` chain); all problems together. A problem
    /// with a file a scenario imports does not stop the checks of the cells: it is kept in
    /// [`Sources::problems`].
    pub fn load(spec: &SweepSpec) -> Result<Sources, ConfigError> {
        let mut docs: Vec<Document> = Vec::new();
        let mut problems = Vec::new();
        let mut imports = Vec::new();
        let named = |mut d: Diagnostic| {
            d.message = format!("{} (named in `scenarios` of the sweep)", d.message);
            d
        };
        for s in &spec.scenarios {
            match crate::import::load_all(&s.path) {
                Ok(mut d) => {
                    let deferred = std::mem::take(&mut d.deferred);
                    imports.extend(d.sorted(deferred).diagnostics.into_iter().map(named));
                    docs.push(d);
                }
                Err(e) => problems.extend(e.diagnostics.into_iter().map(named)),
            }
        }
        if problems.is_empty() {
            let inputs = Inputs::default();
            for d in &mut docs {
                d.inputs = inputs.clone();
            }
            Ok(Sources {
                docs,
                inputs,
                problems: imports,
            })
        } else {
            problems.extend(imports);
            Err(ConfigError {
                diagnostics: problems,
            })
        }
    }

    /// What identifies the inputs in the journal: for each scenario, the text of each file of its
    /// `extends` chain, then of each file its edges `import`; then the kind and SHA-256 of each
    /// other file the cells read (a trace). Complete once every cell is checked.
    pub fn identity(&self) -> Vec<Vec<u8>> {
        self.docs
            .iter()
            .flat_map(|d| {
                d.files
                    .iter()
                    .map(|f| f.text.clone().into_bytes())
                    .chain(d.imported.iter().map(|(_, t)| t.clone().into_bytes()))
            })
            .chain(self.inputs.identity())
            .collect()
    }

    /// Every file the sweep's scenarios read: each scenario's files, imports and other files.
    pub fn paths(&self) -> Vec<std::path::PathBuf> {
        let mut paths: Vec<std::path::PathBuf> =
            self.docs.iter().flat_map(Document::input_paths).collect();
        paths.dedup();
        paths
    }
}

/// Builds and validates the scenario of every cell; all problems together, each once. Whether the
/// report's metrics are columns is [`ReportColumns`]'s check, over every cell of the sweep.
pub fn prepare(
    spec: &SweepSpec,
    sources: &Sources,
    cells: &[Cell],
) -> Result<Vec<Scenario>, ConfigError> {
    let mut problems: Vec<Diagnostic> = sources.problems.clone();
    let mut scenarios = Vec::with_capacity(cells.len());
    for cell in cells {
        match build(spec, sources, cell) {
            Ok(sc) => scenarios.push(sc),
            Err(e) => problems.extend(e.diagnostics),
        }
    }
    let mut seen = HashSet::new();
    problems.retain(|d| seen.insert(d.to_string()));
    if problems.is_empty() {
        Ok(scenarios)
    } else {
        Err(ConfigError {
            diagnostics: problems,
        })
    }
}

/// The results.csv columns of a whole sweep, gathered cell by cell, and the check that every
/// metric the report names is one of them (a metric of some cells only, like a request class's, is
/// a column: the other cells leave it empty).
#[derive(Debug, Default)]
pub struct ReportColumns {
    columns: indexmap::IndexSet<String>,
    /// The shapes already summarized: columns depend on the topology, the request classes and
    /// which gated counters show (docs/results-columns.md), so each shape is summarized once.
    seen: HashSet<String>,
}

impl ReportColumns {
    /// Adds the columns of one cell's scenario.
    pub fn add(&mut self, sc: &Scenario) {
        let gated = |shows: bool| if shows { "+" } else { "-" };
        let shape: Vec<String> = sc
            .services
            .iter()
            .map(|s| {
                format!(
                    "{}{}{}{}",
                    s.name,
                    gated(s.rate_limit.is_some()),
                    gated(s.concurrency_limit.is_some()),
                    gated(s.shed_priority)
                )
            })
            .chain(sc.edges.iter().map(|e| {
                format!(
                    "{}{}{}",
                    e.name,
                    gated(e.rate_limit.is_some()),
                    gated(e.concurrency_limit.is_some())
                )
            }))
            .chain(sc.classes.iter().map(|c| format!("class {}", c.name)))
            .collect();
        if self.seen.insert(shape.join(",")) {
            self.columns.extend(metric_columns(sc));
        }
    }

    /// A problem for each report metric that no cell has as a column.
    pub fn check(&self, spec: &SweepSpec) -> Vec<Diagnostic> {
        let tables = spec
            .sensitivities
            .iter()
            .map(|s| {
                (
                    format!("report.sensitivity[{}].metric", s.position),
                    &s.metric,
                )
            })
            .chain(
                spec.paired
                    .iter()
                    .map(|p| (format!("report.paired[{}].metric", p.position), &p.metric)),
            );
        let mut problems = Vec::new();
        for (key, metric) in tables {
            if !self.columns.contains(metric) {
                problems.push(spec.diagnostic(
                    &key,
                    format!(
                        "`{metric}` is not a column of results.csv{}",
                        did_you_mean(metric, self.columns.iter().map(String::as_str))
                    ),
                ));
            }
        }
        problems
    }
}

/// The scenario of one cell.
fn build(spec: &SweepSpec, sources: &Sources, cell: &Cell) -> Result<Scenario, ConfigError> {
    let sref = &spec.scenarios[cell.scenario];
    let mut doc = sources.docs[cell.scenario].clone();
    let mut problems = Vec::new();
    for (a, &v) in cell.values.iter().enumerate() {
        let axis = &spec.axes[a];
        if let Err(m) = set_path(&mut doc.value, &axis.key, axis.values[v].yaml.clone()) {
            problems.push(spec.diagnostic(
                &format!("grid.{}", axis.key),
                format!("not a key of scenario `{}`: {m}", sref.written),
            ));
        }
    }
    let result = Scenario::from_document(&doc).map_err(|e| {
        let mapped = e.diagnostics.into_iter().map(|d| {
            let axis = spec
                .axes
                .iter()
                .zip(&cell.values)
                .find(|(a, _)| nested(&a.key, &d.key));
            match axis {
                Some((a, &v)) => spec.diagnostic(
                    &format!("grid.{}", a.key),
                    if d.key == a.key {
                        format!(
                            "in scenario `{}` with the value `{}`: {}",
                            sref.written, a.values[v].text, d.message
                        )
                    } else {
                        format!(
                            "in scenario `{}` with the value `{}`: `{}`: {}",
                            sref.written, a.values[v].text, d.key, d.message
                        )
                    },
                ),
                None => Diagnostic {
                    message: format!("{} (in the sweep's cell `{}`)", d.message, cell.key),
                    ..d
                },
            }
        });
        ConfigError {
            diagnostics: problems.iter().cloned().chain(mapped).collect(),
        }
    });
    match result {
        Ok(_) if !problems.is_empty() => Err(ConfigError {
            diagnostics: problems,
        }),
        other => other,
    }
}
