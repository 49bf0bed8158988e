//! The terminal format: rounded box drawing, text left and numbers right (colour is added by
//! the command line, only on a terminal).

use super::Exporter;
use crate::grid::{Align, Grid, SpreadMode};
use crate::report::Report;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

/// A table for a terminal.
pub struct Terminal;

impl Exporter for Terminal {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let opts = crate::options::Options::default();
        Ok(crate::layout::render(report, crate::Format::Terminal, &opts)?.text)
    }
}

/// A [`Grid`] for a terminal: caption above, box-drawn table with numbers right-aligned, notes
/// below.
pub fn grid_terminal(grid: &Grid, mode: SpreadMode) -> String {
    let mut cells = vec![grid.headings.clone()];
    cells.extend(grid.text_rows(mode));
    let mut t = Builder::from_iter(cells).build();
    t.with(Style::rounded());
    for i in 0..grid.headings.len() {
        if grid.align_of(i) == Align::Right {
            t.modify(Columns::one(i), Alignment::right());
        }
    }
    let mut parts = Vec::new();
    if let Some(caption) = &grid.caption {
        parts.push(caption.clone());
    }
    parts.push(t.to_string());
    parts.extend(grid.notes.iter().cloned());
    parts.join("\n")
}
