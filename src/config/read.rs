//! Reading a file safely. Owns the one rule every file loadsim reads follows: a regular file
//! only (a named pipe would block forever, a device like `/dev/zero` never ends, a folder is not
//! text, a file under `/dev`, `/proc` or `/sys` is not the user's), at most a bound of bytes read
//! whatever the file claims, UTF-8 text.

use std::io::Read;
use std::path::Path;

use super::error::ConfigError;

/// Largest scenario or sweep file loadsim reads (a guard against feeding it a disk image).
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// Reads a file as UTF-8 text, safely: only a regular file (a named pipe would block forever, a
/// device like `/dev/zero` never ends, a folder is not text), at most [`MAX_FILE_BYTES`] bytes
/// read whatever the file claims, and a leading byte-order mark dropped.
pub fn read_text(path: &Path) -> Result<String, ConfigError> {
    read_text_up_to(path, MAX_FILE_BYTES)
}

/// [`read_text`] with another size limit, for inputs that are data rather than configuration
/// (trace files of many megabytes).
pub fn read_text_up_to(path: &Path, max_bytes: u64) -> Result<String, ConfigError> {
    let cannot = |e: std::io::Error| ConfigError::file(path, format!("cannot read the file: {e}"));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    refuse_special(path, &meta)?;
    if meta.len() > max_bytes {
        return Err(ConfigError::file(
            path,
            format!(
                "is {} bytes; loadsim reads files up to {max_bytes} bytes",
                meta.len()
            ),
        ));
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    // The path may have been replaced between the look and the open: look at what was opened.
    refuse_special(path, &file.metadata().map_err(cannot)?)?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ConfigError::file(
            path,
            format!("is longer than {max_bytes} bytes, the most loadsim reads"),
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| ConfigError::file(path, "is not UTF-8 text"))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// Reads a small file loadsim wrote itself or looks at beside its outputs (a manifest, a lock, an
/// earlier report) as [`std::fs::read_to_string`] does, but refuses what [`special_kind`] names
/// (a named pipe there would block the command) and a file over `max` bytes, as an
/// [`std::io::ErrorKind::InvalidInput`] error saying which.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<String> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let meta = std::fs::metadata(path)?;
    if let Some(what) = special_kind(path, &meta.file_type()) {
        return Err(invalid(format!("it is {what}, not a regular file")));
    }
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(invalid(format!("it is longer than {max} bytes")));
    }
    String::from_utf8(bytes).map_err(|_| invalid("it is not UTF-8 text".into()))
}

/// Refuses anything but a regular file (after following symbolic links).
fn refuse_special(path: &Path, meta: &std::fs::Metadata) -> Result<(), ConfigError> {
    match special_kind(path, &meta.file_type()) {
        None => Ok(()),
        Some("a directory") => Err(ConfigError::file(path, "is a directory, not a YAML file")),
        Some(what) => Err(ConfigError::file(
            path,
            format!("is {what}, not a regular file; loadsim reads YAML from regular files only"),
        )),
    }
}

/// What `path` (of file type `t`, symbolic links followed) is when it is not a file loadsim may
/// read — `a named pipe` (opening it blocks until a writer comes), `a device` (`/dev/zero` never
/// ends), `a socket`, `a directory`, or a file in the system's `/dev`, `/proc` or `/sys` (like
/// `/dev/stdin` when the input is redirected from a file: not a file of the user's project) —
/// and `None` for a regular file.
pub(crate) fn special_kind(path: &Path, t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_dir() {
        return Some("a directory");
    }
    if !t.is_file() {
        return Some(special_type(t));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let system = std::fs::canonicalize(folder)
        .is_ok_and(|f| cfg!(unix) && ["/dev", "/proc", "/sys"].iter().any(|s| f.starts_with(s)));
    system.then_some("a file of the system (under /dev, /proc or /sys)")
}

#[cfg(unix)]
fn special_type(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a named pipe"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_type(_: &std::fs::FileType) -> &'static str {
    "a special file"
}
