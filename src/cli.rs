//! The command line, as clap derive types. Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use loadsim::analysis::boundary::Criterion;
use loadsim::report::Format;

/// Deterministic simulation of RPC call graphs under slow-downstream faults.
#[derive(Debug, Parser)]
#[command(name = "loadsim", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios and print their metrics side by side.
    ///
    /// Example: loadsim run scenarios/naive.yaml scenarios/protected.yaml --set faults.slow_b.duration=5s
    Run(RunArgs),
    /// Validate scenarios without running them and lint their policies: worst-case attempts (R1),
    /// retry budgets against deadlines, queue waits (§7) and load against capacity, with fixes.
    ///
    /// Example: loadsim check scenarios/naive.yaml --deny-warnings
    Check(CheckArgs),
    /// Find the smallest value of a key at which a run no longer recovers (scan, then bisection,
    /// per seed); with a second --vary, the phase diagram over a grid of both keys.
    ///
    /// Example: loadsim boundary scenarios/naive.yaml --vary faults.slow_b.duration --range 0s..30s --seeds 7,11,13
    Boundary(BoundaryArgs),
}

/// Overrides shared by commands that load scenarios.
#[derive(Debug, Args)]
pub struct Overrides {
    /// Override a key by its dotted path with a YAML value (repeatable), e.g.
    /// `--set services.svc_a.queue_cap=32` or `--set faults={}`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files (YAML).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Seed for every random stream (overrides the file's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Stop a run that exceeds this many events.
    #[arg(long, default_value_t = 2_000_000_000, value_name = "N")]
    pub max_events: u64,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files (YAML).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Exit with code 1 when any warning is found (the report is still printed).
    #[arg(long)]
    pub deny_warnings: bool,
}

#[derive(Debug, Args)]
pub struct BoundaryArgs {
    /// Scenario files (YAML), searched one by one.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Dotted key to vary, like `faults.slow_b.duration` or `arrivals.rate`; give it twice for a
    /// phase diagram (the first is the x axis).
    #[arg(long, required = true, value_name = "KEY")]
    pub vary: Vec<String>,
    /// LOW..HIGH for each --vary, in order: durations with a unit (`0s..30s`), whole numbers
    /// (`200..700`) or numbers (`0.5..2.5`).
    #[arg(long, required = true, value_name = "LOW..HIGH")]
    pub range: Vec<String>,
    /// Seeds to search, comma-separated (default: the scenario's own seed).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub seeds: Vec<u64>,
    /// What counts as recovering.
    #[arg(long, value_enum, default_value_t = Criterion::Recovers)]
    pub criterion: Criterion,
    /// Scan points per key, LOW and HIGH included (the grid of a phase diagram).
    #[arg(long, default_value_t = 11, value_name = "N")]
    pub steps: usize,
    /// Bisect until the interval is this narrow, in the range's unit (default: a hundredth of
    /// the range).
    #[arg(long, value_name = "WIDTH")]
    pub tolerance: Option<String>,
    /// Also write CSV files (every probe, per-seed boundaries, phase cells) into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
}
