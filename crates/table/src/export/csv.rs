//! The CSV format: a header row of the machine table's column names, one line per row, numbers
//! as the layout holds them and missing values empty, for spreadsheets and dataframes.

use super::Exporter;
use crate::error::Error;
use crate::laid_out::LaidOut;
use crate::report::Report;
use serde_json::Value;

/// Comma-separated values, RFC 4180 quoting.
pub(crate) struct Csv;

impl Exporter for Csv {
    /// Null is empty, strings bare, numbers and booleans as JSON writes them.
    fn export(&self, laid: &LaidOut, _: &Report) -> Result<String, Error> {
        let table = &laid.machine;
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(&table.columns).map_err(Error::encode)?;
        for row in &table.rows {
            w.write_record(row.iter().map(|v| match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }))
            .map_err(Error::encode)?;
        }
        let bytes = w.into_inner().map_err(|e| Error::encode(e.into_error()))?;
        let mut text = String::from_utf8(bytes).map_err(Error::encode)?;
        if text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }
}
