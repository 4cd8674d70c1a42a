//! The parallel map and its progress bar. [`Runner::map`] runs a function over a slice on a pool
//! of `--jobs` threads and returns the results in the slice's order, whatever order they finished
//! in — outputs are byte-identical at 1 or N threads because every item carries its own seed.
//! [`Progress`] counts finished runs on stderr, and [`RunProgress`] follows one long run in
//! simulated time (a [`Watch`] the simulation tells every few thousand events); both draw nothing
//! when stderr is not a terminal or the command is quiet, so pipes and logs get only data and
//! notes. Any command that runs scenarios uses these two: `run`, `test`, `boundary`, `tune`,
//! `sweep`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::model::Watch;
use crate::scenario::{ConfigError, Scenario};
use crate::time::{SimDuration, SimTime};

/// A pool of threads for a grid's runs.
pub struct Runner {
    pool: rayon::ThreadPool,
}

impl Runner {
    /// A pool of `jobs` threads (`None`: one per core).
    pub fn new(jobs: Option<usize>) -> Result<Runner, ConfigError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.unwrap_or(0))
            .build()
            .map_err(|e| ConfigError::flag("--jobs", format!("cannot start the threads: {e}")))?;
        Ok(Runner { pool })
    }

    /// Runs `f` on the pool: the parallel iterators inside it use the pool's threads (and no
    /// more than `--jobs` of them).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.pool.install(f)
    }

    /// Threads in the pool.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// `f` over `items` in parallel; the results in the order of `items`.
    pub fn map<T, R>(&self, items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R>
    where
        T: Sync,
        R: Send,
    {
        self.pool.install(|| items.par_iter().map(f).collect())
    }

    /// [`Runner::map`] over owned items, each moved into `f` (a prepared scenario is then
    /// dropped as soon as its run ends), with a scratch value `init` makes for each batch of
    /// items a thread takes (the storage one run leaves for the next); the results in the order
    /// of `items`. `f` must not let the scratch's contents change its result.
    pub fn map_owned_with<T, S, R>(
        &self,
        items: Vec<T>,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, T) -> R + Sync + Send,
    ) -> Vec<R>
    where
        T: Send,
        R: Send,
    {
        self.pool
            .install(|| items.into_par_iter().map_init(init, f).collect())
    }
}

/// Finished runs counted on stderr.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar out of `total` (a spinner when the total is unknown) counting `unit` (`cells`,
    /// `runs`); hidden when `quiet` or when stderr is not a terminal.
    pub fn new(total: Option<u64>, unit: &str, quiet: bool) -> Progress {
        Progress::labelled(total, unit, None, quiet)
    }

    /// [`Progress::new`] with a label before the bar and a hint printed once above it (the
    /// sweep's name, and that Ctrl-C keeps finished cells); both only when the bar is shown.
    pub fn labelled(
        total: Option<u64>,
        unit: &str,
        label: Option<(&str, &str)>,
        quiet: bool,
    ) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let prefix = match label {
            Some((label, hint)) => {
                eprintln!("{hint}");
                format!("{} ", label.replace('{', "{{").replace('}', "}}"))
            }
            None => String::new(),
        };
        let (bar, template) = match total {
            Some(n) => (
                ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
                format!(
                    "{prefix}{{bar:40}} {{pos}}/{{len}} {unit}  {{rate}}  elapsed {{elapsed}}  ETA {{eta}}"
                ),
            ),
            None => (
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                format!("{prefix}{{spinner}} {{pos}} {unit}  {{rate}}  elapsed {{elapsed}}"),
            ),
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            let unit = unit.to_owned();
            bar.set_style(style.with_key(
                "rate",
                move |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.1} {unit}/s", state.per_sec());
                },
            ));
        }
        Progress { bar }
    }

    /// A bar that draws nothing.
    pub fn hidden() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
        }
    }

    /// One more run finished.
    pub fn inc(&self) {
        self.bar.inc(1);
    }
}

impl Drop for Progress {
    /// Clears the bar, so what follows on stderr starts on a clean line.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// One run followed in simulated time on stderr: `simulated 3h12m / 24h  12.4 M events/s`. The
/// bar appears only once the run has taken [`RunProgress::AFTER`] of wall time, so short runs
/// print nothing; hidden when `quiet` or when stderr is not a terminal.
pub struct RunProgress {
    bar: ProgressBar,
    /// Whether the bar may draw (stderr is a terminal and the command is not quiet).
    enabled: bool,
    /// Wall time before the bar appears.
    after: Duration,
    shown: AtomicBool,
    started: Instant,
}

impl RunProgress {
    /// Wall time a run takes before its bar appears.
    pub const AFTER: Duration = Duration::from_secs(1);

    /// A bar for a run of `sc`, from 0 to its arrivals and drain (the latest a run can end).
    pub fn new(sc: &Scenario, quiet: bool) -> RunProgress {
        RunProgress::with(sc, !quiet && std::io::stderr().is_terminal(), Self::AFTER)
    }

    /// A bar that may draw when `enabled`, from `after` on.
    fn with(sc: &Scenario, enabled: bool, after: Duration) -> RunProgress {
        let horizon = sc.duration.0.saturating_add(sc.drain.0);
        let bar = ProgressBar::with_draw_target(Some(horizon), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(&format!(
            "{} {{bar:40}} simulated {{sim}}  {{msg}}  elapsed {{elapsed}}  ETA {{eta}}",
            sc.name.replace('{', "{{").replace('}', "}}")
        )) {
            bar.set_style(style.with_key(
                "sim",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(
                        w,
                        "{} / {}",
                        SimDuration(state.pos()),
                        SimDuration(state.len().unwrap_or(0))
                    );
                },
            ));
        }
        RunProgress {
            bar,
            enabled,
            after,
            shown: AtomicBool::new(false),
            started: Instant::now(),
        }
    }

    /// Whether the bar is on screen (it appears after [`RunProgress::AFTER`]).
    pub fn shown(&self) -> bool {
        self.shown.load(Ordering::Relaxed)
    }
}

impl Watch for RunProgress {
    fn at(&self, now: SimTime, events: u64) {
        let elapsed = self.started.elapsed();
        if !self.shown() {
            if !self.enabled || elapsed < self.after {
                return;
            }
            self.shown.store(true, Ordering::Relaxed);
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        let rate = events as f64 / elapsed.as_secs_f64().max(1e-9);
        self.bar
            .set_message(format!("{:.1} M events/s", rate / 1e6));
        self.bar.set_position(now.0);
    }
}

impl Drop for RunProgress {
    /// Clears the bar, so what follows on stderr starts on a clean line.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_the_order_of_its_items_at_any_thread_count() {
        let items: Vec<u64> = (0..200).collect();
        let slow_first = |&i: &u64| {
            // Early items take longest, so they finish last on several threads.
            std::thread::sleep(std::time::Duration::from_micros(200 - i));
            i * 3
        };
        let one = Runner::new(Some(1)).unwrap().map(&items, slow_first);
        let four = Runner::new(Some(4)).unwrap().map(&items, slow_first);
        assert_eq!(one, items.iter().map(|i| i * 3).collect::<Vec<_>>());
        assert_eq!(one, four);
    }

    #[test]
    fn map_owned_with_keeps_the_order_of_its_items_and_reuses_its_scratch() {
        let items: Vec<u64> = (0..200).collect();
        let run = |threads| {
            let inits = std::sync::atomic::AtomicUsize::new(0);
            let out = Runner::new(Some(threads)).unwrap().map_owned_with(
                items.clone(),
                || {
                    inits.fetch_add(1, Ordering::Relaxed);
                    Vec::<u64>::new()
                },
                |scratch, i| {
                    std::thread::sleep(std::time::Duration::from_micros(200 - i));
                    scratch.push(i);
                    i * 3
                },
            );
            (out, inits.into_inner())
        };
        let (one, inits_one) = run(1);
        let (four, _) = run(4);
        assert_eq!(one, items.iter().map(|i| i * 3).collect::<Vec<_>>());
        assert_eq!(one, four);
        assert!(
            inits_one < items.len(),
            "one scratch per batch, not per item: {inits_one}"
        );
    }

    fn scenario() -> Scenario {
        let text = "duration: 20s\narrivals: {rate: 10}\nclient: {entry: a, attempt_timeout: 1s}\n\
                    services:\n  a: {slots: 1, service_time: {dist: constant, value: 1ms}}\n";
        let doc = crate::config::Document::from_text(std::path::Path::new("p.yaml"), text)
            .expect("valid YAML");
        Scenario::from_document(&doc).expect("a valid scenario")
    }

    #[test]
    fn a_run_bar_stays_hidden_when_disabled_or_before_its_delay() {
        let sc = scenario();
        let off = RunProgress::with(&sc, false, Duration::ZERO);
        off.at(SimTime(3_000_000_000), 1000);
        assert!(
            !off.shown(),
            "never drawn when stderr is not a terminal or quiet"
        );
        assert_eq!(off.bar.position(), 0);
        let later = RunProgress::with(&sc, true, Duration::from_secs(3600));
        later.at(SimTime(3_000_000_000), 1000);
        assert!(!later.shown(), "not drawn before its delay");
    }

    #[test]
    fn a_run_bar_counts_simulated_time_up_to_arrivals_and_drain() {
        let sc = scenario();
        let bar = RunProgress::with(&sc, true, Duration::ZERO);
        assert_eq!(
            bar.bar.length(),
            Some(sc.duration.0 + sc.drain.0),
            "the bar ends where a run can end at the latest"
        );
        bar.at(SimTime(7_000_000_000), 5000);
        assert!(bar.shown());
        assert_eq!(bar.bar.position(), SimTime(7_000_000_000).0);
        assert!(
            bar.bar.message().ends_with("M events/s"),
            "{}",
            bar.bar.message()
        );
    }
}
