//! The simulation's side of the shaped arrival processes: scheduling a profile's next arrival or
//! a closed loop's first requests, and a closed-loop user's next request after its previous one
//! ended. (The processes themselves are the parent module's [`Shaped`]; this file holds the
//! methods of [`Simulation`] that drive them, apart from it so that the model's root, which holds
//! the processes, and these methods, which read the root's `Simulation`, form no file cycle.)

use super::Shaped;
use crate::ix::ClassIx;
use crate::model::{Event, Simulation};
use crate::scenario::ArrivalProcess;

impl Simulation<'_> {
    /// Schedules the next arrival of a profile (if one comes before arrivals end), or, at the
    /// start of a closed loop, every user's first request.
    pub(in crate::model) fn schedule_shaped_arrival(&mut self, class: ClassIx, first: bool) {
        let now = self.now();
        let end = self.arrivals_end;
        let process = self.sc.classes[class].arrivals.process;
        let Some(shaped) = self.classes[class].shaped.as_deref_mut() else {
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
    pub(in crate::model) fn user_request_ended(&mut self, class: ClassIx) {
        let Some(Shaped::Closed { think, stream, .. }) = self.classes[class].shaped.as_deref_mut()
        else {
            return;
        };
        let at = self.engine.now() + think.sample(stream);
        if at < self.arrivals_end {
            self.engine.schedule_at(at, Event::UserArrival { class });
        }
    }
}
