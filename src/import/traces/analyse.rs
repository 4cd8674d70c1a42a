//! From spans to a call graph with its statistics. Owns the rules that turn trees of spans into
//! service invocations and calls, and the coverage count of what was not used and why.
//!
//! - A root CLIENT (or PRODUCER) span of a service named as a client (`import traces --client`,
//!   by default `client`, the name `loadsim run --spans` gives its client) with an instrumented
//!   callee under it is a request of the *client* (a load generator, a browser), not work of a
//!   service:
//!   its class is its operation at the callee (the class's entry), the invocations under it are
//!   the entry's, and only the first such root of a class in a trace is an arrival (the others are
//!   the client's retries of the same request).
//! - An *invocation* of service S starts at a root span, at a SERVER or CONSUMER span, or at any
//!   span whose service differs from its parent's. Spans of S under it that start no invocation
//!   (INTERNAL, unspecified, CLIENT) belong to it.
//! - A *call* S → T is an invocation of T under an invocation of S. Its interval is the CLIENT (or
//!   PRODUCER) span's when the invocation of T sits under one (a CLIENT span and the SERVER span
//!   under it are one call), else the invocation's own span. A CLIENT span with no instrumented
//!   callee under it is a call to the service it names (`peer.service`, Zipkin's
//!   `remoteEndpoint`), a leaf whose own work is the CLIENT span; with no name it stays the
//!   caller's own work.
//! - Own work of an invocation = its span's length minus the union of its calls' intervals
//!   (clipped to the span).
//! - Not used, with the reason: a span whose parent is not in its trace (orphan parent) and every
//!   span under it; a span with no service name; a span with no start or duration; a span outside
//!   its parent's interval (clock skew) — each with every span under it. An invocation that lost
//!   a call that way gives no own-work sample.
//! - A span cycle (a span its own ancestor) is an error.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use indexmap::IndexMap;

use super::read::{Problem, Span};

/// Why a span was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unused {
    /// Its parent span is not in the trace.
    OrphanParent,
    /// It names no service.
    NoServiceName,
    /// It has no start time or duration.
    NoTiming,
    /// It lies outside its parent's interval (clock skew).
    ClockSkew,
    /// Its span id is seen twice in one trace.
    DuplicateId,
}

impl Unused {
    /// The reason, in words, for the coverage report.
    pub fn describe(self) -> &'static str {
        match self {
            Unused::OrphanParent => "orphan parent (the parent span is not in the trace)",
            Unused::NoServiceName => "no service name",
            Unused::NoTiming => "no start time or duration",
            Unused::ClockSkew => "outside its parent's interval (clock skew)",
            Unused::DuplicateId => "a span id seen twice in one trace",
        }
    }
}

/// How many spans were read, used and not used (each reason counts the span and those under it).
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    /// Traces read.
    pub traces: usize,
    /// Spans read.
    pub spans: usize,
    /// Spans the call graph was built from.
    pub used: usize,
    /// Spans not used, per reason.
    pub unused: BTreeMap<Unused, usize>,
    /// CLIENT spans with no callee under them and no remote service name: the caller's own work.
    pub client_without_callee: usize,
    /// Spans moved to correct clock skew (each with the spans under it).
    pub skew_corrected: usize,
}

/// What the traces say about one call edge.
#[derive(Clone, Debug, Default)]
pub struct EdgeStats {
    /// Invocations of the caller that made the call at least once.
    pub invocations_calling: usize,
    /// Calls in all.
    pub calls: usize,
    /// Calls that follow a failed call to the same callee in the same invocation.
    pub retries: usize,
    /// Calls with error status.
    pub errors: usize,
    /// The classes whose requests made the call.
    pub classes: BTreeSet<String>,
    /// Sum and count of the first call's start offset in the invocation, for ordering.
    offset_sum: f64,
    offset_n: usize,
}

impl EdgeStats {
    /// The mean start of the first call after the start of its invocation, in nanoseconds
    /// (0 without calls).
    pub fn mean_offset(&self) -> f64 {
        if self.offset_n == 0 {
            0.0
        } else {
            self.offset_sum / self.offset_n as f64
        }
    }
}

/// What the traces say about one service.
#[derive(Clone, Debug, Default)]
pub struct ServiceStats {
    /// Invocations: spans that receive a call (SERVER, CONSUMER) or roots.
    pub invocations: usize,
    /// Invocations with error status.
    pub errors: usize,
    /// Invocations per class.
    pub by_class: BTreeMap<String, usize>,
    /// Own work per complete invocation, nanoseconds.
    pub own_work: Vec<u64>,
    /// Per callee service, by name, what the traces say about the call.
    pub callees: IndexMap<String, EdgeStats>,
    /// For two callees (in name order): invocations calling both, and of those, how many had
    /// the two calls overlap in time.
    pub pairs: HashMap<(String, String), (usize, usize)>,
}

/// The root spans of one class: its entry service and operation, start times and sampling.
#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    /// The service its roots start in.
    pub entry: String,
    /// The root spans' name (the operation).
    pub operation: String,
    /// The roots' start times, nanoseconds since the Unix epoch (0 for a root without one).
    pub starts: Vec<u64>,
    /// The probabilistic sampling rate stated by every root, when all state the same one.
    pub sampled: Option<f64>,
    sampled_mixed: bool,
}

/// The call graph read from the traces.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Per service, by name.
    pub services: IndexMap<String, ServiceStats>,
    /// Per request class, by name.
    pub classes: IndexMap<String, ClassStats>,
    /// How many spans were read and used.
    pub coverage: Coverage,
}

struct Call {
    callee: String,
    start: u64,
    end: u64,
    error: bool,
}

struct Invocation {
    service: String,
    start: u64,
    end: u64,
    error: bool,
    calls: Vec<Call>,
    complete: bool,
}

/// One trace's spans, indexed.
struct Tree<'a> {
    spans: Vec<&'a Span>,
    children: Vec<Vec<usize>>,
}

/// Builds the graph from `spans`; span cycles are recorded in `problems`.
/// Root CLIENT spans of a service in `clients` are a client's requests (see the module's rules).
pub fn analyse(spans: &[Span], clients: &[String], problems: &mut Vec<Problem>) -> Graph {
    let mut graph = Graph::default();
    graph.coverage.spans = spans.len();
    let mut traces: IndexMap<&str, Vec<&Span>> = IndexMap::new();
    for s in spans {
        traces.entry(s.trace.as_str()).or_default().push(s);
    }
    graph.coverage.traces = traces.len();
    for (_, trace) in traces {
        analyse_trace(&mut graph, trace, clients, problems);
    }
    graph.coverage.used = graph.coverage.spans - graph.coverage.unused.values().sum::<usize>();
    graph
}

fn analyse_trace(
    graph: &mut Graph,
    trace: Vec<&Span>,
    clients: &[String],
    problems: &mut Vec<Problem>,
) {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut kept: Vec<&Span> = Vec::new();
    for s in trace {
        if index.contains_key(s.id.as_str()) {
            *graph
                .coverage
                .unused
                .entry(Unused::DuplicateId)
                .or_default() += 1;
            continue;
        }
        index.insert(s.id.as_str(), kept.len());
        kept.push(s);
    }
    let n = kept.len();
    let parent: Vec<Option<Option<usize>>> = kept
        .iter()
        .map(|s| s.parent.as_deref().map(|p| index.get(p).copied()))
        .collect();
    // Cycles: follow each chain of parents, colouring (0 new, 1 on this chain, 2 done).
    let mut colour = vec![0u8; n];
    let mut in_cycle = vec![false; n];
    for s in 0..n {
        let mut path = Vec::new();
        let mut cur = Some(s);
        while let Some(c) = cur {
            if colour[c] != 0 {
                break;
            }
            colour[c] = 1;
            path.push(c);
            cur = parent[c].flatten();
        }
        if let Some(c) = cur
            && colour[c] == 1
        {
            let from = path.iter().position(|&p| p == c).unwrap_or(0);
            let ids: Vec<&str> = path[from..].iter().map(|&p| kept[p].id.as_str()).collect();
            for &p in &path[from..] {
                in_cycle[p] = true;
            }
            let first = kept[path[from]];
            problems.push(Problem {
                file: first.file,
                key: first.at.clone(),
                line: None,
                message: format!(
                    "span cycle in trace {}: {} → {} (each span's parent leads back to it)",
                    first.trace,
                    ids.join(" → "),
                    ids[0]
                ),
            });
        }
        for p in path {
            colour[p] = 2;
        }
    }
    let mut children = vec![Vec::new(); n];
    for (i, p) in parent.iter().enumerate() {
        if let Some(Some(p)) = p {
            children[*p].push(i);
        }
    }
    for c in &mut children {
        c.sort_by_key(|&i| (kept[i].start, i));
    }
    let tree = Tree {
        spans: kept,
        children,
    };
    let mut started: HashSet<String> = HashSet::new();
    for i in 0..n {
        if in_cycle[i] {
            continue;
        }
        match parent[i] {
            None => root(graph, &tree, i, clients, &mut started),
            Some(None) => {
                let count = subtree(&tree, i);
                *graph
                    .coverage
                    .unused
                    .entry(Unused::OrphanParent)
                    .or_default() += count;
            }
            Some(Some(_)) => {}
        }
    }
}

/// The number of spans in the subtree of `i`.
fn subtree(tree: &Tree, i: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![i];
    let mut seen = HashSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        count += 1;
        stack.extend(tree.children[x].iter().copied());
    }
    count
}

/// Why span `i` cannot be used on its own (before its place in the tree is looked at).
fn unusable(s: &Span) -> Option<Unused> {
    if s.service.is_none() {
        return Some(Unused::NoServiceName);
    }
    match (s.start, s.end) {
        (Some(a), Some(b)) if b >= a => None,
        _ => Some(Unused::NoTiming),
    }
}

fn drop_subtree(graph: &mut Graph, tree: &Tree, i: usize, why: Unused) {
    *graph.coverage.unused.entry(why).or_default() += subtree(tree, i);
}

/// Whether span `s` starts an invocation under a span of `service`.
fn starts_invocation(s: &Span, service: &str) -> bool {
    s.service.as_deref() != Some(service) || s.kind.receives()
}

/// The root span `i`; `started` holds the classes that already had an arrival in this trace.
fn root(
    graph: &mut Graph,
    tree: &Tree,
    i: usize,
    clients: &[String],
    started: &mut HashSet<String>,
) {
    let s = tree.spans[i];
    if let Some(why) = unusable(s) {
        drop_subtree(graph, tree, i, why);
        return;
    }
    let own = s.service.as_deref().unwrap_or_default();
    let entry = tree.children[i]
        .iter()
        .map(|&c| tree.spans[c])
        .find(|c| unusable(c).is_none() && starts_invocation(c, own));
    if s.kind.sends()
        && clients.iter().any(|c| c == own)
        && let Some(entry) = entry
    {
        let entry = entry.service.clone().unwrap_or_default();
        let class_name = format!("{entry} {}", s.name);
        let class = graph.classes.entry(class_name.clone()).or_default();
        class.entry = entry;
        class.operation = s.name.clone();
        if started.insert(class_name.clone()) {
            arrival(class, s);
        }
        for &c in &tree.children[i] {
            let child = tree.spans[c];
            if let Some(why) = unusable(child) {
                drop_subtree(graph, tree, c, why);
            } else if starts_invocation(child, own) {
                invocation(graph, tree, c, &class_name, 1, 0);
            }
        }
        return;
    }
    let service = s.service.clone().unwrap_or_default();
    let class_key = format!("{service} {}", s.name);
    let class_name = class_key;
    let class = graph.classes.entry(class_name.clone()).or_default();
    class.entry = service.clone();
    class.operation = s.name.clone();
    arrival(class, s);
    invocation(graph, tree, i, &class_name, 0, 0);
}

/// Root span `s` is an arrival of `class`: its start, and the sampling rate it states (kept
/// while every arrival of the class states the same one).
fn arrival(class: &mut ClassStats, s: &Span) {
    class.starts.push(s.start.unwrap_or(0));
    if !class.sampled_mixed {
        match (class.starts.len(), class.sampled, s.sampled) {
            (1, _, x) => class.sampled = x,
            (_, a, b) if a == b => {}
            _ => {
                class.sampled = None;
                class.sampled_mixed = true;
            }
        }
    }
}

/// Depth beyond which a chain of calls is cut (no real trace nests this deep; a hand-made one
/// must not overflow the stack).
const MAX_DEPTH: usize = 2_000;

/// A span's start and end, moved by `shift` nanoseconds (a clock-skew correction).
fn times(s: &Span, shift: i64) -> (u64, u64) {
    let at = |t: Option<u64>| t.unwrap_or(0).saturating_add_signed(shift);
    (at(s.start), at(s.end))
}

/// Records the invocation that starts at span `i` (usable, checked by the caller; its times
/// moved by `shift`) and, through it, every invocation under it.
fn invocation(graph: &mut Graph, tree: &Tree, i: usize, class: &str, depth: usize, shift: i64) {
    if depth > MAX_DEPTH {
        return;
    }
    let s = tree.spans[i];
    let service = s.service.clone().unwrap_or_default();
    let (start, end) = times(s, shift);
    let mut inv = Invocation {
        service: service.clone(),
        start,
        end,
        error: s.error,
        calls: Vec::new(),
        complete: true,
    };
    // Registered before its callees, so services list callers first.
    graph.services.entry(service).or_default();
    walk(graph, tree, (i, shift), &mut inv, class, depth);
    record(graph, inv, class);
}

/// The spans under `node` (which belongs to `inv`, its times moved by the shift beside it):
/// calls, and spans of `inv`'s own.
fn walk(
    graph: &mut Graph,
    tree: &Tree,
    (node, shift): (usize, i64),
    inv: &mut Invocation,
    class: &str,
    d: usize,
) {
    let p = tree.spans[node];
    let (ps, pe) = times(p, shift);
    for &c in &tree.children[node] {
        let s = tree.spans[c];
        if let Some(why) = unusable(s) {
            drop_subtree(graph, tree, c, why);
            inv.complete = false;
            continue;
        }
        let starts_invocation =
            s.service.as_deref() != Some(inv.service.as_str()) || s.kind.receives();
        let mut shift_c = shift;
        let (mut cs, mut ce) = times(s, shift);
        if cs < ps || ce > pe {
            // Clock skew, corrected as Zipkin does (zipkin-lens `clock-skew.js`): a span on
            // another host that fits in its parent is centred in it, with everything under it;
            // one longer than its parent cannot be placed and is not used.
            if starts_invocation && ce - cs <= pe - ps {
                let latency = ((pe - ps) - (ce - cs)) / 2;
                shift_c = shift + (ps + latency) as i64 - cs as i64;
                (cs, ce) = times(s, shift_c);
                graph.coverage.skew_corrected += subtree(tree, c);
            } else {
                drop_subtree(graph, tree, c, Unused::ClockSkew);
                inv.complete = false;
                continue;
            }
        }
        if starts_invocation {
            let (start, end) = if p.kind.sends() { (ps, pe) } else { (cs, ce) };
            inv.calls.push(Call {
                callee: s.service.clone().unwrap_or_default(),
                start,
                end,
                error: s.error,
            });
            invocation(graph, tree, c, class, d + 1, shift_c);
        } else if s.kind.sends() && !has_callee(tree, c, &inv.service) {
            match &s.peer {
                Some(peer) if peer != &inv.service => {
                    inv.calls.push(Call {
                        callee: peer.clone(),
                        start: cs,
                        end: ce,
                        error: s.error,
                    });
                    graph.services.entry(peer.clone()).or_default();
                    record(
                        graph,
                        Invocation {
                            service: peer.clone(),
                            start: cs,
                            end: ce,
                            error: s.error,
                            calls: Vec::new(),
                            complete: true,
                        },
                        class,
                    );
                }
                _ => graph.coverage.client_without_callee += 1,
            }
            walk(graph, tree, (c, shift_c), inv, class, d);
        } else {
            walk(graph, tree, (c, shift_c), inv, class, d);
        }
    }
}

/// Whether a child of CLIENT span `c` starts an invocation (an instrumented callee).
fn has_callee(tree: &Tree, c: usize, service: &str) -> bool {
    tree.children[c].iter().any(|&x| {
        let s = tree.spans[x];
        s.service.as_deref() != Some(service) || s.kind.receives()
    })
}

/// Adds one invocation to its service's statistics.
fn record(graph: &mut Graph, inv: Invocation, class: &str) {
    let stats = graph.services.entry(inv.service.clone()).or_default();
    stats.invocations += 1;
    stats.errors += usize::from(inv.error);
    *stats.by_class.entry(class.to_owned()).or_default() += 1;
    if inv.complete {
        let intervals: Vec<(u64, u64)> = inv.calls.iter().map(|c| (c.start, c.end)).collect();
        stats
            .own_work
            .push(own_work(inv.start, inv.end, &intervals));
    }
    // Per callee: the first call's offset, how many calls, repeats after a failure.
    let mut seen: IndexMap<&str, (usize, bool, u64, u64)> = IndexMap::new();
    for call in &inv.calls {
        let e = stats.callees.entry(call.callee.clone()).or_default();
        e.calls += 1;
        e.errors += usize::from(call.error);
        match seen.get_mut(call.callee.as_str()) {
            None => {
                seen.insert(&call.callee, (1, call.error, call.start, call.end));
            }
            Some(entry) => {
                if entry.1 {
                    e.retries += 1;
                }
                entry.0 += 1;
                entry.1 = call.error;
                entry.3 = entry.3.max(call.end);
            }
        }
    }
    for (callee, &(_, _, start, _)) in &seen {
        let e = stats.callees.get_mut(*callee).expect("inserted above");
        e.invocations_calling += 1;
        e.classes.insert(class.to_owned());
        e.offset_sum += start.saturating_sub(inv.start) as f64;
        e.offset_n += 1;
    }
    let firsts: Vec<(&str, u64, u64)> = seen.iter().map(|(k, &(_, _, s, e))| (*k, s, e)).collect();
    for a in 0..firsts.len() {
        for b in a + 1..firsts.len() {
            let (x, y) = if firsts[a].0 < firsts[b].0 {
                (firsts[a], firsts[b])
            } else {
                (firsts[b], firsts[a])
            };
            let overlap = x.1 < y.2 && y.1 < x.2;
            let entry = stats
                .pairs
                .entry((x.0.to_owned(), y.0.to_owned()))
                .or_default();
            entry.0 += 1;
            entry.1 += usize::from(overlap);
        }
    }
}

/// `end − start` minus the union of the calls' intervals clipped to `[start, end]`.
pub fn own_work(start: u64, end: u64, calls: &[(u64, u64)]) -> u64 {
    let mut iv: Vec<(u64, u64)> = calls
        .iter()
        .map(|&(a, b)| (a.clamp(start, end), b.clamp(start, end)))
        .filter(|(a, b)| b > a)
        .collect();
    iv.sort_unstable();
    let mut covered = 0;
    let mut cur: Option<(u64, u64)> = None;
    for (a, b) in iv {
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                covered += cb - ca;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    if let Some((ca, cb)) = cur {
        covered += cb - ca;
    }
    (end - start) - covered
}
