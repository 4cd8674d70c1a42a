//! Loading with overrides, for every command that runs scenarios. A [`Subject`] is a scenario file
//! read once (with its `extends` chain) and the user's `--set`s applied; each run of a grid is
//! built from a copy of it with the run's own overrides (a boundary probe's value, a tuner's
//! candidate) and seed. Problems of every file are collected and reported together, each once.

use std::path::{Path, PathBuf};

use crate::scenario::{ConfigError, Diagnostic, Document, Scenario};

/// A scenario file loaded once with the user's `--set`s.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The file as named on the command line.
    pub file: PathBuf,
    /// The merged document, `--set`s applied.
    pub doc: Document,
}

impl Subject {
    /// Reads `file` (and its `extends` chain) and applies `sets` in order. Problems of the files
    /// it imports are kept in the document and reported when it is validated
    /// ([`Subject::scenario`]), with every other problem.
    pub fn load(file: &Path, sets: &[String]) -> Result<Subject, ConfigError> {
        let mut doc = crate::import::load_all(file)?;
        for s in sets {
            doc.apply_set(s)?;
        }
        Ok(Subject {
            file: file.to_owned(),
            doc,
        })
    }

    /// The validated scenario with `overrides` (more `KEY=VALUE` arguments) applied on a copy,
    /// and `seed` in place of the file's if given.
    pub fn scenario(
        &self,
        overrides: &[String],
        seed: Option<u64>,
    ) -> Result<Scenario, ConfigError> {
        let built = if overrides.is_empty() {
            Scenario::from_document(&self.doc)
        } else {
            let mut doc = self.doc.clone();
            for o in overrides {
                doc.apply_set(o)?;
            }
            Scenario::from_document(&doc)
        };
        let mut sc = built?;
        if let Some(seed) = seed {
            sc.seed = seed;
        }
        Ok(sc)
    }

    /// Every file the scenario was read from: the file, then its `extends` chain, then the files
    /// its edges `import`, then the other files read while validating it or a copy (traces).
    pub fn inputs(&self) -> Vec<PathBuf> {
        self.doc.input_paths()
    }
}

/// Loads every file with the same `sets`; all files' problems are reported together.
pub fn load_subjects(files: &[PathBuf], sets: &[String]) -> Result<Vec<Subject>, ConfigError> {
    collect_all(files.iter().map(|f| Subject::load(f, sets)))
}

/// The values of `results` in order, or every problem of the failed ones together (each once).
pub fn collect_all<T>(
    results: impl IntoIterator<Item = Result<T, ConfigError>>,
) -> Result<Vec<T>, ConfigError> {
    let mut values = Vec::new();
    let mut problems: Vec<Diagnostic> = Vec::new();
    for r in results {
        match r {
            Ok(v) => values.push(v),
            Err(e) => {
                for d in e.diagnostics {
                    if !problems.contains(&d) {
                        problems.push(d);
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(values)
    } else {
        Err(ConfigError {
            diagnostics: problems,
        })
    }
}

/// Loads and validates every file with `sets` (and `seed` in place of each file's, if given):
/// each subject with its scenario, in argument order; all files' problems together.
pub fn load_scenarios(
    files: &[PathBuf],
    sets: &[String],
    seed: Option<u64>,
) -> Result<Vec<(Subject, Scenario)>, ConfigError> {
    collect_all(files.iter().map(|f| {
        let subject = Subject::load(f, sets)?;
        let sc = subject.scenario(&[], seed)?;
        Ok((subject, sc))
    }))
}
