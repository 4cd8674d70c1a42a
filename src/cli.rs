//! The command line, as clap derive types. Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use loadsim::analysis::boundary::Criterion;
use loadsim::commands::sweep::Shard;
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
    /// Validate scenarios without running them and lint their policies: worst-case attempts (R1),
    /// retry budgets against deadlines, queue waits (§7) and load against capacity, with fixes.
    ///
    /// Example: loadsim check scenarios/naive.yaml --deny-warnings
    Check(CheckArgs),
    /// Run every cell of a sweep file (scenarios × grid) in parallel and write results.csv,
    /// results.md and manifest.json into the output folder.
    ///
    /// Each finished cell is journaled at once, so Ctrl-C or a crash loses nothing: run again with
    /// --resume to do only what is missing. Example: loadsim sweep sweeps/blog37.yaml --jobs 2
    Sweep(SweepArgs),
    /// Merge the folders of a sharded sweep (loadsim sweep --shard K/N) into one result,
    /// byte-identical to running the sweep whole.
    ///
    /// Example: loadsim merge evidence/blog37/shard-*-of-3 --out evidence/blog37
    Merge(MergeArgs),
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
    /// Event limit: refuse a scenario that could need more events than this (rate × duration ×
    /// worst-case attempts, see `loadsim check`), and stop a run that exceeds it.
    #[arg(long, default_value_t = 2_000_000_000, value_name = "N")]
    pub max_events: u64,
    /// Write the report to this file instead of stdout (checked before anything runs).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
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

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Sweep file (YAML): name, scenarios, grid, zip, report.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Cells run at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Output folder [default: evidence/<name>/, or evidence/<name>/shard-K-of-N/ with --shard].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Keep the cells already journaled in the output folder and run only the missing ones.
    #[arg(long)]
    pub resume: bool,
    /// Run only part K of N (1-based): cells whose index is K-1 modulo N. Merge the parts with
    /// `loadsim merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// Check every cell, print the number of cells and the axes, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar and no notes on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Stop after running N cells, leaving the sweep unfinished (to test --resume).
    #[arg(long, value_name = "N", hide = true)]
    pub max_cells: Option<usize>,
    /// Run a grid of more than 1000 cells (without it, such a sweep is refused before it starts).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Event limit per cell: refuse a sweep with a cell that could need more events than this
    /// (rate × duration × worst-case attempts), and stop a run that exceeds it.
    #[arg(long, default_value_t = 2_000_000_000, value_name = "N")]
    pub max_events: u64,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Output folders of the shards (each with manifest.json and journal.jsonl).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Folder for the merged results.csv, results.md and manifest.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// No notes on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
