//! What the drawn charts show ([`crate::chart`] draws them): one chart (`--format svg`), or a
//! table with every chart the report has data for (`--format html`), each with a note for every
//! run a chart leaves out.

use crate::chart::{left_out, with_data, ChartKind};
use crate::laid_out::LaidOut;
use crate::report::Report;

/// The chart `kind` of `report` alone.
pub(crate) fn one(report: &Report, kind: ChartKind) -> LaidOut {
    LaidOut {
        charts: vec![kind],
        notes: left_out(report, kind),
        ..LaidOut::default()
    }
}

/// `laid` (a table) with every chart `report` has data for after it.
pub(crate) fn every(report: &Report, mut laid: LaidOut) -> LaidOut {
    laid.charts = with_data(report);
    for &kind in &laid.charts {
        laid.notes.extend(left_out(report, kind));
    }
    laid
}
