//! Pivots (`--rows model --cols profile --cell output_tps`): one row per value of one field, one
//! column per value of another, the cell field where they meet, as in a model × profile matrix.
//! Keys go in natural order (`c2` before `c16`, numbers by value); each cell holds at most one
//! shown run, so a figure never silently stands for two. `--baseline VALUE` adds a ratio column
//! (`0.85x`) after each column, against the column VALUE. [`super::top`] ranks the same cells.
//!
//! Defaults: `--rows F` alone puts one column per run label (`--cols label`); `--cols F` alone
//! one row per label (`--rows label`); `--cell` is `output_tps`. Column headings are the column
//! values with the cell's unit (`c1 [tok/s]`), and the caption names the cell field and both
//! keys (`Output [tok/s] by model and profile`). The figure of a run that is not comparable is
//! marked `†`, and a note under the table gives its reason (`--only-comparable` leaves such
//! runs out instead).

use crate::baseline::ratio_cell;
use crate::error::Error;
use crate::field::{compare_cells, Field};
use crate::grid::{Align, Cell, Grid, SpreadMode};
use crate::laid_out::LaidOut;
use crate::machine::MachineTable;
use crate::options::Options;
use crate::report::{Report, RunReport};
use std::collections::HashMap;

/// The cell field when `--cell` is not given.
pub const DEFAULT_CELL: &str = "output_tps";

/// The key field of the side (rows or columns) the command line left out.
pub const DEFAULT_KEY: &str = "label";

/// A pivot of the shown runs, before layout: the keys in order and the cell of each pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    /// The field whose values are the rows.
    pub rows: Field,
    /// The field whose values are the columns; `None` puts every run in one column (a ranking
    /// over all runs, `--top` without `--cols`).
    pub cols: Option<Field>,
    /// The field in each cell.
    pub cell: Field,
    /// `--columns`: fields shown once per row, after the row key.
    pub extras: Vec<Field>,
    /// Row keys in natural order.
    pub row_keys: Vec<Cell>,
    /// Column keys in natural order (one `all runs` key without `cols`).
    pub col_keys: Vec<Cell>,
    /// `cells[row][col]`: the cell field of the one run with both keys, or missing.
    pub cells: Vec<Vec<Cell>>,
    /// `extra_cells[row][extra]`: each extra field's value over the row's runs.
    pub extra_cells: Vec<Vec<Cell>>,
    /// Runs that had no value for a key (shown under `-`), for stderr.
    pub notes: Vec<String>,
    /// `marked[row][col]`: the cell's run is not comparable, so people see it marked.
    pub marked: Vec<Vec<bool>>,
    /// One line per shown run that is not comparable, with its reason, by the (row, column) of
    /// its cell: the note under the table that explains the mark.
    pub verdict_notes: Vec<(usize, usize, String)>,
}

/// The text of a key cell, as headings and error messages show it.
pub fn key_text(key: &Cell) -> String {
    key.render(SpreadMode::None)
}

/// How a run is named in messages: `label (run id)`.
fn run_name(run: &RunReport) -> String {
    format!("{} ({})", run.name(), run.summary.run_id)
}

/// The unit in a heading's brackets: `Output [tok/s]` → `tok/s`.
pub fn unit_of(heading: &str) -> Option<&str> {
    let open = heading.rfind('[')?;
    heading[open + 1..]
        .strip_suffix(']')
        .filter(|u| !u.is_empty())
}

/// Sorts keys in natural order and drops repeats.
fn sorted_keys(mut keys: Vec<Cell>) -> Vec<Cell> {
    keys.sort_by(compare_cells);
    keys.dedup_by(|a, b| key_text(a) == key_text(b));
    keys
}

impl Pivot {
    /// Lays the shown runs of `report` out by the keys `opts` names. Bad input (exit 2): no runs,
    /// an unknown field, or two runs in one cell.
    pub fn build(report: &Report, opts: &Options) -> Result<Self, Error> {
        let shown = report.shown();
        if shown.is_empty() {
            return Err(Error::NothingToShow(
                "no runs to pivot: the input has none".into(),
            ));
        }
        let (rows_name, cols_name) = match (&opts.rows, &opts.cols) {
            (Some(r), Some(c)) => (r.as_str(), Some(c.as_str())),
            (Some(r), None) if opts.top.is_some() => (r.as_str(), None),
            (Some(r), None) => (r.as_str(), Some(DEFAULT_KEY)),
            (None, Some(c)) => (DEFAULT_KEY, Some(c.as_str())),
            (None, None) => (DEFAULT_KEY, None),
        };
        let rows = Field::parse(rows_name, report)?;
        let cols = cols_name.map(|c| Field::parse(c, report)).transpose()?;
        let cell = Field::parse(opts.cell.as_deref().unwrap_or(DEFAULT_CELL), report)?;
        let extras = opts
            .columns
            .iter()
            .filter(|c| !c.trim().is_empty())
            .map(|c| Field::parse(c, report))
            .collect::<Result<Vec<_>, _>>()?;

        // Without --rows, runs are the rows: name them as the other layouts do (`sim c=16`),
        // so that a sweep under one label still has one row per run.
        let column_labels = crate::labels::column_labels(report);
        let rows_by_column_label = opts.rows.is_none();
        let mut notes = Vec::new();
        let mut key_of = |field: &Field, run: &RunReport, label: &str| {
            let key = field.cell(run, label);
            if key == Cell::Missing {
                notes.push(format!(
                    "run {} has no {}: shown under -",
                    run_name(run),
                    field.name
                ));
            }
            key
        };
        let all_runs = Cell::text("all runs");
        let mut keyed = Vec::with_capacity(shown.len());
        for &i in &shown {
            let run = &report.runs[i];
            let row_label = if rows_by_column_label {
                column_labels[i].as_str()
            } else {
                run.name()
            };
            let row = key_of(&rows, run, row_label);
            let col = match &cols {
                Some(f) => key_of(f, run, run.name()),
                None => all_runs.clone(),
            };
            keyed.push((i, row, col));
        }
        let row_keys = sorted_keys(keyed.iter().map(|(_, r, _)| r.clone()).collect());
        let col_keys = sorted_keys(keyed.iter().map(|(_, _, c)| c.clone()).collect());
        let row_index: HashMap<String, usize> = row_keys
            .iter()
            .enumerate()
            .map(|(i, k)| (key_text(k), i))
            .collect();
        let col_index: HashMap<String, usize> = col_keys
            .iter()
            .enumerate()
            .map(|(i, k)| (key_text(k), i))
            .collect();

        let mut owner: Vec<Vec<Option<usize>>> = vec![vec![None; col_keys.len()]; row_keys.len()];
        let mut row_runs: Vec<Vec<usize>> = vec![Vec::new(); row_keys.len()];
        for (run, row, col) in &keyed {
            let (r, c) = (row_index[&key_text(row)], col_index[&key_text(col)]);
            if let Some(first) = owner[r][c] {
                let col_part = cols
                    .as_ref()
                    .map(|f| format!(", {}={}", f.name, key_text(col)))
                    .unwrap_or_default();
                let (a, b) = (&report.runs[first], &report.runs[*run]);
                return Err(Error::SharedCell {
                    first: run_name(a),
                    second: run_name(b),
                    cell: format!("{}={}{col_part}", rows.name, key_text(row)),
                    groups: a.is_group() || b.is_group(),
                });
            }
            owner[r][c] = Some(*run);
            row_runs[r].push(*run);
        }
        let cells = owner
            .iter()
            .map(|row| {
                row.iter()
                    .map(|run| match run {
                        Some(i) => {
                            let run = &report.runs[*i];
                            cell.cell(run, run.name())
                        }
                        None => Cell::Missing,
                    })
                    .collect()
            })
            .collect();
        let marked = owner
            .iter()
            .map(|row| {
                row.iter()
                    .map(|run| run.is_some_and(|i| !crate::verdict::comparable(&report.runs[i])))
                    .collect()
            })
            .collect();
        let verdict_notes = keyed
            .iter()
            .filter_map(|(i, row, col)| {
                let run = &report.runs[*i];
                let verdict = tokenpipe_format::vocab::verdict_of(&run.summary);
                (!verdict.comparable).then(|| {
                    (
                        row_index[&key_text(row)],
                        col_index[&key_text(col)],
                        format!(
                            "{} {} is not comparable: {}",
                            crate::verdict::MARK,
                            run_name(run),
                            verdict.reason
                        ),
                    )
                })
            })
            .collect();
        let extra_cells = row_runs
            .iter()
            .map(|runs| {
                extras
                    .iter()
                    .map(|f| joined_cell(f, runs, report, opts.spread))
                    .collect()
            })
            .collect();
        Ok(Self {
            rows,
            cols,
            cell,
            extras,
            row_keys,
            col_keys,
            cells,
            extra_cells,
            notes,
            marked,
            verdict_notes,
        })
    }

    /// The index of the column `value` (`--baseline`), or bad input listing the columns.
    pub fn column_of(&self, value: &str) -> Result<usize, Error> {
        let found = self
            .col_keys
            .iter()
            .position(|k| key_text(k) == value && self.cols.is_some());
        found.ok_or_else(|| {
            let what = self.cols.as_ref().map_or("--cols", |f| f.name.as_str());
            let values: Vec<String> = self.col_keys.iter().map(key_text).collect();
            Error::Baseline {
                label: value.to_string(),
                why: format!(
                    "no {what} column has that value (the columns are: {})",
                    values.join(", ")
                ),
            }
        })
    }

    /// Column order for display: the baseline column first, when there is one.
    fn column_order(&self, baseline: Option<usize>) -> Vec<usize> {
        let mut order: Vec<usize> = baseline.into_iter().collect();
        order.extend((0..self.col_keys.len()).filter(|&c| Some(c) != baseline));
        order
    }

    /// The caption: `Output [tok/s] by model and profile`.
    fn caption(&self) -> String {
        match &self.cols {
            Some(cols) => format!(
                "{} by {} and {}",
                self.cell.heading, self.rows.name, cols.name
            ),
            None => format!("{} by {}", self.cell.heading, self.rows.name),
        }
    }

    /// The heading of a value column: its key with the cell's unit (`c1 [tok/s]`).
    fn value_heading(&self, col: usize) -> String {
        let key = key_text(&self.col_keys[col]);
        match unit_of(&self.cell.heading) {
            Some(unit) => format!("{key} [{unit}]"),
            None => key,
        }
    }

    /// The pivot as a grid for the text formats; with `baseline`, a ratio column after each
    /// other column.
    pub fn to_grid(&self, baseline: Option<usize>) -> Grid {
        let mut grid = self.plain_grid(baseline);
        let first = 1 + self.extras.len();
        for (r, line) in grid.rows.iter_mut().enumerate() {
            let mut k = first;
            for c in self.column_order(baseline) {
                if self.marked[r][c] {
                    let cell = std::mem::replace(&mut line[k], Cell::Missing);
                    line[k] = Cell::Marked(Box::new(cell), crate::verdict::MARK);
                }
                k += if baseline.is_some_and(|b| b != c) {
                    2
                } else {
                    1
                };
            }
        }
        grid.notes
            .extend(self.verdict_notes.iter().map(|(.., note)| note.clone()));
        grid
    }

    /// The grid without marks or their notes: what machines read.
    fn plain_grid(&self, baseline: Option<usize>) -> Grid {
        let align_of = |f: &Field| {
            if f.is_numeric() {
                Align::Right
            } else {
                Align::Left
            }
        };
        let mut headings = vec![self.rows.heading.clone()];
        let mut align = vec![align_of(&self.rows)];
        for f in &self.extras {
            headings.push(f.heading.clone());
            align.push(align_of(f));
        }
        let order = self.column_order(baseline);
        for &c in &order {
            headings.push(self.value_heading(c));
            align.push(Align::Right);
            if let Some(base) = baseline.filter(|&b| b != c) {
                headings.push(format!(
                    "{} ÷ {}",
                    key_text(&self.col_keys[c]),
                    key_text(&self.col_keys[base])
                ));
                align.push(Align::Right);
            }
        }
        let rows: Vec<Vec<Cell>> = self
            .row_keys
            .iter()
            .enumerate()
            .map(|(r, key)| {
                let mut line = vec![key.clone()];
                line.extend(self.extra_cells[r].iter().cloned());
                for &c in &order {
                    line.push(self.cells[r][c].clone());
                    if let Some(base) = baseline.filter(|&b| b != c) {
                        line.push(ratio_cell(&self.cells[r][c], &self.cells[r][base]));
                    }
                }
                line
            })
            .collect();
        let mut grid = Grid {
            caption: Some(self.caption()),
            headings,
            align,
            rows,
            ..Grid::default()
        };
        if let Some(base) = baseline {
            grid.notes.push(format!(
                "Ratios: each column's value ÷ the {} value in the same row.",
                key_text(&self.col_keys[base])
            ));
        }
        grid
    }

    /// The pivot for machine formats: the grid's raw numbers, columns named by the row key's
    /// field name, the extra fields' names, each column value (with `<value>_sd` and
    /// `<value>_cv_pct` where cells carry a spread over runs, `<value>_ratio` with a baseline).
    pub fn to_machine(&self, baseline: Option<usize>, mode: SpreadMode) -> MachineTable {
        let mut names = vec![self.rows.name.clone()];
        names.extend(self.extras.iter().map(|f| f.name.clone()));
        for c in self.column_order(baseline) {
            let key = key_text(&self.col_keys[c]);
            if baseline.is_some_and(|b| b != c) {
                names.push(key.clone());
                names.push(format!("{key}_ratio"));
            } else {
                names.push(key);
            }
        }
        MachineTable::from_grid(&self.plain_grid(baseline), &names, mode)
    }
}

/// One value of `field` for a row's runs: the value itself when they agree, else their values
/// joined with ` / ` in run order.
fn joined_cell(field: &Field, runs: &[usize], report: &Report, mode: SpreadMode) -> Cell {
    let mut seen: Vec<(String, Cell)> = Vec::new();
    for &i in runs {
        let run = &report.runs[i];
        let cell = field.cell(run, run.name());
        let text = cell.render(mode);
        if !seen.iter().any(|(t, _)| *t == text) {
            seen.push((text, cell));
        }
    }
    match seen.len() {
        0 => Cell::Missing,
        1 => seen.remove(0).1,
        _ => Cell::text(
            seen.iter()
                .map(|(t, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(" / "),
        ),
    }
}

/// The pivot `opts` asks for (`--rows`, `--cols`, `--cell`, `--columns`, `--baseline`), laid out
/// for people (a grid) and for machines (raw numbers), with notes for stderr (runs that had no
/// key value).
pub(crate) fn lay_out(report: &Report, opts: &Options) -> Result<LaidOut, Error> {
    let pivot = Pivot::build(report, opts)?;
    let baseline = opts
        .baseline
        .as_deref()
        .map(|b| pivot.column_of(b))
        .transpose()?;
    let mut grid = pivot.to_grid(baseline);
    let notes = grid.spread_notes(opts.spread);
    grid.notes.extend(notes);
    let machine = pivot.to_machine(baseline, opts.spread);
    Ok(LaidOut::table(grid, machine, opts.spread, pivot.notes))
}

#[cfg(test)]
mod tests;
