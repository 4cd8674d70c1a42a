//! `loadsim new NAME [--from POLICY]`: write a commented starter scenario that runs as is. Owns the
//! starter templates (`templates/*.yaml`, one per article policy). Each template is self-contained
//! — no `extends`, every key the policy uses written out and commented — because a new user edits
//! one file, not a chain of them; a test keeps each template equal, once loaded, to the shipped
//! scenario of the same name. The file's first line (a yaml-language-server modeline) points
//! editors at the scenario schema: the project's `schema/scenario.schema.json` when the folder or
//! one above it has one (as this repository does), else a copy written next to the scenario.

use std::path::{Path, PathBuf};

use super::Output;
use crate::Error;
use crate::config::ConfigError;
use crate::runner::{Target, output_error};
use crate::schema;

/// File name of the schema written next to a new scenario, and named by its modeline.
pub const SCHEMA_FILE: &str = "scenario.schema.json";

/// The policies a starter scenario can start from (the article's four).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Template {
    /// 1 s timeouts and 3 retries at every layer, no deadlines, unbounded queues.
    Naive,
    /// Deadlines propagated down the chain, expired work dropped at dequeue.
    Deadline,
    /// Deadlines, plus retries in one place only under a gRFC A6 throttle.
    #[value(name = "deadline_budget")]
    DeadlineBudget,
    /// Deadlines, throttled retries, bounded queues with fast reject.
    Protected,
}

impl Template {
    /// Every template, in the article's order.
    pub const ALL: [Template; 4] = [
        Template::Naive,
        Template::Deadline,
        Template::DeadlineBudget,
        Template::Protected,
    ];

    /// The name used by `--from` and by the shipped scenario file.
    pub fn name(self) -> &'static str {
        match self {
            Template::Naive => "naive",
            Template::Deadline => "deadline",
            Template::DeadlineBudget => "deadline_budget",
            Template::Protected => "protected",
        }
    }

    /// The template text, with `__NAME__` and `__FILE__` placeholders.
    pub fn text(self) -> &'static str {
        match self {
            Template::Naive => include_str!("templates/naive.yaml"),
            Template::Deadline => include_str!("templates/deadline.yaml"),
            Template::DeadlineBudget => include_str!("templates/deadline_budget.yaml"),
            Template::Protected => include_str!("templates/protected.yaml"),
        }
    }
}

/// Arguments of `loadsim new`, independent of clap.
#[derive(Clone, Debug)]
pub struct NewRequest {
    /// `checkout`, `checkout.yaml` or `scenarios/checkout.yaml`; `.yaml` is added when missing.
    pub name: PathBuf,
    /// `--from`: the article policy the scenario starts from.
    pub from: Template,
    /// Overwrite an existing scenario file, or a different `scenario.schema.json` next to it.
    pub force: bool,
    /// Also write the editor schema next to the file and name it in a modeline.
    pub schema: bool,
}

/// How many folders up `new` looks for a project's `schema/scenario.schema.json`.
const SCHEMA_SEARCH_DEPTH: usize = 6;

/// What `new` wrote, for the message on stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The scenario file written.
    pub scenario: PathBuf,
    /// The schema copy written next to the scenario, if one was.
    pub schema: Option<PathBuf>,
    /// The modeline's target, relative to the scenario's folder, if there is a modeline.
    pub modeline: Option<String>,
}

/// The scenario text for `name` (the file stem) written at `file`, with a modeline naming
/// `schema` (relative to the file's folder) if given.
pub fn render(template: Template, name: &str, file: &str, schema: Option<&str>) -> String {
    let body = template
        .text()
        .replace("__NAME__", name)
        .replace("__FILE__", file);
    match schema {
        Some(target) => format!("# yaml-language-server: $schema={target}\n{body}"),
        None => body,
    }
}

/// `schema/scenario.schema.json` in `dir` or a folder above it, relative to `dir`.
fn project_schema(dir: &Path) -> Option<String> {
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors()
        .take(SCHEMA_SEARCH_DEPTH)
        .position(|a| a.join("schema").join(SCHEMA_FILE).is_file())
        .map(|up| format!("{}schema/{SCHEMA_FILE}", "../".repeat(up)))
}

/// Writes the starter scenario (and the schema next to it).
pub fn new_scenario(req: &NewRequest) -> Result<Written, Error> {
    let path = with_yaml_extension(&req.name);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem.is_empty() || stem.starts_with('.') {
        return Err(ConfigError::flag(
            "NAME",
            format!(
                "`{}` has no file name; give one like `checkout` or `scenarios/checkout.yaml`",
                req.name.display()
            ),
        )
        .into());
    }
    if path.exists() && !req.force {
        return Err(ConfigError::file(
            &path,
            "already exists; choose another name, or pass --force to overwrite it",
        )
        .into());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let folder = dir.unwrap_or(Path::new("."));
    let existing = req.schema.then(|| project_schema(folder)).flatten();
    let modeline = match (&existing, req.schema) {
        (Some(target), _) => Some(target.clone()),
        (None, true) => Some(SCHEMA_FILE.to_owned()),
        (None, false) => None,
    };
    // The schema next to the file: written unless the same text is already there; a different
    // file of that name is not ours to replace without --force. Checked before anything is
    // written.
    let schema_path = dir.unwrap_or(Path::new("")).join(SCHEMA_FILE);
    let schema_text = schema::to_text(&schema::scenario());
    let write_schema = req.schema
        && existing.is_none()
        && crate::config::read::read_regular(&schema_path, crate::config::read::MAX_FILE_BYTES)
            .ok()
            .as_deref()
            != Some(schema_text.as_str());
    if write_schema && schema_path.exists() && !req.force {
        return Err(ConfigError::file(
            &schema_path,
            "already exists and is not loadsim's scenario schema; pass --force to overwrite it, or --no-schema to write no schema",
        )
        .into());
    }
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).map_err(|e| output_error(dir, e))?;
    }
    let text = render(
        req.from,
        &stem,
        &path.display().to_string(),
        modeline.as_deref(),
    );
    Target::unplanned(&path).write(text.as_bytes())?;
    let schema = if write_schema {
        Target::unplanned(&schema_path).write(schema_text.as_bytes())?;
        Some(schema_path)
    } else {
        None
    };
    Ok(Written {
        scenario: path,
        schema,
        modeline,
    })
}

/// `loadsim new`: writes the starter scenario and says on stderr what was written and how to run
/// it.
pub fn new(req: &NewRequest) -> Result<Output, Error> {
    let w = new_scenario(req)?;
    let mut note = format!("wrote {}", w.scenario.display());
    match (&w.schema, &w.modeline) {
        (Some(s), _) => note.push_str(&format!(" and {} (its editor schema)", s.display())),
        (None, Some(m)) => note.push_str(&format!(" (its editor schema: {m})")),
        (None, None) => {}
    }
    note.push_str(&format!(
        "; run it with `loadsim run {}`",
        w.scenario.display()
    ));
    Ok(Output::note(note))
}

fn with_yaml_extension(name: &Path) -> PathBuf {
    match name.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => name.to_owned(),
        _ => {
            let mut s = name.as_os_str().to_owned();
            s.push(".yaml");
            PathBuf::from(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_yaml_only_when_missing() {
        assert_eq!(
            with_yaml_extension(Path::new("a/checkout")),
            PathBuf::from("a/checkout.yaml")
        );
        assert_eq!(
            with_yaml_extension(Path::new("checkout.yml")),
            PathBuf::from("checkout.yml")
        );
        assert_eq!(
            with_yaml_extension(Path::new("v1.2")),
            PathBuf::from("v1.2.yaml")
        );
    }

    #[test]
    fn templates_have_no_extends_and_fill_their_placeholders() {
        for t in Template::ALL {
            let text = render(t, "checkout", "checkout.yaml", Some(SCHEMA_FILE));
            assert!(text.starts_with("# yaml-language-server: $schema="));
            assert!(!text.contains("__"), "{}", t.name());
            assert!(!text.contains("\nextends:"), "{}", t.name());
        }
    }
}
