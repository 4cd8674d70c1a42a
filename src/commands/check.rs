//! `loadsim check`: validate scenarios without running them and print what the policies imply
//! before any simulation — R1, the worst-case attempts per user request at each service, with the
//! chain of products that gives it.

use std::fmt::Write;
use std::path::PathBuf;

use super::load_all;
use crate::Error;
use crate::scenario::Scenario;

/// Validates `files` and describes each scenario's R1 bounds.
pub fn check(files: &[PathBuf], sets: &[String]) -> Result<String, Error> {
    let scenarios = load_all(files, sets, None)?;
    let mut out = String::new();
    for (sc, file) in scenarios.iter().zip(files) {
        describe(&mut out, sc, file);
    }
    Ok(out)
}

fn describe(out: &mut String, sc: &Scenario, file: &std::path::Path) {
    let _ = writeln!(out, "{}: ok — scenario `{}`", file.display(), sc.name);
    let _ = writeln!(out, "  worst-case attempts per user request (R1):");
    let worst = sc.worst_case_attempts();
    let paths = sc.path_counts();
    for s in sc.topological_order() {
        let chains = sc.attempt_chains(s);
        let products: Vec<String> = chains
            .iter()
            .map(|c| {
                let factors: Vec<String> = c.iter().map(|(_, n)| n.to_string()).collect();
                let hops: Vec<&str> = c.iter().map(|(h, _)| h.as_str()).collect();
                format!("{} ({})", factors.join("·"), hops.join(", "))
            })
            .collect();
        let how = if products.is_empty() {
            "not reachable from the client".to_owned()
        } else if (products.len() as u64) < paths[s] {
            format!(
                "{} + … ({} call paths in all, the first {} shown)",
                products.join(" + "),
                paths[s],
                products.len()
            )
        } else {
            products.join(" + ")
        };
        let _ = writeln!(
            out,
            "    {:<12} {:>6} = {how}",
            sc.services[s].name, worst[s]
        );
    }
}
