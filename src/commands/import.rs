//! `loadsim import grpc|envoy`: print the loadsim edge policy equivalent to a gRPC service config
//! or an Envoy route/cluster, as commented YAML to paste under `calls.<callee>` (the reading and
//! translation are [`crate::import`]). Unsupported fields go to stderr, one line each, and with
//! `--strict` make the command fail with exit code 2.

use std::path::{Path, PathBuf};

use super::Output;
use crate::Error;
use crate::import::{self, Imported};

/// What to import.
#[derive(Clone, Debug)]
pub enum ImportRequest {
    /// A gRPC service config (JSON) and the methodConfig to read.
    Grpc {
        file: PathBuf,
        select: import::grpc::Select,
        strict: bool,
    },
    /// An Envoy configuration (YAML) and the route and/or cluster to read.
    Envoy {
        file: PathBuf,
        select: import::envoy::Select,
        strict: bool,
    },
}

/// Reads the source and renders the edge policy.
pub fn import(request: &ImportRequest) -> Result<Output, Error> {
    let (file, imported, strict) = match request {
        ImportRequest::Grpc {
            file,
            select,
            strict,
        } => (file, import::grpc::import(file, select)?, *strict),
        ImportRequest::Envoy {
            file,
            select,
            strict,
        } => (file, import::envoy::import(file, select)?, *strict),
    };
    render(file, &imported, strict)
}

fn render(file: &Path, imported: &Imported, strict: bool) -> Result<Output, Error> {
    if strict && let Some(e) = imported.strict_error(file) {
        return Err(e.into());
    }
    Ok(Output {
        stdout: imported.to_yaml(file),
        notes: imported.unsupported_lines(file),
    })
}
