//! The command line, as clap derive types. Doc comments here are the `--help` text; each
//! subcommand's `after_help` holds worked examples.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueHint};

use loadsim::commands::new::Template;
use loadsim::report::Format;
use loadsim::schema::SchemaKind;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (also when stdout is closed early, as by `| head`)
  1  a run failed (e.g. it went over --max-events) or output could not be written
  2  bad input: a scenario file, a key, a value or a flag

Colour: diagnostics are coloured on a terminal only, never when NO_COLOR is set.
Docs: docs/cookbook.md (model your own chain, add a protection, sweep, read the report, CI).";

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
  loadsim run scenarios/naive.yaml scenarios/protected.yaml --format csv-long > runs.csv";

const CHECK_EXAMPLES: &str = "\
Examples:
  # Validate, and see the worst-case attempts on each service per user request
  loadsim check scenarios/naive.yaml

  # Validate with an override, as `run` would apply it
  loadsim check scenarios/protected.yaml --set services.svc_b.queue_cap=8";

const NEW_EXAMPLES: &str = "\
Examples:
  # A starter scenario with the naive policies, plus the editor schema next to it
  loadsim new checkout
  loadsim run checkout.yaml

  # Start from the protected policies, in a folder
  loadsim new scenarios/checkout --from protected

Writes NAME.yaml (\".yaml\" is added when missing) and scenario.schema.json in the same folder; the
scenario's first line points editors that use yaml-language-server (VS Code YAML, Neovim, Helix,
Zed) at that schema, for completion and checking as you type.";

const SCHEMA_EXAMPLES: &str = "\
Examples:
  # Save the schema where your editor can find it
  loadsim schema scenario > scenario.schema.json

  # ...and name it on the first line of each scenario file:
  # yaml-language-server: $schema=scenario.schema.json

  # Or map it to every scenario in VS Code's settings.json:
  #   \"yaml.schemas\": { \"./scenario.schema.json\": \"scenarios/*.yaml\" }";

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
    version,
    about,
    propagate_version = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios and print their metrics side by side.
    ///
    /// Files run in parallel; results print in argument order on stdout, errors on stderr.
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Validate scenarios without running them, and print the worst-case attempts (R1) per service.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Write a commented starter scenario that runs as is.
    #[command(after_help = NEW_EXAMPLES)]
    New(NewArgs),
    /// Print the JSON Schema of a file format, for editors and other tools.
    #[command(after_help = SCHEMA_EXAMPLES)]
    Schema(SchemaArgs),
    /// Print a shell completion script.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
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
    #[command(flatten)]
    pub overrides: Overrides,
    /// Output format (all on stdout): `table` for reading, `json` one document for jq, `csv` one
    /// row per scenario, `csv-long` one row per scenario × metric (columns
    /// scenario,seed,metric,scope,entity,name,value).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Stop a run that exceeds this many events.
    #[arg(long, default_value_t = 2_000_000_000, value_name = "N")]
    pub max_events: u64,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files (YAML).
    #[arg(required = true, value_name = "FILE", value_hint = ValueHint::FilePath)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The scenario's name or path, like `checkout` or `scenarios/checkout.yaml`.
    #[arg(value_name = "NAME", value_hint = ValueHint::FilePath)]
    pub name: PathBuf,
    /// The article policy to start from.
    #[arg(long, value_enum, default_value_t = Template::Naive)]
    pub from: Template,
    /// Overwrite the scenario file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Do not write scenario.schema.json, nor the modeline that names it.
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
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
