//! Measurement. `recorder` owns the counters, histograms and per-second bins the simulation
//! updates as it runs (memory proportional to services, edges and simulated seconds — never to the
//! number of requests); `summary` owns the finished run's numbers under docs/model.md §3's names, and
//! how each is estimated; `timeseries` owns the optional per-bin series (`--timeseries`, `--plot`).

pub mod recorder;
pub mod summary;
pub mod timeseries;

pub use recorder::Recorder;
pub use summary::{CallMetrics, EngineMetrics, RunMetrics, RunSummary, ServiceMetrics};
pub use timeseries::{SeriesRecorder, TimeSeries};
