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
//! R1, the worst-case attempts per user request at each service; plus one event per fault whose
//! end wakes a service (a capacity fault). The number of user requests is the arrival rate
//! integrated over the arrival period, surges included where they are in force
//! ([`crate::scenario::faults::RatePlan::expected_arrivals`]). A scenario that passes this check
//! cannot hit the run-time ceiling of [`crate::model::RunOptions::max_events`] except through
//! Poisson fluctuation of the number of user requests.

use std::path::Path;

use crate::config::{ConfigError, Diagnostic, Origin};
use crate::scenario::Scenario;
use crate::scenario::faults::RatePlan;

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

/// The expected number of user requests of a run of `sc`: the arrival rate integrated over the
/// arrival period, each surge counted only inside its window.
pub fn expected_requests(sc: &Scenario) -> f64 {
    RatePlan::new(sc).expected_arrivals(sc.duration)
}

/// Most events a run of `sc` can cause with its expected number of user requests.
pub fn event_bound(sc: &Scenario) -> f64 {
    let fault_events = sc
        .faults
        .iter()
        .filter(|f| f.kind.wakes_at_end().is_some())
        .count();
    expected_requests(sc) * events_per_user_bound(sc) + fault_events as f64
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
    let requests = if sc.faults.iter().any(|f| f.kind.rate_factor() != 1.0) {
        format!(
            "{:.3e} requests expected with the surges",
            expected_requests(sc)
        )
    } else {
        format!(
            "{rate} requests/s × {secs} s",
            rate = sc.rate,
            secs = sc.duration.as_secs_f64()
        )
    };
    Err(ConfigError::file(
        file,
        format!(
            "this run could take up to {bound:.3e} events ({requests} × (1 + {EVENTS_PER_ATTEMPT} × \
             {attempts} worst-case attempts per request)), above the limit of {max_events}; shorten \
             `duration`, lower `arrivals.rate` or the retries, or raise --max-events if you mean it",
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

    /// Issue 18: the bound multiplied the factors of every surge, overlapping or not.
    #[test]
    fn surges_count_only_inside_their_windows() {
        let with_faults = |faults: &str| {
            let text = format!(
                "duration: 9m\narrivals: {{rate: 100}}\n\
                 client: {{entry: a, attempt_timeout: 1s}}\n\
                 services:\n  a: {{slots: 1, service_time: {{dist: constant, value: 1ms}}}}\n\
                 faults:\n{faults}"
            );
            let doc = Document::from_text(Path::new("t.yaml"), &text).unwrap();
            Scenario::from_document(&doc).unwrap()
        };
        // Nine one-minute steps of ×2 … ×10, one after another (6 events per request): the rate
        // integrates to 60 s × 100/s × (2 + … + 10) = 324 000 requests, ~1.9e6 events. The old
        // product of factors (10!/1 ≈ 3.6e6) put it at ~1.2e12 and refused it.
        let sc = with_faults(&crate::scenario::faults::test_support::one_minute_surge_steps());
        assert_eq!(events_per_user_bound(&sc), 6.0);
        assert!((expected_requests(&sc) - 324_000.0).abs() < 1e-6);
        assert!((event_bound(&sc) - 324_000.0 * 6.0).abs() < 1e-3);
        assert!(check_event_budget(&sc, Path::new("t.yaml"), 2_000_000).is_ok());
        // Two one-second ×30 surges far apart: 2 s at 3000/s instead of the base 100/s, not the
        // whole period at 100 × 30 × 30.
        let sc = with_faults(
            "  a: {kind: surge, factor: 30, from: 10s, duration: 1s}\n  \
             b: {kind: surge, factor: 30, from: 5m, duration: 1s}\n",
        );
        let requests = 100.0 * 538.0 + 2.0 * 3_000.0;
        assert!((expected_requests(&sc) - requests).abs() < 1e-6);
        assert!(check_event_budget(&sc, Path::new("t.yaml"), 400_000).is_ok());
        // Overlapping surges do multiply, and the refusal says how many requests it counted.
        let sc = with_faults(
            "  a: {kind: surge, factor: 30, from: 10s, duration: 2s}\n  \
             b: {kind: surge, factor: 30, from: 11s, duration: 2s}\n",
        );
        let requests = 100.0 * 537.0 + 3_000.0 + 90_000.0 + 3_000.0;
        assert!((expected_requests(&sc) - requests).abs() < 1e-6);
        let e = check_event_budget(&sc, Path::new("t.yaml"), 100_000).unwrap_err();
        assert!(
            e.to_string()
                .contains("1.497e5 requests expected with the surges"),
            "{e}"
        );
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
