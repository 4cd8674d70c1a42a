//! The parallel map and its progress bar. [`Runner::map`] runs a function over a slice on a pool
//! of `--jobs` threads and returns the results in the slice's order, whatever order they finished
//! in — outputs are byte-identical at 1 or N threads because every item carries its own seed.
//! [`Progress`] counts finished runs on stderr; it draws nothing when stderr is not a terminal or
//! the command is quiet, so pipes and logs get only data and notes.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::scenario::ConfigError;

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
}
