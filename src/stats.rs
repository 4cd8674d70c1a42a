//! Statistics over seeds. Owns the one estimator every "how often / how much on average" answer
//! uses: the sample mean with its 95 % confidence interval from Student's t distribution
//! (`mean ± t₀.₉₇₅(n−1) · s/√n`, `s` the sample standard deviation). `loadsim run --seeds`,
//! `expect:` assertions with `mean: true`, paired comparisons to a baseline and the sweep tables
//! with `interval: ci95` all read it from here.
//!
//! The interval assumes the seeds' values are independent draws of one distribution; for a metric
//! that is often undefined (`recovery_s` of a run that never recovers) it describes only the
//! seeds where it is defined, and callers say how many those are.

/// Most seeds one request may name (`--seeds`, `expect[].seeds`): enough for any interval, and a
/// guard against `--seeds 1..100000000`.
pub const MAX_SEEDS: usize = 10_000;

/// A sample mean and its 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeanCi {
    /// Number of values.
    pub n: usize,
    pub mean: f64,
    /// Half the interval's width; `None` for a single value (no spread to estimate).
    pub half_width: Option<f64>,
}

impl MeanCi {
    /// The interval's bounds, when there is one.
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.half_width.map(|h| (self.mean - h, self.mean + h))
    }
}

/// The mean of `values` with its 95 % confidence interval; `None` when `values` is empty.
pub fn mean_ci95(values: &[f64]) -> Option<MeanCi> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(MeanCi {
            n,
            mean,
            half_width: None,
        });
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = (var / n as f64).sqrt();
    Some(MeanCi {
        n,
        mean,
        half_width: Some(t_975(n - 1) * se),
    })
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom (the factor of a
/// two-sided 95 % interval): 12.706 for 1, 2.262 for 9, 1.960 in the limit.
pub fn t_975(df: usize) -> f64 {
    assert!(df > 0, "t needs at least one degree of freedom");
    // P(|T| ≤ t) grows with t: bisect for 0.95. 200 halvings of [0, 1000] reach f64 precision.
    let (mut lo, mut hi) = (0.0f64, 1000.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if central_probability(mid, df) < 0.95 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// P(|T| ≤ t) for Student's t with integer `df` degrees of freedom, by the finite series of
/// Abramowitz & Stegun 26.7.3–4 (exact up to rounding for integer `df`).
fn central_probability(t: f64, df: usize) -> f64 {
    let theta = (t / (df as f64).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        // 2/π · (θ + sin θ cos θ · (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + … , (df−3)/2 terms after 1)).
        let mut sum = 0.0;
        if df > 1 {
            let mut term = 1.0;
            sum = 1.0;
            let mut k = 1;
            while 2 * k < df - 1 {
                term *= (2 * k) as f64 / (2 * k + 1) as f64 * c2;
                sum += term;
                k += 1;
            }
        }
        std::f64::consts::FRAC_2_PI * (theta + s * c * sum)
    } else {
        // sin θ · (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … , (df−2)/2 terms after 1).
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut k = 1;
        while 2 * k <= df - 2 {
            term *= (2 * k - 1) as f64 / (2 * k) as f64 * c2;
            sum += term;
            k += 1;
        }
        s * sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_printed_table() {
        // Two-sided 95 % critical values, as printed in every statistics textbook (3 decimals).
        for (df, want) in [
            (1, 12.706),
            (2, 4.303),
            (3, 3.182),
            (4, 2.776),
            (5, 2.571),
            (9, 2.262),
            (10, 2.228),
            (19, 2.093),
            (29, 2.045),
            (30, 2.042),
            (60, 2.000),
            (120, 1.980),
        ] {
            let t = t_975(df);
            assert!((t - want).abs() < 0.0005, "df {df}: {t} vs {want}");
        }
        // The normal limit.
        assert!((t_975(5000) - 1.960).abs() < 0.001);
    }

    #[test]
    fn mean_and_interval_of_hand_checked_samples() {
        // 1, 2, 3: mean 2, s = 1, se = 1/√3, t(2) = 4.3027 → ±2.4841.
        let m = mean_ci95(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((m.n, m.mean), (3, 2.0));
        let h = m.half_width.unwrap();
        assert!((h - 2.4841).abs() < 1e-4, "{h}");
        let (lo, hi) = m.bounds().unwrap();
        assert!((lo - (2.0 - h)).abs() < 1e-12 && (hi - (2.0 + h)).abs() < 1e-12);
        // Identical values: a zero-width interval.
        let m = mean_ci95(&[4.0; 5]).unwrap();
        assert_eq!((m.mean, m.half_width), (4.0, Some(0.0)));
        // One value: a mean but no interval; none: nothing.
        assert_eq!(mean_ci95(&[7.0]).unwrap().half_width, None);
        assert_eq!(mean_ci95(&[]), None);
    }
}
