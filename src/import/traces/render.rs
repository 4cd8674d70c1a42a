//! The call graph as a commented scenario. Owns the choices of the written scenario: names made
//! valid, the order and stages of each service's calls, own work as quantiles or samples, classes
//! and arrivals, and the marked defaults for what traces do not say.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use indexmap::IndexMap;
use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::analyse::{ClassStats, Graph, ServiceStats};

/// The slots every service gets: traces show work, not the concurrency that served it.
pub const DEFAULT_SLOTS: u32 = 64;
/// Every call's and the client's attempt timeout: traces show no timeout, so a long one that
/// changes nothing in a healthy run.
pub const DEFAULT_TIMEOUT: &str = "30s";
/// The run length when the traces give none to copy (one trace, or a constant rate).
pub const DEFAULT_DURATION_S: u64 = 60;
/// The rate when the traces cannot give one (fewer than two roots of a class).
pub const DEFAULT_RATE: f64 = 1.0;
/// A call overlaps another in more than this share of the invocations that make both: they run
/// in parallel.
pub const PARALLEL_SHARE: f64 = 0.5;
/// The significance at which the root arrivals' counts per window reject a constant rate
/// (chi-square test of equal counts), for a `profile`.
pub const PROFILE_SIGNIFICANCE: f64 = 0.001;
/// A profile needs at least this many roots.
pub const PROFILE_MIN_ROOTS: usize = 100;

/// The written scenario and the notes for stderr.
pub struct Rendered {
    /// The scenario, as YAML text.
    pub yaml: String,
    /// Lines for stderr: defaults applied and what could not be read from the traces.
    pub notes: Vec<String>,
}

/// The `q`-quantile of sorted samples, with linear interpolation between order statistics (the
/// inverse CDF of `{dist: empirical}`: position `q·(n−1)`).
pub fn quantile(sorted: &[u64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let h = q * (n - 1) as f64;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    let (a, b) = (sorted[lo] as f64, sorted[hi.min(n - 1)] as f64);
    a + (h - lo as f64) * (b - a)
}

/// A duration of `ns` nanoseconds as a loadsim duration, exact to the nanosecond and short:
/// `4.1ms`, `512us`, `0s`.
pub fn duration_text(ns: f64) -> String {
    let ns = ns.round().max(0.0) as u64;
    let trim = |whole: u64, frac: u64, digits: usize, unit: &str| {
        if frac == 0 {
            format!("{whole}{unit}")
        } else {
            let f = format!("{frac:0digits$}");
            format!("{whole}.{}{unit}", f.trim_end_matches('0'))
        }
    };
    if ns == 0 {
        "0s".into()
    } else if ns >= 1_000_000_000 {
        trim(ns / 1_000_000_000, ns % 1_000_000_000, 9, "s")
    } else if ns >= 1_000_000 {
        trim(ns / 1_000_000, ns % 1_000_000, 6, "ms")
    } else if ns >= 1_000 {
        trim(ns / 1_000, ns % 1_000, 3, "us")
    } else {
        format!("{ns}ns")
    }
}

/// A rate or share written with up to 4 significant decimals.
fn number(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".into()
    } else {
        s.to_owned()
    }
}

/// Valid names for every input name: characters other than letters, digits, `_` and `-`
/// become `-`, and a collision gets `-2`, `-3`, ….
fn names<'a>(inputs: impl Iterator<Item = &'a str>, lower: bool) -> IndexMap<String, String> {
    let mut out = IndexMap::new();
    let mut taken = BTreeSet::new();
    for input in inputs {
        if out.contains_key(input) {
            continue;
        }
        let mut base: String = input
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    if lower { c.to_ascii_lowercase() } else { c }
                } else if lower {
                    '_'
                } else {
                    '-'
                }
            })
            .collect();
        let sep = if lower { '_' } else { '-' };
        while base.contains(&format!("{sep}{sep}")) {
            base = base.replace(&format!("{sep}{sep}"), &sep.to_string());
        }
        let mut base = base.trim_matches(sep).to_owned();
        if base.is_empty() {
            base = if lower {
                "class".into()
            } else {
                "service".into()
            };
        }
        let mut name = base.clone();
        let mut k = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}{sep}{k}");
            k += 1;
        }
        out.insert(input.to_owned(), name);
    }
    out
}

/// The stages of a service's calls: callees in the order of their mean start offset, grouped
/// while a callee overlaps one already in the group in more than [`PARALLEL_SHARE`] of the
/// invocations that make both.
pub fn stages(stats: &ServiceStats, callees: &[String]) -> Vec<Vec<String>> {
    let mut order: Vec<&String> = callees.iter().collect();
    order.sort_by(|a, b| {
        let (x, y) = (&stats.callees[*a], &stats.callees[*b]);
        x.mean_offset().total_cmp(&y.mean_offset())
    });
    let overlaps = |a: &str, b: &str| {
        let key = if a < b {
            (a.to_owned(), b.to_owned())
        } else {
            (b.to_owned(), a.to_owned())
        };
        stats
            .pairs
            .get(&key)
            .is_some_and(|&(both, over)| both > 0 && over as f64 > PARALLEL_SHARE * both as f64)
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    for c in order {
        match out.last_mut() {
            Some(group) if group.iter().any(|g| overlaps(g, c)) => group.push(c.clone()),
            _ => out.push(vec![c.clone()]),
        }
    }
    out
}

/// The arrivals of one class: a constant rate, or a profile when the counts per window reject
/// one; the lines (indented by `indent`), the comment, and the window length in seconds.
fn arrivals(
    class: &ClassStats,
    indent: &str,
    notes: &mut Vec<String>,
    label: &str,
) -> (String, f64) {
    let mut starts = class.starts.clone();
    starts.sort_unstable();
    let n = starts.len();
    let mut out = String::new();
    let scale = class.sampled.unwrap_or(1.0);
    let sampled_note = match class.sampled {
        // To 12 decimals: a threshold's 56 bits read back 0.1 as 0.09999999999999998.
        Some(p) => format!(
            "; divided by the probabilistic sampling rate {} the roots state",
            crate::util::number::trimmed(p, 12)
        ),
        None => String::new(),
    };
    let window_ns = if n >= 2 { starts[n - 1] - starts[0] } else { 0 };
    if window_ns == 0 {
        let _ = writeln!(
            out,
            "{indent}arrivals: {{ rate: {} }}  # DEFAULT: {n} root span(s) give no rate",
            number(DEFAULT_RATE)
        );
        notes.push(format!(
            "default: {label}: arrivals.rate {} (the traces have {n} root span(s), no rate to read)",
            number(DEFAULT_RATE)
        ));
        return (out, 0.0);
    }
    let window = window_ns as f64 / 1e9;
    if n >= PROFILE_MIN_ROOTS {
        let k = (n / 25).clamp(2, 12);
        let width = window_ns as f64 / k as f64;
        let mut counts = vec![0usize; k];
        for &s in &starts {
            let i = (((s - starts[0]) as f64 / width) as usize).min(k - 1);
            counts[i] += 1;
        }
        let expected = n as f64 / k as f64;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        let critical = ChiSquared::new((k - 1) as f64)
            .map(|d| d.inverse_cdf(1.0 - PROFILE_SIGNIFICANCE))
            .unwrap_or(f64::INFINITY);
        if chi2 > critical {
            let _ = writeln!(
                out,
                "{indent}arrivals:  # {n} root spans over {}: the rate moves (chi-square {chi2:.1} over {k} windows > {critical:.1}){sampled_note}",
                duration_text(window_ns as f64)
            );
            let _ = writeln!(out, "{indent}  profile:");
            for (i, &c) in counts.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{indent}    - {{ at: {}, rate: {} }}",
                    duration_text(width * i as f64),
                    number(c as f64 / (width / 1e9) / scale)
                );
            }
            return (out, window);
        }
    }
    let rate = (n - 1) as f64 / window / scale;
    let _ = writeln!(
        out,
        "{indent}arrivals: {{ rate: {} }}  # {n} root spans over {}{sampled_note}",
        number(rate),
        duration_text(window_ns as f64)
    );
    (out, 0.0)
}

/// Writes the scenario.
pub fn render(graph: &Graph, sources: &str, samples: bool) -> Rendered {
    let mut notes = Vec::new();
    let mut y = String::new();
    let service_names = names(graph.services.keys().map(String::as_str), false);
    for (from, to) in &service_names {
        if from != to {
            notes.push(format!("renamed: service `{from}` is `{to}` (loadsim names use letters, digits, `_` and `-`)"));
        }
    }
    let class_names = names(graph.classes.values().map(|c| c.operation.as_str()), true);
    // Class key → class name (operation names; a second class with the same operation but
    // another entry gets a suffix).
    let mut class_of: IndexMap<&str, String> = IndexMap::new();
    let mut used = BTreeSet::new();
    for (key, c) in &graph.classes {
        let base = class_names[c.operation.as_str()].clone();
        let mut name = base.clone();
        let mut k = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}_{k}");
            k += 1;
        }
        class_of.insert(key.as_str(), name);
    }
    let cov = &graph.coverage;
    let _ = writeln!(
        y,
        "# Scenario built by `loadsim import traces` from {sources}:"
    );
    let _ = writeln!(
        y,
        "# {} traces, {} spans read, {} used. Own work is each SERVER span minus the union of",
        cov.traces, cov.spans, cov.used
    );
    y.push_str("# its calls; lines marked DEFAULT are what traces do not say — check them.\n");
    let _ = writeln!(
        y,
        "description: \"imported from traces: {}\"",
        sources.replace('"', "'")
    );
    // Arrivals first (they decide the duration).
    let mut arrival_text: Vec<(String, String, String)> = Vec::new();
    let mut profile_window: f64 = 0.0;
    let many = graph.classes.len() > 1;
    let total_roots: usize = graph.classes.values().map(|c| c.starts.len()).sum();
    for (key, c) in &graph.classes {
        let name = &class_of[key.as_str()];
        let label = if many {
            format!("class {name}")
        } else {
            "client".into()
        };
        let (text, window) = arrivals(c, if many { "    " } else { "" }, &mut notes, &label);
        profile_window = profile_window.max(window);
        arrival_text.push((name.clone(), text, service_names[c.entry.as_str()].clone()));
    }
    if profile_window > 0.0 {
        let _ = writeln!(
            y,
            "duration: {}s  # the traces' window (the arrivals follow a profile over it)",
            profile_window.ceil() as u64
        );
    } else {
        let _ = writeln!(
            y,
            "duration: {DEFAULT_DURATION_S}s  # DEFAULT: a steady rate; long enough for steady state"
        );
        notes.push(format!(
            "default: duration {DEFAULT_DURATION_S}s (the traces show a steady rate, or none)"
        ));
    }
    y.push_str("seed: 1\n");
    let client_keys = |y: &mut String, indent: &str| {
        let _ = writeln!(
            y,
            "{indent}attempt_timeout: {DEFAULT_TIMEOUT}  # DEFAULT: traces show no timeout"
        );
        let _ = writeln!(
            y,
            "{indent}retries: 0  # DEFAULT: traces show no client retry policy"
        );
    };
    if many {
        y.push_str("clients:\n");
        for ((name, text, entry), (_, c)) in arrival_text.iter().zip(&graph.classes) {
            let _ = writeln!(
                y,
                "  {name}:  # root operation `{}` at {}: {} of {total_roots} roots ({:.1} %)",
                c.operation,
                c.entry,
                c.starts.len(),
                100.0 * c.starts.len() as f64 / total_roots.max(1) as f64
            );
            y.push_str(text);
            let _ = writeln!(y, "    entry: {entry}");
            client_keys(&mut y, "    ");
        }
    } else if let Some((_, text, entry)) = arrival_text.first() {
        y.push_str(text);
        y.push_str("client:\n");
        let _ = writeln!(y, "  entry: {entry}");
        client_keys(&mut y, "  ");
    }
    notes.push(format!("default: every attempt_timeout {DEFAULT_TIMEOUT}, retries 0 (traces show no timeouts or retry policies)"));
    notes.push(format!("default: every service slots {DEFAULT_SLOTS}, no queue_cap (traces do not show concurrency limits or queues)"));
    // Edges that would close a call cycle are left out (a scenario's calls form no cycle).
    let mut accepted: HashMap<&str, Vec<&str>> = HashMap::new();
    let reaches = |accepted: &HashMap<&str, Vec<&str>>, from: &str, to: &str| {
        let mut stack = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(x) = stack.pop() {
            if x == to {
                return true;
            }
            if seen.insert(x) {
                stack.extend(accepted.get(x).into_iter().flatten().copied());
            }
        }
        false
    };
    let mut kept_calls: IndexMap<&str, Vec<String>> = IndexMap::new();
    for (s, stats) in &graph.services {
        let mut list = Vec::new();
        for callee in stats.callees.keys() {
            if reaches(&accepted, callee, s) {
                notes.push(format!(
                    "left out: the call {s} → {callee} would close a call cycle, which a scenario cannot have"
                ));
                continue;
            }
            accepted
                .entry(s.as_str())
                .or_default()
                .push(callee.as_str());
            list.push(callee.clone());
        }
        kept_calls.insert(s.as_str(), list);
    }
    y.push_str("services:\n");
    for (s, stats) in &graph.services {
        let name = &service_names[s.as_str()];
        let _ = writeln!(
            y,
            "  {name}:  # {} invocations{}",
            stats.invocations,
            if s != name {
                format!(", service `{s}` in the traces")
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            y,
            "    slots: {DEFAULT_SLOTS}  # DEFAULT: traces do not show concurrency limits"
        );
        let mut own = stats.own_work.clone();
        own.sort_unstable();
        let n = own.len();
        if n > 0 && own[n - 1] > 0 {
            let p50 = quantile(&own, 0.50);
            let p99 = quantile(&own, 0.99);
            let what = format!("own work of {n} complete invocations");
            if samples {
                let list: Vec<String> = own.iter().map(|&x| duration_text(x as f64)).collect();
                let _ = writeln!(
                    y,
                    "    service_time: {{ dist: empirical, samples: [{}] }}  # {what}",
                    list.join(", ")
                );
            } else if n == 1 || p50 == p99 || p50 <= 0.0 {
                let value = if p50 > 0.0 {
                    p50
                } else {
                    quantile(&own, 0.5).max(own[n - 1] as f64)
                };
                let _ = writeln!(
                    y,
                    "    service_time: {{ dist: constant, value: {} }}  # {what} (no spread to fit)",
                    duration_text(value)
                );
            } else {
                let _ = writeln!(
                    y,
                    "    service_time: {{ p50: {}, p99: {} }}  # {what}",
                    duration_text(p50),
                    duration_text(p99)
                );
            }
        } else if n > 0 {
            y.push_str("    # no own work: every invocation is covered by its calls\n");
        } else {
            y.push_str(
                "    # no complete invocation: own work unknown (see the coverage report)\n",
            );
        }
        if stats.errors > 0 {
            let share = stats.errors as f64 / stats.invocations as f64;
            let _ = writeln!(
                y,
                "    # errors: {} of {} invocations ({:.1} %) had error status; not modelled (an `error` fault reproduces a share)",
                stats.errors,
                stats.invocations,
                100.0 * share
            );
            notes.push(format!(
                "errors: {s}: {} of {} invocations ({:.1} %) had error status",
                stats.errors,
                stats.invocations,
                100.0 * share
            ));
        }
        let callees = &kept_calls[s.as_str()];
        if callees.is_empty() {
            continue;
        }
        let groups = stages(stats, callees);
        let parallel = groups.iter().any(|g| g.len() > 1);
        let ordered: Vec<&String> = groups.iter().flatten().collect();
        if parallel {
            y.push_str("    stages:  # calls that overlap in time run in parallel\n");
            for g in &groups {
                let list: Vec<&str> = g
                    .iter()
                    .map(|c| service_names[c.as_str()].as_str())
                    .collect();
                let kind = if g.len() > 1 {
                    "parallel"
                } else {
                    "sequential"
                };
                let _ = writeln!(y, "      - {{ {kind}: [{}] }}", list.join(", "));
            }
        }
        let _ = writeln!(
            y,
            "    calls:{}",
            if parallel {
                ""
            } else {
                "  # one after another, in the order the traces show"
            }
        );
        let all_classes: BTreeSet<&String> = stats.by_class.keys().collect();
        for callee in ordered {
            let e = &stats.callees[callee.as_str()];
            let cname = &service_names[callee.as_str()];
            let _ = writeln!(y, "      {cname}:");
            let _ = writeln!(y, "        attempt_timeout: {DEFAULT_TIMEOUT}  # DEFAULT");
            let reach: usize = e
                .classes
                .iter()
                .map(|c| stats.by_class.get(c).copied().unwrap_or(0))
                .sum();
            let p = e.invocations_calling as f64 / reach.max(1) as f64;
            if p < 1.0 {
                let _ = writeln!(
                    y,
                    "        probability: {}  # {} of {} invocations make the call",
                    number(p),
                    e.invocations_calling,
                    reach
                );
            }
            if many && e.classes.len() < all_classes.len() {
                let list: Vec<&str> = e
                    .classes
                    .iter()
                    .map(|c| class_of[c.as_str()].as_str())
                    .collect();
                let _ = writeln!(
                    y,
                    "        classes: [{}]  # only these classes' requests make it",
                    list.join(", ")
                );
            }
            if e.calls > e.invocations_calling {
                let per = e.calls as f64 / e.invocations_calling as f64;
                let _ = writeln!(
                    y,
                    "        # {} calls per invocation that makes it ({} in all); loadsim makes one",
                    number(per),
                    e.calls
                );
                notes.push(format!(
                    "more than one call per invocation: {s} → {callee}: {} calls in {} invocations ({} each); the scenario makes one",
                    e.calls,
                    e.invocations_calling,
                    number(per)
                ));
            }
            if e.retries > 0 {
                let _ = writeln!(
                    y,
                    "        # observed retries: {} calls repeat a failed one",
                    e.retries
                );
                notes.push(format!(
                    "observed retries: {s} → {callee}: {} calls repeat a failed call in the same invocation",
                    e.retries
                ));
            }
        }
    }
    Rendered { yaml: y, notes }
}
