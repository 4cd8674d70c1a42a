//! What `loadsim tune` checked before anything runs ([`Plan`]): the scenario, the axes, the
//! fault variants, the requirements and the objective, which the search (the parent module) and
//! the report ([`super::render`]) both read.

use crate::analysis::tune::{Requirement, Search, TuneAxis};
use crate::config::Document;
use crate::runner::Subject;

/// One scenario a candidate runs in: healthy load or one fault of the set.
pub(super) struct Variant {
    /// `healthy`, or the fault's name.
    pub(super) name: String,
    pub(super) doc: Document,
    /// The `--set` arguments that turn the scenario file into this variant.
    pub(super) reproduce: Vec<String>,
}

/// Everything checked before anything runs.
pub(super) struct Plan {
    pub(super) subject: Subject,
    pub(super) scenario: String,
    pub(super) axes: Vec<TuneAxis>,
    pub(super) faults_name: String,
    pub(super) target: String,
    /// `variants[0]` is healthy load; then one per fault, in the fault set's order.
    pub(super) variants: Vec<Variant>,
    pub(super) requirements: Vec<Requirement>,
    /// The metric minimised (its mean over the seeds).
    pub(super) objective: String,
    /// The variant the objective is measured in (0: healthy load).
    pub(super) objective_variant: usize,
    pub(super) search: Search,
    pub(super) seeds: Vec<u64>,
    pub(super) inputs_sha256: String,
}

/// The `--set` arguments that give each axis its value in `values`.
pub(crate) fn set_args(axes: &[TuneAxis], values: &[f64]) -> Vec<String> {
    axes.iter()
        .zip(values)
        .map(|(a, &v)| a.axis.set_arg(v))
        .collect()
}
