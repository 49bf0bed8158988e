//! The JSON format: an array with one object per run, members named and ordered as the CSV
//! columns, `null` where a run has no value.

use super::Exporter;
use crate::machine::MachineTable;
use crate::report::Report;

/// A JSON array of flat objects.
pub struct Json;

impl Exporter for Json {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let table = MachineTable::from_report(report)?;
        // Written by hand so members keep the column order (serde_json's map sorts them).
        let mut objects = Vec::with_capacity(table.rows.len());
        for row in &table.rows {
            let mut members = Vec::with_capacity(row.len());
            for (name, value) in table.columns.iter().zip(row) {
                members.push(format!(
                    "    {}: {}",
                    serde_json::to_string(name)?,
                    serde_json::to_string(value)?
                ));
            }
            objects.push(format!("  {{\n{}\n  }}", members.join(",\n")));
        }
        if objects.is_empty() {
            return Ok("[]".into());
        }
        Ok(format!("[\n{}\n]", objects.join(",\n")))
    }
}
