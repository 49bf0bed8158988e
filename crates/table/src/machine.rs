//! Tables for machines (CSV, JSON): named columns of raw values. [`MachineTable::from_report`]
//! is the layout of `--format csv`/`json` without layout flags: one row per run, one column per
//! summary member, named as in the summary so that a column reads as `jq .member` would.
//! [`MachineTable::from_grid`] takes any laid-out [`Grid`] of numbers instead, with stable column
//! names given by the layout (the field names as typed) and numbers at full precision; a cell
//! with a spread over runs adds `<name>_sd` and `<name>_cv_pct` columns (and `<name>_ci95_lo`,
//! `<name>_ci95_hi` with `--spread ci`), so that the spread is data too. Values are never the
//! two-decimal strings people read.

use crate::error::Error;
use crate::grid::{Cell, Grid, Kind, Spread, SpreadMode};
use crate::report::Report;
use serde_json::Value;
use std::collections::BTreeSet;
use tokenpipe_format::vocab::{self, Figure};

/// The summary members that lead every machine table, in the summary's own order: `label`,
/// `run_id`, then these run-wide figures, each present in every summary.
const LEADING_FIGURES: &[Figure] = &[
    vocab::REQUESTS_OK,
    vocab::REQUESTS_FAILED,
    vocab::DURATION_S,
    vocab::INPUT_TOKENS_TOTAL,
    vocab::OUTPUT_TOKENS_TOTAL,
    vocab::REQUEST_RATE,
    vocab::OUTPUT_TPS,
    vocab::TOTAL_TPS,
    vocab::JITTER,
];

/// The verdict's members that follow [`LEADING_FIGURES`] in every machine table: whether the
/// run is comparable and why not, from the summary's `verdict` (or, for a summary written before
/// format 1.7, the same rule applied to it), named by their path in the summary.
const VERDICT_FIGURES: &[Figure] = &[vocab::COMPARABLE, vocab::VERDICT];

/// The leading columns' members, in order.
fn leading() -> Vec<&'static str> {
    ["label", "run_id"]
        .into_iter()
        .chain(LEADING_FIGURES.iter().map(|f| f.member))
        .chain(VERDICT_FIGURES.iter().map(|f| f.member))
        .collect()
}

/// Runs as rows and summary members as columns, values as JSON scalars (`null` where a run has
/// no value).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MachineTable {
    /// Column names: `label`, `run_id`, [`LEADING_FIGURES`] and [`VERDICT_FIGURES`], then every
    /// other scalar member
    /// any run carries, by name, then the statistic members (`ttft_p99_ms`) by name.
    pub columns: Vec<String>,
    /// One row per run, one value per column.
    pub rows: Vec<Vec<Value>>,
}

impl MachineTable {
    /// Flattens the scalar members of every summary of `report`; nested members (`llama_benchy`,
    /// `vllm`, `across_runs`, histograms) and lists stay in the NDJSON summary.
    pub fn from_report(report: &Report) -> Result<Self, Error> {
        let mut objects = Vec::with_capacity(report.runs.len());
        for run in &report.runs {
            match serde_json::to_value(&run.summary).map_err(Error::encode)? {
                Value::Object(mut map) => {
                    for figure in VERDICT_FIGURES {
                        if let Some(value) = (figure.get)(&run.summary) {
                            map.insert(figure.member.to_string(), value);
                        }
                    }
                    objects.push(map)
                }
                other => {
                    return Err(Error::encode(format!(
                        "a summary serialized as {other}, not an object"
                    )))
                }
            }
        }
        let stat_names: BTreeSet<&str> = report
            .runs
            .iter()
            .flat_map(|r| r.summary.stats.0.keys().map(String::as_str))
            .collect();
        let leading = leading();
        let others: BTreeSet<&str> = objects
            .iter()
            .flat_map(|o| o.iter())
            .filter(|(k, v)| is_scalar(v) && !leading.contains(&k.as_str()))
            .map(|(k, _)| k.as_str())
            .filter(|k| !stat_names.contains(k))
            .collect();
        let columns: Vec<String> = leading
            .iter()
            .copied()
            .chain(others)
            .chain(stat_names)
            .map(String::from)
            .collect();
        let rows = objects
            .iter()
            .map(|o| {
                columns
                    .iter()
                    .map(|c| {
                        o.get(c)
                            .filter(|v| is_scalar(v))
                            .cloned()
                            .unwrap_or(Value::Null)
                    })
                    .collect()
            })
            .collect();
        Ok(Self { columns, rows })
    }
}

/// Whether a member fits one cell: a number, string, boolean or null.
fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

impl MachineTable {
    /// The figures of `grid` for machines, its columns named by `names` (one per heading).
    pub fn from_grid(grid: &Grid, names: &[String], mode: SpreadMode) -> Self {
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
            let spreads: Vec<Option<Spread>> = cells
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
        Self { columns, rows }
    }
}

fn number(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// A cell as a JSON value: counts as integers, other numbers as they are, text as strings, a
/// verdict as a boolean, missing as null.
fn cell_value(cell: &Cell) -> Value {
    match cell {
        Cell::Text(s) => Value::String(s.clone()),
        Cell::Verdict { comparable, .. } => Value::Bool(*comparable),
        Cell::Marked(cell, _) => cell_value(cell),
        Cell::Missing => Value::Null,
        Cell::Num(n) if n.kind == Kind::Count && n.value.fract() == 0.0 && n.value.abs() < 9e15 => {
            Value::from(n.value as i64)
        }
        Cell::Num(n) => number(Some(n.value)),
    }
}

#[cfg(test)]
mod tests;
