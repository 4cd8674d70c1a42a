//! Refusals of input that is well formed but unreasonable to act on. Owns the checks that run
//! after a scenario validated and before any simulated second: a scenario whose event count could
//! take hours ([`check_event_budget`], raised by `--max-events`), a sweep grid too large to start
//! without `--yes` ([`check_cell_limit`]), and an output file that cannot be written
//! ([`check_output_path`], so a long run does not fail at its very end). Each refusal is a
//! [`ConfigError`] (exit code 2) that says what to change.
//!
//! The event bound is an upper bound, not a forecast: per user request one arrival event, and per
//! attempt that can reach a service at most five events (the caller's timeout timer, the reply,
//! the caller's retry timer, the caller's hedge timer and the service's end of own work), times
//! R1, the worst-case attempts per user request at each service; plus one event per fault (the
//! end of a capacity fault). A scenario that passes this check cannot hit the run-time
//! ceiling of [`crate::model::RunOptions::max_events`] except through Poisson fluctuation of the
//! number of user requests.

use std::path::Path;

use crate::config::{ConfigError, Diagnostic, Origin};
use crate::scenario::Scenario;

/// Events one attempt can cause at most: timeout timer, reply, retry timer, hedge timer, end of
/// own work.
pub const EVENTS_PER_ATTEMPT: f64 = 5.0;

/// Largest sweep grid that runs without `--yes`.
pub const MAX_CELLS_WITHOUT_YES: u64 = 1_000;
/// Largest sweep grid at all: every cell is expanded and validated in memory before any runs.
pub const MAX_CELLS: u64 = 1_000_000;

/// Most events one user request of `sc` can cause (see the module doc).
pub fn events_per_user_bound(sc: &Scenario) -> f64 {
    let attempts: f64 = sc.worst_case_attempts().iter().map(|&a| a as f64).sum();
    1.0 + EVENTS_PER_ATTEMPT * attempts
}

/// Most events a run of `sc` can cause with its expected number of user requests
/// (`rate × duration`, times the surge factors).
pub fn event_bound(sc: &Scenario) -> f64 {
    // Surge faults raise the arrival rate inside their windows; the product of their factors is
    // an upper bound on the rate at any instant.
    let surge: f64 = sc
        .faults
        .iter()
        .map(|f| match f.kind {
            crate::scenario::FaultKind::Surge { factor } => factor.max(1.0),
            _ => 1.0,
        })
        .product();
    sc.rate * surge * sc.duration.as_secs_f64() * events_per_user_bound(sc) + sc.faults.len() as f64
}

/// Refuses a scenario whose event bound exceeds `max_events` (the `--max-events` limit); `file`
/// names it in the message.
pub fn check_event_budget(sc: &Scenario, file: &Path, max_events: u64) -> Result<(), ConfigError> {
    let bound = event_bound(sc);
    if bound <= max_events as f64 {
        return Ok(());
    }
    let attempts: u64 = sc
        .worst_case_attempts()
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b));
    Err(ConfigError::file(
        file,
        format!(
            "this run could take up to {bound:.3e} events ({rate} requests/s × {secs} s × (1 + \
             {EVENTS_PER_ATTEMPT} × {attempts} worst-case attempts per request)), above the limit of \
             {max_events}; shorten `duration`, lower `arrivals.rate` or the retries, or raise \
             --max-events if you mean it",
            rate = sc.rate,
            secs = sc.duration.as_secs_f64(),
        ),
    ))
}

/// Refuses a sweep grid of more than [`MAX_CELLS_WITHOUT_YES`] cells unless `yes` (`--yes`), and
/// of more than [`MAX_CELLS`] in any case.
pub fn check_cell_limit(cells: u64, yes: bool) -> Result<(), ConfigError> {
    if cells > MAX_CELLS {
        return Err(ConfigError::flag(
            "--yes",
            format!(
                "the sweep expands to {cells} cells; loadsim runs at most {MAX_CELLS} in one sweep \
                 (every cell is checked in memory first); narrow the grid or split it into sweeps"
            ),
        ));
    }
    if yes || cells <= MAX_CELLS_WITHOUT_YES {
        return Ok(());
    }
    Err(ConfigError::flag(
        "--yes",
        format!(
            "the sweep expands to {cells} cells, more than {MAX_CELLS_WITHOUT_YES}; narrow the grid, \
             or pass --yes to run them all"
        ),
    ))
}

/// Refuses an output file that cannot be written: its folder is missing or not writable, or the
/// path is a folder or a read-only file. Leaves no file behind.
pub fn check_output_path(path: &Path) -> Result<(), ConfigError> {
    let refuse = |message: String| {
        ConfigError::one(Diagnostic {
            origin: Origin::Flag {
                flag: format!("--output {}", path.display()),
            },
            key: String::new(),
            message,
        })
    };
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
    if !folder.is_dir() {
        return Err(refuse(format!(
            "the folder `{}` does not exist; create it first",
            folder.display()
        )));
    }
    if path.exists() {
        // Opening for writing without truncating checks permission and leaves the file as it was.
        return std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map(drop)
            .map_err(|e| refuse(format!("cannot be written: {e}")));
    }
    // Probe the folder with a file of our own, removed at once.
    let probe = tempfile_in(folder);
    match probe {
        Ok(p) => {
            let _ = std::fs::remove_file(p);
            Ok(())
        }
        Err(e) => Err(refuse(format!(
            "cannot create a file in `{}`: {e}",
            folder.display()
        ))),
    }
}

/// Creates an empty, uniquely named file in `folder` and returns its path.
fn tempfile_in(folder: &Path) -> std::io::Result<std::path::PathBuf> {
    let pid = std::process::id();
    for n in 0..100u32 {
        let p = folder.join(format!(".loadsim-write-probe-{pid}-{n}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free probe file name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Document;

    fn scenario(rate: &str, retries: u32) -> Scenario {
        let text = format!(
            "duration: 10s\narrivals: {{rate: {rate}}}\n\
             client: {{entry: a, attempt_timeout: 1s, retries: {retries}}}\n\
             services:\n  a: {{slots: 1, calls: {{b: {{attempt_timeout: 1s, retries: 1}}}}}}\n  \
             b: {{slots: 1, service_time: {{dist: constant, value: 1ms}}}}\n"
        );
        let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
        Scenario::from_document(&doc).unwrap()
    }

    #[test]
    fn event_bound_multiplies_rate_duration_and_worst_case_attempts() {
        // client 2 attempts at a, 2·2 = 4 at b: 1 + 5·(2 + 4) = 31 events per request.
        let sc = scenario("100", 1);
        assert_eq!(events_per_user_bound(&sc), 31.0);
        assert_eq!(event_bound(&sc), 100.0 * 10.0 * 31.0);
        assert!(check_event_budget(&sc, Path::new("t.yaml"), 31_000).is_ok());
        let e = check_event_budget(&sc, Path::new("t.yaml"), 30_999).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("--max-events"), "{text}");
        assert!(text.contains("t.yaml"), "{text}");
    }

    #[test]
    fn cell_limit_needs_yes_above_the_limit() {
        assert!(check_cell_limit(MAX_CELLS_WITHOUT_YES, false).is_ok());
        assert!(check_cell_limit(MAX_CELLS_WITHOUT_YES + 1, true).is_ok());
        let e = check_cell_limit(MAX_CELLS_WITHOUT_YES + 1, false).unwrap_err();
        assert!(e.to_string().contains("--yes"), "{e}");
        assert!(e.to_string().contains("1001 cells"), "{e}");
        let e = check_cell_limit(u64::MAX, true).unwrap_err();
        assert!(e.to_string().contains("at most"), "{e}");
    }

    #[test]
    fn output_paths_must_be_writable_files_in_existing_folders() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("out.json");
        assert!(check_output_path(&ok).is_ok());
        assert!(!ok.exists(), "the check leaves no file behind");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let missing = dir.path().join("no/such/folder/out.json");
        assert!(
            check_output_path(&missing)
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
        assert!(
            check_output_path(dir.path())
                .unwrap_err()
                .to_string()
                .contains("is a folder")
        );
        assert!(check_output_path(Path::new("")).is_err());
    }
}
