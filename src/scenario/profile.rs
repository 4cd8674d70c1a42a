//! Load profiles: the user arrival rate as a function of time, apart from faults. Owns the YAML
//! form of `arrivals.profile` ([`SegmentRaw`]), its validation with exact messages, the validated
//! [`Profile`] (contiguous pieces over the arrival period, steps and linear ramps), and
//! [`RateCurve`], the profile times the factors of the `surge` faults in force, which integrates the
//! rate (Λ) and inverts it: the arrival process of a profile is the exact non-homogeneous Poisson
//! process by inversion (`Λ(t_{n+1}) − Λ(t_n)` are unit exponentials, drawn from the stream
//! `arrivals/profile`), or, for `process: constant`, the deterministic process with arrivals where
//! Λ crosses each integer (`Λ(t_n) = n`, the first arrival at the first instant the rate is
//! positive).
//!
//! A segment `{at, rate}` is a step: `rate` from `at` until the next segment. A segment
//! `{at, to, rate, to_rate}` is a linear ramp from `rate` at `at` to `to_rate` at `to`; the rate
//! then stays at `to_rate` until the next segment. Segments are listed in time order, the first at
//! `0s`, and a ramp ends at or before the next segment's `at`. A profile is not a fault: it opens
//! no fault window and does not move the before/during/after windows nor recovery.

use schemars::JsonSchema;
use serde::Deserialize;

#[cfg(test)]
use super::Scenario;
use crate::config::duration::DurationText;
use crate::protections::Problems;
use crate::time::{SimDuration, SimTime};

/// Largest rate a segment may name (requests per second), as for `arrivals.rate`.
pub const MAX_SEGMENT_RATE: f64 = 10_000_000.0;
/// Most segments a profile may list.
pub const MAX_SEGMENTS: usize = 100_000;

/// One segment of a load profile: a step (`at`, `rate`) or a linear ramp (`at`, `to`, `rate`,
/// `to_rate`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SegmentRaw {
    /// Where the segment starts (the first segment starts at `0s`). Required.
    pub at: DurationText,
    /// For a ramp: where it ends; the rate then holds at `to_rate` until the next segment.
    pub to: Option<DurationText>,
    /// Requests per second from `at` (a step), or at `at` (a ramp). Required.
    pub rate: f64,
    /// For a ramp: requests per second at `to`.
    pub to_rate: Option<f64>,
}

/// A piece of the rate function: linear from `rate` at `from` to `to_rate` at `to`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// Where the piece starts (included).
    pub from: SimTime,
    /// Where it ends (excluded).
    pub to: SimTime,
    /// Requests per second at `from`.
    pub rate: f64,
    /// Requests per second at `to`, linear in between (equal to `rate` for a step).
    pub to_rate: f64,
}

/// A validated profile: contiguous pieces covering `[0, duration)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The pieces, in time order, each starting where the previous one ends.
    pub pieces: Vec<Piece>,
}

impl Profile {
    /// The largest rate the profile reaches.
    pub fn peak_rate(&self) -> f64 {
        self.pieces
            .iter()
            .map(|p| p.rate.max(p.to_rate))
            .fold(0.0, f64::max)
    }
}

/// Checks `arrivals.profile` (at `key`) against the arrival period `duration`.
pub(crate) fn validate(
    key: &str,
    segments: &[SegmentRaw],
    duration: SimDuration,
    problems: &mut impl Problems,
) -> Option<Profile> {
    if segments.is_empty() {
        problems.problem(
            key,
            "must list at least one segment, like `[{at: 0s, rate: 100}]`".into(),
        );
        return None;
    }
    if segments.len() > MAX_SEGMENTS {
        problems.problem(
            key,
            format!(
                "lists {} segments; at most {MAX_SEGMENTS} are accepted",
                segments.len()
            ),
        );
        return None;
    }
    let end = SimTime(duration.0);
    let mut ok = true;
    let rate_ok = |k: &str, r: f64, problems: &mut dyn FnMut(&str, String)| {
        if !r.is_finite() || r < 0.0 {
            problems(
                k,
                format!("must be a rate of zero or more requests per second, not {r}"),
            );
            false
        } else if r > MAX_SEGMENT_RATE {
            problems(
                k,
                format!("must be at most {MAX_SEGMENT_RATE} requests per second"),
            );
            false
        } else {
            true
        }
    };
    // (start, end of the segment's own ramp) of the previous segment.
    let mut prev: Option<(SimTime, SimTime)> = None;
    for (i, s) in segments.iter().enumerate() {
        let k = format!("{key}[{i}]");
        let at = SimTime(s.at.0.0);
        let mut report = |kk: &str, m: String| problems.problem(kk, m);
        ok &= rate_ok(&format!("{k}.rate"), s.rate, &mut report);
        if let Some(r) = s.to_rate {
            ok &= rate_ok(&format!("{k}.to_rate"), r, &mut report);
        }
        match (s.to, s.to_rate) {
            (Some(_), None) => {
                problems.problem(
                    &k,
                    "a ramp needs `to_rate` as well as `to` (a step gives only `at` and `rate`)"
                        .into(),
                );
                ok = false;
            }
            (None, Some(_)) => {
                problems.problem(
                    &k,
                    "a ramp needs `to` as well as `to_rate` (a step gives only `at` and `rate`)"
                        .into(),
                );
                ok = false;
            }
            _ => {}
        }
        if i == 0 && at != SimTime::ZERO {
            problems.problem(
                &format!("{k}.at"),
                format!("the first segment must start at 0s, not {}", s.at.0),
            );
            ok = false;
        }
        if at >= end {
            problems.problem(
                &format!("{k}.at"),
                format!(
                    "{} is not inside the arrival period [0s, {duration})",
                    s.at.0
                ),
            );
            ok = false;
        }
        let ramp_end = match s.to {
            Some(to) => {
                let to_t = SimTime(to.0.0);
                if to_t <= at {
                    problems.problem(
                        &format!("{k}.to"),
                        format!("must be after `at` ({})", s.at.0),
                    );
                    ok = false;
                } else if to_t > end {
                    problems.problem(
                        &format!("{k}.to"),
                        format!(
                            "{} is after the end of the arrival period ({duration})",
                            to.0
                        ),
                    );
                    ok = false;
                }
                to_t
            }
            None => at,
        };
        if let Some((p_at, p_end)) = prev {
            if at <= p_at {
                problems.problem(
                    &format!("{k}.at"),
                    format!(
                        "segments must be in time order: {} is not after the previous segment's \
                         `at` ({})",
                        s.at.0,
                        SimDuration(p_at.0)
                    ),
                );
                ok = false;
            } else if at < p_end {
                problems.problem(
                    &format!("{k}.at"),
                    format!(
                        "overlaps the previous segment's ramp, which runs until {}",
                        SimDuration(p_end.0)
                    ),
                );
                ok = false;
            }
        }
        prev = Some((at, ramp_end.max(at)));
    }
    if !ok {
        return None;
    }
    let mut pieces = Vec::with_capacity(segments.len() + 1);
    for (i, s) in segments.iter().enumerate() {
        let at = SimTime(s.at.0.0);
        let next = segments.get(i + 1).map_or(end, |n| SimTime(n.at.0.0));
        match (s.to, s.to_rate) {
            (Some(to), Some(to_rate)) => {
                let to = SimTime(to.0.0);
                pieces.push(Piece {
                    from: at,
                    to,
                    rate: s.rate,
                    to_rate,
                });
                if to < next {
                    pieces.push(Piece {
                        from: to,
                        to: next,
                        rate: to_rate,
                        to_rate,
                    });
                }
            }
            _ => pieces.push(Piece {
                from: at,
                to: next,
                rate: s.rate,
                to_rate: s.rate,
            }),
        }
    }
    Some(Profile { pieces })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Document;
    use crate::scenario::rate::RateCurve;
    use crate::time::NANOS_PER_SEC;
    use std::path::Path;

    fn scenario(arrivals: &str, faults: &str) -> Result<Scenario, String> {
        let text = format!(
            "duration: 60s\narrivals: {arrivals}\nclient: {{entry: a, attempt_timeout: 1s}}\n\
             services:\n  a: {{slots: 4, service_time: {{dist: constant, value: 1ms}}}}\n{faults}"
        );
        let doc = Document::from_text(Path::new("t.yaml"), &text).map_err(|e| e.to_string())?;
        Scenario::from_document(&doc).map_err(|e| e.to_string())
    }

    const STEP_RAMP: &str = "{profile: [{at: 0s, rate: 100}, {at: 20s, to: 40s, rate: 100, \
                             to_rate: 300}, {at: 50s, rate: 0}]}";

    #[test]
    fn steps_and_ramps_integrate_by_hand() {
        let sc = scenario(STEP_RAMP, "").unwrap();
        let c = RateCurve::new(&sc.classes[0].arrivals, &sc.faults).unwrap();
        // 20 s at 100, a ramp 100 → 300 over 20 s (mean 200), 10 s held at 300, 10 s at 0.
        let want = 2000.0 + 4000.0 + 3000.0;
        let got = c.integral(SimTime::ZERO, SimTime(60 * NANOS_PER_SEC));
        assert!((got - want).abs() < 1e-6, "{got}");
        assert_eq!(c.rate_at(SimTime(30 * NANOS_PER_SEC)), 200.0);
        assert_eq!(c.rate_at(SimTime(45 * NANOS_PER_SEC)), 300.0);
        assert_eq!(c.rate_at(SimTime(55 * NANOS_PER_SEC)), 0.0);
        assert_eq!(
            sc.rate(),
            300.0,
            "a profiled scenario's rate is the profile's peak"
        );
        assert!(
            sc.fault_window().is_none(),
            "a profile opens no fault window"
        );
        // The guard's expected arrivals come from the profile.
        let plan = crate::scenario::rate::RatePlan::new(&sc.classes[0].arrivals, &sc.faults);
        assert!((plan.expected_arrivals(sc.duration) - want).abs() < 1e-6);
    }

    #[test]
    fn surges_multiply_the_profile() {
        let sc = scenario(
            STEP_RAMP,
            "faults:\n  s: {kind: surge, factor: 2, from: 10s, to: 30s}\n",
        )
        .unwrap();
        let c = RateCurve::new(&sc.classes[0].arrivals, &sc.faults).unwrap();
        // [10, 20): 200/s; [20, 30): ramp 100 → 200 doubled = 200 → 400 (mean 300).
        let got = c.integral(SimTime(10 * NANOS_PER_SEC), SimTime(30 * NANOS_PER_SEC));
        assert!((got - (2000.0 + 3000.0)).abs() < 1e-6, "{got}");
    }

    #[test]
    fn advance_inverts_the_integral() {
        let sc = scenario(STEP_RAMP, "").unwrap();
        let c = RateCurve::new(&sc.classes[0].arrivals, &sc.faults).unwrap();
        // From 0: 2000 arrivals reach 20 s; 1500 more reach the ramp (100/s rising 10/s per
        // second) at x with 100 x + 5 x² = 1500 → x = 10 s, so 30 s.
        let at = c.advance(SimTime::ZERO, 3500.0).unwrap();
        assert!((at.as_secs_f64() - 30.0).abs() < 1e-6, "{at}");
        // More than the total mass: no arrival.
        assert_eq!(c.advance(SimTime::ZERO, 9000.5), None);
        // Mass 0 in a zero-rate stretch: the next instant the rate is positive (none here).
        assert_eq!(c.advance(SimTime(51 * NANOS_PER_SEC), 0.0), None);
        assert_eq!(c.advance(SimTime::ZERO, 0.0), Some(SimTime::ZERO));
    }

    #[test]
    fn bad_profiles_name_the_segment() {
        let cases = [
            (
                "{rate: 10, profile: [{at: 0s, rate: 10}]}",
                "`arrivals.profile`: give `rate` (one rate) or `profile` (segments), not both",
            ),
            ("{process: poisson}", "`arrivals`: needs `rate`"),
            (
                "{profile: [{at: 1s, rate: 10}]}",
                "`arrivals.profile[0].at`: the first segment must start at 0s",
            ),
            (
                "{profile: [{at: 0s, rate: 10}, {at: 0s, rate: 20}]}",
                "`arrivals.profile[1].at`: segments must be in time order",
            ),
            (
                "{profile: [{at: 0s, to: 20s, rate: 10, to_rate: 20}, {at: 10s, rate: 20}]}",
                "`arrivals.profile[1].at`: overlaps the previous segment's ramp, which runs until 20s",
            ),
            (
                "{profile: [{at: 0s, rate: -5}]}",
                "`arrivals.profile[0].rate`: must be a rate of zero or more requests per second",
            ),
            (
                "{profile: [{at: 0s, to: 10s, rate: 5}]}",
                "`arrivals.profile[0]`: a ramp needs `to_rate`",
            ),
            (
                "{profile: [{at: 0s, to: 90s, rate: 5, to_rate: 6}]}",
                "`arrivals.profile[0].to`: 1m 30s is after the end of the arrival period (1m)",
            ),
            (
                "{profile: []}",
                "`arrivals.profile`: must list at least one segment",
            ),
            (
                "{profile: [{at: 0s, rate: 0}]}",
                "less than one arrival on average",
            ),
            // Closed-loop users and traces (issue 14), validated beside the profile.
            (
                "{process: closed, users: 0, think_time: {dist: constant, value: 0s}}",
                "`arrivals.users`: must be at least 1",
            ),
            (
                "{process: closed, rate: 5, users: 2, think_time: {dist: constant, value: 1s}}",
                "`arrivals.rate`: closed-loop users set their own pace",
            ),
            (
                "{process: closed, users: 2}",
                "`arrivals`: `process: closed` needs `think_time`",
            ),
            (
                "{rate: 5, users: 3}",
                "`arrivals.users`: is a key of closed-loop arrivals",
            ),
            (
                "{trace: no-such-trace.csv}",
                "`arrivals.trace`: cannot read the trace no-such-trace.csv",
            ),
            (
                "{rate: 5, trace: no-such-trace.csv}",
                "`arrivals.rate`: a trace sets the arrival times",
            ),
        ];
        for (arrivals, want) in cases {
            let err = scenario(arrivals, "").expect_err(arrivals);
            assert!(err.contains(want), "{arrivals}: want `{want}` in\n{err}");
            assert!(err.contains("t.yaml:2"), "{arrivals}: no line in\n{err}");
        }
    }
}
