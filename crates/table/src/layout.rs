//! The default style's layouts: which one the flags ask for, and writing it in the format asked
//! for. Pivots and rankings (`--rows`/`--cols`/`--top`) come first, then runs as rows or as
//! columns (`--layout`). Every layout gives a [`LaidOut`]: a grid for people and the same
//! figures for machines, so each format writes whichever layout was chosen.

use crate::baseline::Baseline;
use crate::export::markdown::grid_markdown;
use crate::export::terminal::grid_terminal;
use crate::export::Exporter;
use crate::export::Format;
use crate::grid::Grid;
use crate::grid_machine::grid_values;
use crate::long::{long_fields, long_grid, units_below};
use crate::machine::MachineTable;
use crate::options::{Layout, Options};
use crate::order::ordered_runs;
use crate::report::Report;
use crate::style::Rendered;
use crate::wide::wide_grid;

/// More runs than this are shown as rows by `--layout auto`.
pub const MOST_RUNS_AS_COLUMNS: usize = 6;

/// One layout of the report, ready for any format.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidOut {
    /// For the text formats (terminal, Markdown, HTML).
    pub grid: Grid,
    /// For CSV and JSON: named columns of raw numbers.
    pub machine: MachineTable,
    /// For stderr: what was left out, and why.
    pub notes: Vec<String>,
}

/// Renders `report` in the layout `opts` asks for, in `format`.
pub fn render(report: &Report, format: Format, opts: &Options) -> anyhow::Result<Rendered> {
    let plain = |text: String| Rendered {
        text,
        notes: Vec::new(),
    };
    match format {
        Format::Mermaid => return crate::export::mermaid::charts(report, opts),
        Format::Svg => {
            opts.refuse_for("--format svg (pick its chart with --chart)")?;
            let kind = crate::chart::ChartKind::default_for(report);
            return Ok(Rendered {
                text: crate::export::svg::Svg { chart: Some(kind) }.export(report)?,
                notes: crate::chart::left_out(report, kind),
            });
        }
        Format::Csv | Format::Json if opts.given().iter().all(|f| *f == "--layout") => {
            // Every member of every run, as reduce named them.
            return Ok(plain(format.exporter().export(report)?));
        }
        _ => {}
    }
    let (laid, long) = lay_out(report, format, opts)?;
    let text = match format {
        Format::Csv => laid.machine.to_csv()?,
        Format::Json => laid.machine.to_json()?,
        Format::Markdown => grid_markdown(&laid.grid, opts.spread),
        Format::Html => {
            let mut notes = laid.notes;
            let page = crate::export::html::page(report, &laid.grid, opts.spread, &mut notes)?;
            return Ok(Rendered { text: page, notes });
        }
        _ if long => {
            let mut grid = laid.grid;
            units_below(&mut grid);
            grid_terminal(&grid, opts.spread)
        }
        _ => grid_terminal(&laid.grid, opts.spread),
    };
    Ok(Rendered {
        text,
        notes: laid.notes,
    })
}

/// The layout the flags ask for, and whether it has runs as rows.
pub fn lay_out(report: &Report, format: Format, opts: &Options) -> anyhow::Result<(LaidOut, bool)> {
    if opts.is_pivot() {
        if opts.layout != Layout::Auto || !opts.sort.is_empty() {
            return Err(tokenpipe_cli::bad_input(
                "--sort and --layout do not apply to a pivot or ranking: its rows and columns \
                 are its keys' values in natural order",
            ));
        }
        return Ok((crate::pivot::laid_out(report, opts)?, false));
    }
    let machine = matches!(format, Format::Csv | Format::Json);
    let labels = crate::labels::column_labels(report);
    let runs = ordered_runs(report, &opts.sort, &labels)?;
    let baseline = opts
        .baseline
        .as_deref()
        .map(|label| Baseline::find(report, &runs, &labels, label))
        .transpose()?;
    let notes = baseline
        .as_ref()
        .map(|b| b.notes(report, &runs, &labels))
        .unwrap_or_default();
    let long = match opts.layout {
        Layout::Wide => false,
        Layout::Long => true,
        Layout::Auto => machine || !opts.columns.is_empty() || runs.len() > MOST_RUNS_AS_COLUMNS,
    };
    if long || machine {
        let fields = long_fields(report, &opts.columns)?;
        let lg = long_grid(
            report,
            &runs,
            &labels,
            &fields,
            baseline.as_ref(),
            opts.spread,
        );
        let machine = grid_values(&lg.grid, &lg.names, opts.spread);
        let laid = LaidOut {
            grid: lg.grid,
            machine,
            notes,
        };
        return Ok((laid, true));
    }
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
    let laid = LaidOut {
        grid,
        machine: MachineTable::default(),
        notes,
    };
    Ok((laid, false))
}
