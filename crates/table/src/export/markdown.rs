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
pub fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// How a column of [`markdown_table`] aligns; right is marked `---:` so renderers align numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// A Markdown table with per-column alignment markers, cells padded so the source reads as a
/// table too. Cells must already be escaped; a row shorter than the headings is padded empty.
pub fn markdown_table(headings: &[String], align: &[Align], rows: Vec<Vec<String>>) -> String {
    let width = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i))
            .chain(std::iter::once(&headings[i]))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
            .max(3)
    };
    let widths: Vec<usize> = (0..headings.len()).map(width).collect();
    let aligned = |i: usize| align.get(i).copied().unwrap_or(Align::Left);
    let line = |cells: &[String]| {
        let padded: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                let c = cells.get(i).map_or("", String::as_str);
                match aligned(i) {
                    Align::Left => format!("{c:<w$}"),
                    Align::Right => format!("{c:>w$}"),
                }
            })
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    let rule: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, &w)| match aligned(i) {
            Align::Left => "-".repeat(w + 2),
            Align::Right => format!("{}:", "-".repeat(w + 1)),
        })
        .collect();
    let mut out = vec![line(headings), format!("|{}|", rule.join("|"))];
    out.extend(rows.iter().map(|r| line(r)));
    out.join("\n")
}
