//! The journal: `journal.jsonl` in the output folder, the record of every finished cell. Owns the
//! promise that nothing finished is lost: a header line names the sweep (its inputs' hash and the
//! shard), then one line per cell is appended — in a single `write` of the whole line, straight to
//! the file without a user-space buffer — the moment the cell finishes. A crash or Ctrl-C leaves at
//! worst a torn last line (no newline), which `--resume` drops and runs again. Final outputs are
//! rendered from what the journal holds, so a resumed run and an uninterrupted one see the same
//! bytes.
//!
//! Every line ends with its own checksum: the line is a JSON object whose last member is
//! `"sha256"`, the SHA-256 of the same object written without that member. A line changed by
//! hand, or torn anywhere but at the very end, fails its checksum and the journal is refused
//! (exit 2) — by `--resume` and by `loadsim merge` alike — rather than its values flowing into
//! results.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::config::ConfigError;
use crate::metrics::RunSummary;

/// The journal's file name in the output folder.
pub const FILE: &str = crate::runner::export::JOURNAL;
const KIND: &str = "loadsim sweep journal";

/// The first line: which sweep the cells belong to.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Header {
    /// Always `loadsim sweep journal`: what the file is.
    pub journal: String,
    /// [`crate::report::SCHEMA_VERSION`] of the loadsim that wrote it; `None` before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<u32>,
    /// The sweep's `name`; for a search, the command and its scenario (`tune api`).
    pub sweep: String,
    /// SHA-256 of what the runs read (for a sweep, the sweep file and every file its scenarios
    /// read); `--resume` and `loadsim merge` refuse a journal whose inputs differ.
    pub inputs_sha256: String,
    /// `K/N` for a shard, `1/1` for a whole sweep, a merge or a search.
    pub shard: String,
}

impl Header {
    /// The header of a journal written by this loadsim (the current schema version).
    pub fn new(sweep: &str, inputs_sha256: &str, shard: &str) -> Header {
        Header {
            journal: KIND.into(),
            schema_version: Some(crate::report::SCHEMA_VERSION),
            sweep: sweep.into(),
            inputs_sha256: inputs_sha256.into(),
            shard: shard.into(),
        }
    }
}

/// One finished cell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CellRecord {
    /// The cell's position in the full expansion.
    pub index: usize,
    /// The cell's key (`naive|seed=7|faults.slow_b.duration=2s`), which `--resume` matches on.
    pub key: String,
    /// The cell's run summary.
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
        crate::util::fs::write_atomically(path, text.as_bytes())?;
        let file = OpenOptions::new().append(true).open(path)?;
        Ok(Journal {
            file: Mutex::new(file),
            path: path.to_owned(),
        })
    }

    /// Appends a finished cell and returns it as the journal holds it (parsed back from the line,
    /// so fresh and resumed cells are the same values).
    pub fn append(&self, record: &CellRecord) -> std::io::Result<CellRecord> {
        let (text, body) = line_and_body(record);
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(text.as_bytes())?;
        Ok(serde_json::from_str(&body).expect("a record parses back"))
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The member that closes every line with the line's checksum.
const CHECKSUM: &str = ",\"sha256\":\"";

/// `value` as a journal line: its JSON with the checksum member last, and a newline.
fn line<T: Serialize>(value: &T) -> String {
    line_and_body(value).0
}

/// [`line`], and the JSON it checksums (what [`verified`] gives back for that line).
fn line_and_body<T: Serialize>(value: &T) -> (String, String) {
    let body = serde_json::to_string(value).expect("journal lines serialize");
    let hash = crate::util::sha256([body.as_bytes()]);
    let open = body
        .strip_suffix('}')
        .expect("journal lines are JSON objects");
    let text = format!("{open}{CHECKSUM}{hash}\"}}\n");
    (text, body)
}

/// The JSON of a line without its checksum member, if the checksum matches.
fn verified(line: &str) -> Option<String> {
    let at = line.rfind(CHECKSUM)?;
    let hash = line[at + CHECKSUM.len()..].strip_suffix("\"}")?;
    let body = format!("{}}}", &line[..at]);
    (crate::util::sha256([body.as_bytes()]) == hash).then_some(body)
}

/// What an existing journal holds.
pub struct Contents {
    /// The first line.
    pub header: Header,
    /// Finished cells by key (a cell journaled twice keeps its first line).
    pub records: HashMap<String, CellRecord>,
    /// A torn last line (the process stopped while writing it): its cell did not count.
    pub torn: bool,
}

/// Reads a journal; `None` when there is no file. Refuses a journal with a line whose checksum
/// does not match (changed by hand, or torn before its end), naming the line.
pub fn read(path: &Path) -> Result<Option<Contents>, ConfigError> {
    let cannot =
        |e: std::io::Error| ConfigError::file(path, format!("cannot read the journal: {e}"));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e)),
    };
    if !meta.is_file() {
        // A pipe or a device would block or never end.
        return Err(ConfigError::file(
            path,
            "is not a regular file, so not a journal; remove it or choose another --out",
        ));
    }
    let text = std::fs::read_to_string(path).map_err(cannot)?;
    let refuse = |n: usize, why: &str| {
        ConfigError::file(
            path,
            format!(
                "line {n} {why}; the journal cannot be trusted: run the sweep again without --resume, or into another --out"
            ),
        )
    };
    let mut lines: Vec<&str> = text.split('\n').collect();
    // Text ending with a newline splits into a last empty piece; anything else there is a line
    // the process did not finish writing.
    let last = lines.pop().unwrap_or_default();
    let torn = !last.is_empty() && verified(last).is_none();
    if !last.is_empty() && !torn {
        lines.push(last);
    }
    let header: Header = lines
        .first()
        .and_then(|l| verified(l))
        .and_then(|b| serde_json::from_str(&b).ok())
        .filter(|h: &Header| h.journal == KIND)
        .ok_or_else(|| {
            ConfigError::file(
                path,
                "is not a loadsim sweep journal (or one changed by hand, or written by an older loadsim); remove it or choose another --out",
            )
        })?;
    if header.schema_version != Some(crate::report::SCHEMA_VERSION) {
        return Err(ConfigError::file(
            path,
            format!(
                "was written by a loadsim with output schema {}, and this loadsim reads and writes schema {}: its cells lack fields this one reports (`metrics.recovered`); run the sweep again without --resume (or into another --out), and run the shards again before merging them",
                version_text(header.schema_version),
                crate::report::SCHEMA_VERSION
            ),
        ));
    }
    let mut records = HashMap::new();
    for (n, l) in lines.iter().enumerate().skip(1) {
        let body = verified(l).ok_or_else(|| {
            refuse(
                n + 1,
                "does not match its checksum (it was changed after it was written, or torn)",
            )
        })?;
        let r: CellRecord = serde_json::from_str(&body)
            .map_err(|e| refuse(n + 1, &format!("is not a finished cell: {e}")))?;
        records.entry(r.key.clone()).or_insert(r);
    }
    Ok(Some(Contents {
        header,
        records,
        torn,
    }))
}

/// Whether the file at `path` begins as a journal of any loadsim does (its first line names the
/// kind), however old or damaged the rest.
pub fn written_by_loadsim(path: &Path) -> bool {
    // Looked at before opening: opening a named pipe blocks.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::Read::take(file, 256), &mut head);
    String::from_utf8_lossy(&head).starts_with(&format!("{{\"journal\":\"{KIND}\""))
}

/// A schema version as a reader's message says it.
pub(crate) fn version_text(v: Option<u32>) -> String {
    v.map_or_else(
        || "0 (written before files carried `schema_version`)".into(),
        |v| v.to_string(),
    )
}

/// A search's journal (`loadsim tune`, `loadsim calibrate`) in `--out`, and the runs it already
/// held: `None` without `--out` (and `--resume` without `--out` refused). With `--resume`, a
/// journal written for another `header` (another command, scenario, input file, range or seeds)
/// is refused, `what` naming what the identity covers; without it the journal starts empty.
pub struct SearchJournal {
    /// The journal, open for appending the runs still to do.
    pub journal: Journal,
    /// The runs it already held, by key; empty without `--resume`.
    pub done: HashMap<String, CellRecord>,
}

impl SearchJournal {
    /// Opens the journal in the `--out` folder for a search identified by `header`.
    pub fn open(
        folder: Option<&crate::runner::Folder>,
        resume: bool,
        header: &Header,
        what: &str,
    ) -> Result<Option<SearchJournal>, crate::Error> {
        let Some(folder) = folder else {
            if resume {
                return Err(ConfigError::flag(
                    "--resume",
                    "resumes from the journal in --out; give --out DIR",
                )
                .into());
            }
            return Ok(None);
        };
        let path = folder.path(FILE)?;
        let mut done = HashMap::new();
        if resume && let Some(contents) = read(&path)? {
            if &contents.header != header {
                return Err(ConfigError::flag(
                    "--resume",
                    format!(
                        "cannot resume from {}: it was written for another {what}; run without --resume to start over, or choose another --out",
                        path.display()
                    ),
                )
                .into());
            }
            done = contents.records;
        }
        let mut records: Vec<CellRecord> = done.values().cloned().collect();
        records.sort_by(|a, b| a.key.cmp(&b.key));
        let journal = Journal::create(&path, header, &records)
            .map_err(|e| crate::runner::output_error(&path, e))?;
        Ok(Some(SearchJournal { journal, done }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_a_checksum_of_their_own_json() {
        let h = Header::new("s", "abc", "1/1");
        let l = line(&h);
        assert!(l.ends_with("\"}\n") && l.contains(CHECKSUM), "{l}");
        let body = verified(l.trim_end()).expect("a fresh line verifies");
        assert_eq!(serde_json::from_str::<Header>(&body).unwrap(), h);
        // What `append` parses back without re-hashing is what a resumed read verifies.
        assert_eq!(line_and_body(&h), (l.clone(), body));
        assert!(verified(&l.trim_end().replace("\"s\"", "\"t\"")).is_none());
        assert!(verified(&l[..l.len() / 2]).is_none());
    }
}
