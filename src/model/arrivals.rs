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

use super::client::class_label;
use super::dist::Sampler;
use super::{Event, Simulation};
use std::sync::Arc;

use crate::rng::Stream;
use crate::scenario::profile::RateCurve;
use crate::scenario::{ArrivalProcess, Fault, RequestClass};
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
    /// The process of `class`'s arrivals, `None` for the one-rate shorthand.
    pub(crate) fn new(seed: u64, class: &RequestClass, faults: &[Fault]) -> Option<Box<Shaped>> {
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
                stream: Stream::new(seed, &class_label(class, "arrivals/think")),
            }));
        }
        Some(Box::new(Shaped::Profile {
            curve: RateCurve::new(a, faults)?,
            stream: Stream::new(seed, &class_label(class, "arrivals/profile")),
        }))
    }
}

impl Simulation<'_> {
    /// Schedules the next arrival of a profile (if one comes before arrivals end), or, at the
    /// start of a closed loop, every user's first request.
    pub(super) fn schedule_shaped_arrival(&mut self, class: u16, first: bool) {
        let now = self.now();
        let end = self.arrivals_end;
        let process = self.sc.classes[class as usize].arrivals.process;
        let Some(shaped) = self.classes[class as usize].shaped.as_deref_mut() else {
            return;
        };
        let arrival = Event::UserArrival { class };
        match shaped {
            Shaped::Profile { curve, stream } => {
                let mass = match process {
                    ArrivalProcess::Constant if first => 0.0,
                    ArrivalProcess::Constant => 1.0,
                    _ => stream.exponential(1.0),
                };
                if let Some(at) = curve.advance(now, mass)
                    && at < end
                {
                    self.engine.schedule_at(at, arrival);
                }
            }
            Shaped::Closed {
                users,
                think,
                stream,
            } if first => {
                for _ in 0..*users {
                    let at = now + think.sample(stream);
                    if at < end {
                        self.engine.schedule_at(at, arrival);
                    }
                }
            }
            Shaped::Closed { .. } => {}
            Shaped::Trace { times, next } => {
                if let Some(&at) = times.get(*next) {
                    *next += 1;
                    self.engine.schedule_at(at, arrival);
                }
            }
        }
    }

    /// A user request of `class` ended: in a closed loop, its user thinks and sends the next one.
    #[inline]
    pub(super) fn user_request_ended(&mut self, class: u16) {
        let Some(Shaped::Closed { think, stream, .. }) =
            self.classes[class as usize].shaped.as_deref_mut()
        else {
            return;
        };
        let at = self.engine.now() + think.sample(stream);
        if at < self.arrivals_end {
            self.engine.schedule_at(at, Event::UserArrival { class });
        }
    }
}
