//! Helpers shared by the core tests.

use std::path::{Path, PathBuf};

use loadsim::metrics::RunSummary;
use loadsim::scenario::{Document, Scenario};

/// The four article policies, in the article's order.
pub const POLICIES: [&str; 4] = ["naive", "deadline", "deadline_budget", "protected"];

/// The seeds the article's claims are checked on.
pub const SEEDS: [u64; 3] = [7, 11, 13];

/// Path of a shipped scenario.
pub fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.yaml"))
}

/// Loads a shipped scenario with overrides and a seed.
pub fn load(name: &str, sets: &[&str], seed: u64) -> Scenario {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Scenario::load(&scenario_path(name), &sets, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a shipped scenario.
pub fn run(name: &str, sets: &[&str], seed: u64) -> RunSummary {
    loadsim::model::run(&load(name, sets, seed)).unwrap_or_else(|e| panic!("{e}"))
}

/// Loads an in-memory scenario.
pub fn scenario_text(yaml: &str) -> Scenario {
    let doc = Document::from_text(Path::new("test.yaml"), yaml).unwrap_or_else(|e| panic!("{e}"));
    Scenario::from_document(&doc).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs an in-memory scenario.
pub fn run_text(yaml: &str) -> RunSummary {
    loadsim::model::run(&scenario_text(yaml)).unwrap_or_else(|e| panic!("{e}"))
}
