//! Any [`Grid`] of numbers for machines: CSV (one header row) and JSON (an array of objects),
//! with stable column names given by the layout (the field names as typed) and numbers at full
//! precision. A cell with a spread over runs adds `<name>_sd` and `<name>_cv_pct` columns (and
//! `<name>_ci95_lo`, `<name>_ci95_hi` with `--spread ci`), so that the spread is data too.

use crate::grid::{Cell, Grid, SpreadMode};
use crate::rows::Kind;
use serde_json::Value;

/// Column names and rows of values for `grid`, its columns named by `names` (one per heading).
pub fn grid_values(
    grid: &Grid,
    names: &[String],
    mode: SpreadMode,
) -> (Vec<String>, Vec<Vec<Value>>) {
    let mut columns = Vec::new();
    let mut rows: Vec<Vec<Value>> = vec![Vec::new(); grid.rows.len()];
    for (i, name) in names.iter().enumerate().take(grid.headings.len()) {
        let cells: Vec<&Cell> = grid
            .rows
            .iter()
            .map(|r| r.get(i).unwrap_or(&Cell::Missing))
            .collect();
        columns.push(name.clone());
        for (row, cell) in rows.iter_mut().zip(&cells) {
            row.push(value(cell));
        }
        let spreads: Vec<Option<crate::grid::Spread>> = cells
            .iter()
            .map(|c| match c {
                Cell::Num(n) => n.spread,
                _ => None,
            })
            .collect();
        if mode == SpreadMode::None || spreads.iter().all(Option::is_none) {
            continue;
        }
        columns.push(format!("{name}_sd"));
        columns.push(format!("{name}_cv_pct"));
        let ci = mode == SpreadMode::Ci;
        if ci {
            columns.push(format!("{name}_ci95_lo"));
            columns.push(format!("{name}_ci95_hi"));
        }
        for (row, s) in rows.iter_mut().zip(&spreads) {
            row.push(number(s.map(|s| s.sd)));
            row.push(number(s.and_then(|s| s.cv_pct)));
            if ci {
                let bounds = s.and_then(|s| s.ci95);
                row.push(number(bounds.map(|b| b[0])));
                row.push(number(bounds.map(|b| b[1])));
            }
        }
    }
    (columns, rows)
}

fn number(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A cell as a JSON value: counts as integers, other numbers as they are, text as strings,
/// missing as null.
fn value(cell: &Cell) -> Value {
    match cell {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Missing => Value::Null,
        Cell::Num(n) if n.kind == Kind::Count && n.spread.is_none() && n.value.fract() == 0.0 => {
            Value::from(n.value as i64)
        }
        Cell::Num(n) => number(Some(n.value)),
    }
}

/// `grid` as CSV: a header row of `names`, one line per row, missing values empty.
pub fn grid_csv(grid: &Grid, names: &[String], mode: SpreadMode) -> anyhow::Result<String> {
    let (columns, rows) = grid_values(grid, names, mode);
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(&columns)?;
    for row in &rows {
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

/// `grid` as a JSON array of objects whose members keep the column order.
pub fn grid_json(grid: &Grid, names: &[String], mode: SpreadMode) -> anyhow::Result<String> {
    let (columns, rows) = grid_values(grid, names, mode);
    let mut objects = Vec::with_capacity(rows.len());
    for row in &rows {
        let members = columns
            .iter()
            .zip(row)
            .map(|(name, v)| {
                Ok(format!(
                    "    {}: {}",
                    serde_json::to_string(name)?,
                    serde_json::to_string(v)?
                ))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        objects.push(format!("  {{\n{}\n  }}", members.join(",\n")));
    }
    if objects.is_empty() {
        return Ok("[]".into());
    }
    Ok(format!("[\n{}\n]", objects.join(",\n")))
}
