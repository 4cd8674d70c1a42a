//! The time-series CSV of `loadsim run --timeseries FILE.csv`, in long format: one row per
//! scenario, bin and series, columns `scenario,t_s,series,value`. Rows go scenario by scenario (in
//! argument order), then by bin, then by series in the order of [`crate::metrics::timeseries`].
//! `t_s` is the start of the bin in seconds, always written as a float (`0.0`, `1.0`, … or `0.1`,
//! `0.2`, … at `100ms`), so that its type does not change with the resolution; a bin where
//! a series is undefined (a ratio over zero arrivals) has no row. Counts are integers; means,
//! ratios and tokens are rounded to 6 decimals, trailing zeros dropped.

use crate::metrics::TimeSeries;
use crate::time::NANOS_PER_SEC;

/// Renders the series of each `(scenario, series)` pair as one long CSV.
pub fn render_long(runs: &[(&str, &TimeSeries)]) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(["scenario", "t_s", "series", "value"])
        .expect("writing to memory");
    for (scenario, ts) in runs {
        let columns: Vec<_> = ts.columns().collect();
        for bin in 0..ts.bins() {
            let t = seconds_float(ts.bin_start(bin).0);
            for (name, values) in &columns {
                if let Some(v) = values[bin] {
                    w.write_record([*scenario, t.as_str(), name, value(v).as_str()])
                        .expect("writing to memory");
                }
            }
        }
    }
    String::from_utf8(w.into_inner().expect("flush to memory")).expect("CSV of UTF-8 fields")
}

/// Nanoseconds as seconds, exactly, without trailing zeros: `1500000000` → `1.5`.
pub fn seconds(ns: u64) -> String {
    let (whole, frac) = (ns / NANOS_PER_SEC, ns % NANOS_PER_SEC);
    if frac == 0 {
        whole.to_string()
    } else {
        let digits = format!("{frac:09}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// [`seconds`] with at least one decimal: `3000000000` → `3.0`, `1500000000` → `1.5`.
pub fn seconds_float(ns: u64) -> String {
    let s = seconds(ns);
    if s.contains('.') { s } else { s + ".0" }
}

/// A value: integral ones as integers, others to 6 decimals without trailing zeros.
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v == v.trunc() && v.abs() < 9.0e15 {
        return format!("{}", v as i64);
    }
    crate::util::number::trimmed(v, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_values_are_exact_and_short() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(3 * NANOS_PER_SEC), "3");
        assert_eq!(seconds(300_000_000), "0.3");
        assert_eq!(seconds(1_250_000_000), "1.25");
        assert_eq!(seconds_float(0), "0.0");
        assert_eq!(seconds_float(3 * NANOS_PER_SEC), "3.0");
        assert_eq!(seconds_float(1_250_000_000), "1.25");
        assert_eq!(value(12.0), "12");
        assert_eq!(value(0.5), "0.5");
        assert_eq!(value(1.0 / 3.0), "0.333333");
        assert_eq!(value(-0.0000001), "0");
    }
}
