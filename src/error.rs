//! The library's error type. Owns the split the binary turns into exit codes: bad input (a
//! configuration or usage problem, exit 2, and a run the scenario made impossible: stalled,
//! without requests or over the memory limit) versus a run that could not finish (exit 1).

use thiserror::Error;

use crate::config::{ConfigError, Paint};
use crate::model::RunError;

/// Anything a command can fail with.
#[derive(Debug, Error)]
pub enum Error {
    /// The input is wrong: a file, a key, a flag. Exit code 2.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The input is wrong, and the command owes stdout a machine-read report of it (`check` and
    /// `sweep --dry-run` with `--format json`). Exit code 2.
    #[error("{error}")]
    Reported {
        /// The report of the problems, in the requested format, for stdout.
        report: String,
        /// The problems themselves, for stderr and the exit code.
        error: ConfigError,
    },
    /// A run could not finish. Exit code 1, or 2 when the scenario is at fault
    /// ([`RunError::is_input_problem`]: it stalled, had no request, or outgrew `--max-memory`).
    #[error("error: {0}")]
    Run(#[from] RunError),
    /// A sweep stopped before every cell ran (`--max-cells`); what finished is in its journal.
    /// Exit code 1.
    #[error("error: {0}")]
    Stopped(String),
    /// A figure could not be drawn or written. Exit code 1.
    #[error("error: {0}")]
    Plot(#[from] crate::plot::PlotError),
    /// `--deny-warnings` and the check found warnings. Exit code 1; the report still goes to
    /// stdout.
    #[error("error: {warnings} warning(s) found and --deny-warnings is set")]
    Denied {
        /// The check's report, for stdout.
        report: String,
        /// How many warnings the check found (at least 1).
        warnings: usize,
    },
    /// `loadsim test` found failing cases. Exit code 1; the report still goes to stdout.
    #[error("error: {failed} test case(s) failed")]
    TestsFailed {
        /// The test report, for stdout.
        report: String,
        /// How many cases failed (at least 1).
        failed: usize,
    },
    /// `loadsim tune` found no setting that meets every requirement, or `loadsim calibrate`
    /// left a figure outside its tolerance after the fit. Exit code 1; the report (with the
    /// closest setting, or the fit it found) still goes to stdout.
    #[error("error: {summary}")]
    Infeasible {
        /// The command's report, for stdout.
        report: String,
        /// One line saying what could not be met, for stderr.
        summary: String,
    },
    /// Writing output failed. Exit code 1 (0 for a closed pipe, handled by the binary).
    #[error("error: cannot write {what}: {source}")]
    Output {
        /// What was being written: a path, or a phrase ("the manual page").
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config(_) | Error::Reported { .. } => 2,
            Error::Run(e) if e.is_input_problem() => 2,
            Error::Run(_)
            | Error::Stopped(_)
            | Error::Plot(_)
            | Error::Output { .. }
            | Error::Denied { .. }
            | Error::Infeasible { .. }
            | Error::TestsFailed { .. } => 1,
        }
    }

    /// What must still reach stdout although the command failed (the report of a denied check).
    pub fn stdout(&self) -> Option<&str> {
        match self {
            Error::Denied { report, .. }
            | Error::TestsFailed { report, .. }
            | Error::Infeasible { report, .. }
            | Error::Reported { report, .. } => Some(report),
            _ => None,
        }
    }

    /// The message as the binary prints it, in `paint` (`error: …` lines).
    pub fn write_styled(&self, f: &mut impl std::fmt::Write, paint: Paint) -> std::fmt::Result {
        match self {
            Error::Config(c) | Error::Reported { error: c, .. } => c.write_styled(f, paint),
            other => {
                let l = paint.label;
                let text = other.to_string();
                let rest = text.strip_prefix("error: ").unwrap_or(&text);
                write!(f, "{l}error{l:#}: {rest}")
            }
        }
    }
}

/// With `--format json`, a refused input becomes [`Error::Reported`]: the JSON on stdout, the
/// diagnostics on stderr as usual, exit 2. Other errors pass unchanged.
pub fn json_on_refusal<T>(
    format: crate::report::diagnostics::ReportFormat,
    r: Result<T, Error>,
) -> Result<T, Error> {
    match (format, r) {
        (crate::report::diagnostics::ReportFormat::Json, Err(Error::Config(c))) => {
            Err(Error::Reported {
                report: crate::report::diagnostics::refused(&c),
                error: c,
            })
        }
        (_, r) => r,
    }
}
