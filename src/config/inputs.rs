//! The files a scenario reads besides its YAML: `arrivals.trace` today, and any later kind (sample
//! or histogram files) the same way. Owns three promises for every such file:
//!
//! - **Read safely**: a regular file only (a named pipe would block, `/dev/zero` never ends,
//!   `/dev/stdin` is not a file), checked again on the opened file, and at most its [`Kind`]'s
//!   byte bound read whatever the file claims; a bigger file is refused with the bound.
//! - **Read once, shared**: within one command a file is read and parsed once per way of parsing
//!   it, and every run that names it holds the same value (an `Arc`): a sweep's cells share one
//!   copy of a trace, and [`Inputs::held_bytes`] counts it once for `--max-memory`.
//! - **Recorded**: each file read, with the SHA-256 of its bytes ([`InputFile`]), so that the
//!   output plan refuses to write over it ([`crate::runner::OutputPlan`]) and a journal's identity
//!   (`sweep --resume`, `tune --resume`, `merge`) changes when it does.
//!
//! The record is shared by every clone of a [`super::Document`]: a sweep cell or a tuner's
//! candidate built from a copy of the document reads through the same [`Inputs`].
//!
//! A new kind of file is one [`Kind`] constant beside its parser and one call of [`Inputs::read`]
//! from its validator.

use std::any::Any;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A kind of file a scenario names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// What the file is, in messages: `trace`.
    pub what: &'static str,
    /// The most bytes read; a bigger file is refused, naming the bound.
    pub max_bytes: u64,
}

/// One file read, as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// The path as the scenario resolved it (against the folder of the file that names it).
    pub path: PathBuf,
    /// [`Kind::what`].
    pub what: &'static str,
    /// Lower-case hex SHA-256 of the bytes read.
    pub sha256: String,
}

type Parsed = Result<Arc<dyn Any + Send + Sync>, String>;

#[derive(Default)]
struct State {
    /// Every file read, in the order first read (deterministic: commands check their scenarios
    /// one after another before running any in parallel).
    files: Vec<InputFile>,
    /// Parsed values by (path, kind, way of parsing).
    parsed: HashMap<(PathBuf, &'static str, String), Arc<OnceLock<Parsed>>>,
    /// Bytes held by the parsed values.
    held: u64,
}

/// The files read for one document and its copies, and their parsed values.
#[derive(Clone, Default)]
pub struct Inputs(Arc<Mutex<State>>);

impl std::fmt::Debug for Inputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.files()).finish()
    }
}

impl Inputs {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value of the file at `path` of `kind` as `parse` makes it from the file's text, read
    /// and parsed at most once per command for each `variant` (what else the parse depends on,
    /// like a trace's duration and class): later calls share the first one's value or error.
    /// `size` says how many bytes the value holds. Errors are sentences naming the file.
    pub fn read<T: Send + Sync + 'static>(
        &self,
        kind: Kind,
        path: &Path,
        variant: String,
        parse: impl FnOnce(&str) -> Result<T, String>,
        size: impl FnOnce(&T) -> u64,
    ) -> Result<Arc<T>, String> {
        let cell = {
            let mut state = self.state();
            let key = (path.to_owned(), kind.what, variant);
            state.parsed.entry(key).or_default().clone()
        };
        let parsed = cell.get_or_init(|| {
            let text = self.read_text(kind, path)?;
            let value = parse(&text)?;
            let bytes = size(&value);
            let mut state = self.state();
            state.held = state.held.saturating_add(bytes);
            Ok(Arc::new(value) as Arc<dyn Any + Send + Sync>)
        });
        match parsed {
            Ok(v) => Ok(Arc::clone(v)
                .downcast::<T>()
                .expect("one kind and variant parse to one type")),
            Err(e) => Err(e.clone()),
        }
    }

    /// The text of `path`, read safely, recorded with its hash. A file read twice in one command
    /// (parsed two ways) must have the same bytes both times.
    fn read_text(&self, kind: Kind, path: &Path) -> Result<String, String> {
        let bytes = read_bounded(kind, path)?;
        let sha256 = crate::util::sha256_hex(&bytes);
        {
            let mut state = self.state();
            match state.files.iter().find(|f| f.path == path) {
                Some(f) if f.sha256 != sha256 => {
                    return Err(format!(
                        "the {} {} changed while loadsim was reading it; run again once it is \
                         written",
                        kind.what,
                        path.display()
                    ));
                }
                Some(_) => {}
                None => state.files.push(InputFile {
                    path: path.to_owned(),
                    what: kind.what,
                    sha256,
                }),
            }
        }
        String::from_utf8(bytes)
            .map_err(|_| format!("the {} {} is not UTF-8 text", kind.what, path.display()))
    }

    /// Every file read so far, in the order first read.
    pub fn files(&self) -> Vec<InputFile> {
        self.state().files.clone()
    }

    /// What identifies the files read in a journal's hash: `<kind> <sha256>` of each, in the
    /// order first read.
    pub fn identity(&self) -> Vec<Vec<u8>> {
        self.files()
            .into_iter()
            .map(|f| format!("{} {}", f.what, f.sha256).into_bytes())
            .collect()
    }

    /// Bytes held by the parsed values (each file once, however many runs share it).
    pub fn held_bytes(&self) -> u64 {
        self.state().held
    }

    /// Whether `other` is the same record (a copy of the same document).
    pub fn same(&self, other: &Inputs) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The bytes of `path`: a regular file only, at most `kind.max_bytes` of them.
fn read_bounded(kind: Kind, path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let what = kind.what;
    let cannot = |e: std::io::Error| format!("cannot read the {what} {shown}: {e}");
    let refuse = |meta: &std::fs::Metadata| -> Result<(), String> {
        match super::read::special_kind(path, &meta.file_type()) {
            None => Ok(()),
            Some(special) => Err(format!(
                "the {what} {shown} is {special}, not a regular file; loadsim reads a {what} from \
                 a regular file only"
            )),
        }
    };
    let too_big = |n: String| {
        format!(
            "the {what} {shown} is {n} bytes; loadsim reads a {what} of at most {} bytes",
            kind.max_bytes
        )
    };
    let meta = std::fs::metadata(path).map_err(cannot)?;
    refuse(&meta)?;
    if meta.len() > kind.max_bytes {
        return Err(too_big(meta.len().to_string()));
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    // The path may have been replaced between the look and the open: look at what was opened.
    refuse(&file.metadata().map_err(cannot)?)?;
    let mut bytes = Vec::new();
    file.take(kind.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(too_big(format!("more than {}", kind.max_bytes)));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: Kind = Kind {
        what: "list",
        max_bytes: 16,
    };

    fn lines(text: &str) -> Result<Vec<u32>, String> {
        text.lines()
            .map(|l| l.parse().map_err(|_| format!("bad `{l}`")))
            .collect()
    }

    #[test]
    fn a_file_is_read_once_shared_and_recorded_with_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.txt");
        std::fs::write(&path, "1\n2\n").unwrap();
        let inputs = Inputs::default();
        let copy = inputs.clone();
        let size = |v: &Vec<u32>| 4 * v.len() as u64;
        let a = inputs.read(KIND, &path, "x".into(), lines, size).unwrap();
        // Changed on disk after the first read: the command keeps what it read first.
        std::fs::write(&path, "3\n").unwrap();
        let b = copy.read(KIND, &path, "x".into(), lines, size).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "one value for every copy");
        assert_eq!(*a, [1, 2]);
        assert_eq!(inputs.held_bytes(), 8, "counted once");
        let files = copy.files();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].path, path);
        assert_eq!(files[0].sha256, crate::util::sha256_hex(b"1\n2\n"));
        // Parsed another way after the change: the bytes differ from the first read.
        let e = inputs
            .read(KIND, &path, "y".into(), lines, size)
            .unwrap_err();
        assert!(e.contains("changed while loadsim was reading it"), "{e}");
    }

    #[test]
    fn special_big_and_missing_files_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        std::fs::write(&big, "1\n".repeat(9)).unwrap();
        let read = |p: &Path| {
            Inputs::default()
                .read(KIND, p, String::new(), lines, |_| 0)
                .unwrap_err()
        };
        let e = read(&big);
        assert!(
            e.contains("is 18 bytes; loadsim reads a list of at most 16 bytes"),
            "{e}"
        );
        let e = read(dir.path());
        assert!(e.contains("is a directory, not a regular file"), "{e}");
        let e = read(&dir.path().join("none.txt"));
        assert!(e.starts_with("cannot read the list "), "{e}");
        #[cfg(unix)]
        {
            let e = read(Path::new("/dev/zero"));
            assert!(e.contains("is a device, not a regular file"), "{e}");
            let fifo = dir.path().join("pipe");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap();
            assert!(made.success());
            let e = read(&fifo);
            assert!(e.contains("is a named pipe, not a regular file"), "{e}");
        }
    }
}
