//! Test support: closed-form queueing results and the statistics to compare simulations with
//! them (the Student-t quantile comes from `loadsim::stats`). Owns the analytic side of "how we know it is right" (`docs/trust.md`): Erlang C for M/M/c, the
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
    let t = loadsim::stats::t_quantile(0.5 + level / 2.0, (n - 1) as f64);
    Interval {
        mean,
        half_width: t * (var / n as f64).sqrt(),
        level,
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
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
