//! The metastability boundary: the smallest value of one scenario key (the slow window's length,
//! the load, …) at which a run no longer recovers, and the 2-D phase diagram over two keys. Owns
//! the search, as pure functions over a `probe` (value → the run's recovery time, `None` for
//! never), so the same code drives simulations and hand-made predicates in tests.
//!
//! The search, per seed: a scan at `steps` evenly spaced values from LOW to HIGH, then a
//! bisection between the last value that recovers before the first that does not, until the
//! interval is no wider than the tolerance. The scan is what makes the answer honest: bisection
//! alone assumes the criterion flips once, and the scan shows when it does not (a seed that
//! recovers again above a value where it did not is reported as not monotone, and the boundary
//! given is the first flip the scan saw). A flip narrower than the scan spacing can go unseen;
//! the spacing is printed with every result. Seeds are searched independently and their
//! boundaries shown side by side, never averaged into one number.

use crate::config::duration::parse_duration;

/// What a run must do to count as "recovers".
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Criterion {
    /// `recovery_s` is not null: some whole second after the fault window starts three seconds
    /// of ≥ 99 % success before arrivals stop (docs/model.md §3.2, the article's R2).
    Recovers,
}

impl Criterion {
    /// How the criterion reads in reports.
    pub fn describe(self) -> &'static str {
        match self {
            Criterion::Recovers => {
                "recovers (metrics.recovery_s is not null: ≥ 99 % success over 3 s, starting at a whole second after the window, before arrivals stop)"
            }
        }
    }
}

/// How a key's values are written, read from how its range is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `0s..30s`: values in seconds, set with a unit, snapped to whole nanoseconds.
    Duration,
    /// `200..700`: whole numbers.
    Integer,
    /// `0.5..2.5`: any number.
    Real,
}

/// One varied key and its range. Values are `f64` in the key's unit (seconds for durations).
#[derive(Clone, Debug, PartialEq)]
pub struct SearchAxis {
    /// The scenario key varied, as `--set` writes it (`services.b.slots`).
    pub key: String,
    /// How its values are written back: a duration, a whole number or any number.
    pub kind: Kind,
    /// The range's low end (LOW).
    pub low: f64,
    /// The range's high end (HIGH).
    pub high: f64,
}

fn parse_value(text: &str) -> Result<(Kind, f64), String> {
    let t = text.trim();
    if let Ok(i) = t.parse::<i64>() {
        return Ok((Kind::Integer, i as f64));
    }
    if let Ok(x) = t.parse::<f64>()
        && x.is_finite()
    {
        return Ok((Kind::Real, x));
    }
    parse_duration(t)
        .map(|d| (Kind::Duration, d.as_secs_f64()))
        .map_err(|_| format!("`{t}` is neither a number nor a duration with a unit"))
}

impl SearchAxis {
    /// Parses `LOW..HIGH` for `key`: both durations (`0s..30s`), both whole numbers (`200..700`)
    /// or numbers (`0.5..2`), LOW below HIGH.
    pub fn parse(key: &str, range: &str) -> Result<SearchAxis, String> {
        let Some((lo, hi)) = range.split_once("..") else {
            return Err(format!(
                "`{range}` is not a range; write LOW..HIGH, like `0s..30s` or `200..700`"
            ));
        };
        let (klo, low) = parse_value(lo)?;
        let (khi, high) = parse_value(hi)?;
        let kind = match (klo, khi) {
            (Kind::Duration, Kind::Duration) => Kind::Duration,
            (Kind::Integer, Kind::Integer) => Kind::Integer,
            (Kind::Duration, _) | (_, Kind::Duration) => {
                return Err(format!(
                    "`{range}`: write both ends with a unit (`0s..30s`) or both as numbers"
                ));
            }
            _ => Kind::Real,
        };
        if low >= high {
            return Err(format!("`{range}`: LOW must be below HIGH"));
        }
        if key.trim().is_empty() {
            return Err("the key to vary is empty; give a dotted path like `arrivals.rate`".into());
        }
        Ok(SearchAxis {
            key: key.trim().to_owned(),
            kind,
            low,
            high,
        })
    }

    /// The nearest value the key can take.
    pub fn snap(&self, v: f64) -> f64 {
        match self.kind {
            Kind::Duration => (v * 1e9).round() / 1e9,
            Kind::Integer => v.round(),
            Kind::Real => v,
        }
    }

    /// The smallest step between two values.
    pub fn resolution(&self) -> f64 {
        match self.kind {
            Kind::Duration => 1e-9,
            Kind::Integer => 1.0,
            Kind::Real => 0.0,
        }
    }

    /// The `--set` argument that gives the key value `v`, e.g. `faults.slow_b.duration=1500ms`.
    pub fn set_arg(&self, v: f64) -> String {
        format!("{}={}", self.key, self.yaml_value(v))
    }

    fn yaml_value(&self, v: f64) -> String {
        match self.kind {
            Kind::Duration => {
                let ns = (v * 1e9).round() as u64;
                if ns.is_multiple_of(1_000_000) {
                    format!("{}ms", ns / 1_000_000)
                } else {
                    format!("{ns}ns")
                }
            }
            Kind::Integer => format!("{}", v as i64),
            Kind::Real => format!("{v}"),
        }
    }

    /// `v` for people: `1.5s`, `450`.
    pub fn show(&self, v: f64) -> String {
        match self.kind {
            Kind::Duration => crate::analysis::lint::show_secs(v),
            Kind::Integer => format!("{}", v as i64),
            Kind::Real => crate::util::number::trimmed(v, 4),
        }
    }

    /// `v` for CSV: seconds or the number, in full.
    pub fn csv(&self, v: f64) -> String {
        match self.kind {
            Kind::Integer => format!("{}", v as i64),
            _ => format!("{v}"),
        }
    }

    /// `steps` evenly spaced values from LOW to HIGH, both included (fewer for a whole-number
    /// key whose range holds fewer values).
    pub fn grid(&self, steps: usize) -> Vec<f64> {
        let steps = steps.max(2);
        let mut out: Vec<f64> = (0..steps)
            .map(|i| {
                let t = i as f64 / (steps - 1) as f64;
                self.snap(self.low + t * (self.high - self.low))
            })
            .collect();
        out.dedup();
        out
    }

    /// How many values [`SearchAxis::grid`] gives at most for `steps`, without making them (a
    /// whole-number key has no more than its range holds).
    pub fn grid_len(&self, steps: usize) -> u64 {
        let steps = steps.max(2) as u64;
        match self.kind {
            Kind::Integer => steps.min((self.high - self.low) as u64 + 1),
            _ => steps,
        }
    }

    /// Parses a tolerance written like the range's values (`100ms`, `5`).
    pub fn parse_tolerance(&self, text: &str) -> Result<f64, String> {
        let (kind, v) = parse_value(text)?;
        let ok = match self.kind {
            Kind::Duration => kind == Kind::Duration,
            _ => kind != Kind::Duration,
        };
        if !ok || v <= 0.0 {
            return Err(format!(
                "`{text}` is not a positive tolerance in the range's unit (like `{}`)",
                self.show((self.high - self.low) / 100.0)
            ));
        }
        Ok(v)
    }

    /// The default tolerance: a hundredth of the range, at least the resolution.
    pub fn default_tolerance(&self) -> f64 {
        ((self.high - self.low) / 100.0).max(self.resolution())
    }
}

/// One run's answer: its recovery time in seconds, or `None` for never.
pub type ProbeValue = Option<f64>;

/// Where one seed's boundary lies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Found {
    /// Recovers at `recovers`, not at `never`: the boundary lies in `(recovers, never]`.
    Between {
        /// The highest value seen to recover.
        recovers: f64,
        /// The lowest value above it seen not to.
        never: f64,
    },
    /// Does not recover even at LOW.
    AtLow,
    /// Recovers over the whole range.
    AboveHigh,
}

/// One seed's search.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedSearch {
    /// The seed of every run of this search.
    pub seed: u64,
    /// The scan: each value with its outcome, in order.
    pub scan: Vec<(f64, ProbeValue)>,
    /// The bisection's probes, in the order they ran.
    pub bisection: Vec<(f64, ProbeValue)>,
    /// Where the boundary lies for this seed.
    pub found: Found,
    /// Scan values where the seed recovers although it did not at a smaller scan value.
    pub recovers_again_at: Vec<f64>,
}

impl SeedSearch {
    /// Whether the scan saw the criterion flip more than once.
    pub fn monotone(&self) -> bool {
        self.recovers_again_at.is_empty()
    }
}

/// Searches one seed: the scan of `axis.grid(steps)`, then the bisection, one probe at a time.
/// A grid runner probes the scans of many seeds at once and calls [`bisect`] for each.
pub fn search<E>(
    axis: &SearchAxis,
    seed: u64,
    steps: usize,
    tolerance: f64,
    probe: &impl Fn(f64) -> Result<ProbeValue, E>,
) -> Result<SeedSearch, E> {
    let scan = axis
        .grid(steps)
        .into_iter()
        .map(|v| probe(v).map(|o| (v, o)))
        .collect::<Result<Vec<_>, E>>()?;
    bisect(axis, seed, scan, tolerance, probe)
}

/// Most bisection probes one seed's search can take after a scan of `steps` values at
/// `tolerance` (for budgets and progress).
pub fn max_bisections(axis: &SearchAxis, steps: usize, tolerance: f64) -> u64 {
    let spacing = (axis.high - axis.low) / (steps.max(2) - 1) as f64;
    let width = tolerance.max(axis.resolution());
    if spacing <= width {
        return 0;
    }
    // Each probe halves the interval (one more for snapping to the key's resolution); a
    // positive width ends it within 64 halvings of any finite range.
    ((spacing / width).log2().ceil() + 1.0).clamp(0.0, 64.0) as u64
}

/// Finishes one seed's search from its `scan` (each scan value with its outcome, in order):
/// bisects between the last value that recovers and the first that does not.
pub fn bisect<E>(
    axis: &SearchAxis,
    seed: u64,
    scan: Vec<(f64, ProbeValue)>,
    tolerance: f64,
    probe: &impl Fn(f64) -> Result<ProbeValue, E>,
) -> Result<SeedSearch, E> {
    let first_never = scan.iter().position(|(_, o)| o.is_none());
    let recovers_again_at = match first_never {
        Some(i) => scan[i..]
            .iter()
            .filter(|(_, o)| o.is_some())
            .map(|&(v, _)| v)
            .collect(),
        None => Vec::new(),
    };
    let mut bisection = Vec::new();
    let found = match first_never {
        None => Found::AboveHigh,
        Some(0) => Found::AtLow,
        Some(i) => {
            let (mut lo, mut hi) = (scan[i - 1].0, scan[i].0);
            let width = tolerance.max(axis.resolution());
            while hi - lo > width {
                let mid = axis.snap(lo + (hi - lo) / 2.0);
                if mid <= lo || mid >= hi {
                    break;
                }
                let o = probe(mid)?;
                bisection.push((mid, o));
                if o.is_some() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Found::Between {
                recovers: lo,
                never: hi,
            }
        }
    };
    Ok(SeedSearch {
        seed,
        scan,
        bisection,
        found,
        recovers_again_at,
    })
}

/// What the seeds say together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Agreement {
    /// Every seed's interval contains `(recovers, never]` (the intersection of them all).
    Agree {
        /// The highest value every seed recovers at.
        recovers: f64,
        /// The lowest value no seed recovers at.
        never: f64,
    },
    /// The seeds' intervals do not overlap: the boundaries spread from the lowest seed's
    /// `recovers` to the highest seed's `never`.
    Spread {
        /// The lowest seed's `recovers`.
        lowest: f64,
        /// The highest seed's `never`.
        highest: f64,
    },
    /// Every seed recovers over the whole range.
    AllAboveHigh,
    /// No seed recovers even at LOW.
    AllAtLow,
    /// Some seeds found a boundary inside the range, others at one of its ends.
    Mixed,
}

/// Combines per-seed results (LOW and HIGH make the ends of a seed at LOW or above HIGH).
pub fn agreement(axis: &SearchAxis, seeds: &[SeedSearch]) -> Agreement {
    if seeds.iter().all(|s| s.found == Found::AboveHigh) {
        return Agreement::AllAboveHigh;
    }
    if seeds.iter().all(|s| s.found == Found::AtLow) {
        return Agreement::AllAtLow;
    }
    let intervals: Vec<(f64, f64)> = seeds
        .iter()
        .filter_map(|s| match s.found {
            Found::Between { recovers, never } => Some((recovers, never)),
            _ => None,
        })
        .collect();
    if intervals.len() < seeds.len() {
        return Agreement::Mixed;
    }
    let lo = intervals.iter().map(|i| i.0).fold(axis.low, f64::max);
    let hi = intervals.iter().map(|i| i.1).fold(axis.high, f64::min);
    if lo < hi {
        Agreement::Agree {
            recovers: lo,
            never: hi,
        }
    } else {
        Agreement::Spread {
            lowest: intervals.iter().map(|i| i.0).fold(f64::INFINITY, f64::min),
            highest: intervals
                .iter()
                .map(|i| i.1)
                .fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// A 2-D phase diagram: outcomes on the grid `xs × ys`, per seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// The x axis's grid values, low to high.
    pub xs: Vec<f64>,
    /// The y axis's grid values, low to high.
    pub ys: Vec<f64>,
    /// The seeds run at every grid point.
    pub seeds: Vec<u64>,
    /// `cells[yi][xi][seed index]`.
    pub cells: Vec<Vec<Vec<ProbeValue>>>,
}

/// Runs `probe(seed, x, y)` on every grid point and seed, one at a time. A grid runner probes
/// [`Phase::points`] in parallel and assembles them with [`Phase::from_outcomes`].
pub fn phase<E>(
    x: &SearchAxis,
    y: &SearchAxis,
    steps: usize,
    seeds: &[u64],
    probe: &impl Fn(u64, f64, f64) -> Result<ProbeValue, E>,
) -> Result<Phase, E> {
    let points = Phase::points(x, y, steps, seeds);
    let outcomes = points
        .iter()
        .map(|p| probe(p.seed, p.x, p.y))
        .collect::<Result<Vec<_>, E>>()?;
    Ok(Phase::from_outcomes(x, y, steps, seeds, outcomes))
}

/// One run of a phase diagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhasePoint {
    /// The run's seed.
    pub seed: u64,
    /// The x key's value.
    pub x: f64,
    /// The y key's value.
    pub y: f64,
}

/// The median over seeds with "never" counted as longer than any recovery time (the upper
/// median for an even count): `None` when at least half the seeds never recover.
pub fn median_outcome(outcomes: &[ProbeValue]) -> ProbeValue {
    let mut v: Vec<f64> = outcomes
        .iter()
        .map(|o| o.unwrap_or(f64::INFINITY))
        .collect();
    v.sort_by(f64::total_cmp);
    let m = *v.get(v.len() / 2)?;
    m.is_finite().then_some(m)
}

impl Phase {
    /// Every run of the diagram over `x.grid(steps) × y.grid(steps) × seeds`: rows of y, then
    /// x, then seeds, in the order [`Phase::from_outcomes`] reads their outcomes.
    pub fn points(x: &SearchAxis, y: &SearchAxis, steps: usize, seeds: &[u64]) -> Vec<PhasePoint> {
        let (xs, ys) = (x.grid(steps), y.grid(steps));
        let mut points = Vec::with_capacity(xs.len() * ys.len() * seeds.len());
        for &yv in &ys {
            for &xv in &xs {
                for &seed in seeds {
                    points.push(PhasePoint { seed, x: xv, y: yv });
                }
            }
        }
        points
    }

    /// The diagram from the outcomes of [`Phase::points`], in their order.
    pub fn from_outcomes(
        x: &SearchAxis,
        y: &SearchAxis,
        steps: usize,
        seeds: &[u64],
        outcomes: Vec<ProbeValue>,
    ) -> Phase {
        let (xs, ys) = (x.grid(steps), y.grid(steps));
        let mut it = outcomes.into_iter();
        let cells = (0..ys.len())
            .map(|_| {
                (0..xs.len())
                    .map(|_| it.by_ref().take(seeds.len()).collect())
                    .collect()
            })
            .collect();
        Phase {
            xs,
            ys,
            seeds: seeds.to_vec(),
            cells,
        }
    }

    /// `[yi][xi]` medians over seeds (see [`median_outcome`]).
    pub fn medians(&self) -> Vec<Vec<ProbeValue>> {
        self.cells
            .iter()
            .map(|row| row.iter().map(|c| median_outcome(c)).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(lo: &str, hi: &str) -> SearchAxis {
        SearchAxis::parse("faults.f.duration", &format!("{lo}..{hi}")).unwrap()
    }

    #[test]
    fn ranges_read_their_kind() {
        let a = secs("0s", "30s");
        assert_eq!((a.kind, a.low, a.high), (Kind::Duration, 0.0, 30.0));
        assert_eq!(a.set_arg(12.5), "faults.f.duration=12500ms");
        assert_eq!(a.set_arg(1.960_000_001), "faults.f.duration=1960000001ns");
        assert_eq!(a.show(1.96), "1.96s");
        assert_eq!(a.show(0.3), "300ms");
        let r = SearchAxis::parse("arrivals.rate", "200..700").unwrap();
        assert_eq!(r.kind, Kind::Integer);
        assert_eq!(r.grid(11)[1], 250.0);
        assert_eq!(r.show(250.0), "250");
        assert_eq!(r.set_arg(r.snap(412.6)), "arrivals.rate=413");
        assert_eq!(
            SearchAxis::parse("k", "0.5..2").unwrap().kind,
            Kind::Real,
            "one end with a decimal point makes the range real"
        );
        assert!(SearchAxis::parse("k", "0s..30").is_err());
        assert!(SearchAxis::parse("k", "30..10").is_err());
        assert!(SearchAxis::parse("k", "1-2").is_err());
        assert_eq!(
            SearchAxis::parse("k", "1..3").unwrap().grid(11),
            vec![1.0, 2.0, 3.0]
        );
    }

    #[test]
    fn bisection_narrows_to_the_tolerance_around_a_known_threshold() {
        // Recovers iff v ≤ 1.96 (recovery time 0.5 s there).
        let axis = secs("0s", "5s");
        let probe = |v: f64| Ok::<_, ()>((v <= 1.96).then_some(0.5));
        let s = search(&axis, 1, 11, 0.001, &probe).unwrap();
        // Scan every 0.5 s: 1.5 recovers, 2.0 does not; then bisection to ≤ 1 ms.
        assert_eq!(s.scan.len(), 11);
        let Found::Between { recovers, never } = s.found else {
            panic!("{:?}", s.found)
        };
        assert!(recovers <= 1.96 && 1.96 < never, "({recovers}, {never}]");
        assert!(never - recovers <= 0.001);
        // log2(0.5 s / 1 ms) ≈ 9 probes.
        assert_eq!(s.bisection.len(), 9);
        assert!(s.monotone());
    }

    #[test]
    fn ends_of_the_range_and_non_monotone_seeds_are_reported() {
        let axis = SearchAxis::parse("arrivals.rate", "0..100").unwrap();
        let always = |_: f64| Ok::<_, ()>(Some(0.0));
        assert_eq!(
            search(&axis, 1, 5, 1.0, &always).unwrap().found,
            Found::AboveHigh
        );
        let never = |_: f64| Ok::<_, ()>(None);
        assert_eq!(
            search(&axis, 1, 5, 1.0, &never).unwrap().found,
            Found::AtLow
        );
        // Never in [40, 60], recovers elsewhere: scan 0, 25, 50, 75, 100 sees 50 fail and 75
        // recover; the first flip is bisected on whole numbers to (39, 40].
        let island = |v: f64| Ok::<_, ()>((!(40.0..=60.0).contains(&v)).then_some(1.0));
        let s = search(&axis, 1, 5, 1.0, &island).unwrap();
        assert_eq!(
            s.found,
            Found::Between {
                recovers: 39.0,
                never: 40.0
            }
        );
        assert_eq!(s.recovers_again_at, vec![75.0, 100.0]);
        assert!(!s.monotone());
    }

    #[test]
    fn seeds_agree_when_their_intervals_overlap() {
        let axis = SearchAxis::parse("k", "0..100").unwrap();
        let at = |seed, t: f64| {
            let probe = move |v: f64| Ok::<_, ()>((v <= t).then_some(0.0));
            search(&axis, seed, 11, 1.0, &probe).unwrap()
        };
        let a = [at(1, 42.0), at(2, 42.4)];
        assert_eq!(
            agreement(&axis, &a),
            Agreement::Agree {
                recovers: 42.0,
                never: 43.0
            }
        );
        let b = [at(1, 42.0), at(2, 57.0)];
        assert_eq!(
            agreement(&axis, &b),
            Agreement::Spread {
                lowest: 42.0,
                highest: 58.0
            }
        );
        let c = [at(1, 42.0), at(2, 200.0)];
        assert_eq!(agreement(&axis, &c), Agreement::Mixed);
    }

    #[test]
    fn phase_cells_are_in_grid_order_and_medians_count_never_as_longest() {
        let x = SearchAxis::parse("x", "0..2").unwrap();
        let y = SearchAxis::parse("y", "0..1").unwrap();
        // Never when x + y ≥ 2 for seed 1, when x + y ≥ 3 for seed 2; recovery time x.
        let probe =
            |seed: u64, x: f64, y: f64| Ok::<_, ()>((x + y < seed as f64 + 1.0).then_some(x));
        let p = phase(&x, &y, 3, &[1, 2], &probe).unwrap();
        assert_eq!((p.xs.len(), p.ys.len()), (3, 2));
        assert_eq!(p.cells[1][2], vec![None, None]);
        assert_eq!(p.cells[0][2], vec![None, Some(2.0)]);
        let m = p.medians();
        // Upper median of {never, 2} is never; of {1, 1} is 1.
        assert_eq!(m[0], vec![Some(0.0), Some(1.0), None]);
        assert_eq!(median_outcome(&[Some(3.0), None, Some(1.0)]), Some(3.0));
        assert_eq!(median_outcome(&[]), None);
    }
}
