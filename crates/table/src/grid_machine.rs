//! Any [`Grid`] of numbers for machines: CSV (one header row) and JSON (an array of objects),
//! with stable column names given by the layout (the field names as typed) and numbers at full
//! precision. A cell with a spread over runs adds `<name>_sd` and `<name>_cv_pct` columns (and
//! `<name>_ci95_lo`, `<name>_ci95_hi` with `--spread ci`), so that the spread is data too.

use crate::grid::Kind;
use crate::grid::{Cell, Grid, SpreadMode};
use crate::machine::MachineTable;
use serde_json::Value;

/// Column names and rows of values for `grid`, its columns named by `names` (one per heading).
pub fn grid_values(grid: &Grid, names: &[String], mode: SpreadMode) -> MachineTable {
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
            row.push(cell_value(cell));
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
    MachineTable { columns, rows }
}

fn number(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A cell as a JSON value: counts as integers, other numbers as they are, text as strings,
/// missing as null.
pub fn cell_value(cell: &Cell) -> Value {
    match cell {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Missing => Value::Null,
        Cell::Num(n) if n.kind == Kind::Count && n.value.fract() == 0.0 && n.value.abs() < 9e15 => {
            Value::from(n.value as i64)
        }
        Cell::Num(n) => number(Some(n.value)),
    }
}
