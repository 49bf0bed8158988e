//! The Markdown format: a GitHub table, with `|` in labels escaped so that a label cannot add a
//! column.

use super::Exporter;
use crate::grid::{Grid, SpreadMode};
use crate::report::Report;

/// GitHub-flavoured Markdown.
pub struct Markdown;

impl Exporter for Markdown {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let opts = crate::options::Options::default();
        Ok(crate::layout::render(report, crate::Format::Markdown, &opts)?.text)
    }
}

/// Makes a cell safe inside a Markdown table row: pipes escaped, line breaks as spaces, and
/// `&`, `<`, `>` as HTML entities so that a label cannot become markup where Markdown renders
/// HTML (GitHub).
pub fn escape(cell: &str) -> String {
    cell.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

pub use crate::grid::Align;

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

/// A [`Grid`] as Markdown: its caption as a paragraph above, the table with numbers
/// right-aligned, its notes as paragraphs below.
pub fn grid_markdown(grid: &Grid, mode: SpreadMode) -> String {
    let headings: Vec<String> = grid.headings.iter().map(|h| escape(h)).collect();
    let align: Vec<Align> = (0..headings.len()).map(|i| grid.align_of(i)).collect();
    let rows = grid
        .text_rows(mode)
        .into_iter()
        .map(|r| r.iter().map(|c| escape(c)).collect())
        .collect();
    let mut parts = Vec::new();
    if let Some(caption) = &grid.caption {
        parts.push(format!("{caption}\n"));
    }
    parts.push(markdown_table(&headings, &align, rows));
    for note in &grid.notes {
        parts.push(format!("\n{note}"));
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_cannot_add_columns_or_markup() {
        assert_eq!(
            super::escape("a|b <b>&\"c\"\n"),
            "a\\|b &lt;b&gt;&amp;\"c\" "
        );
    }
}
