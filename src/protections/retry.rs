//! Retries, at the client and on every edge: after a failed attempt (timeout, error or reject, as
//! `retry_on` allows, see [`super::retry_on`]) a caller tries again, `retries` times at most. The
//! client waits a fixed `retry_interval`, or a `backoff` like an edge's; an edge waits an
//! exponential backoff drawn from the caller's own jitter stream. With v = min(cap, base·mⁿ) before
//! retry n (0-based, m = `multiplier`, default 2), the shapes (`backoff.jitter`) are those of Marc
//! Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog) and gRPC's:
//! `full` (default) U[0, v] — gRFC A6's retry backoff and Envoy's; `equal` v/2 + U[0, v/2];
//! `decorrelated` min(cap, U[base, 3·prev]) with prev the previous wait (base before the first);
//! `none` v; `proportional` U[v·(1−f), v·(1+f)] with f = `jitter_fraction` (gRPC's connection
//! backoff, grpc/grpc doc/connection-backoff.md: ±20 %). On an edge, a retry is also subject to the
//! deadline, the call timeout, the A6 throttle, the retry budget and retry-after hints (see
//! `model::calls`, which asks each of those modules).

use schemars::JsonSchema;
use serde::Deserialize;

use super::DurationText;
use super::Problems;
use crate::rng::Stream;
use crate::time::SimDuration;

/// Largest retry count accepted on any hop.
pub(crate) const MAX_RETRIES: u32 = 100;
/// Default retries after a failed attempt.
pub(crate) const DEFAULT_RETRIES: u32 = 0;
/// Events retrying schedules, per attempt sent on a hop with `retries` above 0: at most one wait
/// before the next attempt after it fails (`ClientRetry` at the client, `EdgeRetry` on an edge;
/// none when the wait is zero). Summed by [`crate::guard::events_per_send`].
pub(crate) const EVENTS_PER_ATTEMPT: u32 = 1;
/// Default fixed wait before each client retry.
pub(crate) const DEFAULT_RETRY_INTERVAL: SimDuration = SimDuration::ZERO;

/// Default growth factor of the backoff per retry.
pub(crate) const DEFAULT_MULTIPLIER: f64 = 2.0;
/// Default share of `proportional` jitter (gRPC's connection backoff: ±20 %).
pub(crate) const DEFAULT_JITTER_FRACTION: f64 = 0.2;
/// Default jitter shape.
pub(crate) const DEFAULT_JITTER: &str = "full";
/// Largest `multiplier` accepted.
pub(crate) const MAX_MULTIPLIER: f64 = 100.0;
/// With `jitter: envoy`, the cap when none is given, as a multiple of `base` (Envoy's
/// `RetryBackOff.max_interval` default, api/envoy/config/route/v3/route_components.proto).
pub(crate) const ENVOY_DEFAULT_MAX_FACTOR: u64 = 10;
/// One millisecond in nanoseconds, Envoy's backoff unit.
const MS: u64 = 1_000_000;

/// Decorrelated jitter's growth factor (Brooker: `sleep = min(cap, random_between(base, sleep·3))`).
pub(crate) const DECORRELATED_FACTOR: u64 = 3;

/// Exponential backoff before each retry: with v = min(cap, base·multiplierⁿ) before retry n
/// (n = 0, 1, …), wait U[0, v] (`full` jitter, the default) or another `jitter` shape.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackoffRaw {
    /// The first retry waits up to this long. Required.
    pub base: DurationText,
    /// Upper bound of v (default none).
    pub cap: Option<DurationText>,
    /// How the wait is drawn around v: `full` U[0, v], `equal` v/2 + U[0, v/2], `decorrelated`
    /// min(cap, U[base, 3·previous wait]), `none` v, `proportional` U[v(1−f), v(1+f)].
    #[schemars(extend("default" = DEFAULT_JITTER))]
    pub jitter: Option<JitterRaw>,
    /// f of `proportional` jitter, a share in [0, 1].
    #[schemars(extend("default" = DEFAULT_JITTER_FRACTION))]
    pub jitter_fraction: Option<f64>,
    /// Growth of v per retry, at least 1 (not with `decorrelated`, which grows by 3).
    #[schemars(extend("default" = DEFAULT_MULTIPLIER))]
    pub multiplier: Option<f64>,
}

/// The jitter shapes of a backoff.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum JitterRaw {
    /// U[0, v] (the default; gRFC A6, Envoy).
    Full,
    /// v/2 + U[0, v/2].
    Equal,
    /// min(cap, U[base, 3·previous wait]), the previous wait being `base` before the first retry.
    Decorrelated,
    /// Exactly v.
    None,
    /// U[v·(1−f), v·(1+f)], f = `jitter_fraction` (gRPC connection backoff).
    Proportional,
    /// Envoy's `JitteredBackOffStrategy`: whole milliseconds U{0 … i−1}, i the interval that
    /// starts at `base` and doubles while below half of `cap` (then is `cap`); `cap` defaults to
    /// 10 × base.
    Envoy,
}

/// A jitter shape; `Proportional` carries its fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// U[0, v] (the default).
    Full,
    /// v/2 + U[0, v/2].
    Equal,
    /// min(cap, U[base, 3·previous wait]).
    Decorrelated,
    /// Exactly v.
    None,
    /// U[v·(1−f), v·(1+f)], with f (`jitter_fraction`) in [0, 1].
    Proportional(f64),
    /// Envoy's `JitteredBackOffStrategy`, in whole milliseconds.
    Envoy,
}

/// Exponential backoff: v = min(cap, base·multiplierⁿ) before retry n (n = 0, 1, …), drawn around
/// v by `jitter`. A zero base retries at once (no `backoff` key).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// `base`: v before the first retry (0: retry at once).
    pub base: SimDuration,
    /// `cap`: upper bound of v (`None`: unbounded, except Envoy's 10 × base).
    pub cap: Option<SimDuration>,
    /// `jitter`: how the wait is drawn around v.
    pub jitter: Jitter,
    /// `multiplier`: growth of v per retry, at least 1 (default 2).
    pub multiplier: f64,
}

impl Backoff {
    /// No backoff: retry at once.
    pub const NONE: Backoff = Backoff {
        base: SimDuration::ZERO,
        cap: None,
        jitter: Jitter::Full,
        multiplier: DEFAULT_MULTIPLIER,
    };

    /// A fixed wait before every retry (the client's `retry_interval`).
    pub const fn fixed(d: SimDuration) -> Backoff {
        Backoff {
            base: d,
            cap: None,
            jitter: Jitter::None,
            multiplier: 1.0,
        }
    }
}

/// Checks a retry count at `key` (default [`DEFAULT_RETRIES`]).
pub(crate) fn validate_retries(key: &str, r: Option<u32>, p: &mut impl Problems) -> u32 {
    let r = r.unwrap_or(DEFAULT_RETRIES);
    if r > MAX_RETRIES {
        p.problem(key, format!("must be at most {MAX_RETRIES}"));
    }
    r
}

/// Checks `backoff` at `key` ([`Backoff::NONE`] when absent).
pub(crate) fn validate_backoff(
    key: &str,
    b: Option<&BackoffRaw>,
    p: &mut impl Problems,
) -> Backoff {
    let Some(b) = b else {
        return Backoff::NONE;
    };
    if let Some(cap) = b.cap
        && cap.0 < b.base.0
    {
        p.problem(
            &format!("{key}.cap"),
            "must be at least `backoff.base`".into(),
        );
    }
    let multiplier = b.multiplier.unwrap_or(DEFAULT_MULTIPLIER);
    if !(multiplier.is_finite() && (1.0..=MAX_MULTIPLIER).contains(&multiplier)) {
        p.problem(
            &format!("{key}.multiplier"),
            format!("must be a number in [1, {MAX_MULTIPLIER}]"),
        );
    }
    let shape = b.jitter.unwrap_or(JitterRaw::Full);
    let mut cap = b.cap.map(|d| d.0);
    if shape == JitterRaw::Envoy {
        if b.multiplier.is_some() {
            p.problem(
                &format!("{key}.multiplier"),
                "does not apply to `envoy` jitter, which doubles (Envoy's JitteredBackOffStrategy); \
                 remove it"
                    .into(),
            );
        }
        let whole_ms = |d: SimDuration| d.0.is_multiple_of(MS);
        if b.base.0.0 < MS || !whole_ms(b.base.0) {
            p.problem(
                &format!("{key}.base"),
                "must be whole milliseconds, at least 1ms, with `jitter: envoy` (Envoy counts \
                 milliseconds)"
                    .into(),
            );
        }
        if let Some(c) = b.cap
            && !whole_ms(c.0)
        {
            p.problem(
                &format!("{key}.cap"),
                "must be whole milliseconds with `jitter: envoy` (Envoy counts milliseconds)"
                    .into(),
            );
        }
        cap = Some(cap.unwrap_or(SimDuration(
            b.base.0.0.saturating_mul(ENVOY_DEFAULT_MAX_FACTOR),
        )));
    }
    if b.multiplier.is_some() && shape == JitterRaw::Decorrelated {
        p.problem(
            &format!("{key}.multiplier"),
            "does not apply to `decorrelated` jitter, which grows by 3 (Brooker); remove it".into(),
        );
    }
    if b.jitter_fraction.is_some() && shape != JitterRaw::Proportional {
        p.problem(
            &format!("{key}.jitter_fraction"),
            "applies only to `jitter: proportional`".into(),
        );
    }
    let fraction = b.jitter_fraction.unwrap_or(DEFAULT_JITTER_FRACTION);
    if !(fraction.is_finite() && (0.0..=1.0).contains(&fraction)) {
        p.problem(
            &format!("{key}.jitter_fraction"),
            "must be a share in [0, 1]".into(),
        );
    }
    Backoff {
        base: b.base.0,
        cap,
        jitter: match shape {
            JitterRaw::Full => Jitter::Full,
            JitterRaw::Equal => Jitter::Equal,
            JitterRaw::Decorrelated => Jitter::Decorrelated,
            JitterRaw::None => Jitter::None,
            JitterRaw::Proportional => Jitter::Proportional(fraction),
            JitterRaw::Envoy => Jitter::Envoy,
        },
        multiplier,
    }
}

/// `min(cap, base·multiplierⁿ)`, the v of retry `n` (0-based). The default multiplier 2 is
/// computed in integers (a shift), any other in floating point, saturating.
pub(crate) fn backoff_value(backoff: &Backoff, n: u32) -> SimDuration {
    let upper = if backoff.multiplier == DEFAULT_MULTIPLIER {
        backoff
            .base
            .0
            .saturating_mul(1u64.checked_shl(n).unwrap_or(u64::MAX))
    } else {
        let v = backoff.base.0 as f64 * backoff.multiplier.powi(n.min(i32::MAX as u32) as i32);
        if v >= u64::MAX as f64 {
            u64::MAX
        } else {
            v as u64
        }
    };
    SimDuration(backoff.cap.map_or(upper, |c| upper.min(c.0)))
}

/// The longest wait before retry `n` (0-based) under the backoff's jitter shape: v for `full`,
/// `equal` and `none`, v·(1+f) for `proportional`, min(cap, base·3ⁿ⁺¹) for `decorrelated`.
pub(crate) fn max_backoff(backoff: &Backoff, n: u32) -> SimDuration {
    match backoff.jitter {
        Jitter::Full | Jitter::Equal | Jitter::None => backoff_value(backoff, n),
        Jitter::Envoy => SimDuration(envoy_interval_ms(backoff, n).saturating_sub(1) * MS),
        Jitter::Proportional(f) => {
            let v = backoff_value(backoff, n).0 as f64 * (1.0 + f);
            SimDuration(if v >= u64::MAX as f64 {
                u64::MAX
            } else {
                v as u64
            })
        }
        Jitter::Decorrelated => {
            let upper = backoff
                .base
                .0
                .saturating_mul(DECORRELATED_FACTOR.saturating_pow(n.saturating_add(1)));
            SimDuration(backoff.cap.map_or(upper, |c| upper.min(c.0)))
        }
    }
}

/// Envoy's backoff interval before retry `n` (0-based), in milliseconds: `JitteredBackOffStrategy`
/// (envoyproxy/envoy source/common/common/backoff_strategy.cc) starts at `base_interval`, and
/// after each retry doubles it while it is below half of `max_interval` (integer halving), else
/// sets it to `max_interval`; the wait is `random() % interval`, so U{0 … interval − 1} ms
/// (Envoy's `min(…, max_interval)` never binds, the interval being at most the max).
pub(crate) fn envoy_interval_ms(backoff: &Backoff, n: u32) -> u64 {
    let max = backoff.cap.map_or(u64::MAX, |c| c.0 / MS);
    let mut interval = backoff.base.0 / MS;
    for _ in 0..n {
        if interval >= max {
            break;
        }
        interval = if interval < max / 2 {
            interval * 2
        } else {
            max
        };
    }
    interval.max(1)
}

/// The full-jitter wait before retry `n`: U[0, min(cap, base·2ⁿ)].
#[inline]
pub(crate) fn full_jitter(backoff: &Backoff, n: u32, stream: &mut Stream) -> SimDuration {
    if backoff.base.is_zero() {
        return SimDuration::ZERO;
    }
    SimDuration(stream.up_to(backoff_value(backoff, n).0))
}

/// The wait before retry `n` (0-based); `prev` is the previous wait of the same call (ignored but
/// by `decorrelated`, which starts from `base` when `prev` is zero). One draw from `stream` for
/// every shape but `none`; `full` draws exactly as [`full_jitter`].
#[inline]
pub(crate) fn backoff_wait(
    backoff: &Backoff,
    n: u32,
    prev: SimDuration,
    stream: &mut Stream,
) -> SimDuration {
    if backoff.base.is_zero() {
        return SimDuration::ZERO;
    }
    let between = |lo: u64, hi: u64, s: &mut Stream| lo + s.up_to(hi.saturating_sub(lo));
    let d = match backoff.jitter {
        Jitter::Full => full_jitter(backoff, n, stream).0,
        Jitter::Equal => {
            let v = backoff_value(backoff, n).0;
            v / 2 + stream.up_to(v / 2)
        }
        Jitter::None => backoff_value(backoff, n).0,
        Jitter::Proportional(f) => {
            let v = backoff_value(backoff, n).0 as f64;
            let lo = (v * (1.0 - f)) as u64;
            let hi = v * (1.0 + f);
            between(
                lo,
                if hi >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    hi as u64
                },
                stream,
            )
        }
        Jitter::Envoy => stream.up_to(envoy_interval_ms(backoff, n).saturating_sub(1)) * MS,
        Jitter::Decorrelated => {
            let base = backoff.base.0;
            let prev = if prev.is_zero() { base } else { prev.0 };
            let d = between(base, prev.saturating_mul(DECORRELATED_FACTOR), stream);
            backoff.cap.map_or(d, |c| d.min(c.0))
        }
    };
    SimDuration(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[test]
    fn bad_snippets() {
        for at in [At::Client, At::Edge] {
            check(at, &[("retries: 101", "retries", "must be at most 100")]);
        }
        check(
            At::Edge,
            &[
                (
                    "backoff: {base: 20ms, cap: 10ms}",
                    "backoff.cap",
                    "must be at least `backoff.base`",
                ),
                ("backoff: {cap: 10ms}", "backoff", "missing field `base`"),
                (
                    "backoff: {base: 10ms, multiplier: 0.5}",
                    "backoff.multiplier",
                    "must be a number in [1, 100]",
                ),
                (
                    "backoff: {base: 10ms, jitter: decorrelated, multiplier: 3}",
                    "backoff.multiplier",
                    "does not apply to `decorrelated` jitter, which grows by 3 (Brooker); remove it",
                ),
                (
                    "backoff: {base: 10ms, jitter_fraction: 0.2}",
                    "backoff.jitter_fraction",
                    "applies only to `jitter: proportional`",
                ),
                (
                    "backoff: {base: 10ms, jitter: proportional, jitter_fraction: 2}",
                    "backoff.jitter_fraction",
                    "must be a share in [0, 1]",
                ),
                (
                    "backoff: {base: 10ms, jitter: envoy, multiplier: 3}",
                    "backoff.multiplier",
                    "does not apply to `envoy` jitter, which doubles (Envoy's \
                     JitteredBackOffStrategy); remove it",
                ),
                (
                    "backoff: {base: 1500us, jitter: envoy}",
                    "backoff.base",
                    "must be whole milliseconds, at least 1ms, with `jitter: envoy` (Envoy counts \
                     milliseconds)",
                ),
                (
                    "backoff: {base: 10ms, cap: 20500us, jitter: envoy}",
                    "backoff.cap",
                    "must be whole milliseconds with `jitter: envoy` (Envoy counts milliseconds)",
                ),
            ],
        );
        check(
            At::Client,
            &[(
                "retries: 2\nretry_interval: 10ms\nbackoff: {base: 10ms}",
                "backoff",
                "give either `retry_interval` (a fixed wait) or `backoff`, not both",
            )],
        );
        accepted(
            At::Client,
            &["retries: 2\nbackoff: {base: 10ms, jitter: equal, multiplier: 1.5}"],
        );
        accepted(
            At::Edge,
            &["retries: 100\nbackoff: {base: 10ms, cap: 10ms}"],
        );
    }

    #[test]
    fn stays_within_the_doubling_bound_and_the_cap() {
        let mut s = Stream::new(1, "t");
        let b = Backoff {
            base: SimDuration::from_millis(10),
            cap: Some(SimDuration::from_millis(25)),
            ..Backoff::NONE
        };
        for n in 0..6 {
            let bound = (10u64 << n).min(25) * 1_000_000;
            let draws: Vec<u64> = (0..500).map(|_| full_jitter(&b, n, &mut s).0).collect();
            assert!(draws.iter().all(|&d| d <= bound), "retry {n}");
            assert!(
                draws.iter().any(|&d| d > bound / 2),
                "retry {n} never used the upper half"
            );
            assert!(
                draws.iter().any(|&d| d < bound / 2),
                "retry {n} never used the lower half"
            );
        }
    }

    #[test]
    fn zero_base_means_no_wait_and_huge_exponents_do_not_overflow() {
        let mut s = Stream::new(1, "t");
        let none = Backoff::NONE;
        assert_eq!(full_jitter(&none, 3, &mut s), SimDuration::ZERO);
        let huge = Backoff {
            base: SimDuration::from_secs(1),
            ..Backoff::NONE
        };
        let _ = full_jitter(&huge, 200, &mut s);
        for jitter in [
            Jitter::Equal,
            Jitter::Decorrelated,
            Jitter::None,
            Jitter::Proportional(0.2),
        ] {
            let b = Backoff { jitter, ..huge };
            let _ = backoff_wait(&b, 200, SimDuration(u64::MAX / 2), &mut s);
            let _ = max_backoff(&b, 200);
        }
        let b = Backoff {
            multiplier: 1.5,
            ..huge
        };
        assert_eq!(backoff_value(&b, 5000), SimDuration(u64::MAX));
    }

    const MS: u64 = 1_000_000;

    fn shaped(jitter: Jitter) -> Backoff {
        Backoff {
            base: SimDuration::from_millis(100),
            cap: Some(SimDuration::from_millis(1000)),
            jitter,
            multiplier: 2.0,
        }
    }

    #[test]
    fn full_shape_draws_exactly_as_before() {
        let b = shaped(Jitter::Full);
        let (mut s1, mut s2) = (Stream::new(9, "j"), Stream::new(9, "j"));
        for n in 0..8 {
            assert_eq!(
                backoff_wait(&b, n, SimDuration::ZERO, &mut s1),
                full_jitter(&b, n, &mut s2)
            );
        }
    }

    /// Hand-computed: base 100 ms, cap 1 s, multiplier 2 ⇒ v = 100, 200, 400, 800, 1000, 1000 ms.
    /// Equal jitter waits in [v/2, v] = [50, 100], [100, 200], [200, 400], [400, 800], [500, 1000].
    #[test]
    fn equal_jitter_stays_in_the_upper_half() {
        let b = shaped(Jitter::Equal);
        let mut s = Stream::new(3, "j");
        for (n, v) in [(0, 100), (1, 200), (2, 400), (3, 800), (4, 1000), (5, 1000)] {
            let draws: Vec<u64> = (0..400)
                .map(|_| backoff_wait(&b, n, SimDuration::ZERO, &mut s).0)
                .collect();
            let (lo, hi) = (v * MS / 2, v * MS);
            assert!(draws.iter().all(|&d| (lo..=hi).contains(&d)), "retry {n}");
            assert!(
                draws.iter().any(|&d| d < lo + (hi - lo) / 4),
                "retry {n}: low end unused"
            );
            assert!(
                draws.iter().any(|&d| d > hi - (hi - lo) / 4),
                "retry {n}: high end unused"
            );
            assert_eq!(max_backoff(&b, n), SimDuration(v * MS));
        }
    }

    /// Hand-computed (Brooker): base 100 ms, cap 1 s. The first wait is U[100, 300] ms (prev =
    /// base); after a wait of 250 ms the next is U[100, 750] ms; after 900 ms, U[100, 2700] cut to
    /// the cap, so at most 1000 ms and often exactly 1000 ms.
    /// Envoy's intervals, worked by hand from backoff_strategy.cc: the interval starts at the
    /// base and doubles while below ⌊max/2⌋, else becomes max; the wait is U{0 … interval−1} ms.
    #[test]
    fn envoy_jitter_follows_jittered_backoff_strategy() {
        let envoy = |base: u64, cap: u64| Backoff {
            base: SimDuration::from_millis(base),
            cap: Some(SimDuration::from_millis(cap)),
            jitter: Jitter::Envoy,
            multiplier: 2.0,
        };
        // Defaults 25 ms / 250 ms: 25, 50, 100, 200, then 200 ≥ 125 → 250.
        let b = envoy(25, 250);
        let got: Vec<u64> = (0..7).map(|n| envoy_interval_ms(&b, n)).collect();
        assert_eq!(got, [25, 50, 100, 200, 250, 250, 250]);
        // An odd max: 3 ≥ ⌊7/2⌋ = 3 → 7 at once (min(cap, base·2ⁿ) would give 6 first).
        let odd = envoy(3, 7);
        let got: Vec<u64> = (0..3).map(|n| envoy_interval_ms(&odd, n)).collect();
        assert_eq!(got, [3, 7, 7]);
        // base = max stays there.
        assert_eq!(envoy_interval_ms(&envoy(10, 10), 5), 10);
        // The draws: whole milliseconds in [0, interval − 1], both ends reached.
        let mut s = Stream::new(9, "j");
        for (n, interval) in [(0u32, 25u64), (2, 100), (4, 250)] {
            let draws: Vec<u64> = (0..3000)
                .map(|_| backoff_wait(&b, n, SimDuration::ZERO, &mut s).0)
                .collect();
            assert!(draws.iter().all(|d| d % MS == 0), "whole ms");
            assert!(draws.iter().all(|&d| d <= (interval - 1) * MS), "retry {n}");
            assert!(draws.contains(&0) && draws.contains(&((interval - 1) * MS)));
            assert_eq!(max_backoff(&b, n), SimDuration((interval - 1) * MS));
        }
    }

    #[test]
    fn envoy_jitter_defaults_its_cap_to_ten_bases() {
        let raw: BackoffRaw =
            yaml_serde::from_str("{base: 25ms, jitter: envoy}").expect("valid backoff");
        struct Found(Vec<String>);
        impl Problems for Found {
            fn problem(&mut self, key: &str, message: String) {
                self.0.push(format!("{key}: {message}"));
            }
        }
        let mut p = Found(Vec::new());
        let b = validate_backoff("backoff", Some(&raw), &mut p);
        assert!(p.0.is_empty(), "{:?}", p.0);
        assert_eq!(b.cap, Some(SimDuration::from_millis(250)));
        assert_eq!(b.jitter, Jitter::Envoy);
    }

    #[test]
    fn decorrelated_jitter_bounds() {
        let b = shaped(Jitter::Decorrelated);
        let mut s = Stream::new(5, "j");
        for (prev, hi) in [(0, 300), (250, 750), (900, 1000)] {
            let draws: Vec<u64> = (0..400)
                .map(|_| backoff_wait(&b, 0, SimDuration(prev * MS), &mut s).0)
                .collect();
            assert!(
                draws.iter().all(|&d| (100 * MS..=hi * MS).contains(&d)),
                "prev {prev} ms"
            );
            assert!(
                draws.iter().any(|&d| d > (hi - 50) * MS),
                "prev {prev} ms: top unused"
            );
        }
        let capped = (0..400)
            .filter(|_| {
                backoff_wait(&b, 0, SimDuration(900 * MS), &mut s) == SimDuration(1000 * MS)
            })
            .count();
        // P(U[100, 2700] ≥ 1000) = 1700/2600 ≈ 0.65.
        assert!((200..320).contains(&capped), "{capped} of 400 hit the cap");
        // The bound the linter uses: min(cap, base·3ⁿ⁺¹) = 300 ms, 900 ms, then the cap.
        assert_eq!(max_backoff(&b, 0), SimDuration(300 * MS));
        assert_eq!(max_backoff(&b, 1), SimDuration(900 * MS));
        assert_eq!(max_backoff(&b, 2), SimDuration(1000 * MS));
    }

    /// No jitter waits exactly v; proportional with f = 0.2 waits in [0.8 v, 1.2 v] (gRPC), and the
    /// multiplier 1.5 gives v = 100, 150, 225 ms.
    #[test]
    fn none_and_proportional_shapes() {
        let mut s = Stream::new(7, "j");
        let none = shaped(Jitter::None);
        for (n, v) in [(0, 100), (1, 200), (3, 800), (9, 1000)] {
            assert_eq!(
                backoff_wait(&none, n, SimDuration::ZERO, &mut s),
                SimDuration(v * MS)
            );
        }
        let prop = Backoff {
            multiplier: 1.5,
            ..shaped(Jitter::Proportional(0.2))
        };
        for (n, v) in [(0, 100), (1, 150), (2, 225)] {
            let draws: Vec<u64> = (0..400)
                .map(|_| backoff_wait(&prop, n, SimDuration::ZERO, &mut s).0)
                .collect();
            let (lo, hi) = (v * MS * 8 / 10, v * MS * 12 / 10);
            assert!(draws.iter().all(|&d| (lo..=hi).contains(&d)), "retry {n}");
            assert!(
                draws.iter().any(|&d| d < v * MS * 9 / 10),
                "retry {n}: low end unused"
            );
            assert!(
                draws.iter().any(|&d| d > v * MS * 11 / 10),
                "retry {n}: high end unused"
            );
        }
        assert_eq!(max_backoff(&prop, 2), SimDuration(270 * MS));
    }
}
