//! The long ("tidy") CSV format of `loadsim run --format csv-long`, for pandas, R and
//! spreadsheets: one row per scenario × metric. The columns are stable:
//!
//! | column | content |
//! |---|---|
//! | `scenario` | the scenario's name (its file stem) |
//! | `seed` | the seed of the run |
//! | `metric` | the dotted name, exactly the wide CSV's column name (`services.svc_b.max_queue`) |
//! | `scope` | `metrics`, `services`, `calls` or `engine` |
//! | `entity` | the service (`svc_b`) or call edge (`svc_a->svc_b`); empty for `metrics` and `engine` |
//! | `name` | the metric's own name (`max_queue`); a replica's is `replica_stats.<k>.<name>` (`replica_stats.0.arrivals`) |
//! | `value` | a number in shortest round-trip form, a yes/no metric (`recovered`, `recovery_measurable`) as `1`/`0`; empty when undefined (a ratio over zero, `recovery_s` when the run never recovers) |
//!
//! Rows come in argument order, then summary order; `engine.wall_s` and `engine.events_per_s` are
//! the only values that depend on the machine.

use super::Render;
use super::flat::{EngineColumns, cells, numeric_cell};
use crate::metrics::RunSummary;

/// The header row, in order.
pub const COLUMNS: [&str; 7] = [
    "scenario", "seed", "metric", "scope", "entity", "name", "value",
];

/// One CSV row per scenario × metric.
pub struct CsvLong;

impl Render for CsvLong {
    fn render(&self, runs: &[RunSummary]) -> String {
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record(COLUMNS).expect("writing to memory");
        for run in runs {
            let seed = run.seed.to_string();
            for c in cells(run, EngineColumns::Include) {
                w.write_record([
                    run.scenario.as_str(),
                    seed.as_str(),
                    c.dotted().as_str(),
                    c.scope.as_str(),
                    c.entity.as_deref().unwrap_or(""),
                    c.name.as_str(),
                    numeric_cell(&c.value).as_str(),
                ])
                .expect("writing to memory");
            }
        }
        String::from_utf8(w.into_inner().expect("flush to memory")).expect("CSV of UTF-8 fields")
    }
}
