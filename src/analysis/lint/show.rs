//! Numbers for people in the linter's sentences and tables: durations, rates and factors, short.

use crate::time::SimDuration;

/// A duration for people: `300ms`, `0.5ms`, `4.07s`.
pub fn show_duration(d: SimDuration) -> String {
    show_secs(d.as_secs_f64())
}

/// Seconds for people: milliseconds below one second, seconds from there, at most 3 decimals.
pub fn show_secs(s: f64) -> String {
    if s == 0.0 {
        "0s".to_owned()
    } else if s < 1.0 {
        format!("{}ms", trim(s * 1e3))
    } else {
        format!("{}s", trim(s))
    }
}

/// A rate: `800/s`, `1320/s`, `12.5/s`.
pub fn show_rate(r: f64) -> String {
    format!("{}/s", crate::util::number::trimmed(r, 1))
}

/// An amplification factor: `48`, `3.3`.
pub fn show_factor(f: f64) -> String {
    trim(f)
}

/// At most three decimals, no trailing zeros.
fn trim(x: f64) -> String {
    crate::util::number::trimmed(x, 3)
}
