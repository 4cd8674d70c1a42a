//! The simulation's side of the client: a user request's arrival, each attempt it sends, and what
//! happens when one times out, fails or succeeds, up to the request's end. (Each class's live
//! state is the parent module's [`super::ClassState`]; these are the methods of [`Simulation`] on
//! it, apart from it so that the model's root and this module form no file cycle.)

use crate::ix::{ClassIx, ReplicaIx};
use crate::model::slab::Handle;
use crate::model::{Attempt, Event, Owner, Simulation, User, Via};
use crate::protections::retry::backoff_wait;
use crate::protections::retry_on::Failure;
use crate::protections::timeout::{attempt_timeout, propagated_deadline};
use crate::time::{SimDuration, SimTime};

impl Simulation<'_> {
    /// A user request of `class` arrives: record it, send its first attempt, and draw the class's
    /// next arrival.
    pub(in crate::model) fn on_user_arrival(&mut self, class: ClassIx) {
        let now = self.now();
        let window = self.window_of(now);
        self.rec.user_arrived(class, now, window);
        let deadline = self.sc.classes[class]
            .client
            .call_timeout
            .map_or(SimTime::NEVER, |ct| now + ct);
        let user = self.users.insert(User {
            arrival: now,
            attempts: 0,
            window,
            deadline,
            prev_wait: SimDuration::ZERO,
            class,
        });
        if let Some(t) = &mut self.spans {
            t.user_arrived(user);
        }
        self.client_send(user);
        self.schedule_next_arrival(class, false);
    }

    /// Sends the user request's next attempt to the entry service.
    pub(in crate::model) fn client_send(&mut self, user: u32) {
        let now = self.now();
        let class = self.users[user].class;
        let client = &self.sc.classes[class].client;
        let Some(timeout) = attempt_timeout(client.attempt_timeout, self.users[user].deadline, now)
        else {
            // The call timeout passed while the client waited to retry: the request fails now.
            self.client_gives_up(user);
            return;
        };
        let u = &mut self.users[user];
        u.attempts += 1;
        let retry = u.attempts > 1;
        self.rec.client_attempt(class);
        let deadline = propagated_deadline(client.propagate_deadline, now, timeout);
        let attempt = self.attempts.insert(Attempt {
            owner: Owner::User(user),
            call: 0,
            retry,
            replica: ReplicaIx::new(0),
            class,
            child: Handle::NONE,
            next: Handle::NONE,
        });
        if let Some(t) = &mut self.spans {
            let n = self.users[user].attempts;
            t.client_attempt(attempt, user, n, client.entry, class, now);
        }
        self.engine
            .schedule_in(timeout, Event::AttemptTimeout { attempt });
        let child = self.send_to(Via::Client(class), client.entry, attempt, deadline);
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.child = child;
        }
    }

    /// The client's attempt timed out; `child` is the entry job it abandons.
    pub(in crate::model) fn client_attempt_timed_out(&mut self, user: u32, child: Handle) {
        let class = self.users[user].class;
        if self.sc.classes[class].client.cancel_on_abandon && !child.is_none() {
            self.cancel_job(child);
        }
        self.client_attempt_failed(user, Failure::Timeout);
    }

    /// The user's attempt failed (timeout, error or reject): retry after the interval or the
    /// backoff, or give up (no retries left, a failure `retry_on` does not retry, or the call
    /// timeout gone).
    pub(in crate::model) fn client_attempt_failed(&mut self, user: u32, failure: Failure) {
        let now = self.now();
        let u = self.users[user];
        let client = &self.sc.classes[u.class].client;
        if u.attempts > client.retries || !client.retry_on.retries(failure) || now >= u.deadline {
            self.client_gives_up(user);
            return;
        }
        let mut wait = match &client.backoff {
            None => client.retry_interval,
            Some(b) => {
                let w = backoff_wait(
                    b,
                    u.attempts - 1,
                    u.prev_wait,
                    &mut self.classes[u.class].jitter,
                );
                self.users[user].prev_wait = w;
                w
            }
        };
        if now + wait > u.deadline {
            // The call timeout ends the request while it waits: it fails at that instant.
            wait = u.deadline - now;
        }
        self.engine.schedule_in(wait, Event::ClientRetry { user });
    }

    /// The user request ends failed.
    fn client_gives_up(&mut self, user: u32) {
        let u = self.users.remove(user);
        if let Some(t) = &mut self.spans {
            t.user_ended(user);
        }
        let now = self.now();
        self.rec
            .user_ended(u.class, u.arrival, now, u.window, false);
        self.user_request_ended(u.class);
    }

    /// The user's attempt succeeded; `job` is the entry service's job that answered, whose
    /// accepted call tree becomes goodput.
    pub(in crate::model) fn client_attempt_succeeded(&mut self, user: u32, job: Handle) {
        if let Some(j) = self.jobs.get(job) {
            let n = self.sc.services.len();
            let base = job.index as usize * n;
            for s in 0..n {
                self.rec.services[s].useful += self.useful[base + s] as u64;
            }
            self.rec.services[j.service].useful += 1;
        }
        let u = self.users.remove(user);
        if let Some(t) = &mut self.spans {
            t.user_ended(user);
        }
        let now = self.now();
        self.rec.user_ended(u.class, u.arrival, now, u.window, true);
        self.user_request_ended(u.class);
    }
}
