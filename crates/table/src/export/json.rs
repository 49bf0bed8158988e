//! The JSON format: an array with one object per run, members named and ordered as the CSV
//! columns, `null` where a run has no value.

use super::Exporter;
use crate::machine::MachineTable;
use crate::report::Report;

/// A JSON array of flat objects.
pub struct Json;

impl Exporter for Json {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        MachineTable::from_report(report)?.to_json()
    }
}
