//! Files put in place at once. Owns the one way loadsim writes a file: a temporary file in the
//! same folder, synced, then renamed over the target, so a reader, a crash or a full disk leaves
//! the old file or the new one, never a part. Which files a command writes, and the error a
//! failed write becomes, are the exporter's ([`crate::runner::export`]).

use std::io::Write;
use std::path::{Path, PathBuf};

/// A file written in pieces and put in place at once: the pieces go to a temporary file in the
/// same folder, [`AtomicFile::commit`] syncs it and renames it over the target; dropped without a
/// commit (a failed run), it is removed and the target is untouched.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    /// Starts writing `path`.
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let file = std::fs::File::create(&tmp)?;
        Ok(AtomicFile {
            path: path.to_owned(),
            tmp,
            file: Some(std::io::BufWriter::new(file)),
        })
    }

    /// Syncs what was written and renames it over the target.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some(buffered) = self.file.take() else {
            return Ok(());
        };
        let result = (|| {
            let file = buffered.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&self.tmp, &self.path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("the file was committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so readers
/// see the old file or the new one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}
