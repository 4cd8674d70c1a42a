//! The `loadsim` binary: parse the command line, call the library, print, map errors to exit codes
//! (0 ok or closed pipe, 1 a run failed, 2 bad input).

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use cli::{Cli, Command};
use loadsim::config::Paint;
use loadsim::model::RunOptions;
use loadsim::{Error, commands, guard};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (result, output) = match cli.command {
        Command::Run(a) => {
            let result = match &a.output {
                Some(path) => guard::check_output_path(path).map_err(Error::from),
                None => Ok(()),
            }
            .and_then(|()| {
                commands::run::run_with_outputs(
                    &commands::run::RunRequest {
                        files: a.files,
                        sets: a.overrides.sets,
                        seed: a.seed,
                        options: RunOptions {
                            max_events: a.max_events,
                        },
                    },
                    a.format,
                    &commands::run::SeriesOutputs {
                        timeseries: a.timeseries,
                        plot_dir: a.plot,
                        resolution: a.timeseries_resolution,
                    },
                )
            })
            .map(|(text, written)| {
                for path in written {
                    let _ = writeln!(std::io::stderr().lock(), "wrote {}", path.display());
                }
                text
            });
            (result, a.output)
        }
        Command::Check(a) => (
            commands::check::check(&a.files, &a.overrides.sets, a.deny_warnings),
            None,
        ),
        Command::Boundary(a) => (
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
            }),
            None,
        ),
        Command::New(a) => (
            commands::new::new_scenario(&commands::new::NewRequest {
                name: a.name,
                from: a.from,
                force: a.force,
                schema: !a.no_schema,
            })
            .map(|w| {
                let mut note = format!("wrote {}", w.scenario.display());
                match (&w.schema, &w.modeline) {
                    (Some(s), _) => {
                        note.push_str(&format!(" and {} (its editor schema)", s.display()))
                    }
                    (None, Some(m)) => note.push_str(&format!(" (its editor schema: {m})")),
                    (None, None) => {}
                }
                note.push_str(&format!(
                    "; run it with `loadsim run {}`",
                    w.scenario.display()
                ));
                note_stderr(&note);
                String::new()
            }),
            None,
        ),
        Command::Schema(a) => (commands::schema::schema(a.kind), None),
        Command::Completions(a) => {
            let mut out = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "loadsim", &mut out);
            (Ok(String::from_utf8_lossy(&out).into_owned()), None)
        }
        Command::Sweep(a) => (
            commands::sweep::sweep(
                &a.file,
                &commands::sweep::SweepOptions {
                    jobs: a.jobs.map(usize::from),
                    out: a.out,
                    resume: a.resume,
                    shard: a.shard,
                    dry_run: a.dry_run,
                    quiet: a.quiet,
                    max_cells: a.max_cells,
                    yes: a.yes,
                    command: command_line(),
                    run: RunOptions {
                        max_events: a.max_events,
                    },
                },
            ),
            None,
        ),
        Command::Merge(a) => (
            commands::sweep::merge(&a.dirs, &a.out, &command_line(), a.quiet),
            None,
        ),
    };
    match (result, output) {
        (Ok(text), None) => print_stdout(&text),
        (Ok(text), Some(path)) => match std::fs::write(&path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(source) => fail(Error::Output {
                what: path.display().to_string(),
                source,
            }),
        },
        (Err(e), _) => fail(e),
    }
}

/// The command line as typed (program name shortened to `loadsim`), for manifests.
fn command_line() -> String {
    std::iter::once("loadsim".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ")
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
