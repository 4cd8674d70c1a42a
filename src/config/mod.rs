//! The configuration layer shared by scenarios and sweeps. Owns everything about reading a YAML
//! input that is not about what the input means: reading a file safely ([`source::read_text`]),
//! following `extends:` and applying `--set` ([`source::Document`]), remembering where every key
//! was written, typed deserialization with the failing key's path and line ([`deserialize()`]),
//! the diagnostics themselves ([`error`]), "did you mean" suggestions ([`suggest`]) and durations
//! as users write them ([`duration`]). The scenario and sweep modules build their domain types on
//! top of it.

pub mod check;
pub mod duration;
pub mod error;
pub mod inputs;
pub mod read;
pub mod source;
pub mod suggest;
pub mod yaml;

pub use error::{ConfigError, Diagnostic, Origin, Paint};
pub use source::Document;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use yaml_serde::Value;

use check::Seg;

/// Typed deserialization of a document: every shape problem at once (see [`check`]), each at its
/// key path and line, in the order of the file.
pub fn deserialize<T: DeserializeOwned + JsonSchema + 'static>(
    doc: &Document,
) -> Result<T, ConfigError> {
    match deserialize_all::<T>(doc) {
        Partial {
            value: Some(value),
            problems,
            ..
        } if problems.is_empty() => Ok(value),
        Partial { problems, .. } => Err(doc.sorted(problems)),
    }
}

/// What [`deserialize_all`] makes of a document.
pub struct Partial<T> {
    /// The typed value of what is left once the values with a shape problem are taken out (a
    /// required one replaced by a placeholder); `None` only when even that does not deserialize.
    pub value: Option<T>,
    /// The shape problems.
    pub problems: Vec<Diagnostic>,
    /// The keys whose value is a placeholder, or whose meaning depends on one: a problem of
    /// meaning at, below or above one of them is no news.
    pub placeholders: Vec<String>,
}

impl<T> Partial<T> {
    /// Whether a problem of meaning at `key` is news: not at, below or above a value that has a
    /// shape problem (it was left out or replaced, so what its absence implies is no news) or
    /// within the scope of a placeholder.
    pub fn is_news(&self, key: &str) -> bool {
        let within = |key: &str, outer: &str| {
            key == outer
                || key.starts_with(&format!("{outer}."))
                || key.starts_with(&format!("{outer}["))
        };
        let shape = self.problems.iter().map(|p| p.key.as_str());
        !shape
            .chain(self.placeholders.iter().map(String::as_str))
            .any(|s| within(key, s) || within(s, key))
    }
}

/// Like [`deserialize()`], but also returns the typed value of what is left once the values with a
/// problem are taken out — a required one replaced by a placeholder of the right shape (see
/// [`check::StandIn`]) — so that the checks of meaning can run on the rest and report their
/// problems in the same run.
pub fn deserialize_all<T: DeserializeOwned + JsonSchema + 'static>(doc: &Document) -> Partial<T> {
    let found = check::check(&check::schema_of::<T>(), &doc.value, &doc.removals);
    if found.is_empty() {
        return match typed(doc) {
            Ok(value) => Partial {
                value: Some(value),
                problems: Vec::new(),
                placeholders: Vec::new(),
            },
            Err(e) => Partial {
                value: None,
                problems: e.diagnostics,
                placeholders: Vec::new(),
            },
        };
    }
    let mut rest = doc.value.clone();
    for f in found.iter().filter(|f| f.stand_in.is_none()) {
        remove(&mut rest, &f.path);
    }
    let mut placeholders = Vec::new();
    for s in found.iter().filter_map(|f| f.stand_in.as_ref()) {
        put(&mut rest, &s.path, s.value.clone());
        placeholders.push(s.scope.clone());
    }
    let value = T::deserialize(&rest).ok();
    let problems = found
        .into_iter()
        .map(|f| doc.diagnostic(&f.key, f.message))
        .collect();
    Partial {
        value,
        problems,
        placeholders,
    }
}

/// Puts `new` at `path` in `value` (nothing when a map or list on the way is not there).
fn put(value: &mut Value, path: &[Seg], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = value;
    for seg in parents {
        let next = match seg {
            Seg::Key(k) => node.as_mapping_mut().and_then(|m| m.get_mut(k.as_str())),
            Seg::Index(i) => node.as_sequence_mut().and_then(|s| s.get_mut(*i)),
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    match last {
        Seg::Key(k) => {
            if let Some(m) = node.as_mapping_mut() {
                m.insert(Value::String(k.clone()), new);
            }
        }
        Seg::Index(i) => {
            if let Some(item) = node.as_sequence_mut().and_then(|s| s.get_mut(*i)) {
                *item = new;
            }
        }
    }
}

/// Takes the node at `path` out of `value` (nothing when it is not there).
fn remove(value: &mut Value, path: &[Seg]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = value;
    for seg in parents {
        let next = match seg {
            Seg::Key(k) => node.as_mapping_mut().and_then(|m| m.get_mut(k.as_str())),
            Seg::Index(i) => node.as_sequence_mut().and_then(|s| s.get_mut(*i)),
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    match last {
        Seg::Key(k) => {
            if let Some(m) = node.as_mapping_mut() {
                m.shift_remove(k.as_str());
            }
        }
        // An item cannot be taken out without renumbering the rest: null it instead.
        Seg::Index(i) => {
            if let Some(item) = node.as_sequence_mut().and_then(|s| s.get_mut(*i)) {
                *item = Value::Null;
            }
        }
    }
}

/// serde's deserialization, for what the shape check lets through.
fn typed<T: DeserializeOwned>(doc: &Document) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(&doc.value).map_err(|e| {
        let mut key = e.path().to_string();
        if key == "." {
            key.clear();
        }
        let inner = strip_yaml_location(&e.inner().to_string());
        let (message, unknown) = check::wording(&inner);
        // serde_path_to_error's path already ends at the unknown key; add it only if it does not.
        if let Some(word) = unknown
            && !(key == word || key.ends_with(&format!(".{word}")))
        {
            key = if key.is_empty() {
                word
            } else {
                format!("{key}.{word}")
            };
        }
        ConfigError::one(doc.diagnostic(&key, message))
    })
}

fn strip_yaml_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}
