//! Trace replay (`arrivals.trace`): one user request per row of a CSV file, at the time its first
//! column gives in seconds. Owns parsing the file (read safely, once per command and shared
//! between runs by [`Inputs`]; its path resolves against the folder of the scenario file that
//! names it) and every check on it, reported with the file and the row: the file must exist and
//! hold at least one row; each row is `time` (seconds, a finite number ≥ 0 and before
//! `duration`), in non-decreasing order; a first row `time` is a header and is skipped; blank
//! lines and lines starting with `#` are skipped. At most [`MAX_TRACE_ROWS`] rows (the event guard
//! then bounds the run as for any other arrivals). A second column names the request class of the
//! row (`time,class`): read for a class of `clients:`, the trace keeps that class's rows (sorted
//! among themselves; the file as a whole must be sorted too) and refuses a class the scenario does
//! not name; with the shorthand (one class, no `clients:`) a second column is refused.

use std::path::Path;
use std::sync::Arc;

use crate::config::inputs::{Inputs, Kind};
use crate::time::{NANOS_PER_SEC, SimDuration, SimTime};

/// Most rows a trace may hold.
pub const MAX_TRACE_ROWS: usize = 50_000_000;
/// Largest trace file read, in bytes.
pub const MAX_TRACE_BYTES: u64 = 2 << 30;

/// Which rows of a trace with a class column to keep: those of `class`, among `known` classes.
#[derive(Clone, Copy, Debug)]
pub struct ClassFilter<'a> {
    /// The class whose rows are kept.
    pub class: &'a str,
    /// Every class of the scenario: a row naming another is an error.
    pub known: &'a [String],
}

/// The kind of file a trace is, for [`Inputs`]: read at most [`MAX_TRACE_BYTES`] bytes.
pub const KIND: Kind = Kind {
    what: "trace",
    max_bytes: MAX_TRACE_BYTES,
};

/// Reads the arrival instants of the trace at `path` (the rows of `filter`'s class, when the
/// trace has a class column) through `inputs`, which reads the file safely and once per command
/// and shares the instants between every run that replays it; the error names the file and row.
pub fn read(
    inputs: &Inputs,
    path: &Path,
    duration: SimDuration,
    filter: Option<ClassFilter<'_>>,
) -> Result<Arc<[SimTime]>, String> {
    let variant = match filter {
        Some(f) => format!("{} {} of {}", duration.0, f.class, f.known.join(",")),
        None => duration.0.to_string(),
    };
    let shared = inputs.read(
        KIND,
        path,
        variant,
        |text| parse(path, text, duration, filter).map(Arc::<[SimTime]>::from),
        |times: &Arc<[SimTime]>| std::mem::size_of_val(&**times) as u64,
    )?;
    Ok(Arc::clone(&shared))
}

/// The arrival instants of a trace's `text` (read from `path`).
fn parse(
    path: &Path,
    text: &str,
    duration: SimDuration,
    filter: Option<ClassFilter<'_>>,
) -> Result<Vec<SimTime>, String> {
    let shown = path.display();
    // A byte-order mark is not part of the first row (spreadsheets write one).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut times = Vec::new();
    let mut last = SimTime::ZERO;
    let mut rows = 0usize;
    let mut first_line = true;
    for (i, line) in text.lines().enumerate() {
        let row = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let header_allowed = std::mem::replace(&mut first_line, false);
        let mut fields = line.split(',').map(str::trim);
        let first = fields.next().unwrap_or("");
        let second = fields.next();
        if let Some(extra) = fields.next() {
            return Err(format!(
                "{shown}:{row}: expected at most two columns (time in seconds, request class), \
                 found a third (`{extra}`)"
            ));
        }
        if let (Some(extra), None) = (second, filter) {
            return Err(format!(
                "{shown}:{row}: a second column (`{extra}`) names request classes: declare them \
                 under `clients:` and give each class this trace, or give one column, `time`"
            ));
        }
        if first.eq_ignore_ascii_case("time") {
            if header_allowed {
                continue;
            }
            return Err(format!(
                "{shown}:{row}: a header row (`{first}`) may only be the first row of the trace"
            ));
        }
        rows += 1;
        let keep = match (second, filter) {
            (Some(class), Some(f)) => {
                if !f.known.iter().any(|k| k == class) {
                    return Err(format!(
                        "{shown}:{row}: `{class}` is not a request class of this scenario \
                         (classes: {})",
                        f.known.join(", ")
                    ));
                }
                class == f.class
            }
            _ => true,
        };
        let secs: f64 = first.parse().map_err(|_| {
            format!("{shown}:{row}: `{first}` is not a time in seconds (like `0.25`)")
        })?;
        if !secs.is_finite() {
            return Err(format!(
                "{shown}:{row}: `{first}` is not a finite number of seconds"
            ));
        }
        if secs < 0.0 {
            return Err(format!(
                "{shown}:{row}: the time must be zero or more seconds, not `{first}`"
            ));
        }
        let t = SimTime((secs * NANOS_PER_SEC as f64).round() as u64);
        if t.0 >= duration.0 {
            return Err(format!(
                "{shown}:{row}: {first} s is not inside the arrival period [0s, {duration}); \
                 raise `duration` or cut the trace"
            ));
        }
        if t < last {
            return Err(format!(
                "{shown}:{row}: the trace is not sorted: {first} s comes after {} s",
                last.as_secs_f64()
            ));
        }
        last = t;
        if keep {
            times.push(t);
        }
        if times.len() > MAX_TRACE_ROWS {
            return Err(format!(
                "{shown}: holds more than {MAX_TRACE_ROWS} rows; loadsim replays at most that many"
            ));
        }
    }
    if times.is_empty() {
        return Err(match filter {
            Some(f) if rows > 0 => format!("the trace {shown} has no rows of class `{}`", f.class),
            _ => format!("the trace {shown} has no rows (one time in seconds per row)"),
        });
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Result<Arc<[SimTime]>, String> {
        let dir = std::env::temp_dir().join(format!("loadsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("t{}.csv", text.len()));
        std::fs::write(&path, text).unwrap();
        let r = read(&Inputs::default(), &path, SimDuration::from_secs(10), None);
        let _ = std::fs::remove_file(&path);
        r.map_err(|e| e.replace(&path.display().to_string(), "FILE"))
    }

    #[test]
    fn rows_become_instants() {
        let t = read_text("time\n0\n0.5\n# a comment\n\n0.5\n9.25\n").unwrap();
        let secs: Vec<f64> = t.iter().map(|t| t.as_secs_f64()).collect();
        assert_eq!(secs, [0.0, 0.5, 0.5, 9.25]);
    }

    #[test]
    fn a_class_column_keeps_the_rows_of_the_class_read_for() {
        let dir = std::env::temp_dir().join(format!("loadsim-trace-c{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("classes.csv");
        std::fs::write(&path, "time,class\n0,a\n0.5,b\n1,a\n").unwrap();
        let known = ["a".to_owned(), "b".to_owned()];
        let rows = |class| {
            let f = ClassFilter {
                class,
                known: &known,
            };
            read(
                &Inputs::default(),
                &path,
                SimDuration::from_secs(10),
                Some(f),
            )
            .map(|t| t.iter().map(|t| t.as_secs_f64()).collect::<Vec<f64>>())
        };
        assert_eq!(rows("a").unwrap(), [0.0, 1.0]);
        assert_eq!(rows("b").unwrap(), [0.5]);
        let only_a = ["a".to_owned()];
        let f = ClassFilter {
            class: "a",
            known: &only_a,
        };
        let err = read(
            &Inputs::default(),
            &path,
            SimDuration::from_secs(10),
            Some(f),
        )
        .unwrap_err();
        assert!(err.contains(":3: `b` is not a request class"), "{err}");
        std::fs::write(&path, "0,a\n").unwrap();
        let f = ClassFilter {
            class: "b",
            known: &known,
        };
        let err = read(
            &Inputs::default(),
            &path,
            SimDuration::from_secs(10),
            Some(f),
        )
        .unwrap_err();
        assert!(err.contains("has no rows of class `b`"), "{err}");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn bad_traces_name_the_file_and_row() {
        for (text, want) in [
            (
                "time\n1\n0.5\n",
                "FILE:3: the trace is not sorted: 0.5 s comes after 1 s",
            ),
            ("0\nsoon\n", "FILE:2: `soon` is not a time in seconds"),
            ("-1\n", "FILE:1: the time must be zero or more seconds"),
            (
                "0\n12\n",
                "FILE:2: 12 s is not inside the arrival period [0s, 10s)",
            ),
            ("time\n", "the trace FILE has no rows"),
            (
                "time,class\n0,browse\n",
                "FILE:1: a second column (`class`) names request classes",
            ),
            ("0,browse,x\n", "FILE:1: expected at most two columns"),
        ] {
            let err = read_text(text).expect_err(text);
            assert!(err.contains(want), "{text:?}: want `{want}` in `{err}`");
        }
        let missing = read(
            &Inputs::default(),
            Path::new("/nonexistent/t.csv"),
            SimDuration::from_secs(1),
            None,
        );
        assert!(
            missing
                .unwrap_err()
                .contains("cannot read the trace /nonexistent/t.csv")
        );
    }
}
