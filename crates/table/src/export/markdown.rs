//! The Markdown format: a GitHub table with numbers right-aligned (`---:`), cells padded so
//! that the source reads as a table too, the caption and each note a paragraph of their own.

use super::markup::MarkupExporter;
use crate::grid::Align;

/// GitHub-flavoured Markdown.
pub(crate) struct Markdown;

impl MarkupExporter for Markdown {
    /// Pipes escaped, line breaks as spaces, and `&`, `<`, `>` as HTML entities, so that a label
    /// can neither add a column nor become markup where Markdown renders HTML (GitHub).
    fn escape(&self, cell: &str) -> String {
        cell.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('|', "\\|")
            .replace(['\r', '\n'], " ")
    }

    fn caption(&self, caption: &str) -> Option<String> {
        Some(format!("{caption}\n"))
    }

    /// A row shorter than the headings is padded empty.
    fn table(
        &self,
        _: Option<&str>,
        headings: &[String],
        align: &[Align],
        rows: &[Vec<String>],
    ) -> String {
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

    fn note(&self, note: &str) -> String {
        format!("\n{note}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_add_columns_or_markup() {
        assert_eq!(
            Markdown.escape("a|b <b>&\"c\"\n"),
            "a\\|b &lt;b&gt;&amp;\"c\" "
        );
    }
}
