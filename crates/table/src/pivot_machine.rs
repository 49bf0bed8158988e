//! Pivots and rankings for machines (`--format csv|json`): named columns of raw numbers, with
//! spreads in their own `_sd` columns, so a spreadsheet gets the grid people see without the
//! text formatting.

use crate::export::Format;
use crate::grid::Cell;
use crate::rows::Kind;
use serde_json::Value;

/// A table of named columns and raw values, `null` where a value is missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MachineRows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Value>>,
}

/// A cell's raw value: its number (a group summary's mean), its text, or null.
pub fn value(cell: &Cell) -> Value {
    match cell {
        Cell::Num(n) if n.kind == Kind::Count && n.value.fract() == 0.0 && n.value.abs() < 9e15 => {
            Value::from(n.value as i64)
        }
        Cell::Num(n) => Value::from(n.value),
        Cell::Text(s) => Value::from(s.clone()),
        Cell::Missing => Value::Null,
    }
}

/// A cell's spread over runs (sample standard deviation), for its `_sd` column.
pub fn sd(cell: &Cell) -> Option<f64> {
    match cell {
        Cell::Num(n) => n.spread.map(|s| s.sd),
        _ => None,
    }
}

/// Writes `table` as CSV or JSON (an array of objects with members in column order).
pub fn write(table: &MachineRows, format: Format) -> anyhow::Result<String> {
    match format {
        Format::Json => json(table),
        _ => csv(table),
    }
}

fn csv(table: &MachineRows) -> anyhow::Result<String> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(&table.columns)?;
    for row in &table.rows {
        w.write_record(row.iter().map(|v| match v {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }))?;
    }
    let mut text = String::from_utf8(w.into_inner()?)?;
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

fn json(table: &MachineRows) -> anyhow::Result<String> {
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
