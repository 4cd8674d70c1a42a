//! The JUnit XML form of a `loadsim test` result, the format CI systems render as test results:
//! one `<testsuite>` per scenario file, one `<testcase>` per assertion and per snapshot, a
//! `<failure>` with the observation and the changed metrics where a case failed. No timings: the
//! report is the same on every machine.

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
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">\n",
            escape(&f.file),
            f.cases.len()
        ));
        for c in &f.cases {
            let open = format!(
                "    <testcase name=\"{}\" classname=\"{}\"",
                escape(&c.name),
                escape(&f.scenario)
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
