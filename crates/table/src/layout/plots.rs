//! What the chart formats of one field show (`--format mermaid`): bar and line [`Plot`]s of
//! the cell field (`--cell`, default output throughput), laid out from the same pivots and
//! rankings as the tables.
//!
//! With a pivot (`--rows model --cols profile`), one bar chart per column value, bars best
//! first (the best `--top` only, with `--top`); with a numeric load setting as rows (`--rows
//! concurrency --cols label`), one line chart with a line per column value, named in its title.
//! Without a pivot, one bar chart of `--cell` over the shown runs, or, when the runs were made at
//! several concurrencies, one line per label. A run a chart cannot show is a note.

use super::pivot::{key_text, unit_of, Pivot, DEFAULT_CELL};
use crate::error::Error;
use crate::field::{Better, Field, Source};
use crate::grid::Cell;
use crate::laid_out::{LaidOut, Mark, Plot};
use crate::options::Options;
use crate::report::Report;
use std::collections::{BTreeMap, BTreeSet};

/// The charts `opts` asks for; runs a chart had to skip are notes. `--baseline` (ratios, not
/// values), a field no run has, and nothing to chart at all are bad input.
pub(crate) fn lay_out(report: &Report, opts: &Options) -> Result<LaidOut, Error> {
    if opts.baseline.is_some() {
        return Err(Error::Flags(
            "--baseline makes ratio columns in a table; --format mermaid charts values, so drop \
             one of the two"
                .into(),
        ));
    }
    // Check every named field up front, so that a typo is an error and never a quiet change
    // of chart.
    for name in &opts.columns {
        Field::parse(name, report)?;
    }
    let mut notes = Vec::new();
    let top = opts.top.unwrap_or(usize::MAX);
    let charts = if opts.is_pivot() {
        let pivot = Pivot::build(report, opts)?;
        notes.extend(pivot.notes.iter().cloned());
        if is_load_setting(&pivot) && opts.top.is_none() {
            vec![line_chart(&pivot, &mut notes)]
        } else {
            bar_charts(&pivot, top, &mut notes)
        }
    } else if let Some(pivot) = sweep_pivot(report, opts) {
        vec![line_chart(&pivot, &mut notes)]
    } else {
        vec![runs_chart(report, opts, &mut notes)?]
    };
    let plots: Vec<Plot> = charts.into_iter().filter(|c| !c.x.is_empty()).collect();
    if plots.is_empty() {
        let why = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        return Err(Error::NothingToShow(format!(
            "nothing to chart: no shown run has a value for the charted field{why}"
        )));
    }
    Ok(LaidOut {
        plots,
        notes,
        ..LaidOut::default()
    })
}

/// Whether the pivot's rows are a numeric schedule setting (concurrency, rate, batch), drawn
/// as lines rather than bars.
fn is_load_setting(pivot: &Pivot) -> bool {
    matches!(pivot.rows.source, Source::Param(_))
        && pivot.row_keys.iter().all(|k| matches!(k, Cell::Num(_)))
}

/// Runs of one or more labels at the same two or more loads (concurrency, rate or batch size),
/// one run each: the pivot `--rows concurrency --cols label` that a line chart shows. `None`
/// (bars instead) when the labels do not share their load levels.
fn sweep_pivot(report: &Report, opts: &Options) -> Option<Pivot> {
    let param = crate::chart::load::load_param(report)?;
    let mut levels_by_label: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for i in report.shown() {
        let run = &report.runs[i];
        let level = run.param(param)?.as_f64()?;
        if !levels_by_label
            .entry(run.name().to_string())
            .or_default()
            .insert(level.to_bits())
        {
            return None;
        }
    }
    let mut sets = levels_by_label.values();
    let first = sets.next()?;
    if first.len() < 2 || sets.any(|s| s != first) {
        return None;
    }
    let sweep = Options {
        rows: Some(param.into()),
        cols: Some("label".into()),
        ..opts.clone()
    };
    Pivot::build(report, &sweep).ok()
}

/// `"(higher = better)"` and the like, for titles.
fn direction(field: &Field) -> &'static str {
    match field.better {
        Better::Higher => " (higher = better)",
        Better::Lower => " (lower = better)",
        Better::Neither => "",
    }
}

/// The y-axis title: the cell's unit, else its heading.
fn y_title(field: &Field) -> String {
    unit_of(&field.heading).map_or_else(|| field.heading.clone(), str::to_string)
}

/// One bar chart per column value, the best `top` bars first (ties in the rows' natural order);
/// the bar of a run that is not comparable is marked `†`, with a note saying why.
fn bar_charts(pivot: &Pivot, top: usize, notes: &mut Vec<String>) -> Vec<Plot> {
    (0..pivot.col_keys.len())
        .map(|c| {
            let ranked = super::top::ranking(pivot, c, top);
            let col = key_text(&pivot.col_keys[c]);
            let skipped: Vec<String> = (0..pivot.row_keys.len())
                .filter(|&r| pivot.cells[r][c].number().is_none())
                .map(|r| key_text(&pivot.row_keys[r]))
                .collect();
            if !skipped.is_empty() {
                notes.push(format!(
                    "chart {col}: no {} for {}; left out",
                    pivot.cell.name,
                    skipped.join(", ")
                ));
            }
            // Bars best first are a ranking: a run that is not comparable is marked, and why.
            notes.extend(
                pivot
                    .verdict_notes
                    .iter()
                    .filter(|(r, nc, _)| *nc == c && ranked.contains(r))
                    .map(|(.., note)| format!("table: chart {col}: {note}")),
            );
            let title = match pivot.cols {
                Some(_) => format!("{col}: {}{}", pivot.cell.heading, direction(&pivot.cell)),
                None => format!("{}{}", pivot.cell.heading, direction(&pivot.cell)),
            };
            Plot {
                title,
                x_title: None,
                x: ranked
                    .iter()
                    .map(|&r| {
                        let key = key_text(&pivot.row_keys[r]);
                        if pivot.marked[r][c] {
                            format!("{key} {}", crate::verdict::MARK)
                        } else {
                            key
                        }
                    })
                    .collect(),
                y_title: y_title(&pivot.cell),
                series: vec![(
                    Mark::Bar,
                    col,
                    ranked
                        .iter()
                        .filter_map(|&r| pivot.cells[r][c].number())
                        .collect(),
                )],
            }
        })
        .collect()
}

/// One line chart: x = the row values (a load setting), one line per column value. A row
/// where some line has no value is left out, since a line cannot skip a point.
fn line_chart(pivot: &Pivot, notes: &mut Vec<String>) -> Plot {
    let complete: Vec<usize> = (0..pivot.row_keys.len())
        .filter(|&r| pivot.cells[r].iter().all(|c| c.number().is_some()))
        .collect();
    let skipped: Vec<String> = (0..pivot.row_keys.len())
        .filter(|r| !complete.contains(r))
        .map(|r| key_text(&pivot.row_keys[r]))
        .collect();
    if !skipped.is_empty() {
        notes.push(format!(
            "chart: {} {} left out: some line has no {} there",
            pivot.rows.name,
            skipped.join(", "),
            pivot.cell.name
        ));
    }
    let names: Vec<String> = pivot.col_keys.iter().map(key_text).collect();
    let series = (0..pivot.col_keys.len())
        .map(|c| {
            let values = complete
                .iter()
                .filter_map(|&r| pivot.cells[r][c].number())
                .collect();
            (Mark::Line, names[c].clone(), values)
        })
        .collect();
    Plot {
        title: format!(
            "{} by {}: {}{}",
            pivot.cell.heading,
            pivot.rows.name,
            names.join(", "),
            direction(&pivot.cell)
        ),
        x_title: Some(pivot.rows.heading.clone()),
        x: complete
            .iter()
            .map(|&r| key_text(&pivot.row_keys[r]))
            .collect(),
        y_title: y_title(&pivot.cell),
        series,
    }
}

/// One bar chart of the cell field over the shown runs, in the tables' order (or `--sort`'s).
fn runs_chart(report: &Report, opts: &Options, notes: &mut Vec<String>) -> Result<Plot, Error> {
    let field = Field::parse(opts.cell.as_deref().unwrap_or(DEFAULT_CELL), report)?;
    let labels = crate::labels::column_labels(report);
    let mut x = Vec::new();
    let mut values = Vec::new();
    for i in crate::order::ordered_runs(report, &opts.sort, &labels)? {
        let run = &report.runs[i];
        match field.cell(run, &labels[i]).number() {
            Some(v) => {
                x.push(labels[i].clone());
                values.push(v);
            }
            None => notes.push(format!(
                "chart: run {} has no {}; left out",
                labels[i], field.name
            )),
        }
    }
    Ok(Plot {
        title: format!("{}{}", field.heading, direction(&field)),
        x_title: None,
        x,
        y_title: y_title(&field),
        series: vec![(Mark::Bar, field.name.clone(), values)],
    })
}
