//! The one table builder. Every table loadsim prints — the run table ([`super::table`]), a
//! sweep's comparison and sensitivity tables, `loadsim check`'s tables and `loadsim boundary`'s —
//! is a [`MarkdownTable`]: a header, rows of text and an alignment per column, rendered as a
//! GitHub-flavoured Markdown table whose columns are padded to their widest cell, so the same text
//! reads on a terminal and on GitHub. A right-aligned column aligns its header too.
//!
//! Like hyperfine's exporters, what a format owns is only how a row and the divider under the
//! header are written; the widths and the padding are computed here once (by `comfy_table`, which
//! measures display width, so wide characters keep columns straight).

use std::fmt;

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, ContentArrangement, Table};

/// How a column's cells are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Flush left: names and text (every column starts so).
    Left,
    /// Flush right: numbers.
    Right,
}

/// A table under construction: a header, then rows added in order.
#[derive(Clone, Debug)]
pub struct MarkdownTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    align: Vec<Align>,
}

impl MarkdownTable {
    /// A table with these column headers, every column left-aligned.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        let header: Vec<String> = header.into_iter().map(Into::into).collect();
        let align = vec![Align::Left; header.len()];
        MarkdownTable {
            header,
            rows: Vec::new(),
            align,
        }
    }

    /// Adds a row (cells beyond the header's width are kept; missing ones are left empty).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Aligns column `column` (0-based).
    pub fn align(&mut self, column: usize, align: Align) -> &mut Self {
        if let Some(a) = self.align.get_mut(column) {
            *a = align;
        }
        self
    }

    /// Right-aligns every column from `column` on (numbers after a label column).
    pub fn right_from(&mut self, column: usize) -> &mut Self {
        for a in self.align.iter_mut().skip(column) {
            *a = Align::Right;
        }
        self
    }

    /// Number of columns.
    pub fn columns(&self) -> usize {
        self.header.len()
    }
}

impl fmt::Display for MarkdownTable {
    /// The Markdown text, without a final newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut t = Table::new();
        t.load_style(ASCII_MARKDOWN)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(self.header.clone());
        for row in &self.rows {
            t.add_row(row.clone());
        }
        for (i, a) in self.align.iter().enumerate() {
            if let (Align::Right, Some(c)) = (a, t.column_mut(i)) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        write!(f, "{t}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pad_to_their_widest_cell_and_right_columns_align_their_header() {
        let mut t = MarkdownTable::new(["key", "n"]);
        t.row(["a", "100"]).row(["long key", "7"]).right_from(1);
        assert_eq!(
            t.to_string(),
            "| key      |   n |\n|----------|-----|\n| a        | 100 |\n| long key |   7 |"
        );
    }
}
