//! Spans as OTLP JSON (`loadsim run --spans`). Owns the encoding: the OpenTelemetry collector's
//! file exporter format, one `ExportTraceServiceRequest` (`{"resourceSpans":[…]}`) per line, in
//! the protobuf JSON mapping of opentelemetry-proto (`docs/specification.md`, "JSON Protobuf
//! Encoding": ids as lower-case hex, not base64 — 32 digits for a trace id, 16 for a span id;
//! 64-bit integers as decimal strings; enums as their numbers; field names in lowerCamelCase).
//! Times are [`EPOCH_UNIX_NS`] plus simulated time. Spans are written as they end, grouped by
//! resource (the client, then each service in scenario order) into a line every
//! [`SPANS_PER_LINE`] spans, so memory stays bounded however long the run.

use std::fmt::Write as _;
use std::io::Write;

use crate::model::spans::{CLIENT_SERVICE, Resource, SpanKind, SpanRecord, SpanSink};
use crate::scenario::Scenario;
use crate::time::SimTime;

/// Simulated time zero as Unix time: 2025-01-01T00:00:00Z, in nanoseconds.
pub const EPOCH_UNIX_NS: u64 = 1_735_689_600_000_000_000;

/// Spans per written line (one `ExportTraceServiceRequest`).
pub const SPANS_PER_LINE: usize = 1000;

/// Writes spans to `out` as OTLP JSON lines.
pub struct OtlpWriter<W: Write> {
    out: W,
    /// Per resource (the client, then each service): its `resource` object, and the spans
    /// waiting for the next line, comma-separated.
    resources: Vec<String>,
    pending: Vec<String>,
    buffered: usize,
    /// Spans written (or buffered).
    pub spans: u64,
    /// `"traceState":"ot=th:…",` when requests are sampled at a rate below one.
    trace_state: String,
    /// Bytes written, and the most that may be (`--max-spans-size`).
    written: u64,
    limit: u64,
    /// The spans traced when a line would have passed `limit` (nothing is written after it).
    passed_limit_at: Option<u64>,
    error: Option<std::io::Error>,
}

/// The fewest bytes one span takes in this writer's output: the shortest span it writes (a
/// client attempt's, with its class, outcome and attempt number) is over 300 bytes; 256 leaves
/// room for short names. `run --spans` refuses a run whose traced requests × this floor exceed
/// `--max-spans-size` before it starts.
pub const BYTES_PER_SPAN_FLOOR: u64 = 256;

/// The OpenTelemetry sampling threshold of a probability (the specification's "TraceState:
/// Probability Sampling", `ot=th:`): the rejection threshold `T = (1 - p) · 2^56`, as 14 hex
/// digits with trailing zeros left out (`0` for `p = 1`). A reader's probability is
/// `1 - T / 2^56`.
pub fn sampling_threshold(p: f64) -> String {
    const MAX: f64 = (1u64 << 56) as f64;
    let t = ((1.0 - p.clamp(0.0, 1.0)) * MAX).round().min(MAX - 1.0) as u64;
    let digits = format!("{t:014x}");
    let trimmed = digits.trim_end_matches('0');
    if trimmed.is_empty() {
        "0".into()
    } else {
        trimmed.into()
    }
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

fn time(t: SimTime) -> u64 {
    EPOCH_UNIX_NS.saturating_add(t.0)
}

impl<W: Write> OtlpWriter<W> {
    /// A writer of `sc`'s spans into `out`.
    pub fn new(sc: &Scenario, out: W) -> Self {
        let resource = |name: &str| {
            format!(
                "{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"stringValue\":{}}}}}]}},\"scopeSpans\":[{{\"scope\":{{\"name\":\"loadsim\",\"version\":\"{}\"}},\"spans\":[",
                quoted(name),
                env!("CARGO_PKG_VERSION")
            )
        };
        let mut resources = vec![resource(CLIENT_SERVICE)];
        resources.extend(sc.services.iter().map(|s| resource(&s.name)));
        OtlpWriter {
            out,
            pending: vec![String::new(); resources.len()],
            resources,
            buffered: 0,
            spans: 0,
            trace_state: String::new(),
            written: 0,
            limit: u64::MAX,
            passed_limit_at: None,
            error: None,
        }
    }

    /// States on every span that requests were traced with probability `rate`
    /// (`--span-sample`), as the W3C `tracestate` entry `ot=th:…` of OpenTelemetry's
    /// probability sampling, so that `loadsim import traces` scales the arrivals it sees back
    /// up by `1 / rate`. Nothing is written at a rate of one.
    pub fn sampled_at(mut self, rate: f64) -> Self {
        self.trace_state = if rate < 1.0 {
            format!("\"traceState\":\"ot=th:{}\",", sampling_threshold(rate))
        } else {
            String::new()
        };
        self
    }

    /// Writes at most `limit` bytes (`--max-spans-size`): the first line that would pass it is
    /// not written, and [`OtlpWriter::finish`] returns the error that says so.
    pub fn limited_to(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    /// Whether the spans passed the limit of [`OtlpWriter::limited_to`], and at which span
    /// count: then the output is incomplete and must not be kept.
    pub fn passed_limit_at(&self) -> Option<u64> {
        self.passed_limit_at
    }

    /// Writes the spans still waiting (so that [`OtlpWriter::passed_limit_at`] sees them all).
    pub fn flush_pending(&mut self) {
        self.flush_line();
    }

    /// Writes the spans waiting as one line.
    fn flush_line(&mut self) {
        if self.buffered == 0 {
            return;
        }
        let mut line = String::from("{\"resourceSpans\":[");
        let mut first = true;
        for (r, spans) in self.resources.iter().zip(&mut self.pending) {
            if spans.is_empty() {
                continue;
            }
            if !first {
                line.push(',');
            }
            first = false;
            line.push_str(r);
            line.push_str(spans);
            line.push_str("]}]}");
            spans.clear();
        }
        line.push_str("]}\n");
        self.buffered = 0;
        if self.error.is_some() {
            return;
        }
        let size = line.len() as u64;
        if self.written.saturating_add(size) > self.limit {
            self.passed_limit_at = Some(self.spans);
            self.error = Some(std::io::Error::other("the spans pass --max-spans-size"));
        } else if let Err(e) = self.out.write_all(line.as_bytes()) {
            self.error = Some(e);
        } else {
            self.written += size;
        }
    }

    /// Writes what is left and hands back the output, or the first write error.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.flush_line();
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> SpanSink for OtlpWriter<W> {
    fn span(&mut self, s: &SpanRecord) {
        let r = match s.resource {
            Resource::Client => 0,
            Resource::Service(i) => i + 1,
        };
        let out = &mut self.pending[r];
        if !out.is_empty() {
            out.push(',');
        }
        let _ = write!(
            out,
            "{{\"traceId\":\"{:032x}\",\"spanId\":\"{:016x}\",",
            s.trace, s.span
        );
        out.push_str(&self.trace_state);
        if s.parent != 0 {
            let _ = write!(out, "\"parentSpanId\":\"{:016x}\",", s.parent);
        }
        let kind = match s.kind {
            SpanKind::Server => 2,
            SpanKind::Client => 3,
        };
        let _ = write!(
            out,
            "\"name\":{},\"kind\":{kind},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"attributes\":[",
            quoted(s.name),
            time(s.start),
            time(s.end)
        );
        let _ = write!(
            out,
            "{{\"key\":\"loadsim.class\",\"value\":{{\"stringValue\":{}}}}},{{\"key\":\"loadsim.outcome\",\"value\":{{\"stringValue\":\"{}\"}}}}",
            quoted(s.class),
            s.outcome
        );
        if s.kind == SpanKind::Client {
            let _ = write!(
                out,
                ",{{\"key\":\"loadsim.attempt\",\"value\":{{\"intValue\":\"{}\"}}}}",
                s.attempt
            );
            if s.retry {
                out.push_str(",{\"key\":\"loadsim.retry\",\"value\":{\"boolValue\":true}}");
            }
            if s.hedge {
                out.push_str(",{\"key\":\"loadsim.hedge\",\"value\":{\"boolValue\":true}}");
            }
        }
        if let Some(r) = s.replica {
            let _ = write!(
                out,
                ",{{\"key\":\"loadsim.replica\",\"value\":{{\"intValue\":\"{r}\"}}}}"
            );
        }
        if s.unfinished {
            out.push_str(",{\"key\":\"loadsim.unfinished\",\"value\":{\"boolValue\":true}}");
        }
        out.push(']');
        if let Some(d) = s.dequeued {
            let _ = write!(
                out,
                ",\"events\":[{{\"timeUnixNano\":\"{}\",\"name\":\"dequeued\",\"attributes\":[{{\"key\":\"loadsim.queue_wait_ns\",\"value\":{{\"intValue\":\"{}\"}}}}]}}]",
                time(d),
                d.0.saturating_sub(s.start.0)
            );
        }
        if let Some(reason) = s.error {
            let _ = write!(out, ",\"status\":{{\"code\":2,\"message\":\"{reason}\"}}");
        }
        out.push('}');
        self.buffered += 1;
        self.spans += 1;
        if self.buffered >= SPANS_PER_LINE {
            self.flush_line();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sampling_threshold;

    #[test]
    fn thresholds_are_the_specifications_encoding() {
        // "TraceState: Probability Sampling": T = (1 - p) · 2^56 as 14 hex digits, trailing
        // zeros left out; th:0 samples everything, th:8 half, th:c a quarter.
        assert_eq!(sampling_threshold(1.0), "0");
        assert_eq!(sampling_threshold(0.5), "8");
        assert_eq!(sampling_threshold(0.25), "c");
        assert_eq!(sampling_threshold(0.0625), "f");
        // 1 %: 0.99 · 2^56 = 0xfd70a3d70a3d70 (to f64's precision), its last zero left out.
        assert_eq!(sampling_threshold(0.01), "fd70a3d70a3d7");
    }
}
