//! Whole simulations through the library (no process start, no YAML in the timed part).
//!
//! - `article_policy`: each of the article's four scenarios as one run; throughput is events/s.
//! - `protected_duration`: the `protected` scenario with 60 s, 600 s and 3600 s of arrivals;
//!   throughput is simulated seconds per second, which must stay flat as the run grows.
//! - `sweep_64_cells`: 64 scenario cells (the four policies × 16 seeds) run with rayon in a
//!   `ThreadPool` of 1 and of 2 threads; throughput is cells/s. This measures what `loadsim sweep`
//!   does per cell; the sweep's own manifest (total wall time, cells/s) lives with the sweep command.
//!
//! Run: `cargo bench --bench scenarios`.

use std::path::Path;

use divan::Bencher;
use divan::counter::ItemsCount;
use loadsim::Scenario;
use loadsim::model::run;
use rayon::prelude::*;

fn main() {
    divan::main();
}

const POLICIES: [&str; 4] = ["naive", "deadline", "deadline_budget", "protected"];

fn load(name: &str, sets: &[String], seed: Option<u64>) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.yaml"));
    Scenario::load(&path, sets, seed).expect("scenario loads")
}

#[divan::bench(args = POLICIES, sample_count = 20, sample_size = 1)]
fn article_policy(bencher: Bencher, name: &str) {
    let sc = load(name, &[], None);
    let events = run(&sc).expect("run finishes").engine.events;
    bencher
        .counter(ItemsCount::new(events))
        .bench(|| run(divan::black_box(&sc)).expect("run finishes"));
}

#[divan::bench(args = [60, 600, 3600], sample_count = 3, sample_size = 1)]
fn protected_duration(bencher: Bencher, seconds: u64) {
    let sc = load("protected", &[format!("duration={seconds}s")], None);
    bencher
        .counter(ItemsCount::new(seconds))
        .bench(|| run(divan::black_box(&sc)).expect("run finishes"));
}

/// The article's four policies × 16 seeds.
fn cells() -> Vec<Scenario> {
    POLICIES
        .iter()
        .flat_map(|p| (0..16).map(move |seed| load(p, &[], Some(seed))))
        .collect()
}

#[divan::bench(args = [1, 2], sample_count = 5, sample_size = 1)]
fn sweep_64_cells(bencher: Bencher, threads: usize) {
    let cells = cells();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool builds");
    bencher.counter(ItemsCount::new(cells.len())).bench(|| {
        pool.install(|| {
            cells
                .par_iter()
                .map(|c| run(c).expect("run finishes").engine.events)
                .collect::<Vec<_>>()
        })
    });
}
