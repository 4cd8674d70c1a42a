//! `loadsim run FILE --seeds 1..20`: one scenario over many seeds, without a sweep file. Owns the
//! `--seeds` list (`A..B`, both ends included, or `3,5,9`) and the report of each metric's mean
//! with its 95 % confidence interval ([`crate::stats`]): a table (metrics × scenarios), or JSON
//! with the per-seed values too. `csv` and `csv-long` print every run as its own row (they carry
//! a seed column).

use indexmap::IndexMap;
use serde::Serialize;

use super::Output;
use super::run::{RunOutputs, RunRequest, load_checked};
use crate::Error;
use crate::expect::snapshot::number_text;
use crate::metrics::RunSummary;
use crate::model::{RunOptions, run_with};
use crate::report::Format;
use crate::report::flat::{EngineColumns, flatten};
use crate::report::markdown::MarkdownTable;
use crate::runner::{OutputPlan, Runner};
use crate::scenario::Scenario;
use crate::stats::{MAX_SEEDS, mean_ci95};

/// Parses `--seeds`: `A..B` (both included) or a comma-separated list; at most
/// [`MAX_SEEDS`] seeds, none twice.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{}` is not a seed (a whole number)", s.trim()))
    };
    let seeds: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
        let (a, b) = (number(a)?, number(b)?);
        if a > b {
            return Err(format!("`{text}` is empty; write the smaller seed first"));
        }
        if b - a >= MAX_SEEDS as u64 {
            return Err(format!("`{text}` names more than {MAX_SEEDS} seeds"));
        }
        (a..=b).collect()
    } else {
        text.split(',').map(number).collect::<Result<_, _>>()?
    };
    if seeds.len() > MAX_SEEDS {
        return Err(format!("names more than {MAX_SEEDS} seeds"));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = seeds.iter().find(|s| !seen.insert(**s)) {
        return Err(format!("seed {d} is named twice"));
    }
    Ok(seeds)
}

/// One metric over the seeds.
#[derive(Debug, Serialize)]
pub struct MetricOverSeeds {
    /// Seeds on which the metric has a value.
    pub n: usize,
    /// `null` when no seed has a value.
    pub mean: Option<f64>,
    /// `[low, high]`: the 95 % confidence interval of the mean; `null` below two values.
    pub ci95: Option<[f64; 2]>,
    /// The value on each seed, in `seeds` order (`null` where undefined).
    pub values: Vec<Option<f64>>,
}

/// One scenario over the seeds.
#[derive(Debug, Serialize)]
pub struct ScenarioOverSeeds {
    /// The scenario's name (its file stem).
    pub scenario: String,
    /// The seeds run, in the order of `--seeds`.
    pub seeds: Vec<u64>,
    /// By dotted metric name (as in `--format csv`); `engine.*` left out.
    pub metrics: IndexMap<String, MetricOverSeeds>,
}

/// Runs every scenario of `req` on each of `seeds` (in parallel on the grid runner) and renders
/// in `outputs.format`, into `outputs.output` if given (checked before anything runs).
pub fn run_seeds(req: &RunRequest, seeds: &[u64], outputs: &RunOutputs) -> Result<Output, Error> {
    // As many runs as a sweep of as many cells: the same limit, checked before anything loads.
    let runs = (seeds.len() as u64).saturating_mul(req.files.len() as u64);
    crate::guard::check_seed_runs(runs, req.yes)?;
    let loaded = load_checked(req)?;
    let output = match &outputs.output {
        Some(path) => {
            let mut plan = OutputPlan::new(loaded.iter().flat_map(|(s, _, _)| s.inputs()));
            Some(plan.file("--output", path)?)
        }
        None => None,
    };
    let jobs: Vec<(Scenario, RunOptions)> = loaded
        .iter()
        .flat_map(|(_, sc, options)| {
            seeds.iter().map(move |&s| {
                let mut sc = sc.clone();
                sc.seed = s;
                (sc, *options)
            })
        })
        .collect();
    let runs: Vec<RunSummary> = Runner::new(None)?
        .map(&jobs, |(sc, options)| run_with(sc, *options))
        .into_iter()
        .collect::<Result<_, _>>()?;
    let text = render(&runs, seeds, outputs.format);
    match &output {
        Some(target) => {
            target.write(text.as_bytes())?;
            Ok(Output::default())
        }
        None => Ok(Output::stdout(text)),
    }
}

/// The report of `runs` (every scenario's runs, one per seed in `seeds` order) in `format`.
fn render(runs: &[RunSummary], seeds: &[u64], format: Format) -> String {
    match format {
        Format::Csv | Format::CsvLong => format.renderer().render(runs),
        Format::Json => {
            let all: Vec<ScenarioOverSeeds> = runs
                .chunks(seeds.len())
                .map(|c| over_seeds(c, seeds))
                .collect();
            let mut s = serde_json::to_string_pretty(&all).expect("reports serialize");
            s.push('\n');
            s
        }
        Format::Ndjson => {
            let mut s = String::new();
            for c in runs.chunks(seeds.len()) {
                s.push_str(
                    &serde_json::to_string(&over_seeds(c, seeds)).expect("reports serialize"),
                );
                s.push('\n');
            }
            s
        }
        Format::Table => {
            let all: Vec<ScenarioOverSeeds> = runs
                .chunks(seeds.len())
                .map(|c| over_seeds(c, seeds))
                .collect();
            table(&all, seeds)
        }
    }
}

/// The statistics of one scenario's runs (one per seed, in `seeds` order).
pub fn over_seeds(runs: &[RunSummary], seeds: &[u64]) -> ScenarioOverSeeds {
    let mut metrics: IndexMap<String, MetricOverSeeds> = IndexMap::new();
    for (i, r) in runs.iter().enumerate() {
        // Booleans (`metrics.recovered`) restate a number beside them; only numbers average.
        for (k, v) in flatten(r, EngineColumns::Exclude)
            .into_iter()
            .filter(|(_, v)| !v.is_boolean())
        {
            let m = metrics.entry(k).or_insert_with(|| MetricOverSeeds {
                n: 0,
                mean: None,
                ci95: None,
                values: vec![None; runs.len()],
            });
            m.values[i] = v.as_f64();
        }
    }
    for m in metrics.values_mut() {
        let xs: Vec<f64> = m.values.iter().flatten().copied().collect();
        if let Some(ci) = mean_ci95(&xs) {
            m.n = ci.n;
            m.mean = Some(ci.mean);
            m.ci95 = ci.bounds().map(|(lo, hi)| [lo, hi]);
        }
    }
    ScenarioOverSeeds {
        scenario: runs.first().map(|r| r.scenario.clone()).unwrap_or_default(),
        seeds: seeds.to_vec(),
        metrics,
    }
}

/// Metrics × scenarios, each cell `mean ± half-width`, with `(n = k)` where the metric has a
/// value on only k of the seeds.
fn table(all: &[ScenarioOverSeeds], seeds: &[u64]) -> String {
    let mut t = MarkdownTable::new(
        std::iter::once("metric".to_owned()).chain(all.iter().map(|s| s.scenario.clone())),
    );
    let mut names: indexmap::IndexSet<&str> = indexmap::IndexSet::new();
    for s in all {
        names.extend(s.metrics.keys().map(String::as_str));
    }
    for name in names {
        let mut row = vec![name.to_owned()];
        for s in all {
            row.push(match s.metrics.get(name) {
                None => "—".into(),
                Some(m) => cell(m, seeds.len()),
            });
        }
        t.row(row);
    }
    t.right_from(1);
    format!(
        "Mean ± half-width of its 95 % confidence interval (Student's t) over seeds {} ({} runs each); (n = k): the metric has a value on k seeds only.\n\n{t}\n",
        crate::expect::seed_list(seeds),
        seeds.len()
    )
}

fn cell(m: &MetricOverSeeds, seeds: usize) -> String {
    let Some(mean) = m.mean else {
        return "—".into();
    };
    let mut s = number_text(mean, 4);
    if let Some([lo, _]) = m.ci95 {
        s.push_str(&format!(" ± {}", number_text(mean - lo, 2)));
    }
    if m.n < seeds {
        s.push_str(&format!(" (n = {})", m.n));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_as_a_range_or_a_list() {
        assert_eq!(parse_seeds("1..4").unwrap(), [1, 2, 3, 4]);
        assert_eq!(parse_seeds("3,5,9").unwrap(), [3, 5, 9]);
        assert_eq!(parse_seeds("7").unwrap(), [7]);
        assert!(
            parse_seeds("5..1")
                .unwrap_err()
                .contains("smaller seed first")
        );
        assert!(
            parse_seeds("1,x")
                .unwrap_err()
                .contains("`x` is not a seed")
        );
        assert!(parse_seeds("1,1").unwrap_err().contains("twice"));
        assert!(parse_seeds("1..100000").unwrap_err().contains("more than"));
    }
}
