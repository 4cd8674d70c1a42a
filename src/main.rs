//! The `loadsim` binary, read top to bottom as its pipeline: parse the command line, run the
//! command (a library function that returns its output), print, and map the outcome to an exit
//! code (0 ok or closed pipe, 1 a run failed, 2 bad input).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command};
use loadsim::Error;
use loadsim::commands::{self, Output};
use loadsim::config::Paint;
use loadsim::model::RunOptions;

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.color.apply();
    if cli.version {
        return print_stdout(&loadsim::version_text(cli.verbose));
    }
    let Some(command) = cli.command else {
        let _ = Cli::command().print_help();
        return ExitCode::from(2);
    };
    match run(command) {
        Ok(output) => print(&output),
        Err(e) => fail(e),
    }
}

/// Runs one command.
fn run(command: Command) -> Result<Output, Error> {
    match command {
        Command::Run(a) => {
            let seeds = a.seeds.clone();
            let (request, mut outputs) = a.request();
            outputs.command = command_line();
            match seeds {
                Some(seeds) => commands::seeds::run_seeds(&request, &seeds.0, &outputs),
                None => commands::run::run(&request, &outputs),
            }
        }
        Command::Check(a) => {
            commands::check::check_as(&a.files, &a.overrides.sets, a.deny_warnings, a.format)
        }
        Command::Sweep(a) => commands::sweep::sweep(&a.file, &a.options(command_line())),
        Command::Merge(a) => commands::sweep::merge(&a.dirs, &a.out, &command_line(), a.quiet),
        Command::Boundary(a) => commands::boundary::boundary(&a.request()),
        Command::Tune(a) => commands::tune::tune(&a.request()),
        Command::Calibrate(a) => commands::calibrate::calibrate(&a.request()),
        Command::New(a) => commands::new::new(&a.request()),
        Command::Import(a) => commands::import::import(&a.request()),
        Command::Schema(a) => commands::schema::schema(a.kind),
        Command::Completions(a) => Ok(completions(a.shell)),
        Command::Man(a) => match a.out {
            None => commands::man::page(Cli::command()).map(Output::stdout),
            Some(dir) => commands::man::write_all(Cli::command(), &dir).map(|written| Output {
                stdout: String::new(),
                notes: written
                    .iter()
                    .map(|p| format!("wrote {}", p.display()))
                    .collect(),
            }),
        },
        Command::Test(a) => test(a),
    }
}

/// The completion script for `shell`.
fn completions(shell: clap_complete::Shell) -> Output {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "loadsim", &mut out);
    Output::stdout(String::from_utf8_lossy(&out))
}

/// `loadsim test`: list, or run and print the report (then walk pending snapshots with
/// `--review`, printing the report first); failing cases are an error with exit code 1 whose
/// report still reaches stdout.
fn test(a: cli::TestArgs) -> Result<Output, Error> {
    use std::io::IsTerminal;
    if a.list {
        let files = commands::test::discover(&a.paths)?;
        return Ok(Output::stdout(
            files
                .iter()
                .map(|(f, _)| format!("{}\n", f.display()))
                .collect::<String>(),
        ));
    }
    if a.review && !std::io::stdin().is_terminal() {
        return Err(loadsim::config::ConfigError::flag(
            "--review",
            "asks about each snapshot on a terminal, and stdin is not one; use --accept, or run it in a terminal",
        )
        .into());
    }
    let run = commands::test::test(&commands::test::TestRequest {
        paths: a.paths,
        accept: a.accept,
        ci: commands::test::ci_from_env(),
        junit: a.junit,
        options: RunOptions {
            max_events: a.max_events,
            max_memory: a.memory.max_memory,
            ..RunOptions::default()
        },
        quiet: a.quiet,
    })?;
    let mut output = Output::stdout(run.report.render(a.format));
    let mut failed = run.report.failed;
    if a.format == loadsim::expect::report::TestFormat::Json {
        output.notes.push(run.report.summary_line());
    }
    if a.review {
        print(&std::mem::take(&mut output));
        let reviewed = commands::test::review(
            &run.pending,
            &mut std::io::stdin().lock(),
            &mut std::io::stderr().lock(),
        )
        .map_err(|source| Error::Output {
            what: "the review".into(),
            source,
        })?;
        output.notes.push(format!(
            "review: {} accepted, {} rejected, {} skipped",
            reviewed.accepted, reviewed.rejected, reviewed.skipped
        ));
        failed -= reviewed.accepted_failures;
    }
    if failed > 0 {
        for note in &output.notes {
            note_stderr(note);
        }
        Err(Error::TestsFailed {
            report: output.stdout,
            failed,
        })
    } else {
        Ok(output)
    }
}

/// The command line as typed (program name shortened to `loadsim`), for manifests.
fn command_line() -> String {
    std::iter::once("loadsim".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints a command's notes on stderr, then its data on stdout.
fn print(output: &Output) -> ExitCode {
    for note in &output.notes {
        note_stderr(note);
    }
    print_stdout(&output.stdout)
}

/// Prints `e` on stderr (after any report it still owes stdout, like a denied check's) and maps
/// it to its exit code.
fn fail(e: Error) -> ExitCode {
    if let Some(report) = e.stdout() {
        print_stdout(report);
    }
    let mut text = String::new();
    let _ = e.write_styled(&mut text, Paint::TERMINAL);
    note_stderr(&text);
    ExitCode::from(e.exit_code() as u8)
}

/// Writes a line to stderr through `anstream`, which drops the ANSI styles unless stderr is a
/// terminal that wants colour (never with `NO_COLOR`). A closed stderr (`2>&1 | head -1`) must
/// not turn a diagnostic into a panic, so write errors are ignored.
fn note_stderr(text: &str) {
    let _ = writeln!(anstream::stderr(), "{text}");
}

/// Writes to stdout; a closed pipe (`| head`) is a normal end, not an error.
fn print_stdout(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let l = Paint::TERMINAL.label;
            note_stderr(&format!("{l}error{l:#}: cannot write to stdout: {e}"));
            ExitCode::from(1)
        }
    }
}
