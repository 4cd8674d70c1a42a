//! The documentation stays true to the binary and to the repository: the README's command list is
//! exactly `loadsim --help`'s subcommands, nothing points outside the repository (the model
//! specification is `docs/model.md`, in it), every relative link resolves, and every
//! `docs/model.md §N` reference names a section that exists.

use std::path::{Path, PathBuf};

use super::ux::{loadsim, subcommands};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every text file (valid UTF-8) under `dirs` and the single files in `files`, sorted.
fn text_files(dirs: &[&str], files: &[&str]) -> Vec<(PathBuf, String)> {
    let mut out: Vec<PathBuf> = files.iter().map(|f| root().join(f)).collect();
    let mut todo: Vec<PathBuf> = dirs.iter().map(|d| root().join(d)).collect();
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out.into_iter()
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|text| (p, text)))
        .collect()
}

/// The part of `text` under the heading line `heading`, up to the next heading of that level.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no `{heading}` section"))
        + heading.len()
        + 2;
    let level = heading.split(' ').next().unwrap();
    let end = text[start..]
        .find(&format!("\n{level} "))
        .map_or(text.len(), |i| start + i);
    &text[start..end]
}

/// The subcommands the README's Commands section lists, one bullet each, in order.
fn readme_commands() -> Vec<String> {
    let readme = read(&root().join("README.md"));
    section(&readme, "## Commands")
        .lines()
        .filter_map(|l| l.strip_prefix("- `loadsim "))
        .map(|rest| rest.split([' ', '`']).next().unwrap().to_owned())
        .collect()
}

#[test]
fn the_readme_lists_exactly_the_subcommands_of_help_in_its_order() {
    let help = subcommands();
    let readme = readme_commands();
    let missing: Vec<&String> = help.iter().filter(|c| !readme.contains(c)).collect();
    let extra: Vec<&String> = readme.iter().filter(|c| !help.contains(c)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "README.md's `## Commands` list is out of date: missing {missing:?} (in `loadsim --help`), \
         unknown {extra:?} (not a subcommand); add or remove a \"- `loadsim <command> …`\" bullet"
    );
    assert_eq!(
        readme, help,
        "README.md's `## Commands` list: one bullet per subcommand, in the order of `loadsim --help`"
    );
}

#[test]
fn the_readme_command_list_parser_sees_what_it_should() {
    // Guards the test above against passing vacuously: the parser finds the bullets and stops at
    // the section's end (the Analysis section's `loadsim check` bullet is not a Commands line).
    let commands = readme_commands();
    assert!(commands.len() >= 8, "{commands:?}");
    let text = "intro\n## Commands\n\n- `loadsim run X` runs\n- `loadsim check`: checks\n\n## Next\n\n- `loadsim boundary`\n";
    let bullets: Vec<&str> = section(text, "## Commands")
        .lines()
        .filter_map(|l| l.strip_prefix("- `loadsim "))
        .collect();
    assert_eq!(bullets, ["run X` runs", "check`: checks"]);
}

/// Strings that name something outside the repository: the model restatement the project
/// started from and the folder it lived in. Built from parts so this file does not match itself.
fn outside_references() -> [String; 3] {
    [
        ["..", "/shared"].concat(),
        ["/work", "/shared"].concat(),
        ["MODEL", ".md"].concat(),
    ]
}

#[test]
fn nothing_points_outside_the_repository() {
    let dirs = [
        "docs",
        "src",
        "scenarios",
        "sweeps",
        "schema",
        "examples",
        "evidence",
        "tests",
        "benches",
    ];
    let files = text_files(&dirs, &["README.md", "Cargo.toml"]);
    assert!(
        files.iter().any(|(p, _)| p.ends_with("docs/model.md")),
        "docs/model.md is missing"
    );
    let needles = outside_references();
    let mut found = Vec::new();
    for (path, text) in &files {
        for (i, line) in text.lines().enumerate() {
            for n in &needles {
                if line.contains(n.as_str()) {
                    let rel = path.strip_prefix(root()).unwrap();
                    found.push(format!("{}:{}: `{n}`", rel.display(), i + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "these lines point outside the repository; the model specification is docs/model.md:\n{}",
        found.join("\n")
    );
}

/// The targets of Markdown links `[text](target)` in `text` (anchors stripped, external URLs
/// skipped).
fn relative_links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split([')', ' ']).next())
        .map(|t| t.split('#').next().unwrap().to_owned())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

#[test]
fn every_relative_link_in_the_docs_resolves_inside_the_repository() {
    let repo = root().canonicalize().unwrap();
    let mut broken = Vec::new();
    for (path, text) in text_files(&["docs"], &["README.md"]) {
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        for target in relative_links(&text) {
            let resolved = path.parent().unwrap().join(&target).canonicalize();
            if !resolved.is_ok_and(|p| p.starts_with(&repo)) {
                let rel = path.strip_prefix(root()).unwrap();
                broken.push(format!("{}: ({target})", rel.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing, or to something outside the repository:\n{}",
        broken.join("\n")
    );
    assert_eq!(
        relative_links("see [a](x.md#s), [b](https://e.org) and [c](../y/z.md)"),
        ["x.md", "../y/z.md"]
    );
}

/// The section numbers of docs/model.md: `2` for `## 2. …`, `2.6` for `### 2.6 …`.
fn model_sections() -> Vec<String> {
    read(&root().join("docs/model.md"))
        .lines()
        .filter_map(|l| {
            l.strip_prefix("## ")
                .or_else(|| l.strip_prefix("### "))
                .or_else(|| l.strip_prefix("#### "))
        })
        .filter_map(|l| l.split(' ').next())
        .map(|n| n.trim_end_matches('.').to_owned())
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

/// Every `model.md §N` or `model.md) §N` in `text` whose `N` is a number, as `N`.
fn model_references(text: &str) -> Vec<String> {
    text.split("model.md")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.strip_prefix(')').unwrap_or(rest);
            let rest = rest.strip_prefix(' ')?.strip_prefix('§')?;
            let n: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let n = n.trim_end_matches('.');
            (!n.is_empty()).then(|| n.to_owned())
        })
        .collect()
}

#[test]
fn every_model_section_reference_names_a_section_that_exists() {
    let sections = model_sections();
    for n in ["1", "2", "2.1", "2.12", "3", "3.5", "4", "5.1", "6"] {
        assert!(sections.iter().any(|s| s == n), "§{n} in {sections:?}");
    }
    assert_eq!(
        model_references("(docs/model.md §2.6) and [model.md](model.md) §3.2, model.md §5."),
        ["2.6", "3.2", "5"]
    );
    let mut dangling = Vec::new();
    let mut count = 0;
    for (path, text) in text_files(
        &["docs", "src", "scenarios", "sweeps", "tests"],
        &["README.md"],
    ) {
        for n in model_references(&text) {
            count += 1;
            if !sections.contains(&n) {
                let rel = path.strip_prefix(root()).unwrap();
                dangling.push(format!("{}: §{n}", rel.display()));
            }
        }
    }
    assert!(count >= 10, "only {count} references found");
    assert!(
        dangling.is_empty(),
        "references to sections docs/model.md does not have:\n{}",
        dangling.join("\n")
    );
}

#[test]
fn the_help_and_the_readme_point_to_the_model_specification() {
    let out = loadsim().arg("--help").assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(help.contains("docs/model.md"), "{help}");
    let out = loadsim().args(["run", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(help.contains("docs/model.md"), "{help}");
    assert!(read(&root().join("README.md")).contains("](docs/model.md)"));
}
