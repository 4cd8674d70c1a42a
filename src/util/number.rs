//! Short number text for reports, figures and diagnostics. Owns the one rule every human-facing
//! number shares: at most a given number of decimals, no trailing zeros, and never `-0`.

/// `x` with at most `decimals` decimals and no trailing zeros: `12.5`, `800`, `0.3`.
pub fn trimmed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::trimmed;

    #[test]
    fn trims_zeros_but_not_integer_digits_and_never_prints_minus_zero() {
        assert_eq!(trimmed(12.5, 3), "12.5");
        assert_eq!(trimmed(800.0, 1), "800");
        assert_eq!(trimmed(100.0, 0), "100");
        assert_eq!(trimmed(-0.0001, 2), "0");
        assert_eq!(trimmed(0.1234567, 6), "0.123457");
    }
}
