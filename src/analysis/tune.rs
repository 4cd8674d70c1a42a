//! The tuner's search: which settings of 1–4 scenario keys meet every requirement under every
//! fault of a fault set on enough seeds, and which of those is cheapest in healthy load (or under
//! a named fault). Owns the requirements (`[FAULT:] METRIC OP NUMBER`, judged with [`crate::expect::Relation`]), the candidate
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
//! [`EXTRA_ROUNDS`] more rounds while a neighbour at ±1 of the incumbent is untried, so on them
//! the search ends on the exact boundary or optimum. Every candidate runs on the same seeds
//! (common random numbers), so two candidates differ only by their settings.
//!
//! The recommendation is not simply the lowest objective: the feasible candidates whose objective
//! lies within the noise of the best's form a tie group ([`ties_with`]: a relative tolerance, or
//! the 95 % interval of the per-seed differences containing 0), and among them the one deepest
//! inside the feasible region is recommended ([`margin`]). [`edge_findings`] says where the
//! answer touches the edge of a range ("widen"). [`search`] takes the candidates' evaluation as a
//! callback, so another command can reuse the search, the ties and the margins with its own
//! runs and journal.

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

/// One requirement: a metric of a faulted run and a comparison, like `metrics.recovery_s <= 5`,
/// judged under every fault of the set, or only under the fault it names
/// (`outage_10s: metrics.success_rate_after >= 0.99`).
#[derive(Clone, Debug, PartialEq)]
pub struct Requirement {
    /// The fault it is scoped to; `None`: every fault.
    pub fault: Option<String>,
    /// The metric's key path in the run summary (`metrics.recovery_s`).
    pub metric: String,
    /// What its value must satisfy.
    pub comparison: Relation,
}

/// Splits `FAULT: REST` into the scope and the rest; no scope when there is no `:` (metrics
/// never hold one).
pub fn split_scope(text: &str) -> Result<(Option<&str>, &str), String> {
    match text.split_once(':') {
        None => Ok((None, text.trim())),
        Some((scope, rest)) => {
            let scope = scope.trim();
            if scope.is_empty() || scope.contains(char::is_whitespace) {
                Err(format!(
                    "`{}` is not a fault's name; scope with the name of a fault of the set, like `outage_10s: metrics.recovery_s <= 5`",
                    scope
                ))
            } else {
                Ok((Some(scope), rest.trim()))
            }
        }
    }
}

impl Requirement {
    /// Parses `[FAULT:] METRIC OP NUMBER` with OP one of `<=`, `<`, `>=`, `>`, `==`, or
    /// `[FAULT:] METRIC is never`.
    pub fn parse(text: &str) -> Result<Requirement, String> {
        let (fault, t) = split_scope(text)?;
        let fault = fault.map(str::to_owned);
        if let Some(metric) = t.strip_suffix("is never") {
            let metric = metric.trim();
            if !metric.is_empty() && !metric.contains(char::is_whitespace) {
                return Ok(Requirement {
                    fault,
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
                    fault,
                    metric: metric.to_owned(),
                    comparison,
                });
            }
        }
        Err(format!(
            "`{t}` is not a requirement; write [FAULT:] METRIC OP NUMBER with OP one of <=, <, >=, >, ==, like `metrics.recovery_s <= 5` or `outage_10s: metrics.success_rate_after >= 0.99`, or `METRIC is never`"
        ))
    }

    /// Whether it is judged under the fault named `fault`.
    pub fn applies_to(&self, fault: &str) -> bool {
        self.fault.as_deref().is_none_or(|f| f == fault)
    }

    /// As typed: `metrics.recovery_s <= 5`, `outage_10s: metrics.recovery_s <= 5`.
    pub fn describe(&self) -> String {
        let b = |x: f64| crate::util::number::trimmed(x, 6);
        let rhs = match self.comparison {
            Relation::Le(x) => format!("<= {}", b(x)),
            Relation::Lt(x) => format!("< {}", b(x)),
            Relation::Ge(x) => format!(">= {}", b(x)),
            Relation::Gt(x) => format!("> {}", b(x)),
            Relation::Eq(x) | Relation::Between(x, _) => format!("== {}", b(x)),
            Relation::Never => "is never".to_owned(),
        };
        match &self.fault {
            Some(f) => format!("{f}: {} {rhs}", self.metric),
            None => format!("{} {rhs}", self.metric),
        }
    }
}

/// A searched key: its range and its scale.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneAxis {
    /// The key and its range.
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

/// Rounds after `rounds` in which whole-number keys go on stepping by 1 while a neighbour at ±1
/// of the incumbent is untried, so the search ends on the exact boundary of a whole-number key.
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
    /// The objective's mean over the seeds (`None` when undefined on a seed).
    pub objective: Option<f64>,
    /// The objective on each seed, in seed order (empty when undefined on a seed): what the
    /// tie rule compares, seed by seed.
    pub per_seed: Vec<f64>,
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
    /// Relative tolerance of the tie rule: a candidate whose objective is within this share of
    /// the best's ties with it ([`ties_with`]).
    pub tolerance: f64,
}

/// The default of [`Search::tolerance`] (`--tie-tolerance`): 1 %.
pub const DEFAULT_TIE_TOLERANCE: f64 = 0.01;

/// What the search found: every candidate tried, in the order tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuned {
    /// Every candidate with its outcome, in the order tried.
    pub tried: Vec<Scored>,
    /// The feasible candidate with the lowest objective (index into `tried`).
    pub best: Option<usize>,
    /// The feasible candidates that tie with `best` ([`ties_with`]), `best` included, in the
    /// order tried.
    pub ties: Vec<usize>,
    /// The recommendation: among `ties`, the one with the largest [`margin`].
    pub recommended: Option<usize>,
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

/// The most candidates a search of `axes` with `steps` and `rounds` can try, counted without
/// building the grid (a grid of more than [`crate::guard::MAX_CELLS`] points is not allocated),
/// for the run limit checked before any search starts.
pub fn most_candidates(axes: &[TuneAxis], steps: usize, rounds: usize) -> u64 {
    let d = axes.len() as u32;
    let ints = axes.iter().filter(|a| a.axis.kind == Kind::Integer).count() as u32;
    let grid = match (steps as u64).saturating_pow(d) {
        n if n > crate::guard::MAX_CELLS => n,
        _ => coarse_grid(axes, steps).len() as u64,
    };
    grid.saturating_add((rounds as u64).saturating_mul(3u64.pow(d)))
        .saturating_add(EXTRA_ROUNDS as u64 * 3u64.pow(ints))
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
    for round in 1..=s.rounds + EXTRA_ROUNDS {
        let (best, closest) = incumbents(&tried, s);
        let Some(at) = best.or(closest) else { break };
        let centre = tried[at].values.clone();
        let extra = round > s.rounds;
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
            // Past `rounds`, nothing new next to the incumbent: it is a local optimum by ±1.
            if extra {
                break;
            }
            continue;
        }
        for mut c in evaluate(&batch)? {
            c.round = round;
            tried.push(c);
        }
    }
    let (best, closest) = incumbents(&tried, s);
    let ties: Vec<usize> = match best {
        Some(b) => (0..tried.len())
            .filter(|&i| {
                tried[i].feasible(s.seeds, s.needed) && ties_with(&tried[b], &tried[i], s.tolerance)
            })
            .collect(),
        None => Vec::new(),
    };
    let recommended = deepest(axes, &tried, s, &ties);
    Ok(Tuned {
        tried,
        best,
        ties,
        recommended,
        closest,
    })
}

/// Whether candidate `c`'s objective lies within the noise of `best`'s: their means differ by
/// at most `tolerance` × |best's mean|, or — with two seeds or more — the 95 % confidence
/// interval (Student's t, [`crate::stats::mean_ci95`]) of their per-seed differences contains
/// 0. The differences are paired by seed: every candidate runs on the same seeds, so the
/// arrivals' noise cancels and only the settings' effect remains. Undefined objectives tie with
/// each other only.
pub fn ties_with(best: &Scored, c: &Scored, tolerance: f64) -> bool {
    let (b, o) = match (best.objective, c.objective) {
        (Some(b), Some(o)) => (b, o),
        (None, None) => return true,
        _ => return false,
    };
    if (o - b).abs() <= tolerance * b.abs() {
        return true;
    }
    if best.per_seed.len() >= 2 && best.per_seed.len() == c.per_seed.len() {
        let d: Vec<f64> = c
            .per_seed
            .iter()
            .zip(&best.per_seed)
            .map(|(x, y)| x - y)
            .collect();
        if let Some((lo, hi)) = crate::stats::mean_ci95(&d).and_then(|m| m.bounds()) {
            return lo <= 0.0 && 0.0 <= hi;
        }
    }
    false
}

/// Where `v` lies in the key's range on its scale: 0 at LOW, 1 at HIGH.
fn position(a: &TuneAxis, v: f64) -> f64 {
    let (lo, hi) = (a.unit_of(a.axis.low), a.unit_of(a.axis.high));
    if hi > lo {
        ((a.unit_of(v) - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.5
    }
}

/// How deep candidate `i` lies inside the feasible region: the distance, with every key's range
/// scaled to [0, 1] on its own scale (log or linear), to the nearest thing the search does not
/// know to be feasible — a tried candidate that is infeasible, or the edge of a range (what lies
/// past it was not tried). 0 on an edge; at most 0.5 (the middle of every range).
pub fn margin(axes: &[TuneAxis], tried: &[Scored], s: &Search, i: usize) -> f64 {
    let at = |c: &Scored| -> Vec<f64> {
        axes.iter()
            .zip(&c.values)
            .map(|(a, &v)| position(a, v))
            .collect()
    };
    let p = at(&tried[i]);
    let edge = p
        .iter()
        .map(|u| u.min(1.0 - u))
        .fold(f64::INFINITY, f64::min);
    let infeasible = tried
        .iter()
        .filter(|c| !c.feasible(s.seeds, s.needed))
        .map(|c| {
            at(c)
                .iter()
                .zip(&p)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .fold(f64::INFINITY, f64::min);
    edge.min(infeasible)
}

/// The candidate of `ties` deepest inside the feasible region (largest [`margin`]); among equal
/// margins, the better by [`better`] (lower objective, faster worst recovery, smaller values).
fn deepest(axes: &[TuneAxis], tried: &[Scored], s: &Search, ties: &[usize]) -> Option<usize> {
    let mut pick: Option<(usize, f64)> = None;
    for &i in ties {
        let m = margin(axes, tried, s, i);
        let wins = match pick {
            None => true,
            Some((j, mj)) => m > mj || (m == mj && better(&tried[i], &tried[j])),
        };
        if wins {
            pick = Some((i, m));
        }
    }
    pick.map(|(i, _)| i)
}

/// Which end of a key's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    /// At LOW.
    Low,
    /// At HIGH.
    High,
}

/// What touches the edge of a range, so that the answer may lie past it ("widen").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeFinding {
    /// The recommendation has a key at an edge.
    Recommended {
        /// The key's index among the searched axes.
        key: usize,
        /// Which end it is at.
        edge: Edge,
    },
    /// The best objective (when not the recommendation, and strictly below the
    /// recommendation's) has a key at an edge: the objective falls towards it, so the feasible
    /// boundary the search walks to may lie past it. An exactly flat objective says nothing.
    Best {
        /// The key's index among the searched axes.
        key: usize,
        /// Which end it is at.
        edge: Edge,
    },
    /// Every candidate tried is feasible: no boundary was found inside the ranges.
    AllFeasible,
    /// No candidate is feasible and the closest has a key at an edge.
    Closest {
        /// The key's index among the searched axes.
        key: usize,
        /// Which end it is at.
        edge: Edge,
    },
}

fn edges_of(axes: &[TuneAxis], c: &Scored) -> Vec<(usize, Edge)> {
    axes.iter()
        .zip(&c.values)
        .enumerate()
        .filter_map(|(k, (a, &v))| {
            if v <= a.axis.low {
                Some((k, Edge::Low))
            } else if v >= a.axis.high {
                Some((k, Edge::High))
            } else {
                None
            }
        })
        .collect()
}

/// Every way the search's answer touches the edge of a range, in a fixed order: the
/// recommendation's keys, the best objective's, all candidates feasible, the closest's.
pub fn edge_findings(axes: &[TuneAxis], t: &Tuned, s: &Search) -> Vec<EdgeFinding> {
    let mut out = Vec::new();
    if let Some(r) = t.recommended {
        for (key, edge) in edges_of(axes, &t.tried[r]) {
            out.push(EdgeFinding::Recommended { key, edge });
        }
    }
    if let Some(b) = t.best
        && let Some(r) = t.recommended
        && b != r
        && t.tried[b].objective < t.tried[r].objective
    {
        for (key, edge) in edges_of(axes, &t.tried[b]) {
            out.push(EdgeFinding::Best { key, edge });
        }
    }
    if !t.tried.is_empty() && t.tried.iter().all(|c| c.feasible(s.seeds, s.needed)) {
        out.push(EdgeFinding::AllFeasible);
    }
    if let Some(c) = t.closest {
        for (key, edge) in edges_of(axes, &t.tried[c]) {
            out.push(EdgeFinding::Closest { key, edge });
        }
    }
    out
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
        let r = Requirement::parse("outage_10s: metrics.success_rate_after >= 0.99").unwrap();
        assert_eq!(r.fault.as_deref(), Some("outage_10s"));
        assert_eq!(r.metric, "metrics.success_rate_after");
        assert_eq!(r.comparison, Relation::Ge(0.99));
        assert_eq!(
            r.describe(),
            "outage_10s: metrics.success_rate_after >= 0.99"
        );
        assert!(r.applies_to("outage_10s") && !r.applies_to("slow_x2_5s"));
        assert!(
            Requirement::parse("metrics.recovery_s <= 5")
                .unwrap()
                .applies_to("any")
        );
        assert!(Requirement::parse("my outage: metrics.recovery_s <= 5").is_err());
        assert!(Requirement::parse(": metrics.recovery_s <= 5").is_err());
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
                        per_seed: vec![100.0 - c[0] + c[1] / 1000.0; 3],
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
            tolerance: 0.0,
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
            tolerance: 0.0,
        };
        let t = search(&axes, &s, &mut |batch: &[Vec<f64>]| {
            Ok::<_, ()>(
                batch
                    .iter()
                    .map(|c| Scored {
                        values: c.clone(),
                        round: 0,
                        objective: Some(c[0]),
                        per_seed: vec![c[0]; 3],
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
            per_seed: vec![o],
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

    /// A candidate with objective `o` on each seed, feasible unless `fails`.
    fn scored(values: Vec<f64>, per_seed: Vec<f64>, fails: bool) -> Scored {
        let n = per_seed.len();
        Scored {
            values,
            round: 0,
            objective: Some(per_seed.iter().sum::<f64>() / n as f64),
            per_seed,
            failing: vec![vec![if fails { n } else { 0 }]],
            recovery: vec![Some(1.0)],
        }
    }

    #[test]
    fn ties_are_within_the_tolerance_or_the_paired_interval() {
        let best = scored(vec![0.0], vec![10.0, 20.0, 30.0], false);
        // 0.05 above on every seed (0.25 % of the mean): inside a 1 % tolerance, and not a tie
        // without one (the paired differences are all 0.05, so their interval is that point).
        let close = scored(vec![1.0], vec![10.05, 20.05, 30.05], false);
        assert!(ties_with(&best, &close, 0.01));
        assert!(!ties_with(&best, &close, 0.0));
        // 10 % above on average, but the per-seed differences scatter around 0: a tie by noise.
        let noisy = scored(vec![2.0], vec![16.0, 14.0, 36.0], false);
        let d = [6.0, -6.0, 6.0];
        let ci = crate::stats::mean_ci95(&d).unwrap();
        assert!(ci.bounds().unwrap().0 < 0.0, "hand check: {ci:?}");
        assert!(ties_with(&best, &noisy, 0.0));
        // 2 above on every seed (10 % of the mean): no tie.
        let worse = scored(vec![3.0], vec![12.0, 22.0, 32.0], false);
        // 2 above on average but 1, 2, 3 by seed: the interval (2 ± 4.303 · 1/√3) holds 0.
        let spread = scored(vec![4.0], vec![11.0, 22.0, 33.0], false);
        assert!(ties_with(&best, &spread, 0.0));
        assert!(!ties_with(&best, &worse, 0.01));
        // One seed: only the tolerance can make a tie.
        let one = scored(vec![0.0], vec![10.0], false);
        assert!(!ties_with(
            &one,
            &scored(vec![1.0], vec![10.5], false),
            0.01
        ));
        assert!(ties_with(
            &one,
            &scored(vec![1.0], vec![10.05], false),
            0.01
        ));
    }

    #[test]
    fn a_known_interior_optimum_is_found_and_recommended_without_a_warning() {
        // 100 + (x − 17)² on 1..40, every candidate feasible except x ≥ 36: the optimum is
        // x = 17, inside the range and far from the infeasible part.
        let axes = [axis("x", "1..40")];
        let s = Search {
            steps: 5,
            rounds: 3,
            seeds: 2,
            needed: 2,
            tolerance: 0.0,
        };
        let mut eval = |batch: &[Vec<f64>]| -> Result<Vec<Scored>, ()> {
            Ok(batch
                .iter()
                .map(|c| {
                    let o = 100.0 + (c[0] - 17.0).powi(2);
                    scored(c.clone(), vec![o, o], c[0] >= 36.0)
                })
                .collect())
        };
        let t = search(&axes, &s, &mut eval).unwrap();
        assert_eq!(t.tried[t.best.unwrap()].values, vec![17.0]);
        assert_eq!(t.ties, vec![t.best.unwrap()], "exact: nothing else ties");
        assert_eq!(t.recommended, t.best);
        assert_eq!(edge_findings(&axes, &t, &s), vec![]);
        // With a 1 % tolerance, 16 and 18 (101, within 1 % of 100) tie as well: the
        // recommendation is the one of the three farthest from the range's edges and from the
        // infeasible candidates tried.
        let s = Search {
            tolerance: 0.01,
            ..s
        };
        let t = search(&axes, &s, &mut eval).unwrap();
        let mut tied: Vec<f64> = t.ties.iter().map(|&i| t.tried[i].values[0]).collect();
        tied.sort_by(f64::total_cmp);
        assert_eq!(tied, vec![16.0, 17.0, 18.0]);
        // By hand, on the log scale (position(v) = ln v / ln 40): the distance to the nearer
        // edge or to the nearest infeasible candidate tried, whichever is smaller.
        let pos = |v: f64| v.ln() / 40f64.ln();
        let infeasible: Vec<f64> = t
            .tried
            .iter()
            .filter(|c| c.values[0] >= 36.0)
            .map(|c| c.values[0])
            .collect();
        assert!(!infeasible.is_empty());
        let by_hand = |v: f64| {
            infeasible
                .iter()
                .map(|&x| (pos(x) - pos(v)).abs())
                .fold(pos(v).min(1.0 - pos(v)), f64::min)
        };
        for v in [16.0, 17.0, 18.0] {
            let i = t.tried.iter().position(|c| c.values[0] == v).unwrap();
            assert!(
                (margin(&axes, &t.tried, &s, i) - by_hand(v)).abs() < 1e-12,
                "{v}"
            );
        }
        // The log scale's middle is √40 ≈ 6.3, so the deepest of the three is 16.
        let expected = 16.0;
        assert_eq!(t.tried[t.recommended.unwrap()].values, vec![expected]);
        assert_eq!(edge_findings(&axes, &t, &s), vec![]);
    }

    #[test]
    fn on_a_flat_objective_every_feasible_candidate_ties_and_the_pick_has_margin() {
        // The objective does not depend on the keys at all; x ≤ 12 is feasible (y free).
        let axes = [axis("x", "1..40"), axis("y", "0..8")];
        let s = Search {
            steps: 5,
            rounds: 3,
            seeds: 3,
            needed: 3,
            tolerance: 0.01,
        };
        let t = search(&axes, &s, &mut |batch: &[Vec<f64>]| {
            Ok::<_, ()>(
                batch
                    .iter()
                    .map(|c| scored(c.clone(), vec![0.07, 0.07, 0.07], c[0] > 12.0))
                    .collect(),
            )
        })
        .unwrap();
        let feasible: Vec<usize> = (0..t.tried.len())
            .filter(|&i| t.tried[i].feasible(3, 3))
            .collect();
        assert_eq!(
            t.ties, feasible,
            "a flat objective: every feasible candidate ties"
        );
        assert!(feasible.len() > 10);
        let best = &t.tried[t.best.unwrap()];
        assert_eq!(
            best.values,
            vec![1.0, 0.0],
            "the old pick: the lowest corner"
        );
        let pick = &t.tried[t.recommended.unwrap()];
        assert!(
            pick.values[0] > 1.0 && pick.values[0] <= 12.0,
            "{:?}",
            pick.values
        );
        assert!(
            pick.values[1] > 0.0 && pick.values[1] < 8.0,
            "{:?}",
            pick.values
        );
        let r = t.recommended.unwrap();
        for &i in &t.ties {
            assert!(margin(&axes, &t.tried, &s, i) <= margin(&axes, &t.tried, &s, r));
        }
        // The pick touches no edge, and the lowest corner's objective is no lower than the
        // pick's (exactly flat): no "widen".
        assert_eq!(edge_findings(&axes, &t, &s), vec![]);
        // A slope towards the corner too small to leave the tie group: the corner is the best,
        // strictly below the pick, so the objective may fall further past the edges.
        let t = search(&axes, &s, &mut |batch: &[Vec<f64>]| {
            Ok::<_, ()>(
                batch
                    .iter()
                    .map(|c| {
                        let o = 0.07 + 1e-6 * (c[0] + c[1]);
                        scored(c.clone(), vec![o, o, o], c[0] > 12.0)
                    })
                    .collect(),
            )
        })
        .unwrap();
        assert_eq!(t.tried[t.best.unwrap()].values, vec![1.0, 0.0]);
        assert_ne!(t.recommended, t.best);
        assert_eq!(
            edge_findings(&axes, &t, &s),
            vec![
                EdgeFinding::Best {
                    key: 0,
                    edge: Edge::Low
                },
                EdgeFinding::Best {
                    key: 1,
                    edge: Edge::Low
                },
            ]
        );
    }

    #[test]
    fn edges_are_reported_when_everything_is_feasible_or_the_pick_is_on_one() {
        let axes = [axis("x", "0..10")];
        let s = Search {
            steps: 3,
            rounds: 1,
            seeds: 1,
            needed: 1,
            tolerance: 0.0,
        };
        // The objective falls all the way to HIGH and nothing fails.
        let t = search(&axes, &s, &mut |batch: &[Vec<f64>]| {
            Ok::<_, ()>(
                batch
                    .iter()
                    .map(|c| scored(c.clone(), vec![100.0 - c[0]], false))
                    .collect(),
            )
        })
        .unwrap();
        assert_eq!(t.tried[t.recommended.unwrap()].values, vec![10.0]);
        assert_eq!(
            edge_findings(&axes, &t, &s),
            vec![
                EdgeFinding::Recommended {
                    key: 0,
                    edge: Edge::High
                },
                EdgeFinding::AllFeasible
            ]
        );
    }
}
