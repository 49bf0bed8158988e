//! The CSV format: a header row of member names, one row per run, numbers as the summary holds
//! them and missing values empty, for spreadsheets and dataframes.

use super::Exporter;
use crate::machine::MachineTable;
use crate::report::Report;

/// Comma-separated values, RFC 4180 quoting.
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        MachineTable::from_report(report)?.to_csv()
    }
}
