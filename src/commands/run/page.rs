//! The page of `loadsim run --html`: which blocks it has and in what order (the verdict, the
//! table, the run figures, the scenario sources). The page's layout and rendering are
//! [`crate::report::html`]'s; the figures are [`crate::plot`]'s.

use crate::config::Document;
use crate::report::html::Page;

/// The page of `loadsim run --html`: the verdict (with `findings`, the linter's on each run's
/// scenario, in the order of `runs`), the table, the run figures (then one per request class and
/// one per service of more than one replica), the scenario sources.
pub(super) fn run_page(
    runs: &[crate::plot::run::RunData<'_>],
    findings: &[Vec<crate::report::verdict::Finding>],
    docs: &[Document],
    command: &str,
) -> Result<Page, crate::plot::PlotError> {
    let names: Vec<String> = runs
        .iter()
        .map(|(s, _)| format!("`{}`", s.scenario))
        .collect();
    let summaries: Vec<crate::metrics::RunSummary> =
        runs.iter().map(|(s, _)| (*s).clone()).collect();
    let mut page = Page::new(
        format!(
            "loadsim run: {}",
            runs.iter()
                .map(|(s, _)| s.scenario.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        command,
        env!("CARGO_PKG_VERSION"),
    );
    let judged: Vec<crate::report::verdict::Judged<'_>> = runs
        .iter()
        .enumerate()
        .map(|(i, (s, _))| crate::report::verdict::Judged {
            label: format!("`{}`", s.scenario),
            runs: vec![*s],
            findings: findings.get(i).map(Vec::as_slice),
        })
        .collect();
    page.markdown(
        &format!(
            "# Run: {}

{}
## Results

{}
",
            names.join(", "),
            crate::report::verdict::markdown("scenario", &judged),
            crate::report::table::Table::build(&summaries)
        ),
        None,
    );
    page.heading("Figures");
    page.figure(
        "Share of user requests that succeeded, by arrival second",
        &crate::plot::success_rate_svg(runs)?,
    );
    page.figure(
        "Queue length per service",
        &crate::plot::queue_length_svg(runs)?,
    );
    page.figure(
        "Attempts per user request, by service (amplification)",
        &crate::plot::amplification_svg(runs)?,
    );
    for class in crate::plot::run::classes(runs) {
        page.figure(
            &format!("Share of class `{class}`'s requests that succeeded, by arrival time"),
            &crate::plot::class_success_rate_svg(runs, &class)?,
        );
    }
    for service in crate::plot::run::replicated_services(runs) {
        page.figure(
            &format!("Requests in flight and queued at each replica of `{service}`"),
            &crate::plot::replica_levels_svg(runs, &service)?,
        );
    }
    page.scenario_sources(docs);
    Ok(page)
}
