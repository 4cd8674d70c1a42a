//! A fuzzer that keeps running: every shipped scenario file (everything under `scenarios/` and
//! `examples/`, found on disk, so a new file is fuzzed the day it lands), damaged one to three
//! times by the mutations of [`super::hostile`], loaded as `loadsim run` loads it. Each outcome must
//! be one of two: a refusal whose every problem names a file (with a line where the file has one)
//! or a flag, or a scenario that runs and whose balances hold ([`super::invariants`]).
//!
//! It runs for a bounded time, not a number of cases: `LOADSIM_FUZZ_SECS` (default 20) seconds of
//! inputs drawn from the fixed seed `LOADSIM_FUZZ_SEED` (default 1), so CI explores a fresh
//! stretch whenever the seed is changed, and any failure prints the seed, the case number, the
//! file and the damaged text to reproduce it with.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loadsim::config::Origin;
use loadsim::model::{RunOptions, run_with};
use loadsim::scenario::Scenario;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::hostile::{apply, mutation};
use super::invariants::check_invariants;

/// Most events one fuzzed run may take: enough for every shipped scenario's shape at a shorter
/// duration, small enough that a case costs milliseconds.
const MAX_EVENTS: u64 = 3_000_000;

/// Every `*.yaml` under `dir`, recursively, sorted (so the case → file map is stable).
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

/// Copies the folder `from` into `to` (the files a shipped scenario `extends` come along).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let target = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &target);
        } else {
            std::fs::copy(&p, &target).unwrap();
        }
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What one damaged file must lead to; `Err` says what went wrong.
fn judge(path: &Path) -> Result<&'static str, String> {
    match Scenario::load(path, &[], None) {
        Err(e) => {
            if e.diagnostics.is_empty() {
                return Err("a refusal with no problem in it".into());
            }
            for d in &e.diagnostics {
                match &d.origin {
                    Origin::File {
                        path: p,
                        line,
                        source_line,
                        ..
                    } => {
                        if p.as_os_str().is_empty() {
                            return Err(format!("a problem with no file: {d:?}"));
                        }
                        // A problem quoted from a line of the file must say which line.
                        if source_line.is_some() && line.is_none() {
                            return Err(format!("a quoted line without its number: {d:?}"));
                        }
                    }
                    Origin::Set { .. } => {
                        return Err(format!("a --set problem without --set: {d:?}"));
                    }
                    Origin::Flag { .. } => {}
                }
            }
            Ok("refused")
        }
        Ok(sc) => match run_with(
            &sc,
            RunOptions {
                max_events: MAX_EVENTS,
                ..RunOptions::default()
            },
        ) {
            // Too big to run here (the guard of `loadsim run` would say so before running).
            Err(_) => Ok("too big"),
            Ok(r) => check_invariants(&sc, &r).map(|()| "ran"),
        },
    }
}

#[test]
fn damaged_shipped_files_are_refused_with_a_place_or_run_with_their_balances() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let secs: u64 = env_or("LOADSIM_FUZZ_SECS", 20);
    let seed: u64 = env_or("LOADSIM_FUZZ_SEED", 1);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for top in ["scenarios", "examples"] {
        copy_tree(&repo.join(top), &dir.path().join(top));
        yaml_files(&dir.path().join(top), &mut files);
    }
    assert!(files.len() >= 5, "{files:?}");
    let originals: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes),
    );
    let mutations = proptest::collection::vec(mutation(), 1..4);
    let (mut refused, mut ran, mut too_big) = (0u64, 0u64, 0u64);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut case = 0u64;
    while Instant::now() < deadline {
        let which = (case as usize) % files.len();
        let ms = mutations.new_tree(&mut runner).unwrap().current();
        let mut text = originals[which].clone();
        for m in &ms {
            text = apply(&String::from_utf8_lossy(&text), m);
        }
        std::fs::write(&files[which], &text).unwrap();
        match judge(&files[which]) {
            Ok("refused") => refused += 1,
            Ok("ran") => ran += 1,
            Ok(_) => too_big += 1,
            Err(e) => panic!(
                "LOADSIM_FUZZ_SEED={seed}, case {case}, {}: {e}\n--- damaged text ---\n{}",
                files[which].display(),
                String::from_utf8_lossy(&text)
            ),
        }
        std::fs::write(&files[which], &originals[which]).unwrap();
        case += 1;
    }
    eprintln!(
        "fuzz: seed {seed}, {case} cases over {} files in {secs} s: {refused} refused, {ran} ran with balances holding, {too_big} above {MAX_EVENTS} events",
        files.len()
    );
    assert!(
        case > 0 && refused > 0,
        "the fuzzer must exercise the loader"
    );
}
