//! Durations as users write them: `20ms`, `1s`, `1m 30s`, `0s` (humantime syntax). Owns parsing a
//! duration string into integer nanoseconds, refusing bare numbers (which unit?) and spans beyond
//! what `u64` nanoseconds hold (about 584 years).

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::time::SimDuration;

/// A duration as written in a file, already parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationText(pub SimDuration);

/// The JSON Schema pattern of a duration: one or more `<number><unit>` parts, optionally spaced
/// (`20ms`, `1.5s`, `1m 30s`), with humantime's unit names. It accepts what [`parse_duration`]
/// accepts apart from oddities nobody writes (digits split by spaces) and refuses bare numbers, as
/// `parse_duration` does; a test keeps the two in step.
pub const DURATION_PATTERN: &str = r"^\s*([0-9]+(\.[0-9]+)?\s*(nanos|nsec|ns|usec|us|µs|millis|msec|ms|seconds|second|secs|sec|s|minutes|minute|mins|min|m|hours|hour|hrs|hr|h|days|day|d|weeks|week|wks|wk|w|months|month|M|years|year|yrs|yr|y)\s*)+$";

/// What an editor says about a value that is not a duration.
const DURATION_HINT: &str = "a duration needs a unit, like `20ms`, `1s` or `1m 30s`";

impl JsonSchema for DurationText {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": DURATION_PATTERN,
            "description": "A duration with a unit: `500us`, `20ms`, `1.5s`, `1m 30s`, `0s`.",
            // Editors show these instead of "does not match the pattern ^\\s*([0-9]+…".
            "errorMessage": DURATION_HINT,
            "patternErrorMessage": DURATION_HINT
        })
    }
}

/// Parses `20ms`, `1s`, `1m 30s` into nanoseconds.
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    let trimmed = text.trim();
    if trimmed.parse::<f64>().is_ok() {
        return Err(format!(
            "`{trimmed}` has no unit; write a duration with a unit, like `{trimmed}ms` or `{trimmed}s`"
        ));
    }
    let d = humantime::parse_duration(trimmed).map_err(|e| {
        format!("`{trimmed}` is not a duration ({e}); write it like `20ms`, `1s` or `1m 30s`")
    })?;
    let nanos = u64::try_from(d.as_nanos()).map_err(|_| {
        format!("`{trimmed}` is longer than loadsim can represent (about 584 years)")
    })?;
    Ok(SimDuration(nanos))
}

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DurationText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration with a unit, like `20ms` or `1s`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationText, E> {
                parse_duration(v).map(DurationText).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationText, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit; write a duration with a unit, like `{v}ms` or `{v}s`"
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationText, E> {
                Err(E::custom(format!(
                    "`{v}` is not a duration; durations are non-negative and have a unit, like `20ms`"
                )))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<DurationText, E> {
                if !v.is_finite() {
                    return Err(E::custom(format!(
                        "`{v}` is not a duration; write a finite duration with a unit, like `20ms`"
                    )));
                }
                Err(E::custom(format!(
                    "`{v}` has no unit; write a duration with a unit, like `{v}s`"
                )))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(
            parse_duration("20ms").unwrap(),
            SimDuration::from_millis(20)
        );
        assert_eq!(parse_duration("1s").unwrap(), SimDuration::from_secs(1));
        assert_eq!(parse_duration("0s").unwrap(), SimDuration::ZERO);
        assert_eq!(parse_duration("500us").unwrap(), SimDuration(500_000));
        assert_eq!(
            parse_duration("1m 30s").unwrap(),
            SimDuration::from_secs(90)
        );
    }

    #[test]
    fn refuses_bare_numbers_bad_units_and_overflow() {
        assert!(parse_duration("20").unwrap_err().contains("no unit"));
        assert!(
            parse_duration("20 parsecs")
                .unwrap_err()
                .contains("not a duration")
        );
        assert!(
            parse_duration("1000years")
                .unwrap_err()
                .contains("longer than")
        );
    }
}
