//! The command line, as clap derive types. Doc comments here are the `--help` text; each
//! subcommand's `after_help` holds worked examples.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueHint};

use loadsim::analysis::boundary::Criterion;
use loadsim::analysis::tune::DEFAULT_TIE_TOLERANCE;
use loadsim::color::ColorWhen;
use loadsim::commands::boundary::BoundaryRequest;
use loadsim::commands::calibrate::{CalibrateFormat, CalibrateRequest};
use loadsim::commands::new::{NewRequest, Template};
use loadsim::commands::run::{RunOutputs, RunRequest};
use loadsim::commands::sweep::{Shard, SweepOptions};
use loadsim::commands::tune::{TuneFormat, TuneRequest, parse_tune_seeds};
use loadsim::expect::report::TestFormat;
use loadsim::model::RunOptions;
use loadsim::report::Format;
use loadsim::report::diagnostics::ReportFormat;
use loadsim::schema::SchemaKind;
use loadsim::time::SimDuration;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (also when stdout is closed early, as by `| head`)
  1  a run failed, output could not be written, or a `loadsim test` case failed
  2  bad input: a scenario file, a key, a value or a flag (also a run over --max-events)

Colour: --color auto (default) colours diagnostics on a terminal, never when NO_COLOR is set, and
also through a pipe when CLICOLOR_FORCE is set; --color always/never override both.
Docs: docs/model.md (the model and every metric's definition), docs/cookbook.md (model your own
chain, add a protection, sweep, read the report, CI).";

const RUN_EXAMPLES: &str = "\
Examples:
  # The article's experiment: four policies on one arrival sequence, side by side
  loadsim run scenarios/naive.yaml scenarios/deadline.yaml scenarios/deadline_budget.yaml scenarios/protected.yaml

  # Change keys without editing the file (dotted path = YAML value), another seed
  loadsim run scenarios/protected.yaml --set faults.slow_b.duration=5s --set services.svc_a.queue_cap=32 --seed 11

  # No fault at all
  loadsim run scenarios/naive.yaml --set 'faults={}'

  # One JSON document for jq; a tidy CSV for pandas or R
  loadsim run scenarios/naive.yaml --format json | jq '.[0].metrics.recovery_s'
  loadsim run scenarios/naive.yaml scenarios/protected.yaml --format csv-long > runs.csv

  # Per-second time series (long CSV) and SVG figures next to the report
  loadsim run scenarios/naive.yaml scenarios/protected.yaml --timeseries series.csv --plot figures/

  # One self-contained HTML page (table, figures, sources) to open or attach anywhere
  loadsim run scenarios/naive.yaml scenarios/protected.yaml --html report.html

  # Seeds 1 to 20: each metric's mean with its 95 % confidence interval (JSON adds every seed)
  loadsim run scenarios/protected.yaml --seeds 1..20";

const TEST_EXAMPLES: &str = "\
Examples:
  # Every scenario with `expect:` or `snapshot: true` under the current folder
  loadsim test

  # A folder and a file; JUnit XML for the CI's test view
  loadsim test examples/ci scenarios/checkout.yaml --junit loadsim-junit.xml

  # Accept new and changed snapshots (then commit snapshots/*.snap)
  loadsim test --accept

Snapshots live in snapshots/<stem>.snap beside each scenario. A missing one is written as
.snap.new and fails only when CI is set; a changed one fails with the changed metrics and leaves
its .snap.new for --accept or --review. See docs/cookbook.md, \"Guard your scenarios in CI\".";

const SWEEP_EXAMPLES: &str = "\
Examples:
  # The article's evidence: four policies × three seeds × four window lengths
  loadsim sweep sweeps/blog37.yaml --jobs 2

  # See the cells and axes without running anything
  loadsim sweep sweeps/timeouts.yaml --dry-run

  # Interrupted? Run only what is missing
  loadsim sweep sweeps/blog37.yaml --resume

  # On a cluster: part K of N per job, then merge (see docs/sweeps.md)
  loadsim sweep sweeps/blog37.yaml --shard 1/3";

const MERGE_EXAMPLES: &str = "\
Examples:
  # Merge the shards of a sweep into one result, byte-identical to an unsharded run
  loadsim merge evidence/blog37/shard-*-of-3 --out evidence/blog37";

const CHECK_EXAMPLES: &str = "\
Examples:
  # Validate, and see the worst-case attempts on each service per user request
  loadsim check scenarios/naive.yaml

  # Validate with an override, as `run` would apply it
  loadsim check scenarios/protected.yaml --set services.svc_b.queue_cap=8

  # In CI: fail (exit 1) when the linter has warnings
  loadsim check scenarios/protected.yaml --deny-warnings";

const BOUNDARY_EXAMPLES: &str = "\
Examples:
  # The shortest slow window after which naive no longer recovers, per seed
  loadsim boundary scenarios/naive.yaml --vary faults.slow_b.duration --range 0s..30s --seeds 7,11,13

  # The load at which deadline_budget stops recovering, CSVs into a folder
  loadsim boundary scenarios/deadline_budget.yaml --vary arrivals.rate --range 200..700 --out boundary/

  # A phase diagram over window length × load (CSV and SVG heatmap with --out)
  loadsim boundary scenarios/protected.yaml --vary faults.slow_b.duration --range 0s..30s \\
      --vary arrivals.rate --range 200..700 --steps 11 --out phase/";

const CALIBRATE_EXAMPLES: &str = "\
Examples:
  # Fit the database's slots and service-time scale to what its dashboard shows, on 3 seeds
  loadsim calibrate shop.yaml --observed observed.yaml \\
      --fit services.db.slots=2..64 --fit services.db.service_time.scale=0.5..2 \\
      --seeds 3 --write shop.calibrated.yaml

  # Keep the runs in a folder (calibrate.md, calibrate.json, candidates.csv); interrupted? --resume
  loadsim calibrate shop.yaml --observed observed.yaml --fit services.api.slots=4..128 --out cal/ --resume

The observed file (user success and latency; per service throughput, latency quantiles, errors,
utilization, busy slots; each with a tolerance) and the loss are docs/calibration.md.";

const TUNE_EXAMPLES: &str = "\
Examples:
  # svc_a's gRFC A6 throttle and attempt timeout on the article's chain, against the standard faults
  loadsim tune scenarios/deadline_budget.yaml --target svc_b \\
      --vary services.svc_a.calls.svc_b.retry_throttle.max_tokens=1..100 \\
      --vary services.svc_a.calls.svc_b.retry_throttle.token_ratio=0.01..1 \\
      --vary services.svc_a.calls.svc_b.attempt_timeout=100ms..1s --seeds 3 --out tune/ --yes

  # An Envoy retry budget, minimising attempts per request, recovery within 10 s on 2 of 3 seeds
  loadsim tune scenarios/protections/retry_budget.yaml --target svc_b \\
      --vary services.svc_a.calls.svc_b.retry_budget.budget_percent=5..100 \\
      --vary services.svc_a.calls.svc_b.retry_budget.min_retry_concurrency=1..20 \\
      --objective metrics.client_attempts_per_request --require 'metrics.recovery_s <= 10' --share 0.66

  # Your own fault set (a YAML `faults:` map), JSON for tools; interrupted? --resume
  loadsim tune scenarios/protected.yaml --faults faults/standard.yaml --target svc_b \\
      --vary services.svc_b.queue_cap=2..64 --vary services.svc_a.queue_cap=8..256 --format json --out t/

Exit code 1 when no setting in the range meets every requirement (the report names the closest);
2 on bad input (a key, a range, a metric, the fault set). See docs/analysis.md, \"loadsim tune\".";

const NEW_EXAMPLES: &str = "\
Examples:
  # A starter scenario with the naive policies, plus the editor schema next to it
  loadsim new checkout
  loadsim run checkout.yaml

  # Start from the protected policies, in a folder
  loadsim new scenarios/checkout --from protected

Writes NAME.yaml (\".yaml\" is added when missing). Its first line points editors that use
yaml-language-server (VS Code YAML, Neovim, Helix, Zed) at the scenario schema, for completion and
checking as you type: the project's schema/scenario.schema.json if the folder or one above it has
one, else a scenario.schema.json written next to the new file.";

const IMPORT_EXAMPLES: &str = "\
Examples:
  # The retry policy of one gRPC method, with the server's retryThrottling
  loadsim import grpc service_config.json --service helloworld.Greeter --method SayHello

  # An Envoy route's timeouts and retry policy, and its cluster's circuit breakers
  loadsim import envoy envoy.yaml --route checkout --cluster svc_b

  # Fail (exit 2) when the source has a field loadsim cannot model
  loadsim import envoy envoy.yaml --route checkout --strict

  # A scenario from distributed traces (OTLP, Jaeger or Zipkin v2 JSON; the coverage report and
  # the defaults it had to choose go to stderr)
  loadsim import traces jaeger.json --out shop.yaml

Or in a scenario, resolved like `extends` (the path relative to the scenario file; keys written
beside `import` override the imported ones):
  services: {svc_a: {calls: {svc_b: {import: {grpc: sc.json, method: SayHello}}}}}";

const SCHEMA_EXAMPLES: &str = "\
Examples:
  # Save the schema where your editor can find it
  loadsim schema scenario > scenario.schema.json

  # ...and name it on the first line of each scenario file:
  # yaml-language-server: $schema=scenario.schema.json

  # Or map it to every scenario in VS Code's settings.json:
  #   \"yaml.schemas\": { \"./scenario.schema.json\": \"scenarios/*.yaml\" }";

const MAN_EXAMPLES: &str = "\
Examples:
  # Read the manual page
  loadsim man | man -l -

  # Install every page (loadsim.1 and loadsim-<command>.1) where man finds them
  loadsim man --out ~/.local/share/man/man1";

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  # bash (current shell; add the line to ~/.bashrc to keep it)
  source <(loadsim completions bash)

  # zsh: a file in a folder on $fpath, then restart the shell
  loadsim completions zsh > ~/.zfunc/_loadsim   # with fpath+=~/.zfunc before compinit in ~/.zshrc

  # fish
  loadsim completions fish > ~/.config/fish/completions/loadsim.fish";

/// Deterministic simulation of RPC call graphs under slow-downstream faults.
#[derive(Debug, Parser)]
#[command(
    name = "loadsim",
    about,
    disable_version_flag = true,
    arg_required_else_help = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Print the version and the commit it was built from (with --verbose, also the model
    /// version, which changes whenever results change on purpose).
    #[arg(short = 'V', long = "version")]
    pub version: bool,
    /// With --version: also print the model version.
    #[arg(long, requires = "version")]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// When to colour diagnostics on stderr: `auto` (a terminal, unless NO_COLOR is set; a pipe
    /// too with CLICOLOR_FORCE), `always` or `never` (both override the environment).
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios and print their metrics side by side.
    ///
    /// Files run in parallel; results print in argument order on stdout, errors on stderr. Every
    /// metric is defined in docs/model.md §3.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Validate scenarios and lint their policies, without running them.
    ///
    /// The linter prints worst-case attempts (R1), retry budgets against deadlines, queue waits
    /// (the article's §7) and load against capacity, with suggested fixes.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Run every cell of a sweep file in parallel and write its report.
    ///
    /// Runs scenarios × grid and writes results.csv, results.md (with figures) and manifest.json
    /// into the output folder.
    ///
    /// Each finished cell is journaled at once, so Ctrl-C or a crash loses nothing: run again with
    /// --resume to do only what is missing.
    #[command(after_help = SWEEP_EXAMPLES)]
    Sweep(SweepArgs),
    /// Merge the folders of a sharded sweep into one result.
    ///
    /// Shards come from `loadsim sweep --shard K/N`; the merge is byte-identical to running the
    /// sweep whole.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
    /// Find where a system stops recovering, or draw its phase diagram.
    ///
    /// Finds the smallest value of a key at which a run no longer recovers (scan, then bisection,
    /// per seed); with a second --vary, the phase diagram over a grid of both keys.
    #[command(after_help = BOUNDARY_EXAMPLES)]
    Boundary(BoundaryArgs),
    /// Recommend settings that survive a set of faults.
    ///
    /// Searches 1–4 keys (a coarse grid, then refinement around the best setting) for the values
    /// that meet every requirement under every fault of a fault set on enough seeds, and among
    /// them the lowest objective in healthy load; prints the recommendation as YAML to paste.
    #[command(after_help = TUNE_EXAMPLES)]
    Tune(TuneArgs),
    /// Fit a scenario's keys to what you observe of your system.
    ///
    /// Runs the scenario without its faults, prints model against observed per figure (user
    /// success and latency; per service throughput, latency, errors, utilization, busy slots),
    /// then searches 1–4 keys to minimise the sum of squared log-ratios of model to observed.
    /// Prints the fitted values, the residual per figure, the keys the data do not identify and
    /// the figures no setting matches; --write emits an `extends` overlay with the fitted values.
    /// Exit 1 when a figure stays outside its tolerance.
    #[command(after_help = CALIBRATE_EXAMPLES)]
    Calibrate(CalibrateArgs),
    /// Write a commented starter scenario that runs as is.
    #[command(after_help = NEW_EXAMPLES)]
    New(NewArgs),
    /// Translate a gRPC or Envoy retry config into edge keys, or traces into a scenario.
    ///
    /// Prints the equivalent edge policy as commented YAML to paste under
    /// `services.<caller>.calls.<callee>`; every field with no exact loadsim meaning is named on
    /// stderr (--strict: exit 2). A scenario can also import the file directly with
    /// `calls.<callee>.import`. The mapping is docs/production.md, "loadsim import". `import
    /// traces` builds a whole scenario from OTLP, Jaeger or Zipkin v2 JSON (docs/import.md).
    #[command(after_help = IMPORT_EXAMPLES)]
    Import(ImportArgs),
    /// Print the JSON Schema of a file format, for editors and other tools.
    #[command(after_help = SCHEMA_EXAMPLES)]
    Schema(SchemaArgs),
    /// Print a shell completion script.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write every page into a folder.
    ///
    /// `loadsim man | man -l -` reads it; `--out DIR` writes loadsim.1 and loadsim-<command>.1
    /// for each command (the repository keeps them in docs/man/).
    #[command(after_help = MAN_EXAMPLES)]
    Man(ManArgs),
    /// Check scenarios' `expect:` assertions and snapshots (for CI).
    ///
    /// Runs every scenario file with `expect:` or `snapshot: true` (in parallel), judges each
    /// assertion and compares each snapshot, and prints one line per case and `N passed, M failed`.
    /// Exit code 0 when all pass, 1 when any fails, 2 on bad input.
    #[command(after_help = TEST_EXAMPLES)]
    Test(TestArgs),
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
    #[arg(required = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub files: Vec<PathBuf>,
    /// Seed for every random stream (overrides the file's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run these seeds (`1..20`, both ends included, or `3,5,9`) and report each metric's mean
    /// with its 95 % confidence interval; `--format json` adds the value on every seed.
    #[arg(long, value_name = "SEEDS", conflicts_with_all = ["seed", "timeseries", "plot", "spans"], value_parser = parse_seeds)]
    pub seeds: Option<Seeds>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Output format (on stdout, or the --output file): `table` for reading, `json` one document for jq, `csv` one
    /// row per scenario, `csv-long` one row per scenario × metric (columns
    /// scenario,seed,metric,scope,entity,name,value).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Event limit: refuse a scenario that would need more events than this (within the bound
    /// its parts declare it runs at once; above it, a short pilot run of the same scenario
    /// estimates the events and twice the estimate must fit; docs/trust.md §3), and stop a run
    /// that exceeds it. Scientific notation accepted (`1e10`).
    #[arg(long, default_value = "2e9", value_name = "N", value_parser = loadsim::guard::parse_count)]
    pub max_events: u64,
    /// Write the report to this file instead of stdout (checked before anything runs).
    #[arg(long, short = 'o', value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub output: Option<PathBuf>,
    /// Also write each run's time series to FILE.csv, in long format: scenario,t_s,series,value
    /// (one row per scenario, bin and series; see docs/plots.md for the series).
    #[arg(long, value_name = "FILE.csv", value_hint = ValueHint::FilePath)]
    pub timeseries: Option<PathBuf>,
    /// Width of a time-series bin, e.g. `1s` or `100ms` (for --timeseries and --plot).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_resolution)]
    pub timeseries_resolution: SimDuration,
    /// Also draw SVG figures into DIR (created if missing): success_rate.svg,
    /// queue_length.svg and amplification.svg, and concurrency_limit.svg when a run has a
    /// concurrency limiter.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub plot: Option<PathBuf>,
    /// Also write a self-contained HTML report to FILE: the table, the figures, the scenario
    /// sources (with `extends` merged), the command and the version; no network requests.
    #[arg(long, value_name = "FILE.html", value_hint = ValueHint::FilePath)]
    pub html: Option<PathBuf>,
    /// Also write the simulated requests to FILE as OpenTelemetry spans: OTLP JSON, one
    /// `{"resourceSpans":[…]}` request per line as the collector's file exporter writes it. Each
    /// user request is a trace, each attempt a CLIENT span, each service's work a SERVER span
    /// (with a `dequeued` event after a queue wait), failures with error status and the reason;
    /// times start at 2025-01-01T00:00:00Z. One scenario only; see docs/import.md.
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub spans: Option<PathBuf>,
    /// The share of user requests written to --spans, in (0, 1]: request n is kept when a hash
    /// of the seed and n says so, so the same seed keeps the same requests, and a kept request's
    /// spans are the same at any share.
    #[arg(long, value_name = "R", default_value = "1", requires = "spans", value_parser = parse_share)]
    pub span_sample: f64,
    /// The largest --spans file to write, like `4G` or `512M`: a run whose expected user
    /// requests × share × the smallest span's size already exceed it is refused before it
    /// starts, and the writing stops (exit 2, nothing left at FILE) when the spans pass it.
    #[arg(long, value_name = "SIZE", default_value = "4G", requires = "spans", value_parser = loadsim::guard::parse_bytes)]
    pub max_spans_size: u64,
    #[command(flatten)]
    pub memory: Memory,
    /// No progress bar (one drawn on stderr, when it is a terminal, for a run longer than a
    /// second: simulated time, events per second; for several files, the runs finished).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// With --seeds, run more than 1000 runs (seeds × files; without it, such a run is refused
    /// before it starts, as a sweep of as many cells is).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// The memory budget shared by commands that run simulations or hold many results.
#[derive(Debug, Args)]
pub struct Memory {
    /// Memory budget, like `2G` or `512M`, for each run (its pending events, jobs, attempts and
    /// open requests: a run estimated above it is refused before it starts, and one that grows
    /// past it stops) and for results held at once (time series, sweep cells, boundary probes).
    #[arg(long, value_name = "SIZE", default_value = "2G", value_parser = loadsim::guard::parse_bytes)]
    pub max_memory: u64,
}

/// A `--seeds` list (a newtype, so clap takes it as one value rather than many).
#[derive(Clone, Debug)]
pub struct Seeds(pub Vec<u64>);

fn parse_seeds(text: &str) -> Result<Seeds, String> {
    loadsim::commands::seeds::parse_seeds(text).map(Seeds)
}

/// Parses a bin width: a duration with a unit, at least 1 ms.
/// A share in (0, 1].
fn parse_share(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 1.0 => Ok(r),
        Ok(_) => Err(format!(
            "`{text}` is not in (0, 1]; give a share like 0.1 (one request in ten) or 1 (all)"
        )),
        Err(_) => Err(format!(
            "`{text}` is not a number; give a share in (0, 1] like 0.1"
        )),
    }
}

fn parse_resolution(text: &str) -> Result<SimDuration, String> {
    let d = loadsim::config::duration::parse_duration(text)?;
    if d < SimDuration::from_millis(1) {
        return Err(format!(
            "`{text}` is below 1ms; a bin must be at least `1ms` wide"
        ));
    }
    Ok(d)
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Scenario files, or folders to search for `*.yaml` files with `expect:` or `snapshot:`.
    #[arg(value_name = "PATH", default_value = ".", value_hint = ValueHint::AnyPath)]
    pub paths: Vec<PathBuf>,
    /// Accept new and changed snapshots: write `.snap` (instead of `.snap.new`).
    #[arg(long, conflicts_with = "review")]
    pub accept: bool,
    /// After the run, show each new or changed snapshot and ask to accept, reject or skip it
    /// (needs a terminal on stdin).
    #[arg(long)]
    pub review: bool,
    /// Also write the result as JUnit XML (one testcase per assertion and per snapshot).
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub junit: Option<PathBuf>,
    /// Output format: `text` (one line per case, then `N passed, M failed`) or `json` (one
    /// document with every case and the values per seed).
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    pub format: TestFormat,
    /// Print the scenario files that would be tested, one per line, and run nothing.
    #[arg(long, conflicts_with_all = ["accept", "review", "junit"])]
    pub list: bool,
    /// Event limit per run (see `loadsim run --max-events`).
    #[arg(long, default_value = "2e9", value_name = "N", value_parser = loadsim::guard::parse_count)]
    pub max_events: u64,
    /// No progress bar (one counting the runs is drawn on stderr when it is a terminal).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub memory: Memory,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files (YAML).
    #[arg(required = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Exit with code 1 when any warning is found (the report is still printed).
    #[arg(long)]
    pub deny_warnings: bool,
    /// `json`: one JSON document on stdout with every error, warning and note as an annotation
    /// (file, line, column, key, message, fix), for CI; also when the input is refused (exit 2).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
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
    /// Run a search of more than 10000 runs (without it, such a search is refused before it
    /// starts).
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub memory: Memory,
    /// No progress bar (one counting the runs is drawn on stderr when it is a terminal).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Event limit per run (see `loadsim run --max-events`).
    #[arg(long, default_value = "2e9", value_name = "N", value_parser = loadsim::guard::parse_count)]
    pub max_events: u64,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Scenario file (YAML) whose keys are tuned.
    #[arg(value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub file: PathBuf,
    /// A key to tune and its range, KEY=LOW..HIGH (repeat for 1–4 keys): durations with a unit
    /// (`100ms..2s`), whole numbers (`1..100`) or numbers (`0.01..1`). A range over a decade or
    /// more (LOW > 0) is searched on a log scale.
    #[arg(long, required = true, value_name = "KEY=LOW..HIGH")]
    pub vary: Vec<String>,
    /// Fault set (YAML: `faults:` names to faults, as in a scenario), each fault run alone
    /// [default: the built-in faults/standard.yaml].
    #[arg(long, value_name = "FAULTS.yaml", value_hint = ValueHint::FilePath)]
    pub faults: Option<PathBuf>,
    /// The service the fault set acts on [default: the service of the scenario's first fault].
    #[arg(long, value_name = "SERVICE")]
    pub target: Option<String>,
    /// Seeds, the same for every candidate: a count N (seeds 1 to N), `A..B` or `3,5,9`.
    #[arg(long, default_value = "3", value_name = "N|LIST")]
    pub seeds: SeedList,
    /// The metric to minimise (mean over the seeds), in healthy load, or under one fault of the
    /// set when prefixed with its name: `metrics.client_attempts_per_request`,
    /// `outage_10s: metrics.success_latency_p99_s`.
    #[arg(
        long,
        value_name = "METRIC",
        default_value = "metrics.success_latency_p99_s"
    )]
    pub objective: String,
    /// A requirement on every faulted run, METRIC OP NUMBER, or on one fault's runs, FAULT:
    /// METRIC OP NUMBER (repeatable) [default: `metrics.recovery_s <= 5` and
    /// `metrics.success_rate_before >= 0.999`].
    #[arg(long, value_name = "EXPR")]
    pub require: Vec<String>,
    /// Candidates whose objective is within this share of the best's tie with it (as do those
    /// within the 95 % interval of the per-seed differences); the recommendation is the tied
    /// candidate deepest inside the feasible region.
    #[arg(long, default_value_t = DEFAULT_TIE_TOLERANCE, value_name = "SHARE")]
    pub tie_tolerance: f64,
    /// Share of the seeds on which each requirement must hold, in (0, 1].
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    pub share: f64,
    /// Coarse grid values per key, LOW and HIGH included.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub steps: usize,
    /// Refinement rounds after the grid, each at half the previous spacing.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub rounds: usize,
    /// Write tune.md, tune.json, candidates.csv, pareto.svg and the run journal here.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,
    /// Keep the runs already journaled in --out and run only the missing ones.
    #[arg(long)]
    pub resume: bool,
    /// The report's format.
    #[arg(long, value_enum, default_value_t = TuneFormat::Text)]
    pub format: TuneFormat,
    /// Runs at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Run a search of more than 10000 runs (counted at most) without refusing.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Stop after this many runs, leaving the search unfinished (for testing --resume).
    #[arg(long, hide = true, value_name = "N")]
    pub max_runs: Option<usize>,
    #[command(flatten)]
    pub memory: Memory,
    /// Event limit per run (see `loadsim run --max-events`).
    #[arg(long, default_value = "2e9", value_name = "N", value_parser = loadsim::guard::parse_count)]
    pub max_events: u64,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Scenario file (YAML) of your system.
    #[arg(value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub file: PathBuf,
    /// The observed figures (YAML; docs/calibration.md). Repeat for windows observed at other
    /// loads (each file's `load:`, a multiple of the scenario's): every candidate runs at each
    /// load and the loss sums every window's figures.
    #[arg(long, required = true, value_name = "OBS.yaml", value_hint = ValueHint::FilePath)]
    pub observed: Vec<PathBuf>,
    /// A key to fit and its range, KEY=LOW..HIGH (repeat for 1–4 keys): durations with a unit
    /// (`1ms..50ms`), whole numbers (`2..64`) or numbers (`0.5..2`). A range over a decade or
    /// more (LOW > 0) is searched on a log scale.
    #[arg(long, required = true, value_name = "KEY=LOW..HIGH")]
    pub fit: Vec<String>,
    /// Seeds, the same for every candidate: a count N (seeds 1 to N), `A..B` or `3,5,9`.
    #[arg(long, default_value = "3", value_name = "N|LIST")]
    pub seeds: SeedList,
    /// Coarse grid values per key, LOW and HIGH included.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub steps: usize,
    /// Refinement rounds after the grid, each at half the previous spacing.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub rounds: usize,
    /// Write the fitted values as a scenario that `extends` FILE (refuses to overwrite an input).
    #[arg(long, value_name = "FILE.yaml", value_hint = ValueHint::FilePath)]
    pub write: Option<PathBuf>,
    /// Write calibrate.md, calibrate.json, candidates.csv and the run journal here.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,
    /// Keep the runs already journaled in --out and run only the missing ones.
    #[arg(long)]
    pub resume: bool,
    /// The report's format.
    #[arg(long, value_enum, default_value_t = CalibrateFormat::Text)]
    pub format: CalibrateFormat,
    /// Runs at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Run a search of more than 10000 runs (counted at most) without refusing.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Stop after this many runs, leaving the search unfinished (for testing --resume).
    #[arg(long, hide = true, value_name = "N")]
    pub max_runs: Option<usize>,
}

impl CalibrateArgs {
    pub fn request(self) -> CalibrateRequest {
        CalibrateRequest {
            file: self.file,
            sets: self.overrides.sets,
            observed: self.observed,
            fit: self.fit,
            seeds: self.seeds.0,
            steps: self.steps,
            rounds: self.rounds,
            write: self.write,
            out: self.out,
            format: self.format,
            jobs: self.jobs.map(usize::from),
            resume: self.resume,
            max_runs: self.max_runs,
            yes: self.yes,
            quiet: self.quiet,
        }
    }
}

/// A parsed seed list.
#[derive(Clone, Debug)]
pub struct SeedList(pub Vec<u64>);

impl std::str::FromStr for SeedList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_tune_seeds(s).map(SeedList)
    }
}

impl TuneArgs {
    pub fn request(self) -> TuneRequest {
        TuneRequest {
            file: self.file,
            sets: self.overrides.sets,
            vary: self.vary,
            faults: self.faults,
            target: self.target,
            seeds: self.seeds.0,
            objective: Some(self.objective),
            require: self.require,
            tie_tolerance: self.tie_tolerance,
            share: self.share,
            steps: self.steps,
            rounds: self.rounds,
            out: self.out,
            format: self.format,
            jobs: self.jobs.map(usize::from),
            resume: self.resume,
            max_runs: self.max_runs,
            yes: self.yes,
            quiet: self.quiet,
            options: RunOptions {
                max_events: self.max_events,
                max_memory: self.memory.max_memory,
                ..RunOptions::default()
            },
        }
    }
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Sweep file (YAML): name, scenarios, grid, zip, report.
    #[arg(value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub file: PathBuf,
    /// Cells run at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Output folder [default: evidence/<name>/, or evidence/<name>/shard-K-of-N/ with --shard].
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
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
    /// With --dry-run, `json`: the plan (axes, cells, shard, output folder) as one JSON document,
    /// or the errors as annotations (file, line, key, message) when the sweep is refused (exit 2).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, requires = "dry_run")]
    pub format: ReportFormat,
    /// No progress bar and no notes on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Stop after running N cells, leaving the sweep unfinished (to test --resume).
    #[arg(long, value_name = "N", hide = true)]
    pub max_cells: Option<usize>,
    /// Run more than 1000 cells (the shard's, with --shard; without it, such a sweep is refused
    /// before it starts; --dry-run never needs it).
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub memory: Memory,
    /// Event limit per cell: refuse a sweep with a cell that could need more events than this
    /// (rate × duration × worst-case attempts), and stop a run that exceeds it.
    #[arg(long, default_value = "2e9", value_name = "N", value_parser = loadsim::guard::parse_count)]
    pub max_events: u64,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Output folders of the shards (each with manifest.json and journal.jsonl).
    #[arg(required = true, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub dirs: Vec<PathBuf>,
    /// Folder for the merged results.csv, results.md and manifest.json.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: PathBuf,
    /// No notes on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The scenario's name or path, like `checkout` or `scenarios/checkout.yaml`.
    #[arg(value_name = "NAME", value_hint = ValueHint::FilePath)]
    pub name: PathBuf,
    /// The article policy to start from.
    #[arg(long, value_enum, default_value_t = Template::Naive)]
    pub from: Template,
    /// Overwrite the scenario file, or a different scenario.schema.json next to it, if it exists.
    #[arg(long)]
    pub force: bool,
    /// No editor schema: no modeline, and no scenario.schema.json written.
    #[arg(long)]
    pub no_schema: bool,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file format.
    #[arg(value_enum)]
    pub kind: SchemaKind,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write loadsim.1 and one page per command into DIR instead of printing loadsim.1.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

// From parsed arguments to the library's requests: what each command needs, without clap.
impl RunArgs {
    pub fn request(self) -> (RunRequest, RunOutputs) {
        (
            RunRequest {
                files: self.files,
                sets: self.overrides.sets,
                seed: self.seed,
                options: RunOptions {
                    max_events: self.max_events,
                    max_memory: self.memory.max_memory,
                    ..RunOptions::default()
                },
                yes: self.yes,
            },
            RunOutputs {
                format: self.format,
                output: self.output,
                timeseries: self.timeseries,
                plot_dir: self.plot,
                resolution: self.timeseries_resolution,
                max_memory: self.memory.max_memory,
                html: self.html,
                command: String::new(),
                quiet: self.quiet,
                spans: self.spans,
                span_sample: self.span_sample,
                max_spans_size: self.max_spans_size,
            },
        )
    }
}

impl BoundaryArgs {
    pub fn request(self) -> BoundaryRequest {
        BoundaryRequest {
            files: self.files,
            sets: self.overrides.sets,
            vary: self.vary,
            ranges: self.range,
            seeds: self.seeds,
            criterion: self.criterion,
            steps: self.steps,
            tolerance: self.tolerance,
            out: self.out,
            yes: self.yes,
            max_memory: self.memory.max_memory,
            quiet: self.quiet,
            options: RunOptions {
                max_events: self.max_events,
                max_memory: self.memory.max_memory,
                ..RunOptions::default()
            },
        }
    }
}

impl NewArgs {
    pub fn request(self) -> NewRequest {
        NewRequest {
            name: self.name,
            from: self.from,
            force: self.force,
            schema: !self.no_schema,
        }
    }
}

impl SweepArgs {
    /// The options of the sweep; `command` is the command line, for its manifest.
    pub fn options(&self, command: String) -> SweepOptions {
        SweepOptions {
            jobs: self.jobs.map(usize::from),
            out: self.out.clone(),
            resume: self.resume,
            shard: self.shard,
            dry_run: self.dry_run,
            format: self.format,
            quiet: self.quiet,
            max_cells: self.max_cells,
            yes: self.yes,
            max_memory: self.memory.max_memory,
            command,
            run: RunOptions {
                max_events: self.max_events,
                max_memory: self.memory.max_memory,
                ..RunOptions::default()
            },
        }
    }
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub source: ImportSource,
}

#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// A gRPC service config (JSON): a methodConfig's timeout and retryPolicy or hedgingPolicy,
    /// and retryThrottling (gRFC A6).
    Grpc(GrpcImportArgs),
    /// An Envoy configuration (YAML): a route's timeout and retry_policy, a cluster's
    /// circuit_breakers.
    Envoy(EnvoyImportArgs),
    /// Distributed traces (OTLP, Jaeger or Zipkin v2 JSON): a commented scenario of the services,
    /// calls, stages, own work and arrivals they show; the coverage report and every default
    /// chosen go to stderr (docs/import.md).
    Traces(TracesImportArgs),
}

#[derive(Debug, Args)]
pub struct TracesImportArgs {
    /// Trace files, JSON: OTLP (`resourceSpans`, one request per line as the collector's file
    /// exporter writes; Tempo's `batches`), Jaeger (`data[].spans` + `processes`) or Zipkin v2
    /// (a list of spans).
    #[arg(required = true, value_hint = ValueHint::FilePath)]
    pub files: Vec<PathBuf>,
    /// The format of every file (default: each file's shape says it).
    #[arg(long, value_enum)]
    pub format: Option<loadsim::import::traces::TraceFormat>,
    /// Write the scenario to this file instead of stdout (never over an input).
    #[arg(long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub out: Option<PathBuf>,
    /// Write each service's own work as `{dist: empirical, samples: [...]}` (every sample)
    /// instead of `{p50, p99}` quantiles.
    #[arg(long)]
    pub samples: bool,
    /// A service that is a client, not part of the system (a load generator, a browser): its
    /// root CLIENT spans are requests of a class at the service they call, their first per
    /// trace an arrival and the rest retries. Repeat for several; default `client`, the name
    /// `loadsim run --spans` gives its client (docs/import.md).
    #[arg(long = "client", value_name = "SERVICE", default_value = "client")]
    pub clients: Vec<String>,
}

#[derive(Debug, Args)]
pub struct GrpcImportArgs {
    /// The service config, JSON.
    #[arg(value_hint = ValueHint::FilePath)]
    pub file: PathBuf,
    /// The service of the methodConfig to read, `package.Service` (needed when the file has more
    /// than one).
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,
    /// The method of the methodConfig to read (gRPC's lookup: the exact name, then the service's
    /// default, then the default for all).
    #[arg(long, value_name = "NAME")]
    pub method: Option<String>,
    /// Exit 2 when a field has no exact loadsim meaning.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true).args(["route", "cluster"])))]
pub struct EnvoyImportArgs {
    /// The Envoy configuration, YAML (a bootstrap, a route configuration or clusters; routes and
    /// clusters are found by name anywhere in it).
    #[arg(value_hint = ValueHint::FilePath)]
    pub file: PathBuf,
    /// The route whose timeout and retry_policy to read.
    #[arg(long, value_name = "NAME")]
    pub route: Option<String>,
    /// The cluster whose circuit_breakers to read.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// Exit 2 when a field has no exact loadsim meaning.
    #[arg(long)]
    pub strict: bool,
}

impl ImportArgs {
    pub fn request(self) -> loadsim::commands::import::ImportRequest {
        use loadsim::commands::import::ImportRequest;
        match self.source {
            ImportSource::Grpc(a) => ImportRequest::Grpc {
                file: a.file,
                select: loadsim::import::grpc::Select {
                    service: a.service,
                    method: a.method,
                },
                strict: a.strict,
            },
            ImportSource::Envoy(a) => ImportRequest::Envoy {
                file: a.file,
                select: loadsim::import::envoy::Select {
                    route: a.route,
                    cluster: a.cluster,
                },
                strict: a.strict,
            },
            ImportSource::Traces(a) => ImportRequest::Traces {
                files: a.files,
                format: a.format,
                out: a.out,
                samples: a.samples,
                clients: a.clients,
            },
        }
    }
}
