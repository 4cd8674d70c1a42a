//! The tuner's search: which settings of 1–4 scenario keys meet every requirement under every
//! fault of a fault set on enough seeds, and which of those is cheapest in healthy load. Owns the
//! requirements (`METRIC OP NUMBER`, judged with [`crate::expect::Relation`]), the candidate
//! grid (linear, or logarithmic where a range spans a decade or more), the search itself, the
//! ranking and the Pareto front — as pure functions over an `evaluate` callback (a batch of
//! candidates → their results), so the same code drives simulations and hand-made predicates in
//! tests. Running, journaling and rendering live in `commands::tune`.
//!
//! The search: a coarse grid of `steps` values per key (every combination), then `rounds`
//! refinements around the incumbent (the best feasible candidate, or the closest one when none is
//! feasible): each round tries the incumbent's neighbours at half the previous spacing on every
//! key (all 3^d combinations), so the incumbent walks to the feasible boundary when the objective
//! pushes against feasibility (the usual case: a tighter protection is cheaper in healthy load and
//! fails under faults). Whole-number keys step by at least 1, and go on stepping by 1 for up to
//! [`EXTRA_ROUNDS`] more rounds while the incumbent still moves, so on them the search ends on the
//! exact boundary. Every candidate runs on the same seeds (common random numbers), so two
//! candidates differ only by their settings.

use crate::analysis::boundary::{Kind, SearchAxis, median_outcome};
use crate::expect::Relation;

/// The requirements used when `--require` is not given.
pub const DEFAULT_REQUIREMENTS: [&str; 2] = [
    "metrics.recovery_s <= 5",
    "metrics.success_rate_before >= 0.999",
];
/// The objective used when `--objective` is not given: p99 latency of successes.
pub const DEFAULT_OBJECTIVE: &str = "metrics.success_latency_p99_s";
/// The metric whose worst value over the faults is the Pareto table's second column.
pub const RECOVERY: &str = "metrics.recovery_s";
/// A range whose HIGH is at least this many times its LOW (LOW > 0) is searched on a log scale.
pub const LOG_RATIO: f64 = 10.0;

/// One requirement: a metric of a faulted run and a comparison, like `metrics.recovery_s <= 5`.
#[derive(Clone, Debug, PartialEq)]
pub struct Requirement {
    pub metric: String,
    pub comparison: Relation,
}

impl Requirement {
    /// Parses `METRIC OP NUMBER` with OP one of `<=`, `<`, `>=`, `>`, `==`, or `METRIC is never`.
    pub fn parse(text: &str) -> Result<Requirement, String> {
        let t = text.trim();
        if let Some(metric) = t.strip_suffix("is never") {
            let metric = metric.trim();
            if !metric.is_empty() && !metric.contains(char::is_whitespace) {
                return Ok(Requirement {
                    metric: metric.to_owned(),
                    comparison: Relation::Never,
                });
            }
        }
        for op in ["<=", ">=", "==", "<", ">"] {
            if let Some((metric, bound)) = t.split_once(op) {
                let metric = metric.trim();
                let b = bound.trim();
                let value: f64 = b.parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| {
                    format!("`{b}` is not a number; write a requirement like `metrics.recovery_s <= 5`")
                })?;
                if metric.is_empty() || metric.contains(char::is_whitespace) {
                    break;
                }
                let comparison = match op {
                    "<=" => Relation::Le(value),
                    ">=" => Relation::Ge(value),
                    "==" => Relation::Eq(value),
                    "<" => Relation::Lt(value),
                    _ => Relation::Gt(value),
                };
                return Ok(Requirement {
                    metric: metric.to_owned(),
                    comparison,
                });
            }
        }
        Err(format!(
            "`{t}` is not a requirement; write METRIC OP NUMBER with OP one of <=, <, >=, >, ==, like `metrics.recovery_s <= 5`, or `METRIC is never`"
        ))
    }

    /// As typed: `metrics.recovery_s <= 5`.
    pub fn describe(&self) -> String {
        let b = |x: f64| crate::report::number::trimmed(x, 6);
        let rhs = match self.comparison {
            Relation::Le(x) => format!("<= {}", b(x)),
            Relation::Lt(x) => format!("< {}", b(x)),
            Relation::Ge(x) => format!(">= {}", b(x)),
            Relation::Gt(x) => format!("> {}", b(x)),
            Relation::Eq(x) | Relation::Between(x, _) => format!("== {}", b(x)),
            Relation::Never => "is never".to_owned(),
        };
        format!("{} {rhs}", self.metric)
    }
}

/// A searched key: its range and its scale.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneAxis {
    pub axis: SearchAxis,
    /// Searched on a log scale (the range spans at least a decade, LOW > 0).
    pub log: bool,
}

impl TuneAxis {
    /// The key's scale, read from its range.
    pub fn new(axis: SearchAxis) -> TuneAxis {
        let log = axis.low > 0.0 && axis.high / axis.low >= LOG_RATIO;
        TuneAxis { axis, log }
    }

    fn unit_of(&self, v: f64) -> f64 {
        if self.log { v.ln() } else { v }
    }

    /// A value off the scale, clamped to the range and snapped: whole numbers for integers,
    /// three significant digits for numbers and durations (values a person would write).
    fn value_at(&self, u: f64) -> f64 {
        let v = if self.log { u.exp() } else { u };
        let v = match self.axis.kind {
            Kind::Integer => v,
            _ => significant(v, 3),
        };
        self.axis.snap(v.clamp(self.axis.low, self.axis.high))
    }

    /// The coarse grid: `steps` values from LOW to HIGH, evenly spaced on the key's scale
    /// (fewer when snapping to whole numbers merges some).
    pub fn grid(&self, steps: usize) -> Vec<f64> {
        let steps = steps.max(2);
        let (lo, hi) = (self.unit_of(self.axis.low), self.unit_of(self.axis.high));
        let mut out: Vec<f64> = (0..steps)
            .map(|i| {
                let t = i as f64 / (steps - 1) as f64;
                if i + 1 == steps {
                    self.axis.high
                } else if i == 0 {
                    self.axis.low
                } else {
                    self.value_at(lo + t * (hi - lo))
                }
            })
            .collect();
        out.dedup();
        out
    }

    /// The coarse grid's spacing on the key's scale.
    fn spacing(&self, steps: usize) -> f64 {
        (self.unit_of(self.axis.high) - self.unit_of(self.axis.low)) / (steps.max(2) - 1) as f64
    }

    /// `v` and its neighbours at `h` on the key's scale (a whole-number key moves by at least 1).
    fn around(&self, v: f64, h: f64) -> Vec<f64> {
        let u = self.unit_of(v);
        let mut below = self.value_at(u - h);
        let mut above = self.value_at(u + h);
        if self.axis.kind == Kind::Integer {
            if below == v {
                below = (v - 1.0).max(self.axis.low);
            }
            if above == v {
                above = (v + 1.0).min(self.axis.high);
            }
        }
        let mut out = vec![below, v, above];
        out.dedup();
        out
    }
}

/// Rounds after `rounds` in which whole-number keys go on stepping by 1 while the incumbent
/// still moves, so the search ends on the exact boundary of a whole-number key.
pub const EXTRA_ROUNDS: usize = 16;

/// `v` rounded to `digits` significant digits.
fn significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// What one candidate did.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    /// One value per key, in `--vary` order.
    pub values: Vec<f64>,
    /// The search round that tried it (0: the coarse grid).
    pub round: usize,
    /// The objective's mean over the seeds in healthy load (`None` when undefined on a seed).
    pub objective: Option<f64>,
    /// `failing[f][r]`: seeds on which requirement `r` fails under fault `f`.
    pub failing: Vec<Vec<usize>>,
    /// `recovery[f]`: the median recovery time over the seeds under fault `f` (`None`: never,
    /// the median seed does not recover).
    pub recovery: Vec<Option<f64>>,
}

impl Scored {
    /// Meets every requirement under every fault on at least `needed` of `seeds` seeds.
    pub fn feasible(&self, seeds: usize, needed: usize) -> bool {
        self.failing.iter().flatten().all(|&n| seeds - n >= needed)
    }

    /// Whether it meets every requirement under fault `f`.
    pub fn feasible_under(&self, f: usize, seeds: usize, needed: usize) -> bool {
        self.failing[f].iter().all(|&n| seeds - n >= needed)
    }

    /// The worst fault's recovery time (`None`: never under some fault).
    pub fn worst_recovery(&self) -> Option<f64> {
        self.recovery
            .iter()
            .try_fold(0.0f64, |w, r| r.map(|r| w.max(r)))
    }

    /// Seeds failing summed over every fault and requirement: how far from feasible it is.
    pub fn shortfall(&self, seeds: usize, needed: usize) -> usize {
        self.failing
            .iter()
            .flatten()
            .map(|&n| (n + needed).saturating_sub(seeds))
            .sum()
    }
}

/// The median of per-seed recovery times with never counted as longest (as in `boundary`).
pub fn median_recovery(per_seed: &[Option<f64>]) -> Option<f64> {
    median_outcome(per_seed)
}

/// The search's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    /// Coarse grid values per key.
    pub steps: usize,
    /// Refinement rounds after the grid.
    pub rounds: usize,
    /// Seeds per candidate.
    pub seeds: usize,
    /// Seeds on which a requirement must hold.
    pub needed: usize,
}

/// What the search found: every candidate tried, in the order tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned {
    pub tried: Vec<Scored>,
    /// The best feasible candidate (index into `tried`).
    pub best: Option<usize>,
    /// With no feasible candidate: the one with the smallest shortfall.
    pub closest: Option<usize>,
}

/// `a` ranks before `b`: lower objective (undefined last); on a tie (keys that cost nothing in
/// healthy load often tie exactly), the faster worst-fault recovery (never last), so the pick is
/// on the Pareto front; then smaller values in key order.
fn better(a: &Scored, b: &Scored) -> bool {
    let o = |s: &Scored| s.objective.unwrap_or(f64::INFINITY);
    let r = |s: &Scored| s.worst_recovery().unwrap_or(f64::INFINITY);
    match o(a).total_cmp(&o(b)).then(r(a).total_cmp(&r(b))) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => a
            .values
            .iter()
            .zip(&b.values)
            .map(|(x, y)| x.total_cmp(y))
            .find(|c| c.is_ne())
            .is_some_and(|c| c.is_lt()),
    }
}

/// The best feasible candidate and, failing that, the closest.
fn incumbents(tried: &[Scored], s: &Search) -> (Option<usize>, Option<usize>) {
    let mut best: Option<usize> = None;
    let mut closest: Option<usize> = None;
    for (i, c) in tried.iter().enumerate() {
        if c.feasible(s.seeds, s.needed) {
            if best.is_none_or(|b| better(c, &tried[b])) {
                best = Some(i);
            }
        } else {
            let key = |x: &Scored| x.shortfall(s.seeds, s.needed);
            if closest.is_none_or(|b| {
                let (kc, kb) = (key(c), key(&tried[b]));
                kc < kb || (kc == kb && better(c, &tried[b]))
            }) {
                closest = Some(i);
            }
        }
    }
    (best, if best.is_some() { None } else { closest })
}

fn product(per_axis: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = vec![Vec::new()];
    for values in per_axis {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |&v| {
                    let mut p = prefix.clone();
                    p.push(v);
                    p
                })
            })
            .collect();
    }
    out
}

/// Candidates of the coarse grid, first key slowest.
pub fn coarse_grid(axes: &[TuneAxis], steps: usize) -> Vec<Vec<f64>> {
    let grids: Vec<Vec<f64>> = axes.iter().map(|a| a.grid(steps)).collect();
    product(&grids)
}

/// Runs the search: the coarse grid as one batch, then each refinement round as one batch.
/// `evaluate` gets candidates (one value per key) and returns their results in the same order
/// (their `round` is set here).
pub fn search<E>(
    axes: &[TuneAxis],
    s: &Search,
    evaluate: &mut impl FnMut(&[Vec<f64>]) -> Result<Vec<Scored>, E>,
) -> Result<Tuned, E> {
    let mut tried: Vec<Scored> = Vec::new();
    let batch = coarse_grid(axes, s.steps);
    for mut c in evaluate(&batch)? {
        c.round = 0;
        tried.push(c);
    }
    let spacing: Vec<f64> = axes.iter().map(|a| a.spacing(s.steps)).collect();
    let mut last_centre: Option<Vec<f64>> = None;
    for round in 1..=s.rounds + EXTRA_ROUNDS {
        let (best, closest) = incumbents(&tried, s);
        let Some(at) = best.or(closest) else { break };
        let centre = tried[at].values.clone();
        let extra = round > s.rounds;
        if extra && last_centre.as_ref() == Some(&centre) {
            break;
        }
        last_centre = Some(centre.clone());
        let h = 0.5f64.powi(round.min(60) as i32);
        let per_axis: Vec<Vec<f64>> = axes
            .iter()
            .zip(&centre)
            .zip(&spacing)
            .map(|((a, &v), &sp)| {
                if extra && a.axis.kind != Kind::Integer {
                    vec![v]
                } else {
                    a.around(v, sp * h)
                }
            })
            .collect();
        let batch: Vec<Vec<f64>> = product(&per_axis)
            .into_iter()
            .filter(|c| !tried.iter().any(|t| &t.values == c))
            .collect();
        if batch.is_empty() {
            continue;
        }
        for mut c in evaluate(&batch)? {
            c.round = round;
            tried.push(c);
        }
    }
    let (best, closest) = incumbents(&tried, s);
    Ok(Tuned {
        tried,
        best,
        closest,
    })
}

/// The candidates on the Pareto front of (objective, worst fault's recovery), both lower better
/// (undefined counts as worst), sorted by objective; ties keep the first tried.
pub fn pareto(tried: &[Scored]) -> Vec<usize> {
    let key = |s: &Scored| {
        (
            s.objective.unwrap_or(f64::INFINITY),
            s.worst_recovery().unwrap_or(f64::INFINITY),
        )
    };
    let mut front: Vec<usize> = (0..tried.len())
        .filter(|&i| {
            let (oi, ri) = key(&tried[i]);
            !tried.iter().enumerate().any(|(j, t)| {
                let (oj, rj) = key(t);
                j != i && oj <= oi && rj <= ri && (oj < oi || rj < ri || j < i)
            })
        })
        .collect();
    front.sort_by(|&a, &b| key(&tried[a]).0.total_cmp(&key(&tried[b]).0));
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(key: &str, range: &str) -> TuneAxis {
        let (lo, hi) = range.split_once("..").unwrap();
        TuneAxis::new(SearchAxis::parse(key, &format!("{lo}..{hi}")).unwrap())
    }

    #[test]
    fn requirements_parse_and_read_back() {
        let r = Requirement::parse("metrics.recovery_s <= 5").unwrap();
        assert_eq!(r.metric, "metrics.recovery_s");
        assert_eq!(r.comparison, Relation::Le(5.0));
        assert_eq!(r.describe(), "metrics.recovery_s <= 5");
        let r = Requirement::parse("metrics.success_rate_before>=0.999").unwrap();
        assert_eq!(r.comparison, Relation::Ge(0.999));
        assert_eq!(
            Requirement::parse("metrics.recovery_s is never")
                .unwrap()
                .comparison,
            Relation::Never
        );
        assert_eq!(
            Requirement::parse("a < 1").unwrap().comparison,
            Relation::Lt(1.0)
        );
        assert!(Requirement::parse("metrics.recovery_s <= soon").is_err());
        assert!(Requirement::parse("metrics.recovery_s").is_err());
        assert!(Requirement::parse("<= 5").is_err());
    }

    #[test]
    fn a_range_over_a_decade_is_searched_on_a_log_scale() {
        let a = axis("k", "1..100");
        assert!(a.log);
        assert_eq!(a.grid(3), vec![1.0, 10.0, 100.0]);
        let r = axis("k", "0.01..1");
        assert!(r.log);
        assert_eq!(r.grid(3), vec![0.01, 0.1, 1.0]);
        assert_eq!(r.grid(5)[1], 0.0316, "three significant digits");
        let lin = axis("k", "0..40");
        assert!(!lin.log, "LOW = 0 cannot be on a log scale");
        assert_eq!(lin.grid(5), vec![0.0, 10.0, 20.0, 30.0, 40.0]);
        let d = axis("t", "100ms..2s");
        assert!(d.log);
        assert_eq!(d.grid(2), vec![0.1, 2.0]);
    }

    /// Feasible iff `cap <= k` (independent of `other`); the objective falls as `cap` grows.
    fn by_construction(k: f64) -> impl FnMut(&[Vec<f64>]) -> Result<Vec<Scored>, ()> {
        move |batch: &[Vec<f64>]| {
            Ok(batch
                .iter()
                .map(|c| {
                    let fails = if c[0] <= k { 0 } else { 3 };
                    Scored {
                        values: c.clone(),
                        round: 0,
                        objective: Some(100.0 - c[0] + c[1] / 1000.0),
                        failing: vec![vec![fails, 0], vec![0, 0]],
                        recovery: vec![Some(c[0] / 10.0), Some(0.0)],
                    }
                })
                .collect())
        }
    }

    #[test]
    fn the_search_ends_on_a_boundary_known_by_construction() {
        let axes = [axis("cap", "1..40"), axis("other", "0..8")];
        let s = Search {
            steps: 5,
            rounds: 3,
            seeds: 3,
            needed: 3,
        };
        for k in [7.0, 10.0, 23.0, 39.0] {
            let t = search(&axes, &s, &mut by_construction(k)).unwrap();
            let best = &t.tried[t.best.expect("feasible")];
            assert_eq!(best.values, vec![k, 0.0], "k = {k}");
            // Every feasible candidate has cap ≤ k, and every infeasible one cap > k.
            for c in &t.tried {
                assert_eq!(c.feasible(3, 3), c.values[0] <= k, "{:?}", c.values);
            }
        }
    }

    #[test]
    fn with_no_feasible_candidate_the_closest_is_named() {
        let axes = [axis("cap", "1..40"), axis("other", "0..8")];
        let s = Search {
            steps: 3,
            rounds: 2,
            seeds: 3,
            needed: 3,
        };
        let t = search(&axes, &s, &mut |batch: &[Vec<f64>]| {
            Ok::<_, ()>(
                batch
                    .iter()
                    .map(|c| Scored {
                        values: c.clone(),
                        round: 0,
                        objective: Some(c[0]),
                        // Fewer seeds fail as `other` grows; never none.
                        failing: vec![vec![if c[1] >= 8.0 { 1 } else { 3 }]],
                        recovery: vec![None],
                    })
                    .collect(),
            )
        })
        .unwrap();
        assert_eq!(t.best, None);
        assert_eq!(t.tried[t.closest.unwrap()].values, vec![1.0, 8.0]);
    }

    #[test]
    fn the_front_keeps_only_undominated_candidates() {
        let mk = |o: f64, r: Option<f64>| Scored {
            values: vec![o],
            round: 0,
            objective: Some(o),
            failing: vec![],
            recovery: vec![r],
        };
        let tried = [
            mk(3.0, Some(1.0)),
            mk(1.0, Some(5.0)),
            mk(2.0, Some(5.0)),
            mk(4.0, Some(0.5)),
            mk(0.5, None),
        ];
        assert_eq!(pareto(&tried), vec![4, 1, 0, 3]);
    }
}
