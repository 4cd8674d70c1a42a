//! The edge gate: the protections configured on one call edge, compiled into a list
//! ([`EdgeGate`]) of [`EdgeGuard`]s, and the hooks the call state machine (`model::calls`,
//! `model::caller`) calls at each step of a call. Each guard's live state is the runtime rule
//! of its module in [`crate::protections`]; this file only says at which hook it acts and what it
//! answers there.
//!
//! The hooks, in the order a call meets them:
//!
//! 1. [`EdgeGate::call_start`] — a call begins, before its first attempt: the ratio retry budget
//!    takes its deposit.
//! 2. [`EdgeGate::pace`] — before each send (first attempt, retry, hedge), before the try counts
//!    toward the call's sends: a pacing gate may **hold** the send for a delay (the AWS adaptive
//!    mode's rate limiter). The held send comes back at step 3, not here.
//! 3. (the model: the try counts, and the attempt timeout is cut to the deadline — no time left
//!    fails the try as `deadline_exhausted`.)
//! 4. [`EdgeGate::before_send`] — a gate may **refuse** the attempt: circuit breaker, adaptive
//!    throttling (one draw from its stream), the local rate limit, the concurrency limiter (whose
//!    permit the attempt then holds). A refusal by the breaker fails the call (when nothing else
//!    is outstanding); the others fail the attempt as a local reject, retried like one.
//! 5. [`EdgeGate::on_settle`] — the attempt settled (reply, timeout, or abandoned): the limiter
//!    takes its permit back; on a reply or timeout the A6 bucket, the breaker, adaptive
//!    throttling's accepts and the AWS rate limiter learn the result, and a call's success refunds
//!    the AWS retry quota. No guard draws here and each touches only its own state, so their order
//!    among themselves does not change a run.
//! 6. [`EdgeGate::before_retry`] — a failed attempt would be retried (after the retry count, the
//!    deadline and `retry_on` allowed it) or hedged: a gate may **refuse** (retry-after "do not
//!    retry", the A6 bucket, the retry budget, the AWS retry quota) or ask to **hold** at least a
//!    delay (a retry-after hint, which the backoff then cannot undercut). A hedge asks the A6 bucket
//!    only.
//!
//! At each hook the guards are asked in list order, which is [`EdgeGate::compile`]'s registration
//! order; the first refusal ends the hook.

use super::admission::Admission;
use super::{CallMemo, Reason, Verdict};
use crate::ix::ClassIx;
use crate::model::Outcome;
use crate::protections::adaptive::Adaptive;
use crate::protections::aws_adaptive::{self, RateLimiter};
use crate::protections::breaker::Breaker;
use crate::protections::budget::{ConcurrentBudget, RatioBalance, RetryBudget};
use crate::protections::concurrency_limit::{Limiter, Permit, Release};
use crate::protections::pushback::{NO_RETRY_US, honored_wait};
use crate::protections::quota::{Quota, RetryQuota};
use crate::protections::throttle::TokenBucket;
use crate::rng::Stream;
use crate::scenario::{Edge, Scenario};
use crate::time::{SimDuration, SimTime};

/// Hook bits: which hooks a guard acts at.
const CALL_START: u8 = 1;
const PACE: u8 = 2;
const BEFORE_SEND: u8 = 4;
const ON_SETTLE: u8 = 8;
const BEFORE_RETRY: u8 = 16;

/// One protection on an edge, with its live state.
#[derive(Debug)]
pub(crate) enum EdgeGuard {
    /// `honor_retry_after`: a retry waits at least the callee's hint; "do not retry" refuses it.
    Pushback,
    /// gRFC A6 retry throttle (`retry_throttle`).
    Throttle(TokenBucket),
    /// Envoy retry budget, `kind: concurrent`.
    ConcurrentBudget(ConcurrentBudget),
    /// Finagle retry budget, `kind: ratio`: its balance.
    RatioBudget(RatioBalance),
    /// The AWS standard and adaptive modes' retry quota (`retry_quota`).
    Quota(Quota),
    /// The AWS adaptive mode's client-side send-rate limiter (boxed: it is large and rare).
    Pace(Box<RateLimiter>),
    /// Circuit breaker (`circuit_breaker`).
    Breaker(Breaker),
    /// Client-side adaptive throttling (`adaptive_throttle`) and its stream (boxed: the stream
    /// is large).
    Adaptive(Box<(Adaptive, Stream)>),
    /// Local rate limit and concurrency limiter on attempts (shared with services).
    Admission(Admission),
}

impl EdgeGuard {
    /// The guard's name (the registration table names guards by it).
    #[cfg(test)]
    pub(crate) const fn name(&self) -> &'static str {
        match self {
            EdgeGuard::Pushback => "pushback",
            EdgeGuard::Throttle(_) => "throttle",
            EdgeGuard::ConcurrentBudget(_) => "concurrent_budget",
            EdgeGuard::RatioBudget(_) => "ratio_budget",
            EdgeGuard::Quota(_) => "quota",
            EdgeGuard::Pace(_) => "pace",
            EdgeGuard::Breaker(_) => "breaker",
            EdgeGuard::Adaptive(_) => "adaptive",
            EdgeGuard::Admission(Admission::RateLimit(_)) => "rate_limit",
            EdgeGuard::Admission(Admission::Limiter(_)) => "concurrency_limit",
        }
    }

    /// The hooks this guard acts at.
    const fn hooks(&self) -> u8 {
        match self {
            EdgeGuard::Pushback => BEFORE_RETRY,
            EdgeGuard::Throttle(_) => ON_SETTLE | BEFORE_RETRY,
            EdgeGuard::ConcurrentBudget(_) => BEFORE_RETRY,
            EdgeGuard::RatioBudget(_) => CALL_START | BEFORE_RETRY,
            EdgeGuard::Quota(_) => ON_SETTLE | BEFORE_RETRY,
            EdgeGuard::Pace(_) => PACE | ON_SETTLE,
            EdgeGuard::Breaker(_) => BEFORE_SEND | ON_SETTLE,
            EdgeGuard::Adaptive(_) => BEFORE_SEND | ON_SETTLE,
            EdgeGuard::Admission(Admission::RateLimit(_)) => BEFORE_SEND,
            EdgeGuard::Admission(Admission::Limiter(_)) => BEFORE_SEND | ON_SETTLE,
        }
    }

    /// Events this guard can schedule per attempt on its edge, beyond the model's own (the
    /// attempt's timeout, its reply, a retry's backoff, a hedge's timer): the AWS rate limiter
    /// holds a send once, with one `RateLimitedSend` event; the others schedule nothing (a
    /// refusal ends or retries the call through the model's own events).
    pub(crate) const fn events_per_attempt(&self) -> u32 {
        match self {
            EdgeGuard::Pace(_) => aws_adaptive::EVENTS_PER_ATTEMPT,
            _ => 0,
        }
    }
}

/// The protections configured on one edge, in hook order; empty for an edge without any.
#[derive(Debug, Default)]
pub(crate) struct EdgeGate {
    guards: Box<[EdgeGuard]>,
    /// The union of the guards' hook bits: a hook no guard acts at returns at once.
    acts: u8,
}

/// How an attempt settled, for [`EdgeGate::on_settle`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Settled {
    /// The job stopped waiting for it (its call succeeded otherwise, or the job ended).
    Abandoned,
    /// Its timeout fired; `counts`: the failure takes an A6 token (`retry_on` retries timeouts).
    TimedOut { counts: bool },
    /// A reply came; `counts`: a failure that takes an A6 token (retryable, or pushback saying
    /// not to retry).
    Replied { outcome: Outcome, counts: bool },
}

/// A retry (or hedge) about to be decided, for [`EdgeGate::before_retry`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct RetryAsk {
    pub(crate) now: SimTime,
    /// A hedge (sent while the others are outstanding) rather than a retry.
    pub(crate) hedge: bool,
    /// The failed attempt's retry-after hint in microseconds (0 none, [`NO_RETRY_US`]).
    pub(crate) pushback_us: u32,
    /// The failed attempt timed out (the AWS quota charges more).
    pub(crate) timed_out: bool,
    /// Attempts outstanding on the edge, and how many of them are retries.
    pub(crate) active: u32,
    pub(crate) active_retries: u32,
}

impl EdgeGate {
    /// The gate of edge `e`: one guard per protection configured there. **Registration**: a new
    /// edge protection adds its line here, at the place its checks take in each hook's order,
    /// its variant above, and its arms in the hooks it acts at.
    pub(crate) fn compile(sc: &Scenario, e: &Edge, class_names: &[&str]) -> EdgeGate {
        let seed = sc.seed;
        let mut guards = Vec::new();
        if e.honor_retry_after {
            guards.push(EdgeGuard::Pushback);
        }
        if let Some(t) = e.throttle {
            guards.push(EdgeGuard::Throttle(TokenBucket::new(t)));
        }
        match e.retry_budget {
            Some(RetryBudget::Concurrent(b)) => guards.push(EdgeGuard::ConcurrentBudget(b)),
            Some(RetryBudget::Ratio(b)) => {
                guards.push(EdgeGuard::RatioBudget(RatioBalance::new(b)))
            }
            None => {}
        }
        if e.retry_quota.is_some() {
            guards.push(EdgeGuard::Quota(Quota::default()));
        }
        if e.retry_quota == Some(RetryQuota::AwsAdaptive) {
            guards.push(EdgeGuard::Pace(Box::new(RateLimiter::new(SimTime::ZERO))));
        }
        if let Some(b) = e.circuit_breaker {
            guards.push(EdgeGuard::Breaker(Breaker::new(b)));
        }
        if let Some(a) = e.adaptive_throttle {
            guards.push(EdgeGuard::Adaptive(Box::new((
                Adaptive::new(a),
                Stream::new(seed, &format!("throttle/{}", e.name)),
            ))));
        }
        guards.extend(
            Admission::compile(
                e.rate_limit,
                e.concurrency_limit,
                || Stream::new(seed, &format!("limiter/{}", e.name)),
                &e.limit_partitions,
                class_names,
            )
            .map(EdgeGuard::Admission),
        );
        let acts = guards.iter().fold(0, |acts, g| acts | g.hooks());
        EdgeGate {
            guards: guards.into_boxed_slice(),
            acts,
        }
    }

    /// The names of its guards, in order.
    #[cfg(test)]
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.guards.iter().map(EdgeGuard::name).collect()
    }

    /// Events the edge's guards can schedule per attempt, summed
    /// ([`EdgeGuard::events_per_attempt`]).
    pub(crate) fn events_per_attempt(&self) -> u32 {
        self.guards.iter().map(EdgeGuard::events_per_attempt).sum()
    }

    /// Whether any guard holds sends ([`EdgeGate::pace`]): the model only then works out the
    /// deadline the hold is cut to.
    #[inline]
    pub(crate) fn paces(&self) -> bool {
        self.acts & PACE != 0
    }

    /// Hook 1: a call begins at `now`.
    #[inline]
    pub(crate) fn call_start(&mut self, now: SimTime) {
        if self.acts & CALL_START == 0 {
            return;
        }
        for g in self.guards.iter_mut() {
            if let EdgeGuard::RatioBudget(balance) = g {
                // Finagle: every call deposits; its retries withdraw.
                balance.deposit(now);
            }
        }
    }

    /// Hook 2: a send at `now` on a call whose deadline is `deadline`. The AWS rate limiter
    /// holds a send without a token for the time its bucket needs, reserving the token (the
    /// bucket goes into debt, so held sends go in order, one event each), or until the deadline
    /// when that comes first (the send then finds no time, and reserves nothing). Nothing holds
    /// once the deadline has passed.
    #[inline]
    pub(crate) fn pace(&mut self, now: SimTime, deadline: SimTime) -> Verdict {
        if now >= deadline {
            return Verdict::Pass;
        }
        for g in self.guards.iter_mut() {
            if let EdgeGuard::Pace(l) = g
                && let Err(wait) = l.before_send(now)
            {
                let wait = if wait <= deadline - now {
                    l.reserve();
                    wait
                } else {
                    deadline - now
                };
                return Verdict::Hold(wait, Reason::Paced);
            }
        }
        Verdict::Pass
    }

    /// Hook 4: an attempt of request class `class` is about to be sent at `now`. A concurrency
    /// limiter's permit for it is put in `permit`.
    #[inline]
    pub(crate) fn before_send(
        &mut self,
        now: SimTime,
        class: ClassIx,
        permit: &mut Option<Permit>,
    ) -> Verdict {
        if self.acts & BEFORE_SEND == 0 {
            return Verdict::Pass;
        }
        for g in self.guards.iter_mut() {
            let verdict = match g {
                EdgeGuard::Breaker(b) => match b.allow(now) {
                    true => Verdict::Pass,
                    false => Verdict::Refuse(Reason::CircuitOpen),
                },
                EdgeGuard::Adaptive(adaptive) => {
                    let (a, stream) = &mut **adaptive;
                    let p = a.on_request(now);
                    match p > 0.0 && stream.unit() < p {
                        true => Verdict::Refuse(Reason::ThrottledLocally),
                        false => Verdict::Pass,
                    }
                }
                EdgeGuard::Admission(a) => a.admit(now, class, permit),
                _ => Verdict::Pass,
            };
            if verdict != Verdict::Pass {
                return verdict;
            }
        }
        Verdict::Pass
    }

    /// Hook 5: the attempt at slab index `attempt` settled at `now` as `settled`; its permit (if
    /// a limiter gave it one) is in `permits`, and `memo` is its call's gate memo.
    #[inline]
    pub(crate) fn on_settle(
        &mut self,
        now: SimTime,
        settled: Settled,
        permits: &[Permit],
        attempt: usize,
        memo: CallMemo,
    ) {
        if self.acts & ON_SETTLE == 0 {
            return;
        }
        let (how, responded, result) = match settled {
            Settled::Abandoned => (Release::Ignored, false, None),
            Settled::TimedOut { counts } => {
                (Release::Dropped, true, Some((Outcome::Error, counts)))
            }
            Settled::Replied { outcome, counts } => (
                match outcome {
                    Outcome::Success => Release::Success,
                    Outcome::Reject => Release::Dropped,
                    Outcome::Error | Outcome::Fatal => Release::Ignored,
                },
                true,
                Some((outcome, counts)),
            ),
        };
        for g in self.guards.iter_mut() {
            if let EdgeGuard::Admission(a) = g {
                a.release(now, permits, attempt, how, responded);
                continue;
            }
            let Some((outcome, counts)) = result else {
                continue;
            };
            let ok = outcome == Outcome::Success;
            match g {
                EdgeGuard::Throttle(b) => {
                    // gRFC A6: only failures that count take a token.
                    if ok {
                        b.on_success()
                    } else if counts {
                        b.on_failure()
                    }
                }
                EdgeGuard::Breaker(b) => b.on_result(now, ok),
                EdgeGuard::Adaptive(adaptive) if ok => adaptive.0.on_accept(now),
                // A reject is the AWS SDK's throttling error.
                EdgeGuard::Pace(l) => l.on_response(now, outcome == Outcome::Reject),
                // A reply's success is its call's success: the quota refunds what the call's
                // last retry took.
                EdgeGuard::Quota(q) if ok => q.on_call_success(memo.quota_cost as u32),
                _ => {}
            }
        }
    }

    /// Hook 6: a retry (or hedge) of a call whose gate memo is `memo` is about to be decided.
    #[inline]
    pub(crate) fn before_retry(&mut self, ask: RetryAsk, memo: &mut CallMemo) -> Verdict {
        if self.acts & BEFORE_RETRY == 0 {
            return Verdict::Pass;
        }
        let mut verdict = Verdict::Pass;
        for g in self.guards.iter_mut() {
            match g {
                EdgeGuard::Pushback if !ask.hedge => {
                    if ask.pushback_us == NO_RETRY_US {
                        return Verdict::Refuse(Reason::PushbackNoRetry);
                    }
                    if ask.pushback_us > 0 {
                        verdict = Verdict::Hold(
                            honored_wait(SimDuration::ZERO, ask.pushback_us),
                            Reason::PushbackHonored,
                        );
                    }
                }
                EdgeGuard::Throttle(b) if !b.allows_retry() => {
                    return Verdict::Refuse(if ask.hedge {
                        Reason::HedgesThrottled
                    } else {
                        Reason::RetriesThrottled
                    });
                }
                EdgeGuard::ConcurrentBudget(b)
                    if !ask.hedge && !b.allows_retry(ask.active, ask.active_retries) =>
                {
                    return Verdict::Refuse(Reason::BudgetDenied);
                }
                EdgeGuard::RatioBudget(balance) if !ask.hedge => {
                    match balance.try_withdraw(ask.now) {
                        true => {}
                        false => return Verdict::Refuse(Reason::BudgetDenied),
                    }
                }
                EdgeGuard::Quota(q) if !ask.hedge => {
                    // botocore RetryQuotaChecker: a refused acquisition is counted with the
                    // budgets.
                    let cost = Quota::cost(ask.timed_out);
                    if !q.acquire(cost) {
                        return Verdict::Refuse(Reason::BudgetDenied);
                    }
                    memo.quota_cost = cost as u8;
                }
                _ => {}
            }
        }
        verdict
    }

    /// The A6 bucket's tokens, if the edge has one (time series).
    pub(crate) fn throttle_tokens(&self) -> Option<f64> {
        self.guards.iter().find_map(|g| match g {
            EdgeGuard::Throttle(b) => Some(b.tokens()),
            _ => None,
        })
    }

    /// The concurrency limiter, if the edge has one (time series).
    pub(crate) fn limiter_mut(&mut self) -> Option<&mut Limiter> {
        self.guards.iter_mut().find_map(|g| match g {
            EdgeGuard::Admission(a) => a.limiter_mut(),
            _ => None,
        })
    }

    /// The circuit breaker, if the edge has one (its open count and time, at the end).
    pub(crate) fn breaker(&self) -> Option<&Breaker> {
        self.guards.iter().find_map(|g| match g {
            EdgeGuard::Breaker(b) => Some(b),
            _ => None,
        })
    }
}
