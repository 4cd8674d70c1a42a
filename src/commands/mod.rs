//! The subcommands as library functions. Owns what each command does between parsed arguments and
//! text on stdout, so the binary stays a thin shell and tests can call commands directly. What
//! commands share — loading with overrides, the parallel map, progress, writing outputs — is the
//! grid runner, [`crate::runner`].

pub mod boundary;
pub mod calibrate;
pub mod check;
pub mod import;
pub mod man;
pub mod new;
pub mod run;
pub mod schema;
pub mod seeds;
pub mod sweep;
pub mod test;
pub mod tune;

/// What a command produced, for the binary to print: the data for stdout and the notes for
/// stderr (files the command wrote are already written).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// The report or data, printed on stdout (or written to `--output`).
    pub stdout: String,
    /// One-line notes for stderr, such as which files were written.
    pub notes: Vec<String>,
}

impl Output {
    /// Output that is only text for stdout.
    pub fn stdout(text: impl Into<String>) -> Output {
        Output {
            stdout: text.into(),
            notes: Vec::new(),
        }
    }

    /// Output that is only a note for stderr.
    pub fn note(note: impl Into<String>) -> Output {
        Output {
            stdout: String::new(),
            notes: vec![note.into()],
        }
    }
}
