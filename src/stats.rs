//! Statistics over seeds. Owns the one estimator every "how often / how much on average" answer
//! uses: the sample mean with its 95 % confidence interval from Student's t distribution
//! (`mean ± t₀.₉₇₅(n−1) · s/√n`, `s` the sample standard deviation; the quantile from `statrs`).
//! `loadsim run --seeds`, `expect:` assertions with `mean: true`, paired comparisons to a baseline,
//! the sweep tables with `interval: ci95` and the theory tests all read it from here.
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
    /// Their mean.
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
    t_quantile(0.975, df as f64)
}

/// The `p`-quantile of Student's t distribution with `df` > 0 degrees of freedom (`statrs`).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df)
        .expect("t needs positive degrees of freedom")
        .inverse_cdf(p)
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

    #[test]
    fn student_t_quantiles_match_tables() {
        // Values from standard t tables.
        for (p, df, want) in [
            (0.975, 1.0, 12.7062),
            (0.975, 9.0, 2.2622),
            (0.995, 9.0, 3.2498),
            (0.995, 19.0, 2.8609),
            (0.995, 29.0, 2.7564),
            (0.975, 1e6, 1.9600),
            (0.9995, 29.0, 3.6594),
        ] {
            let got = t_quantile(p, df);
            assert!(
                (got - want).abs() <= 1e-3,
                "t({p}, {df}) = {got}, want {want}"
            );
        }
    }
}
