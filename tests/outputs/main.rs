//! Tests of the outputs made for people and other systems rather than of the simulator: the
//! command-line conventions (`--color`, `loadsim man`), the HTML report (self-contained, every
//! figure, the sources) and what ships in `contrib/` (the Kubernetes manifests against the Job
//! schema and the commands they run). The
//! Slurm path is tested end to end by `contrib/slurm/e2e.sh` and the HTML page in a real browser
//! by `contrib/html/check.sh`; both need root and Debian packages, so `.ci/run` runs them rather
//! than `cargo test`.

use std::path::Path;
use std::process::Command;

mod cli;
mod csv_types;
mod html;
mod k8s;
mod metrics;
mod typed;

/// The repository root (scenarios, evidence and docs are read relative to it).
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `loadsim args` run from the repository root; it must succeed. Returns its stdout.
fn loadsim_ok(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_loadsim"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "loadsim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
