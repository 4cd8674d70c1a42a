//! Admission control, one code for both sides: Envoy's local rate limit
//! ([`crate::protections::rate_limit`]) and the concurrency limiter
//! ([`crate::protections::concurrency_limit`]), in front of a service's slots and queue
//! (`services.<s>.rate_limit`, `concurrency_limit`) or on the attempts of a call edge
//! (`calls.<callee>.rate_limit`, `concurrency_limit`). Owns [`Admission`] (admit: a rate-limit
//! token, then a limiter permit; release: the permit goes back with its sample), how both are
//! compiled from the configuration, and where a permit is kept until its request ends
//! ([`keep_permit`]: by slab index, in a table written only where a limiter is configured).

use super::{Reason, Verdict};
use crate::ix::ClassIx;
use crate::protections::concurrency_limit::{
    ConcurrencyLimit, Limiter, Partition, Permit, Release,
};
use crate::protections::rate_limit::{Bucket, RateLimit};
use crate::rng::Stream;
use crate::time::SimTime;

/// One admission gate.
#[derive(Debug)]
pub(crate) enum Admission {
    /// Envoy local rate limit: a request that finds no token is refused (`rate_limited`).
    RateLimit(Bucket),
    /// A concurrency limiter: a request over the limit is refused (`limited`); an admitted one
    /// holds a permit until it ends.
    Limiter(Box<Limiter>),
}

impl Admission {
    /// The admission gates of one place, in the order they admit: the rate limit, then the
    /// limiter (drawing from `stream`, partitioned by request class).
    pub(crate) fn compile(
        rate_limit: Option<RateLimit>,
        concurrency_limit: Option<ConcurrencyLimit>,
        stream: impl FnOnce() -> Stream,
        partitions: &[Partition],
        class_names: &[&str],
    ) -> impl Iterator<Item = Admission> {
        let rate = rate_limit.map(|r| Admission::RateLimit(Bucket::new(r)));
        let limiter = concurrency_limit.map(|c| {
            Admission::Limiter(Box::new(
                Limiter::new(c, stream()).partitioned(partitions, class_names),
            ))
        });
        rate.into_iter().chain(limiter)
    }

    /// A request of `class` asks to pass at `now`; an admitted request's limiter permit is put in
    /// `permit`.
    #[inline]
    pub(crate) fn admit(
        &mut self,
        now: SimTime,
        class: ClassIx,
        permit: &mut Option<Permit>,
    ) -> Verdict {
        match self {
            Admission::RateLimit(bucket) => {
                if bucket.try_take(now) {
                    Verdict::Pass
                } else {
                    Verdict::Refuse(Reason::RateLimited)
                }
            }
            Admission::Limiter(limiter) => match limiter.acquire(now, class) {
                Some(p) => {
                    *permit = Some(p);
                    Verdict::Pass
                }
                None => Verdict::Refuse(Reason::Limited),
            },
        }
    }

    /// The request admitted at slab index `index` ended at `now` as `how` (`responded`: a reply
    /// or a timeout ended it): its permit, in `permits`, goes back to the limiter.
    #[inline]
    pub(crate) fn release(
        &mut self,
        now: SimTime,
        permits: &[Permit],
        index: usize,
        how: Release,
        responded: bool,
    ) {
        if let Admission::Limiter(limiter) = self {
            limiter.release(now, permits[index], how, responded);
        }
    }

    /// The limiter, if this is one (the time series read its limit).
    pub(crate) fn limiter_mut(&mut self) -> Option<&mut Limiter> {
        match self {
            Admission::Limiter(l) => Some(l),
            Admission::RateLimit(_) => None,
        }
    }
}

/// Keeps the permit of the record at slab index `index` in `permits`, growing the table to
/// `capacity` (the slab's) the first time it is too short.
#[inline]
pub(crate) fn keep_permit(
    permits: &mut Vec<Permit>,
    index: usize,
    capacity: usize,
    permit: Permit,
) {
    if permits.len() <= index {
        permits.resize(capacity.max(index + 1), Permit::default());
    }
    permits[index] = permit;
}
