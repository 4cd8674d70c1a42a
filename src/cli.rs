//! The command line, as clap derive types. Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
    /// Event limit: refuse a scenario that could need more events than this (rate × duration ×
    /// worst-case attempts, see `loadsim check`), and stop a run that exceeds it.
    #[arg(long, default_value_t = 2_000_000_000, value_name = "N")]
    pub max_events: u64,
    /// Write the report to this file instead of stdout (checked before anything runs).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files (YAML).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
}
