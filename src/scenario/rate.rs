//! The user arrival rate over time. Owns [`RatePlan`], one request class's rate as a function
//! of time (its rate, or its profile, or its trace, times the factors of the surges in force),
//! which the simulation draws arrivals from and the guard integrates, and [`RateCurve`], the
//! piecewise-linear rate of a profiled class under surges, integrated and inverted exactly.

use super::Arrivals;
use super::faults::{Fault, FaultKind};
use crate::time::{NANOS_PER_SEC, SimDuration, SimTime};

/// One window of a piecewise-constant quantity.
#[derive(Clone, Debug)]
struct Step {
    from: SimTime,
    to: SimTime,
    factor: f64,
}

/// The user arrival rate as a step function of time: the scenario's rate times the factors of the
/// surges in force at each instant.
#[derive(Clone, Debug)]
pub struct RatePlan {
    base: f64,
    surges: Vec<Step>,
    /// Instants where the rate changes, sorted.
    breaks: Vec<SimTime>,
    /// The profile times the surges, for a profiled scenario.
    curve: Option<RateCurve>,
    /// The rows of a replayed trace.
    replayed: Option<usize>,
}

impl RatePlan {
    /// The plan of one request class's `arrivals` under the scenario's `faults`.
    pub fn new(arrivals: &Arrivals, faults: &[Fault]) -> Self {
        let surges: Vec<Step> = faults
            .iter()
            .filter(|f| matches!(f.kind, FaultKind::Surge { .. }))
            .map(|f| Step {
                from: f.from,
                to: f.to,
                factor: f.kind.rate_factor(),
            })
            .collect();
        let mut breaks: Vec<SimTime> = surges.iter().flat_map(|w| [w.from, w.to]).collect();
        breaks.sort_unstable();
        breaks.dedup();
        RatePlan {
            base: arrivals.rate,
            surges,
            breaks,
            curve: RateCurve::new(arrivals, faults),
            replayed: arrivals.trace.as_ref().map(|t| t.len()),
        }
    }

    /// Requests per second at `t`.
    #[inline]
    pub fn rate_at(&self, t: SimTime) -> f64 {
        self.surges
            .iter()
            .filter(|w| w.from <= t && t < w.to)
            .fold(self.base, |r, w| r * w.factor)
    }

    /// The first instant after `t` where the rate changes.
    #[inline]
    pub fn next_break(&self, t: SimTime) -> SimTime {
        self.breaks
            .iter()
            .copied()
            .find(|&b| b > t)
            .unwrap_or(SimTime::NEVER)
    }

    /// The expected number of user requests in `[0, end)`: the rate integrated over time, each
    /// stretch between two rate changes at the rate in force there (so the factors of surges
    /// multiply only where their windows overlap).
    pub fn expected_arrivals(&self, end: SimDuration) -> f64 {
        let end = SimTime(end.0);
        if let Some(rows) = self.replayed {
            return rows as f64;
        }
        if let Some(curve) = &self.curve {
            return curve.integral(SimTime::ZERO, end);
        }
        let mut total = 0.0;
        let mut t = SimTime::ZERO;
        while t < end {
            let next = self.next_break(t).min(end);
            total += self.rate_at(t) * SimDuration(next.0 - t.0).as_secs_f64();
            t = next;
        }
        total
    }
}

/// A linear piece of the rate in force: `rate + slope · (t − from)` requests per second.
#[derive(Clone, Copy, Debug)]
struct Linear {
    from: SimTime,
    to: SimTime,
    /// Requests per second at `from`.
    rate: f64,
    /// Change of the rate per second.
    slope: f64,
}

impl Linear {
    fn secs(a: SimTime, b: SimTime) -> f64 {
        (b.0 - a.0) as f64 / NANOS_PER_SEC as f64
    }

    fn rate_at(&self, t: SimTime) -> f64 {
        self.rate + self.slope * Self::secs(self.from, t)
    }
}

/// The arrival rate of a profiled scenario over `[0, duration)`: the profile times the factors of
/// the surges in force, piecewise linear. Integrates and inverts it exactly (up to float rounding).
#[derive(Clone, Debug)]
pub struct RateCurve {
    pieces: Vec<Linear>,
}

impl RateCurve {
    /// The curve of one class's `arrivals` under `faults`, or `None` without a profile.
    pub fn new(arrivals: &Arrivals, faults: &[Fault]) -> Option<RateCurve> {
        let profile = arrivals.profile.as_ref()?;
        let surges: Vec<(SimTime, SimTime, f64)> = faults
            .iter()
            .filter(|f| matches!(f.kind, FaultKind::Surge { .. }))
            .map(|f| (f.from, f.to, f.kind.rate_factor()))
            .collect();
        let mut pieces = Vec::new();
        for p in &profile.pieces {
            let mut cuts: Vec<SimTime> = surges
                .iter()
                .flat_map(|&(a, b, _)| [a, b])
                .filter(|&c| p.from < c && c < p.to)
                .collect();
            cuts.push(p.from);
            cuts.push(p.to);
            cuts.sort_unstable();
            cuts.dedup();
            let slope = if p.to > p.from {
                (p.to_rate - p.rate) / Linear::secs(p.from, p.to)
            } else {
                0.0
            };
            for w in cuts.windows(2) {
                let (a, b) = (w[0], w[1]);
                let factor = surges
                    .iter()
                    .filter(|&&(f, t, _)| f <= a && a < t)
                    .fold(1.0, |x, &(_, _, k)| x * k);
                pieces.push(Linear {
                    from: a,
                    to: b,
                    rate: (p.rate + slope * Linear::secs(p.from, a)).max(0.0) * factor,
                    slope: slope * factor,
                });
            }
        }
        Some(RateCurve { pieces })
    }

    /// Requests per second at `t` (0 outside the arrival period).
    pub fn rate_at(&self, t: SimTime) -> f64 {
        self.pieces
            .iter()
            .find(|p| p.from <= t && t < p.to)
            .map_or(0.0, |p| p.rate_at(t).max(0.0))
    }

    /// The expected number of arrivals in `[a, b)`: the rate integrated over time.
    pub fn integral(&self, a: SimTime, b: SimTime) -> f64 {
        let mut total = 0.0;
        for p in &self.pieces {
            let (s, e) = (a.max(p.from), b.min(p.to));
            if s >= e {
                continue;
            }
            let (r, d) = (p.rate_at(s), Linear::secs(s, e));
            total += r * d + p.slope * d * d / 2.0;
        }
        total
    }

    /// The first instant `t' ≥ t` with `Λ(t') − Λ(t) = mass` (for `mass` 0: the first instant
    /// from `t` on where the rate is positive), or `None` when the curve ends first.
    pub fn advance(&self, t: SimTime, mut mass: f64) -> Option<SimTime> {
        let start = self.pieces.partition_point(|p| p.to <= t);
        for p in &self.pieces[start..] {
            let s = t.max(p.from);
            let (a, d) = (p.rate_at(s), Linear::secs(s, p.to));
            if mass <= 0.0 {
                if a > 0.0 || (p.slope > 0.0 && d > 0.0) {
                    return Some(s);
                }
                continue;
            }
            let m = a * d + p.slope * d * d / 2.0;
            if m >= mass {
                // Solves slope/2 · x² + a · x = mass for the smallest x ≥ 0, in the form that
                // stays exact as the slope goes to zero.
                let disc = (a * a + 2.0 * p.slope * mass).max(0.0);
                let x = 2.0 * mass / (a + disc.sqrt());
                let ns = (x * NANOS_PER_SEC as f64) as u64;
                return Some(SimTime(s.0.saturating_add(ns)).min(p.to));
            }
            mass -= m;
        }
        None
    }
}
