//! `loadsim schema scenario|sweep`: print the JSON Schema of a file format on stdout, for editors
//! and other tools.

use super::Output;
use crate::Error;
use crate::schema::{self, SchemaKind};

/// The schema of `kind` as text.
pub fn schema(kind: SchemaKind) -> Result<Output, Error> {
    Ok(Output::stdout(schema::to_text(&schema::schema(kind))))
}
