//! Reading trace files into one span model. Owns the three wire formats, each read as its
//! published specification writes it:
//!
//! - **OTLP JSON** (OpenTelemetry protocol, JSON encoding of `ExportTraceServiceRequest`, as the
//!   collector's file exporter writes it, one request per line): `resourceSpans[].scopeSpans[]
//!   .spans[]`, the service from the resource attribute `service.name`; ids as written (hex per
//!   the OTLP spec, base64 in Grafana Tempo's responses: only equality matters); 64-bit integers
//!   as decimal strings or numbers (proto3 JSON mapping); `kind` as the `SpanKind` number (1
//!   internal, 2 server, 3 client, 4 producer, 5 consumer) or its enum name; `status.code` 2 (or
//!   `STATUS_CODE_ERROR`) is an error. Tempo's `batches` is read as `resourceSpans`, and the
//!   older `instrumentationLibrarySpans` as `scopeSpans`.
//! - **Jaeger JSON** (the query service's API v1 / UI model, `model/json` in jaegertracing/jaeger):
//!   `data[].spans[]` with `processes.<processID>.serviceName`, `startTime` and `duration` in
//!   microseconds, the parent from `references` (the first `CHILD_OF` of the same trace, else the
//!   first reference) or the legacy `parentSpanID`, `span.kind` and `error` from `tags`.
//! - **Zipkin v2 JSON** (zipkin2 API `Span`): a list of spans (or a list of traces, as
//!   `/api/v2/traces` answers), `timestamp`/`duration` in microseconds, `kind`
//!   `CLIENT|SERVER|PRODUCER|CONSUMER`, `localEndpoint.serviceName`, `remoteEndpoint.serviceName`,
//!   an `error` tag, and `shared: true` for a server half that reuses its client's span id: that
//!   half becomes a child of the client, as Zipkin's own tree builder does.
//!
//! What is not well-formed (malformed JSON with its line and column, a wrong type, a time that
//! does not parse) is collected as a problem with its key path; every problem of every file is
//! reported at once.

use std::collections::HashMap;

use serde_json::Value;

/// A trace wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// OTLP JSON (`resourceSpans`; Tempo's `batches` too).
    Otlp,
    /// Jaeger JSON (`data[].spans` with `processes`).
    Jaeger,
    /// Zipkin v2 JSON (a list of spans).
    Zipkin,
}

impl TraceFormat {
    /// The format's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Otlp => "OTLP JSON",
            TraceFormat::Jaeger => "Jaeger JSON",
            TraceFormat::Zipkin => "Zipkin v2 JSON",
        }
    }
}

/// What a span stands for, from the format's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No kind stated.
    Unspecified,
    /// Work inside a service: neither receives nor makes a call.
    Internal,
    /// Receives a synchronous call.
    Server,
    /// Makes a synchronous call.
    Client,
    /// Sends a message (a call, for the graph).
    Producer,
    /// Receives a message (an invocation, for the graph).
    Consumer,
}

impl Kind {
    /// A span that receives a call (a new invocation of its service).
    pub fn receives(self) -> bool {
        matches!(self, Kind::Server | Kind::Consumer)
    }
    /// A span that makes a call.
    pub fn sends(self) -> bool {
        matches!(self, Kind::Client | Kind::Producer)
    }
}

/// One span, whatever format it came from.
#[derive(Clone, Debug)]
pub struct Span {
    /// The file (index into the files read) and the key path of the span in it.
    pub file: usize,
    /// The span's key path in that file.
    pub at: String,
    /// Its trace id, as written.
    pub trace: String,
    /// Its span id, as written.
    pub id: String,
    /// Its parent's span id (`None` for a root).
    pub parent: Option<String>,
    /// The service it belongs to (`None` when the span names none).
    pub service: Option<String>,
    /// Its name: the operation.
    pub name: String,
    /// What it stands for.
    pub kind: Kind,
    /// Start and end in nanoseconds since the Unix epoch; `None` when the span does not say.
    pub start: Option<u64>,
    /// See `start`.
    pub end: Option<u64>,
    /// Whether it has error status.
    pub error: bool,
    /// The remote service a client span names (`peer.service`, Zipkin's `remoteEndpoint`).
    pub peer: Option<String>,
    /// A probabilistic head sampler's rate the span states (Jaeger's `sampler.param`).
    pub sampled: Option<f64>,
    /// Zipkin `shared`: the server half of a span id its client also uses.
    pub shared: bool,
}

/// A problem found while reading: the file, the key path (empty for the file), the line and
/// column when known, and the message.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Index into the files read.
    pub file: usize,
    /// The key path in the file (empty for the whole file).
    pub key: String,
    /// Line and column, when known.
    pub line: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

/// Spans read from one file, and the format each document was.
pub struct Read {
    /// Every span read, in file order.
    pub spans: Vec<Span>,
    /// The format of each document of the file.
    pub formats: Vec<TraceFormat>,
}

struct Reader<'a> {
    file: usize,
    problems: &'a mut Vec<Problem>,
    spans: Vec<Span>,
    prefix: String,
}

impl Reader<'_> {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            file: self.file,
            key: format!("{}{key}", self.prefix),
            line: None,
            message: message.into(),
        });
    }
}

/// Reads `text` (the file `file`, index `index`): one JSON document, or several one per line
/// (the collector's file exporter). `format` forces the format; otherwise each document's shape
/// says it.
pub fn read(
    index: usize,
    text: &str,
    format: Option<TraceFormat>,
    problems: &mut Vec<Problem>,
) -> Read {
    let mut out = Read {
        spans: Vec::new(),
        formats: Vec::new(),
    };
    if text.trim().is_empty() {
        problems.push(Problem {
            file: index,
            key: String::new(),
            line: None,
            message: "is empty; give a file of traces (OTLP, Jaeger or Zipkin v2 JSON)".into(),
        });
        return out;
    }
    let mut docs = Vec::new();
    for doc in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        match doc {
            Ok(v) => docs.push(v),
            Err(e) => {
                let full = e.to_string();
                let message = match full.rfind(" at line ") {
                    Some(cut) => full[..cut].to_owned(),
                    None => full,
                };
                problems.push(Problem {
                    file: index,
                    key: String::new(),
                    line: Some((e.line(), e.column())),
                    message: format!("is not valid JSON: {message}"),
                });
                return out;
            }
        }
    }
    let many = docs.len() > 1;
    for (d, doc) in docs.iter().enumerate() {
        let mut r = Reader {
            file: index,
            problems,
            spans: Vec::new(),
            prefix: if many {
                format!("(document {}) ", d + 1)
            } else {
                String::new()
            },
        };
        let Some(f) = format.or_else(|| detect(doc)) else {
            r.problem(
                "",
                "is not a trace format loadsim knows: expected an object with `resourceSpans` \
                 (OTLP JSON), an object with `data` (Jaeger JSON) or a list of spans (Zipkin v2 \
                 JSON); name the format with --format otlp|jaeger|zipkin",
            );
            continue;
        };
        match f {
            TraceFormat::Otlp => otlp(&mut r, doc),
            TraceFormat::Jaeger => jaeger(&mut r, doc),
            TraceFormat::Zipkin => zipkin(&mut r, doc),
        }
        out.spans.append(&mut r.spans);
        if !out.formats.contains(&f) {
            out.formats.push(f);
        }
    }
    out
}

/// The format a document's shape says.
fn detect(doc: &Value) -> Option<TraceFormat> {
    match doc {
        Value::Object(m) if m.contains_key("resourceSpans") || m.contains_key("batches") => {
            Some(TraceFormat::Otlp)
        }
        Value::Object(m) if m.contains_key("data") => Some(TraceFormat::Jaeger),
        Value::Array(_) => Some(TraceFormat::Zipkin),
        _ => None,
    }
}

/// A list at `key` of `v` (absent is empty); a value that is not a list is a problem.
fn list<'v>(r: &mut Reader, v: &'v Value, name: &str, at: &str) -> &'v [Value] {
    match v.get(name) {
        None | Some(Value::Null) => &[],
        Some(Value::Array(items)) => items,
        Some(_) => {
            r.problem(&join(at, name), "must be a list");
            &[]
        }
    }
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_owned()
    } else {
        format!("{at}.{name}")
    }
}

/// A string field; absent is `None`, another type a problem.
fn string(r: &mut Reader, v: &Value, name: &str, at: &str) -> Option<String> {
    match v.get(name) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            r.problem(&join(at, name), "must be a string");
            None
        }
    }
}

/// A required id: a non-empty string.
fn id(r: &mut Reader, v: &Value, name: &str, at: &str) -> Option<String> {
    match string(r, v, name, at) {
        Some(s) if !s.is_empty() => Some(s),
        Some(_) => {
            r.problem(&join(at, name), "must not be empty");
            None
        }
        None => {
            if v.get(name).is_none() {
                r.problem(at, format!("has no `{name}`"));
            }
            None
        }
    }
}

/// A whole number of nanoseconds or microseconds: a JSON integer or a decimal string (the proto3
/// JSON mapping writes 64-bit integers as strings). Absent is `Ok(None)`.
fn whole(r: &mut Reader, v: &Value, name: &str, at: &str) -> Result<Option<u64>, ()> {
    let bad = |r: &mut Reader, what: &str| {
        r.problem(
            &join(at, name),
            format!(
                "`{what}` is not a time: expected a whole number of {}",
                unit(name)
            ),
        );
        Err(())
    };
    match v.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(x) => Ok(Some(x)),
            None => bad(r, &n.to_string()),
        },
        Some(Value::String(s)) => match s.trim().parse::<u64>() {
            Ok(x) => Ok(Some(x)),
            Err(_) => bad(r, s),
        },
        Some(other) => bad(r, &other.to_string()),
    }
}

fn unit(name: &str) -> &'static str {
    if name.ends_with("UnixNano") {
        "nanoseconds since the epoch"
    } else {
        "microseconds"
    }
}

/// Microseconds to nanoseconds, refusing what overflows.
fn micros(r: &mut Reader, x: Option<u64>, name: &str, at: &str) -> Option<u64> {
    let x = x?;
    match x.checked_mul(1000) {
        Some(ns) => Some(ns),
        None => {
            r.problem(
                &join(at, name),
                format!("`{x}` microseconds is out of range"),
            );
            None
        }
    }
}

/// An OTLP `AnyValue` as text (`stringValue`, `intValue`, `boolValue`, `doubleValue`).
fn any_value(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    for key in ["stringValue", "intValue", "boolValue", "doubleValue"] {
        match m.get(key) {
            Some(Value::String(s)) => return Some(s.clone()),
            Some(Value::Bool(b)) => return Some(b.to_string()),
            Some(Value::Number(n)) => return Some(n.to_string()),
            _ => {}
        }
    }
    None
}

/// An OTLP attribute list as key → text.
fn attributes(v: &Value) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Some(Value::Array(items)) = v.get("attributes") {
        for a in items {
            if let (Some(Value::String(k)), Some(val)) = (a.get("key"), a.get("value"))
                && let Some(text) = any_value(val)
            {
                out.insert(k.clone(), text);
            }
        }
    }
    out
}

fn otlp(r: &mut Reader, doc: &Value) {
    let top = if doc.get("resourceSpans").is_some() {
        "resourceSpans"
    } else if doc.get("batches").is_some() {
        "batches"
    } else {
        r.problem(
            "",
            "is not OTLP JSON: it has no `resourceSpans` (nor Tempo's `batches`)",
        );
        return;
    };
    for (i, rs) in list(r, doc, top, "").iter().enumerate() {
        let at = format!("{top}[{i}]");
        let service = rs
            .get("resource")
            .map(attributes)
            .and_then(|a| a.get("service.name").cloned())
            .filter(|s| !s.is_empty());
        let scopes = if rs.get("scopeSpans").is_some() {
            "scopeSpans"
        } else {
            "instrumentationLibrarySpans"
        };
        for (j, ss) in list(r, rs, scopes, &at).iter().enumerate() {
            let at = format!("{at}.{scopes}[{j}]");
            for (k, sp) in list(r, ss, "spans", &at).iter().enumerate() {
                let at = format!("{at}.spans[{k}]");
                otlp_span(r, sp, &at, service.clone());
            }
        }
    }
}

fn otlp_span(r: &mut Reader, sp: &Value, at: &str, service: Option<String>) {
    if !sp.is_object() {
        r.problem(at, "must be a span object");
        return;
    }
    let trace = id(r, sp, "traceId", at);
    let span = id(r, sp, "spanId", at);
    let parent = string(r, sp, "parentSpanId", at).filter(|p| !p.is_empty());
    let name = string(r, sp, "name", at).unwrap_or_default();
    let kind = match sp.get("kind") {
        None | Some(Value::Null) => Some(Kind::Unspecified),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(0) => Some(Kind::Unspecified),
            Some(1) => Some(Kind::Internal),
            Some(2) => Some(Kind::Server),
            Some(3) => Some(Kind::Client),
            Some(4) => Some(Kind::Producer),
            Some(5) => Some(Kind::Consumer),
            _ => None,
        },
        Some(Value::String(s)) => match s.as_str() {
            "SPAN_KIND_UNSPECIFIED" => Some(Kind::Unspecified),
            "SPAN_KIND_INTERNAL" => Some(Kind::Internal),
            "SPAN_KIND_SERVER" => Some(Kind::Server),
            "SPAN_KIND_CLIENT" => Some(Kind::Client),
            "SPAN_KIND_PRODUCER" => Some(Kind::Producer),
            "SPAN_KIND_CONSUMER" => Some(Kind::Consumer),
            _ => None,
        },
        Some(_) => None,
    };
    let kind = kind.unwrap_or_else(|| {
        r.problem(
            &join(at, "kind"),
            "is not a SpanKind: expected 0–5 or SPAN_KIND_UNSPECIFIED|INTERNAL|SERVER|CLIENT|\
             PRODUCER|CONSUMER",
        );
        Kind::Unspecified
    });
    let start = whole(r, sp, "startTimeUnixNano", at);
    let end = whole(r, sp, "endTimeUnixNano", at);
    let error = match sp.get("status").and_then(|s| s.get("code")) {
        None | Some(Value::Null) => false,
        Some(Value::Number(n)) => n.as_u64() == Some(2),
        Some(Value::String(s)) => s == "STATUS_CODE_ERROR",
        Some(_) => {
            r.problem(
                &format!("{at}.status.code"),
                "is not a status code: expected 0, 1, 2 or STATUS_CODE_UNSET|OK|ERROR",
            );
            false
        }
    };
    let attrs = attributes(sp);
    let sampled = match sp.get("traceState") {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => match sampling_probability(state) {
            Ok(p) => p,
            Err(why) => {
                r.problem(&join(at, "traceState"), &why);
                None
            }
        },
        Some(_) => {
            r.problem(
                &join(at, "traceState"),
                "is not a string (a W3C tracestate)",
            );
            None
        }
    };
    let (Some(trace), Some(id), Ok(start), Ok(end)) = (trace, span, start, end) else {
        return;
    };
    r.spans.push(Span {
        file: r.file,
        at: format!("{}{at}", r.prefix),
        trace,
        id,
        parent,
        service,
        name,
        kind,
        start,
        end,
        error,
        peer: attrs.get("peer.service").cloned(),
        sampled,
        shared: false,
    });
}

/// The probability a span was sampled with, from its W3C `tracestate`: OpenTelemetry's
/// `ot=th:T` entry ("TraceState: Probability Sampling" in the specification) — `T` one to 14
/// hex digits, padded with zeros on the right to 14, a rejection threshold out of 2^56, so the
/// probability is `1 - T / 2^56` (`th:0` is one). `None` when the state has no `th`.
pub fn sampling_probability(state: &str) -> Result<Option<f64>, String> {
    let Some(ot) = state
        .split(',')
        .map(str::trim)
        .find_map(|entry| entry.strip_prefix("ot="))
    else {
        return Ok(None);
    };
    let Some(th) = ot.split(';').find_map(|sub| sub.strip_prefix("th:")) else {
        return Ok(None);
    };
    if th.is_empty() || th.len() > 14 || !th.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "has `ot=th:{th}`, not a sampling threshold: expected 1 to 14 hex digits"
        ));
    }
    let padded = format!("{th:0<14}");
    let t = u64::from_str_radix(&padded, 16).map_err(|e| e.to_string())?;
    Ok(Some(1.0 - t as f64 / (1u64 << 56) as f64))
}

/// A Jaeger tag list as key → value text.
fn jaeger_tags(v: &Value) -> HashMap<String, Value> {
    let mut out = HashMap::new();
    if let Some(Value::Array(items)) = v.get("tags") {
        for t in items {
            if let (Some(Value::String(k)), Some(val)) = (t.get("key"), t.get("value")) {
                out.insert(k.clone(), val.clone());
            }
        }
    }
    out
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn jaeger(r: &mut Reader, doc: &Value) {
    let Some(Value::Array(traces)) = doc.get("data") else {
        r.problem(
            "data",
            "must be a list of traces (Jaeger JSON: `{\"data\": [...]}`)",
        );
        return;
    };
    for (i, t) in traces.iter().enumerate() {
        let at = format!("data[{i}]");
        let mut services: HashMap<String, String> = HashMap::new();
        if let Some(Value::Object(procs)) = t.get("processes") {
            for (pid, p) in procs {
                if let Some(Value::String(s)) = p.get("serviceName")
                    && !s.is_empty()
                {
                    services.insert(pid.clone(), s.clone());
                }
            }
        }
        let trace_id = string(r, t, "traceID", &at);
        for (j, sp) in list(r, t, "spans", &at).iter().enumerate() {
            let at = format!("{at}.spans[{j}]");
            jaeger_span(r, sp, &at, trace_id.as_deref(), &services);
        }
    }
}

fn jaeger_span(
    r: &mut Reader,
    sp: &Value,
    at: &str,
    trace_id: Option<&str>,
    services: &HashMap<String, String>,
) {
    if !sp.is_object() {
        r.problem(at, "must be a span object");
        return;
    }
    let trace = match string(r, sp, "traceID", at) {
        Some(t) if !t.is_empty() => Some(t),
        _ => trace_id.map(str::to_owned),
    };
    if trace.is_none() {
        r.problem(at, "has no `traceID`");
    }
    let span = id(r, sp, "spanID", at);
    let mut parent = None;
    let refs = list(r, sp, "references", at);
    let same_trace = |x: &&Value| {
        x.get("traceID").and_then(Value::as_str) == trace.as_deref() || x.get("traceID").is_none()
    };
    let chosen = refs
        .iter()
        .filter(same_trace)
        .find(|x| x.get("refType").and_then(Value::as_str) == Some("CHILD_OF"))
        .or_else(|| refs.iter().find(same_trace));
    if let Some(x) = chosen {
        parent = x
            .get("spanID")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
    }
    if parent.is_none() {
        parent = string(r, sp, "parentSpanID", at).filter(|p| !p.is_empty() && p != "0");
    }
    let name = string(r, sp, "operationName", at).unwrap_or_default();
    let start = whole(r, sp, "startTime", at).map(|s| micros(r, s, "startTime", at));
    let duration = whole(r, sp, "duration", at).map(|d| micros(r, d, "duration", at));
    let tags = jaeger_tags(sp);
    let kind = match tags.get("span.kind").and_then(Value::as_str) {
        Some("server") => Kind::Server,
        Some("client") => Kind::Client,
        Some("producer") => Kind::Producer,
        Some("consumer") => Kind::Consumer,
        Some("internal") => Kind::Internal,
        _ => Kind::Unspecified,
    };
    let service = sp
        .get("process")
        .and_then(|p| p.get("serviceName"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| {
            sp.get("processID")
                .and_then(Value::as_str)
                .and_then(|p| services.get(p).cloned())
        })
        .filter(|s| !s.is_empty());
    let sampled = match (
        tags.get("sampler.type").and_then(Value::as_str),
        tags.get("sampler.param"),
    ) {
        (Some("probabilistic"), Some(p)) => p
            .as_f64()
            .or_else(|| p.as_str().and_then(|s| s.parse().ok()))
            .filter(|p| *p > 0.0 && *p <= 1.0),
        _ => None,
    };
    let (Some(trace), Some(id), Ok(start), Ok(duration)) = (trace, span, start, duration) else {
        return;
    };
    let end = match (start, duration) {
        (Some(s), Some(d)) => s.checked_add(d),
        _ => None,
    };
    r.spans.push(Span {
        file: r.file,
        at: format!("{}{at}", r.prefix),
        trace,
        id,
        parent,
        service,
        name,
        kind,
        start,
        end,
        error: truthy(tags.get("error")),
        peer: tags
            .get("peer.service")
            .and_then(Value::as_str)
            .map(str::to_owned),
        sampled,
        shared: false,
    });
}

fn zipkin(r: &mut Reader, doc: &Value) {
    let Value::Array(items) = doc else {
        r.problem("", "is not Zipkin v2 JSON: expected a list of spans");
        return;
    };
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::Array(trace) => {
                for (j, sp) in trace.iter().enumerate() {
                    zipkin_span(r, sp, &format!("[{i}][{j}]"));
                }
            }
            sp => zipkin_span(r, sp, &format!("[{i}]")),
        }
    }
}

fn zipkin_span(r: &mut Reader, sp: &Value, at: &str) {
    if !sp.is_object() {
        r.problem(at, "must be a span object");
        return;
    }
    // Zipkin ids are lower-hex; a 64-bit trace id is the low half of a 128-bit one.
    let trace = id(r, sp, "traceId", at).map(|t| {
        let t = t.to_ascii_lowercase();
        if t.len() == 32 && t.starts_with("0000000000000000") {
            t[16..].to_owned()
        } else {
            t
        }
    });
    let span = id(r, sp, "id", at).map(|s| s.to_ascii_lowercase());
    let parent = string(r, sp, "parentId", at)
        .filter(|p| !p.is_empty())
        .map(|p| p.to_ascii_lowercase());
    let name = string(r, sp, "name", at).unwrap_or_default();
    let kind = match sp.get("kind") {
        None | Some(Value::Null) => Some(Kind::Unspecified),
        Some(Value::String(s)) => match s.as_str() {
            "CLIENT" => Some(Kind::Client),
            "SERVER" => Some(Kind::Server),
            "PRODUCER" => Some(Kind::Producer),
            "CONSUMER" => Some(Kind::Consumer),
            _ => None,
        },
        Some(_) => None,
    };
    let kind = kind.unwrap_or_else(|| {
        r.problem(
            &join(at, "kind"),
            "is not a Zipkin kind: expected CLIENT, SERVER, PRODUCER or CONSUMER",
        );
        Kind::Unspecified
    });
    let start = whole(r, sp, "timestamp", at).map(|s| micros(r, s, "timestamp", at));
    let duration = whole(r, sp, "duration", at).map(|d| micros(r, d, "duration", at));
    let endpoint = |key: &str| {
        sp.get(key)
            .and_then(|e| e.get("serviceName"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let error = sp.get("tags").and_then(|t| t.get("error")).is_some();
    let shared = matches!(sp.get("shared"), Some(Value::Bool(true)));
    let (Some(trace), Some(id), Ok(start), Ok(duration)) = (trace, span, start, duration) else {
        return;
    };
    let end = match (start, duration) {
        (Some(s), Some(d)) => s.checked_add(d),
        _ => None,
    };
    r.spans.push(Span {
        file: r.file,
        at: format!("{}{at}", r.prefix),
        trace,
        id,
        parent,
        service: endpoint("localEndpoint"),
        name,
        kind,
        start,
        end,
        error,
        peer: endpoint("remoteEndpoint"),
        sampled: None,
        shared,
    });
}

/// Zipkin's span records of one span id, merged and split as Zipkin's tree builder does: records
/// of the same id and the same side are one span (fields filled from whichever record has them);
/// a server half that shares its client's id (`shared`, or a SERVER record beside a CLIENT one)
/// becomes a child of the client with the id `<id>~server`, and spans of the server's service
/// whose parent is that id become the server half's children.
pub fn merge_shared(spans: Vec<Span>) -> Vec<Span> {
    let mut order: Vec<(String, String, bool)> = Vec::new();
    let mut by_key: HashMap<(String, String, bool), Span> = HashMap::new();
    for s in spans {
        let server_side = s.shared || s.kind == Kind::Server;
        let key = (s.trace.clone(), s.id.clone(), server_side);
        match by_key.get_mut(&key) {
            Some(m) => {
                m.start = m.start.or(s.start);
                m.end = m.end.or(s.end);
                m.service = m.service.take().or(s.service);
                m.peer = m.peer.take().or(s.peer);
                m.parent = m.parent.take().or(s.parent);
                m.error |= s.error;
                if m.kind == Kind::Unspecified {
                    m.kind = s.kind;
                }
                if m.name.is_empty() {
                    m.name = s.name;
                }
            }
            None => {
                order.push(key.clone());
                by_key.insert(key, s);
            }
        }
    }
    let mut out: Vec<Span> = order
        .iter()
        .filter_map(|k| by_key.remove(k))
        .collect::<Vec<_>>();
    // Server halves whose client half is present.
    let mut split: HashMap<(String, String), Option<String>> = HashMap::new();
    for s in &out {
        let server_side = s.shared || s.kind == Kind::Server;
        if server_side
            && out.iter().any(|c| {
                c.trace == s.trace && c.id == s.id && !(c.shared || c.kind == Kind::Server)
            })
        {
            split.insert((s.trace.clone(), s.id.clone()), s.service.clone());
        }
    }
    if split.is_empty() {
        return out;
    }
    for s in &mut out {
        let key = (s.trace.clone(), s.id.clone());
        let server_side = s.shared || s.kind == Kind::Server;
        if server_side && split.contains_key(&key) {
            s.parent = Some(s.id.clone());
            s.id = format!("{}~server", s.id);
            continue;
        }
        if let Some(p) = s.parent.clone()
            && let Some(server_service) = split.get(&(s.trace.clone(), p.clone()))
            && s.service.is_some()
            && s.service == *server_service
        {
            s.parent = Some(format!("{p}~server"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sampling_probability as p;

    #[test]
    fn tracestate_thresholds_read_as_the_specification_says() {
        // "TraceState: Probability Sampling": th is 1 to 14 hex digits padded with zeros on the
        // right, a rejection threshold out of 2^56.
        assert_eq!(p("ot=th:0"), Ok(Some(1.0)));
        assert_eq!(p("ot=th:8"), Ok(Some(0.5)));
        assert_eq!(p("vendor=x, ot=rv:1a2b3c4d5e6f70;th:c"), Ok(Some(0.25)));
        assert_eq!(p("ot=rv:1a2b3c4d5e6f70"), Ok(None));
        assert_eq!(p("vendor=x"), Ok(None));
        let one = p("ot=th:fd70a3d70a3d71").unwrap().unwrap();
        assert!((one - 0.01).abs() < 1e-15, "{one}");
        assert!(p("ot=th:").is_err());
        assert!(p("ot=th:xyz").is_err());
        assert!(p("ot=th:123456789abcdef").is_err(), "15 digits");
    }
}
