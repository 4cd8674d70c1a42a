//! How an attempt ended, from the caller's side ([`Outcome`]): what a reply carries, what the
//! caller's gates and retries read, and how a span names it. Its own file, below the model's
//! root and its gates, so that both can name it without a file cycle.

use crate::protections::retry_on::Failure;

/// How an attempt ended, from the caller's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    /// The callee failed the request (dropped it, a call of its own failed, an error fault).
    Error,
    /// The callee refused it (queue full, outage).
    Reject,
    /// The callee failed the request and marked the error non-retryable (`retryable_fraction`).
    Fatal,
}

impl Outcome {
    /// The failure kind of a failed outcome, as `retry_on` names it.
    #[inline]
    pub(super) fn failure(self) -> Failure {
        match self {
            Outcome::Reject => Failure::Reject,
            Outcome::Fatal => Failure::Fatal,
            Outcome::Error | Outcome::Success => Failure::Error,
        }
    }

    /// The outcome as a span says it: in words, and the reason of its error status.
    pub(super) fn in_words(self) -> (&'static str, Option<&'static str>) {
        match self {
            Outcome::Success => ("success", None),
            Outcome::Error => ("error", Some("error")),
            Outcome::Fatal => ("error", Some("non_retryable")),
            Outcome::Reject => ("rejected", Some("rejected")),
        }
    }
}
