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
use loadsim::scenario::Paint;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(output) => print(&output),
        Err(e) => fail(e),
    }
}

/// Runs one command.
fn run(command: Command) -> Result<Output, Error> {
    match command {
        Command::Run(a) => {
            let (request, outputs) = a.request();
            commands::run::run(&request, &outputs)
        }
        Command::Check(a) => commands::check::check(&a.files, &a.overrides.sets, a.deny_warnings),
        Command::Sweep(a) => commands::sweep::sweep(&a.file, &a.options(command_line())),
        Command::Merge(a) => commands::sweep::merge(&a.dirs, &a.out, &command_line(), a.quiet),
        Command::Boundary(a) => commands::boundary::boundary(&a.request()),
        Command::New(a) => commands::new::new(&a.request()),
        Command::Schema(a) => commands::schema::schema(a.kind),
        Command::Completions(a) => Ok(completions(a.shell)),
    }
}

/// The completion script for `shell`.
fn completions(shell: clap_complete::Shell) -> Output {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "loadsim", &mut out);
    Output::stdout(String::from_utf8_lossy(&out))
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
