//! YAML documents with their origins. Owns reading a file, following `extends:` (deep merge, paths
//! relative to the file that names them, cycles refused), applying `--set KEY=VALUE` overrides by
//! dotted path, and remembering where every key was written so that later errors can name the
//! file, line and column. The merged document is a `yaml_serde::Value`; typed deserialization and
//! checks happen in `validate`.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use saphyr_parser::{Event, Parser};
use yaml_serde::{Mapping, Value};

use super::error::{ConfigError, Diagnostic, Origin};

/// Largest scenario or sweep file loadsim reads (a guard against feeding it a disk image).
const MAX_FILE_BYTES: u64 = 4 << 20;
/// Deepest `extends` chain followed.
const MAX_EXTENDS_DEPTH: usize = 16;
/// Deepest nesting of mappings and sequences accepted; a scenario needs about 5.
pub const MAX_NESTING: usize = 64;
/// Most nodes that aliases may stand for in one document, counted expanded.
pub const MAX_ALIAS_NODES: u64 = 1_000_000;
/// Longest dotted key path indexed for diagnostics; longer keys are still parsed, only not located.
const MAX_KEY_PATH: usize = 1024;

/// Line and column (both 1-based) of a key in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// One file that contributed to a document.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    /// Dotted key path → where the key is written.
    pub keys: HashMap<String, Pos>,
}

/// One `--set KEY=VALUE` override.
#[derive(Debug, Clone)]
pub struct SetOverride {
    pub key: String,
    pub argument: String,
}

/// A merged YAML document and the files and overrides it came from.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: Value,
    /// The file named on the command line first, then its `extends` chain.
    pub files: Vec<SourceFile>,
    pub sets: Vec<SetOverride>,
}

impl Document {
    /// Reads `path` and every file it extends, and merges them.
    pub fn load(path: &Path) -> Result<Document, ConfigError> {
        let mut files = Vec::new();
        let mut chain: Vec<PathBuf> = Vec::new();
        let value = load_with_extends(path, &mut files, &mut chain)?;
        Ok(Document {
            value,
            files,
            sets: Vec::new(),
        })
    }

    /// Parses a document from text (for tests and for documents that do not live in a file).
    pub fn from_text(path: &Path, text: &str) -> Result<Document, ConfigError> {
        let value = parse_yaml(path, text)?;
        let file = SourceFile {
            path: path.to_owned(),
            text: text.to_owned(),
            keys: key_positions(text),
        };
        Ok(Document {
            value,
            files: vec![file],
            sets: Vec::new(),
        })
    }

    /// Applies `KEY=VALUE` (a dotted path and a YAML value) on top of the document. Every map on
    /// the way to the last key must exist; the last key may be new (the schema decides later
    /// whether it is allowed).
    pub fn apply_set(&mut self, argument: &str) -> Result<(), ConfigError> {
        let file = self.path().to_owned();
        let err = |key: &str, message: String| {
            ConfigError::one(Diagnostic {
                origin: Origin::Set {
                    argument: argument.to_owned(),
                    file: file.clone(),
                },
                key: key.to_owned(),
                message,
            })
        };
        let Some((key, raw_value)) = argument.split_once('=') else {
            return Err(err(
                "",
                "expected KEY=VALUE, like `services.svc_a.queue_cap=32`".into(),
            ));
        };
        let key = key.trim();
        preflight(raw_value).map_err(|(m, _)| err(key, format!("the value {m}")))?;
        let new_value: Value = yaml_serde::from_str(raw_value)
            .map_err(|e| err(key, format!("the value is not valid YAML: {e}")))?;
        set_path(&mut self.value, key, new_value).map_err(|m| err(key, m))?;
        self.sets.push(SetOverride {
            key: key.to_owned(),
            argument: argument.to_owned(),
        });
        Ok(())
    }

    /// Where `key` was written: the last `--set` that covers it, else the first file (child before
    /// base) that writes it or its nearest written ancestor.
    pub fn locate(&self, key: &str) -> Origin {
        for set in self.sets.iter().rev() {
            if key == set.key
                || key.starts_with(&format!("{}.", set.key))
                || key.starts_with(&format!("{}[", set.key))
            {
                return Origin::Set {
                    argument: set.argument.clone(),
                    file: self.path().to_owned(),
                };
            }
        }
        let mut probe = key.to_owned();
        loop {
            for file in &self.files {
                if let Some(pos) = file.keys.get(&probe) {
                    return Origin::File {
                        path: file.path.clone(),
                        line: Some(pos.line),
                        column: Some(pos.column),
                        source_line: file.text.lines().nth(pos.line - 1).map(str::to_owned),
                    };
                }
            }
            match parent_path(&probe) {
                Some(p) => probe = p,
                None => break,
            }
        }
        let path = self
            .files
            .first()
            .map(|f| f.path.clone())
            .unwrap_or_default();
        Origin::File {
            path,
            line: None,
            column: None,
            source_line: None,
        }
    }

    /// A diagnostic at `key`.
    pub fn diagnostic(&self, key: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            origin: self.locate(key),
            key: key.to_owned(),
            message: message.into(),
        }
    }

    /// The path of the file named on the command line.
    pub fn path(&self) -> &Path {
        self.files
            .first()
            .map(|f| f.path.as_path())
            .unwrap_or(Path::new(""))
    }
}

/// `a.b[2].c` → `a.b[2]`; `a.b[2]` → `a.b`; `a` → None.
fn parent_path(key: &str) -> Option<String> {
    let cut = key.rfind(['.', '['])?;
    Some(key[..cut].to_owned())
}

/// Reads a file as UTF-8 text with a size guard.
pub fn read_text(path: &Path) -> Result<String, ConfigError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| ConfigError::file(path, format!("cannot read the file: {e}")))?;
    if meta.is_dir() {
        return Err(ConfigError::file(path, "is a directory, not a YAML file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ConfigError::file(
            path,
            format!(
                "is {} bytes; loadsim reads files up to {MAX_FILE_BYTES} bytes",
                meta.len()
            ),
        ));
    }
    // The size in the metadata is 0 for devices and pipes (`/dev/zero` never ends), so the read
    // itself is bounded too.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| ConfigError::file(path, format!("cannot read the file: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ConfigError::file(
            path,
            format!("is longer than {MAX_FILE_BYTES} bytes, the most loadsim reads"),
        ));
    }
    String::from_utf8(bytes).map_err(|_| ConfigError::file(path, "is not UTF-8 text"))
}

/// Walks the YAML events of `text` once, before the typed parse, and refuses two shapes that
/// would cost it minutes or gigabytes, with the line and column where the text crosses the line:
/// nesting deeper than [`MAX_NESTING`] (the typed parser takes time quadratic in flow nesting
/// depth: 100 000 `[` took a minute), and aliases that expand to more than [`MAX_ALIAS_NODES`]
/// nodes (the typed parser limits how *often* aliases are followed, not how much they copy: one
/// anchored map of 20 000 keys named 20 000 times took gigabytes). Other syntax errors are left to
/// the typed parse, which words them.
pub fn preflight(text: &str) -> Result<(), (String, Option<Pos>)> {
    let at = |span: saphyr_parser::Span| {
        Some(Pos {
            line: span.start.line(),
            column: span.start.col() + 1,
        })
    };
    let too_deep = || format!("nests mappings and sequences deeper than {MAX_NESTING} levels");
    // Nodes so far with every alias counted as the nodes it stands for.
    let mut nodes: u64 = 0;
    let mut alias_nodes: u64 = 0;
    // Open collections: (anchor id, 0 for none; `nodes` when it opened).
    let mut open: Vec<(usize, u64)> = Vec::new();
    // Anchor id → expanded size of its node.
    let mut size: HashMap<usize, u64> = HashMap::new();
    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(x) => x,
            Err(e) if e.info().contains("recursion limit") => {
                let pos = Pos {
                    line: e.marker().line(),
                    column: e.marker().col() + 1,
                };
                return Err((too_deep(), Some(pos)));
            }
            Err(_) => return Ok(()),
        };
        match event {
            Event::MappingStart(anchor, _) | Event::SequenceStart(anchor, _) => {
                open.push((anchor, nodes));
                nodes = nodes.saturating_add(1);
                if open.len() > MAX_NESTING {
                    return Err((too_deep(), at(span)));
                }
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some((anchor, from)) = open.pop()
                    && anchor != 0
                {
                    size.insert(anchor, nodes - from);
                }
            }
            Event::Scalar(_, _, anchor, _) => {
                nodes = nodes.saturating_add(1);
                if anchor != 0 {
                    size.insert(anchor, 1);
                }
            }
            Event::Alias(id) => {
                let n = size.get(&id).copied().unwrap_or(1);
                nodes = nodes.saturating_add(n);
                alias_nodes = alias_nodes.saturating_add(n);
                if alias_nodes > MAX_ALIAS_NODES {
                    return Err((
                        format!(
                            "aliases (`*name`) expand to more than {MAX_ALIAS_NODES} nodes; \
                             write the values out, or anchor smaller pieces"
                        ),
                        at(span),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses YAML text into a value; syntax errors carry their line.
pub fn parse_yaml(path: &Path, text: &str) -> Result<Value, ConfigError> {
    preflight(text).map_err(|(message, pos)| {
        ConfigError::one(Diagnostic {
            origin: Origin::File {
                path: path.to_owned(),
                line: pos.map(|p| p.line),
                column: pos.map(|p| p.column),
                source_line: pos
                    .and_then(|p| text.lines().nth(p.line.saturating_sub(1)))
                    .map(str::to_owned),
            },
            key: String::new(),
            message,
        })
    })?;
    let value: Value = yaml_serde::from_str(text).map_err(|e| {
        let (line, column) = match e.location() {
            Some(l) => (Some(l.line()), Some(l.column())),
            None => (None, None),
        };
        let source_line = line
            .and_then(|l| text.lines().nth(l.saturating_sub(1)))
            .map(str::to_owned);
        ConfigError::one(Diagnostic {
            origin: Origin::File {
                path: path.to_owned(),
                line,
                column,
                source_line,
            },
            key: String::new(),
            message: format!("not valid YAML: {}", strip_location(&e.to_string())),
        })
    })?;
    match value {
        Value::Mapping(_) => Ok(value),
        Value::Null => Err(ConfigError::file(
            path,
            "is empty; a scenario is a YAML mapping of keys",
        )),
        _ => Err(ConfigError::file(
            path,
            "must be a YAML mapping of keys at the top level",
        )),
    }
}

/// yaml_serde appends " at line L column C"; we print the location ourselves.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

fn load_with_extends(
    path: &Path,
    files: &mut Vec<SourceFile>,
    chain: &mut Vec<PathBuf>,
) -> Result<Value, ConfigError> {
    let canonical = path
        .canonicalize()
        .map_err(|e| ConfigError::file(path, format!("cannot read the file: {e}")))?;
    if chain.contains(&canonical) {
        let names: Vec<String> = chain
            .iter()
            .chain([&canonical])
            .map(|p| p.display().to_string())
            .collect();
        return Err(ConfigError::file(
            path,
            format!("`extends` forms a cycle: {}", names.join(" → ")),
        ));
    }
    if chain.len() >= MAX_EXTENDS_DEPTH {
        return Err(ConfigError::file(
            path,
            format!("`extends` chain deeper than {MAX_EXTENDS_DEPTH} files"),
        ));
    }
    chain.push(canonical);
    let text = read_text(path)?;
    let mut value = parse_yaml(path, &text)?;
    files.push(SourceFile {
        path: path.to_owned(),
        text,
        keys: HashMap::new(),
    });
    let index = files.len() - 1;
    files[index].keys = key_positions(&files[index].text);

    let extends = value
        .as_mapping_mut()
        .and_then(|m| m.shift_remove("extends"));
    let merged = match extends {
        None => value,
        Some(Value::String(base)) => {
            let base_path = path.parent().unwrap_or(Path::new(".")).join(&base);
            let mut base_value = load_with_extends(&base_path, files, chain).map_err(|mut e| {
                for d in &mut e.diagnostics {
                    if d.key.is_empty()
                        && matches!(&d.origin, Origin::File { path: p, .. } if p == &base_path)
                    {
                        d.message =
                            format!("{} (named by `extends` in {})", d.message, path.display());
                    }
                }
                e
            })?;
            deep_merge(&mut base_value, value);
            base_value
        }
        Some(_) => {
            let pos = files[index].keys.get("extends").copied();
            return Err(ConfigError::one(Diagnostic {
                origin: Origin::File {
                    path: path.to_owned(),
                    line: pos.map(|p| p.line),
                    column: pos.map(|p| p.column),
                    source_line: pos
                        .and_then(|p| files[index].text.lines().nth(p.line - 1))
                        .map(str::to_owned),
                },
                key: "extends".into(),
                message: "must be a file path, like `extends: base.yaml`".into(),
            }));
        }
    };
    chain.pop();
    Ok(merged)
}

/// Merges `overlay` into `base`: maps merge key by key (recursively), a `null` in the overlay
/// removes the key from the base, anything else replaces.
pub fn deep_merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            for (k, v) in o {
                if v.is_null() {
                    b.shift_remove(&k);
                    continue;
                }
                match b.get_mut(&k) {
                    Some(slot) => deep_merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Sets `key` (dotted) in `root` to `value`.
pub fn set_path(root: &mut Value, key: &str, value: Value) -> Result<(), String> {
    if key.is_empty() {
        return Err("the key is empty; expected a dotted path like `services.svc_a.slots`".into());
    }
    let parts: Vec<&str> = key.split('.').collect();
    let mut node = root;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(
                "the key has an empty segment; expected a dotted path like `services.svc_a.slots`"
                    .into(),
            );
        }
        let so_far = parts[..i].join(".");
        let map: &mut Mapping = match node {
            Value::Mapping(m) => m,
            _ => {
                return Err(format!(
                    "`{so_far}` is not a mapping, so it has no key `{part}`"
                ));
            }
        };
        let last = i + 1 == parts.len();
        if last {
            map.insert(Value::String((*part).to_owned()), value);
            return Ok(());
        }
        let known: Vec<String> = map
            .keys()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect();
        node = match map.get_mut(*part) {
            Some(n) => n,
            None => {
                let place = if so_far.is_empty() {
                    "the top level".to_owned()
                } else {
                    format!("`{so_far}`")
                };
                return Err(format!(
                    "there is no key `{part}` at {place}{}",
                    super::suggest::did_you_mean(part, known.iter().map(String::as_str))
                ));
            }
        };
    }
    unreachable!("the loop returns at the last segment")
}

/// Whether the dotted `key` names a value in `root` (every segment exists).
pub fn path_exists(root: &Value, key: &str) -> bool {
    let mut node = root;
    for part in key.split('.') {
        match node.as_mapping().and_then(|m| m.get(part)) {
            Some(n) => node = n,
            None => return false,
        }
    }
    true
}

/// Walks the YAML events of `text` and records the position of every mapping key by its dotted
/// path (`a.b.c`, sequence items as `a.b[0]`). Unparsable text gives an empty index (the typed
/// parse reports the syntax error). Paths longer than `MAX_KEY_PATH` bytes are not recorded, nor
/// anything below them: a hostile file with one huge key over many children would otherwise cost
/// key length × children bytes.
pub fn key_positions(text: &str) -> HashMap<String, Pos> {
    /// Stands for a path too long to record; every path below it is too long as well.
    const UNRECORDED: &str = "\u{0}";
    enum Frame {
        /// A mapping at `path`; `key` is the key whose value is being read, if any.
        Map { path: String, key: Option<String> },
        /// A sequence at `path`; `index` is the next item's index.
        Seq { path: String, index: usize },
    }
    /// The path of a value node starting now.
    fn node_path(frames: &[Frame]) -> String {
        match frames.last() {
            None => String::new(),
            Some(Frame::Map { key: Some(k), .. }) => k.clone(),
            Some(Frame::Map { path, .. } | Frame::Seq { path, .. })
                if path == UNRECORDED || path.len() >= MAX_KEY_PATH =>
            {
                UNRECORDED.to_owned()
            }
            Some(Frame::Map { path, key: None }) => format!("{path}.?"), // a complex key
            Some(Frame::Seq { path, index }) => format!("{path}[{index}]"),
        }
    }
    /// A value node finished: its parent moves on.
    fn node_done(frames: &mut [Frame]) {
        match frames.last_mut() {
            Some(Frame::Map { key, path }) => {
                *key = if key.is_some() {
                    None
                } else if path == UNRECORDED || path.len() >= MAX_KEY_PATH {
                    Some(UNRECORDED.to_owned())
                } else {
                    Some(format!("{path}.?"))
                };
            }
            Some(Frame::Seq { index, .. }) => *index += 1,
            None => {}
        }
    }
    let mut out = HashMap::new();
    let mut frames: Vec<Frame> = Vec::new();
    for item in Parser::new_from_str(text) {
        let Ok((event, span)) = item else { break };
        match event {
            Event::MappingStart(..) => {
                frames.push(Frame::Map {
                    path: node_path(&frames),
                    key: None,
                });
            }
            Event::SequenceStart(..) => {
                frames.push(Frame::Seq {
                    path: node_path(&frames),
                    index: 0,
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                frames.pop();
                node_done(&mut frames);
            }
            Event::Scalar(name, ..) => match frames.last_mut() {
                Some(Frame::Map {
                    path,
                    key: key @ None,
                }) => {
                    let full = if path == UNRECORDED || path.len() + name.len() >= MAX_KEY_PATH {
                        UNRECORDED.to_owned()
                    } else if path.is_empty() {
                        name.to_string()
                    } else {
                        format!("{path}.{name}")
                    };
                    if full != UNRECORDED {
                        out.insert(
                            full.clone(),
                            Pos {
                                line: span.start.line(),
                                column: span.start.col() + 1,
                            },
                        );
                    }
                    *key = Some(full);
                }
                _ => node_done(&mut frames),
            },
            Event::Alias(..) => node_done(&mut frames),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_positions_follow_nesting_and_sequences() {
        let text = "a: 1\nb:\n  c: x\n  d:\n    - e: 2\n    - 3\nf: [1, 2]\n";
        let k = key_positions(text);
        assert_eq!(k["a"], Pos { line: 1, column: 1 });
        assert_eq!(k["b.c"], Pos { line: 3, column: 3 });
        assert_eq!(k["b.d"], Pos { line: 4, column: 3 });
        assert_eq!(k["b.d[0].e"], Pos { line: 5, column: 7 });
        assert_eq!(k["f"], Pos { line: 7, column: 1 });
    }

    /// The indexer runs after `preflight` in every loader, but must hold on its own: no
    /// recursion, no quadratic path building, no alias expansion.
    #[test]
    fn key_positions_stay_cheap_on_hostile_text() {
        let start = std::time::Instant::now();
        // 100 000 nested block sequences on one line: paths would grow quadratically.
        let deep_seq = format!("a:\n  {}x\n", "- ".repeat(100_000));
        assert!(key_positions(&deep_seq).len() <= 1);
        // 100 000 nested flow maps: the parser stops at its own limit.
        let deep_map = format!("a: {}1{}", "{b: ".repeat(100_000), "}".repeat(100_000));
        let k = key_positions(&deep_map);
        assert!(k.len() < 300, "{}", k.len());
        // Billion laughs: aliases are events, not copies.
        let mut bomb = vec!["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]".to_owned()];
        for i in 1..10 {
            bomb.push(format!(
                "a{i}: &a{i} [{}]",
                vec![format!("*a{}", i - 1); 9].join(", ")
            ));
        }
        assert_eq!(key_positions(&bomb.join("\n")).len(), 10);
        // Nested maps with long keys: nothing recorded past MAX_KEY_PATH bytes.
        let long = "k".repeat(300);
        let nested: String = (0..50)
            .map(|i| format!("{}{long}{i}:\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(50)
            + "x: 1\n";
        let k = key_positions(&nested);
        assert!(k.keys().all(|p| p.len() < MAX_KEY_PATH), "{:?}", k.len());
        assert_eq!(
            k.len(),
            3,
            "{:?}",
            k.keys().map(|p| p.len()).collect::<Vec<_>>()
        );
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn preflight_refuses_depth_and_alias_expansion_with_positions() {
        let (m, pos) = preflight(&format!("a: {}", "[".repeat(1000))).unwrap_err();
        assert!(m.contains("deeper than 64"), "{m}");
        assert_eq!(pos.map(|p| p.line), Some(1));
        let ok = "a: &x {b: 1}\nc: *x\nd: [*x, *x]\n";
        assert!(preflight(ok).is_ok());
        // Exactly at the limit is fine; one level more is not.
        let at = format!("{}1{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(preflight(&at).is_ok());
        let over = format!(
            "{}1{}",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert!(preflight(&over).is_err());
        // Syntax errors are left to the typed parse.
        assert!(preflight("a: [1, 2").is_ok());
    }

    #[test]
    fn deep_merge_merges_maps_and_replaces_scalars() {
        let mut base: Value = yaml_serde::from_str("a: {x: 1, y: 2}\nb: 3").unwrap();
        let over: Value = yaml_serde::from_str("a: {y: 5, z: 6}\nb: 4").unwrap();
        deep_merge(&mut base, over);
        let want: Value = yaml_serde::from_str("a: {x: 1, y: 5, z: 6}\nb: 4").unwrap();
        assert_eq!(base, want);
        let removal: Value = yaml_serde::from_str("a: {x: null}\nb: ~").unwrap();
        deep_merge(&mut base, removal);
        let want: Value = yaml_serde::from_str("a: {y: 5, z: 6}").unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn set_path_replaces_creates_last_key_and_refuses_missing_parents() {
        let mut v: Value = yaml_serde::from_str("services: {svc_a: {slots: 1}}").unwrap();
        set_path(&mut v, "services.svc_a.queue_cap", Value::from(4)).unwrap();
        assert!(path_exists(&v, "services.svc_a.queue_cap"));
        let e = set_path(&mut v, "services.svc_x.slots", Value::from(4)).unwrap_err();
        assert!(e.contains("no key `svc_x`"), "{e}");
        assert!(e.contains("did you mean `svc_a`"), "{e}");
    }
}
