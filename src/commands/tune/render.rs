//! The report of `loadsim tune`: what it says — the recommendation as YAML to paste, the
//! feasible region per fault, the Pareto front of objective against the worst fault's recovery
//! and why rejected candidates failed — built once from the plan and the search's result
//! ([`Report::new`]), and its forms: Markdown ([`Report::markdown`]), JSON (serde), the
//! candidates as CSV ([`candidates_csv`]) and the Pareto front as SVG ([`write_pareto_svg`]).
//! Orchestration (checking, running, journaling, writing files) is the parent module's.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::plan::{Plan, set_args};
use crate::Error;
use crate::analysis::tune::{
    Edge, EdgeFinding, Requirement, Scored, TuneAxis, Tuned, edge_findings, margin, pareto,
};
use crate::report::markdown::MarkdownTable;

/// One key's value, for reports.
#[derive(Clone, Debug, Serialize)]
struct Setting {
    key: String,
    /// As it would be written in the scenario (`10`, `0.1`, `800ms`).
    value: String,
}

/// A candidate, for reports.
#[derive(Clone, Debug, Serialize)]
pub(super) struct CandidateReport {
    settings: Vec<Setting>,
    /// `KEY=VALUE` arguments for `loadsim run --set`.
    set: Vec<String>,
    round: usize,
    feasible: bool,
    objective: Option<f64>,
    /// The worst fault's median recovery over the seeds, s (`null`: never).
    worst_recovery_s: Option<f64>,
    /// The fault with the worst recovery.
    worst_fault: Option<String>,
    /// Feasible candidates: how deep inside the feasible region it lies, every key's range
    /// scaled to [0, 1] ([`crate::analysis::tune::margin`]); `null` for infeasible ones.
    margin: Option<f64>,
    /// Per fault, per requirement: seeds on which it fails (only the failing ones).
    failing: BTreeMap<String, BTreeMap<String, usize>>,
}

/// A fault's feasible region.
#[derive(Clone, Debug, Serialize)]
struct FaultRegion {
    fault: String,
    /// The `--set` arguments that put this fault (alone) into the scenario file.
    reproduce: Vec<String>,
    feasible: usize,
    tried: usize,
    /// Per key: the smallest and largest value among the candidates feasible under this fault.
    ranges: Vec<Option<[String; 2]>>,
}

/// Why some candidates were rejected.
#[derive(Clone, Debug, Serialize)]
struct Rejection {
    fault: String,
    requirement: String,
    /// Candidates on which it failed on more seeds than allowed.
    candidates: usize,
    /// Per key: the range of those candidates' values.
    ranges: Vec<[String; 2]>,
    /// Seeds failing, summed over those candidates, out of candidates × seeds.
    seeds_failing: usize,
    seeds_run: usize,
}

#[derive(Clone, Debug, Serialize)]
pub(super) struct Report {
    scenario: String,
    faults: String,
    target: String,
    keys: Vec<KeyReport>,
    seeds: Vec<u64>,
    share: f64,
    needed_seeds: usize,
    requirements: Vec<String>,
    objective: String,
    search: SearchReport,
    /// Where the objective is measured: `healthy load (no fault)` or `fault outage_10s`.
    objective_in: String,
    /// One line: the recommendation, or that no setting meets the requirements.
    pub(super) verdict: String,
    pub(super) recommended: Option<CandidateReport>,
    /// The feasible candidate with the lowest objective (the recommendation when nothing ties).
    best: Option<CandidateReport>,
    /// The candidates whose objective lies within the noise of the best's, and the rule that
    /// picked the recommendation among them.
    ties: TieReport,
    /// "Widen" warnings: the answer touches the edge of a range.
    pub(super) warnings: Vec<String>,
    /// The YAML to paste into the scenario.
    recommended_yaml: Option<String>,
    /// With no feasible setting: the one closest to meeting every requirement.
    closest: Option<CandidateReport>,
    regions: Vec<FaultRegion>,
    pareto: Vec<CandidateReport>,
    rejections: Vec<Rejection>,
    candidates: Vec<CandidateReport>,
}

/// The tie group and the rule.
#[derive(Clone, Debug, Serialize)]
struct TieReport {
    /// `--tie-tolerance`: the relative tolerance.
    tolerance: f64,
    rule: &'static str,
    /// The tied candidates, deepest first.
    candidates: Vec<CandidateReport>,
}

/// How the recommendation is chosen among ties (the report and docs/analysis.md say it).
const TIE_RULE: &str = "a candidate ties with the best (lowest mean objective) when their means differ by at most the tolerance times the best's, or when the 95 % interval (Student's t) of their per-seed differences contains 0; among the tied candidates the recommendation is the one deepest inside the feasible region: the largest distance, with every key's range scaled to [0, 1] on its own scale, to the nearest infeasible candidate tried or edge of a range";

#[derive(Clone, Debug, Serialize)]
struct KeyReport {
    key: String,
    low: String,
    high: String,
    scale: &'static str,
}

#[derive(Clone, Debug, Serialize)]
struct SearchReport {
    method: &'static str,
    steps: usize,
    rounds: usize,
    candidates: usize,
    runs: usize,
}

fn show(a: &TuneAxis, v: f64) -> String {
    a.axis
        .set_arg(v)
        .split_once('=')
        .map(|(_, v)| v.to_owned())
        .unwrap_or_default()
}

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) => crate::util::number::trimmed(v, 4),
        None => "never".into(),
    }
}

impl Report {
    pub(super) fn new(plan: &Plan, t: &Tuned) -> Report {
        let s = &plan.search;
        let faults: Vec<&str> = plan.variants[1..].iter().map(|v| v.name.as_str()).collect();
        let candidate = |c: &Scored| {
            let worst = c
                .recovery
                .iter()
                .enumerate()
                .max_by(|a, b| {
                    a.1.unwrap_or(f64::INFINITY)
                        .total_cmp(&b.1.unwrap_or(f64::INFINITY))
                        .then(b.0.cmp(&a.0))
                })
                .map(|(i, _)| faults[i].to_owned());
            let mut failing = BTreeMap::new();
            for (f, per) in c.failing.iter().enumerate() {
                let m: BTreeMap<String, usize> = per
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| **n > 0)
                    .map(|(r, n)| (plan.requirements[r].describe(), *n))
                    .collect();
                if !m.is_empty() {
                    failing.insert(faults[f].to_owned(), m);
                }
            }
            CandidateReport {
                settings: plan
                    .axes
                    .iter()
                    .zip(&c.values)
                    .map(|(a, &v)| Setting {
                        key: a.axis.key.clone(),
                        value: show(a, v),
                    })
                    .collect(),
                set: set_args(&plan.axes, &c.values),
                round: c.round,
                feasible: c.feasible(s.seeds, s.needed),
                objective: c.objective,
                worst_recovery_s: c.worst_recovery(),
                worst_fault: worst,
                margin: None,
                failing,
            }
        };
        let with_margin = |i: usize| {
            let mut c = candidate(&t.tried[i]);
            if c.feasible {
                c.margin = Some(margin(&plan.axes, &t.tried, s, i));
            }
            c
        };
        let range_of = |idx: &[usize], k: usize| -> Option<[String; 2]> {
            let a = &plan.axes[k];
            let lo = idx.iter().map(|&i| t.tried[i].values[k]).reduce(f64::min)?;
            let hi = idx.iter().map(|&i| t.tried[i].values[k]).reduce(f64::max)?;
            Some([show(a, lo), show(a, hi)])
        };
        let regions = plan.variants[1..]
            .iter()
            .enumerate()
            .map(|(f, v)| {
                let ok: Vec<usize> = (0..t.tried.len())
                    .filter(|&i| t.tried[i].feasible_under(f, s.seeds, s.needed))
                    .collect();
                FaultRegion {
                    fault: v.name.clone(),
                    reproduce: v.reproduce.clone(),
                    feasible: ok.len(),
                    tried: t.tried.len(),
                    ranges: (0..plan.axes.len()).map(|k| range_of(&ok, k)).collect(),
                }
            })
            .collect();
        let mut rejections = Vec::new();
        for (f, name) in faults.iter().enumerate() {
            for (r, req) in plan.requirements.iter().enumerate() {
                let bad: Vec<usize> = (0..t.tried.len())
                    .filter(|&i| s.seeds - t.tried[i].failing[f][r] < s.needed)
                    .collect();
                if bad.is_empty() {
                    continue;
                }
                rejections.push(Rejection {
                    fault: (*name).to_owned(),
                    requirement: req.describe(),
                    candidates: bad.len(),
                    ranges: (0..plan.axes.len())
                        .filter_map(|k| range_of(&bad, k))
                        .collect(),
                    seeds_failing: bad.iter().map(|&i| t.tried[i].failing[f][r]).sum(),
                    seeds_run: bad.len() * s.seeds,
                });
            }
        }
        let recommended = t.recommended.map(with_margin);
        let best = t.best.map(with_margin);
        let mut tied: Vec<CandidateReport> = t.ties.iter().map(|&i| with_margin(i)).collect();
        tied.sort_by(|a, b| b.margin.unwrap_or(0.0).total_cmp(&a.margin.unwrap_or(0.0)));
        let ties = TieReport {
            tolerance: s.tolerance,
            rule: TIE_RULE,
            candidates: tied,
        };
        let objective_in = if plan.objective_variant == 0 {
            "healthy load (no fault)".to_owned()
        } else {
            format!("fault `{}`", plan.variants[plan.objective_variant].name)
        };
        let key_edge = |key: usize, edge: Edge| {
            let a = &plan.axes[key];
            match edge {
                Edge::Low => format!("the low edge of `{}` ({})", a.axis.key, show(a, a.axis.low)),
                Edge::High => format!(
                    "the high edge of `{}` ({})",
                    a.axis.key,
                    show(a, a.axis.high)
                ),
            }
        };
        let warnings: Vec<String> = edge_findings(&plan.axes, t, s)
            .into_iter()
            .map(|f| match f {
                EdgeFinding::Recommended { key, edge } => format!(
                    "widen: the recommendation sits on {}; settings past it were not tried",
                    key_edge(key, edge)
                ),
                EdgeFinding::Best { key, edge } => format!(
                    "widen: the lowest objective is on {}, below the recommendation's though within the noise, so the objective may fall further past it",
                    key_edge(key, edge)
                ),
                EdgeFinding::AllFeasible => "widen: every candidate tried meets every requirement, so the ranges never reach the feasible boundary; widen them towards the cheaper side".to_owned(),
                EdgeFinding::Closest { key, edge } => format!(
                    "widen: no setting is feasible and the closest sits on {}; a feasible setting may lie past it",
                    key_edge(key, edge)
                ),
            })
            .collect();
        let closest = t.closest.map(|i| candidate(&t.tried[i]));
        let verdict = match (&recommended, &closest) {
            (Some(r), _) => format!(
                "recommended: {} ({} {} in {})",
                shown(r),
                plan.objective,
                num(r.objective),
                objective_in
            ),
            (None, Some(c)) => format!(
                "no setting in the range meets every requirement under every fault on {} of {} seeds; the closest is {}",
                s.needed,
                s.seeds,
                shown(c)
            ),
            (None, None) => "no setting was tried".to_owned(),
        };
        let runs = t.tried.len() * plan.variants.len() * plan.seeds.len();
        Report {
            scenario: plan.scenario.clone(),
            faults: plan.faults_name.clone(),
            target: plan.target.clone(),
            keys: plan
                .axes
                .iter()
                .map(|a| KeyReport {
                    key: a.axis.key.clone(),
                    low: show(a, a.axis.low),
                    high: show(a, a.axis.high),
                    scale: if a.log { "log" } else { "linear" },
                })
                .collect(),
            seeds: plan.seeds.clone(),
            share: s.needed as f64 / s.seeds as f64,
            needed_seeds: s.needed,
            requirements: plan
                .requirements
                .iter()
                .map(Requirement::describe)
                .collect(),
            objective: plan.objective.clone(),
            objective_in,
            search: SearchReport {
                method: "coarse grid, then refinement around the incumbent at half the spacing per round",
                steps: s.steps,
                rounds: s.rounds,
                candidates: t.tried.len(),
                runs,
            },
            verdict,
            recommended_yaml: t
                .recommended
                .map(|i| yaml_snippet(&plan.axes, &t.tried[i].values)),
            recommended,
            best,
            ties,
            warnings,
            closest,
            regions,
            pareto: pareto(&t.tried)
                .into_iter()
                .map(|i| candidate(&t.tried[i]))
                .collect(),
            rejections,
            candidates: t.tried.iter().map(candidate).collect(),
        }
    }

    pub(super) fn markdown(&self, plan: &Plan) -> String {
        let mut out = String::new();
        let keys: Vec<String> = self.keys.iter().map(|k| format!("`{}`", k.key)).collect();
        let _ = writeln!(out, "# Tune `{}` over {}\n", self.scenario, keys.join(", "));
        let seeds: Vec<String> = self.seeds.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "fault set: {} ({} faults, each alone) on `{}`.  \nseeds: {} (the same for every candidate); a requirement must hold on {} of {}.  \nrequirements, under every fault unless scoped to one (`FAULT: …`): {}.  \nobjective: the mean over the seeds of `{}` in {}, lower is better.  \nsearch: a grid of {} values per key ({}), then {} refinement rounds around the incumbent; {} candidates, {} runs.\n",
            self.faults,
            self.regions.len(),
            self.target,
            seeds.join(", "),
            self.needed_seeds,
            self.seeds.len(),
            self.requirements
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(", "),
            self.objective,
            self.objective_in,
            self.search.steps,
            self.keys
                .iter()
                .map(|k| format!("`{}` {}..{} {}", k.key, k.low, k.high, k.scale))
                .collect::<Vec<_>>()
                .join(", "),
            self.search.rounds,
            self.search.candidates,
            self.search.runs,
        );
        match (&self.recommended, &self.closest) {
            (Some(r), _) => {
                let _ = writeln!(
                    out,
                    "## Recommendation\n\n{}; worst fault's recovery: {} ({}).\n\n```yaml\n{}```\n",
                    self.verdict,
                    r.worst_recovery_s
                        .map_or("never".to_owned(), |s| format!("{} s", num(Some(s)))),
                    r.worst_fault.clone().unwrap_or_default(),
                    self.recommended_yaml.clone().unwrap_or_default()
                );
                self.ties_markdown(&mut out);
            }
            (None, Some(c)) => {
                let _ = writeln!(
                    out,
                    "## No setting in the range meets every requirement\n\n{}.\n\nIt still fails:\n",
                    self.verdict
                );
                for (fault, reqs) in &c.failing {
                    for (r, n) in reqs {
                        let _ = writeln!(
                            out,
                            "- under `{fault}`: `{r}` on {n} of {} seeds",
                            self.seeds.len()
                        );
                    }
                }
                let _ = writeln!(out);
            }
            (None, None) => {}
        }
        if !self.warnings.is_empty() {
            let _ = writeln!(out, "## Warnings\n");
            for w in &self.warnings {
                let _ = writeln!(out, "- {w}");
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "## Feasible region per fault\n\nCandidates meeting every requirement under the fault alone, and the range of their values.\n"
        );
        let mut header = vec!["fault".to_owned(), "feasible".to_owned()];
        header.extend(self.keys.iter().map(|k| format!("`{}`", k.key)));
        let mut t = MarkdownTable::new(header);
        for r in &self.regions {
            let mut row = vec![r.fault.clone(), format!("{} of {}", r.feasible, r.tried)];
            row.extend(r.ranges.iter().map(|x| match x {
                Some([a, b]) if a == b => a.clone(),
                Some([a, b]) => format!("{a} – {b}"),
                None => "—".into(),
            }));
            t.row(row);
        }
        let _ = writeln!(out, "{t}\n");
        let _ = writeln!(
            out,
            "## Pareto front: objective against the worst fault's recovery\n\nCandidates no other beats on both (median recovery over the seeds; `never`: the median seed does not recover).\n"
        );
        let mut header: Vec<String> = self.keys.iter().map(|k| format!("`{}`", k.key)).collect();
        header.extend([
            "objective".to_owned(),
            "worst recovery (s)".into(),
            "worst fault".into(),
            "feasible".into(),
        ]);
        let mut t = MarkdownTable::new(header);
        for c in &self.pareto {
            let mut row: Vec<String> = c.settings.iter().map(|s| s.value.clone()).collect();
            row.extend([
                num(c.objective),
                num(c.worst_recovery_s),
                c.worst_fault.clone().unwrap_or_default(),
                if c.feasible { "yes" } else { "no" }.into(),
            ]);
            t.row(row);
        }
        let _ = writeln!(out, "{t}\n");
        let _ = writeln!(
            out,
            "## Why candidates were rejected\n\nPer fault and requirement: the candidates it rejected (failing on more than {} of {} seeds), where they lie, and the seeds failing among them.\n",
            self.seeds.len() - self.needed_seeds,
            self.seeds.len()
        );
        if self.rejections.is_empty() {
            let _ = writeln!(out, "None: every candidate tried is feasible.\n");
        } else {
            let mut header = vec!["fault".to_owned(), "requirement".into(), "rejected".into()];
            header.extend(self.keys.iter().map(|k| format!("`{}`", k.key)));
            header.push("seeds failing".into());
            let mut t = MarkdownTable::new(header);
            for r in &self.rejections {
                let mut row = vec![
                    r.fault.clone(),
                    format!("`{}`", r.requirement),
                    format!("{} of {}", r.candidates, self.search.candidates),
                ];
                row.extend(r.ranges.iter().map(|[a, b]| {
                    if a == b {
                        a.clone()
                    } else {
                        format!("{a} – {b}")
                    }
                }));
                row.push(format!("{} of {}", r.seeds_failing, r.seeds_run));
                t.row(row);
            }
            let _ = writeln!(out, "{t}\n");
        }
        let _ = writeln!(
            out,
            "Reproduce a fault's runs with `loadsim run {} --set KEY=VALUE… --set 'faults=…' --seeds …` (the `--set` arguments per fault are in `--format json`, `regions[].reproduce`).",
            plan.subject.file.display()
        );
        out
    }
}

impl Report {
    /// The tie group under the recommendation: who ties, by which rule, and the margins.
    fn ties_markdown(&self, out: &mut String) {
        let tolerance = crate::util::number::trimmed(self.ties.tolerance * 100.0, 4);
        let n = self.ties.candidates.len();
        if n <= 1 {
            let _ = writeln!(
                out,
                "No other feasible candidate ties with it: every other objective is more than {tolerance} % above it and above the seeds' noise (the 95 % interval of the per-seed differences excludes 0).\n"
            );
            return;
        }
        let best = self.best.as_ref().map(shown).unwrap_or_default();
        let _ = writeln!(
            out,
            "**{n} feasible candidates tie** with the lowest objective ({best}): their objectives are within {tolerance} % of it or within the seeds' noise (the 95 % interval, Student's t, of the per-seed differences contains 0), so the objective cannot tell them apart. Among them the recommendation is the one deepest inside the feasible region: the largest distance, with every key's range scaled to [0, 1] on its own scale, to the nearest infeasible candidate tried or the edge of a range (margin below; 0.5 is the middle of every range).\n"
        );
        let mut header: Vec<String> = self.keys.iter().map(|k| format!("`{}`", k.key)).collect();
        header.extend(["objective".to_owned(), "margin".into()]);
        let mut t = MarkdownTable::new(header);
        const SHOWN: usize = 10;
        for c in self.ties.candidates.iter().take(SHOWN) {
            let mut row: Vec<String> = c.settings.iter().map(|s| s.value.clone()).collect();
            row.extend([num(c.objective), num(c.margin)]);
            t.row(row);
        }
        let _ = writeln!(out, "{t}\n");
        if n > SHOWN {
            let _ = writeln!(
                out,
                "({} more tied candidates in `--format json`, `ties.candidates`.)\n",
                n - SHOWN
            );
        }
    }
}

/// A candidate's settings on one line: `key = value, …`.
fn shown(c: &CandidateReport) -> String {
    c.settings
        .iter()
        .map(|s| format!("{} = {}", s.key, s.value))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The settings as nested YAML, keys as in the scenario file.
fn yaml_snippet(axes: &[TuneAxis], values: &[f64]) -> String {
    // (path, value) pairs, rendered as a tree with shared prefixes merged.
    let mut out = String::new();
    let mut previous: Vec<&str> = Vec::new();
    let mut pairs: Vec<(Vec<&str>, String)> = axes
        .iter()
        .zip(values)
        .map(|(a, &v)| (a.axis.key.split('.').collect(), show(a, v)))
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, value) in &pairs {
        let common = previous
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count()
            .min(path.len() - 1);
        for (depth, part) in path.iter().enumerate().skip(common) {
            let indent = "  ".repeat(depth);
            if depth + 1 == path.len() {
                let _ = writeln!(out, "{indent}{part}: {value}");
            } else {
                let _ = writeln!(out, "{indent}{part}:");
            }
        }
        previous = path.clone();
    }
    out
}

pub(super) fn candidates_csv(plan: &Plan, t: &Tuned) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = plan.axes.iter().map(|a| a.axis.key.clone()).collect();
    header.extend(["round".into(), "feasible".into(), "objective".into()]);
    for v in &plan.variants[1..] {
        header.push(format!("{}.recovery_s", v.name));
        for r in plan.requirements.iter().filter(|r| r.applies_to(&v.name)) {
            header.push(format!("{}.failing[{}]", v.name, r.describe()));
        }
    }
    w.write_record(&header).expect("CSV to memory");
    for c in &t.tried {
        let mut row: Vec<String> = plan
            .axes
            .iter()
            .zip(&c.values)
            .map(|(a, &v)| a.axis.csv(v))
            .collect();
        row.push(c.round.to_string());
        row.push(
            c.feasible(plan.search.seeds, plan.search.needed)
                .to_string(),
        );
        row.push(c.objective.map_or(String::new(), |o| o.to_string()));
        for (f, rec) in c.recovery.iter().enumerate() {
            row.push(rec.map_or(String::new(), |r| r.to_string()));
            let fault = &plan.variants[f + 1].name;
            row.extend(
                plan.requirements
                    .iter()
                    .zip(&c.failing[f])
                    .filter(|(r, _)| r.applies_to(fault))
                    .map(|(_, n)| n.to_string()),
            );
        }
        w.write_record(&row).expect("CSV to memory");
    }
    w.into_inner().expect("CSV to memory")
}

/// What a point of `pareto.svg` is (its note line; no band is drawn).
const PARETO_NOTE: &str =
    "each point: one candidate (x: mean over seeds; y: median over seeds, “never” counted last)";

/// The Pareto front as a chart: objective on x, the worst fault's recovery on y, both axes from
/// the data (recovery from 0); the front, its feasible part and the recommendation as lines of
/// points, no band.
pub(super) fn pareto_svg(plan: &Plan, t: &Tuned) -> Result<String, Error> {
    let (title, x_label, lines) = pareto_lines(plan, t);
    // A recovery of "never" is drawn in the chart's "never" row; only an undefined objective
    // leaves nothing to draw.
    let drawable = lines[0]
        .points
        .iter()
        .any(|p| p.0.is_finite() && (p.1.is_finite() || p.1 == f64::INFINITY));
    if drawable {
        let style = crate::plot::ChartStyle {
            x_label,
            y_label: "worst fault's recovery (s, median over seeds)".to_owned(),
            band: crate::plot::Band::None { note: PARETO_NOTE },
            ..crate::plot::ChartStyle::default()
        };
        Ok(crate::plot::sensitivity_svg_styled(&title, &style, &lines)?)
    } else {
        Ok(crate::plot::placeholder_svg(
            &title,
            "no candidate on the Pareto front has a defined objective",
        )?)
    }
}

/// The title, x label and lines of `pareto.svg`.
fn pareto_lines(plan: &Plan, t: &Tuned) -> (String, String, Vec<crate::plot::Line>) {
    let front = pareto(&t.tried);
    let point = |i: usize| {
        let c = &t.tried[i];
        let r = c.worst_recovery().unwrap_or(f64::INFINITY);
        (c.objective.unwrap_or(f64::NAN), r, r, r)
    };
    let mut lines = vec![crate::plot::Line {
        scenario: "Pareto front".into(),
        points: front.iter().map(|&i| point(i)).collect(),
    }];
    let feasible: Vec<(f64, f64, f64, f64)> = front
        .iter()
        .filter(|&&i| t.tried[i].feasible(plan.search.seeds, plan.search.needed))
        .map(|&i| point(i))
        .collect();
    if !feasible.is_empty() {
        lines.push(crate::plot::Line {
            scenario: "feasible".into(),
            points: feasible,
        });
    }
    if let Some(r) = t.recommended {
        lines.push(crate::plot::Line {
            scenario: "recommended".into(),
            points: vec![point(r)],
        });
    }
    let place = if plan.objective_variant == 0 {
        "in healthy load".to_owned()
    } else {
        format!("under {}", plan.variants[plan.objective_variant].name)
    };
    (
        format!("{}: tuning trade-off", plan.scenario),
        format!("{} {place} (mean over seeds)", plan.objective),
        lines,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::boundary::SearchAxis;

    #[test]
    fn snippets_nest_shared_key_paths() {
        let axes = [
            TuneAxis::new(
                SearchAxis::parse(
                    "services.svc_a.calls.svc_b.retry_throttle.max_tokens",
                    "1..100",
                )
                .unwrap(),
            ),
            TuneAxis::new(
                SearchAxis::parse(
                    "services.svc_a.calls.svc_b.retry_throttle.token_ratio",
                    "0.01..1",
                )
                .unwrap(),
            ),
            TuneAxis::new(
                SearchAxis::parse("services.svc_a.calls.svc_b.attempt_timeout", "100ms..2s")
                    .unwrap(),
            ),
        ];
        assert_eq!(
            yaml_snippet(&axes, &[10.0, 0.1, 0.8]),
            "services:\n  svc_a:\n    calls:\n      svc_b:\n        attempt_timeout: 800ms\n        retry_throttle:\n          max_tokens: 10\n          token_ratio: 0.1\n"
        );
    }
}
