//! Runs as columns: the `vllm bench serve` block turned sideways ([`MetricTable`]), or the
//! `--columns` fields as rows, with the workload of each run on top, for group summaries how
//! many runs each pools, and whether each is comparable (a note under the table gives the full
//! reason of each that is not). With `--baseline`, each run's column is followed by its ratios
//! against the baseline run of its workload.

use super::Runs;
use crate::baseline::{ratio_cell, Baseline};
use crate::error::Error;
use crate::field::Field;
use crate::grid::{Align, Cell, Grid, Kind, Num, SpreadMode};
use crate::laid_out::LaidOut;
use crate::machine::MachineTable;
use crate::options::Options;
use crate::report::Report;
use crate::rows::{MetricTable, METRIC_HEADING};
use tokenpipe_format::vocab;

/// Runs as columns, as `opts` asks (`--columns`, `--sort`, `--baseline`, `--spread`): a grid
/// for people, none for machines (they get runs as rows).
pub(crate) fn lay_out(report: &Report, opts: &Options) -> Result<LaidOut, Error> {
    let runs = Runs::of(report, opts)?;
    let notes = runs.notes(report);
    let fields = if opts.columns.is_empty() {
        Vec::new()
    } else {
        super::long::long_fields(report, &opts.columns)?
    };
    let grid = wide_grid(
        report,
        &runs.order,
        &runs.labels,
        &fields,
        runs.baseline.as_ref(),
        opts.spread,
    );
    Ok(LaidOut::table(
        grid,
        MachineTable::default(),
        opts.spread,
        notes,
    ))
}

/// The wide grid of `runs` (indices into `report.runs`, in order), headed by `labels` (indexed
/// by run). `fields` replace the metric rows when given.
fn wide_grid(
    report: &Report,
    runs: &[usize],
    labels: &[String],
    fields: &[Field],
    baseline: Option<&Baseline>,
    mode: SpreadMode,
) -> Grid {
    let mut grid = if fields.is_empty() {
        MetricTable::for_runs(report, runs).to_grid()
    } else {
        let rows = fields
            .iter()
            .map(|f| {
                let mut row = vec![Cell::text(f.heading.clone())];
                row.extend(runs.iter().map(|&i| f.cell(&report.runs[i], &labels[i])));
                row
            })
            .collect();
        let mut headings = vec![METRIC_HEADING.to_string()];
        headings.extend(runs.iter().map(|&i| labels[i].clone()));
        Grid {
            headings,
            rows,
            ..Grid::default()
        }
    };
    grid.align = std::iter::once(Align::Left)
        .chain(runs.iter().map(|_| Align::Right))
        .collect();
    let mut top = Vec::new();
    if fields.is_empty() {
        let mut workload = vec![Cell::text("Workload")];
        workload.extend(runs.iter().map(|&i| {
            crate::workload::describe(&report.runs[i]).map_or(Cell::Missing, Cell::Text)
        }));
        if workload[1..].iter().any(|c| *c != Cell::Missing) {
            top.push(workload);
        }
        if runs.iter().any(|&i| report.runs[i].is_group()) {
            let mut pooled = vec![Cell::text("Runs")];
            pooled.extend(runs.iter().map(|&i| {
                let n = report.runs[i].summary.runs.len().max(1);
                Cell::Num(Num {
                    value: n as f64,
                    kind: Kind::Count,
                    spread: None,
                })
            }));
            top.push(pooled);
        }
        let mut verdict = vec![Cell::text(vocab::COMPARABLE.heading)];
        verdict.extend(runs.iter().map(|&i| crate::verdict::cell(&report.runs[i])));
        top.push(verdict);
    }
    let counted = top.len();
    grid.rows.splice(0..0, top);
    if let Some(b) = baseline {
        add_ratio_columns(&mut grid, report, runs, b, counted);
    }
    let notes = grid.spread_notes(mode);
    grid.notes.extend(notes);
    grid.notes
        .extend(crate::verdict::notes(report, runs, labels));
    grid
}

/// After each non-baseline run's column, its ratios against its baseline run; the first
/// `skip` rows (workload, runs pooled) get none.
fn add_ratio_columns(
    grid: &mut Grid,
    report: &Report,
    runs: &[usize],
    baseline: &Baseline,
    skip: usize,
) {
    let column_of = |run: usize| runs.iter().position(|&r| r == run).map(|p| p + 1);
    let mut headings = vec![grid.headings[0].clone()];
    let mut align = vec![Align::Left];
    let mut sources: Vec<(usize, Option<usize>)> = vec![(0, None)];
    for (k, &run) in runs.iter().enumerate() {
        headings.push(grid.headings[k + 1].clone());
        align.push(Align::Right);
        sources.push((k + 1, None));
        if !baseline.is_base(run) {
            headings.push(format!("{} ×{}", grid.headings[k + 1], baseline.label));
            align.push(Align::Right);
            let base = baseline.base_of(report, run).and_then(column_of);
            sources.push((k + 1, Some(base.unwrap_or(usize::MAX))));
        }
    }
    for (r, row) in grid.rows.iter_mut().enumerate() {
        *row = sources
            .iter()
            .map(|&(col, base)| match base {
                None => row[col].clone(),
                Some(_) if r < skip => Cell::Missing,
                Some(b) => row
                    .get(b)
                    .map_or(Cell::Missing, |base| ratio_cell(&row[col], base)),
            })
            .collect();
    }
    grid.headings = headings;
    grid.align = align;
}
