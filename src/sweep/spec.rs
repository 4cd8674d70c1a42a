//! The sweep file. Owns its YAML shape (`raw`, unknown keys refused) and the checks that need only
//! the file itself: axis names, duplicate and overlapping axes, zip groups, report tables that name
//! real axes and values. Checks that need the scenarios (does a grid path exist, is every cell a
//! valid scenario, is a report metric a real column) belong to [`super::expand`](mod@super::expand).
//!
//! ```yaml
//! name: blog37                       # output folder evidence/<name>/
//! description: free text for results.md
//! scenarios: [../scenarios/naive.yaml, ../scenarios/protected.yaml]   # relative to this file
//! grid:                              # dotted scenario key → values; cartesian product
//!   seed: [7, 11, 13]
//!   faults.slow_b.duration: [2s, 5s, 10s, 20s]
//! zip: [[a.b, c.d]]                  # optional: keys that vary together (same length)
//! report:
//!   comparison:                      # metrics × scenarios, one table per value of the free axes
//!     - { title: …, where: { faults.slow_b.duration: 20s } }
//!   sensitivity:                     # axis values × scenarios, mean (min–max) over seeds
//!     - { title: …, axis: faults.slow_b.duration, metric: metrics.recovery_s }
//!     - { axis: faults.slow_b.duration, metric: metrics.success_rate_after, interval: ci95 }
//!     - { axis: faults.slow_b.duration, metric: metrics.recovery_s, band: ci95 }   # figure band
//!   paired:                          # scenarios minus a baseline, same seed and grid values
//!     - { baseline: naive, metric: metrics.recovery_s }
//! ```

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use yaml_serde::Value;

use crate::config::{ConfigError, Diagnostic, Document};

/// The grid key that sets the scenario seed; sensitivity tables aggregate over it.
pub const SEED: &str = "seed";

// The `///` comments on these raw types are the editor schema's descriptions
// (`loadsim schema sweep`): they say what a key means, its unit and default.

/// A loadsim sweep: scenarios × a grid of overrides, run cell by cell, and the tables of its
/// report.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SweepRaw {
    /// The sweep's name: letters, digits, `_`, `-`, `.`; the default output folder is
    /// `evidence/<name>/`. Required.
    name: String,
    /// Free text, printed under the title of results.md.
    description: Option<String>,
    /// Scenario files (with their `extends` chains), relative to this sweep file; their file stems
    /// name the columns of every table and must differ. Required.
    scenarios: Vec<String>,
    /// Dotted scenario key (the paths of `--set`, e.g. `services.svc_a.queue_cap`) or `seed` → a
    /// non-empty list of values; axes are crossed as a cartesian product, in the order written.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, Vec<serde_json::Value>>")]
    grid: IndexMap<String, Vec<Value>>,
    /// Groups of at least two grid keys with the same number of values, taken element by element
    /// instead of crossed.
    #[serde(default)]
    zip: Vec<Vec<String>>,
    /// The tables of results.md.
    #[serde(default)]
    report: ReportRaw,
}

/// The tables of results.md.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReportRaw {
    /// Comparison tables: every metric × scenarios, one table per combination of the axes that
    /// `where` does not fix.
    #[serde(default)]
    comparison: Vec<ComparisonRaw>,
    /// Sensitivity tables: the values of one axis as rows × scenarios, a metric as
    /// `mean (min–max)` over seeds.
    #[serde(default)]
    sensitivity: Vec<SensitivityRaw>,
    /// Paired tables: each scenario's difference to a baseline scenario, cell by cell (same seed
    /// and grid values), as the mean over the pairs with its 95 % confidence interval.
    #[serde(default)]
    paired: Vec<PairedRaw>,
}

/// A paired table (scenarios minus a baseline, a metric over the pairs).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PairedRaw {
    /// The table's heading.
    title: Option<String>,
    /// The baseline scenario: one of `scenarios`, by its file stem. Required.
    baseline: String,
    /// A results.csv metric column, like `metrics.recovery_s`. Required.
    metric: String,
    /// Fixed axis values: grid key → one of its values.
    #[serde(default, rename = "where")]
    #[schemars(with = "IndexMap<String, serde_json::Value>")]
    fixed: IndexMap<String, Value>,
    /// Decimals shown (default 3 for rates and ratios, else 2).
    decimals: Option<u8>,
}

/// A comparison table (metrics × scenarios).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ComparisonRaw {
    /// The table's heading.
    title: Option<String>,
    /// Fixed axis values: grid key → one of its values.
    #[serde(default, rename = "where")]
    #[schemars(with = "IndexMap<String, serde_json::Value>")]
    fixed: IndexMap<String, Value>,
}

/// A sensitivity table (one axis × scenarios, a metric over seeds).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SensitivityRaw {
    /// The table's heading.
    title: Option<String>,
    /// The grid key whose values are the rows. Required.
    axis: String,
    /// A results.csv metric column, like `metrics.recovery_s`. Required.
    metric: String,
    /// Fixed axis values: grid key → one of its values.
    #[serde(default, rename = "where")]
    #[schemars(with = "IndexMap<String, serde_json::Value>")]
    fixed: IndexMap<String, Value>,
    /// Decimals shown (default 3 for rates and ratios, else 2).
    decimals: Option<u8>,
    /// What follows the mean over seeds: `min-max` (default), or `ci95`, the half-width of the
    /// mean's 95 % confidence interval (Student's t) as `mean ± h`.
    interval: Option<SpreadKind>,
    /// The shaded band around each line of the table's figure: `min-max` (default), from the
    /// lowest to the highest seed, or `ci95`, the 95 % confidence interval of the mean over the
    /// seeds (Student's t; no band where fewer than two seeds have a value).
    band: Option<SpreadKind>,
}

/// How a sensitivity cell shows the spread over seeds.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[schemars(rename = "Interval")]
pub enum SpreadKind {
    /// `mean (min–max)`.
    #[default]
    #[serde(rename = "min-max")]
    MinMax,
    /// `mean ± h`, h the half-width of the mean's 95 % confidence interval.
    #[serde(rename = "ci95")]
    Ci95,
}

/// A validated sweep file.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// The sweep's `name`: the default output folder is `evidence/<name>/`.
    pub name: String,
    /// Free text printed under the title of results.md; `None` when the file has none.
    pub description: Option<String>,
    /// Scenario files in the order written; columns of every table follow this order.
    pub scenarios: Vec<ScenarioRef>,
    /// Grid axes in the order written.
    pub axes: Vec<Axis>,
    /// Expansion groups in order: each a single axis or a zip group (axis indices), the first
    /// group varying slowest.
    pub groups: Vec<Vec<usize>>,
    /// `report.comparison`, in order.
    pub comparisons: Vec<Comparison>,
    /// `report.sensitivity`, in order.
    pub sensitivities: Vec<Sensitivity>,
    /// `report.paired`, in order.
    pub paired: Vec<Paired>,
    /// The parsed file, for diagnostics.
    pub doc: Document,
}

/// A scenario file named by the sweep.
#[derive(Clone, Debug)]
pub struct ScenarioRef {
    /// As written in the sweep file.
    pub written: String,
    /// Resolved against the sweep file's folder.
    pub path: PathBuf,
    /// The file stem: the scenario's name in every report.
    pub name: String,
}

/// One grid axis.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Dotted scenario key (or `seed`).
    pub key: String,
    /// Its values in the order written (at least one).
    pub values: Vec<AxisValue>,
}

/// One value of an axis.
#[derive(Clone, Debug)]
pub struct AxisValue {
    /// The value as written: what each of its cells sets at the axis's key.
    pub yaml: Value,
    /// As it appears in cell keys, results.csv and tables: strings as written, anything else as
    /// compact JSON.
    pub text: String,
}

/// Fixed axis values: (axis index, value index).
pub type Fixed = Vec<(usize, usize)>;

/// A comparison table request.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The heading; `None` for "Comparison".
    pub title: Option<String>,
    /// The axis values its `where` fixes; a table per combination of the other axes.
    pub fixed: Fixed,
}

/// A paired table request.
#[derive(Clone, Debug)]
pub struct Paired {
    /// The heading; `None` for "`<metric>` minus `<baseline>`".
    pub title: Option<String>,
    /// Index into [`SweepSpec::scenarios`].
    pub baseline: usize,
    /// A results.csv metric column.
    pub metric: String,
    /// The axis values its `where` fixes; a table per combination of the other axes.
    pub fixed: Fixed,
    /// Decimals shown (at most 12); `None` for 3 on rates and ratios, else 2.
    pub decimals: Option<u8>,
    /// Position in `report.paired`, for diagnostics.
    pub position: usize,
}

/// A sensitivity table request.
#[derive(Clone, Debug)]
pub struct Sensitivity {
    /// The heading; `None` for "`<metric>` by `<axis>`".
    pub title: Option<String>,
    /// Index into [`SweepSpec::axes`]: the axis whose values are the rows.
    pub axis: usize,
    /// A results.csv metric column, like `metrics.recovery_s`.
    pub metric: String,
    /// The axis values its `where` fixes (never `axis`); a table per combination of the others.
    pub fixed: Fixed,
    /// Decimals shown (at most 12); `None` for 3 on rates and ratios, else 2.
    pub decimals: Option<u8>,
    /// What follows the mean over seeds in each cell: `(min–max)` or `± h`.
    pub interval: SpreadKind,
    /// What the figure's band shows.
    pub band: SpreadKind,
    /// Position in `report.sensitivity`, for diagnostics.
    pub position: usize,
}

impl SweepSpec {
    /// Reads and checks a sweep file.
    pub fn load(path: &Path) -> Result<SweepSpec, ConfigError> {
        let text = crate::config::read::read_text(path)?;
        Self::from_text(path, &text)
    }

    /// Checks sweep text that claims to come from `path` (scenario paths resolve against its
    /// folder; nothing is read).
    pub fn from_text(path: &Path, text: &str) -> Result<SweepSpec, ConfigError> {
        let doc = Document::from_text(path, text)?;
        let mut partial = crate::config::deserialize_all::<SweepRaw>(&doc);
        let Some(raw) = partial.value.take() else {
            return Err(doc.sorted(partial.problems));
        };
        let mut c = Checker {
            doc: &doc,
            problems: Vec::new(),
        };
        let spec = c.spec(raw);
        if c.problems.is_empty() && partial.problems.is_empty() {
            Ok(spec)
        } else {
            let meaning: Vec<Diagnostic> = c
                .problems
                .into_iter()
                .filter(|p| partial.placeholders.is_empty() || partial.is_news(&p.key))
                .collect();
            partial.problems.extend(meaning);
            Err(doc.sorted(partial.problems))
        }
    }

    /// The index of the axis called `key`.
    pub fn axis(&self, key: &str) -> Option<usize> {
        self.axes.iter().position(|a| a.key == key)
    }

    /// Axes that vary together with `axis` (its zip group, itself included).
    pub fn partners(&self, axis: usize) -> &[usize] {
        self.groups
            .iter()
            .find(|g| g.contains(&axis))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// A diagnostic at `key` of the sweep file.
    pub fn diagnostic(&self, key: &str, message: impl Into<String>) -> Diagnostic {
        self.doc.diagnostic(key, message)
    }
}

/// The text of a grid value: strings as written, anything else as compact JSON.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_else(|_| format!("{other:?}")),
    }
}

/// What a grid value means, for telling equal values apart from their spelling: durations in
/// nanoseconds, numbers as floats, anything else as written.
fn meaning(v: &Value) -> String {
    match v {
        Value::String(s) => match crate::config::duration::parse_duration(s) {
            Ok(d) => format!("duration {}", d.0),
            Err(_) => format!("text {s}"),
        },
        Value::Number(n) => match n.as_f64() {
            Some(f) => format!("number {f:?}"),
            None => format!("number {n}"),
        },
        other => format!("value {}", value_text(other)),
    }
}

struct Checker<'a> {
    doc: &'a Document,
    problems: Vec<Diagnostic>,
}

impl Checker<'_> {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.problems.push(self.doc.diagnostic(key, message));
    }

    fn spec(&mut self, raw: SweepRaw) -> SweepSpec {
        let name_ok = !raw.name.is_empty()
            && !raw.name.starts_with('.')
            && raw
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !name_ok {
            self.problem(
                "name",
                format!(
                    "`{}` cannot name the output folder; use letters, digits, `_`, `-` and `.`, like `blog37`",
                    raw.name
                ),
            );
        }
        let scenarios = self.scenarios(&raw.scenarios);
        let axes = self.axes(raw.grid);
        let groups = self.groups(&axes, &raw.zip);
        let comparisons = raw
            .report
            .comparison
            .into_iter()
            .enumerate()
            .map(|(i, c)| Comparison {
                fixed: self.fixed(&axes, &format!("report.comparison[{i}].where"), c.fixed),
                title: c.title,
            })
            .collect();
        let sensitivities = raw
            .report
            .sensitivity
            .into_iter()
            .enumerate()
            .filter_map(|(i, s)| self.sensitivity(&axes, i, s))
            .collect();
        let paired = raw
            .report
            .paired
            .into_iter()
            .enumerate()
            .filter_map(|(i, p)| self.paired(&axes, &scenarios, i, p))
            .collect();
        SweepSpec {
            name: raw.name,
            description: raw.description,
            scenarios,
            axes,
            groups,
            comparisons,
            sensitivities,
            paired,
            doc: self.doc.clone(),
        }
    }

    fn scenarios(&mut self, written: &[String]) -> Vec<ScenarioRef> {
        if written.is_empty() {
            self.problem("scenarios", "lists no scenario; name at least one file");
        }
        let folder = self.doc.path().parent().unwrap_or(Path::new("")).to_owned();
        let mut out: Vec<ScenarioRef> = Vec::new();
        for w in written {
            let path = folder.join(w);
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(prev) = out.iter().find(|s| s.name == name) {
                self.problem(
                    "scenarios",
                    format!(
                        "`{w}` and `{}` are both named `{name}` in reports; rename one file",
                        prev.written
                    ),
                );
                continue;
            }
            out.push(ScenarioRef {
                written: w.clone(),
                path,
                name,
            });
        }
        out
    }

    fn axes(&mut self, grid: IndexMap<String, Vec<Value>>) -> Vec<Axis> {
        let mut axes: Vec<Axis> = Vec::new();
        for (key, values) in grid {
            let at = format!("grid.{key}");
            if key.is_empty() || key.split('.').any(str::is_empty) {
                self.problem(
                    &at,
                    "is not a dotted key path; write it like `faults.slow_b.duration`",
                );
                continue;
            }
            if let Some(other) = axes.iter().find(|a| nested(&a.key, &key)) {
                self.problem(
                    &at,
                    format!(
                        "overlaps the axis `{}`: one axis would overwrite the other; keep one",
                        other.key
                    ),
                );
                continue;
            }
            if values.is_empty() {
                self.problem(&at, "has no values; list at least one");
                continue;
            }
            let values: Vec<AxisValue> = values
                .into_iter()
                .map(|yaml| AxisValue {
                    text: value_text(&yaml),
                    yaml,
                })
                .collect();
            // Equal as written, or equal once read (`1s` and `1000ms`, `1` and `1.0`).
            let mut seen: std::collections::HashMap<String, &str> = Default::default();
            for v in &values {
                match seen.insert(meaning(&v.yaml), v.text.as_str()) {
                    Some(first) if first == v.text => self.problem(
                        &at,
                        format!(
                            "lists the value `{}` twice; every cell must be different",
                            v.text
                        ),
                    ),
                    Some(first) => self.problem(
                        &at,
                        format!(
                            "lists `{first}` and `{}`, the same value; every cell must be different",
                            v.text
                        ),
                    ),
                    None => {}
                }
            }
            axes.push(Axis { key, values });
        }
        axes
    }

    fn groups(&mut self, axes: &[Axis], zip: &[Vec<String>]) -> Vec<Vec<usize>> {
        let mut zipped: Vec<Option<usize>> = vec![None; axes.len()];
        let mut groups_of_zip: Vec<Vec<usize>> = Vec::new();
        for (g, keys) in zip.iter().enumerate() {
            let at = format!("zip[{g}]");
            if keys.len() < 2 {
                self.problem(&at, "a zip group needs at least two grid keys");
            }
            let mut members = Vec::new();
            for k in keys {
                let Some(a) = axes.iter().position(|a| &a.key == k) else {
                    self.problem(
                        &at,
                        format!(
                            "`{k}` is not a key of `grid`{}",
                            crate::config::suggest::did_you_mean(
                                k,
                                axes.iter().map(|a| a.key.as_str())
                            )
                        ),
                    );
                    continue;
                };
                if let Some(other) = zipped[a] {
                    self.problem(
                        &at,
                        format!(
                            "`{k}` is already in zip group {other}; a key can vary with one group only"
                        ),
                    );
                    continue;
                }
                zipped[a] = Some(g);
                members.push(a);
            }
            if let Some(&first) = members.first() {
                let n = axes[first].values.len();
                for &m in &members[1..] {
                    if axes[m].values.len() != n {
                        self.problem(
                            &at,
                            format!(
                                "zipped keys must list as many values: `{}` has {n}, `{}` has {}",
                                axes[first].key,
                                axes[m].key,
                                axes[m].values.len()
                            ),
                        );
                    }
                }
            }
            groups_of_zip.push(members);
        }
        // Each group takes the place of its first axis in grid order.
        let mut groups = Vec::new();
        let mut placed = vec![false; zip.len()];
        for (a, zip_group) in zipped.iter().enumerate() {
            match *zip_group {
                None => groups.push(vec![a]),
                Some(g) if !placed[g] => {
                    placed[g] = true;
                    let mut members = groups_of_zip[g].clone();
                    members.sort_unstable();
                    groups.push(members);
                }
                Some(_) => {}
            }
        }
        groups
    }

    fn fixed(&mut self, axes: &[Axis], at: &str, fixed: IndexMap<String, Value>) -> Fixed {
        let mut out = Vec::new();
        for (k, v) in fixed {
            let key_at = format!("{at}.{k}");
            let Some(a) = axes.iter().position(|a| a.key == k) else {
                self.problem(
                    &key_at,
                    format!(
                        "`{k}` is not a key of `grid`{}",
                        crate::config::suggest::did_you_mean(
                            &k,
                            axes.iter().map(|a| a.key.as_str())
                        )
                    ),
                );
                continue;
            };
            let text = value_text(&v);
            match axes[a].values.iter().position(|x| x.text == text) {
                Some(i) => out.push((a, i)),
                None => {
                    let listed: Vec<String> = axes[a]
                        .values
                        .iter()
                        .map(|x| format!("`{}`", x.text))
                        .collect();
                    self.problem(
                        &key_at,
                        format!(
                            "`{text}` is not a value of this axis; it lists {}",
                            listed.join(", ")
                        ),
                    );
                }
            }
        }
        out
    }

    fn paired(
        &mut self,
        axes: &[Axis],
        scenarios: &[ScenarioRef],
        i: usize,
        p: PairedRaw,
    ) -> Option<Paired> {
        let at = format!("report.paired[{i}]");
        let fixed = self.fixed(axes, &format!("{at}.where"), p.fixed);
        if p.decimals.is_some_and(|d| d > 12) {
            self.problem(&format!("{at}.decimals"), "must be at most 12");
        }
        let Some(baseline) = scenarios.iter().position(|s| s.name == p.baseline) else {
            self.problem(
                &format!("{at}.baseline"),
                format!(
                    "`{}` is not one of the sweep's scenarios (their file stems){}",
                    p.baseline,
                    crate::config::suggest::did_you_mean(
                        &p.baseline,
                        scenarios.iter().map(|s| s.name.as_str())
                    )
                ),
            );
            return None;
        };
        Some(Paired {
            title: p.title,
            baseline,
            metric: p.metric,
            fixed,
            decimals: p.decimals,
            position: i,
        })
    }

    fn sensitivity(&mut self, axes: &[Axis], i: usize, s: SensitivityRaw) -> Option<Sensitivity> {
        let at = format!("report.sensitivity[{i}]");
        let fixed = self.fixed(axes, &format!("{at}.where"), s.fixed);
        let Some(axis) = axes.iter().position(|a| a.key == s.axis) else {
            self.problem(
                &format!("{at}.axis"),
                format!(
                    "`{}` is not a key of `grid`{}",
                    s.axis,
                    crate::config::suggest::did_you_mean(
                        &s.axis,
                        axes.iter().map(|a| a.key.as_str())
                    )
                ),
            );
            return None;
        };
        if fixed.iter().any(|&(a, _)| a == axis) {
            self.problem(
                &format!("{at}.where"),
                format!(
                    "fixes `{}`, the axis of the table's rows; remove it from `where`",
                    s.axis
                ),
            );
        }
        if s.decimals.is_some_and(|d| d > 12) {
            self.problem(&format!("{at}.decimals"), "must be at most 12");
        }
        Some(Sensitivity {
            title: s.title,
            axis,
            metric: s.metric,
            fixed,
            decimals: s.decimals,
            interval: s.interval.unwrap_or_default(),
            band: s.band.unwrap_or_default(),
            position: i,
        })
    }
}

/// Whether one dotted key is the other or lies inside it.
pub(crate) fn nested(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
}
