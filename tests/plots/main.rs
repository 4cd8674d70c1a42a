//! Integration tests of the time series and the figures: per-bin sums agree with the run's
//! totals, the CSV is locked by a snapshot, the SVGs parse and carry one series per scenario and
//! the labels asked for, and the CLI writes both.

mod cli;
mod common;
mod svg;
mod sweep;
mod timeseries;
