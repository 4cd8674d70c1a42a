//! The HTML report: one self-contained page per run or sweep (`loadsim run --html FILE`, and
//! `report.html` beside a sweep's results.md). Owns the page's layout and its one rule: nothing on
//! the page makes a network request — the CSS is inline, figures are inline SVG (their `xmlns`
//! dropped, as HTML needs none), and the only URLs are `<a href>` links the user wrote.
//!
//! The page is a [`Page`] of blocks: Markdown (the subset loadsim writes — headings, paragraphs,
//! lists, pipe tables, `code`, links and images; an image naming an SVG file beside the page is
//! inlined), figures, and the scenario sources with `extends` resolved. It ends with the command
//! and the version. The page is a pure function of its blocks, so a sweep's report.html is
//! byte-identical however the sweep was run (its command is the one that reproduces it,
//! `loadsim sweep FILE`, whatever flags ran it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::Document;

const CSS: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1b1b1b;background:#fff;line-height:1.45}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.6rem;border-bottom:2px solid #0072b2;padding-bottom:.3rem}
h2{font-size:1.2rem;margin-top:2rem}
code,pre{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:.9em}
code{background:#f2f2f2;padding:0 .2em;border-radius:3px}
pre{background:#f6f8fa;border:1px solid #ddd;padding:.7rem;overflow-x:auto}
table{border-collapse:collapse;margin:.8rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .55rem}
th{background:#eef3f8;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:#fafafa}
figure{margin:1rem 0}
figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85rem;color:#555}
details{margin:.4rem 0}
summary{cursor:pointer}
footer{margin-top:2.5rem;border-top:1px solid #ddd;font-size:.85rem;color:#555}
.missing{color:#a33}
";

/// One block of a page.
#[derive(Clone, Debug)]
enum Block {
    /// Markdown text; images resolve against `base`.
    Markdown { text: String, base: Option<PathBuf> },
    /// A figure: a caption and an SVG document.
    Figure { caption: String, svg: String },
    /// A section heading.
    Heading(String),
    /// A source file: a label and its text.
    Source { label: String, text: String },
    /// A paragraph of plain text.
    Note(String),
}

/// An HTML page being built.
#[derive(Clone, Debug)]
pub struct Page {
    title: String,
    blocks: Vec<Block>,
    command: String,
    version: String,
}

impl Page {
    /// A page titled `title`, made by `command` with loadsim `version`.
    pub fn new(title: impl Into<String>, command: &str, version: &str) -> Page {
        Page {
            title: title.into(),
            blocks: Vec::new(),
            command: command.to_owned(),
            version: version.to_owned(),
        }
    }

    /// Appends Markdown; an image `![alt](file.svg)` whose file exists under `base` is inlined.
    pub fn markdown(&mut self, text: &str, base: Option<&Path>) -> &mut Page {
        self.blocks.push(Block::Markdown {
            text: text.to_owned(),
            base: base.map(Path::to_owned),
        });
        self
    }

    /// Appends a section heading.
    pub fn heading(&mut self, text: &str) -> &mut Page {
        self.blocks.push(Block::Heading(text.to_owned()));
        self
    }

    /// Appends a figure.
    pub fn figure(&mut self, caption: &str, svg: &str) -> &mut Page {
        self.blocks.push(Block::Figure {
            caption: caption.to_owned(),
            svg: svg.to_owned(),
        });
        self
    }

    /// Appends a paragraph of plain text.
    pub fn note(&mut self, text: &str) -> &mut Page {
        self.blocks.push(Block::Note(text.to_owned()));
        self
    }

    /// Appends a source file, shown folded.
    pub fn source(&mut self, label: &str, text: &str) -> &mut Page {
        self.blocks.push(Block::Source {
            label: label.to_owned(),
            text: text.to_owned(),
        });
        self
    }

    /// Appends a "Scenario sources" section: each scenario's document with its `extends` chain
    /// merged, as YAML.
    pub fn scenario_sources<'d>(&mut self, docs: impl IntoIterator<Item = &'d Document>) {
        self.heading("Scenario sources");
        self.note("Each scenario as loadsim read it: its file with the `extends` chain merged and any `--set` applied.");
        for doc in docs {
            let chain: Vec<String> = doc
                .files
                .iter()
                .map(|f| f.path.display().to_string())
                .collect();
            let mut label = chain[0].clone();
            if chain.len() > 1 {
                let _ = write!(label, " (extends {})", chain[1..].join(" → "));
            }
            for s in &doc.sets {
                let _ = write!(label, " --set {}", s.argument);
            }
            let text = yaml_serde::to_string(&doc.value)
                .unwrap_or_else(|e| format!("# cannot show this document: {e}\n"));
            self.source(&label, &text);
        }
    }

    /// The page as HTML.
    pub fn render(&self) -> String {
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
             <meta name=\"generator\" content=\"loadsim {}\"/>\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n",
            escape(&self.version),
            escape(&self.title)
        );
        for block in &self.blocks {
            match block {
                Block::Markdown { text, base } => markdown(&mut h, text, base.as_deref()),
                Block::Heading(t) => {
                    let _ = writeln!(h, "<h2>{}</h2>", escape(t));
                }
                Block::Note(t) => {
                    let _ = writeln!(h, "<p>{}</p>", inline(t));
                }
                Block::Figure { caption, svg } => figure(&mut h, caption, svg),
                Block::Source { label, text } => {
                    let _ = writeln!(
                        h,
                        "<details>\n<summary><code>{}</code></summary>\n<pre>{}</pre>\n</details>",
                        escape(label),
                        escape(text)
                    );
                }
            }
        }
        let _ = write!(
            h,
            "<footer>\n<p>Made by loadsim {} with:</p>\n<pre id=\"command\">{}</pre>\n</footer>\n</main>\n</body>\n</html>\n",
            escape(&self.version),
            escape(&self.command)
        );
        h
    }
}

fn figure(h: &mut String, caption: &str, svg: &str) {
    let _ = writeln!(
        h,
        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>",
        inline_svg(svg),
        inline(caption)
    );
}

/// An SVG document as an element of the page: no XML declaration, no `xmlns` attributes (HTML
/// puts `<svg>` in the SVG namespace itself), and a `role` and title for screen readers.
fn inline_svg(svg: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    svg[start..]
        .trim_end()
        .replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen(" xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "", 1)
        .replacen("<svg ", "<svg role=\"img\" ", 1)
}

/// `&`, `<`, `>` and `"` as entities.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c => s.push(c),
        }
    }
    s
}

/// Inline Markdown: `code`, [text](href) and **bold**; everything else escaped.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(['`', '[', '*']) {
        out.push_str(&escape(&rest[..i]));
        let tail = &rest[i..];
        if let Some(code) = tail.strip_prefix('`') {
            if let Some(end) = code.find('`') {
                let _ = write!(out, "<code>{}</code>", escape(&code[..end]));
                rest = &code[end + 1..];
                continue;
            }
        } else if let Some(bold) = tail.strip_prefix("**") {
            if let Some(end) = bold.find("**") {
                let _ = write!(out, "<strong>{}</strong>", inline(&bold[..end]));
                rest = &bold[end + 2..];
                continue;
            }
        } else if let Some((label, href, len)) = link(tail) {
            let _ = write!(out, "<a href=\"{}\">{}</a>", escape(href), inline(label));
            rest = &tail[len..];
            continue;
        }
        out.push_str(&escape(&tail[..1]));
        rest = &tail[1..];
    }
    out.push_str(&escape(rest));
    out
}

/// `[label](href)` at the start of `text`: the label, the target and the length matched.
fn link(text: &str) -> Option<(&str, &str, usize)> {
    let body = text.strip_prefix('[')?;
    let close = body.find("](")?;
    let target = &body[close + 2..];
    let end = target.find(')')?;
    Some((&body[..close], &target[..end], 1 + close + 2 + end + 1))
}

/// A whole-line image `![alt](src)`: the alt text and the source.
fn image(line: &str) -> Option<(&str, &str)> {
    let (alt, src, len) = link(line.strip_prefix('!')?)?;
    (len + 1 == line.len()).then_some((alt, src))
}

/// Renders the Markdown subset loadsim writes (see the module doc).
fn markdown(h: &mut String, text: &str, base: Option<&Path>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut paragraph: Vec<&str> = Vec::new();
    let flush = |h: &mut String, paragraph: &mut Vec<&str>| {
        if !paragraph.is_empty() {
            let _ = writeln!(h, "<p>{}</p>", inline(&paragraph.join(" ")));
            paragraph.clear();
        }
    };
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.trim().is_empty() {
            flush(h, &mut paragraph);
            i += 1;
        } else if let Some(level) = heading_level(line) {
            flush(h, &mut paragraph);
            let _ = writeln!(h, "<h{level}>{}</h{level}>", inline(line[level..].trim()));
            i += 1;
        } else if let Some((alt, src)) = image(line.trim()) {
            flush(h, &mut paragraph);
            embed_image(h, alt, src, base);
            i += 1;
        } else if line.starts_with("- ") {
            flush(h, &mut paragraph);
            h.push_str("<ul>\n");
            while i < lines.len() && lines[i].starts_with("- ") {
                let mut item = lines[i][2..].trim().to_owned();
                i += 1;
                while i < lines.len() && lines[i].starts_with("  ") && !lines[i].trim().is_empty() {
                    item.push(' ');
                    item.push_str(lines[i].trim());
                    i += 1;
                }
                let _ = writeln!(h, "<li>{}</li>", inline(&item));
            }
            h.push_str("</ul>\n");
        } else if line.starts_with('|') {
            flush(h, &mut paragraph);
            let start = i;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                i += 1;
            }
            table(h, &lines[start..i]);
        } else {
            paragraph.push(line.trim());
            i += 1;
        }
    }
    flush(h, &mut paragraph);
}

fn heading_level(line: &str) -> Option<usize> {
    let level = line.chars().take_while(|&c| c == '#').count();
    ((1..=6).contains(&level) && line[level..].starts_with(' ')).then_some(level)
}

fn embed_image(h: &mut String, alt: &str, src: &str, base: Option<&Path>) {
    let path = base.map(|b| b.join(src));
    let svg = path
        .as_ref()
        .filter(|_| src.ends_with(".svg") && !src.contains("://"))
        .and_then(|p| std::fs::read_to_string(p).ok());
    match svg {
        Some(svg) => figure(h, alt, &svg),
        None => {
            let _ = writeln!(
                h,
                "<p class=\"missing\">Figure “{}”: <code>{}</code> was not beside this report when it was written.</p>",
                inline(alt),
                escape(src)
            );
        }
    }
}

/// A pipe table: header row, divider, body rows; numeric cells aligned right.
fn table(h: &mut String, rows: &[&str]) {
    let cells = |row: &str| -> Vec<String> {
        let row = row.trim();
        let row = row.strip_prefix('|').unwrap_or(row);
        let row = row.strip_suffix('|').unwrap_or(row);
        row.split('|').map(|c| c.trim().to_owned()).collect()
    };
    let is_divider = |row: &str| {
        row.trim()
            .chars()
            .all(|c| matches!(c, '|' | '-' | ':' | '+' | ' '))
    };
    h.push_str("<table>\n");
    let mut body = rows;
    if rows.len() >= 2 && is_divider(rows[1]) {
        h.push_str("<thead><tr>");
        for c in cells(rows[0]) {
            let _ = write!(h, "<th>{}</th>", inline(&c));
        }
        h.push_str("</tr></thead>\n");
        body = &rows[2..];
    }
    h.push_str("<tbody>\n");
    for row in body.iter().filter(|r| !is_divider(r)) {
        h.push_str("<tr>");
        for (n, c) in cells(row).iter().enumerate() {
            if n > 0 && looks_numeric(c) {
                let _ = write!(h, "<td class=\"num\">{}</td>", inline(c));
            } else {
                let _ = write!(h, "<td>{}</td>", inline(c));
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
}

/// Whether a cell reads as a number (possibly with a range or a `never`): aligned right.
fn looks_numeric(cell: &str) -> bool {
    cell.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '-')
        || cell == "never"
        || cell == "—"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_subset_becomes_html() {
        let mut h = String::new();
        markdown(
            &mut h,
            "# Sweep `x`\n\nSome *text* & [a link](b.md)\nwrapped.\n\n- one\n- `two`\n  more\n\n| a | b |\n|---|---|\n| x | 1.5 |\n",
            None,
        );
        assert!(h.contains("<h1>Sweep <code>x</code></h1>"), "{h}");
        assert!(
            h.contains("<p>Some *text* &amp; <a href=\"b.md\">a link</a> wrapped.</p>"),
            "{h}"
        );
        assert!(
            h.contains("<li>one</li>\n<li><code>two</code> more</li>"),
            "{h}"
        );
        assert!(h.contains("<th>a</th><th>b</th>"), "{h}");
        assert!(h.contains("<td>x</td><td class=\"num\">1.5</td>"), "{h}");
    }

    #[test]
    fn images_of_svg_files_are_inlined_without_namespace_urls() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("f.svg"),
            "<svg width=\"10\" height=\"10\" xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>\n",
        )
        .unwrap();
        let mut h = String::new();
        markdown(
            &mut h,
            "![A chart](f.svg)\n\n![Gone](g.svg)",
            Some(dir.path()),
        );
        assert!(
            h.contains("<svg role=\"img\" width=\"10\" height=\"10\"><rect/></svg>"),
            "{h}"
        );
        assert!(h.contains("<figcaption>A chart</figcaption>"), "{h}");
        assert!(!h.contains("http"), "{h}");
        assert!(h.contains("class=\"missing\""), "{h}");
    }

    #[test]
    fn text_is_escaped_everywhere() {
        let mut p = Page::new("<t>", "loadsim run \"a&b\"", "0.1.0");
        p.source("<f>", "key: <v>");
        let h = p.render();
        assert!(h.contains("<title>&lt;t&gt;</title>"));
        assert!(h.contains("<code>&lt;f&gt;</code>"));
        assert!(h.contains("<pre>key: &lt;v&gt;</pre>"));
        assert!(h.contains("loadsim run &quot;a&amp;b&quot;"));
    }
}
