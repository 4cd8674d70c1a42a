//! The bottom layer: helpers every other layer may use and that use nothing of loadsim. Owns
//! writing a file atomically ([`fs`]), the SHA-256 digests that identify inputs, journals and
//! snapshots ([`sha256`], [`sha256_hex`]), the short number text of every report, figure and message
//! ([`number`]), and what a command returns for the binary to print ([`Output`]).

pub mod fs;
pub mod json_schema;
pub mod number;

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

/// Lower-case hex SHA-256 of `parts`, each prefixed by its length so that boundaries count.
pub fn sha256<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower-case hex SHA-256 of `bytes` as they are (what `sha256sum` prints for a file).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
