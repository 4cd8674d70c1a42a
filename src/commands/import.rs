//! `loadsim import grpc|envoy|traces`: print the loadsim edge policy equivalent to a gRPC service
//! config or an Envoy route/cluster, as commented YAML to paste under `calls.<callee>` (the reading
//! and translation are [`crate::import`]), or a scenario built from distributed traces
//! ([`crate::import::traces`]). Unsupported fields go to stderr, one line each, and with
//! `--strict` make the command fail with exit code 2; the traces' coverage report and defaults go
//! to stderr.

use std::path::{Path, PathBuf};

use super::Output;
use crate::Error;
use crate::import::{self, Imported};
use crate::runner::OutputPlan;

/// What to import.
#[derive(Clone, Debug)]
pub enum ImportRequest {
    /// A gRPC service config (JSON) and the methodConfig to read.
    Grpc {
        /// The service config file.
        file: PathBuf,
        /// `--service` and `--method`: which methodConfig to read.
        select: import::grpc::Select,
        /// `--strict`: exit 2 when a field has no exact loadsim meaning (each is named on stderr
        /// either way).
        strict: bool,
    },
    /// An Envoy configuration (YAML) and the route and/or cluster to read.
    Envoy {
        /// The Envoy configuration file.
        file: PathBuf,
        /// `--route` and `--cluster`: which route and cluster to read.
        select: import::envoy::Select,
        /// `--strict`: exit 2 when a field has no exact loadsim meaning (each is named on stderr
        /// either way).
        strict: bool,
    },
    /// Distributed traces: a scenario of the services they show.
    Traces {
        /// The trace files, read together.
        files: Vec<PathBuf>,
        /// `--format`: the format of every file; `None` when each file's shape says it.
        format: Option<import::traces::TraceFormat>,
        /// Write the scenario here instead of stdout.
        out: Option<PathBuf>,
        /// Own work as `{dist: empirical, samples: […]}` instead of quantiles.
        samples: bool,
        /// Services whose root CLIENT spans are a client's requests.
        clients: Vec<String>,
    },
}

/// Reads the source and renders the edge policy.
pub fn import(request: &ImportRequest) -> Result<Output, Error> {
    let (file, imported, strict) = match request {
        ImportRequest::Traces {
            files,
            format,
            out,
            samples,
            clients,
        } => return traces(files, *format, out.as_deref(), *samples, clients),
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

/// `loadsim import traces`: the scenario on stdout or in `--out` (planned like every output: never
/// an input, written atomically), the coverage report and the defaults on stderr.
fn traces(
    files: &[PathBuf],
    format: Option<import::traces::TraceFormat>,
    out: Option<&Path>,
    samples: bool,
    clients: &[String],
) -> Result<Output, Error> {
    let target = match out {
        Some(path) => {
            let mut plan = OutputPlan::new(files.iter().map(PathBuf::as_path));
            Some(plan.file("--out", path)?)
        }
        None => None,
    };
    let imported = import::traces::import(files, format, samples, clients)?;
    let mut notes = imported.report;
    match target {
        Some(target) => {
            target.write(imported.yaml.as_bytes())?;
            notes.push(format!("wrote {}", target.path().display()));
            Ok(Output {
                stdout: String::new(),
                notes,
            })
        }
        None => Ok(Output {
            stdout: imported.yaml,
            notes,
        }),
    }
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
