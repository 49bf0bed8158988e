//! Runs as rows: one row per run, a column per field (`--columns`, or the workload, whether the
//! run is comparable when some run is not, the counts, output throughput and the main latency percentiles), text
//! left and numbers right; a note under the table gives the full reason of each run that is not
//! comparable. With
//! `--baseline`, each figure is followed by its ratio against the baseline run of the same
//! workload. It stays readable with many runs, where runs as columns would not fit a screen.

use super::Runs;
use crate::baseline::{ratio_cell, Baseline};
use crate::error::Error;
use crate::field::{Better, Field};
use crate::grid::{Align, Cell, Grid, SpreadMode};
use crate::laid_out::LaidOut;
use crate::machine::MachineTable;
use crate::options::Options;
use crate::report::Report;

/// Runs as rows, as `opts` asks (`--columns`, `--sort`, `--baseline`, `--spread`): a grid for
/// people, its units on a second heading line where the format can, and the same figures for
/// machines under the field names as typed.
pub(crate) fn lay_out(report: &Report, opts: &Options) -> Result<LaidOut, Error> {
    let runs = Runs::of(report, opts)?;
    let notes = runs.notes(report);
    let fields = long_fields(report, &opts.columns)?;
    let mut lg = long_grid(
        report,
        &runs.order,
        &runs.labels,
        &fields,
        runs.baseline.as_ref(),
        opts.spread,
    );
    let machine = MachineTable::from_grid(&lg.grid, &lg.names, opts.spread);
    lg.grid.unit_lines = true;
    Ok(LaidOut::table(lg.grid, machine, opts.spread, notes))
}

/// The columns of the long layout when `--columns` is not given (those some run has).
const DEFAULT_COLUMNS: &[&str] = &[
    "workload",
    "comparable",
    "ok",
    "failed",
    "cancelled",
    "not_sent",
    "unfinished",
    "output_tps",
    "ttft.p50",
    "ttft.p99",
    "tpot.p50",
    "tpot.p99",
    "itl.p99",
    "e2el.p99",
];

/// The default columns shown only when some run has one: the server's failures and the run's
/// own ends.
const COUNTED_WHEN_SOME: &[&str] = &["failed", "cancelled", "not_sent", "unfinished"];

/// The fields of the long layout: `columns` resolved (a name no run has is bad input), or the
/// [`DEFAULT_COLUMNS`] some run has a value for (`failed`, `cancelled`, `not_sent` and
/// `unfinished` only when some run had one, `comparable` only when some run is not, so that 21
/// comparable runs still fit 120 columns).
pub(super) fn long_fields(report: &Report, columns: &[String]) -> Result<Vec<Field>, Error> {
    if !columns.is_empty() {
        return columns
            .iter()
            .filter(|c| !c.trim().is_empty())
            .map(|c| Field::parse(c, report))
            .collect();
    }
    // A column shows when some run has a value for it; failures only when some run had one.
    let shows = |f: &Field, c: &Cell| match c {
        Cell::Missing => false,
        Cell::Num(n) if COUNTED_WHEN_SOME.contains(&f.name.as_str()) => n.value != 0.0,
        Cell::Verdict { comparable, .. } => !comparable,
        _ => true,
    };
    Ok(DEFAULT_COLUMNS
        .iter()
        .filter_map(|name| Field::parse(name, report).ok())
        .filter(|f| report.runs.iter().any(|r| shows(f, &f.cell(r, ""))))
        .collect())
}

/// A long grid with its machine column names (the field names as typed, `label` first, ratio
/// columns `<name>_ratio`).
#[derive(Debug, Clone, PartialEq)]
struct LongGrid {
    /// The grid people read.
    grid: Grid,
    /// One stable name per column, for CSV and JSON.
    names: Vec<String>,
}

/// The long grid of `runs` (indices into `report.runs`, in order), labelled by `labels`
/// (indexed by run).
fn long_grid(
    report: &Report,
    runs: &[usize],
    labels: &[String],
    fields: &[Field],
    baseline: Option<&Baseline>,
    mode: SpreadMode,
) -> LongGrid {
    let mut grid = Grid {
        headings: vec!["Label".into()],
        align: vec![Align::Left],
        rows: runs.iter().map(|&i| vec![Cell::text(&labels[i])]).collect(),
        ..Grid::default()
    };
    let mut names = vec!["label".to_string()];
    for field in fields.iter().filter(|f| f.name != "label") {
        let cells: Vec<Cell> = runs
            .iter()
            .map(|&i| field.cell(&report.runs[i], &labels[i]))
            .collect();
        let numeric = cells.iter().any(|c| matches!(c, Cell::Num(_)))
            && cells.iter().all(|c| !matches!(c, Cell::Text(_)));
        grid.headings.push(field.heading.clone());
        grid.align
            .push(if numeric { Align::Right } else { Align::Left });
        names.push(field.name.clone());
        for (row, cell) in grid.rows.iter_mut().zip(&cells) {
            row.push(cell.clone());
        }
        let Some(b) = baseline.filter(|_| numeric && field.better != Better::Neither) else {
            continue;
        };
        grid.headings
            .push(format!("{} ×{}", without_unit(&field.heading), b.label));
        grid.align.push(Align::Right);
        names.push(format!("{}_ratio", field.name));
        for (k, row) in grid.rows.iter_mut().enumerate() {
            let ratio = b
                .base_of(report, runs[k])
                .and_then(|base| runs.iter().position(|&r| r == base))
                .map_or(Cell::Missing, |pos| ratio_cell(&cells[k], &cells[pos]));
            row.push(ratio);
        }
    }
    let notes = grid.spread_notes(mode);
    grid.notes.extend(notes);
    grid.notes
        .extend(crate::verdict::notes(report, runs, labels));
    LongGrid { grid, names }
}

/// `Output [tok/s]` → `Output`: a ratio has no unit.
fn without_unit(heading: &str) -> &str {
    heading.split(" [").next().unwrap_or(heading)
}
