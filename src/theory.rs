//! Closed-form queueing results and the statistics to compare simulations with them. Owns the
//! analytic side of "how we know it is right" (`docs/trust.md`): Erlang C for M/M/c, the
//! blocking probability of M/M/c/K, and confidence intervals over independent replications with
//! Student's t. Everything is in plain `f64`; rates are per second.
//!
//! Notation: λ arrival rate, μ service rate of one slot, c slots, a = λ/μ offered load in
//! Erlangs, ρ = a/c utilization, K the most requests in the system (slots plus queue cap).

/// The Erlang B blocking probability B(c, a), by the stable recurrence B(0) = 1,
/// B(k) = a·B(k−1) / (k + a·B(k−1)).
pub fn erlang_b(c: u32, a: f64) -> f64 {
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (k as f64 + a * b);
    }
    b
}

/// The Erlang C probability that an arrival waits in M/M/c, C(c, a) = c·B / (c − a·(1 − B));
/// needs ρ = a/c < 1.
pub fn erlang_c(c: u32, a: f64) -> f64 {
    let b = erlang_b(c, a);
    let c = c as f64;
    c * b / (c - a * (1.0 - b))
}

/// Steady-state M/M/c with arrival rate `lambda` and per-slot service rate `mu`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mmc {
    /// Probability that an arrival has to wait (Erlang C).
    pub wait_probability: f64,
    /// Mean time in queue, zero waits included: C / (cμ − λ).
    pub mean_wait_s: f64,
    /// ρ = λ / (cμ).
    pub utilization: f64,
    /// Mean number in the system: λ·(W_q + 1/μ) (Little).
    pub mean_in_system: f64,
}

/// M/M/c results; `None` unless λ < cμ.
pub fn mmc(c: u32, lambda: f64, mu: f64) -> Option<Mmc> {
    let a = lambda / mu;
    if c == 0 || a >= c as f64 {
        return None;
    }
    let pw = erlang_c(c, a);
    let wq = pw / (c as f64 * mu - lambda);
    Some(Mmc {
        wait_probability: pw,
        mean_wait_s: wq,
        utilization: a / c as f64,
        mean_in_system: lambda * (wq + 1.0 / mu),
    })
}

/// Steady-state M/M/c/K: at most `k` ≥ c requests in the system (c in slots, k − c queued).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mmck {
    /// Probability that an arrival finds the system full: π_K (PASTA).
    pub blocking: f64,
    /// Mean busy slots / c = λ(1 − π_K) / (cμ).
    pub utilization: f64,
    /// Mean number in the system, Σ n·π_n.
    pub mean_in_system: f64,
}

/// M/M/c/K results from the birth-death stationary distribution, computed in log space so that
/// large c and K do not overflow.
pub fn mmck(c: u32, k: u32, lambda: f64, mu: f64) -> Option<Mmck> {
    if c == 0 || k < c {
        return None;
    }
    let a = lambda / mu;
    // log of the unnormalized π_n: a^n / n! for n ≤ c, a^n / (c! c^(n−c)) above.
    let mut logs = Vec::with_capacity(k as usize + 1);
    let mut l = 0.0f64;
    logs.push(l);
    for n in 1..=k {
        l += a.ln() - (n.min(c) as f64).ln();
        logs.push(l);
    }
    let top = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = logs.iter().map(|x| (x - top).exp()).collect();
    let total: f64 = weights.iter().sum();
    let pi: Vec<f64> = weights.iter().map(|w| w / total).collect();
    let blocking = pi[k as usize];
    Some(Mmck {
        blocking,
        utilization: lambda * (1.0 - blocking) / (c as f64 * mu),
        mean_in_system: pi.iter().enumerate().map(|(n, p)| n as f64 * p).sum(),
    })
}

/// A mean with a two-sided confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub half_width: f64,
    /// The confidence level, like 0.99.
    pub level: f64,
    /// Number of replications.
    pub n: usize,
}

impl Interval {
    /// Whether `x` lies in `[mean − half_width, mean + half_width]`.
    pub fn contains(&self, x: f64) -> bool {
        (x - self.mean).abs() <= self.half_width
    }
}

/// The Student-t confidence interval for the mean of `samples`, independent and identically
/// distributed (one per replication), at `level` (like 0.99). Needs at least two samples.
pub fn t_interval(samples: &[f64], level: f64) -> Interval {
    let n = samples.len();
    assert!(
        n >= 2,
        "a confidence interval needs at least two replications"
    );
    let mean = samples.iter().sum::<f64>() / n as f64;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = student_t_quantile(0.5 + level / 2.0, (n - 1) as f64);
    Interval {
        mean,
        half_width: t * (var / n as f64).sqrt(),
        level,
        n,
    }
}

/// The `p`-quantile (0.5 ≤ p < 1) of Student's t with `df` degrees of freedom, by bisection on
/// the distribution function.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!((0.5..1.0).contains(&p), "p must be in [0.5, 1)");
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The distribution function of Student's t at `x` ≥ 0: 1 − I_{df/(df+x²)}(df/2, 1/2) / 2.
pub fn student_t_cdf(x: f64, df: f64) -> f64 {
    let z = df / (df + x * x);
    1.0 - 0.5 * regularized_beta(z, df / 2.0, 0.5)
}

/// The regularized incomplete beta function I_x(a, b), by Lentz's continued fraction
/// (Numerical Recipes §6.4).
fn regularized_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut s = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        s += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
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
            let got = student_t_quantile(p, df);
            assert!(close(got, want, 1e-3), "t({p}, {df}) = {got}, want {want}");
        }
    }

    #[test]
    fn erlang_formulas_match_known_values() {
        // M/M/1: P(wait) = ρ, Wq = ρ/(μ − λ).
        let m = mmc(1, 40.0, 50.0).unwrap();
        assert!(close(m.wait_probability, 0.8, 1e-12));
        assert!(close(m.mean_wait_s, 0.8 / 10.0, 1e-12));
        assert!(close(m.mean_in_system, 4.0, 1e-12));
        // Erlang C with c = 2, a = 1: 1/3.
        assert!(close(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12));
        // Erlang B with c = 2, a = 1: 0.2.
        assert!(close(erlang_b(2, 1.0), 0.2, 1e-12));
        // M/M/1/K: π_K = (1 − ρ) ρ^K / (1 − ρ^(K+1)).
        let r: f64 = 0.5;
        let want = (1.0 - r) * r.powi(3) / (1.0 - r.powi(4));
        assert!(close(mmck(1, 3, 0.5, 1.0).unwrap().blocking, want, 1e-12));
        // M/M/c/c is Erlang B.
        assert!(close(
            mmck(16, 16, 12.0, 1.0).unwrap().blocking,
            erlang_b(16, 12.0),
            1e-12
        ));
        assert!(mmc(16, 800.0, 50.0).is_none(), "ρ = 1 has no steady state");
    }

    #[test]
    fn t_interval_of_constant_samples_is_a_point() {
        let i = t_interval(&[2.0, 2.0, 2.0], 0.99);
        assert_eq!(i.mean, 2.0);
        assert_eq!(i.half_width, 0.0);
        assert!(i.contains(2.0) && !i.contains(2.1));
    }
}
