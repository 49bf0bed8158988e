//! The CSV format: a header row of member names, one row per run, numbers as the summary holds
//! them and missing values empty, for spreadsheets and dataframes.

use super::Exporter;
use crate::machine::MachineTable;
use crate::report::Report;
use serde_json::Value;

/// Comma-separated values, RFC 4180 quoting.
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let table = MachineTable::from_report(report)?;
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(&table.columns)?;
        for row in &table.rows {
            w.write_record(row.iter().map(cell))?;
        }
        let mut text = String::from_utf8(w.into_inner()?)?;
        if text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }
}

/// One value as a CSV field: strings bare, null empty, numbers and booleans as JSON writes them.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
