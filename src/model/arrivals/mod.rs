//! Arrivals beyond the one-rate shorthand (whose draw stays in `schedule_next_arrival`). Owns two
//! shaped arrival processes:
//!
//! - a load profile: the exact non-homogeneous Poisson process by inversion of the integrated rate
//!   Λ (unit exponential masses from the stream `arrivals/profile`), or, for `process: constant`,
//!   an arrival wherever Λ crosses the next integer ([`crate::scenario::profile`] defines the
//!   curve);
//! - closed-loop users: each of `users` users thinks (a draw from `arrivals/think`), sends a user
//!   request, waits for its end (success or final failure), thinks again and sends the next, until
//!   arrivals stop. The first request of each user also follows a think time;
//! - a replayed trace: one arrival at each of its instants, in order.

mod sim;

use super::dist::Sampler;
use std::sync::Arc;

use crate::rng::Stream;
use crate::scenario::rate::RateCurve;
use crate::scenario::{Fault, RequestClass};
use crate::time::SimTime;

/// Events arrivals schedule per user request, under every arrival process (Poisson, constant,
/// profile, closed loop, trace): its arrival (`UserArrival`). Summed by
/// [`crate::guard::events_per_user_bound`].
pub const EVENTS_PER_USER_REQUEST: u32 = 1;

/// The live arrival process of a shaped scenario.
#[derive(Debug)]
pub(crate) enum Shaped {
    Profile {
        curve: RateCurve,
        stream: Stream,
    },
    Closed {
        users: u32,
        think: Sampler,
        stream: Stream,
    },
    /// A replayed trace and the index of its next row.
    Trace {
        times: Arc<[SimTime]>,
        next: usize,
    },
}

impl Shaped {
    /// The process of `class`'s arrivals, `None` for the one-rate shorthand; `label` names the
    /// class's streams ([`crate::model::client::class_label`]).
    pub(crate) fn new(
        seed: u64,
        class: &RequestClass,
        faults: &[Fault],
        label: &dyn Fn(&str) -> String,
    ) -> Option<Box<Shaped>> {
        let a = &class.arrivals;
        if let Some(times) = &a.trace {
            return Some(Box::new(Shaped::Trace {
                times: times.clone(),
                next: 0,
            }));
        }
        if let Some(c) = &a.closed {
            return Some(Box::new(Shaped::Closed {
                users: c.users,
                think: Sampler::new(&c.think_time),
                stream: Stream::new(seed, &label("arrivals/think")),
            }));
        }
        Some(Box::new(Shaped::Profile {
            curve: RateCurve::new(a, faults)?,
            stream: Stream::new(seed, &label("arrivals/profile")),
        }))
    }
}
