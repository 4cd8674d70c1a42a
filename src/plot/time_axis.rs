//! The time axis of every figure drawn against simulated time (`run --plot`, `run --html`). Owns
//! the rule that picks the axis's unit from the span shown: up to [`SECONDS_UP_TO`] (2 min) in
//! seconds, up to [`MINUTES_UP_TO`] (2 h) in minutes, longer in hours — so a day-long run reads
//! 0–24 h, not 0–86 400 s. Data stay in seconds until drawn: [`TimeAxis::x`] converts. Ticks are
//! plotters' for a numeric range in that unit: round values, 1, 2 or 5 × 10ⁿ of the unit apart,
//! at most about ten of them.

/// Longest span, in seconds, drawn in seconds.
pub const SECONDS_UP_TO: f64 = 120.0;
/// Longest span, in seconds, drawn in minutes; anything longer is in hours.
pub const MINUTES_UP_TO: f64 = 7_200.0;

/// The unit of a time axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Spans up to [`SECONDS_UP_TO`].
    Seconds,
    /// Spans up to [`MINUTES_UP_TO`].
    Minutes,
    /// Anything longer.
    Hours,
}

impl TimeUnit {
    /// Seconds in one unit.
    pub fn seconds(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1.0,
            TimeUnit::Minutes => 60.0,
            TimeUnit::Hours => 3_600.0,
        }
    }

    /// The unit's symbol in an axis label: `s`, `min`, `h`.
    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "min",
            TimeUnit::Hours => "h",
        }
    }
}

/// A time axis from 0 to a span, in the unit the rule picks for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeAxis {
    /// The unit the axis is labelled and ticked in.
    pub unit: TimeUnit,
    /// The end of the axis in `unit`.
    pub end: f64,
}

impl TimeAxis {
    /// The axis for `[0, span_s]` seconds (the unit by the module's rule).
    pub fn for_span(span_s: f64) -> TimeAxis {
        let span_s = if span_s.is_finite() && span_s > 0.0 {
            span_s
        } else {
            1e-9
        };
        let unit = if span_s <= SECONDS_UP_TO {
            TimeUnit::Seconds
        } else if span_s <= MINUTES_UP_TO {
            TimeUnit::Minutes
        } else {
            TimeUnit::Hours
        };
        TimeAxis {
            unit,
            end: span_s / unit.seconds(),
        }
    }

    /// A time in seconds as a position on this axis.
    pub fn x(&self, t_s: f64) -> f64 {
        t_s / self.unit.seconds()
    }

    /// The range to build a chart over.
    pub fn range(&self) -> std::ops::Range<f64> {
        0.0..self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_follows_the_span() {
        assert_eq!(TimeAxis::for_span(60.0).unit, TimeUnit::Seconds);
        assert_eq!(TimeAxis::for_span(120.0).unit, TimeUnit::Seconds);
        let m = TimeAxis::for_span(121.0);
        assert_eq!(m.unit, TimeUnit::Minutes);
        assert_eq!(m.x(90.0), 1.5);
        assert_eq!(TimeAxis::for_span(7_200.0).unit, TimeUnit::Minutes);
        let h = TimeAxis::for_span(86_400.0);
        assert_eq!((h.unit, h.end), (TimeUnit::Hours, 24.0));
        assert_eq!(TimeAxis::for_span(0.0).unit, TimeUnit::Seconds);
    }
}
