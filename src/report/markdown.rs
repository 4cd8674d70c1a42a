//! The Markdown table every report shares: comfy-table's ASCII Markdown preset, no wrapping (so
//! the text reads on a terminal and renders on GitHub), numbers right-aligned.

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, ContentArrangement, Table};

/// An empty Markdown table with `header`.
pub fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    t
}

/// Right-aligns every column from `from` (0-based) on.
pub fn right_align(t: &mut Table, from: usize) {
    for i in from..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}
