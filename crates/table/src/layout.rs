//! The default style's layouts: which one the flags ask for. Pivots and rankings
//! (`--rows`/`--cols`/`--top`) come first, then runs as rows or as columns (`--layout`).

use crate::baseline::Baseline;
use crate::export::markdown::grid_markdown;
use crate::export::terminal::grid_terminal;
use crate::export::Format;
use crate::grid::Grid;
use crate::grid_machine::{grid_csv, grid_json};
use crate::long::{long_fields, long_grid, units_below};
use crate::options::{Layout, Options};
use crate::order::ordered_runs;
use crate::report::Report;
use crate::style::Rendered;
use crate::wide::wide_grid;

/// More runs than this are shown as rows by `--layout auto`.
pub const MOST_RUNS_AS_COLUMNS: usize = 6;

/// Renders `report` in the layout `opts` asks for, in `format`.
pub fn render(report: &Report, format: Format, opts: &Options) -> anyhow::Result<Rendered> {
    if opts.is_pivot() || format == Format::Mermaid {
        return crate::pivot::render(report, format, opts);
    }
    let machine = matches!(format, Format::Csv | Format::Json);
    if machine && opts.columns.is_empty() {
        // Every member of every run, as reduce named them.
        return Ok(Rendered {
            text: format.exporter().export(report)?,
            notes: Vec::new(),
        });
    }
    let labels = report.column_labels();
    let runs = ordered_runs(report, &opts.sort, &labels)?;
    let baseline = opts
        .baseline
        .as_deref()
        .map(|label| Baseline::find(report, &runs, &labels, label))
        .transpose()?;
    let long = match opts.layout {
        Layout::Wide => false,
        Layout::Long => true,
        Layout::Auto => machine || !opts.columns.is_empty() || runs.len() > MOST_RUNS_AS_COLUMNS,
    };
    let text = if long || machine {
        let fields = long_fields(report, &opts.columns)?;
        let mut lg = long_grid(
            report,
            &runs,
            &labels,
            &fields,
            baseline.as_ref(),
            opts.spread,
        );
        match format {
            Format::Csv => grid_csv(&lg.grid, &lg.names, opts.spread)?,
            Format::Json => grid_json(&lg.grid, &lg.names, opts.spread)?,
            Format::Markdown => grid_markdown(&lg.grid, opts.spread),
            _ => {
                units_below(&mut lg.grid);
                grid_terminal(&lg.grid, opts.spread)
            }
        }
    } else {
        let fields = if opts.columns.is_empty() {
            Vec::new()
        } else {
            long_fields(report, &opts.columns)?
        };
        let grid = wide_grid(
            report,
            &runs,
            &labels,
            &fields,
            baseline.as_ref(),
            opts.spread,
        );
        write_text(&grid, format, opts)
    };
    Ok(Rendered {
        text,
        notes: Vec::new(),
    })
}

/// A grid in a text format.
fn write_text(grid: &Grid, format: Format, opts: &Options) -> String {
    match format {
        Format::Markdown => grid_markdown(grid, opts.spread),
        _ => grid_terminal(grid, opts.spread),
    }
}
