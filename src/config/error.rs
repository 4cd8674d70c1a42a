//! Configuration diagnostics. Owns the shape of "what is wrong with this input": the file, the
//! dotted key path, the line and column when the key comes from a YAML file, a sentence that says
//! what to do, and the offending source line for a caret. Formatting lives in `Display` (plain) and
//! `write_styled` (with ANSI styles); the binary decides whether colour reaches the terminal and
//! maps the error to exit code 2.

use std::fmt;
use std::path::PathBuf;

/// Where a diagnostic points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A YAML file, at a 1-based line and 1-based column when known.
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line (`None`: the whole file).
        line: Option<usize>,
        /// 1-based column (`None`: unknown).
        column: Option<usize>,
        /// The text of that line, for a caret under the column.
        source_line: Option<String>,
    },
    /// A `--set KEY=VALUE` argument, applied to the document read from `file`.
    Set {
        /// The argument as given (`KEY=VALUE`).
        argument: String,
        /// The file the document was read from.
        file: PathBuf,
    },
    /// A command-line flag.
    Flag {
        /// The flag (`--jobs`), or the command when no one flag is at fault.
        flag: String,
    },
}

/// One problem with the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where it points: a file position, a `--set` argument or a flag.
    pub origin: Origin,
    /// Dotted key path, like `services.svc_b.slots`; empty for the whole document.
    pub key: String,
    /// A sentence that says what is wrong and what to do.
    pub message: String,
}

/// Every problem found in one input, reported together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Every problem, in the order found (at least one).
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

/// The styles of a rendered diagnostic; [`Paint::PLAIN`] for `Display`, [`Paint::TERMINAL`] for
/// a terminal (the binary writes through `anstream`, which strips the codes again when stderr is
/// not a terminal or `NO_COLOR` is set).
#[derive(Clone, Copy, Debug)]
pub struct Paint {
    /// The `error:` label.
    pub label: anstyle::Style,
    /// `file:line:col`.
    pub location: anstyle::Style,
    /// The key path.
    pub key: anstyle::Style,
    /// The gutter and the caret under the source line.
    pub gutter: anstyle::Style,
}

impl Paint {
    /// No styling at all.
    pub const PLAIN: Paint = Paint {
        label: anstyle::Style::new(),
        location: anstyle::Style::new(),
        key: anstyle::Style::new(),
        gutter: anstyle::Style::new(),
    };
    /// rustc's palette: a bold red label, bold locations, bold blue gutter and caret.
    pub const TERMINAL: Paint = Paint {
        label: anstyle::Style::new()
            .bold()
            .fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Red))),
        location: anstyle::Style::new().bold(),
        key: anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Yellow))),
        gutter: anstyle::Style::new()
            .bold()
            .fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Blue))),
    };
}

impl Diagnostic {
    /// Writes the diagnostic (without the `error:` label) in `paint`.
    pub fn write_styled(&self, f: &mut impl fmt::Write, paint: Paint) -> fmt::Result {
        let Paint {
            location: loc,
            key: k,
            gutter: g,
            ..
        } = paint;
        let key = if self.key.is_empty() {
            String::new()
        } else {
            format!("{k}`{}`{k:#}: ", super::suggest::shorten(&self.key))
        };
        match &self.origin {
            Origin::File {
                path,
                line,
                column,
                source_line,
            } => {
                write!(f, "{loc}{}", path.display())?;
                if let Some(l) = line {
                    write!(f, ":{l}")?;
                    if let Some(c) = column {
                        write!(f, ":{c}")?;
                    }
                }
                write!(f, "{loc:#}: {key}{}", self.message)?;
                if let (Some(l), Some(text)) = (line, source_line) {
                    let gutter = l.to_string();
                    let pad = " ".repeat(gutter.len());
                    let (text, caret_at) = excerpt(text, column.unwrap_or(1).saturating_sub(1));
                    write!(
                        f,
                        "\n {g}{pad} |{g:#}\n {g}{gutter} |{g:#} {text}\n {g}{pad} |{g:#} {}{g}^{g:#}",
                        " ".repeat(caret_at)
                    )?;
                }
                Ok(())
            }
            Origin::Set { argument, file } => {
                write!(
                    f,
                    "{loc}{}: --set {argument}{loc:#}: {key}{}",
                    file.display(),
                    self.message
                )
            }
            Origin::Flag { flag } => write!(f, "{loc}{flag}{loc:#}: {key}{}", self.message),
        }
    }
}

/// Longest source line shown under a diagnostic, in characters.
const MAX_SHOWN_LINE: usize = 120;

/// A window of at most [`MAX_SHOWN_LINE`] characters of `line` around character `caret`, with `…`
/// where it was cut, and the caret's position in the window. A one-line file of 200 000 `[` must
/// not print 200 000 characters twice.
fn excerpt(line: &str, caret: usize) -> (String, usize) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= MAX_SHOWN_LINE {
        return (line.to_owned(), caret);
    }
    let start = caret
        .saturating_sub(MAX_SHOWN_LINE / 2)
        .min(chars.len() - MAX_SHOWN_LINE);
    let end = start + MAX_SHOWN_LINE;
    let mut shown = String::new();
    let mut caret_at = caret - start.min(caret);
    if start > 0 {
        shown.push('…');
        caret_at += 1;
    }
    shown.extend(&chars[start..end]);
    if end < chars.len() {
        shown.push('…');
    }
    let width = shown.chars().count();
    (shown, caret_at.min(width))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_styled(f, Paint::PLAIN)
    }
}

impl ConfigError {
    /// Every diagnostic, one `error: …` block each, in `paint`.
    pub fn write_styled(&self, f: &mut impl fmt::Write, paint: Paint) -> fmt::Result {
        let l = paint.label;
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{l}error{l:#}: ")?;
            d.write_styled(f, paint)?;
        }
        Ok(())
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_styled(f, Paint::PLAIN)
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_source_lines_are_cut_around_the_caret() {
        let line = format!("{}X{}", "a".repeat(500), "b".repeat(500));
        let (shown, caret) = excerpt(&line, 500);
        assert!(shown.chars().count() <= MAX_SHOWN_LINE + 2, "{shown}");
        assert_eq!(shown.chars().nth(caret), Some('X'));
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        let (short, c) = excerpt("slots: 1", 7);
        assert_eq!((short.as_str(), c), ("slots: 1", 7));
        let (tail, c) = excerpt(&"z".repeat(300), 299);
        assert_eq!(tail.chars().nth(c), Some('z'));
        assert!(tail.starts_with('…') && !tail.ends_with('…'));
        // A caret past the end of the line points just past the window.
        let (shown, c) = excerpt(&"z".repeat(300), 1000);
        assert_eq!(c, shown.chars().count());
    }
}
