//! The `loadsim` binary: parse the command line, call the library, print, map errors to exit codes
//! (0 ok or closed pipe, 1 a run failed, 2 bad input). Data goes to stdout, everything else —
//! diagnostics, notes about files written — to stderr, coloured only on a terminal and never when
//! `NO_COLOR` is set (`anstream` strips the styles otherwise).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command};
use loadsim::commands;
use loadsim::model::RunOptions;
use loadsim::scenario::Paint;

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
        Command::Check(a) => commands::check::check(&a.files, &a.overrides.sets),
        Command::New(a) => commands::new::new_scenario(&commands::new::NewRequest {
            name: a.name,
            from: a.from,
            force: a.force,
            schema: !a.no_schema,
        })
        .map(|w| {
            let mut note = format!("wrote {}", w.scenario.display());
            if let Some(s) = &w.schema {
                note.push_str(&format!(" and {} (its editor schema)", s.display()));
            }
            note.push_str(&format!(
                "; run it with `loadsim run {}`",
                w.scenario.display()
            ));
            anstream::eprintln!("{note}");
            String::new()
        }),
        Command::Schema(a) => commands::schema::schema(a.kind),
        Command::Completions(a) => {
            let mut out = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "loadsim", &mut out);
            Ok(String::from_utf8_lossy(&out).into_owned())
        }
    };
    match result {
        Ok(text) => print_stdout(&text),
        Err(e) => {
            let mut text = String::new();
            let _ = e.write_styled(&mut text, Paint::TERMINAL);
            anstream::eprintln!("{text}");
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
            let l = Paint::TERMINAL.label;
            anstream::eprintln!("{l}error{l:#}: cannot write to stdout: {e}");
            ExitCode::from(1)
        }
    }
}
