//! Service-time sampling. Owns turning a validated [`Dist`] into draws of integer nanoseconds from
//! a service's own random stream: exponential, uniform and Pareto by inversion (pinned in our code),
//! log-normal through `rand_distr` (pinned by `Cargo.lock`).

use rand_distr::Distribution;

use crate::rng::Stream;
use crate::scenario::Dist;
use crate::time::SimDuration;

/// A ready-to-draw service-time distribution.
#[derive(Clone, Debug)]
pub enum Sampler {
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
}

impl Sampler {
    /// Prepares `dist` for drawing.
    pub fn new(dist: &Dist) -> Sampler {
        match *dist {
            Dist::Exponential { mean } => Sampler::Exponential {
                mean_ns: mean.0 as f64,
            },
            Dist::Constant { value } => Sampler::Constant { ns: value.0 },
            Dist::Uniform { min, max } => Sampler::Uniform {
                min_ns: min.0,
                span_ns: max.0 - min.0,
            },
            Dist::Pareto { min, alpha } => Sampler::Pareto {
                min_ns: min.0 as f64,
                inv_alpha: 1.0 / alpha,
            },
            Dist::LogNormal { mean, sigma } => {
                // mean = exp(mu + sigma²/2)  ⇒  mu = ln(mean) − sigma²/2, in nanoseconds.
                let mu = (mean.0 as f64).ln() - sigma * sigma / 2.0;
                Sampler::LogNormal(
                    rand_distr::LogNormal::new(mu, sigma)
                        .expect("validated: sigma is finite and ≥ 0"),
                )
            }
        }
    }

    /// One draw.
    #[inline]
    pub fn sample(&self, stream: &mut Stream) -> SimDuration {
        match self {
            Sampler::Exponential { mean_ns } => SimDuration(stream.exponential(*mean_ns) as u64),
            Sampler::Constant { ns } => SimDuration(*ns),
            Sampler::Uniform { min_ns, span_ns } => SimDuration(min_ns + stream.up_to(*span_ns)),
            Sampler::LogNormal(d) => SimDuration(d.sample(stream.rng()) as u64),
            Sampler::Pareto { min_ns, inv_alpha } => {
                // 1 − U is in (0, 1], so the power is finite; `as u64` saturates far tails.
                SimDuration((min_ns * (1.0 - stream.unit()).powf(-inv_alpha)) as u64)
            }
        }
    }
}
