//! The exporter: every file a command writes, in one place. Owns four promises:
//!
//! - **Declared** ([`FolderTable`], [`FILE_FLAGS`]): each command's output folder has a table of
//!   the files it writes there (a name or a name template, a format, a line on what it holds) —
//!   [`SWEEP`] (also `merge`), [`TUNE`], [`CALIBRATE`], [`BOUNDARY`], [`RUN_PLOT`], [`MAN`] — and
//!   each single-file flag (`run --output`, `--timeseries`, `--html`, `--spans`, …) its line in
//!   [`FILE_FLAGS`]. A [`Folder`] writes only the names its table declares; the tests list the
//!   folder after each command against its table.
//! - **Checked before anything runs** ([`OutputPlan`]): each output flag's path gets its folder
//!   created the same way (`--output`, `--timeseries`, `--plot`, `--out`, `--junit` alike), must
//!   be writable, and must be neither one of the command's inputs (the scenario, a base it
//!   `extends`, an import, a trace, a sweep file, a snapshot — compared after resolving symlinks)
//!   nor another output of the same command. A refused output creates no folder. A refusal is a
//!   [`ConfigError`] (exit 2) naming the flag, so a long run never fails at its end. The plan
//!   hands back the destinations it checked ([`Target`] for a file, [`Folder`] for a folder),
//!   and only those write.
//! - **Written atomically** ([`write_atomically`]): a temporary file in the same folder, synced,
//!   then renamed over the target, so a reader, a crash or a full disk leaves the old file or the
//!   new one, never a part.
//! - **One folder, one writer** ([`FolderLock`]): a sweep or merge holds a lock file in its output
//!   folder while it writes there; a second command refuses (exit 2) and names the holder's
//!   process id; a lock left by a process that no longer runs is taken over.
//!
//! [`output_error`] is the one way a failed write becomes an [`Error`] (exit 1). Commands render
//! (figures come from [`crate::plot`] as SVG text) and hand the bytes here.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::scenario::{ConfigError, Diagnostic, Origin};
use crate::util::fs::{AtomicFile, write_atomically};

/// What a written file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Markdown report.
    Markdown,
    /// A CSV table with a header row.
    Csv,
    /// One JSON document.
    Json,
    /// One JSON object a line.
    JsonLines,
    /// An SVG figure.
    Svg,
    /// A self-contained HTML page.
    Html,
    /// A YAML file loadsim reads back.
    Yaml,
    /// A JUnit XML report.
    Xml,
    /// A manual page (roff).
    Roff,
    /// The format the command's `--format` chose (text, Markdown, JSON or CSV).
    Chosen,
}

/// One file a command writes in its output folder: its name, or a template where `*` stands for
/// any text (`*.probes.csv`); its format; what it holds.
#[derive(Debug, Clone, Copy)]
pub struct Declared {
    /// The file name, or a template where `*` stands for any text (`*.probes.csv`).
    pub name: &'static str,
    /// What the file is written as.
    pub format: Format,
    /// What the file holds, one phrase, for the docs.
    pub about: &'static str,
}

const fn declared(name: &'static str, format: Format, about: &'static str) -> Declared {
    Declared {
        name,
        format,
        about,
    }
}

/// The files one command writes in the folder one of its flags names.
#[derive(Debug)]
pub struct FolderTable {
    /// The command (`sweep`, `tune`, …) and the flag naming the folder.
    pub command: &'static str,
    /// The flag naming the folder (`--out`).
    pub flag: &'static str,
    /// Every file the command may write in that folder.
    pub files: &'static [Declared],
}

impl FolderTable {
    /// Whether the command writes a file of this name in its folder: a declared name or template,
    /// the folder's lock ([`LOCK_FILE`]) or the temporary file of an atomic write
    /// (`.<name>.tmp-<pid>`, renamed away when the write ends).
    pub fn declares(&self, name: &str) -> bool {
        self.files.iter().any(|d| matches(d.name, name))
            || name == LOCK_FILE
            || (name.starts_with('.') && name.contains(".tmp-"))
    }

    /// The declared files of fixed names (not templates), in table order.
    pub fn fixed_names(&self) -> impl Iterator<Item = &'static str> {
        self.files
            .iter()
            .map(|d| d.name)
            .filter(|n| !n.contains('*'))
    }

    /// The declared file of this name or template, if any.
    pub fn get(&self, name: &str) -> Option<&'static Declared> {
        self.files.iter().find(|d| d.name == name)
    }
}

/// Whether `name` is `template`, `*` in it standing for any text (at most one `*`).
fn matches(template: &str, name: &str) -> bool {
    match template.split_once('*') {
        None => template == name,
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
    }
}

/// The sweep's results table (`sweep --out`, `merge --out`).
pub const RESULTS_CSV: &str = "results.csv";
/// The sweep's Markdown report, its tables and figures.
pub const RESULTS_MD: &str = "results.md";
/// What the sweep ran: its file's hash, the cells, loadsim's version.
pub const MANIFEST: &str = "manifest.json";
/// The record of every finished cell or probe (`--resume`).
pub const JOURNAL: &str = "journal.jsonl";
/// The sweep's HTML report, beside results.md.
pub const REPORT_HTML: &str = "report.html";
/// The machine-dependent record of a run (command, threads, wall time), not committed.
pub const TIMING: &str = "timing.json";

/// `loadsim sweep --out DIR` and `loadsim merge --out DIR`.
pub const SWEEP: FolderTable = FolderTable {
    command: "sweep",
    flag: "--out",
    files: &[
        declared(
            RESULTS_CSV,
            Format::Csv,
            "one row per cell and seed: every summary number",
        ),
        declared(
            RESULTS_MD,
            Format::Markdown,
            "the report: the sweep's tables and their figures",
        ),
        declared(
            MANIFEST,
            Format::Json,
            "what ran: the sweep file's hash, the cells, loadsim's version",
        ),
        declared(
            JOURNAL,
            Format::JsonLines,
            "every finished cell, for --resume and merge",
        ),
        declared(
            REPORT_HTML,
            Format::Html,
            "results.md as one page, figures inline",
        ),
        declared(
            TIMING,
            Format::Json,
            "command, threads and wall time (differs between machines)",
        ),
        declared(
            "*.svg",
            Format::Svg,
            "one figure per table of results.md, named after the table",
        ),
    ],
};

/// `loadsim tune --out DIR`.
pub const TUNE: FolderTable = FolderTable {
    command: "tune",
    flag: "--out",
    files: &[
        declared(
            "tune.md",
            Format::Markdown,
            "the report (what stdout shows)",
        ),
        declared("tune.json", Format::Json, "the report as JSON"),
        declared(
            "candidates.csv",
            Format::Csv,
            "every candidate tried and its scores",
        ),
        declared(
            "pareto.svg",
            Format::Svg,
            "the candidates' trade-off, the front marked",
        ),
        declared(
            JOURNAL,
            Format::JsonLines,
            "every finished run, for --resume",
        ),
    ],
};

/// `loadsim calibrate --out DIR`.
pub const CALIBRATE: FolderTable = FolderTable {
    command: "calibrate",
    flag: "--out",
    files: &[
        declared(
            "calibrate.md",
            Format::Markdown,
            "the report (what stdout shows)",
        ),
        declared("calibrate.json", Format::Json, "the report as JSON"),
        declared(
            "candidates.csv",
            Format::Csv,
            "every candidate tried and its loss",
        ),
        declared(
            JOURNAL,
            Format::JsonLines,
            "every finished run, for --resume",
        ),
    ],
};

/// `loadsim boundary --out DIR`: per scenario and searched key (`<scenario>.<key>`), or pair of
/// keys (`<scenario>.<x>.<y>`).
pub const BOUNDARY: FolderTable = FolderTable {
    command: "boundary",
    flag: "--out",
    files: &[
        declared(
            "*.probes.csv",
            Format::Csv,
            "one search: every probe run, `<scenario>.<key>.probes.csv`",
        ),
        declared(
            "*.boundary.csv",
            Format::Csv,
            "one search: the boundary per seed, `<scenario>.<key>.boundary.csv`",
        ),
        declared(
            "*.phase.csv",
            Format::Csv,
            "a phase diagram: every grid point, `<scenario>.<x>.<y>.phase.csv`",
        ),
        declared(
            "*.phase.svg",
            Format::Svg,
            "a phase diagram as a heatmap, `<scenario>.<x>.<y>.phase.svg`",
        ),
    ],
};

/// The success-rate figure of `run --plot DIR`.
pub const SUCCESS_RATE_SVG: &str = "success_rate.svg";
/// The queue-length figure of `run --plot DIR`.
pub const QUEUE_LENGTH_SVG: &str = "queue_length.svg";
/// The amplification figure of `run --plot DIR`.
pub const AMPLIFICATION_SVG: &str = "amplification.svg";
/// The figure `run --plot DIR` adds when some run has a concurrency limiter.
pub const CONCURRENCY_LIMIT_SVG: &str = "concurrency_limit.svg";

/// `loadsim run --plot DIR`.
pub const RUN_PLOT: FolderTable = FolderTable {
    command: "run",
    flag: "--plot",
    files: &[
        declared(
            SUCCESS_RATE_SVG,
            Format::Svg,
            "success rate over time, over the offered load",
        ),
        declared(
            QUEUE_LENGTH_SVG,
            Format::Svg,
            "each service's queue length over time",
        ),
        declared(
            AMPLIFICATION_SVG,
            Format::Svg,
            "attempts per request over time",
        ),
        declared(
            CONCURRENCY_LIMIT_SVG,
            Format::Svg,
            "each concurrency limit over time (only when a run has a limiter)",
        ),
    ],
};

/// `loadsim man --out DIR`.
pub const MAN: FolderTable = FolderTable {
    command: "man",
    flag: "--out",
    files: &[
        declared("loadsim.1", Format::Roff, "the program's page"),
        declared(
            "loadsim-*.1",
            Format::Roff,
            "one page per subcommand, `loadsim-<command>.1`",
        ),
    ],
};

/// A flag naming one file a command writes.
#[derive(Debug, Clone, Copy)]
pub struct FileFlag {
    /// The command the flag belongs to (`run`, `sweep`, …).
    pub command: &'static str,
    /// The flag naming the file (`--timeseries`).
    pub flag: &'static str,
    /// What the file is written as; [`Format::Chosen`] when the command's `--format` picks it.
    pub format: Format,
    /// What the file holds, one phrase, for the docs.
    pub about: &'static str,
}

const fn file_flag(
    command: &'static str,
    flag: &'static str,
    format: Format,
    about: &'static str,
) -> FileFlag {
    FileFlag {
        command,
        flag,
        format,
        about,
    }
}

/// Every single-file output flag.
pub const FILE_FLAGS: [FileFlag; 9] = [
    file_flag(
        "run",
        "--output",
        Format::Chosen,
        "the report (also `run --seeds`)",
    ),
    file_flag(
        "run",
        "--timeseries",
        Format::Csv,
        "the time series, long form",
    ),
    file_flag(
        "run",
        "--html",
        Format::Html,
        "one page: the report, the figures, the scenario",
    ),
    file_flag(
        "run",
        "--spans",
        Format::JsonLines,
        "the runs' spans as OTLP JSON, one a line",
    ),
    file_flag(
        "test",
        "--junit",
        Format::Xml,
        "the verdicts as a JUnit report",
    ),
    file_flag(
        "import",
        "--out",
        Format::Yaml,
        "the scenario drafted from the traces",
    ),
    file_flag(
        "calibrate",
        "--write",
        Format::Yaml,
        "the scenario overlaid with the fitted values",
    ),
    file_flag("new", "FILE", Format::Yaml, "the new scenario"),
    file_flag(
        "new",
        "scenario.schema.json",
        Format::Json,
        "the scenario schema beside it (unless --no-schema)",
    ),
];

/// A write that failed, as the error the binary prints (exit 1).
pub fn output_error(path: &Path, source: std::io::Error) -> Error {
    Error::Output {
        what: path.display().to_string(),
        source,
    }
}

/// A file output the plan checked: the one way to write it.
#[derive(Debug, Clone)]
pub struct Target {
    path: PathBuf,
}

impl Target {
    /// A file the command writes that no output flag names, checked on the command's own terms
    /// (`new`'s scenario and schema, `test`'s snapshots beside their scenarios).
    pub fn unplanned(path: &Path) -> Target {
        Target {
            path: path.to_owned(),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the whole file atomically.
    pub fn write(&self, bytes: &[u8]) -> Result<(), Error> {
        write_atomically(&self.path, bytes).map_err(|e| output_error(&self.path, e))
    }

    /// Starts writing the file in pieces ([`AtomicFile`]: put in place by its commit).
    pub fn create(&self) -> Result<AtomicFile, Error> {
        AtomicFile::create(&self.path).map_err(|e| output_error(&self.path, e))
    }
}

/// An output folder the plan checked: writes there only the names of its table.
#[derive(Debug, Clone)]
pub struct Folder {
    dir: PathBuf,
    table: &'static FolderTable,
}

impl Folder {
    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The path of a declared file; a name its table does not declare is a bug, refused.
    pub fn path(&self, name: &str) -> Result<PathBuf, Error> {
        if !self.table.declares(name) {
            debug_assert!(false, "`{name}` is not declared by {}", self.table.command);
            return Err(output_error(
                &self.dir.join(name),
                std::io::Error::other(format!(
                    "`{} {}` declares no file of this name",
                    self.table.command, self.table.flag
                )),
            ));
        }
        Ok(self.dir.join(name))
    }

    /// Removes the file `name` if its table declares it (a figure an earlier run drew that this
    /// one does not); anything else in the folder is never touched. A file that cannot be
    /// removed is left.
    pub fn remove(&self, name: &str) {
        if self.table.declares(name) {
            let _ = std::fs::remove_file(self.dir.join(name));
        }
    }

    /// Writes the declared file `name` atomically; returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, Error> {
        let path = self.path(name)?;
        write_atomically(&path, bytes).map_err(|e| output_error(&path, e))?;
        Ok(path)
    }
}

/// An output the plan has checked, resolved (symlinks followed).
enum Planned {
    File(PathBuf),
    /// A folder and the table of the files written there.
    Folder(PathBuf, &'static FolderTable),
}

/// The inputs and outputs of one command, checked before it runs anything.
#[derive(Default)]
pub struct OutputPlan {
    /// Each input as resolved (symlinks followed) and as named.
    inputs: Vec<(PathBuf, PathBuf)>,
    /// Each output so far, resolved, with the flag that asked for it.
    outputs: Vec<(Planned, String)>,
}

impl OutputPlan {
    /// A plan for a command reading `inputs`.
    pub fn new(inputs: impl IntoIterator<Item = impl AsRef<Path>>) -> OutputPlan {
        let mut plan = OutputPlan::default();
        plan.add_inputs(inputs);
        plan
    }

    /// More files the command reads.
    pub fn add_inputs(&mut self, inputs: impl IntoIterator<Item = impl AsRef<Path>>) {
        for p in inputs {
            let p = p.as_ref();
            if let Ok(c) = std::fs::canonicalize(p) {
                self.inputs.push((c, p.to_owned()));
            }
        }
    }

    /// An output file asked for by `flag`: it must be no input and no other output (else nothing
    /// is created), then its folder is created and it must be writable.
    pub fn file(&mut self, flag: &str, path: &Path) -> Result<Target, ConfigError> {
        let refuse = |message: String| refusal(flag, path, message);
        if path.as_os_str().is_empty() {
            return Err(refuse("the output path is empty".into()));
        }
        if path.is_dir() {
            return Err(refuse(
                "is a folder; name a file inside it, like `out/results.json`".into(),
            ));
        }
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // Checked before the folder is created: a refused output leaves no folder behind.
        let resolved = resolve(path).map_err(&refuse)?;
        if let Some((_, named)) = self.inputs.iter().find(|(c, _)| *c == resolved) {
            return Err(refuse(format!(
                "is `{}`, an input of this command; writing it would overwrite the input — choose another path",
                named.display()
            )));
        }
        if let Some((_, other)) = self.outputs.iter().find(|(o, _)| o.covers(&resolved)) {
            return Err(refuse(format!(
                "is also written by {other}; give each output its own path"
            )));
        }
        create_folder(folder).map_err(&refuse)?;
        if path.exists() {
            // Opening for writing without truncating checks permission and leaves the file as it was.
            OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| refuse(format!("cannot be written: {e}")))?;
        } else {
            probe_folder(folder).map_err(&refuse)?;
        }
        self.outputs.push((
            Planned::File(resolved),
            format!("{flag} {}", path.display()),
        ));
        Ok(Target {
            path: path.to_owned(),
        })
    }

    /// A file the command writes that no flag names (like a test's `.snap.new` beside its
    /// scenario), so that no output asked for later is the same file. Creates nothing.
    pub fn written_elsewhere(&mut self, what: &str, path: &Path) {
        if let Ok(resolved) = resolve(path) {
            self.outputs
                .push((Planned::File(resolved), what.to_owned()));
        }
    }

    /// An output folder asked for by `flag`, in which the command writes the files `table`
    /// declares: it is created, and must be writable and hold no input under such a name.
    pub fn folder(
        &mut self,
        flag: &str,
        dir: &Path,
        table: &'static FolderTable,
    ) -> Result<Folder, ConfigError> {
        let refuse = |message: String| refusal(flag, dir, message);
        if dir.as_os_str().is_empty() {
            return Err(refuse("the output folder is empty".into()));
        }
        if dir.exists() && !dir.is_dir() {
            return Err(refuse("is a file, not a folder".into()));
        }
        // Checked before the folder is created: a refused output leaves no folder behind.
        let resolved = resolve(dir).map_err(&refuse)?;
        let planned = Planned::Folder(resolved, table);
        if let Some((_, named)) = self.inputs.iter().find(|(c, _)| planned.covers(c)) {
            return Err(refuse(format!(
                "would overwrite `{}`, an input of this command; choose another folder",
                named.display()
            )));
        }
        for (o, other) in &self.outputs {
            if let Planned::File(f) = o
                && planned.covers(f)
            {
                return Err(refuse(format!(
                    "would overwrite the file of {other}; give each output its own path"
                )));
            }
        }
        create_folder(dir).map_err(&refuse)?;
        probe_folder(dir).map_err(&refuse)?;
        self.outputs
            .push((planned, format!("{flag} {}", dir.display())));
        Ok(Folder {
            dir: dir.to_owned(),
            table,
        })
    }
}

impl Planned {
    /// Whether this output writes the resolved path `p`.
    fn covers(&self, p: &Path) -> bool {
        match self {
            Planned::File(f) => f == p,
            Planned::Folder(d, writes) => {
                p.parent() == Some(d.as_path())
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| writes.declares(n))
            }
        }
    }
}

fn refusal(flag: &str, path: &Path, message: String) -> ConfigError {
    ConfigError::one(Diagnostic {
        origin: Origin::Flag {
            flag: format!("{flag} {}", path.display()),
        },
        key: String::new(),
        message,
    })
}

fn create_folder(folder: &Path) -> Result<(), String> {
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create the folder `{}`: {e}", folder.display()))
}

/// The path `path` writes to: symlinks followed as far as the path exists, then the missing
/// rest joined by name (`..` among it steps up: nothing missing can be a link), so an output
/// whose folder does not exist yet is compared with the inputs before the folder is created.
fn resolve(path: &Path) -> Result<PathBuf, String> {
    if let Ok(c) = std::fs::canonicalize(path) {
        return Ok(c);
    }
    if path.file_name().is_none() {
        return Err("does not name a file".to_owned());
    }
    let mut missing = Vec::new();
    let mut existing = path;
    let base = loop {
        let probe = if existing.as_os_str().is_empty() {
            Path::new(".")
        } else {
            existing
        };
        if let Ok(c) = std::fs::canonicalize(probe) {
            break c;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                missing.push(last);
                existing = parent;
            }
            _ => {
                return Err(format!("cannot resolve the folder of `{}`", path.display()));
            }
        }
    };
    let mut resolved = base;
    for c in missing.into_iter().rev() {
        match c {
            std::path::Component::ParentDir => {
                resolved.pop();
            }
            std::path::Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    Ok(resolved)
}

/// Creates and removes a file of our own in `folder`, to know a write there can succeed.
fn probe_folder(folder: &Path) -> Result<(), String> {
    let pid = std::process::id();
    for n in 0..100u32 {
        let p = folder.join(format!(".loadsim-write-probe-{pid}-{n}"));
        match OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(_) => {
                let _ = std::fs::remove_file(p);
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "cannot create a file in `{}`: {e}",
                    folder.display()
                ));
            }
        }
    }
    Err(format!("cannot create a file in `{}`", folder.display()))
}

/// The lock file's name in a locked folder.
pub const LOCK_FILE: &str = ".loadsim.lock";

/// A held lock on an output folder, released when dropped.
#[derive(Debug)]
pub struct FolderLock {
    path: PathBuf,
}

impl FolderLock {
    /// Takes the lock of `dir` (which must exist) for a command writing there through `flag`.
    /// Refuses (exit 2) while another running process holds it; takes over a lock whose process
    /// is gone.
    pub fn acquire(dir: &Path, flag: &str) -> Result<FolderLock, Error> {
        let path = dir.join(LOCK_FILE);
        let own = std::process::id();
        for _ in 0..3 {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    f.write_all(format!("{own}\n").as_bytes())
                        .and_then(|()| f.sync_all())
                        .map_err(|e| output_error(&path, e))?;
                    return Ok(FolderLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match holder(&path) {
                        Holder::Running(pid) => {
                            return Err(ConfigError::flag(
                                flag,
                                format!(
                                    "`{}` is being written by another loadsim (process {pid}, lock file {}); wait for it to finish or choose another {flag}",
                                    dir.display(),
                                    path.display()
                                ),
                            )
                            .into());
                        }
                        Holder::Starting => {
                            return Err(ConfigError::flag(
                                flag,
                                format!(
                                    "`{}` is being written by another loadsim that is starting (lock file {}); wait for it to finish or choose another {flag}",
                                    dir.display(),
                                    path.display()
                                ),
                            )
                            .into());
                        }
                        Holder::Gone => {
                            // A stale lock: its process ended without releasing it.
                            match std::fs::remove_file(&path) {
                                Ok(()) => continue,
                                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                                Err(e) => return Err(output_error(&path, e)),
                            }
                        }
                    }
                }
                Err(e) => return Err(output_error(&path, e)),
            }
        }
        Err(ConfigError::flag(
            flag,
            format!(
                "cannot take the lock {}: other processes keep taking it",
                path.display()
            ),
        )
        .into())
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

enum Holder {
    Running(u32),
    /// The file exists but names no process yet (its writer is between create and write).
    Starting,
    Gone,
}

/// Who holds the lock file at `path`.
fn holder(path: &Path) -> Holder {
    let text = crate::config::read::read_regular(path, 64).unwrap_or_default();
    match text.trim().parse::<u32>() {
        Ok(pid) if pid != std::process::id() && process_running(pid) => Holder::Running(pid),
        Ok(_) => Holder::Gone,
        Err(_) => {
            // Empty or unreadable: a writer that has not written its id yet, unless the file is
            // old enough that no writer can still be about to.
            let age = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            match age {
                Some(a) if a < std::time::Duration::from_secs(10) => Holder::Starting,
                _ => Holder::Gone,
            }
        }
    }
}

/// Whether a process with this id runs on this machine.
fn process_running(pid: u32) -> bool {
    if Path::new("/proc/self").exists() {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    if cfg!(unix) {
        return std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(true);
    }
    // No way to tell: never take over a lock that may be held.
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_any_text_at_the_star() {
        assert!(matches("*.svg", "a b.svg"));
        assert!(matches("loadsim-*.1", "loadsim-run.1"));
        assert!(!matches("loadsim-*.1", "loadsim.1"));
        assert!(matches("loadsim.1", "loadsim.1"));
        assert!(!matches("*.probes.csv", ".probes.cs"));
        assert!(SWEEP.declares(LOCK_FILE));
        assert!(SWEEP.declares(".results.md.tmp-12"));
        assert!(!SWEEP.declares("notes.txt"));
        let fixed: Vec<&str> = SWEEP.fixed_names().collect();
        assert_eq!(
            fixed,
            [
                RESULTS_CSV,
                RESULTS_MD,
                MANIFEST,
                JOURNAL,
                REPORT_HTML,
                TIMING
            ]
        );
        for name in fixed {
            assert!(SWEEP.get(name).is_some(), "{name}");
        }
    }

    #[test]
    fn output_files_get_their_folder_and_must_be_writable_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = OutputPlan::new(Vec::<PathBuf>::new());
        let nested = dir.path().join("a/b/out.json");
        plan.file("--output", &nested).unwrap();
        assert!(nested.parent().unwrap().is_dir(), "the folder is created");
        assert!(!nested.exists(), "the check leaves no file behind");
        assert_eq!(
            std::fs::read_dir(nested.parent().unwrap()).unwrap().count(),
            0
        );
        let e = plan.file("--timeseries", dir.path()).unwrap_err();
        assert!(e.to_string().contains("is a folder"), "{e}");
        assert!(plan.file("--output", Path::new("")).is_err());
    }

    #[test]
    fn an_output_is_never_an_input_or_another_output() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("s.yaml");
        std::fs::write(&input, "x").unwrap();
        let link = dir.path().join("link.yaml");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let mut plan = OutputPlan::new([input.as_path()]);
        let e = plan.file("--output", &input).unwrap_err();
        assert!(e.to_string().contains("an input of this command"), "{e}");
        #[cfg(unix)]
        {
            let e = plan.file("--output", &link).unwrap_err();
            assert!(e.to_string().contains("an input of this command"), "{e}");
        }
        let dotted = dir.path().join(".").join("s.yaml");
        assert!(plan.file("--timeseries", &dotted).is_err());
        let out = dir.path().join("out.csv");
        plan.file("--output", &out).unwrap();
        let e = plan.file("--timeseries", &out).unwrap_err();
        assert!(e.to_string().contains("also written by --output"), "{e}");
        const YAML: FolderTable = FolderTable {
            command: "test",
            flag: "--plot",
            files: &[declared("*.yaml", Format::Yaml, "")],
        };
        let e = plan.folder("--plot", dir.path(), &YAML).unwrap_err();
        assert!(e.to_string().contains("an input of this command"), "{e}");
        plan.folder("--plot", dir.path(), &RUN_PLOT).unwrap();
    }

    #[test]
    fn a_lock_refuses_a_second_holder_and_a_stale_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let lock = FolderLock::acquire(dir.path(), "--out").unwrap();
        let lock_file = dir.path().join(LOCK_FILE);
        // The same process again: the lock names us, so it is held by nobody else; another
        // running process (pid 1 always runs) holds it.
        drop(lock);
        assert!(!lock_file.exists(), "released on drop");
        std::fs::write(&lock_file, "1\n").unwrap();
        let e = FolderLock::acquire(dir.path(), "--out").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("process 1"), "{e}");
        // A process id that cannot run (above the kernel's limit): taken over.
        std::fs::write(&lock_file, "4294967295\n").unwrap();
        let held = FolderLock::acquire(dir.path(), "--out").unwrap();
        assert_eq!(
            std::fs::read_to_string(&lock_file).unwrap(),
            format!("{}\n", std::process::id())
        );
        drop(held);
    }
}
