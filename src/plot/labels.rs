//! Human words for the dotted keys a sweep figure shows. Owns the one rule that turns a grid key
//! (`faults.slow_b.duration`) or a results.csv column (`services.svc_b.goodput_ratio`) into an
//! axis label ("fault slow_b duration (s)", "svc_b goodput ratio (%)"), and the kind of scale a
//! column gets ([`AxisKind`]): a share of 0–1 drawn in per cent up to 100 %, a count drawn with
//! integer ticks, or a plain number. The rule reads only the key's shape — its scope
//! (`metrics.`, `services.<s>.`, `calls.<a>-><b>.`, `faults.<f>.`, …) and its unit suffix
//! (`_s`, `_per_s`) — so every scenario, shipped or not, gets the same treatment without a
//! list of its own. Names the user chose (services, faults, edges) are kept as written.

/// What kind of values an axis holds, which decides its range and its tick labels.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum AxisKind {
    /// Any real number: nice round bounds, ticks with up to 3 significant digits.
    #[default]
    Number,
    /// Whole numbers (a count, a queue capacity): ticks only at integers.
    Integer,
    /// A share in [0, 1], shown in per cent: the axis runs from 0 to exactly 100 %.
    Share,
    /// Named values at positions 0, 1, 2, …: each tick is labelled with its name.
    Categories(Vec<String>),
}

/// The label of a results.csv metric column: its scope as a prefix, its words, its unit.
/// `metrics.success_rate_after` → "success after the fault window (%)",
/// `services.svc_b.queue_wait_p99_s` → "svc_b queue wait p99 (s)",
/// `calls.svc_a->svc_b.retries` → "svc_a→svc_b retries".
pub fn metric_label(column: &str) -> String {
    let (scope, name) = split_scope(column);
    let (words, unit) = words_and_unit(name);
    let words = match (scope.is_empty(), name) {
        (true, "success_rate_before") => "success before the fault window".to_owned(),
        (true, "success_rate_during") => "success in the fault window".to_owned(),
        (true, "success_rate_after") => "success after the fault window".to_owned(),
        (true, "recovery_s") => "recovery time".to_owned(),
        _ => words,
    };
    let unit = if is_share(column) { " (%)" } else { unit };
    join(&scope, &words, unit)
}

/// The label of a grid key on an axis: `faults.slow_b.duration` → "fault slow_b duration",
/// `services.svc_a.calls.svc_b.attempt_timeout` → "svc_a→svc_b attempt timeout"; `unit` (like
/// " (s)" for a duration axis) is appended.
pub fn key_label(key: &str, unit: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    let (scope, rest): (String, &[&str]) = match parts.as_slice() {
        ["services", s, "calls", t, rest @ ..] if !rest.is_empty() => (format!("{s}→{t}"), rest),
        ["services", s, rest @ ..] if !rest.is_empty() => ((*s).to_owned(), rest),
        ["faults", f, rest @ ..] if !rest.is_empty() => (format!("fault {f}"), rest),
        ["clients", c, rest @ ..] if !rest.is_empty() => (format!("client {c}"), rest),
        ["seed"] => (String::new(), &parts[..]),
        _ => (String::new(), &parts[..]),
    };
    let words = rest
        .iter()
        .map(|p| p.replace('_', " "))
        .collect::<Vec<_>>()
        .join(" ");
    join(&scope, &words, unit)
}

/// The scale of a metric column: a share ([`is_share`]), a count (an integer column of the run
/// report's schema), or a number.
pub fn metric_kind(column: &str) -> AxisKind {
    if is_share(column) {
        AxisKind::Share
    } else if crate::report::columns::is_integer(column) {
        AxisKind::Integer
    } else {
        AxisKind::Number
    }
}

/// Whether a metric column is a share of 0–1: a success rate, a `*_ratio`, a `*_fraction`, a
/// utilization.
pub fn is_share(column: &str) -> bool {
    let (_, name) = split_scope(column);
    name.starts_with("success_rate")
        || name.ends_with("_ratio")
        || name.ends_with("_fraction")
        || name == "utilization"
}

/// `(scope words, metric name)`: `services.svc_b.goodput_ratio` → ("svc_b", "goodput_ratio").
fn split_scope(column: &str) -> (String, &str) {
    if let Some(name) = column.strip_prefix("metrics.") {
        return (String::new(), name);
    }
    for (prefix, keep_arrow) in [("services.", false), ("calls.", true)] {
        if let Some(rest) = column.strip_prefix(prefix)
            && let Some((scope, name)) = rest.rsplit_once('.')
        {
            let scope = if keep_arrow {
                scope.replace("->", "→")
            } else {
                scope.to_owned()
            };
            return (scope, name);
        }
    }
    match column.rsplit_once('.') {
        Some((scope, name)) => (scope.replace('.', " "), name),
        None => (String::new(), column),
    }
}

/// A metric name's words and unit: `queue_wait_p99_s` → ("queue wait p99", " (s)"),
/// `admitted_in_period_per_s` → ("admitted in period", " (/s)").
fn words_and_unit(name: &str) -> (String, &'static str) {
    let (stem, unit) = if let Some(stem) = name.strip_suffix("_per_s") {
        (stem, " (/s)")
    } else if let Some(stem) = name.strip_suffix("_s") {
        (stem, " (s)")
    } else {
        (name, "")
    };
    (stem.replace('_', " "), unit)
}

fn join(scope: &str, words: &str, unit: &str) -> String {
    let mut s = String::new();
    s.push_str(scope);
    if !scope.is_empty() && !words.is_empty() {
        s.push(' ');
    }
    s.push_str(words);
    s.push_str(unit);
    s
}

/// A file name for a figure from its table's title: lower-case words joined by `_`, what is in
/// parentheses (a unit) and backquotes left out of the words but not their content, at most 80
/// characters, never empty; `taken` holds the names already used, and a clash gets `_2`, `_3`, ….
/// "Recovery time (s), by window length" → `recovery_time_by_window_length.svg`.
pub fn figure_file(title: &str, taken: &[String]) -> String {
    let mut without_units = String::new();
    let mut depth = 0usize;
    for c in title.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => without_units.push(c),
            _ => {}
        }
    }
    let mut slug = String::new();
    for c in without_units.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('_') {
            slug.push('_');
        }
    }
    while slug.len() > 80 {
        match slug[..80].rfind('_') {
            Some(cut) if cut > 20 => slug.truncate(cut),
            _ => slug.truncate(80),
        }
    }
    let slug = slug.trim_end_matches('_');
    let slug = if slug.is_empty() { "figure" } else { slug };
    let mut name = format!("{slug}.svg");
    let mut k = 2;
    while taken.contains(&name) {
        name = format!("{slug}_{k}.svg");
        k += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_words_with_their_scope_and_unit() {
        assert_eq!(
            key_label("faults.slow_b.duration", " (s)"),
            "fault slow_b duration (s)"
        );
        assert_eq!(
            key_label("services.svc_a.calls.svc_b.attempt_timeout", " (s)"),
            "svc_a→svc_b attempt timeout (s)"
        );
        assert_eq!(key_label("services.svc_b.queue_cap", ""), "svc_b queue cap");
        assert_eq!(
            key_label("faults.slow_replica_0.service_time.mean", " (s)"),
            "fault slow_replica_0 service time mean (s)"
        );
        assert_eq!(key_label("arrivals.rate", ""), "arrivals rate");
    }

    #[test]
    fn metric_columns_become_words_with_their_unit() {
        assert_eq!(
            metric_label("metrics.success_rate_after"),
            "success after the fault window (%)"
        );
        assert_eq!(metric_label("metrics.recovery_s"), "recovery time (s)");
        assert_eq!(
            metric_label("services.svc_b.queue_wait_p99_s"),
            "svc_b queue wait p99 (s)"
        );
        assert_eq!(
            metric_label("services.svc_b.goodput_ratio"),
            "svc_b goodput ratio (%)"
        );
        assert_eq!(
            metric_label("calls.svc_a->svc_b.retries"),
            "svc_a→svc_b retries"
        );
        assert_eq!(
            metric_label("services.svc_b.admitted_in_period_per_s"),
            "svc_b admitted in period (/s)"
        );
    }

    #[test]
    fn metric_kinds_follow_the_column() {
        assert_eq!(metric_kind("metrics.success_rate"), AxisKind::Share);
        assert_eq!(
            metric_kind("services.svc_b.waited_fraction"),
            AxisKind::Share
        );
        assert_eq!(metric_kind("calls.a->b.retries"), AxisKind::Integer);
        assert_eq!(metric_kind("services.svc_b.max_queue"), AxisKind::Integer);
        assert_eq!(metric_kind("metrics.recovery_s"), AxisKind::Number);
        assert_eq!(
            metric_kind("services.svc_b.attempts_per_request"),
            AxisKind::Number
        );
    }

    #[test]
    fn figure_files_are_named_after_their_table_and_unique() {
        assert_eq!(
            figure_file("Recovery time (s), by window length", &[]),
            "recovery_time_by_window_length.svg"
        );
        assert_eq!(
            figure_file("`metrics.recovery_s` by `faults.slow_b.duration`", &[]),
            "metrics_recovery_s_by_faults_slow_b_duration.svg"
        );
        let taken = vec!["a_b.svg".to_owned(), "a_b_2.svg".to_owned()];
        assert_eq!(figure_file("A b", &taken), "a_b_3.svg");
        assert_eq!(figure_file("(s)", &[]), "figure.svg");
        let long = figure_file(
            "Success after the window, by svc_a's attempt timeout — `services.svc_b.queue_cap` = 16",
            &[],
        );
        assert!(long.len() <= 84, "{long}");
        assert!(long.starts_with("success_after_the_window_by_svc_a_s"));
    }
}
