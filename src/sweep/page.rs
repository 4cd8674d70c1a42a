//! The HTML page of a sweep (`report.html` beside results.md): which blocks it has (results.md
//! with its figures inlined, the sweep file, the scenario sources). The page's layout and
//! rendering are [`crate::report::html`]'s.

use std::path::Path;

use crate::report::html::Page;

/// The page of a sweep (`report.html` in its folder `out`): results.md with its figures inlined
/// from `out`, the sweep file, and the scenario sources (read again from the files the sweep
/// names; a note replaces them when they cannot be read here, as for a merge on another machine).
pub fn sweep_page(
    out: &Path,
    spec: &super::SweepSpec,
    markdown: &str,
    manifest: &super::manifest::Manifest,
) -> Page {
    let mut page = Page::new(
        format!("loadsim sweep: {}", spec.name),
        &format!("loadsim sweep {}", manifest.sweep_file),
        &manifest.loadsim_version,
    );
    page.markdown(markdown, Some(out));
    page.heading("Sweep file");
    page.source(&manifest.sweep_file, &manifest.sweep_text);
    match super::expand::Sources::load(spec) {
        Ok(sources) => page.scenario_sources(&sources.docs),
        Err(_) => {
            page.heading("Scenario sources");
            page.note("The scenario files were not readable where this report was written.");
        }
    }
    page
}
