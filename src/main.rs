//! The `loadsim` binary: parse the command line, call the library, print, map errors to exit codes
//! (0 ok or closed pipe, 1 a run failed, 2 bad input).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command};
use loadsim::commands;
use loadsim::model::RunOptions;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => commands::run::run_and_render(
            &commands::run::RunRequest {
                files: a.files,
                sets: a.overrides.sets,
                seed: a.seed,
                options: RunOptions {
                    max_events: a.max_events,
                },
            },
            a.format,
        ),
        Command::Check(a) => commands::check::check(&a.files, &a.overrides.sets, a.deny_warnings),
        Command::Boundary(a) => {
            commands::boundary::boundary(&commands::boundary::BoundaryRequest {
                files: a.files,
                sets: a.overrides.sets,
                vary: a.vary,
                ranges: a.range,
                seeds: a.seeds,
                criterion: a.criterion,
                steps: a.steps,
                tolerance: a.tolerance,
                out: a.out,
            })
        }
    };
    match result {
        Ok(text) => print_stdout(&text),
        Err(e) => {
            if let Some(report) = e.stdout() {
                print_stdout(report);
            }
            eprintln!("{e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is a normal end, not an error.
fn print_stdout(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            ExitCode::from(1)
        }
    }
}
