//! The `metrics:` section of a scenario: the metric definitions the user controls. Owns its YAML
//! shape ([`MetricsRaw`], unknown keys refused), its checks (each problem at its key path), the
//! validated [`MetricDefinitions`] the summary and the recorder read, and the names of the
//! quantile fields it adds to the run report. Without the section every definition is today's,
//! so the outputs of a scenario without it do not change by one byte:
//!
//! ```yaml
//! metrics:
//!   recovery: {threshold: 0.99, span: 3s}   # R2's rule (these are the defaults)
//!   quantiles: [0.5, 0.95, 0.99, 0.999]     # adds metrics.latency_quantiles (absent by default)
//!   windows:                                # adds metrics.windows.<name> (absent by default)
//!     warmup: [0s, 10s]
//!     peak: [20s, 40s]
//! ```
//!
//! Semantics (docs/model.md §3.4): `recovery` sets R2's share and span (whole seconds, since R2
//! counts arrivals per whole second); `quantiles` are nearest-rank over the same HDR histograms as
//! the fixed `*_p50_s`/`*_p99_s` fields; a window `[from, to)` of arrival time counts the user
//! requests arriving in it, independent of faults, with their success ratio and success-latency
//! quantiles.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::duration::DurationText;
use crate::protections::Problems;
use crate::time::{SimDuration, SimTime};

/// R2's default share of successes over a span: 99 %, in parts per million.
pub const DEFAULT_RECOVERY_PPM: u64 = 990_000;
/// R2's default span, whole seconds.
pub const DEFAULT_RECOVERY_SPAN_S: usize = 3;
/// The latency quantiles of windows and time series when `quantiles` is not given (those of the
/// fixed `success_latency_p50_s` and `success_latency_p99_s` fields).
pub const DEFAULT_QUANTILES: [f64; 2] = [0.5, 0.99];
/// Most quantiles one scenario may ask for.
pub const MAX_QUANTILES: usize = 16;
/// Most measurement windows one scenario may name (each holds a latency histogram).
pub const MAX_WINDOWS: usize = 16;

/// User-controlled metric definitions (default: today's rules, nothing added).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsRaw {
    /// R2, the recovery rule: the first whole second s at or after the fault window's end whose
    /// `span` seconds of arrivals succeed at a share of at least `threshold`.
    pub recovery: Option<RecoveryRaw>,
    /// Latency quantiles to report, each in (0, 1), like `[0.5, 0.95, 0.99, 0.999]`: adds
    /// `metrics.latency_quantiles` (success and failure latency at each) and sets the quantiles of
    /// `windows` and of the latency time series (default 0.5 and 0.99, the fixed fields' set).
    pub quantiles: Option<Vec<f64>>,
    /// Named measurement windows of arrival time, independent of faults: `name: [from, to]`
    /// (`to` after `from`, at most `duration`), each reported under `metrics.windows.<name>`.
    #[schemars(with = "Option<IndexMap<String, Vec<String>>>")]
    pub windows: Option<IndexMap<String, Vec<DurationText>>>,
}

/// The recovery rule (R2).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoveryRaw {
    /// Share of the span's arrivals that must succeed, in (0, 1], at most 6 decimals.
    #[schemars(extend("default" = 0.99))]
    pub threshold: Option<f64>,
    /// The span, a whole number of seconds between 1s and 1h.
    #[schemars(extend("default" = "3s"))]
    pub span: Option<DurationText>,
}

/// Validated metric definitions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricDefinitions {
    /// `recovery`: the rule R2 (`recovery_s`) applies (default 99 % over 3 s).
    pub recovery: RecoveryRule,
    /// `quantiles` as given (`None`: not asked, no `latency_quantiles` field).
    pub quantiles: Option<Vec<f64>>,
    /// `windows`: the named measurement windows, in the order written (empty: none).
    pub windows: Vec<Window>,
}

impl MetricDefinitions {
    /// The quantiles of windows and latency series: `quantiles`, or [`DEFAULT_QUANTILES`].
    pub fn series_quantiles(&self) -> &[f64] {
        self.quantiles.as_deref().unwrap_or(&DEFAULT_QUANTILES)
    }
}

/// R2: a span of `span_s` whole seconds with at least `threshold_ppm` parts per million of its
/// arrivals succeeding (an integer comparison, so 0.99 is exactly today's `ok·100 ≥ a·99`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryRule {
    /// The share of a span's arrivals that must succeed, in parts per million (990 000: 99 %).
    pub threshold_ppm: u64,
    /// The span's length, in whole seconds.
    pub span_s: usize,
}

impl Default for RecoveryRule {
    fn default() -> Self {
        RecoveryRule {
            threshold_ppm: DEFAULT_RECOVERY_PPM,
            span_s: DEFAULT_RECOVERY_SPAN_S,
        }
    }
}

impl RecoveryRule {
    /// Whether `ok` successes of `arrivals` arrivals meet the threshold (never for no arrival).
    pub fn met(&self, ok: u64, arrivals: u64) -> bool {
        arrivals > 0 && ok * 1_000_000 >= arrivals * self.threshold_ppm
    }
}

/// A named window `[from, to)` of arrival time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// Its key under `metrics.windows`, and under `metrics.windows` of the report.
    pub name: String,
    /// Its first instant of arrival time (included).
    pub from: SimTime,
    /// Its end (excluded); at most the run's `duration`.
    pub to: SimTime,
}

impl Window {
    /// Whether a request arriving at `at` belongs to the window.
    #[inline]
    pub fn contains(&self, at: SimTime) -> bool {
        self.from <= at && at < self.to
    }
}

/// The report name of quantile `q`: `p50`, `p95`, `p99`, `p99_9`, `p99_99`, `p0_1`.
pub fn quantile_name(q: f64) -> String {
    let pct = crate::util::number::trimmed(q * 100.0, 6);
    format!("p{}", pct.replace('.', "_"))
}

/// Checks the `metrics` section; `duration` is the arrival period (windows must lie in it).
pub(crate) fn validate(
    raw: Option<&MetricsRaw>,
    duration: SimDuration,
    p: &mut impl Problems,
) -> MetricDefinitions {
    let Some(raw) = raw else {
        return MetricDefinitions::default();
    };
    let mut out = MetricDefinitions::default();
    if let Some(r) = &raw.recovery {
        if let Some(t) = r.threshold {
            let ppm = (t * 1e6).round();
            if !(t > 0.0 && t <= 1.0) {
                p.problem(
                    "metrics.recovery.threshold",
                    format!("must be a share in (0, 1], like 0.99 for 99 %, not {t}"),
                );
            } else if (t * 1e6 - ppm).abs() > 1e-6 {
                p.problem(
                    "metrics.recovery.threshold",
                    format!("{t} has more than 6 decimals; round it (like 0.999)"),
                );
            } else {
                out.recovery.threshold_ppm = ppm as u64;
            }
        }
        let default_span = SimDuration::from_secs(DEFAULT_RECOVERY_SPAN_S as u64);
        if let Some(span) = crate::protections::whole_seconds_window(
            "metrics.recovery.span",
            r.span,
            default_span,
            p,
        ) {
            out.recovery.span_s = (span.0 / 1_000_000_000) as usize;
        }
    }
    if let Some(qs) = &raw.quantiles {
        if qs.is_empty() {
            p.problem(
                "metrics.quantiles",
                "must list at least one quantile, like [0.5, 0.99]; remove it for the default set"
                    .to_owned(),
            );
        } else if qs.len() > MAX_QUANTILES {
            p.problem(
                "metrics.quantiles",
                format!("lists {} quantiles; at most {MAX_QUANTILES}", qs.len()),
            );
        }
        let mut ok = true;
        for (i, &q) in qs.iter().enumerate() {
            let key = format!("metrics.quantiles[{i}]");
            if !(q > 0.0 && q < 1.0) {
                p.problem(
                    &key,
                    format!("must be a quantile strictly between 0 and 1, like 0.99, not {q}"),
                );
                ok = false;
            } else if qs[..i]
                .iter()
                .any(|&o| quantile_name(o) == quantile_name(q))
            {
                p.problem(
                    &key,
                    format!("{q} is listed twice (as {})", quantile_name(q)),
                );
                ok = false;
            }
        }
        if ok && !qs.is_empty() && qs.len() <= MAX_QUANTILES {
            out.quantiles = Some(qs.clone());
        }
    }
    if let Some(ws) = &raw.windows {
        if ws.len() > MAX_WINDOWS {
            p.problem(
                "metrics.windows",
                format!("names {} windows; at most {MAX_WINDOWS}", ws.len()),
            );
        }
        for (name, bounds) in ws.iter().take(MAX_WINDOWS) {
            let key = format!("metrics.windows.{name}");
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                p.problem(
                    &key,
                    format!(
                        "`{}` cannot name a window: use letters, digits, `_` and `-`",
                        crate::config::suggest::shorten(name)
                    ),
                );
                continue;
            }
            let [from, to] = bounds[..] else {
                p.problem(
                    &key,
                    format!(
                        "must be [from, to], two times of arrival like [20s, 40s], not {} values",
                        bounds.len()
                    ),
                );
                continue;
            };
            if to.0 <= from.0 {
                p.problem(
                    &key,
                    format!("ends at {} before it starts at {}", to.0, from.0),
                );
            } else if to.0 > duration && !duration.is_zero() {
                p.problem(
                    &key,
                    format!(
                        "ends at {} after arrivals stop ({duration}); windows measure user requests by arrival time",
                        to.0
                    ),
                );
            } else {
                out.windows.push(Window {
                    name: name.clone(),
                    from: SimTime(from.0.0),
                    to: SimTime(to.0.0),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Origin;
    use crate::scenario::{Document, Scenario};

    const BASE: &str = "duration: 60s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\nservices:\n  a: {slots: 1}\n";

    fn parse(snippet: &str) -> Result<Scenario, crate::config::ConfigError> {
        let text = format!("{BASE}metrics:\n{}", indent(snippet));
        let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
        Scenario::from_document(&doc)
    }

    fn indent(s: &str) -> String {
        s.lines().map(|l| format!("  {l}\n")).collect()
    }

    #[test]
    fn bad_snippets() {
        for (snippet, key, message) in [
            (
                "recovery: {threshold: 1.5}",
                "metrics.recovery.threshold",
                "must be a share in (0, 1], like 0.99 for 99 %, not 1.5",
            ),
            (
                "recovery: {threshold: 0}",
                "metrics.recovery.threshold",
                "must be a share in (0, 1], like 0.99 for 99 %, not 0",
            ),
            (
                "recovery: {threshold: 0.9999999}",
                "metrics.recovery.threshold",
                "0.9999999 has more than 6 decimals; round it (like 0.999)",
            ),
            (
                "recovery: {span: 1500ms}",
                "metrics.recovery.span",
                "must be a whole number of seconds between 1s and 1h",
            ),
            (
                "quantiles: []",
                "metrics.quantiles",
                "must list at least one quantile, like [0.5, 0.99]; remove it for the default set",
            ),
            (
                "quantiles: [0.5, 1]",
                "metrics.quantiles[1]",
                "must be a quantile strictly between 0 and 1, like 0.99, not 1",
            ),
            (
                "quantiles: [0.99, 0.990]",
                "metrics.quantiles[1]",
                "0.99 is listed twice (as p99)",
            ),
            (
                "windows: {peak: [40s, 20s]}",
                "metrics.windows.peak",
                "ends at 20s before it starts at 40s",
            ),
            (
                "windows: {peak: [20s]}",
                "metrics.windows.peak",
                "must be [from, to], two times of arrival like [20s, 40s], not 1 values",
            ),
            (
                "windows: {late: [50s, 70s]}",
                "metrics.windows.late",
                "ends at 1m 10s after arrivals stop (1m); windows measure user requests by arrival time",
            ),
            (
                "windows: {\"a.b\": [0s, 1s]}",
                "metrics.windows.a.b",
                "`a.b` cannot name a window: use letters, digits, `_` and `-`",
            ),
        ] {
            let err = parse(snippet).expect_err(snippet);
            let got: Vec<(String, String)> = err
                .diagnostics
                .iter()
                .map(|d| (d.key.clone(), d.message.clone()))
                .collect();
            assert_eq!(got, vec![(key.to_owned(), message.to_owned())], "{snippet}");
            // Every problem points at its line of the file (line 6 is `metrics:`).
            match &err.diagnostics[0].origin {
                Origin::File { line, .. } => assert!(line.is_some_and(|l| l >= 7), "{snippet}"),
                other => panic!("{other:?}"),
            }
        }
        // Unknown keys are refused, and all problems of the file come at once.
        let err = parse("recovery: {threshold: 2, spam: 3s}\nwindow: {a: [0s, 1s]}").unwrap_err();
        let keys: Vec<&str> = err.diagnostics.iter().map(|d| d.key.as_str()).collect();
        assert!(keys.contains(&"metrics.recovery.spam"), "{keys:?}");
        assert!(keys.contains(&"metrics.window"), "{keys:?}");
    }

    #[test]
    fn accepted_snippets_and_defaults() {
        let sc = parse("recovery: {threshold: 0.95, span: 5s}\nquantiles: [0.5, 0.95, 0.99, 0.999]\nwindows: {warmup: [0s, 10s], peak: [20s, 40s]}").unwrap();
        let m = &sc.metrics;
        assert_eq!(
            m.recovery,
            RecoveryRule {
                threshold_ppm: 950_000,
                span_s: 5
            }
        );
        assert_eq!(m.quantiles.as_deref(), Some(&[0.5, 0.95, 0.99, 0.999][..]));
        assert_eq!(m.windows.len(), 2);
        assert_eq!(m.windows[1].from, SimTime(20 * crate::time::NANOS_PER_SEC));
        assert_eq!(m.windows[1].to, SimTime(40 * crate::time::NANOS_PER_SEC));
        let none = parse("{}").unwrap();
        assert_eq!(none.metrics, MetricDefinitions::default());
        // The default threshold is exactly today's integer rule ok·100 ≥ a·99.
        let r = RecoveryRule::default();
        for a in 1..400u64 {
            for ok in 0..=a {
                assert_eq!(r.met(ok, a), ok * 100 >= a * 99, "{ok}/{a}");
            }
        }
        assert!(!r.met(0, 0));
    }

    #[test]
    fn quantile_names() {
        assert_eq!(quantile_name(0.5), "p50");
        assert_eq!(quantile_name(0.95), "p95");
        assert_eq!(quantile_name(0.99), "p99");
        assert_eq!(quantile_name(0.999), "p99_9");
        assert_eq!(quantile_name(0.9999), "p99_99");
        assert_eq!(quantile_name(0.001), "p0_1");
    }
}
