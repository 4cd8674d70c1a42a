//! The journal: `journal.jsonl` in the output folder, the record of every finished cell. Owns the
//! promise that nothing finished is lost: a header line names the sweep (its inputs' hash and the
//! shard), then one line per cell is appended — in a single `write` of the whole line, straight to
//! the file without a user-space buffer — the moment the cell finishes. A crash or Ctrl-C leaves at
//! worst a torn last line, which `--resume` drops. Final outputs are rendered from what the journal
//! holds, so a resumed run and an uninterrupted one see the same bytes.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::metrics::RunSummary;

/// The journal's file name in the output folder.
pub const FILE: &str = "journal.jsonl";
const KIND: &str = "loadsim sweep journal";

/// The first line: which sweep the cells belong to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Header {
    pub journal: String,
    pub sweep: String,
    pub inputs_sha256: String,
    pub shard: String,
}

impl Header {
    pub fn new(sweep: &str, inputs_sha256: &str, shard: &str) -> Header {
        Header {
            journal: KIND.into(),
            sweep: sweep.into(),
            inputs_sha256: inputs_sha256.into(),
            shard: shard.into(),
        }
    }
}

/// One finished cell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CellRecord {
    pub index: usize,
    pub key: String,
    pub summary: RunSummary,
}

/// A journal open for appending.
pub struct Journal {
    file: Mutex<File>,
    path: PathBuf,
}

impl Journal {
    /// Starts a new journal at `path` (replacing any) holding `header` and `records`; written to a
    /// temporary file and renamed, so an existing journal is never half-rewritten.
    pub fn create(path: &Path, header: &Header, records: &[CellRecord]) -> std::io::Result<Self> {
        let mut text = line(header);
        for r in records {
            text.push_str(&line(r));
        }
        super::write_atomically(path, text.as_bytes())?;
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Journal {
            file: Mutex::new(file),
            path: path.to_owned(),
        })
    }

    /// Appends a finished cell and returns it as the journal holds it (parsed back from the line,
    /// so fresh and resumed cells are the same values).
    pub fn append(&self, record: &CellRecord) -> std::io::Result<CellRecord> {
        let text = line(record);
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(text.as_bytes())?;
        Ok(serde_json::from_str(&text).expect("a record parses back"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn line<T: Serialize>(value: &T) -> String {
    let mut s = serde_json::to_string(value).expect("journal lines serialize");
    s.push('\n');
    s
}

/// What an existing journal holds.
pub struct Contents {
    pub header: Header,
    /// Finished cells by key (a cell journaled twice keeps its first line).
    pub records: HashMap<String, CellRecord>,
    /// Lines that did not parse (a torn last line after a crash).
    pub dropped: usize,
}

/// Reads a journal; `None` when there is no file.
pub fn read(path: &Path) -> Result<Option<Contents>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError::file(
                path,
                format!("cannot read the journal: {e}"),
            ));
        }
    };
    let mut lines = text.lines();
    let header: Header = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .filter(|h: &Header| h.journal == KIND)
        .ok_or_else(|| {
            ConfigError::file(
                path,
                "is not a loadsim sweep journal; remove it or choose another --out",
            )
        })?;
    let mut records = HashMap::new();
    let mut dropped = 0;
    for l in lines {
        match serde_json::from_str::<CellRecord>(l) {
            Ok(r) => {
                records.entry(r.key.clone()).or_insert(r);
            }
            Err(_) => dropped += 1,
        }
    }
    Ok(Some(Contents {
        header,
        records,
        dropped,
    }))
}
