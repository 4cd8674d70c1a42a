//! Call stages (`services.<s>.stages`) and call probability (`services.<s>.calls.<callee>.probability`):
//! the order a job makes its calls in, and which calls it makes at all. Owns the YAML form of a
//! stage, the validation of both keys, and the plan the simulation follows.
//!
//! `stages` is a list run in order; each stage is `{parallel: [callees]}` (started together, the
//! stage done when all have succeeded) or `{sequential: [callees]}` (one after another). Every
//! callee names a key of the service's `calls` (which still holds each call's policy) and every
//! call sits in exactly one stage. Without `stages`, `calls` is one stage: sequential in the map's
//! order, or parallel with `parallel: true` (which `stages` replaces, so the two exclude each
//! other). Any failed call fails the job, as before.
//!
//! The plan is a list of *steps*, each a group of calls started together: a parallel stage is one
//! step, a sequential stage one step per call. A service without `stages` whose calls have a
//! `probability` gets the shorthand's steps (all calls in one step with `parallel: true`, else
//! one per call), so only stepped services ever draw.
//!
//! `probability: p` (default 1) makes a call only for that share of the jobs: when the job
//! reaches the call (its step starts), one uniform draw from the edge's own stream
//! `probability/<caller>-><callee>` decides, and a call not taken counts as done at once, with no
//! attempt. A call with `probability: 1` draws nothing.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::protections::Problems;

/// One stage: the callees it calls, together or in order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageRaw {
    /// Callees started together; the stage is done when all have succeeded.
    pub parallel: Option<Vec<String>>,
    /// Callees called one after another.
    pub sequential: Option<Vec<String>>,
}

/// The steps of a service's calls: each a group of call indices (into `Service::calls`) started
/// together, run in order.
pub type Steps = Vec<Vec<u16>>;

/// Checks `stages` at `key` against the service's calls (`calls[i]` is the callee name of call
/// `i`, in `Service::calls` order) and builds the steps; `parallel` says whether the service also
/// set `parallel: true`.
pub(crate) fn validate(
    key: &str,
    stages: &[StageRaw],
    calls: &[&str],
    parallel: bool,
    p: &mut impl Problems,
) -> Option<Steps> {
    let mut ok = true;
    if parallel {
        p.problem(
            key,
            "cannot be combined with `parallel: true`; write the parallel calls as a stage \
             `{parallel: [..]}`"
                .into(),
        );
        ok = false;
    }
    if stages.is_empty() {
        p.problem(
            key,
            "lists no stage; remove it to make the calls in order".into(),
        );
        return None;
    }
    let mut seen = vec![false; calls.len()];
    let mut steps = Vec::new();
    for (i, stage) in stages.iter().enumerate() {
        let skey = format!("{key}[{i}]");
        let (names, together) = match (&stage.parallel, &stage.sequential) {
            (Some(names), None) => (names, true),
            (None, Some(names)) => (names, false),
            _ => {
                p.problem(
                    &skey,
                    "needs exactly one of `parallel` or `sequential`".into(),
                );
                ok = false;
                continue;
            }
        };
        let which = if together { "parallel" } else { "sequential" };
        if names.is_empty() {
            p.problem(
                &format!("{skey}.{which}"),
                "lists no call; remove the stage".into(),
            );
            ok = false;
        }
        let mut group = Vec::new();
        for (j, name) in names.iter().enumerate() {
            let nkey = format!("{skey}.{which}[{j}]");
            match calls.iter().position(|c| c == name) {
                None => {
                    p.problem(
                        &nkey,
                        format!(
                            "`{name}` is not one of this service's `calls`; stages order the \
                             calls listed under `calls`"
                        ),
                    );
                    ok = false;
                }
                Some(k) if seen[k] => {
                    p.problem(
                        &nkey,
                        format!("`{name}` is already in a stage; each call runs once"),
                    );
                    ok = false;
                }
                Some(k) => {
                    seen[k] = true;
                    group.push(k as u16);
                }
            }
        }
        if together {
            steps.push(group);
        } else {
            steps.extend(group.into_iter().map(|k| vec![k]));
        }
    }
    let missing: Vec<&str> = calls
        .iter()
        .zip(&seen)
        .filter(|(_, s)| !**s)
        .map(|(c, _)| *c)
        .collect();
    if !missing.is_empty() && ok {
        p.problem(
            key,
            format!(
                "leaves out {}; put every call of `calls` in a stage",
                missing
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        ok = false;
    }
    ok.then_some(steps)
}

/// The steps of the `calls` shorthand for `n` calls: one group of all with `parallel`, else one
/// step per call in order.
pub(crate) fn shorthand(n: usize, parallel: bool) -> Steps {
    let all = 0..n as u16;
    if parallel {
        vec![all.collect()]
    } else {
        all.map(|k| vec![k]).collect()
    }
}

/// Checks `probability` at `key`: a share in [0, 1]; `None` (always) for 1 or when absent.
pub(crate) fn validate_probability(
    key: &str,
    given: Option<f64>,
    p: &mut impl Problems,
) -> Option<f64> {
    let v = given?;
    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
        p.problem(
            key,
            format!("is {v}; a probability must be between 0 and 1"),
        );
        return None;
    }
    (v < 1.0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protections::bad_snippets::{At, accepted, check};

    #[derive(Default)]
    struct Seen(Vec<(String, String)>);

    impl Problems for Seen {
        fn problem(&mut self, key: &str, message: String) {
            self.0.push((key.to_owned(), message));
        }
    }

    fn stage(parallel: bool, names: &[&str]) -> StageRaw {
        let names = Some(names.iter().map(|n| n.to_string()).collect());
        if parallel {
            StageRaw {
                parallel: names,
                sequential: None,
            }
        } else {
            StageRaw {
                parallel: None,
                sequential: names,
            }
        }
    }

    #[test]
    fn a_parallel_stage_is_one_step_and_a_sequential_stage_one_step_per_call() {
        let calls = ["inventory", "pricing", "payments", "email"];
        let mut p = Seen::default();
        let steps = validate(
            "s",
            &[
                stage(true, &["pricing", "inventory"]),
                stage(false, &["payments", "email"]),
            ],
            &calls,
            false,
            &mut p,
        );
        assert!(p.0.is_empty(), "{:?}", p.0);
        assert_eq!(steps, Some(vec![vec![1, 0], vec![2], vec![3]]));
    }

    #[test]
    fn every_call_in_exactly_one_stage_and_not_with_parallel() {
        let calls = ["b", "c", "d"];
        let mut p = Seen::default();
        let steps = validate(
            "services.a.stages",
            &[stage(true, &["b", "c"]), stage(false, &["c"])],
            &calls,
            true,
            &mut p,
        );
        assert_eq!(steps, None);
        assert_eq!(
            p.0,
            [
                (
                    "services.a.stages".to_owned(),
                    "cannot be combined with `parallel: true`; write the parallel calls as a \
                     stage `{parallel: [..]}`"
                        .to_owned()
                ),
                (
                    "services.a.stages[1].sequential[0]".to_owned(),
                    "`c` is already in a stage; each call runs once".to_owned()
                ),
            ]
        );
        let mut p = Seen::default();
        assert_eq!(
            validate("k", &[stage(false, &["c"])], &calls, false, &mut p),
            None
        );
        assert_eq!(
            p.0,
            [(
                "k".to_owned(),
                "leaves out `b`, `d`; put every call of `calls` in a stage".to_owned()
            )]
        );
    }

    #[test]
    fn bad_snippets() {
        // The snippet scenario's service `b` has no calls; `a` calls `b`.
        check(
            At::Edge,
            &[
                (
                    "probability: 1.5",
                    "probability",
                    "is 1.5; a probability must be between 0 and 1",
                ),
                (
                    "probability: -0.1",
                    "probability",
                    "is -0.1; a probability must be between 0 and 1",
                ),
            ],
        );
        accepted(
            At::Edge,
            &["probability: 0.3", "probability: 0", "probability: 1"],
        );
        check(
            At::Service,
            &[
                (
                    "stages: []",
                    "stages",
                    "lists no stage; remove it to make the calls in order",
                ),
                (
                    "stages: [{parallel: [x]}]",
                    "stages[0].parallel[0]",
                    "`x` is not one of this service's `calls`; stages order the calls listed \
                     under `calls`",
                ),
                (
                    "stages: [{parallel: []}]",
                    "stages[0].parallel",
                    "lists no call; remove the stage",
                ),
                (
                    "stages: [{}]",
                    "stages[0]",
                    "needs exactly one of `parallel` or `sequential`",
                ),
            ],
        );
    }
}
