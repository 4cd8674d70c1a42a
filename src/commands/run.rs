//! `loadsim run`: load scenarios, run each (in parallel, results in argument order), render; on
//! request also bin each run over time and write the time-series CSV (`--timeseries`) and the SVG
//! figures (`--plot`) and the HTML report (`--html`), and the spans of the simulated requests as
//! OTLP JSON (`--spans`, one scenario).

mod page;

use std::path::PathBuf;

use super::Output;
use crate::Error;
use crate::config::ConfigError;
use crate::guard;
use crate::metrics::{RunSummary, SeriesRecorder, TimeSeries};
use crate::model::{RunError, RunOptions, Simulation, Watch, run_watched, run_watched_with_series};
use crate::report::Format;
use crate::runner::{
    OutputPlan, Progress, RunProgress, Runner, Subject, Target, collect_all, export,
    load_scenarios, output_error,
};
use crate::scenario::Scenario;
use crate::time::SimDuration;
use crate::util::fs::AtomicFile;

/// Arguments of `loadsim run`, independent of clap.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The scenario files, run in order.
    pub files: Vec<PathBuf>,
    /// `--set KEY=VALUE` overrides, in order, applied to every scenario file.
    pub sets: Vec<String>,
    /// `--seed`: the seed of every run; `None` for each file's own `seed`.
    pub seed: Option<u64>,
    /// `--max-events` and `--max-memory`: the limits every run is admitted under
    /// ([`guard::admit`]).
    pub options: RunOptions,
    /// `--yes`: with `--seeds`, run more than [`guard::MAX_CELLS_WITHOUT_YES`] runs.
    pub yes: bool,
}

/// Where `loadsim run` puts what it computes.
#[derive(Clone, Debug)]
pub struct RunOutputs {
    /// `--format`: how the report reads.
    pub format: Format,
    /// `--output FILE`: the report goes to this file instead of stdout.
    pub output: Option<PathBuf>,
    /// `--timeseries FILE.csv`: the long time-series CSV.
    pub timeseries: Option<PathBuf>,
    /// `--plot DIR`: the SVG figures.
    pub plot_dir: Option<PathBuf>,
    /// `--timeseries-resolution`: the bin width (default 1 s).
    pub resolution: SimDuration,
    /// `--max-memory`: the budget for the time series, in bytes.
    pub max_memory: u64,
    /// `--html FILE`: the self-contained HTML report ([`crate::report::html`]).
    pub html: Option<PathBuf>,
    /// The command line, shown at the foot of the HTML report.
    pub command: String,
    /// `--quiet`: no progress bar.
    pub quiet: bool,
    /// `--spans FILE`: the simulated requests as OTLP JSON lines ([`crate::report::otlp`]).
    pub spans: Option<PathBuf>,
    /// `--span-sample`: the share of user requests written to `spans`, in (0, 1].
    pub span_sample: f64,
    /// `--max-spans-size`: the largest `spans` file, in bytes.
    pub max_spans_size: u64,
}

impl Default for RunOutputs {
    fn default() -> Self {
        RunOutputs {
            format: Format::Table,
            output: None,
            timeseries: None,
            plot_dir: None,
            resolution: SimDuration::from_secs(1),
            max_memory: crate::model::DEFAULT_MAX_MEMORY,
            html: None,
            command: String::new(),
            quiet: false,
            spans: None,
            span_sample: 1.0,
            max_spans_size: DEFAULT_MAX_SPANS_SIZE,
        }
    }
}

impl RunOutputs {
    /// Whether any output needs the time series.
    pub fn wants_series(&self) -> bool {
        self.timeseries.is_some() || self.plot_dir.is_some() || self.html.is_some()
    }
}

/// Most bins one run may have: beyond this, memory (bins × series × 8 bytes) grows past what a
/// time series is for.
pub const MAX_BINS: u64 = 1_000_000;

/// A scenario file loaded, validated and admitted by the resource model, with the limits its
/// runs are held to.
pub(crate) type Admitted = (Subject, Scenario, RunOptions);

/// Loads every scenario of `req` and refuses, before running any, those the resource model
/// refuses under `req.options` ([`guard::admit`]: event bound, memory estimate, no request).
pub(crate) fn load_checked(req: &RunRequest) -> Result<Vec<Admitted>, Error> {
    let loaded = load_scenarios(&req.files, &req.sets, req.seed)?;
    collect_all(loaded.into_iter().map(|(subject, sc)| {
        let options = guard::admit(&sc, &subject.file, req.options)?;
        Ok((subject, sc, options))
    }))
    .map_err(Error::from)
}

/// Runs `run` on every scenario on the grid runner; results in argument order. Progress on
/// stderr unless `quiet`: one scenario is followed in simulated time once it has run for a
/// second ([`RunProgress`]), several are counted as they finish ([`Progress`]).
fn run_each<R: Send>(
    loaded: &[Admitted],
    quiet: bool,
    run: impl Fn(&Scenario, RunOptions, Option<&dyn Watch>) -> Result<R, RunError> + Sync + Send,
) -> Result<Vec<R>, Error> {
    if let [(_, sc, options)] = loaded {
        let bar = RunProgress::new(sc, quiet);
        return Ok(vec![run(sc, *options, Some(&bar))?]);
    }
    let runner = Runner::new(None)?;
    let progress = Progress::new(Some(loaded.len() as u64), "runs", quiet);
    runner
        .map(loaded, |(_, sc, options)| {
            let r = run(sc, *options, None);
            progress.inc();
            r
        })
        .into_iter()
        .map(|r| r.map_err(Error::from))
        .collect()
}

/// Runs every scenario of `req`, in argument order, without progress bars.
pub fn run_all(req: &RunRequest) -> Result<Vec<RunSummary>, Error> {
    run_each(&load_checked(req)?, true, run_watched)
}

/// What `loadsim check` finds on `sc`, as the verdict of the HTML report lists it.
fn check_findings(sc: &Scenario) -> Vec<crate::report::verdict::Finding> {
    use crate::analysis::lint::{self, Level};
    lint::lint(sc)
        .findings
        .iter()
        .map(|f| {
            let level = match f.level {
                Level::Warning => "warning",
                Level::Note => "note",
            };
            let mut text = format!(
                "{level} ({}) `{}`: {}",
                f.check.name(),
                f.subject,
                f.message
            );
            if let Some(fix) = &f.fix {
                text.push_str(&format!(" Fix: {fix}"));
            }
            crate::report::verdict::Finding {
                warning: f.level == Level::Warning,
                text,
            }
        })
        .collect()
}

/// Refuses a resolution that is zero or would make more than [`MAX_BINS`] bins for a scenario,
/// and time series that would not fit `max_memory` (`--max-memory`): bins × series × scenarios ×
/// [`guard::BYTES_PER_SERIES_VALUE`].
pub fn check_resolution(
    scenarios: &[Scenario],
    resolution: SimDuration,
    max_memory: u64,
) -> Result<(), Error> {
    const FLAG: &str = "--timeseries-resolution";
    if resolution.is_zero() {
        return Err(ConfigError::flag(
            FLAG,
            "the bin width must be positive, e.g. `1s` or `100ms`",
        )
        .into());
    }
    let mut values: u64 = 0;
    for sc in scenarios {
        let span = sc.duration.0.saturating_add(sc.drain.0);
        let bins = span.div_ceil(resolution.0);
        if bins > MAX_BINS {
            return Err(ConfigError::flag(
                FLAG,
                format!(
                    "`{resolution}` makes more than {MAX_BINS} bins for scenario `{}` ({} of arrivals and drain); choose a wider bin",
                    sc.name,
                    SimDuration(span)
                ),
            )
            .into());
        }
        // The series a run records, counted from the recorder itself (no bins yet).
        let empty =
            crate::metrics::Recorder::new(sc.classes.len(), sc.services.len(), sc.edges.len(), 0)
                .with_arrival_bins(resolution);
        let series = SeriesRecorder::new(sc, resolution)
            .finish(&empty)
            .names()
            .count() as u64;
        values = values.saturating_add((bins + 1).saturating_mul(series));
    }
    guard::check_memory(
        &format!(
            "the time series ({values} values: bins × series over {} scenario(s))",
            scenarios.len()
        ),
        values.saturating_mul(guard::BYTES_PER_SERIES_VALUE),
        max_memory,
        &format!("choose a wider {FLAG}"),
    )?;
    Ok(())
}

/// `--max-spans-size`'s default: 4 GiB.
pub const DEFAULT_MAX_SPANS_SIZE: u64 = 4 << 30;

/// Refuses `--spans` for a scenario whose spans would not fit `limit` (`--max-spans-size`) even
/// at their fewest: every traced user request writes at least its client attempt's span, of at
/// least [`crate::report::otlp::BYTES_PER_SPAN_FLOOR`] bytes. A floor, not a bound: calls,
/// retries and hedges add spans, and the writer itself stops at the limit.
pub fn check_spans_size(sc: &Scenario, sample: f64, limit: u64) -> Result<(), Error> {
    let requests = guard::expected_requests(sc);
    let floor = requests * sample * crate::report::otlp::BYTES_PER_SPAN_FLOOR as f64;
    if floor <= limit as f64 {
        return Ok(());
    }
    Err(ConfigError::flag(
        "--max-spans-size",
        format!(
            "the spans of `{}` would take at least {} ({} expected user requests × {} × {} B a \
             span at the least), above the limit of {}; trace a share of the requests with \
             --span-sample, shorten the run, or raise --max-spans-size if the disk has the room",
            sc.name,
            guard::show_bytes(floor as u64),
            crate::util::number::trimmed(requests, 0),
            crate::util::number::trimmed(sample, 4),
            crate::report::otlp::BYTES_PER_SPAN_FLOOR,
            guard::show_bytes(limit)
        ),
    )
    .into())
}

/// Runs one scenario writing its spans to `path` (`--spans`, streamed through a temporary file
/// renamed at the end; removed if the run fails), with its time series when an output needs
/// them; returns the summary, the series and the note saying what was written.
fn run_with_spans(
    (_, sc, options): &Admitted,
    outputs: &RunOutputs,
    target: &Target,
) -> Result<(RunSummary, Option<TimeSeries>, String), Error> {
    let path = target.path();
    let bar = RunProgress::new(sc, outputs.quiet);
    let file = target.create()?;
    let mut writer = crate::report::otlp::OtlpWriter::new(sc, file)
        .sampled_at(outputs.span_sample)
        .limited_to(outputs.max_spans_size);
    let mut sim = Simulation::new(sc, *options)
        .watched(&bar)
        .with_spans(outputs.span_sample, &mut writer);
    if outputs.wants_series() {
        sim = sim.with_series(outputs.resolution);
    }
    let out = sim.run_output()?;
    let spans = writer.spans;
    writer.flush_pending();
    if let Some(at) = writer.passed_limit_at() {
        // The temporary file is dropped, hence removed; nothing is left at `path`.
        return Err(ConfigError::flag(
            "--max-spans-size",
            format!(
                "the spans of `{}` pass the limit of {} by span {at}; {} was not written: trace a \
                 share of the requests with --span-sample, shorten the run, or raise \
                 --max-spans-size if the disk has the room",
                sc.name,
                guard::show_bytes(outputs.max_spans_size),
                path.display()
            ),
        )
        .into());
    }
    writer
        .finish()
        .and_then(AtomicFile::commit)
        .map_err(|e| output_error(path, e))?;
    let note = format!("wrote {} ({spans} spans)", path.display());
    Ok((out.summary, out.series, note))
}

/// `loadsim run`: checks every output path (creating its folder) before anything runs, runs
/// every scenario, writes the time-series CSV and figures asked for, and renders the report —
/// into `--output` if given, else for stdout.
pub fn run(req: &RunRequest, outputs: &RunOutputs) -> Result<Output, Error> {
    let loaded = load_checked(req)?;
    let series = outputs.wants_series();
    if series {
        let scenarios: Vec<Scenario> = loaded.iter().map(|(_, sc, _)| sc.clone()).collect();
        check_resolution(&scenarios, outputs.resolution, outputs.max_memory)?;
    }
    let mut plan = OutputPlan::new(loaded.iter().flat_map(|(s, _, _)| s.inputs()));
    let output = match &outputs.output {
        Some(path) => Some(plan.file("--output", path)?),
        None => None,
    };
    let timeseries = match &outputs.timeseries {
        Some(path) => Some(plan.file("--timeseries", path)?),
        None => None,
    };
    let plot = match &outputs.plot_dir {
        Some(dir) => Some(plan.folder("--plot", dir, &export::RUN_PLOT)?),
        None => None,
    };
    let html = match &outputs.html {
        Some(path) => Some(plan.file("--html", path)?),
        None => None,
    };
    let mut spans = None;
    if let Some(path) = &outputs.spans {
        if loaded.len() > 1 {
            return Err(ConfigError::flag(
                "--spans",
                format!(
                    "writes the spans of one run, and {} scenarios were given; run each scenario with its own --spans file",
                    loaded.len()
                ),
            )
            .into());
        }
        spans = Some(plan.file("--spans", path)?);
        check_spans_size(&loaded[0].1, outputs.span_sample, outputs.max_spans_size)?;
    }
    // The unsupported fields of imports are `loadsim import`'s and `loadsim check`'s to report,
    // not every run's.
    let mut notes: Vec<String> = Vec::new();
    let summaries: Vec<RunSummary> = if series {
        let runs: Vec<(RunSummary, TimeSeries)> = match &spans {
            Some(target) => {
                let (summary, series, note) = run_with_spans(&loaded[0], outputs, target)?;
                notes.push(note);
                vec![(summary, series.expect("series were asked for"))]
            }
            None => run_each(&loaded, outputs.quiet, |sc, options, watch| {
                run_watched_with_series(sc, options, outputs.resolution, watch)
            })?,
        };
        let mut written = Vec::new();
        if let Some(target) = &timeseries {
            let pairs: Vec<(&str, &TimeSeries)> =
                runs.iter().map(|(s, t)| (s.scenario.as_str(), t)).collect();
            let csv = crate::report::timeseries::render_long(&pairs);
            target.write(csv.as_bytes())?;
            written.push(target.path().to_owned());
        }
        if let Some(folder) = &plot {
            let pairs: Vec<(&RunSummary, &TimeSeries)> = runs.iter().map(|(s, t)| (s, t)).collect();
            let figures = crate::plot::run_figures(&pairs)?;
            for (name, svg) in [
                (export::SUCCESS_RATE_SVG, Some(figures.success_rate)),
                (export::QUEUE_LENGTH_SVG, Some(figures.queue_length)),
                (export::AMPLIFICATION_SVG, Some(figures.amplification)),
                (export::CONCURRENCY_LIMIT_SVG, figures.concurrency_limit),
            ] {
                if let Some(svg) = svg {
                    written.push(folder.write(name, svg.as_bytes())?);
                }
            }
        }
        if let Some(target) = &html {
            let pairs: Vec<(&RunSummary, &TimeSeries)> = runs.iter().map(|(s, t)| (s, t)).collect();
            let docs: Vec<_> = loaded.iter().map(|(s, _, _)| s.doc.clone()).collect();
            let findings: Vec<_> = loaded.iter().map(|(_, sc, _)| check_findings(sc)).collect();
            let page = page::run_page(&pairs, &findings, &docs, &outputs.command)?;
            target.write(page.render().as_bytes())?;
            written.push(target.path().to_owned());
        }
        notes.extend(written.iter().map(|p| format!("wrote {}", p.display())));
        runs.into_iter().map(|(s, _)| s).collect()
    } else {
        match &spans {
            Some(target) => {
                let (summary, _, note) = run_with_spans(&loaded[0], outputs, target)?;
                notes.push(note);
                vec![summary]
            }
            None => run_each(&loaded, outputs.quiet, run_watched)?,
        }
    };
    let report = outputs.format.renderer().render(&summaries);
    match &output {
        Some(target) => {
            target.write(report.as_bytes())?;
            Ok(Output {
                stdout: String::new(),
                notes,
            })
        }
        None => Ok(Output {
            stdout: report,
            notes,
        }),
    }
}
