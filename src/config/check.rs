//! Every shape problem of a document at once. Owns walking a merged YAML value against the JSON
//! Schema that `schemars` generates from the raw type it will be deserialized into (the same
//! schema editors get from `loadsim schema`), and collecting *all* unknown keys (with their
//! suggestion), wrong types, bad enum values, durations without a unit and missing required keys —
//! where serde stops at the first. The messages are serde's own, worded as before: each leaf is
//! checked by deserializing it into the Rust type its schema stands for.
//!
//! The walk understands what the raw types generate (objects, maps, lists, optional values, string
//! enums, durations). A construct it does not understand is left to serde, which then reports its
//! first problem as before; nothing is accepted that serde would refuse.
//!
//! It also checks what a file that `extends` another removes with `null` (see
//! [`super::source::Removal`]): the key must exist in the schema, must not be required, and an
//! entry of a map (a service, a fault) must exist in the base.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use yaml_serde::Value;

use super::duration::DurationText;
use super::source::Removal;
use super::suggest::{did_you_mean, explain_serde_message};

/// One step of a path into a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A key of a map.
    Key(String),
    /// A 0-based index into a list.
    Index(usize),
}

/// A problem the walk found: where (as dotted text and as steps) and what.
#[derive(Clone, Debug)]
pub struct FoundValue {
    /// Dotted key path of the value, like `services.svc_b.slots`.
    pub key: String,
    /// The same path, as steps.
    pub path: Vec<Seg>,
    /// What is wrong, and what to do.
    pub message: String,
    /// For a required value that is missing or has a shape problem: a value of the right shape
    /// to put in its place (instead of taking the value out), so that the rest of the document
    /// can still be deserialized and checked for meaning in the same pass.
    pub stand_in: Option<StandIn>,
}

/// A placeholder for a required value (see [`FoundValue::stand_in`]).
#[derive(Clone, Debug)]
pub struct StandIn {
    /// Where it goes.
    pub path: Vec<Seg>,
    /// The placeholder value.
    pub value: Value,
    /// The key whose problems of meaning are no news with the placeholder in place: the value's
    /// own key, or for a kind that decides what its siblings mean (`dist`, `kind`, `policy`),
    /// the map that holds it.
    pub scope: String,
}

/// The JSON Schema of `T`, generated once per type.
pub fn schema_of<T: JsonSchema + 'static>() -> Arc<Json> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<Json>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    map.entry(TypeId::of::<T>())
        .or_insert_with(|| {
            Arc::new(
                SchemaSettings::draft07()
                    .into_generator()
                    .into_root_schema_for::<T>()
                    .to_value(),
            )
        })
        .clone()
}

/// Every shape problem of `value` against `schema`, and of each removal, in document order.
pub fn check(schema: &Json, value: &Value, removals: &[Removal]) -> Vec<FoundValue> {
    let mut w = Walker {
        defs: schema.get("definitions").and_then(Json::as_object),
        found: Vec::new(),
        path: Vec::new(),
    };
    w.node(schema, value);
    for r in removals {
        // A key removed by one file and given again by a file that extends it is there.
        let mut node = Some(value);
        for k in &r.path {
            node = node
                .and_then(|n| n.as_mapping())
                .and_then(|m| m.get(k.as_str()));
        }
        if node.is_none() {
            w.removal(schema, r);
        }
    }
    w.found
}

/// serde's message, in loadsim's words: "wrong type", whole numbers with their range, and
/// unknown keys or values as a sentence with a suggestion. Returns the unknown key, if any.
pub fn wording(serde_message: &str) -> (String, Option<String>) {
    // serde names an untagged enum by its Rust type; say what the key takes instead.
    const UNTAGGED: [(&str, &str); 2] = [
        (
            "PriorityRaw",
            "must be a whole number (higher is more important) or one of `critical_plus`, \
             `critical`, `sheddable_plus`, `sheddable`",
        ),
        (
            "ChoiceCountRaw",
            "must be a whole number of draws from 1 to 4294967295, or `all`",
        ),
    ];
    if let Some(name) = serde_message
        .strip_prefix("data did not match any variant of untagged enum ")
        .map(|rest| rest.split_whitespace().next().unwrap_or_default())
        && let Some((_, says)) = UNTAGGED.iter().find(|(n, _)| *n == name)
    {
        return ((*says).to_owned(), None);
    }
    let (message, unknown) = explain_serde_message(serde_message);
    let message = message
        .replace("invalid type: ", "wrong type: ")
        .replace(
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        )
        .replace(
            "expected u64",
            "expected a whole number from 0 to 18446744073709551615",
        )
        .replace("expected u8", "expected a whole number from 0 to 255")
        .replace("expected f64", "expected a number")
        .replace("unit value", "null");
    (message, unknown)
}

/// The dotted text of a path: `a.b[2].c`.
pub fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// serde's "unknown field" sentence for `key` among `fields`.
fn unknown_field(key: &str, fields: &[&str]) -> String {
    let expected = match fields {
        [] => "there are no fields".to_owned(),
        [one] => format!("expected `{one}`"),
        many => format!(
            "expected one of {}",
            many.iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    wording(&format!("unknown field `{key}`, {expected}")).0
}

struct Walker<'a> {
    defs: Option<&'a Map<String, Json>>,
    found: Vec<FoundValue>,
    path: Vec<Seg>,
}

impl<'a> Walker<'a> {
    fn report(&mut self, message: String) {
        self.found.push(FoundValue {
            key: path_text(&self.path),
            path: self.path.clone(),
            message,
            stand_in: None,
        });
    }

    /// The definition a `$ref` names.
    fn def(&self, reference: &str) -> Option<&'a Json> {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        self.defs.and_then(|d| d.get(name))
    }

    /// Checks `value` against `schema`; false when it found a problem.
    fn node(&mut self, schema: &'a Json, value: &Value) -> bool {
        let Json::Object(s) = schema else {
            return true;
        };
        if let Some(Json::String(r)) = s.get("$ref") {
            if r.ends_with("/Duration") {
                return self.leaf(
                    DurationText::deserialize(value)
                        .err()
                        .map(|e| e.to_string()),
                );
            }
            return match self.def(r) {
                Some(def) => self.node(def, value),
                None => true,
            };
        }
        if let Some(Json::Array(all)) = s.get("allOf") {
            let mut ok = true;
            for b in all {
                ok &= self.node(b, value);
            }
            return ok;
        }
        if let Some(Json::Array(any)) = s.get("anyOf") {
            if value.is_null() && any.iter().any(is_null_schema) {
                return true;
            }
            let rest: Vec<&Json> = any.iter().filter(|b| !is_null_schema(b)).collect();
            return match rest.as_slice() {
                [one] => self.node(one, value),
                _ => self.some_branch(&rest, value),
            };
        }
        if let Some(Json::Array(one)) = s.get("oneOf") {
            if let Some(names) = one.iter().map(constant).collect::<Option<Vec<&str>>>() {
                return self.variant(&names, value);
            }
            let branches: Vec<&Json> = one.iter().collect();
            return self.some_branch(&branches, value);
        }
        if let Some(Json::Array(e)) = s.get("enum") {
            if let Some(names) = e.iter().map(Json::as_str).collect::<Option<Vec<&str>>>() {
                return self.variant(&names, value);
            }
            return true;
        }
        let types: Vec<&str> = match s.get("type") {
            Some(Json::String(t)) => vec![t.as_str()],
            Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
            _ => return true,
        };
        if value.is_null() && types.contains(&"null") {
            return true;
        }
        match value {
            Value::Mapping(m) if types.contains(&"object") => self.object(s, m),
            Value::Sequence(items) if types.contains(&"array") => {
                let Some(item) = s.get("items") else {
                    return true;
                };
                let mut ok = true;
                for (i, v) in items.iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    ok &= self.node(item, v);
                    self.path.pop();
                }
                ok
            }
            _ => {
                let format = s.get("format").and_then(Json::as_str);
                let t = types
                    .iter()
                    .copied()
                    .find(|t| *t != "null")
                    .unwrap_or("null");
                self.leaf(primitive(t, format, value))
            }
        }
    }

    fn leaf(&mut self, error: Option<String>) -> bool {
        match error {
            None => true,
            Some(e) => {
                let message = wording(&e).0;
                self.report(message);
                false
            }
        }
    }

    /// A value of one of several shapes the walk cannot tell apart: fine when one branch takes
    /// it without a problem; otherwise serde words the problem.
    fn some_branch(&mut self, branches: &[&'a Json], value: &Value) -> bool {
        for b in branches {
            let mut trial = Walker {
                defs: self.defs,
                found: Vec::new(),
                path: Vec::new(),
            };
            if trial.node(b, value) {
                return true;
            }
        }
        true
    }

    /// A string enum.
    fn variant(&mut self, names: &[&str], value: &Value) -> bool {
        let list = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        match value {
            Value::String(v) if names.contains(&v.as_str()) => true,
            Value::String(v) => {
                let message = wording(&format!("unknown variant `{v}`, expected one of {list}")).0;
                self.report(message);
                false
            }
            other => {
                self.report(format!(
                    "wrong type: {}, expected one of {list}",
                    unexpected(other)
                ));
                false
            }
        }
    }

    fn object(&mut self, s: &'a Map<String, Json>, m: &yaml_serde::Mapping) -> bool {
        let props = s.get("properties").and_then(Json::as_object);
        let additional = s.get("additionalProperties");
        let mut ok = true;
        for (k, v) in m {
            let Some(k) = k.as_str() else { continue };
            self.path.push(Seg::Key(k.to_owned()));
            if let Some(p) = props.and_then(|p| p.get(k)) {
                let before = self.found.len();
                let fine = self.node(p, v);
                if !fine && is_required(s, k) {
                    let stand_in = self.stand_in(p);
                    for f in &mut self.found[before..] {
                        if f.path == self.path {
                            f.stand_in = stand_in.clone();
                        }
                    }
                }
                ok &= fine;
            } else if let Some(p) = pattern_property(s, k) {
                ok &= self.node(p, v);
            } else {
                match additional {
                    Some(Json::Bool(false)) => {
                        let fields: Vec<&str> = props
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        self.report(unknown_field(k, &fields));
                        ok = false;
                    }
                    Some(schema @ Json::Object(_)) => ok &= self.node(schema, v),
                    _ => {}
                }
            }
            self.path.pop();
        }
        if let Some(Json::Array(required)) = s.get("required") {
            for r in required.iter().filter_map(Json::as_str) {
                if !m.contains_key(r) {
                    self.report(format!("missing field `{r}`"));
                    if let Some(p) = props.and_then(|p| p.get(r)) {
                        self.path.push(Seg::Key(r.to_owned()));
                        let stand_in = self.stand_in(p);
                        self.path.pop();
                        if let Some(f) = self.found.last_mut() {
                            f.stand_in = stand_in;
                        }
                    }
                    ok = false;
                }
            }
        }
        ok
    }

    /// A placeholder for the required value at the current path, described by `schema`.
    fn stand_in(&self, schema: &'a Json) -> Option<StandIn> {
        let (value, kind) = self.placeholder(schema, 0)?;
        let scope = if kind && self.path.len() > 1 {
            path_text(&self.path[..self.path.len() - 1])
        } else {
            path_text(&self.path)
        };
        Some(StandIn {
            path: self.path.clone(),
            value,
            scope,
        })
    }

    /// The simplest value of the shape `schema` describes (a duration of `0s`, a zero, an empty
    /// text, list or map, the first of a set of names, a map with its required keys), and whether
    /// it is one of a set of names (a kind that decides what the keys beside it mean). Its
    /// meaning is never checked: the problems of meaning at its key are dropped.
    fn placeholder(&self, schema: &'a Json, depth: usize) -> Option<(Value, bool)> {
        if depth > 16 {
            return None;
        }
        let s = schema.as_object()?;
        if let Some(Json::String(r)) = s.get("$ref") {
            if r.ends_with("/Duration") {
                return Some((Value::String("0s".into()), false));
            }
            return self.placeholder(self.def(r)?, depth + 1);
        }
        for wrapper in ["allOf", "anyOf", "oneOf"] {
            if let Some(Json::Array(branches)) = s.get(wrapper) {
                if let Some(names) = branches.iter().map(constant).collect::<Option<Vec<&str>>>() {
                    return Some((Value::String((*names.first()?).to_owned()), true));
                }
                let first = branches.iter().find(|b| !is_null_schema(b))?;
                return self.placeholder(first, depth + 1);
            }
        }
        if let Some(Json::Array(e)) = s.get("enum") {
            let first = e.first()?.as_str()?;
            return Some((Value::String(first.to_owned()), true));
        }
        let t = match s.get("type") {
            Some(Json::String(t)) => t.as_str(),
            Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).find(|t| *t != "null")?,
            _ => return None,
        };
        let value = match t {
            "integer" => Value::Number(
                s.get("minimum")
                    .and_then(Json::as_i64)
                    .unwrap_or(0)
                    .max(0)
                    .into(),
            ),
            "number" => Value::Number(0.0.into()),
            "string" => Value::String(String::new()),
            "boolean" => Value::Bool(false),
            "array" => Value::Sequence(Vec::new()),
            "object" => {
                let mut m = yaml_serde::Mapping::new();
                let props = s.get("properties").and_then(Json::as_object);
                if let Some(Json::Array(required)) = s.get("required") {
                    for r in required.iter().filter_map(Json::as_str) {
                        let p = props?.get(r)?;
                        m.insert(
                            Value::String(r.to_owned()),
                            self.placeholder(p, depth + 1)?.0,
                        );
                    }
                }
                Value::Mapping(m)
            }
            _ => return None,
        };
        Some((value, false))
    }

    /// Follows references and single-branch wrappers to the schema that describes a value.
    fn resolve(&self, mut schema: &'a Json) -> &'a Json {
        for _ in 0..32 {
            if let Some(Json::String(r)) = schema.get("$ref")
                && let Some(def) = self.def(r)
            {
                schema = def;
                continue;
            }
            let wrapped = ["allOf", "anyOf"].iter().find_map(|w| {
                let branches = schema.get(*w)?.as_array()?;
                let rest: Vec<&Json> = branches.iter().filter(|b| !is_null_schema(b)).collect();
                (rest.len() == 1).then(|| rest[0])
            });
            match wrapped {
                Some(inner) => schema = inner,
                None => break,
            }
        }
        schema
    }

    /// A `null` that removes a key of the base.
    fn removal(&mut self, root: &'a Json, r: &Removal) {
        let mut schema = root;
        for (i, seg) in r.path.iter().enumerate() {
            let last = i + 1 == r.path.len();
            let s = self.resolve(schema);
            let props = s.get("properties").and_then(Json::as_object);
            let here = || {
                r.path[..=i]
                    .iter()
                    .map(|k| Seg::Key(k.clone()))
                    .collect::<Vec<_>>()
            };
            if let Some(p) = props.and_then(|p| p.get(seg)) {
                if last {
                    let required = s
                        .get("required")
                        .and_then(Json::as_array)
                        .is_some_and(|req| req.iter().any(|x| x.as_str() == Some(seg)));
                    if required {
                        self.path = here();
                        self.report(
                            "is required, so `null` cannot remove it; give it a value instead"
                                .into(),
                        );
                        self.path.clear();
                    } else if !r.existed {
                        // Removing what is not there does nothing: a stale override, or one
                        // written for another base.
                        self.path = here();
                        self.report(format!(
                            "there is no `{}` in the base to remove; `null` removes a key the \
                             base gives (delete this line if the base should keep its default)",
                            super::suggest::shorten(seg)
                        ));
                        self.path.clear();
                    }
                    return;
                }
                schema = p;
                continue;
            }
            match s.get("additionalProperties") {
                Some(Json::Bool(false)) => {
                    let fields: Vec<&str> = props
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    self.path = here();
                    self.report(unknown_field(seg, &fields));
                    self.path.clear();
                    return;
                }
                Some(inner @ Json::Object(_)) => {
                    if last {
                        if !r.existed {
                            self.path = here();
                            self.report(format!(
                                "there is no `{}` in the base to remove{}",
                                super::suggest::shorten(seg),
                                did_you_mean(seg, r.siblings.iter().map(String::as_str))
                            ));
                            self.path.clear();
                        }
                        return;
                    }
                    schema = inner;
                }
                _ => return,
            }
        }
    }
}

/// The schema of `key` under the object's `patternProperties`, if a pattern takes it. The raw
/// types use one form of pattern only, `^<prefix>[0-9]+$` (a distribution's `p50`, `p999`); a
/// pattern of another form takes no key here, so the key stays unknown (never wrongly accepted).
fn pattern_property<'a>(s: &'a Map<String, Json>, key: &str) -> Option<&'a Json> {
    let patterns = s.get("patternProperties")?.as_object()?;
    patterns.iter().find_map(|(pattern, schema)| {
        let prefix = pattern.strip_prefix('^')?.strip_suffix("[0-9]+$")?;
        let digits = key.strip_prefix(prefix)?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(schema)
    })
}

/// Whether the object schema `s` lists `key` as required.
fn is_required(s: &Map<String, Json>, key: &str) -> bool {
    s.get("required")
        .and_then(Json::as_array)
        .is_some_and(|req| req.iter().any(|x| x.as_str() == Some(key)))
}

/// Whether a schema is `{"type": "null"}`.
fn is_null_schema(schema: &Json) -> bool {
    schema.get("type").and_then(Json::as_str) == Some("null")
}

/// The constant of `{"const": "x"}` or `{"enum": ["x"]}`.
fn constant(schema: &Json) -> Option<&str> {
    if let Some(c) = schema.get("const") {
        return c.as_str();
    }
    match schema.get("enum")?.as_array()?.as_slice() {
        [one] => one.as_str(),
        _ => None,
    }
}

/// serde's error for `value` as the Rust type a leaf schema stands for.
fn primitive(t: &str, format: Option<&str>, value: &Value) -> Option<String> {
    fn de<T: serde::de::DeserializeOwned>(value: &Value) -> Option<String> {
        T::deserialize(value).err().map(|e| e.to_string())
    }
    match (t, format) {
        ("integer", Some("uint8")) => de::<u8>(value),
        ("integer", Some("uint16")) => de::<u16>(value),
        ("integer", Some("uint32")) => de::<u32>(value),
        ("integer", Some("uint64" | "uint")) => de::<u64>(value),
        ("integer", Some("int32")) => de::<i32>(value),
        ("integer", _) => de::<i64>(value),
        // The YAML reader keeps a number beyond f64's range (`1e400`) as text.
        ("number", _) => match value {
            Value::String(s)
                if s.bytes().any(|b| b.is_ascii_digit())
                    && s.parse::<f64>().is_ok_and(|f| f.is_infinite()) =>
            {
                Some(format!(
                    "`{}` is not a finite number: it is beyond ±1.8e308, the largest a number \
                     can be",
                    super::suggest::shorten(s)
                ))
            }
            _ => de::<f64>(value),
        },
        ("string", _) => de::<String>(value),
        ("boolean", _) => de::<bool>(value),
        ("object", _) => Some(format!(
            "invalid type: {}, expected a mapping of keys",
            unexpected(value)
        )),
        ("array", _) => Some(format!(
            "invalid type: {}, expected a sequence",
            unexpected(value)
        )),
        _ => None,
    }
}

/// A value as serde names it in "invalid type" messages.
fn unexpected(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {:?}", super::suggest::shorten(s)),
        Value::Sequence(_) => "sequence".into(),
        Value::Mapping(_) => "map".into(),
        Value::Tagged(_) => "tagged value".into(),
    }
}
