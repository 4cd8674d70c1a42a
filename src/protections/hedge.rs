//! Hedged requests on one edge (`services.<caller>.calls.<callee>.hedge`): after `delay` without a
//! reply the caller sends another attempt, up to `max_hedges` more per call; the first success
//! wins and the others are abandoned. As in gRFC A6, a failed hedge sends the next one at once, an
//! edge hedges or retries (not both), and hedges draw on the edge's A6 bucket like retries. The
//! hedge timer and its bookkeeping live in `model::calls`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::time::SimDuration;

/// Default hedges per call at most.
pub(crate) const DEFAULT_MAX_HEDGES: u32 = 1;
/// Most hedges per call accepted.
pub(crate) const MAX_HEDGES: u32 = 10;
/// Events hedging schedules, per attempt sent on a hedged edge: the hedge timer (`HedgeFire`), set
/// once when the call starts and once more after each hedge sent, so never more timers than
/// attempts of the call. Summed by [`crate::guard::events_per_send`].
pub(crate) const EVENTS_PER_ATTEMPT: u32 = 1;

/// Hedged requests: send another attempt after `delay` without a reply; the first success wins.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HedgeRaw {
    /// Wait this long for a reply before sending a hedge. Required.
    pub delay: DurationText,
    /// Hedges per call at most.
    #[schemars(extend("default" = DEFAULT_MAX_HEDGES))]
    pub max_hedges: Option<u32>,
}

/// Hedged requests on one edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hedge {
    /// `delay`: wait this long for a reply before sending a hedge.
    pub delay: SimDuration,
    /// `max_hedges`: hedges per call at most (default 1).
    pub max_hedges: u32,
}

/// Checks `hedge` at `key`, on an edge that also sets `retries`.
pub(crate) fn validate(
    key: &str,
    h: &HedgeRaw,
    retries: u32,
    p: &mut impl Problems,
) -> Option<Hedge> {
    if retries > 0 {
        p.problem(
            key,
            "an edge hedges or retries, not both (gRFC A6); remove `retries` or `hedge`".into(),
        );
        return None;
    }
    let max_hedges = h.max_hedges.unwrap_or(DEFAULT_MAX_HEDGES);
    if max_hedges == 0 || max_hedges > MAX_HEDGES {
        p.problem(
            &format!("{key}.max_hedges"),
            format!("must be between 1 and {MAX_HEDGES}"),
        );
        return None;
    }
    let delay = super::positive(&format!("{key}.delay"), h.delay.0, p)?;
    Some(Hedge { delay, max_hedges })
}

#[cfg(test)]
mod tests {
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        check(
            At::Edge,
            &[
                (
                    "retries: 1\nhedge: {delay: 10ms}",
                    "hedge",
                    "an edge hedges or retries, not both (gRFC A6); remove `retries` or `hedge`",
                ),
                (
                    "hedge: {delay: 10ms, max_hedges: 0}",
                    "hedge.max_hedges",
                    "must be between 1 and 10",
                ),
                (
                    "hedge: {delay: 10ms, max_hedges: 11}",
                    "hedge.max_hedges",
                    "must be between 1 and 10",
                ),
                (
                    "hedge: {delay: 0s}",
                    "hedge.delay",
                    "must be longer than 0s",
                ),
            ],
        );
        accepted(
            At::Edge,
            &[
                "hedge: {delay: 10ms, max_hedges: 10}",
                "retries: 0\nhedge: {delay: 1ms}",
            ],
        );
    }
}
