//! The serde mirror of a scenario's `expect:` and `snapshot:` keys. Owns their YAML shape only
//! (unknown keys refused, values as written); [`crate::expect`] checks the values and names each problem's
//! key path and line. The `///` comments are the editor schema's descriptions.

use schemars::JsonSchema;
use serde::Deserialize;

/// One assertion on a metric of the scenario's run: `{metric: metrics.recovery_s, le: 5}`.
/// Exactly one of `le`, `lt`, `ge`, `gt`, `eq`, `between`, `is`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertionRaw {
    /// Dotted path of a metric in the run JSON (`loadsim run --format json`), like
    /// `metrics.recovery_s`, `services.svc_b.max_queue` or `calls.svc_a->svc_b.retries`. Required.
    pub metric: String,
    /// The metric is at most this.
    pub le: Option<f64>,
    /// The metric is below this.
    pub lt: Option<f64>,
    /// The metric is at least this.
    pub ge: Option<f64>,
    /// The metric is above this.
    pub gt: Option<f64>,
    /// The metric is exactly this (for counts; use `between` for measured floats).
    pub eq: Option<f64>,
    /// The metric is in `[a, b]`, both ends included.
    pub between: Option<[f64; 2]>,
    /// `never`: for `metrics.recovery_s`, the run never recovers.
    pub is: Option<IsRaw>,
    /// Run these seeds instead of the scenario's own: a count N (seeds 1 to N) or a list. The
    /// assertion must then hold on every seed, unless `share` or `mean` says otherwise.
    pub seeds: Option<SeedsRaw>,
    /// With `seeds`: the assertion must hold on at least this share of them, in (0, 1].
    pub share: Option<f64>,
    /// With `seeds`: assert on the mean over the seeds (its 95 % confidence interval is shown).
    pub mean: Option<bool>,
    /// Assert on the difference to another scenario run on the same seeds (this minus baseline).
    pub compare: Option<CompareRaw>,
}

/// The value of `is`.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IsRaw {
    /// The metric has no value: the run never recovers.
    Never,
}

/// Which seeds an assertion runs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(
    untagged,
    expecting = "must be a number of seeds N (seeds 1 to N) or a list of seeds, like `20` or `[3, 5, 9]`"
)]
pub enum SeedsRaw {
    /// Seeds 1 to N.
    Count(u64),
    /// These seeds.
    List(Vec<u64>),
}

/// A paired comparison.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareRaw {
    /// The other scenario file, relative to this file. Required.
    pub baseline: String,
}

/// Whether `loadsim test` keeps a snapshot of the scenario's metrics, and how precisely.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged, expecting = "must be `true`, `false` or `{digits: N}`")]
pub enum SnapshotRaw {
    /// `true`: snapshot at 6 significant digits; `false`: no snapshot.
    Flag(bool),
    /// Snapshot with options.
    Options(SnapshotOptionsRaw),
}

/// Snapshot options.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotOptionsRaw {
    /// Significant digits kept of each float metric, 1 to 17 (default 6). Counts are exact.
    pub digits: Option<u32>,
}

/// The two keys `loadsim test` reads from a scenario file (and only from the file itself, never
/// from the files it extends).
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct TestKeysRaw {
    /// `expect`: the assertions over the run's results (`None`: none).
    #[serde(default)]
    pub expect: Option<Vec<AssertionRaw>>,
    /// `snapshot`: which metrics to record and compare, and how closely (`None`: no snapshot).
    #[serde(default)]
    pub snapshot: Option<SnapshotRaw>,
}
