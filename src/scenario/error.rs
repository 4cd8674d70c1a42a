//! Configuration diagnostics. Owns the shape of "what is wrong with this input": the file, the
//! dotted key path, the line and column when the key comes from a YAML file, a sentence that says
//! what to do, and the offending source line for a caret. Formatting for the terminal lives in
//! `Display`; the binary adds colour and the exit code (2).

use std::fmt;
use std::path::PathBuf;

/// Where a diagnostic points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A YAML file, at a 1-based line and 1-based column when known.
    File {
        path: PathBuf,
        line: Option<usize>,
        column: Option<usize>,
        source_line: Option<String>,
    },
    /// A `--set KEY=VALUE` argument, applied to the document read from `file`.
    Set { argument: String, file: PathBuf },
    /// A command-line flag.
    Flag { flag: String },
}

/// One problem with the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub origin: Origin,
    /// Dotted key path, like `services.svc_b.slots`; empty for the whole document.
    pub key: String,
    pub message: String,
}

/// Every problem found in one input, reported together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub diagnostics: Vec<Diagnostic>,
}

impl ConfigError {
    /// A single diagnostic.
    pub fn one(d: Diagnostic) -> Self {
        ConfigError {
            diagnostics: vec![d],
        }
    }

    /// A problem with a file as a whole (missing, unreadable, not YAML).
    pub fn file(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::one(Diagnostic {
            origin: Origin::File {
                path: path.into(),
                line: None,
                column: None,
                source_line: None,
            },
            key: String::new(),
            message: message.into(),
        })
    }

    /// A problem with a command-line flag.
    pub fn flag(flag: impl Into<String>, message: impl Into<String>) -> Self {
        Self::one(Diagnostic {
            origin: Origin::Flag { flag: flag.into() },
            key: String::new(),
            message: message.into(),
        })
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = if self.key.is_empty() {
            String::new()
        } else {
            format!("`{}`: ", self.key)
        };
        match &self.origin {
            Origin::File {
                path,
                line,
                column,
                source_line,
            } => {
                write!(f, "{}", path.display())?;
                if let Some(l) = line {
                    write!(f, ":{l}")?;
                    if let Some(c) = column {
                        write!(f, ":{c}")?;
                    }
                }
                write!(f, ": {key}{}", self.message)?;
                if let (Some(l), Some(text)) = (line, source_line) {
                    let gutter = l.to_string();
                    let pad = " ".repeat(gutter.len());
                    let caret_at = column.unwrap_or(1).saturating_sub(1);
                    write!(
                        f,
                        "\n {pad} |\n {gutter} | {text}\n {pad} | {}^",
                        " ".repeat(caret_at)
                    )?;
                }
                Ok(())
            }
            Origin::Set { argument, file } => {
                write!(
                    f,
                    "{}: --set {argument}: {key}{}",
                    file.display(),
                    self.message
                )
            }
            Origin::Flag { flag } => write!(f, "{flag}: {key}{}", self.message),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}
