//! The command line, as clap derive types. Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use loadsim::report::Format;
use loadsim::time::SimDuration;

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
    /// Validate scenarios without running them, and print the worst-case attempts (R1) per service.
    ///
    /// Example: loadsim check scenarios/naive.yaml
    Check(CheckArgs),
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
    /// Also write each run's time series to FILE.csv, in long format: scenario,t,series,value
    /// (one row per scenario, bin and series; see docs/plots.md for the series).
    #[arg(long, value_name = "FILE.csv")]
    pub timeseries: Option<PathBuf>,
    /// Width of a time-series bin, e.g. `1s` or `100ms` (for --timeseries and --plot).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_resolution)]
    pub timeseries_resolution: SimDuration,
    /// Also draw SVG figures into DIR (created if missing): success_rate.svg,
    /// queue_length.svg and amplification.svg.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// Parses a bin width: a duration with a unit, at least 1 ms.
fn parse_resolution(text: &str) -> Result<SimDuration, String> {
    let d = loadsim::scenario::duration::parse_duration(text)?;
    if d < SimDuration::from_millis(1) {
        return Err(format!(
            "`{text}` is below 1ms; a bin must be at least `1ms` wide"
        ));
    }
    Ok(d)
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files (YAML).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
}
