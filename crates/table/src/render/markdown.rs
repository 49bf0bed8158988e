//! The Markdown format: a GitHub table, with `|` in labels escaped so that a label cannot add a
//! column.

use crate::rows::MetricTable;
use tabled::builder::Builder;
use tabled::settings::Style;

/// Renders `table` as GitHub-flavoured Markdown.
pub fn render(table: &MetricTable) -> String {
    let cells = table
        .text_cells()
        .into_iter()
        .map(|row| row.into_iter().map(|c| escape(&c)).collect::<Vec<_>>());
    let mut t = Builder::from_iter(cells).build();
    t.with(Style::markdown());
    t.to_string()
}

/// Makes a cell safe inside a Markdown table row: pipes escaped, line breaks as spaces.
fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\r', '\n'], " ")
}
