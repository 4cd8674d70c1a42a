//! Contention (`services.<s>.contention: {sigma, kappa}`): a replica gets slower as it gets
//! busier. Owns the YAML form, its validation and the factor the simulation applies.
//!
//! A job's own work, drawn when it takes its slot (from the normal or a `slow` fault's
//! distribution), is multiplied by the universal scalability law's factor
//! `1 + sigma·(n − 1) + kappa·n·(n − 1)` (N. J. Gunther's USL: `sigma` the contention share,
//! `kappa` the coherency cost), with `n` the replica's busy slots just after the job took its own —
//! every slot held, whether its job is working or waiting on its calls, since a held slot is what
//! the scenario says competes for the replica — so a job alone on its replica runs at its drawn
//! time (`n = 1`, factor 1). The factor is fixed when the work starts: work already under way is
//! not slowed by jobs that start later. With all `slots` busy, a replica's throughput is
//! `slots / (mean × factor(slots))`, which falls as `slots` grows past
//! `sqrt((1 − sigma) / kappa)`: a queue that fills every slot then serves less than a lighter
//! load did, the mechanism of a metastable collapse.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::protections::Problems;
use crate::time::SimDuration;

/// `contention` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContentionRaw {
    /// Contention share: each other busy slot adds this fraction to the work (default 0).
    pub sigma: Option<f64>,
    /// Coherency cost: each ordered pair of busy slots adds this fraction (default 0).
    pub kappa: Option<f64>,
}

/// The USL coefficients of a service.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contention {
    /// Contention share σ: each other busy slot adds this fraction to a job's work (0: none).
    pub sigma: f64,
    /// Coherency cost κ: each ordered pair of busy slots adds this fraction (0: none).
    pub kappa: f64,
}

impl Contention {
    /// The factor on a job's work when `n` slots of its replica are busy (its own included).
    #[inline]
    pub fn factor(&self, n: u32) -> f64 {
        let n = n.max(1) as f64;
        1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0)
    }

    /// `work` stretched by the factor at `n` busy slots, rounded to the nanosecond.
    #[inline]
    pub fn stretch(&self, work: SimDuration, n: u32) -> SimDuration {
        SimDuration((work.0 as f64 * self.factor(n)).round() as u64)
    }
}

/// Checks `contention` at `key`: both coefficients finite and not negative.
pub(crate) fn validate(
    key: &str,
    raw: &ContentionRaw,
    p: &mut impl Problems,
) -> Option<Contention> {
    let mut ok = true;
    let mut coefficient = |name: &str, v: Option<f64>| {
        let v = v.unwrap_or(0.0);
        if !(v.is_finite() && v >= 0.0) {
            p.problem(
                &format!("{key}.{name}"),
                format!("is {v}; a contention coefficient must be 0 or more"),
            );
            ok = false;
        }
        v
    };
    let sigma = coefficient("sigma", raw.sigma);
    let kappa = coefficient("kappa", raw.kappa);
    ok.then_some(Contention { sigma, kappa })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn the_factor_is_the_universal_scalability_law() {
        let c = Contention {
            sigma: 0.02,
            kappa: 0.0005,
        };
        // Alone: no slowdown. n = 2: 1 + 0.02 + 0.0005·2 = 1.021. n = 10: 1 + 0.18 + 0.045.
        assert_eq!(c.factor(1), 1.0);
        assert!((c.factor(2) - 1.021).abs() < 1e-12);
        assert!((c.factor(10) - 1.225).abs() < 1e-12);
        // n = 64: 1 + 0.02·63 + 0.0005·64·63 = 1 + 1.26 + 2.016.
        assert!((c.factor(64) - 4.276).abs() < 1e-12);
        // 20 ms at n = 10: 24.5 ms, to the nanosecond.
        assert_eq!(
            c.stretch(SimDuration::from_millis(20), 10),
            SimDuration(24_500_000)
        );
        // Throughput n / factor(n) peaks near sqrt((1 − σ)/κ) = 44.3 and falls after it.
        let x = |n: u32| n as f64 / c.factor(n);
        assert!(x(44) > x(30) && x(44) > x(60) && x(100) < x(44));
        // No coefficients: the work as drawn.
        let none = Contention {
            sigma: 0.0,
            kappa: 0.0,
        };
        assert_eq!(
            none.stretch(SimDuration::from_millis(7), 50),
            SimDuration::from_millis(7)
        );
    }

    #[test]
    fn bad_snippets() {
        check(
            At::Service,
            &[
                (
                    "contention: {sigma: -0.1}",
                    "contention.sigma",
                    "is -0.1; a contention coefficient must be 0 or more",
                ),
                (
                    "contention: {sigma: 0.1, kappa: -1}",
                    "contention.kappa",
                    "is -1; a contention coefficient must be 0 or more",
                ),
                (
                    "contention: {sigma: 0.1, alpha: 1}",
                    "contention.alpha",
                    "unknown key `alpha`; expected one of `sigma`, `kappa`",
                ),
            ],
        );
        accepted(
            At::Service,
            &[
                "contention: {sigma: 0.02, kappa: 0.0005}",
                "contention: {kappa: 0.001}",
                "contention: {}",
            ],
        );
    }
}
