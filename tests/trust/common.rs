//! Helpers shared by the trust tests.

use std::path::{Path, PathBuf};

use loadsim::scenario::{ConfigError, Document, Scenario};

/// Path of a shipped scenario.
pub fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.yaml"))
}

/// Validates an in-memory scenario.
pub fn parse(yaml: &str) -> Result<Scenario, ConfigError> {
    let doc = Document::from_text(Path::new("test.yaml"), yaml)?;
    Scenario::from_document(&doc)
}
