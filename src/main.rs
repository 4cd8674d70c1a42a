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
    if cli.version {
        return print_stdout(&loadsim::version_text(cli.verbose));
    }
    let Some(command) = cli.command else {
        let _ = Cli::command().print_help();
        return ExitCode::from(2);
    };
    let (result, output) = match command {
        Command::Run(a) => {
            let result = match &a.output {
                Some(path) => guard::check_output_path(path).map_err(Error::from),
                None => Ok(()),
            }
            .and_then(|()| match &a.seeds {
                Some(seeds) => commands::seeds::run_seeds(
                    &commands::run::RunRequest {
                        files: a.files.clone(),
                        sets: a.overrides.sets.clone(),
                        seed: None,
                        options: RunOptions {
                            max_events: a.max_events,
                        },
                    },
                    &seeds.0,
                    a.format,
                )
                .map(|text| (text, Vec::new())),
                None => commands::run::run_with_outputs(
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
                        timeseries: a.timeseries.clone(),
                        plot_dir: a.plot.clone(),
                        resolution: a.timeseries_resolution,
                    },
                ),
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
        Command::Test(a) => (test(a), None),
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

/// `loadsim test`: list, or run and print the report (then walk pending snapshots with
/// `--review`); failing cases are an error with exit code 1 whose report still reaches stdout.
fn test(a: cli::TestArgs) -> Result<String, Error> {
    use std::io::IsTerminal;
    if a.list {
        let files = commands::test::discover(&a.paths)?;
        return Ok(files
            .iter()
            .map(|(f, _)| format!("{}\n", f.display()))
            .collect());
    }
    if a.review && !std::io::stdin().is_terminal() {
        return Err(loadsim::scenario::ConfigError::flag(
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
        },
    })?;
    let mut report = run.report.render(a.format);
    let mut failed = run.report.failed;
    if a.format == loadsim::expect::report::TestFormat::Json {
        note_stderr(&run.report.summary_line());
    }
    if a.review {
        print_stdout(&std::mem::take(&mut report));
        let reviewed = commands::test::review(
            &run.pending,
            &mut std::io::stdin().lock(),
            &mut std::io::stderr().lock(),
        )
        .map_err(|source| Error::Output {
            what: "the review".into(),
            source,
        })?;
        note_stderr(&format!(
            "review: {} accepted, {} rejected, {} skipped",
            reviewed.accepted, reviewed.rejected, reviewed.skipped
        ));
        failed -= reviewed.accepted_failures;
    }
    if failed > 0 {
        Err(Error::TestsFailed { report, failed })
    } else {
        Ok(report)
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
