//! The JSON format: an array with one object per row of the machine table, members named and
//! ordered as the CSV columns, `null` where a run has no value.

use super::Exporter;
use crate::error::Error;
use crate::laid_out::LaidOut;
use crate::report::Report;

/// A JSON array of flat objects.
pub(crate) struct Json;

impl Exporter for Json {
    /// Written by hand, as serde_json's map would sort the members.
    fn export(&self, laid: &LaidOut, _: &Report) -> Result<String, Error> {
        let table = &laid.machine;
        let mut objects = Vec::with_capacity(table.rows.len());
        for row in &table.rows {
            let mut members = Vec::with_capacity(row.len());
            for (name, value) in table.columns.iter().zip(row) {
                members.push(format!(
                    "    {}: {}",
                    serde_json::to_string(name).map_err(Error::encode)?,
                    serde_json::to_string(value).map_err(Error::encode)?
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
