//! The service gate: the protections configured on one service, compiled into a list
//! ([`ServiceGate`]) of [`ServiceGuard`]s per replica, and the hooks `model::service` calls as a
//! request goes through the replica. Each guard's live state is the runtime rule of its module in
//! [`crate::protections`]; this file only says at which hook it acts and what it answers there.
//!
//! The hooks, in the order a request meets them:
//!
//! 1. [`ServiceGate::admit`] — an arrival, after the faults let it in and before it takes a slot
//!    or a place in the queue: a gate may **refuse** it (the local rate limit, then the
//!    concurrency limiter, whose permit the request then holds). A refused request gets the
//!    service's reject reply.
//! 2. [`ServiceGate::dequeue`] — a freed slot takes a queued request: a gate may **refuse** it,
//!    which drops it with an `error` reply (`drop_expired`, then `max_queue_time`, then CoDel —
//!    asked only when the ones before passed). [`ServiceGate::queue_empty`]: the queue was found
//!    empty (CoDel leaves its dropping state).
//! 3. [`ServiceGate::finish`] — the request leaves the replica (completed, dropped, shed,
//!    cancelled, or turned away after admission by a full queue): the limiter takes its permit
//!    back, with a sample or without.
//!
//! At each hook the guards are asked in list order, which is [`ServiceGate::compile`]'s
//! registration order; the first refusal ends the hook.

use super::admission::Admission;
use super::{Reason, Verdict};
use crate::ix::ClassIx;
use crate::protections::codel::CodelState;
use crate::protections::concurrency_limit::{Limiter, Permit, Release};
use crate::protections::shedding::{expired, waited_too_long};
use crate::rng::Stream;
use crate::scenario::Service;
use crate::time::{SimDuration, SimTime};

/// Hook bits: which hooks a guard acts at.
const ADMIT: u8 = 1;
const DEQUEUE: u8 = 2;
const FINISH: u8 = 4;
/// The queue found empty (part of hook 2): only CoDel listens, so the other dequeue guards do not
/// make every emptied queue walk the list.
const QUEUE_EMPTY: u8 = 8;

/// One protection at a service replica, with its live state.
#[derive(Debug)]
pub(crate) enum ServiceGuard {
    /// Local rate limit and concurrency limiter in front of the slots and queue (shared with
    /// edges).
    Admission(Admission),
    /// `drop_expired`: drop a dequeued request whose deadline has passed.
    DropExpired,
    /// `max_queue_time`: drop a dequeued request that waited longer than this.
    MaxQueueTime(SimDuration),
    /// CoDel at dequeue (`codel`).
    Codel(CodelState),
}

impl ServiceGuard {
    /// The guard's name (the registration table names guards by it).
    #[cfg(test)]
    pub(crate) const fn name(&self) -> &'static str {
        match self {
            ServiceGuard::Admission(Admission::RateLimit(_)) => "rate_limit",
            ServiceGuard::Admission(Admission::Limiter(_)) => "concurrency_limit",
            ServiceGuard::DropExpired => "drop_expired",
            ServiceGuard::MaxQueueTime(_) => "max_queue_time",
            ServiceGuard::Codel(_) => "codel",
        }
    }

    /// The hooks this guard acts at.
    const fn hooks(&self) -> u8 {
        match self {
            ServiceGuard::Admission(Admission::RateLimit(_)) => ADMIT,
            ServiceGuard::Admission(Admission::Limiter(_)) => ADMIT | FINISH,
            ServiceGuard::DropExpired | ServiceGuard::MaxQueueTime(_) => DEQUEUE,
            ServiceGuard::Codel(_) => DEQUEUE | QUEUE_EMPTY,
        }
    }

    /// Events this guard can schedule per request it sees, beyond the model's own (the work,
    /// the reply): none — a refusal at admission or a drop at dequeue is answered by the reply
    /// the model schedules for every request anyway.
    pub(crate) const fn events_per_request(&self) -> u32 {
        0
    }
}

/// The protections configured on one service replica, in hook order; empty without any.
#[derive(Debug, Default)]
pub(crate) struct ServiceGate {
    guards: Box<[ServiceGuard]>,
    /// The union of the guards' hook bits: a hook no guard acts at returns at once.
    acts: u8,
}

impl ServiceGate {
    /// The gate of replica `r` of service `s` (`limiter_stream` gives the limiter's stream).
    /// **Registration**: a new service protection adds its line here, at the place its checks
    /// take in each hook's order, its variant above, and its arms in the hooks it acts at.
    pub(crate) fn compile(
        s: &Service,
        limiter_stream: impl FnOnce() -> Stream,
        class_names: &[&str],
    ) -> ServiceGate {
        let mut guards: Vec<ServiceGuard> = Admission::compile(
            s.rate_limit,
            s.concurrency_limit,
            limiter_stream,
            &s.limit_partitions,
            class_names,
        )
        .map(ServiceGuard::Admission)
        .collect();
        if s.drop_expired {
            guards.push(ServiceGuard::DropExpired);
        }
        if let Some(m) = s.max_queue_time {
            guards.push(ServiceGuard::MaxQueueTime(m));
        }
        if let Some(c) = s.codel {
            guards.push(ServiceGuard::Codel(CodelState::new(c)));
        }
        let acts = guards.iter().fold(0, |acts, g| acts | g.hooks());
        ServiceGate {
            guards: guards.into_boxed_slice(),
            acts,
        }
    }

    /// The names of its guards, in order.
    #[cfg(test)]
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.guards.iter().map(ServiceGuard::name).collect()
    }

    /// Events the replica's guards can schedule per request, summed
    /// ([`ServiceGuard::events_per_request`]).
    pub(crate) fn events_per_request(&self) -> u32 {
        self.guards
            .iter()
            .map(ServiceGuard::events_per_request)
            .sum()
    }

    /// Hook 1: a request of request class `class` arrives at `now`. A concurrency limiter's
    /// permit for it is put in `permit`.
    #[inline]
    pub(crate) fn admit(
        &mut self,
        now: SimTime,
        class: ClassIx,
        permit: &mut Option<Permit>,
    ) -> Verdict {
        if self.acts & ADMIT == 0 {
            return Verdict::Pass;
        }
        for g in self.guards.iter_mut() {
            if let ServiceGuard::Admission(a) = g
                && let refused @ Verdict::Refuse(_) = a.admit(now, class, permit)
            {
                return refused;
            }
        }
        Verdict::Pass
    }

    /// Hook 2: a request with `deadline`, queued for `wait`, is dequeued at `now`.
    #[inline]
    pub(crate) fn dequeue(
        &mut self,
        now: SimTime,
        deadline: SimTime,
        wait: SimDuration,
    ) -> Verdict {
        if self.acts & DEQUEUE == 0 {
            return Verdict::Pass;
        }
        for g in self.guards.iter_mut() {
            let drop = match g {
                ServiceGuard::DropExpired => {
                    expired(true, deadline, now).then_some(Reason::DroppedExpired)
                }
                ServiceGuard::MaxQueueTime(m) => {
                    waited_too_long(Some(*m), wait).then_some(Reason::DroppedQueueTime)
                }
                ServiceGuard::Codel(codel) => {
                    codel.should_drop(now, wait).then_some(Reason::DroppedCodel)
                }
                ServiceGuard::Admission(_) => None,
            };
            if let Some(reason) = drop {
                return Verdict::Refuse(reason);
            }
        }
        Verdict::Pass
    }

    /// Hook 2, the queue found empty: CoDel leaves its dropping state.
    #[inline]
    pub(crate) fn queue_empty(&mut self) {
        if self.acts & QUEUE_EMPTY == 0 {
            return;
        }
        for g in self.guards.iter_mut() {
            if let ServiceGuard::Codel(codel) = g {
                codel.on_empty();
            }
        }
    }

    /// Hook 3: the request at slab index `job` (its permit in `permits`) leaves at `now` as
    /// `how`; `responded` says whether the service replied.
    #[inline]
    pub(crate) fn finish(
        &mut self,
        now: SimTime,
        permits: &[Permit],
        job: usize,
        how: Release,
        responded: bool,
    ) {
        if self.acts & FINISH == 0 {
            return;
        }
        for g in self.guards.iter_mut() {
            if let ServiceGuard::Admission(a) = g {
                a.release(now, permits, job, how, responded);
            }
        }
    }

    /// The concurrency limiter, if the service has one (time series).
    pub(crate) fn limiter_mut(&mut self) -> Option<&mut Limiter> {
        self.guards.iter_mut().find_map(|g| match g {
            ServiceGuard::Admission(a) => a.limiter_mut(),
            _ => None,
        })
    }
}
