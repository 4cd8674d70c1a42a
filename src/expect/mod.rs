//! What a scenario expects of its own results, for `loadsim test`. Owns the `expect:` assertions
//! (a metric, one comparison, optionally many seeds read as a share or a mean, optionally paired
//! with a baseline scenario), their checks with key path and line, and their verdicts; the
//! `snapshot:` key and the snapshot files live in [`snapshot`], the JUnit report in [`junit`].
//!
//! Neither key changes a run: a [`crate::Scenario`] never holds them, so `loadsim run` gives the
//! same numbers with or without them. They are read from the file itself only, never inherited
//! through `extends` (a variant that extends a tested scenario is not tested twice by accident).

pub mod junit;
pub mod report;
pub mod snapshot;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::config::source::Document;
use crate::config::suggest::did_you_mean;
use crate::report::flat::metric_columns;
use crate::scenario::raw::expect::{AssertionRaw, IsRaw, SeedsRaw, SnapshotRaw, TestKeysRaw};
use crate::scenario::{ConfigError, Diagnostic, Scenario};
use crate::stats::{MAX_SEEDS, MeanCi, mean_ci95};

/// The metric `is: never` is for.
pub const RECOVERY: &str = "metrics.recovery_s";

/// A scenario file's expectations: its assertions and its snapshot settings.
#[derive(Clone, Debug)]
pub struct Expectations {
    /// The `expect:` entries, in file order (empty without `expect`).
    pub assertions: Vec<Assertion>,
    /// `None` without `snapshot: true`.
    pub snapshot: Option<snapshot::Settings>,
}

/// One comparison of a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relation {
    /// `le`: at most this.
    Le(f64),
    /// `lt`: below this.
    Lt(f64),
    /// `ge`: at least this.
    Ge(f64),
    /// `gt`: above this.
    Gt(f64),
    /// `eq`: exactly this.
    Eq(f64),
    /// Both ends included.
    Between(f64, f64),
    /// The value is undefined (`recovery_s` of a run that never recovers).
    Never,
}

impl Relation {
    /// Whether `value` (`None` for an undefined metric) passes. Only `Never` passes `None`.
    pub fn holds(&self, value: Option<f64>) -> bool {
        match (self, value) {
            (Relation::Never, v) => v.is_none(),
            (_, None) => false,
            (Relation::Le(b), Some(v)) => v <= *b,
            (Relation::Lt(b), Some(v)) => v < *b,
            (Relation::Ge(b), Some(v)) => v >= *b,
            (Relation::Gt(b), Some(v)) => v > *b,
            (Relation::Eq(b), Some(v)) => v == *b,
            (Relation::Between(a, b), Some(v)) => *a <= v && v <= *b,
        }
    }

    /// As written in the file: `le 5`, `between [1, 2]`, `is never`.
    pub fn describe(&self) -> String {
        match self {
            Relation::Le(b) => format!("le {}", show(*b)),
            Relation::Lt(b) => format!("lt {}", show(*b)),
            Relation::Ge(b) => format!("ge {}", show(*b)),
            Relation::Gt(b) => format!("gt {}", show(*b)),
            Relation::Eq(b) => format!("eq {}", show(*b)),
            Relation::Between(a, b) => format!("between [{}, {}]", show(*a), show(*b)),
            Relation::Never => "is never".into(),
        }
    }

    /// The operator's key (`le` … `is`), for machine-readable output.
    pub fn key(&self) -> &'static str {
        match self {
            Relation::Le(_) => "le",
            Relation::Lt(_) => "lt",
            Relation::Ge(_) => "ge",
            Relation::Gt(_) => "gt",
            Relation::Eq(_) => "eq",
            Relation::Between(..) => "between",
            Relation::Never => "is",
        }
    }
}

/// How an assertion reads several seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    /// The comparison holds on every seed (the only reading of a single seed).
    Every,
    /// The comparison holds on at least this share of the seeds.
    Share(f64),
    /// The comparison holds for the mean over the seeds.
    Mean,
}

/// The baseline of a paired assertion.
#[derive(Clone, Debug)]
pub struct Baseline {
    /// As written in `compare.baseline`.
    pub written: String,
    /// Resolved against the folder of the file that names it.
    pub path: PathBuf,
    /// The baseline scenario, loaded; run on the assertion's seeds.
    pub scenario: Scenario,
}

/// One `expect:` entry, checked.
#[derive(Clone, Debug)]
pub struct Assertion {
    /// Position in `expect`.
    pub index: usize,
    /// `metric`: dotted path of a metric in the run JSON (`metrics.recovery_s`).
    pub metric: String,
    /// What the value must satisfy (`le`, `lt`, `ge`, `gt`, `eq`, `between` or `is`).
    pub comparison: Relation,
    /// The seeds to run; `None` for the scenario's own seed.
    pub seeds: Option<Vec<u64>>,
    /// How the seeds are read: every one, a `share`, or the `mean`.
    pub reading: Reading,
    /// `compare.baseline`: assert on this minus the baseline (`None`: on the value itself).
    pub baseline: Option<Baseline>,
}

/// An assertion's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Whether the assertion holds.
    pub passed: bool,
    /// One line on what was observed: `3.0`, `holds on 19 of 20 seeds (needs 19)`,
    /// `mean 2.3 ± 0.4 (95 % CI [1.9, 2.7], n = 20)`.
    pub observed: String,
    /// The value per seed (this minus baseline when paired); `None` where undefined.
    pub values: Vec<(u64, Option<f64>)>,
    /// With `mean: true`, the mean and its interval (when every seed has a value).
    pub mean: Option<MeanCi>,
}

impl Assertion {
    /// The test case's name: `expect[0]: metrics.recovery_s le 5 (seeds 1..20, share 0.95)`.
    pub fn name(&self) -> String {
        let mut name = format!(
            "expect[{}]: {} {}",
            self.index,
            self.metric,
            self.comparison.describe()
        );
        let mut notes = Vec::new();
        if let Some(b) = &self.baseline {
            notes.push(format!("minus baseline {}", b.written));
        }
        if let Some(seeds) = &self.seeds {
            notes.push(format!("seeds {}", seed_list(seeds)));
        }
        match self.reading {
            Reading::Every if self.seeds.is_some() => notes.push("every seed".into()),
            Reading::Every => {}
            Reading::Share(s) => notes.push(format!("share {}", show(s))),
            Reading::Mean => notes.push("mean".into()),
        }
        if !notes.is_empty() {
            name.push_str(&format!(" ({})", notes.join(", ")));
        }
        name
    }

    /// Judges the values per seed (already differenced against the baseline when paired).
    pub fn judge(&self, values: Vec<(u64, Option<f64>)>) -> Verdict {
        let c = self.comparison;
        match self.reading {
            Reading::Every if values.len() == 1 => {
                let v = values[0].1;
                Verdict {
                    passed: c.holds(v),
                    observed: show_value(v),
                    values,
                    mean: None,
                }
            }
            Reading::Every | Reading::Share(_) => {
                let n = values.len();
                let ok = values.iter().filter(|(_, v)| c.holds(*v)).count();
                let needed = match self.reading {
                    Reading::Share(s) => needed_seeds(s, n),
                    _ => n,
                };
                let failing: Vec<String> = values
                    .iter()
                    .filter(|(_, v)| !c.holds(*v))
                    .take(10)
                    .map(|(s, v)| format!("seed {s}: {}", show_value(*v)))
                    .collect();
                let mut observed = format!("holds on {ok} of {n} seeds (needs {needed})");
                if !failing.is_empty() {
                    observed.push_str(&format!("; not on {}", failing.join(", ")));
                    if n - ok > failing.len() {
                        observed.push_str(", …");
                    }
                }
                Verdict {
                    passed: ok >= needed,
                    observed,
                    values,
                    mean: None,
                }
            }
            Reading::Mean => {
                let undefined: Vec<u64> = values
                    .iter()
                    .filter(|(_, v)| v.is_none())
                    .map(|(s, _)| *s)
                    .collect();
                if !undefined.is_empty() {
                    let list: Vec<String> = undefined.iter().map(u64::to_string).collect();
                    return Verdict {
                        passed: false,
                        observed: format!(
                            "no mean: the metric has no value on seed(s) {}",
                            list.join(", ")
                        ),
                        values,
                        mean: None,
                    };
                }
                let xs: Vec<f64> = values.iter().filter_map(|(_, v)| *v).collect();
                let m = mean_ci95(&xs).expect("an assertion has at least one seed");
                Verdict {
                    passed: c.holds(Some(m.mean)),
                    observed: describe_mean(&m),
                    values,
                    mean: Some(m),
                }
            }
        }
    }
}

/// The fewest of `n` seeds that make at least `share` of them (`share` in (0, 1]).
pub fn needed_seeds(share: f64, n: usize) -> usize {
    // A share written in decimal is rarely exact in binary (0.95 · 20 = 18.999…96): allow for it.
    ((share * n as f64) - 1e-9).ceil().max(0.0) as usize
}

/// `mean 2.3 ± 0.41 (95 % CI [1.9, 2.7], n = 20)`, or without the interval for one value.
pub fn describe_mean(m: &MeanCi) -> String {
    match m.bounds() {
        Some((lo, hi)) => format!(
            "mean {} ± {} (95 % CI [{}, {}], n = {})",
            show(m.mean),
            show(m.half_width.unwrap_or(0.0)),
            show(lo),
            show(hi),
            m.n
        ),
        None => format!("mean {} (n = 1, no interval)", show(m.mean)),
    }
}

/// A number for people: 6 significant digits, no exponent for everyday magnitudes.
pub fn show(x: f64) -> String {
    snapshot::number_text(x, 6)
}

/// A metric's value for people: the number, or `never` when undefined.
pub fn show_value(v: Option<f64>) -> String {
    v.map_or_else(|| "never (no value)".to_owned(), show)
}

/// `1..20` for consecutive seeds from 1, else the list: `3, 5, 9`.
pub fn seed_list(seeds: &[u64]) -> String {
    let consecutive = seeds.len() > 2 && seeds.windows(2).all(|w| w[1] == w[0] + 1);
    if consecutive {
        format!("{}..{}", seeds[0], seeds[seeds.len() - 1])
    } else {
        seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether a scenario file states `expect:` or a snapshot, judged from its own top-level lines
/// (cheap enough for walking a folder; the file is then loaded properly).
pub fn mentions_test_keys(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("expect:") || l.starts_with("snapshot:"))
}

/// Checks the `expect:` and `snapshot:` keys of the scenario file `path` (its validated
/// `scenario` given), without running anything: what `loadsim check` adds for them.
pub fn check_file(path: &Path, scenario: &Scenario) -> Result<(), ConfigError> {
    let doc = crate::import::load_all(path)?;
    read(&doc, scenario, &|p| Scenario::load(p, &[], None)).map(|_| ())
}

/// Reads and checks the expectations of the file `doc` was loaded from, for `scenario` (the
/// file's validated scenario); `load_baseline` loads a `compare.baseline` file. `Ok(None)` when
/// the file has neither key (or only `snapshot: false`).
pub fn read(
    doc: &Document,
    scenario: &Scenario,
    load_baseline: &dyn Fn(&Path) -> Result<Scenario, ConfigError>,
) -> Result<Option<Expectations>, ConfigError> {
    // Only the file itself, never what it extends.
    let own_text = doc.files.first().map(|f| f.text.as_str()).unwrap_or("");
    let own = Document::from_text(doc.path(), own_text)?;
    let keys: TestKeysRaw = crate::config::deserialize(&own)?;
    let mut problems = Vec::new();
    let snapshot = match keys.snapshot {
        None | Some(SnapshotRaw::Flag(false)) => None,
        Some(SnapshotRaw::Flag(true)) => Some(snapshot::Settings::default()),
        Some(SnapshotRaw::Options(o)) => {
            let digits = o.digits.unwrap_or(snapshot::DEFAULT_DIGITS);
            if !(1..=17).contains(&digits) {
                problems.push(own.diagnostic(
                    "snapshot.digits",
                    format!("must be from 1 to 17 significant digits, not {digits}"),
                ));
            }
            Some(snapshot::Settings { digits })
        }
    };
    let known = metric_columns(scenario);
    let folder = doc.path().parent().unwrap_or(Path::new("."));
    let mut assertions = Vec::new();
    for (i, a) in keys.expect.unwrap_or_default().into_iter().enumerate() {
        let checker = Checker {
            doc: &own,
            at: format!("expect[{i}]"),
            problems: &mut problems,
        };
        if let Some(a) = checker.assertion(i, a, &known, folder, load_baseline) {
            assertions.push(a);
        }
    }
    if !problems.is_empty() {
        return Err(ConfigError {
            diagnostics: problems,
        });
    }
    if assertions.is_empty() && snapshot.is_none() {
        return Ok(None);
    }
    Ok(Some(Expectations {
        assertions,
        snapshot,
    }))
}

struct Checker<'a> {
    doc: &'a Document,
    /// `expect[i]`.
    at: String,
    problems: &'a mut Vec<Diagnostic>,
}

impl Checker<'_> {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        let key = if key.is_empty() {
            self.at.clone()
        } else {
            format!("{}.{key}", self.at)
        };
        self.problems.push(self.doc.diagnostic(&key, message));
    }

    fn finite(&mut self, key: &str, x: f64) -> f64 {
        if !x.is_finite() {
            self.problem(key, format!("must be a finite number, not {x}"));
        }
        x
    }

    fn assertion(
        mut self,
        index: usize,
        a: AssertionRaw,
        known: &[String],
        folder: &Path,
        load_baseline: &dyn Fn(&Path) -> Result<Scenario, ConfigError>,
    ) -> Option<Assertion> {
        let before = self.problems.len();
        let mut ops = Vec::new();
        for (key, v) in [
            ("le", a.le),
            ("lt", a.lt),
            ("ge", a.ge),
            ("gt", a.gt),
            ("eq", a.eq),
        ] {
            if let Some(v) = v {
                let v = self.finite(key, v);
                ops.push((
                    key,
                    match key {
                        "le" => Relation::Le(v),
                        "lt" => Relation::Lt(v),
                        "ge" => Relation::Ge(v),
                        "gt" => Relation::Gt(v),
                        _ => Relation::Eq(v),
                    },
                ));
            }
        }
        if let Some([lo, hi]) = a.between {
            let (lo, hi) = (self.finite("between", lo), self.finite("between", hi));
            if lo > hi {
                self.problem(
                    "between",
                    format!(
                        "`[{}, {}]` is empty; write the smaller bound first",
                        show(lo),
                        show(hi)
                    ),
                );
            }
            ops.push(("between", Relation::Between(lo, hi)));
        }
        if let Some(IsRaw::Never) = a.is {
            ops.push(("is", Relation::Never));
        }
        let comparison = match ops.as_slice() {
            [] => {
                self.problem(
                    "",
                    "has no comparison; add one of `le`, `lt`, `ge`, `gt`, `eq`, `between` or `is: never`",
                );
                Relation::Never
            }
            [(_, c)] => *c,
            [(k1, _), (k2, _), ..] => {
                self.problem(
                    k2,
                    format!(
                        "`{k1}` and `{k2}` in one assertion; write one comparison each (`between: [a, b]` for a range)"
                    ),
                );
                ops[0].1
            }
        };

        // The metric: a model metric of this scenario (engine costs depend on the machine).
        let metric = a.metric;
        if metric.starts_with("engine.") {
            self.problem(
                "metric",
                format!(
                    "`{metric}` is what the run cost, not what the model did; assert on `metrics.*`, `services.*` or `calls.*`"
                ),
            );
        } else if !known.contains(&metric) {
            self.problem(
                "metric",
                format!(
                    "unknown metric `{}`{}; a metric is a dotted path into the run JSON, like `metrics.recovery_s` or `services.{}.max_queue`",
                    crate::config::suggest::shorten(&metric),
                    did_you_mean(&metric, known.iter().map(String::as_str)),
                    known
                        .iter()
                        .find_map(|k| k.strip_prefix("services.").and_then(|r| r.split('.').next()))
                        .unwrap_or("svc")
                ),
            );
        }
        if comparison == Relation::Never && metric != RECOVERY && !ops.is_empty() {
            self.problem(
                "is",
                format!("`is: never` is for `{RECOVERY}` (a run that never recovers)"),
            );
        }

        // Seeds and how to read them.
        let seeds = match a.seeds {
            None => None,
            Some(SeedsRaw::Count(n)) => {
                if n == 0 || n as usize > MAX_SEEDS {
                    self.problem(
                        "seeds",
                        format!("must be from 1 to {MAX_SEEDS} seeds, not {n}"),
                    );
                }
                Some((1..=n.min(MAX_SEEDS as u64)).collect::<Vec<u64>>())
            }
            Some(SeedsRaw::List(list)) => {
                if list.is_empty() || list.len() > MAX_SEEDS {
                    self.problem("seeds", format!("must list from 1 to {MAX_SEEDS} seeds"));
                }
                let mut seen = HashSet::new();
                if let Some(d) = list.iter().find(|s| !seen.insert(**s)) {
                    self.problem("seeds", format!("lists seed {d} twice"));
                }
                Some(list)
            }
        };
        let mean = a.mean.unwrap_or(false);
        let reading = match (a.share, mean) {
            (Some(_), true) => {
                self.problem(
                    "mean",
                    "`share` and `mean` are two readings of many seeds; keep one",
                );
                Reading::Every
            }
            (Some(s), false) => {
                if !(s > 0.0 && s <= 1.0) {
                    self.problem(
                        "share",
                        format!(
                            "must be in (0, 1], the share of seeds on which the assertion holds (like `0.95`), not {s}"
                        ),
                    );
                }
                Reading::Share(s)
            }
            (None, true) => Reading::Mean,
            (None, false) => Reading::Every,
        };
        if reading != Reading::Every && seeds.is_none() {
            let key = if mean { "mean" } else { "share" };
            self.problem(
                key,
                format!("`{key}` reads many seeds; add `seeds: N` (seeds 1 to N) or a list"),
            );
        }
        if comparison == Relation::Never && reading == Reading::Mean {
            self.problem(
                "is",
                "`is: never` has no mean; use `share` instead of `mean`",
            );
        }

        // The baseline, run on the same seeds.
        let baseline = match a.compare {
            None => None,
            Some(c) => {
                if comparison == Relation::Never {
                    self.problem(
                        "compare",
                        "`is: never` has no difference to a baseline; compare a number instead",
                    );
                }
                let path = folder.join(&c.baseline);
                match load_baseline(&path) {
                    Ok(sc) => {
                        if !metric.starts_with("engine.") && !metric_columns(&sc).contains(&metric)
                        {
                            self.problem(
                                "compare.baseline",
                                format!(
                                    "`{}` has no metric `{metric}` to compare with",
                                    c.baseline
                                ),
                            );
                        }
                        Some(Baseline {
                            written: c.baseline,
                            path,
                            scenario: sc,
                        })
                    }
                    Err(e) => {
                        let first = e.diagnostics.first().map(|d| d.to_string());
                        self.problem(
                            "compare.baseline",
                            format!(
                                "cannot load the baseline `{}`: {}",
                                c.baseline,
                                first.unwrap_or_default()
                            ),
                        );
                        None
                    }
                }
            }
        };
        (self.problems.len() == before).then_some(Assertion {
            index,
            metric,
            comparison,
            seeds,
            reading,
            baseline,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assertion(comparison: Relation, seeds: Option<Vec<u64>>, reading: Reading) -> Assertion {
        Assertion {
            index: 0,
            metric: "metrics.recovery_s".into(),
            comparison,
            seeds,
            reading,
            baseline: None,
        }
    }

    #[test]
    fn each_operator_on_both_sides_of_its_bound() {
        use Relation::*;
        let cases = [
            (Le(5.0), Some(5.0), true),
            (Le(5.0), Some(5.0001), false),
            (Lt(5.0), Some(4.9999), true),
            (Lt(5.0), Some(5.0), false),
            (Ge(0.99), Some(0.99), true),
            (Ge(0.99), Some(0.9899), false),
            (Gt(0.0), Some(0.001), true),
            (Gt(0.0), Some(0.0), false),
            (Eq(120.0), Some(120.0), true),
            (Eq(120.0), Some(121.0), false),
            (Between(1.0, 2.0), Some(1.0), true),
            (Between(1.0, 2.0), Some(2.0), true),
            (Between(1.0, 2.0), Some(2.5), false),
            (Between(1.0, 2.0), Some(0.5), false),
            (Never, None, true),
            (Never, Some(3.0), false),
            // An undefined value passes no numeric comparison.
            (Le(5.0), None, false),
            (Ge(0.0), None, false),
        ];
        for (c, v, want) in cases {
            assert_eq!(c.holds(v), want, "{} on {v:?}", c.describe());
        }
    }

    #[test]
    fn share_counts_seeds_and_rounds_the_needed_number_up() {
        assert_eq!(needed_seeds(0.95, 20), 19);
        assert_eq!(needed_seeds(0.9, 10), 9);
        assert_eq!(needed_seeds(0.5, 3), 2);
        assert_eq!(needed_seeds(1.0, 7), 7);
        assert_eq!(needed_seeds(0.01, 7), 1);
        let a = assertion(
            Relation::Le(5.0),
            Some(vec![1, 2, 3, 4]),
            Reading::Share(0.75),
        );
        // 3 of 4 hold: passes at 0.75.
        let v = a.judge(vec![
            (1, Some(1.0)),
            (2, Some(6.0)),
            (3, Some(5.0)),
            (4, Some(2.0)),
        ]);
        assert!(v.passed, "{}", v.observed);
        assert!(
            v.observed.starts_with("holds on 3 of 4 seeds (needs 3)"),
            "{}",
            v.observed
        );
        assert!(v.observed.contains("seed 2: 6"), "{}", v.observed);
        // 2 of 4 (a never counts as not holding): fails.
        let v = a.judge(vec![
            (1, Some(1.0)),
            (2, Some(6.0)),
            (3, None),
            (4, Some(2.0)),
        ]);
        assert!(!v.passed);
        assert!(v.observed.contains("seed 3: never"), "{}", v.observed);
        // Every seed, by default.
        let every = assertion(Relation::Le(5.0), Some(vec![1, 2]), Reading::Every);
        assert!(!every.judge(vec![(1, Some(1.0)), (2, Some(5.5))]).passed);
        assert!(every.judge(vec![(1, Some(1.0)), (2, Some(5.0))]).passed);
    }

    #[test]
    fn mean_reads_the_mean_and_shows_its_interval() {
        let a = assertion(Relation::Le(2.5), Some(vec![1, 2, 3]), Reading::Mean);
        // Mean 2 ≤ 2.5 although seed 3 alone (3) is above; interval ±2.4841 (t(2) = 4.3027).
        let v = a.judge(vec![(1, Some(1.0)), (2, Some(2.0)), (3, Some(3.0))]);
        assert!(v.passed);
        assert_eq!(v.mean.unwrap().mean, 2.0);
        assert_eq!(
            v.observed,
            "mean 2 ± 2.48414 (95 % CI [-0.484138, 4.48414], n = 3)"
        );
        let v = a.judge(vec![(1, Some(2.0)), (2, Some(3.0)), (3, Some(4.0))]);
        assert!(!v.passed, "mean 3 > 2.5");
        // A seed without a value has no mean: the assertion fails and says which seed.
        let v = a.judge(vec![(1, Some(1.0)), (2, None), (3, Some(3.0))]);
        assert!(!v.passed);
        assert!(v.observed.contains("seed(s) 2"), "{}", v.observed);
    }

    #[test]
    fn single_seed_shows_the_value() {
        let a = assertion(Relation::Never, None, Reading::Every);
        let v = a.judge(vec![(7, None)]);
        assert!(v.passed);
        assert_eq!(v.observed, "never (no value)");
        let v = a.judge(vec![(7, Some(4.0))]);
        assert!(!v.passed);
        assert_eq!(v.observed, "4");
    }

    #[test]
    fn names_say_seeds_reading_and_baseline() {
        let a = assertion(
            Relation::Le(5.0),
            Some((1..=20).collect()),
            Reading::Share(0.95),
        );
        assert_eq!(
            a.name(),
            "expect[0]: metrics.recovery_s le 5 (seeds 1..20, share 0.95)"
        );
        assert_eq!(seed_list(&[3, 5, 9]), "3, 5, 9");
        assert!(mentions_test_keys("a: 1\nexpect:\n  - metric: x\n"));
        assert!(!mentions_test_keys("a: 1\n  expect: 2\n"));
    }
}
