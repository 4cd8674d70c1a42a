//! The names of the files in a sweep's output folder (`sweep --out`, `merge --out`): each fixed
//! name, and which names a sweep writes there ([`writes`], what the output plan lets it write
//! and what makes a folder a sweep's).

use super::journal;

/// Names of the files a sweep writes in its output folder.
pub const RESULTS_CSV: &str = "results.csv";
pub const RESULTS_MD: &str = "results.md";
pub const MANIFEST: &str = "manifest.json";
/// The machine-dependent record of a run (command, threads, wall time), not committed.
pub const TIMING: &str = "timing.json";
/// The sweep's HTML report, beside results.md.
pub const REPORT_HTML: &str = "report.html";

/// The files of fixed names a sweep (or a merge) writes in its output folder.
pub(super) const FIXED: [&str; 6] = [
    RESULTS_CSV,
    RESULTS_MD,
    MANIFEST,
    journal::FILE,
    REPORT_HTML,
    TIMING,
];

/// Whether a sweep (or a merge) writes a file of this name in its output folder: the results,
/// the manifest, the journal, the report page, the timing, the figures, the lock and the
/// temporary files of atomic writes.
pub fn writes(name: &str) -> bool {
    FIXED.contains(&name)
        || name == crate::runner::output::LOCK_FILE
        || (name.starts_with("figure_") && name.ends_with(".svg"))
        || (name.starts_with('.') && name.contains(".tmp-"))
}
