//! The client side of a run. Owns user requests from arrival to their end: the first attempt, the
//! client retries after a timeout, error or reject (as `retry_on` allows; a fixed
//! `retry_interval` or a `backoff`), bounded together by `call_timeout`, optional cancellation of the
//! entry service's work when an attempt times out, and the success or failure that the windows,
//! latency histograms and goodput credit record. Each request class (`clients:`) has its own
//! client policy and its own live state ([`ClassState`]: arrival streams, backoff jitter, balancer,
//! network delay); a user request remembers its class.

mod sim;

use super::arrivals::Shaped;
use super::fleet;
use crate::protections::load_balancer::Balancer;
use crate::rng::Stream;
use crate::scenario::rate::RatePlan;
use crate::scenario::{DEFAULT_CLASS, RequestClass, Scenario};

/// The label of one of `class`'s random streams: `legacy` itself for the class `default` (so the
/// shorthand, and `clients: {default: …}`, draw exactly what a scenario of one class always drew),
/// `class/<name>/<legacy>` for any other class.
pub(super) fn class_label(class: &RequestClass, legacy: &str) -> String {
    if class.name == DEFAULT_CLASS {
        legacy.to_owned()
    } else {
        format!("class/{}/{legacy}", class.name)
    }
}

/// Live state of one request class's client.
#[derive(Debug)]
pub(crate) struct ClassState {
    /// The one-rate shorthand's exponential gaps (`arrivals`).
    pub(super) arrivals: Stream,
    /// The rate in force over time (surges).
    pub(super) rates: RatePlan,
    /// A load profile's, closed loop's or trace's arrival process (`None` for one rate).
    pub(super) shaped: Option<Box<Shaped>>,
    /// Backoff jitter (only drawn from with a client `backoff`).
    pub(super) jitter: Stream,
    /// The balancer toward a replicated entry service, and the network delay.
    pub(super) balancer: Option<Balancer>,
    pub(super) latency: Option<fleet::Latency>,
}

impl ClassState {
    /// The state of every class of `sc`, in class order.
    pub(super) fn all(sc: &Scenario) -> Vec<ClassState> {
        let seed = sc.seed;
        sc.classes
            .iter()
            .map(|class| {
                let client = &class.client;
                let label = |legacy: &str| class_label(class, legacy);
                ClassState {
                    arrivals: Stream::new(seed, &label("arrivals")),
                    rates: RatePlan::new(&class.arrivals, &sc.faults),
                    shaped: Shaped::new(seed, class, &sc.faults, &label),
                    jitter: Stream::new(seed, &label("client-jitter")),
                    balancer: fleet::balancer(
                        sc,
                        client.load_balancer,
                        client.entry,
                        &label("client"),
                    ),
                    latency: client
                        .latency
                        .as_ref()
                        .map(|d| fleet::Latency::new(seed, d, &label("client"))),
                }
            })
            .collect()
    }
}
