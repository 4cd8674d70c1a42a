//! The CSV format of `loadsim run`: one row per scenario, columns `scenario`, `seed`, then every
//! scalar of the summary by dotted name (`metrics.*`, `services.<name>.*`, `calls.<edge>.*`,
//! `engine.*`), in summary order; a scenario lacking a column leaves it empty.

use super::Render;
use super::flat::{EngineColumns, cell, flatten, union_columns};
use crate::metrics::RunSummary;

/// One CSV row per scenario.
pub struct Csv;

impl Render for Csv {
    fn render(&self, runs: &[RunSummary]) -> String {
        let flats: Vec<_> = runs
            .iter()
            .map(|r| flatten(r, EngineColumns::Include))
            .collect();
        let columns = union_columns(&flats);
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let header = ["scenario", "seed"]
            .into_iter()
            .map(str::to_owned)
            .chain(columns.iter().cloned());
        w.write_record(header).expect("writing to memory");
        for (run, flat) in runs.iter().zip(&flats) {
            let map: std::collections::HashMap<&str, &serde_json::Value> =
                flat.iter().map(|(k, v)| (k.as_str(), v)).collect();
            let mut record = vec![run.scenario.clone(), run.seed.to_string()];
            record.extend(
                columns
                    .iter()
                    .map(|c| map.get(c.as_str()).map(|v| cell(v)).unwrap_or_default()),
            );
            w.write_record(&record).expect("writing to memory");
        }
        String::from_utf8(w.into_inner().expect("flush to memory")).expect("CSV of UTF-8 fields")
    }
}
