//! `--format` of `loadsim run`: the formats it offers and the renderer of each.

use super::{Render, csv, csv_long, json, table};

/// The formats `loadsim run` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Metrics as rows, one column per scenario.
    Table,
    /// One JSON document: an array with one object per scenario.
    Json,
    /// One CSV row per scenario, dotted column names.
    Csv,
    /// One CSV row per scenario × metric: scenario,seed,metric,scope,entity,name,value.
    CsvLong,
    /// One compact JSON object per scenario per line (the `json` format's objects).
    Ndjson,
}

impl Format {
    /// The renderer for this format.
    pub fn renderer(self) -> Box<dyn Render> {
        match self {
            Format::Table => Box::new(table::Table),
            Format::Json => Box::new(json::Json),
            Format::Csv => Box::new(csv::Csv),
            Format::CsvLong => Box::new(csv_long::CsvLong),
            Format::Ndjson => Box::new(json::Ndjson),
        }
    }
}
