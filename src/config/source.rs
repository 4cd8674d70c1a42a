//! YAML documents with their origins. Owns reading a file safely (regular files only, bounded in
//! size), following `extends:` (deep merge, paths relative to the file that names them, cycles
//! refused), applying `--set KEY=VALUE` overrides by dotted path, and remembering where every key
//! was written so that later errors can name the file, line and column. Text becomes a value in
//! [`super::yaml`], the one YAML parser; the merged document is a `yaml_serde::Value`, checked and
//! deserialized by [`super::deserialize`](fn@super::deserialize).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use yaml_serde::{Mapping, Value};

use super::error::{ConfigError, Diagnostic, Origin};
use super::inputs::Inputs;
use super::read::read_text;
pub use super::yaml::Pos;

/// Deepest `extends` chain followed.
const MAX_EXTENDS_DEPTH: usize = 16;

/// What reading the `calls.<callee>.import` keys of one file gives ([`Resolve`]): the notes of unsupported
/// fields not acknowledged, the files read (with their text), where each imported value is
/// written in its source file, and the problems found — kept, so that they are reported with the
/// problems of the rest of the scenario in one pass.
#[derive(Debug, Default)]
pub struct Resolved {
    /// Notes for stderr: the unsupported fields not acknowledged.
    pub notes: Vec<String>,
    /// The files imported, each with its text.
    pub read: Vec<(PathBuf, String)>,
    /// Each imported file, its `keys` being the scenario keys its values became, with the index
    /// of the file that imports it (in [`Document::files`]).
    pub sources: Vec<(usize, SourceFile)>,
    /// The problems found while importing.
    pub problems: Vec<Diagnostic>,
    /// The edges (`services.<s>.calls.<c>`) whose import failed: their keys are incomplete.
    pub failed: Vec<String>,
}

impl Resolved {
    fn extend(&mut self, other: Resolved) {
        self.notes.extend(other.notes);
        self.read.extend(other.read);
        self.sources.extend(other.sources);
        self.problems.extend(other.problems);
        self.failed.extend(other.failed);
    }
}

/// Replaces the `calls.<callee>.import` keys of one file's own document by what they import
/// (`crate::import::resolve_imports`, which this layer does not know): given the file's path, its
/// index in [`Document::files`], its value, where its keys are written and its text.
pub type Resolve = fn(&Path, usize, &mut Value, &HashMap<String, Pos>, &str) -> Resolved;

/// One file that contributed to a document.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The file read.
    pub path: PathBuf,
    /// Its text, for the source line of a diagnostic.
    pub text: String,
    /// Dotted key path → where the key is written.
    pub keys: HashMap<String, Pos>,
}

/// One `--set KEY=VALUE` override.
#[derive(Debug, Clone)]
pub struct SetOverride {
    /// The dotted key path it sets.
    pub key: String,
    /// The argument as given (`KEY=VALUE`).
    pub argument: String,
}

/// A key that a `null` removed, in a file that `extends` another or by `--set KEY=null`. Whether
/// the removal means something depends on the schema, so it is checked with the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The keys from the top of the document.
    pub path: Vec<String>,
    /// Whether the key was there to remove.
    pub existed: bool,
    /// The keys beside it in the base, for a suggestion.
    pub siblings: Vec<String>,
}

/// A merged YAML document and the files and overrides it came from.
#[derive(Debug, Clone)]
pub struct Document {
    /// The merged value: the `extends` chain merged, then every `--set` applied.
    pub value: Value,
    /// The file named on the command line first, then its `extends` chain.
    pub files: Vec<SourceFile>,
    /// The `--set` overrides, in the order applied.
    pub sets: Vec<SetOverride>,
    /// What `null` removed while merging and setting.
    pub removals: Vec<Removal>,
    /// Notes for stderr from reading the files: the unsupported fields of each
    /// `calls.<callee>.import` (see [`crate::import`]).
    pub notes: Vec<String>,
    /// The files named by `calls.<callee>.import`, with their text (inputs of the document
    /// beside `files`, which holds only the `extends` chain).
    pub imported: Vec<(PathBuf, String)>,
    /// The same files, each with the scenario keys its values became and where each is written
    /// there, so that a problem with an imported value names the source's line.
    pub import_sources: Vec<(usize, SourceFile)>,
    /// Problems found while importing (a file that cannot be read or is invalid), kept so that
    /// validation reports them with every other problem of the document ([`Document::load_all_with`]).
    pub deferred: Vec<Diagnostic>,
    /// The edges (`services.<s>.calls.<c>`) whose import failed, so lack the imported keys.
    pub incomplete: Vec<String>,
    /// The other files the scenario reads (traces), recorded as validation reads them; shared
    /// by every copy of this document ([`super::inputs`]).
    pub inputs: Inputs,
}

impl Document {
    /// Reads `path` and every file it extends, and merges them, each file's imports replaced by
    /// `resolve`; a problem with a file it imports is an error.
    pub fn load_with(path: &Path, resolve: Resolve) -> Result<Document, ConfigError> {
        let doc = Self::load_all_with(path, resolve)?;
        if doc.deferred.is_empty() {
            Ok(doc)
        } else {
            Err(doc.sorted(doc.deferred.clone()))
        }
    }

    /// Like [`Document::load_with`], but the problems of the files it imports are kept in
    /// [`Document::deferred`], for validation to report with the rest in one pass.
    pub fn load_all_with(path: &Path, resolve: Resolve) -> Result<Document, ConfigError> {
        let mut files = Vec::new();
        let mut chain: Vec<PathBuf> = Vec::new();
        let mut removals = Vec::new();
        let mut imports = Resolved::default();
        let value = load_with_extends(
            path,
            &mut files,
            &mut chain,
            &mut removals,
            (resolve, &mut imports),
        )?;
        Ok(Document {
            value,
            files,
            sets: Vec::new(),
            removals,
            notes: imports.notes,
            imported: imports.read,
            import_sources: imports.sources,
            deferred: imports.problems,
            incomplete: imports.failed,
            inputs: Inputs::default(),
        })
    }

    /// Parses a document from text (for tests and for documents that do not live in a file).
    pub fn from_text(path: &Path, text: &str) -> Result<Document, ConfigError> {
        let (value, file) = parse_file(path, text)?;
        Ok(Document {
            value,
            files: vec![file],
            sets: Vec::new(),
            removals: Vec::new(),
            notes: Vec::new(),
            imported: Vec::new(),
            import_sources: Vec::new(),
            deferred: Vec::new(),
            incomplete: Vec::new(),
            inputs: Inputs::default(),
        })
    }

    /// Applies `KEY=VALUE` (a dotted path and a YAML value) on top of the document. A map on the
    /// way that is a key of the schema is created if missing (`arrivals.scale` beside `clients`),
    /// an entry of a named map (a service, a callee, a class, a fault) must exist; new keys are
    /// checked by the schema later, at this argument. `KEY=null` removes the key, as `null` does in a file that extends
    /// another; an empty value is refused.
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
        if raw_value.trim().is_empty() {
            return Err(err(
                key,
                format!(
                    "the value is empty; give one, like `{key}=…`, or write `{key}=null` to remove \
                     the key"
                ),
            ));
        }
        let new_value = super::yaml::parse(raw_value)
            .map(|p| p.value)
            .map_err(|problems| {
                let m = problems
                    .first()
                    .map(|p| p.message.as_str())
                    .unwrap_or("cannot be read");
                let m = m.strip_prefix("not valid YAML: ").map_or_else(
                    || format!("the value {m}"),
                    |rest| format!("the value is not valid YAML: {rest}"),
                );
                err(key, m)
            })?;
        if new_value.is_null() {
            let removal = remove_path(&mut self.value, key).map_err(|m| err(key, m))?;
            self.removals.push(removal);
        } else {
            set_path(&mut self.value, key, new_value).map_err(|m| err(key, m))?;
        }
        self.sets.push(SetOverride {
            key: key.to_owned(),
            argument: argument.to_owned(),
        });
        Ok(())
    }

    /// Where `key` was written: the last `--set` that covers it, else the first file (child before
    /// base, then the files it imports) that writes it or its nearest written ancestor.
    pub fn locate(&self, key: &str) -> Origin {
        self.locate_set(key)
            .unwrap_or_else(|| self.locate_in_files(key))
    }

    /// Whether a file of the document (or one it imports) writes `key` itself.
    fn written(&self, key: &str) -> bool {
        self.files
            .iter()
            .chain(self.import_sources.iter().map(|(_, f)| f))
            .any(|f| f.keys.contains_key(key))
    }

    fn locate_set(&self, key: &str) -> Option<Origin> {
        for set in self.sets.iter().rev() {
            if key == set.key
                || key.starts_with(&format!("{}.", set.key))
                || key.starts_with(&format!("{}[", set.key))
                || (set.key.starts_with(&format!("{key}.")) && !self.written(key))
            {
                // The `--set` wrote the key, or created the map `key` on its way.
                return Some(Origin::Set {
                    argument: set.argument.clone(),
                    file: self.path().to_owned(),
                });
            }
        }
        None
    }

    fn locate_in_files(&self, key: &str) -> Origin {
        let mut probe = key.to_owned();
        loop {
            // Each file, then the files it imports (the keys written beside `import` first).
            let owned = |i: usize| {
                self.import_sources
                    .iter()
                    .filter(move |(k, _)| *k == i)
                    .map(|(_, f)| f)
            };
            let ordered = self
                .files
                .iter()
                .enumerate()
                .flat_map(|(i, f)| std::iter::once(f).chain(owned(i)));
            for file in ordered {
                if let Some(pos) = file.keys.get(&probe) {
                    return Origin::File {
                        path: file.path.clone(),
                        line: Some(pos.line),
                        column: Some(pos.column),
                        source_line: source_line(&file.text, pos.line).map(str::to_owned),
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

    /// `diagnostics` in the order of the input: the files (the one named on the command line
    /// first, then its `extends` chain) by line and column, then `--set` arguments, then flags.
    pub fn sorted(&self, mut diagnostics: Vec<Diagnostic>) -> ConfigError {
        diagnostics.sort_by_key(|d| match &d.origin {
            Origin::File {
                path, line, column, ..
            } => (
                0,
                // The files it imports (or reads otherwise) after the extends chain.
                self.files
                    .iter()
                    .position(|f| &f.path == path)
                    .unwrap_or(self.files.len()),
                line.unwrap_or(0),
                column.unwrap_or(0),
            ),
            Origin::Set { .. } => (1, 0, 0, 0),
            Origin::Flag { .. } => (2, 0, 0, 0),
        });
        ConfigError { diagnostics }
    }

    /// Every file the document was read from, as named: the file, its `extends` chain, the files
    /// its edges `import`, then every other file read while validating it or a copy of it (a
    /// trace), in the order first read.
    pub fn input_paths(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .map(|f| f.path.clone())
            .chain(self.imported.iter().map(|(p, _)| p.clone()))
            .chain(self.inputs.files().into_iter().map(|f| f.path))
            .collect()
    }

    /// What identifies the document's inputs in a journal's hash: the text of each file of the
    /// `extends` chain, of each imported file, then `<kind> <sha256>` of each other file read (a
    /// trace), in the order first read. Hash it after validating every copy the command runs.
    pub fn identity(&self) -> Vec<Vec<u8>> {
        self.files
            .iter()
            .map(|f| f.text.clone().into_bytes())
            .chain(self.imported.iter().map(|(_, t)| t.clone().into_bytes()))
            .chain(self.inputs.identity())
            .collect()
    }

    /// The folder a path written at `key` resolves against: that of the file that wrote it (a
    /// base it `extends` may live elsewhere), or the document's own for a `--set`.
    pub fn folder_of(&self, key: &str) -> PathBuf {
        let file = match self.locate(key) {
            Origin::File { path, .. } => path,
            Origin::Set { .. } | Origin::Flag { .. } => self.path().to_owned(),
        };
        file.parent().unwrap_or(Path::new("")).to_owned()
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

/// Reads the YAML text of `path`: its value (a mapping) and where its keys are. Every problem of
/// the text is reported together, each at its line.
fn parse_file(path: &Path, text: &str) -> Result<(Value, SourceFile), ConfigError> {
    let parsed = super::yaml::parse(text).map_err(|problems| ConfigError {
        diagnostics: problems
            .into_iter()
            .map(|p| Diagnostic {
                origin: Origin::File {
                    path: path.to_owned(),
                    line: p.pos.map(|p| p.line),
                    column: p.pos.map(|p| p.column),
                    source_line: p
                        .pos
                        .and_then(|p| source_line(text, p.line))
                        .map(str::to_owned),
                },
                key: p.key,
                message: p.message,
            })
            .collect(),
    })?;
    match parsed.value {
        Value::Mapping(_) => Ok((
            parsed.value,
            SourceFile {
                path: path.to_owned(),
                text: text.to_owned(),
                keys: parsed.keys,
            },
        )),
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

/// Line `line` (1-based) of `text`, without a byte-order mark.
fn source_line(text: &str, line: usize) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines().nth(line.checked_sub(1)?)
}

fn load_with_extends(
    path: &Path,
    files: &mut Vec<SourceFile>,
    chain: &mut Vec<PathBuf>,
    removals: &mut Vec<Removal>,
    (resolve, imports): (Resolve, &mut Resolved),
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
    let (mut value, file) = parse_file(path, &text)?;
    imports.extend(resolve(path, files.len(), &mut value, &file.keys, &text));
    files.push(file);
    let index = files.len() - 1;

    let extends = value
        .as_mapping_mut()
        .and_then(|m| m.shift_remove("extends"));
    let merged = match extends {
        None => value,
        Some(Value::String(base)) => {
            let base_path = path.parent().unwrap_or(Path::new(".")).join(&base);
            let mut base_value = load_with_extends(
                &base_path,
                files,
                chain,
                removals,
                (resolve, imports),
            )
            .map_err(|mut e| {
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
            deep_merge(&mut base_value, value, &mut Vec::new(), removals);
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
                        .and_then(|p| source_line(&files[index].text, p.line))
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
/// removes the key from the base (recorded in `removals`, with `at` the path of `base`), anything
/// else replaces.
pub fn deep_merge(
    base: &mut Value,
    overlay: Value,
    at: &mut Vec<String>,
    removals: &mut Vec<Removal>,
) {
    match (base, overlay) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            for (k, v) in o {
                let name = key_name(&k);
                if v.is_null() {
                    let siblings = b.keys().map(key_name).collect();
                    let existed = b.shift_remove(&k).is_some();
                    let mut path = at.clone();
                    path.push(name);
                    removals.push(Removal {
                        path,
                        existed,
                        siblings,
                    });
                    continue;
                }
                match b.get_mut(&k) {
                    Some(slot) => {
                        at.push(name);
                        deep_merge(slot, v, at, removals);
                        at.pop();
                    }
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// A mapping key as text (keys read by [`super::yaml`] are always strings).
fn key_name(k: &Value) -> String {
    k.as_str().map_or_else(|| format!("{k:?}"), str::to_owned)
}

/// Removes the dotted `key` from `root`; every map on the way must exist.
fn remove_path(root: &mut Value, key: &str) -> Result<Removal, String> {
    let (parent, last) = match key.rsplit_once('.') {
        Some((p, l)) => (Some(p), l),
        None => (None, key),
    };
    if last.is_empty() {
        return Err(
            "the key has an empty segment; expected a dotted path like `services.svc_a.slots`"
                .into(),
        );
    }
    let map = match parent {
        None => root.as_mapping_mut(),
        Some(p) => {
            // Walk with the same checks and messages as setting; then every map on the way must
            // exist (there is nothing to remove under a map that is not there).
            check_path(root, key)?;
            if let Some(missing) = first_missing(root, p) {
                return Err(missing);
            }
            navigate(root, p)
        }
    };
    let Some(map) = map else {
        return Err(format!("`{}` is not a mapping", parent.unwrap_or("")));
    };
    let siblings = map.keys().map(key_name).collect();
    let existed = map.shift_remove(last).is_some();
    Ok(Removal {
        path: key.split('.').map(str::to_owned).collect(),
        existed,
        siblings,
    })
}

/// The mapping at the dotted `key`, if every segment exists and it is one.
fn navigate<'v>(root: &'v mut Value, key: &str) -> Option<&'v mut Mapping> {
    let mut node = root;
    for part in key.split('.') {
        node = node.as_mapping_mut()?.get_mut(part)?;
    }
    node.as_mapping_mut()
}

/// Whether the key under the dotted path `parent` names one of the scenario's own entries (a
/// service, a callee, a class, a fault) rather than a key of the schema: such a key must already
/// exist to be set through, since creating it would add a service or a call, not set a value.
fn names_an_entry(parent: &[&str]) -> bool {
    matches!(
        parent,
        ["services"] | ["clients"] | ["faults"] | ["services", _, "calls"]
    )
}

/// "there is no key …" for the first segment of the dotted `path` missing in `root`, if one is.
fn first_missing(root: &Value, path: &str) -> Option<String> {
    let mut node = root;
    let mut so_far = String::new();
    for part in path.split('.') {
        let map = node.as_mapping()?;
        match map.get(part) {
            Some(n) => node = n,
            None => {
                let place = if so_far.is_empty() {
                    "the top level".to_owned()
                } else {
                    format!("`{so_far}`")
                };
                return Some(format!(
                    "there is no key `{part}` at {place}{}",
                    super::suggest::did_you_mean(part, map.keys().filter_map(Value::as_str))
                ));
            }
        }
        if !so_far.is_empty() {
            so_far.push('.');
        }
        so_far.push_str(part);
    }
    None
}

/// Sets `key` (dotted) in `root` to `value`. Every map on the way is created if missing, except
/// the scenario's own entries (services, callees, classes, faults), which must exist. On an
/// error `root` is unchanged.
pub fn set_path(root: &mut Value, key: &str, value: Value) -> Result<(), String> {
    let parts = check_path(root, key)?;
    let mut node = root;
    for part in &parts[..parts.len() - 1] {
        let Value::Mapping(map) = node else {
            unreachable!("check_path walked this path")
        };
        // A fixed key of the schema (`arrivals`, `contention`, `retry_budget`…) is created
        // empty, so `--set arrivals.scale=2` works on a scenario with only `clients:`; a
        // misspelt one is then an unknown key, reported by validation at this `--set`.
        node = map
            .entry(Value::String((*part).to_owned()))
            .or_insert_with(|| Value::Mapping(Mapping::new()));
    }
    let Value::Mapping(map) = node else {
        unreachable!("check_path walked this path")
    };
    map.insert(Value::String(parts[parts.len() - 1].to_owned()), value);
    Ok(())
}

/// The segments of `key` if [`set_path`] can set it in `root`: no empty segment, no scalar on
/// the way, and every entry of a named map (a service, a callee, a class, a fault) present.
fn check_path<'k>(root: &Value, key: &'k str) -> Result<Vec<&'k str>, String> {
    if key.is_empty() {
        return Err("the key is empty; expected a dotted path like `services.svc_a.slots`".into());
    }
    let parts: Vec<&str> = key.split('.').collect();
    // `None` once the walk is inside a map that setting will create.
    let mut node = Some(root);
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(
                "the key has an empty segment; expected a dotted path like `services.svc_a.slots`"
                    .into(),
            );
        }
        let so_far = parts[..i].join(".");
        let map = match node {
            None => None,
            Some(Value::Mapping(m)) => Some(m),
            Some(_) => {
                return Err(format!(
                    "`{so_far}` is not a mapping, so it has no key `{part}`"
                ));
            }
        };
        if i + 1 == parts.len() {
            break;
        }
        let child = map.and_then(|m| m.get(*part));
        if child.is_none() && names_an_entry(&parts[..i]) {
            let place = if so_far.is_empty() {
                "the top level".to_owned()
            } else {
                format!("`{so_far}`")
            };
            let known: Vec<&str> = map
                .map(|m| m.keys().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            return Err(format!(
                "there is no key `{part}` at {place}{}",
                super::suggest::did_you_mean(part, known.into_iter())
            ));
        }
        node = child;
    }
    Ok(parts)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_merge_merges_maps_and_replaces_scalars() {
        let mut base: Value = yaml_serde::from_str("a: {x: 1, y: 2}\nb: 3").unwrap();
        let over: Value = yaml_serde::from_str("a: {y: 5, z: 6}\nb: 4").unwrap();
        let mut removals = Vec::new();
        deep_merge(&mut base, over, &mut Vec::new(), &mut removals);
        let want: Value = yaml_serde::from_str("a: {x: 1, y: 5, z: 6}\nb: 4").unwrap();
        assert_eq!(base, want);
        assert!(removals.is_empty());
        let removal: Value = yaml_serde::from_str("a: {x: null, w: null}\nb: ~").unwrap();
        deep_merge(&mut base, removal, &mut Vec::new(), &mut removals);
        let want: Value = yaml_serde::from_str("a: {y: 5, z: 6}").unwrap();
        assert_eq!(base, want);
        let seen: Vec<(String, bool)> = removals
            .iter()
            .map(|r| (r.path.join("."), r.existed))
            .collect();
        let expected = [("a.x", true), ("a.w", false), ("b", true)];
        assert_eq!(
            seen,
            expected.map(|(k, e)| (k.to_owned(), e)),
            "{removals:?}"
        );
    }

    #[test]
    fn set_path_replaces_creates_last_key_and_refuses_missing_parents() {
        let mut v: Value = yaml_serde::from_str("services: {svc_a: {slots: 1}}").unwrap();
        set_path(&mut v, "services.svc_a.queue_cap", Value::from(4)).unwrap();
        assert!(path_exists(&v, "services.svc_a.queue_cap"));
        let e = set_path(&mut v, "services.svc_x.slots", Value::from(4)).unwrap_err();
        assert!(e.contains("no key `svc_x`"), "{e}");
        assert!(e.contains("did you mean `svc_a`"), "{e}");
        let before = v.clone();
        let e = set_path(&mut v, "services.svc_a.calls.db.retries", Value::from(1)).unwrap_err();
        assert!(e.contains("no key `db` at `services.svc_a.calls`"), "{e}");
        assert_eq!(v, before, "a refused key leaves nothing behind");
    }

    #[test]
    fn set_path_creates_missing_schema_keys_but_not_entries() {
        let mut v: Value =
            yaml_serde::from_str("clients: {web: {entry: a}}\nservices: {a: {slots: 1}}").unwrap();
        set_path(&mut v, "arrivals.scale", Value::from(2)).unwrap();
        set_path(&mut v, "services.a.contention.kappa", Value::from(0.5)).unwrap();
        let expected: Value = yaml_serde::from_str(
            "clients: {web: {entry: a}}\nservices: {a: {slots: 1, contention: {kappa: 0.5}}}\n\
             arrivals: {scale: 2}",
        )
        .unwrap();
        assert_eq!(v, expected);
        for key in ["clients.api.priority", "faults.slow.duration"] {
            assert!(set_path(&mut v, key, Value::from(1)).is_err(), "{key}");
        }
    }
}
