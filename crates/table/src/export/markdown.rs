//! The Markdown format: a GitHub table, with `|` in labels escaped so that a label cannot add a
//! column.

use super::Exporter;
use crate::report::Report;
use crate::rows::MetricTable;
use tabled::builder::Builder;
use tabled::settings::Style;

/// GitHub-flavoured Markdown.
pub struct Markdown;

impl Exporter for Markdown {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let cells = MetricTable::from_report(report)
            .text_cells()
            .into_iter()
            .map(|row| row.into_iter().map(|c| escape(&c)).collect::<Vec<_>>());
        let mut t = Builder::from_iter(cells).build();
        t.with(Style::markdown());
        Ok(t.to_string())
    }
}

/// Makes a cell safe inside a Markdown table row: pipes escaped, line breaks as spaces.
fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\r', '\n'], " ")
}
