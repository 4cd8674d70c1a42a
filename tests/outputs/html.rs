//! The HTML report of `loadsim sweep` (report.html) and `loadsim run --html`: one page with no
//! network reference outside `<a href>` links, every figure inline, the scenario sources with
//! `extends` merged, the command and the version.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{loadsim_ok, repo};

/// The page with every `<a href="…">` attribute removed: what is left may hold no URL.
fn without_links(page: &str) -> String {
    let mut rest = page;
    let mut out = String::new();
    while let Some(i) = rest.find("<a href=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "<a href=\"".len()..];
        let end = after.find('"').expect("a closed href");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn assert_self_contained(page: &str) {
    let bare = without_links(page);
    for forbidden in [
        "http://", "https://", "//cdn", "<script", "<link", "<img", "<iframe", "@import", "url(",
        " src=",
    ] {
        if let Some(i) = bare.find(forbidden) {
            let around: String = bare[i.saturating_sub(100)..].chars().take(300).collect();
            panic!("the page holds `{forbidden}` outside a link: …{around}…");
        }
    }
    assert!(page.starts_with("<!DOCTYPE html>\n") && page.ends_with("</html>\n"));
    assert!(page.contains("<style>"), "inline CSS");
    let xml = page.trim_start_matches("<!DOCTYPE html>\n");
    roxmltree::Document::parse(xml).expect("the page is well-formed (XHTML-compatible) markup");
}

/// An SVG file as the page inlines it.
fn inlined(svg: &str) -> String {
    svg.trim_end()
        .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen("<svg ", "<svg role=\"img\" ", 1)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn a_sweep_report_is_self_contained_with_every_figure_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("blog37");
    // The description of blog37 shows a figure of plots/ beside results.md, as in evidence/.
    copy_dir(&repo().join("evidence/blog37/plots"), &out.join("plots"));
    loadsim_ok(&[
        "sweep",
        "sweeps/blog37.yaml",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_self_contained(&page);

    // Every image of results.md is on the page, as the SVG file it names.
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    let images: Vec<PathBuf> = md
        .lines()
        .filter_map(|l| l.strip_prefix("!["))
        .filter_map(|l| {
            l.rsplit_once("](")
                .map(|(_, f)| out.join(f.trim_end_matches(')')))
        })
        .collect();
    assert_eq!(
        images.len(),
        5,
        "one description figure and four sensitivity charts"
    );
    for image in &images {
        let svg = std::fs::read_to_string(image).unwrap();
        assert!(
            page.contains(&inlined(&svg)),
            "{} is not on the page",
            image.display()
        );
    }
    assert_eq!(page.matches("<figure>").count(), images.len());
    assert_eq!(page.matches("<svg ").count(), images.len());
    assert!(!page.contains("class=\"missing\""));

    // Tables: the verdict, 3 comparisons (one per seed) and 4 sensitivity tables.
    assert_eq!(page.matches("<table>").count(), md.matches("\n|--").count());
    assert_eq!(page.matches("<table>").count(), 8);
    assert!(page.find("<h2>Verdict</h2>").unwrap() < page.find("<table>").unwrap());
    // The sources: the sweep file, and each scenario with its extends chain merged (the base's
    // keys are there though naive.yaml itself only names base.yaml).
    assert!(page.contains("<code>sweeps/blog37.yaml</code>"));
    for name in ["naive", "deadline", "deadline_budget", "protected"] {
        let label = format!("<code>sweeps/../scenarios/{name}.yaml (extends ");
        let line = page.lines().find(|l| l.contains(&label)).expect(&label);
        assert!(
            line.ends_with("sweeps/../scenarios/base.yaml)</code></summary>"),
            "{line}"
        );
    }
    assert!(
        !page.contains("extends: base.yaml"),
        "extends is resolved, not shown"
    );
    assert!(page.contains("arrivals:"));
    // The command that reproduces it (not the flags that ran it: the page is the same however
    // the sweep was run) and the version.
    assert!(page.contains("<pre id=\"command\">loadsim sweep sweeps/blog37.yaml</pre>"));
    assert!(page.contains(&format!("Made by loadsim {}", env!("CARGO_PKG_VERSION"))));

    // The committed evidence/blog37/report.html (the README's screenshot) is this page.
    let committed = std::fs::read_to_string(repo().join("evidence/blog37/report.html")).unwrap();
    assert!(
        without_command(&committed) == without_command(&page),
        "evidence/blog37/report.html is stale: regenerate it with `cargo run --release -- sweep sweeps/blog37.yaml`"
    );
}

/// A report without its command line (the one line that depends on how it was invoked).
fn without_command(page: &str) -> String {
    page.lines()
        .filter(|l| !l.starts_with("<pre id=\"command\">"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_merged_sweep_writes_the_same_report_but_for_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let whole = d.join("whole");
    loadsim_ok(&[
        "sweep",
        "sweeps/blog37.yaml",
        "--out",
        whole.to_str().unwrap(),
        "--quiet",
    ]);
    let mut shards = Vec::new();
    for k in 1..=2 {
        let s = d.join(format!("s{k}"));
        loadsim_ok(&[
            "sweep",
            "sweeps/blog37.yaml",
            "--shard",
            &format!("{k}/2"),
            "--out",
            s.to_str().unwrap(),
            "--quiet",
        ]);
        shards.push(s.to_str().unwrap().to_owned());
    }
    let merged = d.join("merged");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["--out", merged.to_str().unwrap(), "--quiet"]);
    loadsim_ok(&args);
    let strip =
        |p: &Path| without_command(&std::fs::read_to_string(p.join("report.html")).unwrap());
    let (a, b) = (strip(&whole), strip(&merged));
    assert!(a.len() > 10_000);
    assert!(
        a == b,
        "report.html of the merge differs from the whole sweep's beyond the command"
    );
}

#[test]
fn run_html_holds_the_table_the_three_figures_and_the_sources() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.html");
    loadsim_ok(&[
        "run",
        "scenarios/naive.yaml",
        "scenarios/protected.yaml",
        "--set",
        "faults.slow_b.duration=5s",
        "--html",
        file.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&file).unwrap();
    assert_self_contained(&page);
    assert_eq!(page.matches("<figure>").count(), 3);
    assert_eq!(page.matches("<svg ").count(), 3);
    for caption in [
        "Share of user requests that succeeded",
        "Queue length per service",
        "Attempts per user request",
    ] {
        assert!(
            page.contains(&format!("<figcaption>{caption}")),
            "{caption}"
        );
    }
    assert_eq!(
        page.matches("<table>").count(),
        2,
        "the verdict, then the results"
    );
    assert!(page.contains("<th>metric</th><th>naive</th><th>protected</th>"));
    // The page opens with the verdict: after the title, before the results table.
    let verdict = page.find("<h2>Verdict</h2>").expect("a verdict section");
    let results = page.find("<h2>Results</h2>").expect("a results section");
    assert!(page.find("<h1>").unwrap() < verdict && verdict < results);
    assert!(page.find("<table>").unwrap() < results);
    // Its cells are the runs' own numbers.
    let runs: serde_json::Value = serde_json::from_str(&loadsim_ok(&[
        "run",
        "scenarios/naive.yaml",
        "scenarios/protected.yaml",
        "--set",
        "faults.slow_b.duration=5s",
        "--format",
        "json",
    ]))
    .unwrap();
    let section = &page[verdict..results];
    for r in runs.as_array().unwrap() {
        let m = &r["metrics"];
        let row_start = section
            .find(&format!(
                "<td><code>{}</code></td>",
                r["scenario"].as_str().unwrap()
            ))
            .expect("a row per run");
        let row = &section[row_start..row_start + section[row_start..].find("</tr>").unwrap()];
        let recovered = match m["recovered"].as_bool() {
            Some(true) => "yes",
            Some(false) => "never",
            None => "not measurable",
        };
        assert!(row.contains(&format!(">{recovered}</td>")), "{row}");
        if let Some(s) = m["recovery_s"].as_f64() {
            assert!(row.contains(&format!(">{s:.2}</td>")), "{row}");
        }
        let during = m["success_rate_during"].as_f64().unwrap();
        assert!(row.contains(&format!(">{during:.3}</td>")), "{row}");
        let (service, most) = r["services"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v["attempts_per_request"].as_f64().unwrap()))
            .fold(
                (String::new(), f64::MIN),
                |a, b| if b.1 > a.1 { b } else { a },
            );
        assert!(
            row.contains(&format!("{most:.2} at <code>{service}</code>")),
            "largest amplification {most} at {service}: {row}"
        );
        assert!(
            row.contains("warning") || row.contains("no findings"),
            "{row}"
        );
    }
    assert!(
        section.contains("<code>loadsim check</code> on <code>naive</code>"),
        "the naive policy's warnings are listed: {section}"
    );
    assert!(page.contains("<code>scenarios/naive.yaml (extends scenarios/base.yaml) --set faults.slow_b.duration=5s</code>"));
    assert!(
        page.contains("duration: 5s"),
        "the override is applied in the source shown"
    );
    assert!(page.contains("--html"), "the command is shown");
}

/// A run with request classes and replicas adds a success-rate figure per class and a figure of
/// each replica's in-flight and queued requests per service of more than one replica; every
/// time figure is drawn over the offered load.
#[test]
fn run_html_has_a_figure_per_class_and_per_replicated_service() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.html");
    loadsim_ok(&[
        "run",
        "scenarios/fleet/slow_replica.yaml",
        "scenarios/workload/classes_fifo.yaml",
        "--html",
        file.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&file).unwrap();
    assert_self_contained(&page);
    let classes: Vec<String> = loadsim::scenario::Scenario::load(
        &super::repo().join("scenarios/workload/classes_fifo.yaml"),
        &[],
        None,
    )
    .unwrap()
    .classes
    .iter()
    .map(|c| c.name.clone())
    .collect();
    assert!(classes.len() > 1);
    for class in &classes {
        assert!(
            page.contains(&format!(
                "<figcaption>Share of class <code>{class}</code>&#x27;s requests"
            )) || page.contains(&format!(
                "<figcaption>Share of class <code>{class}</code>'s requests"
            )),
            "a figure for class {class}"
        );
    }
    assert!(page.contains(
        "<figcaption>Requests in flight and queued at each replica of <code>backend</code>"
    ));
    for k in 0..3 {
        assert!(
            page.contains(&format!(">\nreplica {k}\n<")),
            "replica {k} in a legend"
        );
    }
    // The three run figures, one per class, one for `backend`; each over the offered load.
    let figures = 3 + classes.len() + 1;
    assert_eq!(page.matches("<figure>").count(), figures);
    assert_eq!(
        page.matches(loadsim::plot::run::STRIP_LABEL).count(),
        figures,
        "an offered-load strip under every time figure"
    );
}

#[test]
fn run_html_refuses_a_folder_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_loadsim"))
        .args([
            "run",
            "scenarios/naive.yaml",
            "--html",
            dir.path().to_str().unwrap(),
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--html ") && stderr.contains("is a folder"),
        "{stderr}"
    );
}
