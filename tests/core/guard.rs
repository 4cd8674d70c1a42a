//! The guard's events against the events runs process (issue 28, item 2): the hard bound summed
//! from the declarations of what schedules events never falls below a run's events, on every
//! shipped scenario as shipped and stretched; the pilot's estimate stays within
//! [`ESTIMATE_FACTOR`] of them; a realistic day is admitted without `--max-events` and a runaway
//! input is refused before it runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loadsim::guard::{self, Basis};
use loadsim::model::RunOptions;
use loadsim::scenario::Scenario;

/// The estimate is within this factor of the events the run processes (either way) on every
/// shipped scenario, as shipped and stretched ×[`STRETCH`]; docs/trust.md §3 has the measured
/// ratios.
const ESTIMATE_FACTOR: f64 = 1.25;

/// How much longer than shipped the stretched runs are: their pilot is a prefix, not the run.
const STRETCH: u64 = 4;

/// Every shipped scenario file, sorted.
fn shipped() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "yaml") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"),
        &mut out,
    );
    out.sort();
    out
}

/// `file` at `seed`, its `duration` × `stretch` (through `--set`, as a user would).
fn load(file: &Path, seed: u64, stretch: u64) -> Scenario {
    let sc = Scenario::load(file, &[], Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    if stretch == 1 {
        return sc;
    }
    let ms = sc.duration.0 / 1_000_000 * stretch;
    Scenario::load(file, &[format!("duration={ms}ms")], Some(seed))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The events a run of `sc` processes and its user requests.
fn actual(sc: &Scenario) -> (u64, u64) {
    let r = loadsim::model::run(sc).unwrap_or_else(|e| panic!("{}: {e}", sc.name));
    (r.engine.events, r.metrics.requests)
}

fn label(file: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    file.strip_prefix(root).unwrap().display().to_string()
}

#[test]
fn declared_bound_holds_and_estimate_is_close_on_every_shipped_scenario() {
    let mut worst = (1.0f64, String::new());
    let mut far = Vec::new();
    for file in shipped() {
        for (seed, stretch) in [(7, 1), (11, 1), (7, STRETCH)] {
            let sc = load(&file, seed, stretch);
            let (events, requests) = actual(&sc);
            let bound = guard::event_bound_for(&sc, requests as f64);
            let what = format!("{} seed {seed} ×{stretch}", label(&file));
            assert!(
                events as f64 <= bound,
                "{what}: {events} events above the declared bound {bound}"
            );
            let e = guard::estimate_events(&sc, RunOptions::default().max_memory)
                .unwrap_or_else(|| panic!("{what}: no estimate"));
            let ratio = e.events / events as f64;
            if !(1.0 / ESTIMATE_FACTOR..=ESTIMATE_FACTOR).contains(&ratio) {
                far.push(format!(
                    "{what}: estimate {} for {events} events ({:?})",
                    e.events, e.basis
                ));
            }
            if (ratio.ln()).abs() > worst.0.ln().abs() {
                worst = (ratio, what);
            }
        }
    }
    eprintln!("worst estimate/actual: {:.4} ({})", worst.0, worst.1);
    assert!(
        far.is_empty(),
        "estimates beyond a factor {ESTIMATE_FACTOR}:\n{}",
        far.join("\n")
    );
}

/// `LOADSIM_ESTIMATE_TABLE=24h cargo test --release --locked --test core estimate_table --
/// --ignored --nocapture`: the table of docs/trust.md §3 (bound, estimate and events of every
/// shipped scenario with its `duration` set to the given value, seed 7).
#[test]
#[ignore]
fn estimate_table() {
    let duration = std::env::var("LOADSIM_ESTIMATE_TABLE").unwrap_or_else(|_| "24h".into());
    let only = std::env::var("LOADSIM_ESTIMATE_ONLY").ok();
    println!(
        "| scenario | declared bound | estimate (basis) | events | estimate / events | bound / events | pilot events | pilot s | run s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for file in shipped() {
        let name = label(&file);
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let sc = Scenario::load(&file, &[format!("duration={duration}")], Some(7))
            .unwrap_or_else(|e| panic!("{e}"));
        let t = Instant::now();
        let e = guard::estimate_events(&sc, RunOptions::default().max_memory).unwrap();
        let pilot_s = t.elapsed();
        let bound = guard::event_bound(&sc);
        let t = Instant::now();
        let options = RunOptions {
            max_events: u64::MAX,
            ..guard::limits_for(&sc, RunOptions::default())
        };
        let events = loadsim::model::run_with(&sc, options)
            .unwrap()
            .engine
            .events as f64;
        let run_s = t.elapsed();
        let basis = match e.basis {
            Basis::Whole => "whole".to_string(),
            Basis::Tail { pilot, .. } => format!("tail, pilot {pilot}"),
            Basis::Cut { at } => format!("cut at {at}"),
        };
        let secs = |d: Duration| format!("{:.2}", d.as_secs_f64());
        println!(
            "| {name} | {bound:.3e} | {:.3e} ({basis}) | {events:.3e} | {:.3} | {:.1} | {} | {} | {} |",
            e.events,
            e.events / events,
            bound / events,
            e.pilot_events,
            secs(pilot_s),
            secs(run_s)
        );
    }
}

/// A realistic day (a production scenario with `duration` 24 h) is admitted under the default
/// `--max-events` on its pilot estimate, though its declared bound alone exceeds the limit; a
/// runaway input (10 million requests per second for 30 days) is refused before any simulation.
#[test]
fn a_realistic_day_is_admitted_and_a_runaway_is_refused_up_front() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let limits = RunOptions::default();
    let day = root.join("production/envoy_default.yaml");
    let sc = Scenario::load(&day, &["duration=24h".to_string()], None).unwrap();
    assert!(guard::event_bound(&sc) > limits.max_events as f64);
    let e = guard::estimate_events(&sc, limits.max_memory).unwrap();
    assert!(matches!(e.basis, Basis::Tail { .. }), "{e:?}");
    assert!(e.pilot_events < 1_000_000, "{e:?}");
    guard::check_events(&sc, &day, limits).unwrap();
    let naive = root.join("naive.yaml");
    let sets = [
        "arrivals.rate=1e7".to_string(),
        "duration=30days".to_string(),
    ];
    let sc = Scenario::load(&naive, &sets, None).unwrap();
    let t = Instant::now();
    let err = guard::check_events(&sc, &naive, limits)
        .unwrap_err()
        .to_string();
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(
        err.contains("naive.yaml") && err.contains("could take up to") && err.contains("at least"),
        "{err}"
    );
}
