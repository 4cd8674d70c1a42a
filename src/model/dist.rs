//! Duration sampling. Owns turning a validated [`Dist`] into draws of integer nanoseconds from
//! its own random stream: exponential, uniform and Pareto by inversion (pinned in our code),
//! log-normal through `rand_distr` (pinned by `Cargo.lock`), and the shapes built from data
//! (quantiles, empirical, histogram) by inverting their quantile function at one open uniform
//! per draw ([`Stream::open_unit`]). A `scale` other than 1 multiplies the draw in whole
//! nanoseconds and truncates; it takes nothing more from the stream.

use std::sync::Arc;

use rand_distr::Distribution;

use crate::rng::Stream;
use crate::scenario::dist::{Empirical, Histogram, QuantileCurve};
use crate::scenario::{Dist, Shape};
use crate::time::SimDuration;

/// A ready-to-draw duration distribution: its shape, or its shape with every draw scaled (a
/// variant of its own, so the unscaled draw takes no extra test on the hot path).
#[derive(Clone, Debug)]
pub struct Sampler(Draw);

/// A ready-to-draw shape.
#[derive(Clone, Debug)]
enum Draw {
    Exponential {
        mean_ns: f64,
    },
    Constant {
        ns: u64,
    },
    Uniform {
        min_ns: u64,
        span_ns: u64,
    },
    LogNormal(rand_distr::LogNormal<f64>),
    /// Pareto by inversion: min · U^(−1/alpha).
    Pareto {
        min_ns: f64,
        inv_alpha: f64,
    },
    Quantiles(Arc<QuantileCurve>),
    Empirical(Arc<Empirical>),
    Histogram(Arc<Histogram>),
    /// The inner draw × `k` (`k` ≠ 1).
    Scaled(Box<Draw>, f64),
}

impl Sampler {
    /// Prepares `dist` for drawing.
    pub fn new(dist: &Dist) -> Sampler {
        let draw = match &dist.shape {
            Shape::Exponential { mean } => Draw::Exponential {
                mean_ns: mean.0 as f64,
            },
            Shape::Constant { value } => Draw::Constant { ns: value.0 },
            Shape::Uniform { min, max } => Draw::Uniform {
                min_ns: min.0,
                span_ns: max.0 - min.0,
            },
            Shape::Pareto { min, alpha } => Draw::Pareto {
                min_ns: min.0 as f64,
                inv_alpha: 1.0 / alpha,
            },
            Shape::LogNormal { mean, sigma } => {
                // mean = exp(mu + sigma²/2)  ⇒  mu = ln(mean) − sigma²/2, in nanoseconds.
                let mu = (mean.0 as f64).ln() - sigma * sigma / 2.0;
                Draw::LogNormal(
                    rand_distr::LogNormal::new(mu, *sigma)
                        .expect("validated: sigma is finite and ≥ 0"),
                )
            }
            Shape::Quantiles(q) => Draw::Quantiles(q.clone()),
            Shape::Empirical(e) => Draw::Empirical(e.clone()),
            Shape::Histogram(h) => Draw::Histogram(h.clone()),
        };
        if dist.scale == 1.0 {
            Sampler(draw)
        } else {
            Sampler(Draw::Scaled(Box::new(draw), dist.scale))
        }
    }

    /// One draw.
    #[inline]
    pub fn sample(&self, stream: &mut Stream) -> SimDuration {
        self.0.sample(stream)
    }
}

impl Draw {
    #[inline]
    fn sample(&self, stream: &mut Stream) -> SimDuration {
        match self {
            Draw::Exponential { mean_ns } => SimDuration(stream.exponential(*mean_ns) as u64),
            Draw::Constant { ns } => SimDuration(*ns),
            Draw::Uniform { min_ns, span_ns } => SimDuration(min_ns + stream.up_to(*span_ns)),
            Draw::LogNormal(d) => SimDuration(d.sample(stream.rng()) as u64),
            Draw::Pareto { min_ns, inv_alpha } => {
                // 1 − U is in (0, 1], so the power is finite; `as u64` saturates far tails.
                SimDuration((min_ns * (1.0 - stream.unit()).powf(-inv_alpha)) as u64)
            }
            Draw::Quantiles(q) => SimDuration(q.quantile(stream.open_unit()) as u64),
            Draw::Empirical(e) => SimDuration(e.quantile(stream.open_unit()) as u64),
            Draw::Histogram(h) => SimDuration(h.quantile(stream.open_unit()) as u64),
            // `as u64` saturates far tails.
            Draw::Scaled(inner, k) => SimDuration((inner.sample(stream).0 as f64 * k) as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::dist::{Histogram, QuantileCurve};

    /// The `p`-quantile (nearest rank) of sorted draws.
    fn nearest_rank(sorted: &[u64], p: f64) -> f64 {
        let rank = ((p * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1] as f64
    }

    fn draws(dist: &Dist, n: usize) -> Vec<u64> {
        let sampler = Sampler::new(dist);
        let mut stream = Stream::new(7, "service/test");
        let mut v: Vec<u64> = (0..n).map(|_| sampler.sample(&mut stream).0).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn sampled_quantiles_reproduce_the_given_ones() {
        // p50 20ms, p99 180ms over 10⁶ draws: the sampled p50 and p99 within 1 % (the standard
        // error of the p99 estimate is about 0.5 % here).
        let q = QuantileCurve::new(&[(0.5, 20e6), (0.99, 180e6)], None, None);
        let d = Dist::from(Shape::Quantiles(Arc::new(q)));
        let v = draws(&d, 1_000_000);
        for (p, want) in [(0.5, 20e6), (0.99, 180e6)] {
            let got = nearest_rank(&v, p);
            assert!(((got - want) / want).abs() < 0.01, "p{p}: {got} vs {want}");
        }
        // Three quantiles, each reproduced.
        let q3 = QuantileCurve::new(&[(0.5, 20e6), (0.9, 60e6), (0.99, 400e6)], None, None);
        let v = draws(&Dist::from(Shape::Quantiles(Arc::new(q3))), 1_000_000);
        for (p, want) in [(0.5, 20e6), (0.9, 60e6), (0.99, 400e6)] {
            let got = nearest_rank(&v, p);
            assert!(((got - want) / want).abs() < 0.01, "p{p}: {got} vs {want}");
        }
    }

    #[test]
    fn sampled_histogram_follows_histogram_quantile() {
        let h = Histogram::new(&[(100e6, 50.0), (200e6, 70.0), (1e9, 110.0)], 120.0);
        let d = Dist::from(Shape::Histogram(Arc::new(h.clone())));
        let v = draws(&d, 1_000_000);
        for p in [0.2, 0.5, 0.8] {
            let (got, want) = (nearest_rank(&v, p), h.quantile(p));
            assert!(((got - want) / want).abs() < 0.01, "p{p}: {got} vs {want}");
        }
        // The +Inf bucket's share (10/120) sits at the highest finite bound, 1 s.
        let at_top = v.iter().filter(|&&x| x == 1_000_000_000).count() as f64 / v.len() as f64;
        assert!((at_top - 10.0 / 120.0).abs() < 0.002, "{at_top}");
    }

    #[test]
    fn scale_multiplies_every_draw_and_one_leaves_them_alone() {
        let base = Dist::from(Shape::Exponential {
            mean: SimDuration(20_000_000),
        });
        let (a, b) = (Sampler::new(&base), Sampler::new(&base.scaled(3.0)));
        let (mut s1, mut s2) = (Stream::new(1, "x"), Stream::new(1, "x"));
        for _ in 0..1000 {
            assert_eq!(a.sample(&mut s1).0 * 3, b.sample(&mut s2).0);
        }
        assert!(!matches!(
            Sampler::new(&base.scaled(1.0)).0,
            Draw::Scaled(..)
        ));
    }
}
