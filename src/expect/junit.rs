//! The JUnit XML form of a `loadsim test` result, the format CI systems render as test results:
//! one `<testsuite>` per scenario file, one `<testcase>` per assertion and per snapshot, a
//! `<failure>` with the observation and the changed metrics where a case failed. Each testsuite
//! and testcase has JUnit's `time`: the wall-clock seconds of the runs it read (a case reads its
//! scenario at each of its seeds, and its baseline's; cases of one file share runs, so the
//! suite's time counts each run once). The times are the only part that differs between machines.

use super::report::TestReport;

/// The report as a JUnit XML document.
pub fn render(report: &TestReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"loadsim test\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
        report.passed + report.failed,
        report.failed
    ));
    for f in &report.files {
        let failures = f.cases.iter().filter(|c| !c.passed).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{}\">\n",
            escape(&f.file),
            f.cases.len(),
            seconds(f.wall_s)
        ));
        for c in &f.cases {
            let open = format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
                escape(&c.name),
                escape(&f.scenario),
                seconds(c.wall_s)
            );
            if c.passed {
                out.push_str(&open);
                out.push_str("/>\n");
            } else {
                let body: String = c.details.iter().map(|d| format!("{d}\n")).collect();
                out.push_str(&format!(
                    "{open}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(&c.message),
                    escape(&body)
                ));
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Seconds as JUnit's `time` (a decimal number, as the Ant/Surefire schema types it): three
/// decimals, milliseconds being what CI systems show.
fn seconds(s: f64) -> String {
    format!("{:.3}", if s.is_finite() { s.max(0.0) } else { 0.0 })
}

/// Text as XML character data or attribute value: markup characters escaped, and characters XML
/// 1.0 forbids (control characters other than tab and line ends) dropped.
fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            '\t' | '\n' | '\r' => s.push(ch),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_forbidden_characters() {
        assert_eq!(
            escape("calls.a->b <x> & \"q\" 'y'\u{1}"),
            "calls.a-&gt;b &lt;x&gt; &amp; &quot;q&quot; &apos;y&apos;"
        );
    }
}
