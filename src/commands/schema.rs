//! `loadsim schema scenario|sweep`: print the JSON Schema of a file format on stdout, for editors
//! and other tools.

use crate::Error;
use crate::scenario::ConfigError;
use crate::schema::{self, SchemaKind};

/// The schema of `kind` as text, or an error if this build lacks the format.
pub fn schema(kind: SchemaKind) -> Result<String, Error> {
    match schema::schema(kind) {
        Some(s) => Ok(schema::to_text(&s)),
        None => Err(ConfigError::flag(
            "schema sweep",
            "the sweep format is not available in this build",
        )
        .into()),
    }
}
