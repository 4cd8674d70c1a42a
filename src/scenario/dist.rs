//! Distributions of a duration (service time, think time, network latency, a `slow` fault's
//! service time), as the simulator consumes them. Owns the validated [`Dist`] — a [`Shape`] and a
//! `scale` that multiplies every draw — and the quantile function of each shape built from data
//! people have (docs/model.md §2.2.1):
//!
//! - [`QuantileCurve`], from quantiles like `{p50: 20ms, p99: 180ms}`: piecewise linear in
//!   (standard normal quantile, log-time), so two quantiles give the one log-normal through both
//!   and more give a piecewise log-normal; beyond the outermost quantiles the outermost pieces go
//!   on; `min`/`max` clamp.
//! - [`Empirical`], from samples: the inverse CDF with linear interpolation between order
//!   statistics (rank `p·(n−1)`, as Prometheus's `quantile` aggregation and NumPy's default).
//! - [`Histogram`], from cumulative buckets as Prometheus exposes them: `histogram_quantile`'s
//!   rule (prometheus/prometheus `promql/quantile.go`, `bucketQuantile`).
//!
//! Each is sampled by inversion: one uniform `U` in (0, 1) per draw, the draw `Q(U)`
//! (`model::dist`). Also owns the quantile keys' spelling ([`quantile_of_key`]).

use std::sync::Arc;

use statrs::distribution::{ContinuousCDF, Normal};

use crate::time::SimDuration;

/// A distribution of a duration: its shape, every draw multiplied by `scale`.
#[derive(Clone, Debug, PartialEq)]
pub struct Dist {
    /// The distribution before scaling.
    pub shape: Shape,
    /// Multiplies every draw (`scale: K`, a `slow` fault's `slowdown: K`); 1 leaves draws as the
    /// shape gives them, to the nanosecond.
    pub scale: f64,
}

/// The shape of a duration distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Exponential (memoryless) with the given mean.
    Exponential {
        /// The mean draw.
        mean: SimDuration,
    },
    /// Always the same duration.
    Constant {
        /// The duration every draw gives.
        value: SimDuration,
    },
    /// Uniform over `[min, max]`.
    Uniform {
        /// The shortest draw.
        min: SimDuration,
        /// The longest draw.
        max: SimDuration,
    },
    /// Log-normal with the given mean and shape `sigma` (the σ of the underlying normal).
    LogNormal {
        /// The mean draw (not the median).
        mean: SimDuration,
        /// The σ of the underlying normal: the larger, the heavier the tail.
        sigma: f64,
    },
    /// Pareto with scale `min` and shape `alpha` (heavy-tailed; infinite mean for alpha ≤ 1).
    Pareto {
        /// The scale: the shortest draw.
        min: SimDuration,
        /// The shape: the smaller, the heavier the tail.
        alpha: f64,
    },
    /// Through given quantiles (`{p50: 20ms, p99: 180ms}`).
    Quantiles(Arc<QuantileCurve>),
    /// Recorded samples (`{dist: empirical, samples: […]}` or `file:`).
    Empirical(Arc<Empirical>),
    /// Cumulative histogram buckets (`{dist: histogram, buckets: […]}`).
    Histogram(Arc<Histogram>),
}

impl From<Shape> for Dist {
    fn from(shape: Shape) -> Dist {
        Dist { shape, scale: 1.0 }
    }
}

impl Dist {
    /// The mean in seconds.
    pub fn mean_secs(&self) -> f64 {
        let shape = match &self.shape {
            Shape::Exponential { mean } | Shape::LogNormal { mean, .. } => mean.as_secs_f64(),
            Shape::Constant { value } => value.as_secs_f64(),
            Shape::Uniform { min, max } => (min.as_secs_f64() + max.as_secs_f64()) / 2.0,
            Shape::Pareto { min, alpha } => {
                if *alpha > 1.0 {
                    alpha * min.as_secs_f64() / (alpha - 1.0)
                } else {
                    f64::INFINITY
                }
            }
            Shape::Quantiles(q) => q.mean_ns() / 1e9,
            Shape::Empirical(e) => e.mean_ns() / 1e9,
            Shape::Histogram(h) => h.mean_ns() / 1e9,
        };
        shape * self.scale
    }

    /// This distribution with every draw multiplied by `k` more.
    pub fn scaled(&self, k: f64) -> Dist {
        Dist {
            shape: self.shape.clone(),
            scale: self.scale * k,
        }
    }
}

/// The standard normal distribution (Φ and Φ⁻¹, from `statrs`).
fn std_normal() -> Normal {
    Normal::standard()
}

/// A quantile function through given points, piecewise linear in (z = Φ⁻¹(p), ln t): with two
/// points exactly the log-normal through both (`ln t = μ + σz`); with more, a piecewise
/// log-normal, monotone because t never decreases from one point to the next. Below the first
/// point and above the last the outermost pieces go on (log-normal tails); `min` and `max` clamp
/// the result.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantileCurve {
    /// Φ⁻¹ of each given quantile, increasing.
    z: Vec<f64>,
    /// ln of each given value in nanoseconds, non-decreasing.
    y: Vec<f64>,
    /// Clamps, in nanoseconds (0 and +∞ without `min`/`max`).
    min_ns: f64,
    max_ns: f64,
}

impl QuantileCurve {
    /// The curve through `points` (quantile in (0, 1), value in nanoseconds > 0), both increasing
    /// in the quantile and non-decreasing in the value (validated), at least two of them.
    pub fn new(points: &[(f64, f64)], min_ns: Option<f64>, max_ns: Option<f64>) -> QuantileCurve {
        let n = std_normal();
        QuantileCurve {
            z: points.iter().map(|&(p, _)| n.inverse_cdf(p)).collect(),
            y: points.iter().map(|&(_, t)| t.ln()).collect(),
            min_ns: min_ns.unwrap_or(0.0),
            max_ns: max_ns.unwrap_or(f64::INFINITY),
        }
    }

    /// The line `ln t = a + b·z` of the piece that holds `z`.
    #[inline]
    fn piece(&self, z: f64) -> (f64, f64) {
        let k = self.z.partition_point(|&zk| zk <= z);
        let j = k.clamp(1, self.z.len() - 1) - 1;
        self.line(j)
    }

    /// The line through points `j` and `j + 1`.
    fn line(&self, j: usize) -> (f64, f64) {
        let b = (self.y[j + 1] - self.y[j]) / (self.z[j + 1] - self.z[j]);
        (self.y[j] - b * self.z[j], b)
    }

    /// The `p`-quantile in nanoseconds, `p` in (0, 1).
    #[inline]
    pub fn quantile(&self, p: f64) -> f64 {
        let z = std_normal().inverse_cdf(p);
        let (a, b) = self.piece(z);
        (a + b * z).exp().clamp(self.min_ns, self.max_ns)
    }

    /// The mean in nanoseconds, exact: over a piece `[lo, hi]` of z with `ln t = a + b·z`,
    /// `∫ e^(a+bz) φ(z) dz = e^(a+b²/2) (Φ(hi−b) − Φ(lo−b))`, and the clamped stretches are
    /// constant.
    pub fn mean_ns(&self) -> f64 {
        let n = std_normal();
        let last = self.z.len() - 1;
        let mut total = 0.0;
        for j in 0..last {
            let lo = if j == 0 { f64::NEG_INFINITY } else { self.z[j] };
            let hi = if j + 1 == last {
                f64::INFINITY
            } else {
                self.z[j + 1]
            };
            let (a, b) = self.line(j);
            let mass = |from: f64, to: f64| {
                if to > from {
                    n.cdf(to) - n.cdf(from)
                } else {
                    0.0
                }
            };
            if b <= 0.0 {
                let m = mass(lo, hi);
                if m > 0.0 {
                    total += a.exp().clamp(self.min_ns, self.max_ns) * m;
                }
                continue;
            }
            // Where the line crosses ln(min) and ln(max).
            let z_min = ((self.min_ns.ln() - a) / b).max(lo);
            let z_max = ((self.max_ns.ln() - a) / b).min(hi);
            let below = mass(lo, z_min.min(hi));
            if below > 0.0 {
                total += self.min_ns * below;
            }
            let above = mass(z_max.max(lo), hi);
            if above > 0.0 {
                total += self.max_ns * above;
            }
            if z_max > z_min {
                total += (a + b * b / 2.0).exp() * (n.cdf(z_max - b) - n.cdf(z_min - b));
            }
        }
        total
    }
}

/// Recorded samples, sorted: the inverse CDF with linear interpolation between order statistics,
/// `Q(p) = x₍ᵢ₎ + (h − i)(x₍ᵢ₊₁₎ − x₍ᵢ₎)` with `h = p·(n − 1)`, `i = ⌊h⌋` (0-based; one sample
/// is a constant).
#[derive(Clone, Debug, PartialEq)]
pub struct Empirical {
    sorted_ns: Vec<f64>,
}

impl Empirical {
    /// From samples in nanoseconds (at least one; validated).
    pub fn new(mut samples_ns: Vec<f64>) -> Empirical {
        samples_ns.sort_by(f64::total_cmp);
        Empirical {
            sorted_ns: samples_ns,
        }
    }

    /// The `p`-quantile in nanoseconds, `p` in [0, 1].
    #[inline]
    pub fn quantile(&self, p: f64) -> f64 {
        let x = &self.sorted_ns;
        let h = p * (x.len() - 1) as f64;
        let i = (h.floor() as usize).min(x.len() - 1);
        match x.get(i + 1) {
            Some(next) => x[i] + (h - i as f64) * (next - x[i]),
            None => x[i],
        }
    }

    /// The mean of the interpolated distribution in nanoseconds: each gap between neighbours
    /// holds 1/(n−1) of the mass, uniformly.
    pub fn mean_ns(&self) -> f64 {
        let x = &self.sorted_ns;
        if x.len() == 1 {
            return x[0];
        }
        let gaps: f64 = x.windows(2).map(|w| (w[0] + w[1]) / 2.0).sum();
        gaps / (x.len() - 1) as f64
    }
}

/// Cumulative histogram buckets as Prometheus exposes them, with `histogram_quantile`'s rule
/// (`bucketQuantile` in prometheus/prometheus `promql/quantile.go`): rank `q·total`; the first
/// bucket whose count reaches it holds the quantile, linearly interpolated between its lower
/// bound (the previous bucket's `le`, 0 for the first bucket) and its `le`; a first bucket with
/// `le` 0 gives 0; a rank in the `+Inf` bucket gives the highest finite `le`.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// Finite upper bounds in nanoseconds, increasing, then +∞.
    le_ns: Vec<f64>,
    /// Cumulative counts, non-decreasing, one per bound.
    counts: Vec<f64>,
}

impl Histogram {
    /// From finite bounds (increasing) with their cumulative counts (non-decreasing), and the
    /// count of the `+Inf` bucket (at least the last count; the total, above 0). Validated.
    pub fn new(finite: &[(f64, f64)], total: f64) -> Histogram {
        let mut le_ns: Vec<f64> = finite.iter().map(|&(le, _)| le).collect();
        let mut counts: Vec<f64> = finite.iter().map(|&(_, c)| c).collect();
        le_ns.push(f64::INFINITY);
        counts.push(total);
        Histogram { le_ns, counts }
    }

    /// The `q`-quantile in nanoseconds, `q` in [0, 1] — `bucketQuantile` after its special
    /// cases (there is always a `+Inf` bucket, at least one other, and observations).
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.le_ns.len();
        let mut rank = q * self.counts[n - 1];
        let b = self.counts[..n - 1].partition_point(|&c| c < rank);
        if b == n - 1 {
            return self.le_ns[n - 2];
        }
        if b == 0 && self.le_ns[0] <= 0.0 {
            return self.le_ns[0];
        }
        let end = self.le_ns[b];
        let mut count = self.counts[b];
        let mut start = 0.0;
        if b > 0 {
            start = self.le_ns[b - 1];
            count -= self.counts[b - 1];
            rank -= self.counts[b - 1];
        }
        start + (end - start) * (rank / count)
    }

    /// The mean in nanoseconds of the distribution `quantile` inverts: uniform inside each
    /// finite bucket, the `+Inf` bucket's share at the highest finite bound.
    pub fn mean_ns(&self) -> f64 {
        let n = self.le_ns.len();
        let total = self.counts[n - 1];
        let mut sum = 0.0;
        let (mut start, mut below) = (0.0, 0.0);
        for b in 0..n - 1 {
            sum += (self.counts[b] - below) * (start + self.le_ns[b]) / 2.0;
            start = self.le_ns[b];
            below = self.counts[b];
        }
        sum += (total - below) * start;
        sum / total
    }
}

/// The quantile a key like `p50` names: `p` and one or two digits is that percentile (`p1` …
/// `p99`); three or more digits, starting `99`, are the digits after `0.` (`p999` = 0.999,
/// `p995` = 0.995, `p9999` = 0.9999). A dot cannot appear in a key (`p99.9` would read as the
/// key path `p99` → `9` in `--set`), hence `p999`. `None` when `key` is not of this form at all;
/// `Some(Err)` says why a `p…` key names no quantile.
pub fn quantile_of_key(key: &str) -> Option<Result<f64, String>> {
    let digits = key.strip_prefix('p')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let explain = "`p1` … `p99` are percentiles; for higher quantiles add digits after `99` \
                   (`p999` is 0.999, `p9999` 0.9999)";
    Some(match digits.len() {
        _ if digits.starts_with('0') && digits.len() > 1 => Err(format!(
            "`{key}` is not a quantile: write `p{}` ({explain})",
            digits.trim_start_matches('0')
        )),
        1 | 2 => match digits.parse::<u32>() {
            Ok(0) => Err(format!(
                "`{key}` is the smallest value, not a quantile: give `min` instead"
            )),
            Ok(n) => Ok(n as f64 / 100.0),
            Err(_) => Err(format!("`{key}` is not a quantile ({explain})")),
        },
        _ if digits == "100" => Err(format!(
            "`{key}` is the largest value, not a quantile: give `max` instead"
        )),
        _ if !digits.starts_with("99") || digits.ends_with('0') => {
            Err(format!("`{key}` is not a quantile ({explain})"))
        }
        _ => format!("0.{digits}")
            .parse::<f64>()
            .map_err(|_| format!("`{key}` is not a quantile ({explain})")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_keys_are_spelled_as_documented() {
        let q = |k: &str| quantile_of_key(k).map(|r| r.ok());
        assert_eq!(q("p50"), Some(Some(0.5)));
        assert_eq!(q("p1"), Some(Some(0.01)));
        assert_eq!(q("p99"), Some(Some(0.99)));
        assert_eq!(q("p999"), Some(Some(0.999)));
        assert_eq!(q("p995"), Some(Some(0.995)));
        assert_eq!(q("p9999"), Some(Some(0.9999)));
        for bad in ["p0", "p05", "p100", "p250", "p990"] {
            assert_eq!(q(bad), Some(None), "{bad}");
        }
        for other in ["pa", "p", "mean", "p9x"] {
            assert_eq!(q(other), None, "{other}");
        }
    }

    #[test]
    fn two_quantiles_give_the_lognormal_through_both() {
        // p50 20ms, p99 180ms: μ = ln(20e6 ns), σ = ln 9 / Φ⁻¹(0.99), Φ⁻¹(0.99) = 2.3263478740408408
        // (published tables).
        let c = QuantileCurve::new(&[(0.5, 20e6), (0.99, 180e6)], None, None);
        let sigma = 9f64.ln() / 2.326_347_874_040_840_8;
        let mu = 20e6f64.ln();
        // Φ⁻¹ of 0.5, 0.9, 0.99, 0.999, 0.01 from tables.
        for (p, z) in [
            (0.5, 0.0),
            (0.9, 1.281_551_565_544_600_4),
            (0.99, 2.326_347_874_040_840_8),
            (0.999, 3.090_232_306_167_813_5),
            (0.01, -2.326_347_874_040_840_8),
        ] {
            let want = (mu + sigma * z).exp();
            let got = c.quantile(p);
            assert!(((got - want) / want).abs() < 1e-9, "p {p}: {got} vs {want}");
        }
        // The mean of that log-normal, exp(μ + σ²/2).
        let mean = (mu + sigma * sigma / 2.0).exp();
        assert!(((c.mean_ns() - mean) / mean).abs() < 1e-9);
    }

    #[test]
    fn three_quantiles_are_piecewise_in_log_time_and_clamped() {
        let c = QuantileCurve::new(
            &[(0.5, 20e6), (0.9, 50e6), (0.99, 400e6)],
            Some(5e6),
            Some(1e9),
        );
        for (p, t) in [(0.5, 20e6), (0.9, 50e6), (0.99, 400e6)] {
            assert!(((c.quantile(p) - t) / t).abs() < 1e-12);
        }
        // Halfway in z between p50 and p90 the value is the geometric mean of 20ms and 50ms.
        let z_mid = 1.281_551_565_544_600_4 / 2.0;
        let p_mid = std_normal().cdf(z_mid);
        let want = (20e6f64 * 50e6).sqrt();
        assert!(((c.quantile(p_mid) - want) / want).abs() < 1e-9);
        assert_eq!(c.quantile(1e-12), 5e6);
        assert_eq!(c.quantile(1.0 - 1e-12), 1e9);
        // Mean against a fine numerical integration over p.
        let steps = 2_000_000;
        let numeric: f64 = (0..steps)
            .map(|i| c.quantile((i as f64 + 0.5) / steps as f64))
            .sum::<f64>()
            / steps as f64;
        assert!(
            ((c.mean_ns() - numeric) / numeric).abs() < 1e-4,
            "{}",
            c.mean_ns()
        );
    }

    #[test]
    fn empirical_interpolates_between_order_statistics() {
        // Samples 10, 20, 40, 80 (unsorted on purpose): h = p·3.
        let e = Empirical::new(vec![40.0, 10.0, 80.0, 20.0]);
        assert_eq!(e.quantile(0.0), 10.0);
        assert_eq!(e.quantile(1.0), 80.0);
        // p = 0.5: h = 1.5, between 20 and 40.
        assert_eq!(e.quantile(0.5), 30.0);
        // p = 0.9: h = 2.7, 40 + 0.7·40 = 68.
        assert!((e.quantile(0.9) - 68.0).abs() < 1e-9);
        // Mean: (15 + 30 + 60) / 3 = 35.
        assert_eq!(e.mean_ns(), 35.0);
        assert_eq!(Empirical::new(vec![7.0]).quantile(0.3), 7.0);
    }

    /// Prometheus's own cases, `promql/promqltest/testdata/histograms.test`, at 50m (and 7m for
    /// `testhistogram2`), in seconds.
    #[test]
    fn histogram_quantile_matches_prometheus_tests() {
        let s = 1e9;
        // testhistogram{start="positive"}: le 0.1 → 50, 0.2 → 70, 1 → 110, +Inf → 120.
        let h = Histogram::new(&[(0.1 * s, 50.0), (0.2 * s, 70.0), (1.0 * s, 110.0)], 120.0);
        for (q, want) in [
            (0.0, 0.0),
            (0.2, 0.048),
            (0.5, 0.15),
            (0.8, 0.72),
            (1.0, 1.0),
        ] {
            let got = h.quantile(q) / s;
            assert!((got - want).abs() < 1e-12, "q {q}: {got} vs {want}");
        }
        // testhistogram3{start="positive"}: le 0 → 0, 0.1 → 50, 0.2 → 70, 1 → 110, +Inf → 110.
        let h3 = Histogram::new(
            &[
                (0.0, 0.0),
                (0.1 * s, 50.0),
                (0.2 * s, 70.0),
                (1.0 * s, 110.0),
            ],
            110.0,
        );
        for (q, want) in [
            (0.0, 0.0),
            (0.25, 0.055),
            (0.5, 0.125),
            (0.75, 0.45),
            (1.0, 1.0),
        ] {
            let got = h3.quantile(q) / s;
            assert!((got - want).abs() < 1e-12, "q {q}: {got} vs {want}");
        }
        // testhistogram2 at 7m: le 0 → 0, 2 → 1, 4 → 2, 6 → 3, +Inf → 3; 1/6, 1/2, 5/6 fall in
        // the middle of a bucket.
        let h2 = Histogram::new(
            &[(0.0, 0.0), (2.0 * s, 1.0), (4.0 * s, 2.0), (6.0 * s, 3.0)],
            3.0,
        );
        for (q, want) in [(1.0 / 6.0, 1.0), (0.5, 3.0), (5.0 / 6.0, 5.0)] {
            let got = h2.quantile(q) / s;
            assert!((got - want).abs() < 1e-12, "q {q}: {got} vs {want}");
        }
        // Mean: uniform inside buckets, the +Inf share at 1 s:
        // (50·0.05 + 20·0.15 + 40·0.6 + 10·1) / 120.
        let mean = (50.0 * 0.05 + 20.0 * 0.15 + 40.0 * 0.6 + 10.0 * 1.0) / 120.0;
        assert!((h.mean_ns() / s - mean).abs() < 1e-12);
    }
}
