//! The terminal format: rounded box drawing, no colours, metric names left and numbers right.

use super::Exporter;
use crate::report::Report;
use crate::rows::MetricTable;
use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Style};

/// A table for a terminal.
pub struct Terminal;

impl Exporter for Terminal {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let table = MetricTable::from_report(report);
        let mut t = Builder::from_iter(table.text_cells()).build();
        t.with(Style::rounded());
        t.modify(Columns::new(1..), Alignment::right());
        Ok(t.to_string())
    }
}
