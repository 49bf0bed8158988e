//! The frame every text-table format shares, as hyperfine's `MarkupExporter` is: a grid is its
//! caption, its table and its notes, one after another, or its preformatted block; several
//! grids are written one after another. A format that implements [`MarkupExporter`]
//! gives only what differs (how text is escaped, how the table itself, a caption and a note are
//! written) and is an [`Exporter`] of every grid a layout lays out.

use super::Exporter;
use crate::error::Error;
use crate::grid::{Align, Grid, SpreadMode};
use crate::laid_out::LaidOut;
use crate::report::Report;

/// A format that writes tables for people: terminal, Markdown, HTML.
pub(crate) trait MarkupExporter {
    /// A heading or cell made safe in this format (a label must not add a column or markup).
    fn escape(&self, text: &str) -> String;

    /// A heading as written. `unit_line` is the grid's wish to have the unit (`[ms]`) on a
    /// second line, which a format that can break a heading honours.
    fn heading(&self, heading: &str, unit_line: bool) -> String {
        let _ = unit_line;
        self.escape(heading)
    }

    /// A caption as written above the table; `None` where the table holds its caption itself
    /// (see [`MarkupExporter::table`]).
    fn caption(&self, caption: &str) -> Option<String>;

    /// The table: headings and rows escaped, one alignment per column; `caption` is the
    /// grid's caption when [`MarkupExporter::caption`] leaves it to the table.
    fn table(
        &self,
        caption: Option<&str>,
        headings: &[String],
        align: &[Align],
        rows: &[Vec<String>],
    ) -> String;

    /// A note as written below the table.
    fn note(&self, note: &str) -> String;

    /// Preformatted text (another tool's fixed layout) as written: as it is, by default.
    fn preformatted(&self, text: &str) -> String {
        text.to_string()
    }

    /// What goes between two grids.
    fn between_grids(&self) -> &'static str {
        "\n\n"
    }

    /// One grid: its preformatted block, else its caption, table and notes, each on lines of
    /// their own.
    fn grid(&self, grid: &Grid, mode: SpreadMode) -> String {
        if let Some(text) = &grid.preformatted {
            return self.preformatted(text);
        }
        let headings: Vec<String> = grid
            .headings
            .iter()
            .map(|h| self.heading(h, grid.unit_lines))
            .collect();
        let align: Vec<Align> = (0..headings.len()).map(|i| grid.align_of(i)).collect();
        let rows: Vec<Vec<String>> = grid
            .text_rows(mode)
            .iter()
            .map(|row| row.iter().map(|c| self.escape(c)).collect())
            .collect();
        let above = grid.caption.as_deref().map(|c| self.caption(c));
        let inside = match above {
            Some(None) => grid.caption.as_deref(),
            _ => None,
        };
        let mut parts: Vec<String> = above.flatten().into_iter().collect();
        parts.push(self.table(inside, &headings, &align, &rows));
        parts.extend(grid.notes.iter().map(|n| self.note(n)));
        parts.join("\n")
    }

    /// Every grid, one after another.
    fn grids(&self, grids: &[Grid], mode: SpreadMode) -> String {
        grids
            .iter()
            .map(|g| self.grid(g, mode))
            .collect::<Vec<_>>()
            .join(self.between_grids())
    }
}

impl<T: MarkupExporter> Exporter for T {
    fn export(&self, laid: &LaidOut, _: &Report) -> Result<String, Error> {
        Ok(self.grids(&laid.grids, laid.spread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::html::HtmlTable;
    use crate::export::markdown::Markdown;
    use crate::export::terminal::Terminal;
    use crate::grid::Cell;

    fn grid() -> Grid {
        Grid {
            caption: Some("Caption".into()),
            headings: vec!["Label".into(), "TTFT p99 [ms]".into()],
            align: vec![Align::Left, Align::Right],
            rows: vec![vec![Cell::text("a|b"), Cell::Missing]],
            notes: vec!["A note.".into()],
            ..Grid::default()
        }
    }

    #[test]
    fn each_format_frames_a_grid_its_own_way() {
        assert_eq!(
            Markdown.grid(&grid(), SpreadMode::Cv),
            "Caption\n\n| Label | TTFT p99 [ms] |\n|-------|--------------:|\n\
             | a\\|b  |             - |\n\nA note."
        );
        let mut g = grid();
        g.unit_lines = true;
        let text = Terminal.grid(&g, SpreadMode::Cv);
        assert!(text.starts_with("Caption\n╭"), "{text}");
        assert!(text.ends_with("╯\nA note."), "{text}");
        assert!(
            text.contains("│ TTFT p99 │") && text.contains("│ [ms]     │"),
            "{text}"
        );
    }

    #[test]
    fn preformatted_text_is_written_as_it_is_or_escaped() {
        let g = Grid {
            preformatted: Some("==== <x> ====\n  a  ".into()),
            ..Grid::default()
        };
        let grids = [g.clone(), g.clone()];
        assert_eq!(
            Terminal.grids(&grids, SpreadMode::Cv),
            "==== <x> ====\n  a  \n\n==== <x> ====\n  a  "
        );
        assert_eq!(Markdown.grid(&g, SpreadMode::Cv), "==== <x> ====\n  a  ");
        assert_eq!(
            HtmlTable.grid(&g, SpreadMode::Cv),
            "<pre>==== &lt;x&gt; ====\n  a  </pre>"
        );
    }
}
