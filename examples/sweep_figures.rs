//! How a sweep draws its figures: a sensitivity chart (success after the window against the
//! arrival rate, the four policies, mean and min–max over three seeds) and a heatmap (recovery
//! time of one policy over arrival rate × fault-window length, "never" marked), both computed
//! here with the library so the calls are the ones `loadsim sweep` should make.
//!
//! ```sh
//! cargo run --release --example sweep_figures -- DIR
//! ```

use std::path::PathBuf;

use loadsim::model::run;
use loadsim::plot::{Line, heatmap_svg, sensitivity_svg};
use loadsim::scenario::Scenario;

const POLICIES: [&str; 4] = ["naive", "deadline", "deadline_budget", "protected"];
const SEEDS: [u64; 3] = [7, 11, 13];

fn load(policy: &str, sets: &[String], seed: u64) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{policy}.yaml"));
    Scenario::load(&path, sets, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "sweep_figures".into()),
    );
    std::fs::create_dir_all(&dir).expect("output folder");

    // Sensitivity: one line per policy, one point per axis value, (mean, min, max) over seeds.
    let rates = [200.0, 300.0, 400.0, 500.0];
    let lines: Vec<Line> = POLICIES
        .iter()
        .map(|policy| Line {
            scenario: policy.to_string(),
            points: rates
                .iter()
                .map(|&rate| {
                    let sets = vec![format!("arrivals.rate={rate}")];
                    let values: Vec<f64> = SEEDS
                        .iter()
                        .filter_map(|&seed| {
                            run(&load(policy, &sets, seed))
                                .unwrap()
                                .metrics
                                .success_rate_after
                        })
                        .collect();
                    let mean = values.iter().sum::<f64>() / values.len() as f64;
                    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (rate, mean, min, max)
                })
                .collect(),
        })
        .collect();
    let path = dir.join("sensitivity_rate_success_after.svg");
    let svg = sensitivity_svg(
        "Success after the fault window vs load",
        "arrival rate (user requests/s)",
        "success rate after the window",
        &lines,
    )
    .unwrap();
    std::fs::write(&path, svg).unwrap();
    println!("wrote {}", path.display());

    // Heatmap: rows are y values (bottom to top), columns x values; None is "never".
    let windows = ["5s", "10s", "20s", "30s"];
    let rates = [200, 300, 400, 500];
    let cells: Vec<Vec<Option<f64>>> = rates
        .iter()
        .map(|rate| {
            windows
                .iter()
                .map(|w| {
                    let sets = vec![
                        format!("arrivals.rate={rate}"),
                        format!("faults.slow_b.duration={w}"),
                    ];
                    run(&load("deadline", &sets, 7)).unwrap().metrics.recovery_s
                })
                .collect()
        })
        .collect();
    let path = dir.join("heatmap_deadline_recovery.svg");
    let svg = heatmap_svg(
        "deadline: recovery time after the window (s), seed 7",
        "fault window length",
        &windows.map(String::from),
        "arrival rate (user requests/s)",
        &rates.map(|r| r.to_string()),
        &cells,
        "never",
    )
    .unwrap();
    std::fs::write(&path, svg).unwrap();
    println!("wrote {}", path.display());
}
