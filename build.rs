//! Records the commit loadsim is built from, for `loadsim --version`: `git rev-parse --short HEAD`
//! when the package is the top of a git checkout, `unknown` otherwise (a source tarball, a vendored
//! copy inside another repository, no git installed). Runs no network command.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let same = |a: &str, b: &str| match (Path::new(a).canonicalize(), Path::new(b).canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let ours = git(&["rev-parse", "--show-toplevel"]).is_some_and(|top| same(&top, &manifest));
    let commit = if ours {
        git(&["rev-parse", "--short", "HEAD"])
    } else {
        None
    };
    println!(
        "cargo:rustc-env=LOADSIM_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    // Build again when HEAD moves (a commit or a checkout updates HEAD's reflog).
    if ours && let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for file in ["HEAD", "logs/HEAD"] {
            let path = Path::new(&dir).join(file);
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}
