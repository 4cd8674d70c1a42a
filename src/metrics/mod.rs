//! Measurement, a one-way layer: the model increments the counters, the series sampler and the
//! summary read them, nothing here calls back. `counters` declares each counter family once (the
//! live fields, their summary fields and JSON names, which of them have time series — how to add a
//! counter is described there); `recorder` owns the counters, histograms and per-second bins the
//! simulation updates as it runs (memory proportional to services, edges and simulated seconds —
//! never to the number of requests); `levels` owns the time integrals of busy slots and queue
//! length; `summary` owns the finished run's numbers under docs/model.md §3's names, and how each is
//! estimated; `timeseries` owns the optional per-bin series (`--timeseries`, `--plot`) sampled from
//! the recorder and the levels. What the scenario's `metrics:` section defines (the recovery rule,
//! the reported quantiles, named measurement windows) is [`crate::scenario::metrics`].

pub mod counters;
pub mod histogram;
pub mod levels;
pub mod recorder;
pub mod summary;
pub mod timeseries;

pub use counters::{CallMetrics, EdgeCounters, ServiceCounters, ServiceCounts};
pub use recorder::Recorder;
pub use summary::{EngineMetrics, RunMetrics, RunSummary, ServiceMetrics};
pub use timeseries::{SeriesRecorder, TimeSeries};
