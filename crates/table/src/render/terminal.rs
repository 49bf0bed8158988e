//! The terminal format: rounded box drawing, no colours, metric names left and numbers right.

use crate::rows::MetricTable;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

/// Renders `table` for a terminal.
pub fn render(table: &MetricTable) -> String {
    let mut t = Builder::from_iter(table.text_cells()).build();
    t.with(Style::rounded());
    t.modify(Columns::new(1..), Alignment::right());
    t.to_string()
}
