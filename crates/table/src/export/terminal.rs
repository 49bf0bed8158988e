//! The terminal format: rounded box drawing, text left and numbers right, the caption above and
//! the notes below as plain lines (colour is added by the command line, only on a terminal).

use super::markup::MarkupExporter;
use crate::grid::Align;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

/// A table for a terminal.
pub(crate) struct Terminal;

impl MarkupExporter for Terminal {
    /// Box drawing needs no escaping.
    fn escape(&self, text: &str) -> String {
        text.to_string()
    }

    /// With `unit_line`, the unit on a second line (`TTFT p99` over `[ms]`), so that many
    /// columns still fit a terminal.
    fn heading(&self, heading: &str, unit_line: bool) -> String {
        let mut heading = heading.to_string();
        if unit_line {
            if let Some(at) = heading.find(" [") {
                heading.replace_range(at..at + 1, "\n");
            }
        }
        heading
    }

    fn caption(&self, caption: &str) -> Option<String> {
        Some(caption.to_string())
    }

    fn table(
        &self,
        _: Option<&str>,
        headings: &[String],
        align: &[Align],
        rows: &[Vec<String>],
    ) -> String {
        let mut cells = vec![headings.to_vec()];
        cells.extend(rows.iter().cloned());
        let mut t = Builder::from_iter(cells).build();
        t.with(Style::rounded());
        for (i, a) in align.iter().enumerate() {
            if *a == Align::Right {
                t.modify(Columns::one(i), Alignment::right());
            }
        }
        t.to_string()
    }

    fn note(&self, note: &str) -> String {
        note.to_string()
    }
}
