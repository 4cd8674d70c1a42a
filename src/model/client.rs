//! The client side of a run. Owns user requests from arrival to their end: the first attempt, the
//! fixed-interval client retries after a timeout, error or reject, optional cancellation of the
//! entry service's work when an attempt times out, and the success or failure that the windows,
//! latency histograms and goodput credit record.

use super::slab::Handle;
use super::{Attempt, CLIENT_EDGE, Event, Owner, Simulation, User};
use crate::protections::timeout::propagated_deadline;

impl Simulation<'_> {
    /// A user request arrives: record it, send its first attempt, and draw the next arrival.
    pub(super) fn on_user_arrival(&mut self) {
        let now = self.now();
        let window = self.window_of(now);
        self.rec.user_arrived(now, window);
        let user = self.users.insert(User {
            arrival: now,
            attempts: 0,
            window,
        });
        self.client_send(user);
        self.schedule_next_arrival(false);
    }

    /// Sends the user request's next attempt to the entry service.
    pub(super) fn client_send(&mut self, user: u32) {
        let now = self.now();
        let client = &self.sc.client;
        let u = &mut self.users[user];
        u.attempts += 1;
        let retry = u.attempts > 1;
        self.rec.users.client_attempts += 1;
        let timeout = client.attempt_timeout;
        let deadline = propagated_deadline(client.propagate_deadline, now, timeout);
        let attempt = self.attempts.insert(Attempt {
            owner: Owner::User(user),
            edge: CLIENT_EDGE,
            call: 0,
            retry,
            child: Handle::NONE,
            next: Handle::NONE,
        });
        self.engine
            .schedule_in(timeout, Event::AttemptTimeout { attempt });
        let child = self.deliver(client.entry as u32, attempt, deadline);
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.child = child;
        }
    }

    /// The client's attempt timed out; `child` is the entry job it abandons.
    pub(super) fn client_attempt_timed_out(&mut self, user: u32, child: Handle) {
        if self.sc.client.cancel_on_abandon && !child.is_none() {
            self.cancel_job(child);
        }
        self.client_attempt_failed(user);
    }

    /// The user's attempt failed (timeout, error or reject): retry after the interval or give up.
    pub(super) fn client_attempt_failed(&mut self, user: u32) {
        let client = &self.sc.client;
        if self.users[user].attempts <= client.retries {
            self.engine
                .schedule_in(client.retry_interval, Event::ClientRetry { user });
        } else {
            let u = self.users.remove(user);
            let now = self.now();
            self.rec.user_ended(u.arrival, now, u.window, false);
            self.user_request_ended();
        }
    }

    /// The user's attempt succeeded; `job` is the entry service's job that answered, whose
    /// accepted call tree becomes goodput.
    pub(super) fn client_attempt_succeeded(&mut self, user: u32, job: Handle) {
        if let Some(j) = self.jobs.get(job) {
            let n = self.sc.services.len();
            let base = job.index as usize * n;
            for s in 0..n {
                self.rec.services[s].useful += self.useful[base + s] as u64;
            }
            self.rec.services[j.service as usize].useful += 1;
        }
        let u = self.users.remove(user);
        let now = self.now();
        self.rec.user_ended(u.arrival, now, u.window, true);
        self.user_request_ended();
    }
}
