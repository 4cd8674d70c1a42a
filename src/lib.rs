//! # loadsim
//!
//! A deterministic discrete-event simulator that shows why a system stays down after a slow
//! dependency has recovered: RPC call graphs, the protections on each hop (attempt timeouts,
//! retries with jittered backoff, deadline propagation, dropping expired work, retry throttling,
//! bounded queues with fast reject) and a fault, measured the way the source article measures them.
//!
//! ## Data flow
//!
//! `scenarios/*.yaml` → [`config`] (reading, extends, `--set`, key positions, diagnostics) →
//! [`scenario::raw`] (serde mirror) → [`scenario::Scenario`] (validated) →
//! [`model::Simulation`] (engine + components) → [`metrics::Recorder`] →
//! [`metrics::RunSummary`] → [`report`] (table, JSON, CSV). On request a sampler also bins
//! what the recorder counts over time ([`metrics::timeseries`]), for the time-series CSV
//! ([`report::timeseries`]) and the SVG figures ([`plot`]).
//!
//! `sweeps/*.yaml` → [`sweep::spec`] → [`sweep::expand`](mod@sweep::expand) (cells, all validated first) →
//! [`sweep::run`] (journal, `--resume`, `--shard`) → [`sweep::aggregate`] (results.csv,
//! results.md); [`sweep::merge`] joins shards.
//!
//! `loadsim run`, `loadsim sweep` and `loadsim boundary` share one grid runner, [`runner`]:
//! loading with `--set` overrides, the order-preserving parallel map and its progress bar, and
//! writing outputs (checked before anything runs, atomically, with a lock on a sweep's folder).
//!
//! Each protection (timeouts, retries, throttles, budgets, breakers, hedging, queue disciplines,
//! shedding…) is one module of `protections` (crate-private): its YAML form, validation,
//! defaults and runtime rule together; each fault kind's meaning is stated once in
//! [`scenario::faults`].
//!
//! A scenario file may also say what it expects of its results ([`expect`]: assertions over one or
//! many seeds, paired with a baseline, and a snapshot of its metrics); `loadsim test` checks them
//! for CI, with the mean-and-interval estimator of [`stats`]. Neither changes a run.
//!
//! Around single runs, [`analysis`]: [`analysis::lint`] reads a `Scenario`'s policies against the
//! article's budget rules without running it (`loadsim check`), and [`analysis::boundary`] runs a
//! scenario many times to find where it stops recovering (`loadsim boundary`).
//!
//! ## Determinism contract
//!
//! A run is a pure function of its scenario (seed included): simulated time is integer
//! nanoseconds ([`time`]), events at one instant run in scheduling order ([`engine`]), and every
//! random quantity comes from its own ChaCha stream keyed by purpose (`rng`, crate-private) so
//! that a policy change never shifts the arrival sequence. Only `engine.wall_s` and `engine.events_per_s`
//! depend on the machine.
//!
//! ## Units
//!
//! Durations in files are humantime strings (`20ms`, `1s`); in reports, seconds as floats.
//! Rates are per second. Ratios are plain fractions in [0, 1] unless named `*_per_request`.

// Every `pub` item is reachable from outside the crate (machinery that is not is `pub(crate)`, so
// rustc sees what is dead); every public item is documented (`missing_docs`). The protections'
// runtime rules, the random streams and the typed indices are crate-private modules: what a user
// names of them (the protections' YAML forms, the ids of a scenario's tables) is re-exported by
// `scenario`. The other modules stay public because the binary, the integration tests, the
// benchmarks and the examples drive them.
#![warn(missing_docs)]
#![warn(unreachable_pub)]

pub mod analysis;
pub mod color;
pub mod commands;
pub mod config;
pub mod engine;
pub mod error;
pub mod expect;
pub mod guard;
pub mod import;
pub(crate) mod ix;
pub mod metrics;
pub mod model;
pub mod plot;
pub(crate) mod protections;
pub mod report;
pub(crate) mod rng;
pub mod runner;
pub mod scenario;
pub mod schema;
pub mod stats;
pub mod sweep;
pub mod time;
pub mod util;

/// The version of the model's results. Bump it in the commit that changes the results of any
/// scenario on purpose (a model fix, a new default, a different estimator), and say why there:
/// the snapshots of `loadsim test` record it, so a reviewer of a changed snapshot sees that the
/// tool, not their scenario, moved the numbers. `loadsim -V --verbose` prints it. Refactors that
/// keep every result byte-identical leave it alone.
pub const MODEL_VERSION: u32 = 1;

/// The commit this loadsim was built from (`git rev-parse --short HEAD` at build time), or
/// `unknown` when it was built outside a git checkout.
pub const COMMIT: &str = env!("LOADSIM_COMMIT");

/// What `loadsim --version` prints: the version and the commit; with `verbose`, also
/// [`MODEL_VERSION`].
pub fn version_text(verbose: bool) -> String {
    let mut s = format!("loadsim {} (commit {COMMIT})\n", env!("CARGO_PKG_VERSION"));
    if verbose {
        s.push_str(&format!("model version {MODEL_VERSION}\n"));
    }
    s
}

pub use error::Error;
pub use metrics::RunSummary;
pub use scenario::Scenario;
