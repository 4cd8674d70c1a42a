//! The layers of the library (docs/architecture.md, "Layers"): every path into the crate that a
//! file of `src/` names (`crate::…`, `super::…`, `self::…`, a child module's name) points into
//! its own layer or a lower one, and no files of one layer name each other in a cycle. Test code
//! (`#[cfg(test)]` items and files) may reach anywhere. The binary (`main.rs`, `cli.rs`) uses the
//! library as a user does and is not checked.
//!
//! The check reads the source text: comments and string literals are blanked first, so a path in
//! a doc link or a message does not count; a path through a `pub use` is followed to the file
//! that defines the item; a `pub use` line itself is no edge of the file graph (a module that
//! gathers its children's names depends on none of them).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The top modules, bottom first: a module may use its own layer and the layers before it. `""`
/// is `lib.rs`'s own items (`MODEL_VERSION`, `COMMIT`).
const LAYERS: &[&[&str]] = &[
    &["", "util", "ix", "time", "rng", "engine", "stats", "color"],
    &["config"],
    &["import"],
    &["protections"],
    &["scenario"],
    &["metrics"],
    &["model"],
    &["guard"],
    &["report"],
    &["plot", "expect"],
    &["error"],
    &["runner"],
    &["sweep"],
    &["analysis"],
    &["schema"],
    &["commands"],
];

/// Files of the binary, not the library.
const BINARY: &[&str] = &["src/main.rs", "src/cli.rs"];

#[test]
fn imports_point_down_and_files_form_no_cycle() {
    let crate_src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = check(&crate_src);
    assert!(
        problems.is_empty(),
        "layer violations in src/ (see docs/architecture.md, \"Layers\"):\n{}",
        problems.join("\n")
    );
}

/// The check fails on an upward import and on a cycle, naming the file and the line.
#[test]
fn a_planted_upward_import_and_a_planted_cycle_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod time;\npub mod config;\npub mod model;\npub use model::Sim;\n",
    );
    write("time.rs", "pub struct SimTime;\n");
    // An upward import inside a group, on its own line; the one in the comment does not count.
    write(
        "config/mod.rs",
        "//! uses [`crate::model`] in a comment only\npub mod a;\npub mod b;\nuse crate::{\n    time::SimTime,\n    Sim,\n};\n",
    );
    write("config/a.rs", "use super::b::B;\npub struct A;\n");
    write(
        "config/b.rs",
        "pub struct B;\nfn f() -> super::a::A { let _ = \"crate::model\"; super::a::A }\n#[cfg(test)]\nmod tests { use crate::model::Sim; }\n",
    );
    write(
        "model/mod.rs",
        "use crate::config::a::A;\npub struct Sim;\n",
    );
    let problems = check(&src).join("\n");
    assert!(
        problems.contains("src/config/mod.rs:6: `crate::Sim` is in `model`"),
        "{problems}"
    );
    assert!(
        problems.contains("src/config/a.rs:1 → src/config/b.rs")
            && problems.contains("src/config/b.rs:2 → src/config/a.rs"),
        "{problems}"
    );
    assert_eq!(
        problems.lines().filter(|l| l.contains("model")).count(),
        1,
        "{problems}"
    );
}

/// Layer violations and cycles under `src` (the check reads `LAYERS` for the tree at `src`; a
/// module in no layer is a problem too).
fn check(src: &Path) -> Vec<String> {
    let root = src.parent().unwrap();
    let files = library_files(src);
    let layer_of = |top: &str| LAYERS.iter().position(|l| l.contains(&top));
    let by_module: HashMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_path(src, &f.path), f.path.clone()))
        .collect();
    let reexports: HashMap<PathBuf, HashMap<String, Vec<String>>> = files
        .iter()
        .map(|f| (f.path.clone(), f.reexports.clone()))
        .collect();
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let mut problems = Vec::new();
    let mut edges: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
    let is_test_only = |p: &Path| files.iter().any(|f| f.path == p && f.test_only);
    // `lib.rs` is the crate's face: its `pub use`s of every layer are no import of a layer.
    for f in files
        .iter()
        .filter(|f| !f.test_only && f.path != src.join("lib.rs"))
    {
        let here = module_path(src, &f.path);
        let top = here.first().cloned().unwrap_or_default();
        let Some(my_layer) = layer_of(&top) else {
            problems.push(format!("{}: module `{top}` is in no layer", rel(&f.path)));
            continue;
        };
        for r in &f.refs {
            let Some(target) = resolve(&r.path, &by_module, &reexports) else {
                continue;
            };
            if is_test_only(&target) {
                continue;
            }
            let target_top = module_path(src, &target)
                .first()
                .cloned()
                .unwrap_or_default();
            let Some(target_layer) = layer_of(&target_top) else {
                continue; // reported at the target's own file
            };
            if target_layer > my_layer {
                problems.push(format!(
                    "{}:{}: `{}` is in `{target_top}` (layer {}), above `{top}` (layer {})",
                    rel(&f.path),
                    r.line,
                    r.text,
                    target_layer + 1,
                    my_layer + 1
                ));
            } else if target_layer == my_layer && target != f.path && !r.reexport {
                edges
                    .entry(f.path.clone())
                    .or_default()
                    .entry(target)
                    .or_insert(r.line);
            }
        }
    }
    for (cycle, component) in cycles(&edges) {
        let names: BTreeSet<String> = component.iter().map(|a| rel(a)).collect();
        let steps: Vec<String> = cycle
            .iter()
            .map(|(a, line, b)| format!("{}:{line} → {}", rel(a), rel(b)))
            .collect();
        let mut text = format!("file cycle: {}", steps.join(", "));
        if component.len() > cycle.len() {
            let all: Vec<String> = names.into_iter().collect();
            let inside: Vec<String> = component
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|(b, _)| component.contains(b))
                        .map(move |(b, line)| format!("{}:{line} → {}", rel(a), rel(b)))
                })
                .collect();
            text += &format!(
                " (one of the cycles among {}; their imports: {})",
                all.join(", "),
                inside.join(", ")
            );
        }
        problems.push(text);
    }
    problems
}

/// One library file: its references into the crate, the names it re-exports, and whether it is
/// test code.
struct File {
    path: PathBuf,
    refs: Vec<Ref>,
    reexports: HashMap<String, Vec<String>>,
    test_only: bool,
}

/// A path into the crate, made absolute (`["sweep", "run", "Cell"]`), with where it is written.
struct Ref {
    path: Vec<String>,
    line: usize,
    text: String,
    reexport: bool,
}

fn library_files(src: &Path) -> Vec<File> {
    let mut paths = Vec::new();
    walk(src, &mut paths);
    paths.sort();
    let root = src.parent().unwrap();
    let mut files: Vec<File> = paths
        .iter()
        .filter(|p| !BINARY.iter().any(|b| root.join(b) == **p))
        .map(|p| read(src, p))
        .collect();
    // A file declared `#[cfg(test)] mod x;` is test code, and so is every file below it.
    let test_dirs: Vec<PathBuf> = files
        .iter()
        .flat_map(|f| {
            let dir = children_dir(&f.path);
            test_children(&std::fs::read_to_string(&f.path).unwrap())
                .into_iter()
                .map(move |c| dir.join(c))
        })
        .collect();
    for f in &mut files {
        let no_ext = f.path.with_extension("");
        f.test_only = test_dirs
            .iter()
            .any(|d| no_ext == *d || f.path.starts_with(d) || f.path == d.join("mod.rs"));
    }
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `src/lib.rs` is the root.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The folder of a file's child modules: `src/a/` for `src/a/mod.rs`, `src/a/b/` for `src/a/b.rs`.
fn children_dir(file: &Path) -> PathBuf {
    let name = file.file_stem().unwrap().to_string_lossy();
    if name == "mod" || name == "lib" {
        file.parent().unwrap().to_owned()
    } else {
        file.with_extension("")
    }
}

/// The file that defines what `path` names: the deepest module file on the path, or, when the
/// next name is a `pub use` of that file, the file that defines that.
fn resolve(
    path: &[String],
    by_module: &HashMap<Vec<String>, PathBuf>,
    reexports: &HashMap<PathBuf, HashMap<String, Vec<String>>>,
) -> Option<PathBuf> {
    let mut path = path.to_vec();
    for _ in 0..8 {
        let depth = (0..=path.len())
            .rev()
            .find(|&n| by_module.contains_key(&path[..n]))?;
        let file = by_module[&path[..depth]].clone();
        let Some(next) = path.get(depth) else {
            return Some(file);
        };
        match reexports.get(&file).and_then(|r| r.get(next)) {
            Some(target) if *target != path[..=depth] => {
                let mut p = target.clone();
                p.extend_from_slice(&path[depth + 1..]);
                path = p;
            }
            _ => return Some(file),
        }
    }
    None
}

fn read(src: &Path, path: &Path) -> File {
    let text = std::fs::read_to_string(path).unwrap();
    let code = without_tests(&code_only(&text));
    let here = module_path(src, path);
    // Inside a non-`mod.rs` file, `super` is the parent of the file's module.
    let children = declared_children(&code);
    let mut refs = Vec::new();
    let mut reexports = HashMap::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b'$';
        let after_colons = i >= 2 && &bytes[i - 2..i] == b"::";
        if !at_word || after_colons || !is_ident(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_ident(bytes[i]) {
            i += 1;
        }
        let word = &code[start..i];
        if !code[i..].starts_with("::") {
            continue;
        }
        let base: Vec<String> = match word {
            "crate" => Vec::new(),
            "self" => here.clone(),
            "super" => {
                let mut p = here.clone();
                p.pop();
                p
            }
            w if children.contains(w) => here.clone(),
            _ => continue,
        };
        let statement_start = code[..start].rfind([';', '}', '{']).map_or(0, |n| n + 1);
        let statement = code[statement_start..start].trim_start();
        let reexport = statement.starts_with("pub") && statement.contains("use ");
        let first_segment = if word == "crate" || word == "self" || word == "super" {
            2 + i
        } else {
            start
        };
        let (paths, end) = parse_tree(&code, first_segment);
        let text_line = |pos: usize| code[..pos].matches('\n').count() + 1;
        for (mut segs, pos, alias) in paths {
            // `super::super::x` climbs further.
            let mut base = base.clone();
            while segs.first().map(String::as_str) == Some("super") {
                segs.remove(0);
                base.pop();
            }
            let mut full = base.clone();
            full.extend(segs.iter().filter(|s| *s != "self").cloned());
            if reexport
                && let Some(name) =
                    alias.or_else(|| segs.last().filter(|s| *s != "*" && *s != "self").cloned())
            {
                reexports.insert(name, full.clone());
            }
            refs.push(Ref {
                text: format!("{}::{}", word, segs.join("::")),
                path: full,
                line: text_line(pos),
                reexport,
            });
        }
        i = end.max(i);
    }
    File {
        path: path.to_owned(),
        refs,
        reexports,
        test_only: false,
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths of a use tree (or an expression path) starting at `at`, after the leading `x::`:
/// each as its segments, the position of its first segment and its `as` name; and where the
/// tree ends.
#[allow(clippy::type_complexity)]
fn parse_tree(code: &str, at: usize) -> (Vec<(Vec<String>, usize, Option<String>)>, usize) {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut segs: Vec<String> = Vec::new();
    let mut i = at;
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let first = i;
    loop {
        skip_ws(&mut i);
        if i < b.len() && b[i] == b'{' {
            // A group: each item is a tree of its own under `segs`.
            i += 1;
            loop {
                skip_ws(&mut i);
                if i >= b.len() || b[i] == b'}' {
                    i += 1;
                    break;
                }
                let (inner, end) = parse_tree(code, i);
                for (s, pos, alias) in inner {
                    let mut full = segs.clone();
                    full.extend(s);
                    out.push((full, pos, alias));
                }
                i = end;
                skip_ws(&mut i);
                if i < b.len() && b[i] == b',' {
                    i += 1;
                }
            }
            return (out, i);
        }
        if i < b.len() && b[i] == b'*' {
            segs.push("*".into());
            i += 1;
            break;
        }
        let s = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        if s == i {
            break;
        }
        segs.push(code[s..i].to_owned());
        if code[i..].starts_with("::") {
            i += 2;
        } else {
            break;
        }
    }
    let mut alias = None;
    let mut j = i;
    skip_ws(&mut j);
    if code[j..].starts_with("as ") {
        j += 3;
        skip_ws(&mut j);
        let s = j;
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        alias = Some(code[s..j].to_owned());
        i = j;
    }
    if !segs.is_empty() {
        out.push((segs, first, alias));
    }
    (out, i)
}

/// The modules a file declares (`mod x;`, `pub mod x;`), whose names it may use bare.
fn declared_children(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("pub(crate) mod "))
                .or_else(|| l.strip_prefix("mod "))?;
            Some(rest.trim_end_matches([';', ' ', '{']).to_owned())
        })
        .collect()
}

/// The modules a file declares as test code: `#[cfg(test)] mod x;`.
fn test_children(text: &str) -> Vec<String> {
    let code = code_only(text);
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(n) = rest.find("#[cfg(test)]") {
        rest = &rest[n + "#[cfg(test)]".len()..];
        let item = rest.trim_start();
        let item = item
            .strip_prefix("pub(crate) ")
            .or_else(|| item.strip_prefix("pub "))
            .unwrap_or(item);
        if let Some(m) = item.strip_prefix("mod ") {
            let name: String = m
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if m[name.len()..].trim_start().starts_with(';') {
                out.push(name);
            }
        }
    }
    out
}

/// `code` with every `#[cfg(test)]` item blanked (its newlines kept).
fn without_tests(code: &str) -> String {
    let mut b = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(n) = code[from..].find("#[cfg(test)]") {
        let start = from + n;
        let mut i = start;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let last = i.min(b.len() - 1);
        for c in &mut b[start..=last] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        from = i.min(b.len());
    }
    String::from_utf8(b).unwrap()
}

/// `text` with comments, string and character literals blanked (newlines kept), so that only
/// code is read.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && is_ident(b[i - 1]);
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !prev_ident
            && (b[i..].starts_with(b"r\"")
                || b[i..].starts_with(b"r#")
                || b[i..].starts_with(b"br"))
        {
            let mut j = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
            j += hashes;
            if b.get(j) != Some(&b'"') {
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = b[j + 1..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |n| j + 1 + n + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '→'), or a lifetime ('a), left as is.
            let j = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|n| i + 2 + n)
            } else {
                let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch_len) == Some(&b'\'')).then_some(i + 1 + ch_len)
            };
            match j {
                Some(j) => {
                    blank(&mut out, i, j + 1);
                    i = j + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

type Step = (PathBuf, usize, PathBuf);

/// The cycles of the file graph: per strongly connected component of more than one file, one
/// cycle through it as its steps (file, line of the import, file imported), and the files of
/// the component.
fn cycles(edges: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>) -> Vec<(Vec<Step>, Vec<PathBuf>)> {
    // Tarjan's algorithm, then one cycle through each component found by a walk inside it.
    let nodes: BTreeSet<&PathBuf> = edges
        .iter()
        .flat_map(|(a, bs)| std::iter::once(a).chain(bs.keys()))
        .collect();
    let nodes: Vec<&PathBuf> = nodes.into_iter().collect();
    let ix: HashMap<&PathBuf, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let succ = |n: usize| -> Vec<usize> {
        edges
            .get(nodes[n])
            .map(|bs| bs.keys().map(|b| ix[b]).collect())
            .unwrap_or_default()
    };
    let mut index = vec![usize::MAX; nodes.len()];
    let mut low = vec![0; nodes.len()];
    let mut on_stack = vec![false; nodes.len()];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut comps: Vec<Vec<usize>> = Vec::new();
    #[allow(clippy::type_complexity)]
    fn strong(
        v: usize,
        succ: &dyn Fn(usize) -> Vec<usize>,
        st: &mut (
            &mut Vec<usize>,
            &mut Vec<usize>,
            &mut Vec<bool>,
            &mut Vec<usize>,
            &mut usize,
            &mut Vec<Vec<usize>>,
        ),
    ) {
        st.0[v] = *st.4;
        st.1[v] = *st.4;
        *st.4 += 1;
        st.3.push(v);
        st.2[v] = true;
        for w in succ(v) {
            if st.0[w] == usize::MAX {
                strong(w, succ, st);
                st.1[v] = st.1[v].min(st.1[w]);
            } else if st.2[w] {
                st.1[v] = st.1[v].min(st.0[w]);
            }
        }
        if st.1[v] == st.0[v] {
            let mut comp = Vec::new();
            while let Some(w) = st.3.pop() {
                st.2[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            st.5.push(comp);
        }
    }
    for v in 0..nodes.len() {
        if index[v] == usize::MAX {
            strong(
                v,
                &succ,
                &mut (
                    &mut index,
                    &mut low,
                    &mut on_stack,
                    &mut stack,
                    &mut next,
                    &mut comps,
                ),
            );
        }
    }
    let mut out = Vec::new();
    for comp in comps.into_iter().filter(|c| c.len() > 1) {
        let inside: BTreeSet<usize> = comp.iter().copied().collect();
        // Walk from the smallest file along edges inside the component until a file repeats.
        let start = *inside.iter().next().unwrap();
        let mut path = vec![start];
        loop {
            let v = *path.last().unwrap();
            let w = succ(v).into_iter().find(|w| inside.contains(w)).unwrap();
            if let Some(pos) = path.iter().position(|&p| p == w) {
                let cyc: Vec<usize> = path[pos..].to_vec();
                let steps = (0..cyc.len())
                    .map(|k| {
                        let (a, b) = (cyc[k], cyc[(k + 1) % cyc.len()]);
                        (
                            nodes[a].clone(),
                            edges[nodes[a]][nodes[b]],
                            nodes[b].clone(),
                        )
                    })
                    .collect();
                out.push((steps, comp.iter().map(|&n| nodes[n].clone()).collect()));
                break;
            }
            path.push(w);
        }
    }
    out
}
