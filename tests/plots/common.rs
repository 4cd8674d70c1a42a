//! Helpers shared by the plot and time-series tests.

use std::path::{Path, PathBuf};

use loadsim::metrics::{RunSummary, TimeSeries};
use loadsim::model::{RunOptions, run_with_series};
use loadsim::scenario::Scenario;
use loadsim::time::SimDuration;

/// The four article policies, in the article's order.
pub const POLICIES: [&str; 4] = ["naive", "deadline", "deadline_budget", "protected"];

/// A shorter, lighter version of the article's experiment: 20 s at 200 req/s, svc_b slow from
/// 5 s to 10 s. Long enough for every mechanism (queues, drops, rejects, throttling) to act.
pub const SHORT: [&str; 4] = [
    "duration=20s",
    "arrivals.rate=200",
    "faults.slow_b.from=5s",
    "faults.slow_b.duration=5s",
];

/// Path of a shipped scenario.
pub fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.yaml"))
}

/// Loads a shipped scenario with overrides.
pub fn load(name: &str, sets: &[&str]) -> Scenario {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Scenario::load(&scenario_path(name), &sets, None).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a shipped scenario with time series in bins of `resolution`.
pub fn run(name: &str, sets: &[&str], resolution: SimDuration) -> (RunSummary, TimeSeries) {
    run_with_series(&load(name, sets), RunOptions::default(), resolution)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The four policies on the short experiment, 1 s bins.
pub fn short_runs() -> Vec<(RunSummary, TimeSeries)> {
    POLICIES
        .iter()
        .map(|p| run(p, &SHORT, SimDuration::from_secs(1)))
        .collect()
}
