//! YAML text → a value and the position of every key, from one parser. Owns the only place where
//! loadsim reads YAML syntax: the events of `saphyr-parser` become a `yaml_serde::Value` (the
//! scalars resolved by the YAML 1.2 core schema, exactly as `yaml_serde` resolves them) and, in the
//! same pass, an index from every dotted key path (`a.b[0].c`) to the line and column where it is
//! written. Values and positions therefore cannot disagree.
//!
//! Every problem the pass can see is collected, not only the first: a key written twice (at the
//! second one's own line), a key that is not a plain name (`? [a]`), an unknown tag (`!custom`).
//! The guards are checked as the events arrive, before anything is built: nesting deeper than
//! [`MAX_NESTING`] and aliases that expand to more than [`MAX_ALIAS_NODES`] nodes (one anchored map
//! of 20 000 keys named 20 000 times would take gigabytes). A syntax error ends the pass: the
//! parser cannot go on after it.

use std::collections::HashMap;
use std::num::ParseIntError;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use yaml_serde::{Mapping, Value};

/// Deepest nesting of mappings and sequences accepted; a scenario needs about 5.
pub const MAX_NESTING: usize = 64;
/// Most nodes that aliases may stand for in one document, counted expanded.
pub const MAX_ALIAS_NODES: u64 = 1_000_000;
/// Longest dotted key path indexed for diagnostics; longer keys are still read, only not located.
const MAX_KEY_PATH: usize = 1024;

/// Line and column (both 1-based) of a key in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl Pos {
    fn of(span: Span) -> Pos {
        Pos {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }
}

/// One problem found in YAML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Dotted key path of the node, empty for the document as a whole.
    pub key: String,
    /// What is wrong.
    pub message: String,
    /// Where in the text (`None`: unknown).
    pub pos: Option<Pos>,
}

/// YAML text read: the value, and where each key is written.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// `Value::Null` for a document with no content.
    pub value: Value,
    /// Dotted key path → where the key (or, for a sequence item `a[2]`, the item) is written.
    pub keys: HashMap<String, Pos>,
}

/// A node being built.
enum Frame {
    Map {
        /// `None` when the path is too long to index (and so is every path below it).
        path: Option<String>,
        map: Mapping,
        /// The key whose value comes next; `Some(None)` for a key that was refused (its value is
        /// read and dropped).
        key: Option<Option<String>>,
        /// Where each key of this mapping was first written.
        seen: HashMap<String, Pos>,
        anchor: usize,
        /// `nodes` when the mapping opened.
        from: u64,
        /// Where it starts.
        at: Pos,
    },
    Seq {
        path: Option<String>,
        items: Vec<Value>,
        anchor: usize,
        from: u64,
        at: Pos,
    },
}

struct Builder {
    frames: Vec<Frame>,
    root: Option<Value>,
    keys: HashMap<String, Pos>,
    problems: Vec<Problem>,
    /// Anchor id → its value and expanded node count.
    anchors: HashMap<usize, (Value, u64)>,
    /// Nodes so far, every alias counted as the nodes it stands for.
    nodes: u64,
    alias_nodes: u64,
}

fn join(path: &Option<String>, key: &str) -> Option<String> {
    let path = path.as_ref()?;
    if path.len() + key.len() >= MAX_KEY_PATH {
        None
    } else if path.is_empty() {
        Some(key.to_owned())
    } else {
        Some(format!("{path}.{key}"))
    }
}

fn index(path: &Option<String>, i: usize) -> Option<String> {
    let path = path.as_ref()?;
    (path.len() + 20 < MAX_KEY_PATH).then(|| format!("{path}[{i}]"))
}

impl Builder {
    /// The path of a value node starting now, and whether it is a mapping key.
    fn next_path(&self) -> (Option<String>, bool) {
        match self.frames.last() {
            None => (Some(String::new()), false),
            Some(Frame::Map { key: None, .. }) => (None, true),
            Some(Frame::Map {
                key: Some(None), ..
            }) => (None, false),
            Some(Frame::Map {
                path,
                key: Some(Some(k)),
                ..
            }) => (join(path, k), false),
            Some(Frame::Seq { path, items, .. }) => (index(path, items.len()), false),
        }
    }

    fn problem(&mut self, key: Option<String>, message: String, pos: Pos) {
        self.problems.push(Problem {
            key: key.unwrap_or_default(),
            message,
            pos: Some(pos),
        });
    }

    /// A node starts at `pos`: a key gets its place in the index, a sequence item too.
    fn start(&mut self, pos: Pos) -> Option<String> {
        let (path, _) = self.next_path();
        if let (Some(p), Some(Frame::Seq { .. })) = (&path, self.frames.last()) {
            self.keys.insert(p.clone(), pos);
        }
        path
    }

    /// A finished node goes into its parent. `scalar` is its text when it is a scalar (a key's
    /// name is its text as written, whatever it resolves to).
    fn complete(&mut self, value: Value, anchor: usize, size: u64, scalar: Option<&str>, pos: Pos) {
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), size));
        }
        let mut refused_key: Option<(Option<String>, &'static str)> = None;
        let mut duplicate: Option<(Option<String>, String, Pos)> = None;
        match self.frames.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map {
                path,
                map,
                key,
                seen,
                ..
            }) => match key.take() {
                None => match scalar {
                    Some(name) => {
                        let full = join(path, name);
                        if let Some(first) = seen.get(name) {
                            duplicate = Some((full, name.to_owned(), *first));
                            *key = Some(None);
                        } else {
                            seen.insert(name.to_owned(), pos);
                            *key = Some(Some(name.to_owned()));
                            if let Some(f) = full {
                                self.keys.insert(f, pos);
                            }
                        }
                    }
                    None => {
                        let what = match value {
                            Value::Sequence(_) => "a sequence",
                            _ => "a mapping",
                        };
                        refused_key = Some((path.clone(), what));
                        *key = Some(None);
                    }
                },
                Some(Some(k)) => {
                    map.insert(Value::String(k), value);
                }
                Some(None) => {}
            },
        }
        if let Some((path, what)) = refused_key {
            self.problem(
                path,
                format!("a key must be a name, not {what}; write `name: value`"),
                pos,
            );
        }
        if let Some((full, name, first)) = duplicate {
            self.problem(
                full,
                format!(
                    "`{}` is written twice in this mapping (first at line {}); keep one",
                    super::suggest::shorten(&name),
                    first.line
                ),
                pos,
            );
        }
    }
}

/// The one problem that ends the pass.
fn fatal(message: impl Into<String>, pos: Pos) -> Vec<Problem> {
    vec![Problem {
        key: String::new(),
        message: message.into(),
        pos: Some(pos),
    }]
}

/// Reads YAML text: one document, or none (then the value is `Null`).
pub fn parse(text: &str) -> Result<Parsed, Vec<Problem>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let too_deep = || format!("nests mappings and sequences deeper than {MAX_NESTING} levels");
    let mut b = Builder {
        frames: Vec::new(),
        root: None,
        keys: HashMap::new(),
        problems: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        alias_nodes: 0,
    };
    let mut documents = 0;
    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(x) => x,
            Err(e) => {
                let pos = Pos {
                    line: e.marker().line(),
                    column: e.marker().col() + 1,
                };
                let message = if e.info().contains("recursion limit") {
                    too_deep()
                } else {
                    format!("not valid YAML: {}", e.info())
                };
                return Err(fatal(message, pos));
            }
        };
        let pos = Pos::of(span);
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(fatal(
                        "holds more than one YAML document (a second `---`); loadsim reads one \
                         document per file",
                        pos,
                    ));
                }
            }
            Event::MappingStart(..) | Event::SequenceStart(..) if b.frames.len() >= MAX_NESTING => {
                return Err(fatal(too_deep(), pos));
            }
            Event::MappingStart(anchor, tag) => {
                let path = b.start(pos);
                check_tag(&mut b, tag.as_deref(), "map", &path, pos);
                b.frames.push(Frame::Map {
                    path,
                    map: Mapping::new(),
                    key: None,
                    seen: HashMap::new(),
                    anchor,
                    from: b.nodes,
                    at: pos,
                });
                b.nodes = b.nodes.saturating_add(1);
            }
            Event::SequenceStart(anchor, tag) => {
                let path = b.start(pos);
                check_tag(&mut b, tag.as_deref(), "seq", &path, pos);
                b.frames.push(Frame::Seq {
                    path,
                    items: Vec::new(),
                    anchor,
                    from: b.nodes,
                    at: pos,
                });
                b.nodes = b.nodes.saturating_add(1);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let (value, anchor, from, at) = match b.frames.pop() {
                    Some(Frame::Map {
                        map,
                        anchor,
                        from,
                        at,
                        ..
                    }) => (Value::Mapping(map), anchor, from, at),
                    Some(Frame::Seq {
                        items,
                        anchor,
                        from,
                        at,
                        ..
                    }) => (Value::Sequence(items), anchor, from, at),
                    None => continue,
                };
                let size = b.nodes - from;
                b.complete(value, anchor, size, None, at);
            }
            Event::Scalar(text, style, anchor, tag) => {
                let path = b.start(pos);
                b.nodes = b.nodes.saturating_add(1);
                let value = match scalar_value(&text, style, tag.as_deref()) {
                    Ok(v) => v,
                    Err(message) => {
                        b.problem(path, message, pos);
                        Value::Null
                    }
                };
                b.complete(value, anchor, 1, Some(&text), pos);
            }
            Event::Alias(id) => {
                let _ = b.start(pos);
                let Some(size) = b.anchors.get(&id).map(|a| a.1) else {
                    return Err(fatal(
                        "not valid YAML: an alias names no anchor before it",
                        pos,
                    ));
                };
                b.nodes = b.nodes.saturating_add(size);
                b.alias_nodes = b.alias_nodes.saturating_add(size);
                // Counted before it is copied.
                if b.alias_nodes > MAX_ALIAS_NODES {
                    return Err(fatal(
                        format!(
                            "aliases (`*name`) expand to more than {MAX_ALIAS_NODES} nodes; \
                             write the values out, or anchor smaller pieces"
                        ),
                        pos,
                    ));
                }
                let value = b.anchors[&id].0.clone();
                // An alias as a key stands for its anchor's text only when that is a string.
                let name = value.as_str().map(str::to_owned);
                b.complete(value, 0, size, name.as_deref(), pos);
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
    }
    if b.problems.is_empty() {
        Ok(Parsed {
            value: b.root.unwrap_or(Value::Null),
            keys: b.keys,
        })
    } else {
        Err(b.problems)
    }
}

/// Collections take the core tags `!!map` and `!!seq` only.
fn check_tag(b: &mut Builder, tag: Option<&Tag>, core: &str, path: &Option<String>, pos: Pos) {
    if let Some(tag) = tag
        && !(tag.is_yaml_core_schema() && tag.suffix == core)
    {
        b.problem(path.clone(), unknown_tag(tag), pos);
    }
}

fn unknown_tag(tag: &Tag) -> String {
    let shown = if tag.is_yaml_core_schema() {
        format!("!!{}", tag.suffix)
    } else {
        tag.to_string()
    };
    format!(
        "the tag `{}` means nothing to loadsim; remove it",
        super::suggest::shorten(&shown)
    )
}

/// A scalar's value: plain scalars resolve by the core schema, quoted and block scalars are
/// strings, and the core tags (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`) force a type.
fn scalar_value(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    let Some(tag) = tag else {
        return Ok(if style == ScalarStyle::Plain {
            resolve_plain(text)
        } else {
            Value::String(text.to_owned())
        });
    };
    // The non-specific tag `!` only says "not resolved": a string.
    if tag.handle == "!" && tag.suffix.is_empty() {
        return Ok(Value::String(text.to_owned()));
    }
    if !tag.is_yaml_core_schema() {
        return Err(unknown_tag(tag));
    }
    let resolved = resolve_plain(text);
    let fits = match tag.suffix.as_str() {
        "str" => return Ok(Value::String(text.to_owned())),
        "int" => resolved.is_u64() || resolved.is_i64(),
        "float" => resolved.is_number(),
        "bool" => resolved.is_bool(),
        "null" => resolved.is_null(),
        _ => return Err(unknown_tag(tag)),
    };
    if fits {
        Ok(resolved)
    } else {
        Err(format!(
            "`{}` is not a value of the tag `!!{}`",
            super::suggest::shorten(text),
            tag.suffix
        ))
    }
}

/// A plain scalar by the YAML 1.2 core schema, with `yaml_serde`'s rules (so that values read
/// the same as they did through it): null, booleans, integers (decimal, `0x`, `0o`, `0b`; a
/// leading zero makes a string), floats (`.inf`, `.nan`), else a string.
fn resolve_plain(v: &str) -> Value {
    if v.is_empty() || matches!(v, "null" | "Null" | "NULL" | "~") {
        return Value::Null;
    }
    match v {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = parse_unsigned_int(v, u64::from_str_radix) {
        return Value::from(n);
    }
    if let Some(n) = parse_negative_int(v, i64::from_str_radix) {
        return Value::from(n);
    }
    if !digits_but_not_number(v)
        && let Some(f) = parse_f64(v)
    {
        return Value::from(f);
    }
    Value::String(v.to_owned())
}

fn parse_radix<T>(
    unsigned: &str,
    negative: bool,
    from: fn(&str, u32) -> Result<T, ParseIntError>,
) -> Option<T> {
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unsigned.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return None;
            }
            let digits = if negative {
                format!("-{rest}")
            } else {
                rest.to_owned()
            };
            if let Ok(n) = from(&digits, radix) {
                return Some(n);
            }
        }
    }
    None
}

fn parse_unsigned_int<T>(
    scalar: &str,
    from: fn(&str, u32) -> Result<T, ParseIntError>,
) -> Option<T> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    if let Some(n) = parse_radix(unpositive, false, from) {
        return Some(n);
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(scalar) {
        return None;
    }
    from(unpositive, 10).ok()
}

fn parse_negative_int<T>(
    scalar: &str,
    from: fn(&str, u32) -> Result<T, ParseIntError>,
) -> Option<T> {
    if let Some(rest) = scalar.strip_prefix('-')
        && let Some(n) = parse_radix(rest, true, from)
    {
        return Some(n);
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from(scalar, 10).ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = match scalar.strip_prefix('+') {
        Some(u) if u.starts_with(['+', '-']) => return None,
        Some(u) => u,
        None => scalar,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = scalar {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = scalar {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// A leading zero followed by digits is a string in YAML 1.2.
fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> HashMap<String, Pos> {
        parse(text).unwrap().keys
    }

    #[test]
    fn key_positions_follow_nesting_and_sequences() {
        let text = "a: 1\nb:\n  c: x\n  d:\n    - e: 2\n    - 3\nf: [1, 2]\n";
        let k = keys(text);
        assert_eq!(k["a"], Pos { line: 1, column: 1 });
        assert_eq!(k["b.c"], Pos { line: 3, column: 3 });
        assert_eq!(k["b.d"], Pos { line: 4, column: 3 });
        assert_eq!(k["b.d[0].e"], Pos { line: 5, column: 7 });
        assert_eq!(k["b.d[1]"], Pos { line: 6, column: 7 });
        assert_eq!(k["f"], Pos { line: 7, column: 1 });
    }

    /// The values are the ones `yaml_serde` reads from the same text.
    #[test]
    fn values_match_yaml_serde() {
        let text = "a: 1\nb: -2\nc: 0x1f\nd: 1.5\ne: .inf\nf: 007\ng: true\nh: ~\ni:\nj: '3'\n\
                    k: 1e3\nl: [1, x, {m: n}]\no: |\n  text\np: 2s\nq: +7\nr: -0x10\ns: 1_000\n\
                    t: 99999999999999999999999\nu: !!str 5\nv: &x {w: 1}\ny: *x\n";
        let ours = parse(text).unwrap().value;
        let mut theirs: Value = yaml_serde::from_str(&text.replace(
            "t: 99999999999999999999999\n",
            "t: 99999999999999999999999.0\n",
        ))
        .unwrap();
        // yaml_serde refuses integers beyond 64 bits; read as a float here.
        if let Some(m) = theirs.as_mapping_mut() {
            m.insert("t".into(), Value::from(1e23));
        }
        assert_eq!(ours, theirs);
    }

    #[test]
    fn duplicate_keys_are_reported_at_their_own_line() {
        let p = parse("a: 1\nb:\n  c: 1\n  d: 2\n  c: 3\n").unwrap_err();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].key, "b.c");
        assert_eq!(p[0].pos, Some(Pos { line: 5, column: 3 }));
        assert!(p[0].message.contains("first at line 3"), "{}", p[0].message);
    }

    #[test]
    fn every_parse_problem_is_collected() {
        let p = parse("a: !custom 1\n? [x]\n: 2\nb: 1\nb: 2\n").unwrap_err();
        let lines: Vec<usize> = p.iter().map(|p| p.pos.unwrap().line).collect();
        assert_eq!(lines, [1, 2, 5], "{p:?}");
        assert!(p[0].message.contains("`!custom`"), "{}", p[0].message);
        assert!(p[1].message.contains("not a sequence"), "{}", p[1].message);
    }

    #[test]
    fn a_byte_order_mark_is_not_content() {
        let v = parse("\u{feff}a: 1\n").unwrap().value;
        assert_eq!(v, yaml_serde::from_str::<Value>("a: 1").unwrap());
    }

    #[test]
    fn guards_refuse_depth_and_alias_expansion_with_positions() {
        let p = parse(&format!("a: {}", "[".repeat(1000))).unwrap_err();
        assert!(p[0].message.contains("deeper than 64"), "{p:?}");
        assert_eq!(p[0].pos.map(|p| p.line), Some(1));
        assert!(parse("a: &x {b: 1}\nc: *x\nd: [*x, *x]\n").is_ok());
        // Exactly at the limit is fine; one level more is not.
        let at = format!("{}1{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(parse(&at).is_ok());
        let over = format!(
            "{}1{}",
            "[".repeat(MAX_NESTING + 1),
            "]".repeat(MAX_NESTING + 1)
        );
        assert!(parse(&over).is_err());
        let mut bomb = vec!["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]".to_owned()];
        for i in 1..10 {
            bomb.push(format!(
                "a{i}: &a{i} [{}]",
                vec![format!("*a{}", i - 1); 9].join(", ")
            ));
        }
        let p = parse(&bomb.join("\n")).unwrap_err();
        assert!(p[0].message.contains("aliases"), "{p:?}");
        assert!(
            parse("a: [1, 2").unwrap_err()[0]
                .message
                .contains("not valid YAML")
        );
        assert!(
            parse("a: 1\n---\nb: 2\n").unwrap_err()[0]
                .message
                .contains("more than one")
        );
    }

    /// Nothing quadratic or unbounded in the index on hostile text.
    #[test]
    fn the_index_stays_cheap_on_hostile_text() {
        let start = std::time::Instant::now();
        let long = "k".repeat(300);
        let nested: String = (0..50)
            .map(|i| format!("{}{long}{i}:\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(50)
            + "x: 1\n";
        let k = keys(&nested);
        assert!(k.keys().all(|p| p.len() < MAX_KEY_PATH), "{:?}", k.len());
        assert_eq!(k.len(), 3);
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
