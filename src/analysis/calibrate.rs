//! Calibration's pure part: what a user observed of their system, and how far a run is from it.
//! Owns the observed-figures file (`OBS.yaml`: user success and latency, per service throughput,
//! latency quantiles, error share, utilization and busy slots, each with a tolerance), reading
//! each figure off a run ([`Figure::model_value`]), the loss the search minimises (the sum over
//! figures of the squared log-ratio of model to observed, [`loss`]), the tolerance test, and
//! what the tried candidates say about each fitted key (the range as good as the best within the
//! seeds' noise, and whether the data identify the key at all). Running the candidates,
//! journaling and the report live in `commands::calibrate`; the search is [`super::tune`]'s.
//! docs/calibration.md is the user's page for all of it.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::config::duration::DurationText;
use crate::config::suggest::did_you_mean;
use crate::config::{ConfigError, Diagnostic, Document};
use crate::metrics::RunSummary;
use crate::scenario::Scenario;
use crate::scenario::metrics::quantile_name;

/// The tolerance of a figure that states none, and of a file that states no `tolerance`.
pub const DEFAULT_TOLERANCE: f64 = 0.10;

/// A figure the run leaves undefined (no request completed, say) counts as this factor off.
pub const UNDEFINED_FACTOR: f64 = 1e3;

/// A number, or a number with its own tolerance.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FigureRaw<T> {
    /// The observed value, judged with the file's `tolerance`.
    Value(T),
    /// The observed value and its own relative tolerance.
    WithTolerance(ValueWithTolerance<T>),
}

/// `{ value: …, tolerance: … }`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValueWithTolerance<T> {
    /// `value`: the observed value.
    pub value: T,
    /// Relative tolerance, a share like `0.05` (5 %).
    pub tolerance: f64,
}

/// Observed latency quantiles: `p50`, `p90`, `p99`, `p999` … to a duration.
pub type LatencyRaw = IndexMap<String, FigureRaw<DurationText>>;

/// What users saw.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UserRaw {
    /// Share of user requests that succeeded, in [0, 1].
    pub success: Option<FigureRaw<f64>>,
    /// Latency quantiles of the user requests that succeeded.
    pub latency: Option<LatencyRaw>,
}

/// What one service's dashboard shows.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceRaw {
    /// Requests the service completed per second (over the scenario's `duration`).
    pub throughput: Option<FigureRaw<f64>>,
    /// Latency quantiles of the requests the service completed (admission to reply: the
    /// server-side latency, queueing and downstream calls included).
    pub latency: Option<LatencyRaw>,
    /// Share of the requests that reached the service and were not completed (rejected,
    /// dropped, failed, cancelled), in [0, 1].
    pub errors: Option<FigureRaw<f64>>,
    /// Mean busy slots over slots (all replicas), in [0, 1].
    pub utilization: Option<FigureRaw<f64>>,
    /// Mean busy slots (all replicas together).
    pub busy_slots: Option<FigureRaw<f64>>,
}

/// The observed-figures file, as written.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservedRaw {
    /// Where the figures come from (free text).
    pub description: Option<String>,
    /// Relative tolerance of every figure that gives none (default 0.1, 10 %).
    pub tolerance: Option<f64>,
    /// The load these figures were observed at, as a multiple of the scenario's (its runs for
    /// this file set `arrivals.scale` to this times the scenario's own; default 1). Give several
    /// `--observed` files at different loads (a quiet hour and the peak) to identify what only
    /// shows as load changes, like contention.
    pub load: Option<f64>,
    /// What users saw.
    pub user: Option<UserRaw>,
    /// Per service name, what its dashboard shows.
    #[serde(default)]
    pub services: IndexMap<String, ServiceRaw>,
}

/// Which number of a run a figure is.
#[derive(Clone, Debug, PartialEq)]
pub enum Measure {
    /// `user.success`: the run's `success_rate`, a share.
    UserSuccess,
    /// `user.latency.p<q>`: the q-quantile of succeeded user requests' latency, seconds.
    UserLatency(f64),
    /// `services.<s>.throughput`: the service's completions per second of `duration`.
    Throughput(String),
    /// `services.<s>.latency.p<q>`: the q-quantile of the service's time from admission to
    /// reply, seconds.
    Latency(String, f64),
    /// `services.<s>.errors`: the share of the service's arrivals not completed.
    Errors(String),
    /// `services.<s>.utilization`: the service's mean busy slots / slots, a share.
    Utilization(String),
    /// `services.<s>.busy_slots`: the service's mean busy slots (mean in system − mean queued).
    BusySlots(String),
}

/// One observed figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// Its key path in the file (`services.api.latency.p99`), also its name in reports.
    pub key: String,
    /// Which number of a run it is compared with.
    pub measure: Measure,
    /// Seconds for latencies, requests per second, shares, or slots.
    pub observed: f64,
    /// Its relative tolerance, a share (0.10: within 10 %).
    pub tolerance: f64,
}

impl Figure {
    /// Values below this are taken as this in the loss (a log-ratio needs positive numbers):
    /// 1 µs for latencies, 1e-4 for shares, 1e-3 for rates and slots.
    pub fn floor(&self) -> f64 {
        match self.measure {
            Measure::UserLatency(_) | Measure::Latency(..) => 1e-6,
            Measure::UserSuccess | Measure::Errors(_) | Measure::Utilization(_) => 1e-4,
            Measure::Throughput(_) | Measure::BusySlots(_) => 1e-3,
        }
    }

    /// The figure in `run` (`None` when the run leaves it undefined). `duration_s` is the
    /// scenario's arrival period, for throughput.
    pub fn model_value(&self, run: &RunSummary, duration_s: f64) -> Option<f64> {
        let service = |s: &str| run.services.get(s);
        match &self.measure {
            Measure::UserSuccess => run.metrics.success_rate,
            Measure::UserLatency(q) => run
                .metrics
                .latency_quantiles
                .as_ref()?
                .get(&format!("success_{}_s", quantile_name(*q)))
                .copied()
                .flatten(),
            Measure::Throughput(s) => {
                Some(service(s)?.counts.completed as f64 / duration_s.max(f64::MIN_POSITIVE))
            }
            Measure::Latency(s, q) => service(s)?
                .latency_quantiles
                .as_ref()?
                .get(&format!("{}_s", quantile_name(*q)))
                .copied()
                .flatten(),
            Measure::Errors(s) => {
                let c = &service(s)?.counts;
                (c.arrivals > 0).then(|| 1.0 - c.completed as f64 / c.arrivals as f64)
            }
            Measure::Utilization(s) => Some(service(s)?.utilization),
            Measure::BusySlots(s) => {
                let m = service(s)?;
                Some(m.mean_in_system - m.mean_queue_len)
            }
        }
    }

    /// The signed relative error of `model` against the observed value.
    pub fn relative_error(&self, model: f64) -> f64 {
        if self.observed == 0.0 {
            if model == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            (model - self.observed) / self.observed
        }
    }

    /// Whether `model` is within the tolerance: a relative error at most `tolerance`, or, for a
    /// figure observed as zero, a model value below the figure's floor.
    pub fn within(&self, model: Option<f64>) -> bool {
        match model {
            None => false,
            Some(m) if self.observed == 0.0 => m.abs() < self.floor(),
            Some(m) => self.relative_error(m).abs() <= self.tolerance + 1e-12,
        }
    }

    /// This figure's term of the loss: `ln(max(model, floor) / max(observed, floor))²`, or
    /// `ln(UNDEFINED_FACTOR)²` when the run leaves the figure undefined.
    pub fn term(&self, model: Option<f64>) -> f64 {
        match model {
            None => UNDEFINED_FACTOR.ln().powi(2),
            Some(m) => {
                let f = self.floor();
                (m.max(f) / self.observed.max(f)).ln().powi(2)
            }
        }
    }
}

/// The loss of one run or of seed means: the sum of the figures' terms.
pub fn loss(figures: &[Figure], model: &[Option<f64>]) -> f64 {
    figures.iter().zip(model).map(|(f, m)| f.term(*m)).sum()
}

/// The quantile a key like `p50`, `p99` or `p999` names, spelt as in a distribution's quantiles
/// ([`crate::scenario::dist::quantile_of_key`]); `Err` says why the key names none.
pub fn parse_quantile_key(key: &str) -> Result<f64, String> {
    crate::scenario::dist::quantile_of_key(key).unwrap_or_else(|| {
        Err(format!(
            "`{key}` is not a quantile; write `p50`, `p90`, `p99` or `p999`"
        ))
    })
}

/// The observed figures read from a file.
#[derive(Clone, Debug)]
pub struct Observed {
    /// The file read.
    pub file: PathBuf,
    /// Its YAML, with the key positions diagnostics point at.
    pub doc: Document,
    /// Every figure it states, in file order.
    pub figures: Vec<Figure>,
    /// `load`: the multiple of the scenario's load the figures were observed at.
    pub load: f64,
}

impl Observed {
    /// Reads and checks `file`: its shape, every key, every value (all problems at once).
    pub fn load(file: &Path) -> Result<Observed, ConfigError> {
        let doc = crate::import::load(file)?;
        Observed::from_document(file, doc)
    }

    /// The figures of a document already read.
    pub fn from_document(file: &Path, doc: Document) -> Result<Observed, ConfigError> {
        let partial = crate::config::deserialize_all::<ObservedRaw>(&doc);
        let (raw, problems) = (partial.value.unwrap_or_default(), partial.problems);
        let mut b = Builder {
            doc: &doc,
            default_tolerance: raw.tolerance.unwrap_or(DEFAULT_TOLERANCE),
            figures: Vec::new(),
            problems,
        };
        if let Some(t) = raw.tolerance
            && !(t > 0.0 && t.is_finite())
        {
            b.problem(
                "tolerance",
                "must be a relative tolerance above 0, like 0.1 for 10 %",
            );
        }
        if let Some(l) = raw.load
            && !(l > 0.0 && l.is_finite())
        {
            b.problem(
                "load",
                "must be a multiple of the scenario's load above 0, like 0.5 for half of it",
            );
        }
        if let Some(u) = &raw.user {
            if let Some(f) = &u.success {
                let (v, t) = f.split();
                b.add(
                    "user.success".into(),
                    Measure::UserSuccess,
                    v,
                    t,
                    Unit::Share,
                );
            }
            if let Some(l) = &u.latency {
                b.latency("user.latency", l, &Measure::UserLatency);
            }
        }
        for (name, s) in &raw.services {
            let k = |f: &str| format!("services.{name}.{f}");
            let n = || name.clone();
            for (field, fig, measure, unit) in [
                (
                    "throughput",
                    &s.throughput,
                    Measure::Throughput(n()),
                    Unit::NonNegative,
                ),
                ("errors", &s.errors, Measure::Errors(n()), Unit::Share),
                (
                    "utilization",
                    &s.utilization,
                    Measure::Utilization(n()),
                    Unit::Share,
                ),
                (
                    "busy_slots",
                    &s.busy_slots,
                    Measure::BusySlots(n()),
                    Unit::NonNegative,
                ),
            ] {
                if let Some(f) = fig {
                    let (v, t) = f.split();
                    b.add(k(field), measure, v, t, unit);
                }
            }
            if let Some(l) = &s.latency {
                b.latency(&k("latency"), l, &|q| Measure::Latency(name.clone(), q));
            }
        }
        if b.problems.is_empty() && b.figures.is_empty() {
            b.problem(
                "",
                "names no figure; give at least one under `user:` or `services:` (see docs/calibration.md)",
            );
        }
        let (figures, problems) = (b.figures, b.problems);
        if problems.is_empty() {
            Ok(Observed {
                file: file.to_owned(),
                doc,
                figures,
                load: raw.load.unwrap_or(1.0),
            })
        } else {
            Err(doc.sorted(problems))
        }
    }

    /// Checks the figures against the scenario: every service named exists (all problems at
    /// once, at the observed file's lines).
    pub fn check_against(&self, sc: &Scenario) -> Result<(), ConfigError> {
        let names: Vec<&str> = sc.services.iter().map(|s| s.name.as_str()).collect();
        let mut problems = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for f in &self.figures {
            let s = match &f.measure {
                Measure::Throughput(s)
                | Measure::Latency(s, _)
                | Measure::Errors(s)
                | Measure::Utilization(s)
                | Measure::BusySlots(s) => s.as_str(),
                _ => continue,
            };
            if !names.contains(&s) && !seen.contains(&s) {
                seen.push(s);
                problems.push(self.doc.diagnostic(
                    &format!("services.{s}"),
                    format!(
                        "names no service of the scenario (it has {}){}",
                        names.join(", "),
                        did_you_mean(s, names.iter().copied())
                    ),
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(self.doc.sorted(problems))
        }
    }

    /// Every latency quantile the figures need, sorted, for the runs' `metrics.quantiles`.
    pub fn quantiles(&self) -> Vec<f64> {
        let mut qs: Vec<f64> = self
            .figures
            .iter()
            .filter_map(|f| match f.measure {
                Measure::UserLatency(q) | Measure::Latency(_, q) => Some(q),
                _ => None,
            })
            .collect();
        qs.sort_by(f64::total_cmp);
        qs.dedup();
        qs
    }
}

/// What kind of number a figure is, for its range check.
#[derive(Clone, Copy)]
enum Unit {
    Share,
    NonNegative,
    Seconds,
}

/// Collects the figures of a file and the problems of their values.
struct Builder<'a> {
    doc: &'a Document,
    default_tolerance: f64,
    figures: Vec<Figure>,
    problems: Vec<Diagnostic>,
}

impl Builder<'_> {
    fn problem(&mut self, key: &str, message: &str) {
        self.problems.push(self.doc.diagnostic(key, message));
    }

    fn add(&mut self, key: String, measure: Measure, value: f64, tol: Option<f64>, unit: Unit) {
        if let Some(t) = tol
            && !(t > 0.0 && t.is_finite())
        {
            self.problem(
                &format!("{key}.tolerance"),
                "must be a relative tolerance above 0, like 0.05 for 5 %",
            );
        }
        let ok = match unit {
            Unit::Share => (0.0..=1.0).contains(&value),
            Unit::NonNegative => value >= 0.0 && value.is_finite(),
            Unit::Seconds => value > 0.0,
        };
        if !ok {
            self.problem(
                &key,
                match unit {
                    Unit::Share => "must be a share from 0 to 1, like 0.999",
                    Unit::NonNegative => "must be a number of zero or more",
                    Unit::Seconds => "must be a duration above zero, like `20ms`",
                },
            );
        }
        self.figures.push(Figure {
            key,
            measure,
            observed: value,
            tolerance: tol.unwrap_or(self.default_tolerance),
        });
    }

    /// Latency quantiles under `prefix`: named like `p99`, increasing with the quantile.
    fn latency(&mut self, prefix: &str, raw: &LatencyRaw, measure: &dyn Fn(f64) -> Measure) {
        if raw.is_empty() {
            self.problem(
                prefix,
                "names no quantile; write them like `{ p50: 20ms, p99: 180ms }`",
            );
        }
        let mut sorted: Vec<(f64, f64, String)> = Vec::new();
        for (name, fig) in raw {
            let key = format!("{prefix}.{name}");
            let q = match parse_quantile_key(name) {
                Ok(q) => q,
                Err(e) => {
                    self.problem(&key, &e);
                    continue;
                }
            };
            let (v, tol) = match fig {
                FigureRaw::Value(d) => (d.0.as_secs_f64(), None),
                FigureRaw::WithTolerance(w) => (w.value.0.as_secs_f64(), Some(w.tolerance)),
            };
            sorted.push((q, v, key.clone()));
            self.add(key, measure(q), v, tol, Unit::Seconds);
        }
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in sorted.windows(2) {
            let ((lq, lv, lk), (q, v, k)) = (&w[0], &w[1]);
            if lq == q {
                self.problem(k, &format!("names the same quantile as `{lk}`"));
            } else if v < lv {
                self.problem(
                    k,
                    &format!(
                        "is below `{lk}` ({v} s < {lv} s): a higher quantile cannot be shorter"
                    ),
                );
            }
        }
    }
}

impl FigureRaw<f64> {
    fn split(&self) -> (f64, Option<f64>) {
        match self {
            FigureRaw::Value(v) => (*v, None),
            FigureRaw::WithTolerance(w) => (w.value, Some(w.tolerance)),
        }
    }
}

/// The figures of a candidate over its seeds: per figure, the mean over the seeds where the run
/// defines it (`None` when no seed does).
pub fn seed_means(per_seed: &[Vec<Option<f64>>]) -> Vec<Option<f64>> {
    let n = per_seed.first().map_or(0, Vec::len);
    (0..n)
        .map(|i| {
            let vals: Vec<f64> = per_seed.iter().filter_map(|s| s[i]).collect();
            (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
        })
        .collect()
}

/// Whether candidate `other` is as good as `best` within the seeds' noise: the mean of their
/// paired per-seed log-ratios of loss, `ln(other / best)`, has a 95 % interval (Student's t)
/// that includes zero. Ratios, not differences: a loss is a sum of squares whose seed-to-seed
/// spread grows with it, so the differences of a candidate 300 times worse on every seed
/// (58, 23 and 22 against 0.07) are spread enough to "include zero" with three seeds, while
/// their log-ratios (6.7, 5.5, 5.9) are not. A loss of zero counts as [`LOSS_FLOOR`]. With one
/// seed (no noise to speak of) only an equal loss is as good.
pub fn indistinguishable(best: &[f64], other: &[f64]) -> bool {
    let d: Vec<f64> = other
        .iter()
        .zip(best)
        .map(|(o, b)| (o.max(LOSS_FLOOR) / b.max(LOSS_FLOOR)).ln())
        .collect();
    if d.len() < 2 {
        return d.iter().all(|x| x.abs() <= 1e-12);
    }
    match crate::stats::mean_ci95(&d) {
        Some(ci) => match ci.bounds() {
            Some((lo, _)) => lo <= 1e-12,
            None => ci.mean.abs() <= 1e-12,
        },
        None => false,
    }
}

/// The loss below which two losses are not told apart (a fit that matches every figure to
/// within 1e-6 in log-ratio).
pub const LOSS_FLOOR: f64 = 1e-12;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_keys_are_spelt_as_in_distributions() {
        assert_eq!(parse_quantile_key("p50"), Ok(0.5));
        assert_eq!(parse_quantile_key("p5"), Ok(0.05));
        assert_eq!(parse_quantile_key("p999"), Ok(0.999));
        for bad in ["p0", "p100", "50", "p", "pxx", "p05", "p250"] {
            assert!(parse_quantile_key(bad).is_err(), "{bad}");
        }
    }

    fn fig(observed: f64, tolerance: f64) -> Figure {
        Figure {
            key: "services.a.throughput".into(),
            measure: Measure::Throughput("a".into()),
            observed,
            tolerance,
        }
    }

    #[test]
    fn the_loss_is_the_sum_of_squared_log_ratios() {
        let f = [fig(100.0, 0.1), fig(10.0, 0.1)];
        // ln(200/100)² + ln(10/10)² = ln(2)².
        let l = loss(&f, &[Some(200.0), Some(10.0)]);
        assert!((l - 2f64.ln().powi(2)).abs() < 1e-15, "{l}");
        // Symmetric in the ratio: half is as far as double.
        assert!((loss(&f[..1], &[Some(50.0)]) - l).abs() < 1e-15);
        // Undefined counts as a factor of 1 000.
        assert!((loss(&f[..1], &[None]) - 1e3f64.ln().powi(2)).abs() < 1e-12);
        // Values below the floor are raised to it.
        assert_eq!(loss(&[fig(0.0, 0.1)], &[Some(0.0)]), 0.0);
    }

    #[test]
    fn tolerance_is_relative_and_inclusive() {
        let f = fig(100.0, 0.1);
        assert!(f.within(Some(110.0)));
        assert!(f.within(Some(90.0)));
        assert!(!f.within(Some(110.5)));
        assert!(!f.within(None));
        assert!(fig(0.0, 0.1).within(Some(0.0)));
        assert!(!fig(0.0, 0.1).within(Some(1.0)));
    }

    #[test]
    fn paired_noise_decides_what_is_as_good_as_the_best() {
        // One seed: only an equal loss ties.
        assert!(indistinguishable(&[1.0], &[1.0]));
        assert!(!indistinguishable(&[1.0], &[1.0 + 1e-9]));
        // Log-ratios 0.095, -0.105, 0.049: the interval includes zero.
        assert!(indistinguishable(&[1.0, 1.0, 1.0], &[1.1, 0.9, 1.05]));
        // Consistently worse by about 0.5: not as good.
        assert!(!indistinguishable(&[1.0, 1.0, 1.0], &[1.5, 1.51, 1.49]));
        // A candidate far worse on every seed, its differences spread: not as good (the case
        // a differences test let through: 58, 23, 22 against 0.071, 0.088, 0.064).
        assert!(!indistinguishable(
            &[0.071, 0.088, 0.064],
            &[58.6, 22.7, 22.5]
        ));
        // Zero losses on every seed tie; a zero against a positive loss does not.
        assert!(indistinguishable(&[0.0, 0.0], &[0.0, 0.0]));
        assert!(!indistinguishable(&[0.0, 0.0], &[0.1, 0.2]));
    }
}
