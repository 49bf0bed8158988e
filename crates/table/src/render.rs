//! The edge: where the flags choose one layout and one renderer, once. `--style` picks whose
//! layout (this tool's or another tool's), `--format` the renderer, and the layout flags
//! ([`Options`]) which of this tool's layouts. A combination a layout cannot honour is refused
//! here, with a message that names the flags, before anything is laid out. Then the layout lays
//! the report out ([`crate::layout`], [`crate::style`]) and the renderer writes what it laid out
//! ([`crate::export`]); neither knows the other.

use crate::chart::ChartKind;
use crate::error::Error;
use crate::export::{Exporter, Format};
use crate::laid_out::LaidOut;
use crate::layout;
use crate::machine::MachineTable;
use crate::options::{Layout, Options, PartsBy};
use crate::report::Report;
use crate::style;
use std::borrow::Cow;

/// More runs than this are shown as rows by `--layout auto`.
const MOST_RUNS_AS_COLUMNS: usize = 6;

/// Whose layout `table` prints (`--style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// This tool's layouts (runs as columns or rows, pivots, rankings), in the chosen
    /// `--format`.
    #[default]
    Default,
    /// Each run as the "Serving Benchmark Result" block of `vllm bench serve`, one after
    /// another, the same in every text format (charts are refused).
    Vllm,
    /// llama-benchy's own Markdown table, then its users' decode and prefill throughput tables
    /// by concurrency.
    LlamaBench,
}

/// What a style rendered: the text for stdout and notes for stderr (runs it had to leave out).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    /// The output, without a final newline.
    pub text: String,
    /// One line per run left out, and why.
    pub notes: Vec<String>,
}

impl Style {
    /// The style's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Style::Default => "default",
            Style::Vllm => "vllm",
            Style::LlamaBench => "llama-bench",
        }
    }

    /// Renders `report` in this style: `format` and the layout flags `opts` apply to the default
    /// style; the others have a fixed layout (they refuse layout flags and charts, and
    /// llama-bench a machine format, which would not be its layout). With
    /// `opts.only_comparable`, the runs that are not comparable are left out first, each named
    /// in a note; without it, another tool's layout, which has no place for the verdict, gets a
    /// note per run that is not comparable. A refused combination is bad input (exit 2).
    pub fn render(
        self,
        report: &Report,
        format: Format,
        opts: &Options,
    ) -> Result<Rendered, Error> {
        let (kept, mut notes) = if opts.only_comparable {
            let (kept, left_out) = crate::verdict::only_comparable(report);
            let named: Vec<String> = left_out
                .iter()
                .map(|(label, reason)| format!("{label}: {reason}"))
                .collect();
            if kept.runs.is_empty() && !report.runs.is_empty() {
                return Err(Error::NothingToShow(format!(
                    "--only-comparable left out every run ({})",
                    named.join("; ")
                )));
            }
            let notes = named
                .iter()
                .map(|n| format!("table: left out {n}"))
                .collect();
            (Cow::Owned(kept), notes)
        } else {
            (Cow::Borrowed(report), Vec::new())
        };
        let report = kept.as_ref();
        let (view, exporter) = choose(report, self, format, opts)?;
        let laid = view.lay_out(report, opts)?;
        let text = exporter.export(&laid, report)?;
        notes.extend(laid.notes);
        if self != Style::Default && !opts.only_comparable {
            // Another tool's layout has no place for the verdict: stderr says it.
            let labels = crate::labels::column_labels(report);
            notes.extend(
                crate::verdict::not_comparable(report, &report.shown(), &labels)
                    .into_iter()
                    .map(|(label, reason)| format!("table: not comparable: {label}: {reason}")),
            );
        }
        Ok(Rendered { text, notes })
    }
}

/// One chart of a report as an SVG document, as `table --format svg [--chart KIND]` writes it:
/// for callers of the library.
#[derive(Debug, Clone, Copy, Default)]
pub struct Svg {
    /// The chart; `None` picks the one the report suits.
    pub chart: Option<ChartKind>,
}

impl Svg {
    /// The chart of `report`; a chart it has no data for is bad input.
    pub fn export(&self, report: &Report) -> Result<String, Error> {
        let opts = Options {
            chart: self.chart,
            ..Options::default()
        };
        Ok(Style::Default.render(report, Format::Svg, &opts)?.text)
    }
}

/// This tool's layouts of tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// Runs as columns.
    Wide,
    /// Runs as rows.
    Long,
    /// `--rows` by `--cols`.
    Pivot,
    /// `--top`.
    Top,
    /// `--by`: the parts of merged runs.
    Parts(PartsBy),
}

/// The layout a command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    /// One table of this tool's.
    Table(Table),
    /// One table and every chart the report has data for (an HTML page).
    Page(Table),
    /// Every member of every run, for machines.
    Members,
    /// Bar and line charts of one field.
    Plots,
    /// One chart.
    Chart(ChartKind),
    /// vLLM's result blocks.
    Vllm,
    /// llama-benchy's tables.
    LlamaBench,
}

/// The layout and the renderer `style`, `format` and `opts` ask for, or why they cannot go
/// together.
fn choose(
    report: &Report,
    style: Style,
    format: Format,
    opts: &Options,
) -> Result<(View, Box<dyn Exporter>), Error> {
    let sections = opts.vllm_sections_given();
    if style != Style::Vllm && !sections.is_empty() {
        return Err(Error::Flags(format!(
            "{} {} the sections of --style vllm's blocks; add --style vllm",
            sections.join(" and "),
            if sections.len() == 1 {
                "chooses"
            } else {
                "choose"
            }
        )));
    }
    if let Some(kind) = opts.chart {
        if format != Format::Svg || style != Style::Default {
            return Err(Error::Flags(
                "--chart picks the chart of --format svg (and takes no --style); --format html \
                 shows every chart"
                    .into(),
            ));
        }
        opts.refuse_for("--format svg --chart")?;
        return Ok((View::Chart(kind), format.exporter()));
    }
    if style != Style::Default {
        opts.refuse_for(&format!("--style {}", style.name()))?;
        if matches!(format, Format::Svg | Format::Html | Format::Mermaid) {
            return Err(Error::Flags(format!(
                "--format svg, html and mermaid draw the default layout and its charts; --style {} \
                 reproduces another tool's fixed layout, so drop one of the two",
                style.name()
            )));
        }
    }
    match style {
        Style::Default => {}
        // Preformatted blocks, which every text format writes as they are.
        Style::Vllm => return Ok((View::Vllm, Format::Terminal.exporter())),
        Style::LlamaBench if format.for_machines() => {
            return Err(Error::Flags(
                "--style llama-bench writes Markdown tables; use --format csv or json without \
                 --style for machine-readable output"
                    .into(),
            ))
        }
        // Markdown tables, as llama-benchy prints them, on a terminal too.
        Style::LlamaBench => return Ok((View::LlamaBench, Format::Markdown.exporter())),
    }
    let view = match format {
        Format::Mermaid => View::Plots,
        Format::Svg => {
            opts.refuse_for("--format svg (pick its chart with --chart)")?;
            View::Chart(ChartKind::default_for(report))
        }
        Format::Html => View::Page(table(report, format, opts)?),
        // Without layout flags, every member of every run, as reduce named them.
        f if f.for_machines() && opts.given().iter().all(|flag| *flag == "--layout") => {
            View::Members
        }
        _ => View::Table(table(report, format, opts)?),
    };
    Ok((view, format.exporter()))
}

/// The table layout the flags ask for: a pivot or ranking (`--rows`, `--cols`, `--top`) first,
/// else runs as columns or as rows (`--layout`; machines always get rows, and `auto` gives rows
/// with `--columns` or many runs).
fn table(report: &Report, format: Format, opts: &Options) -> Result<Table, Error> {
    if let Some(by) = opts.by {
        let others: Vec<&str> = opts.given().into_iter().filter(|f| *f != "--by").collect();
        if !others.is_empty() {
            return Err(Error::Flags(format!(
                "--by lays out the parts of merged runs, a row each, in fixed columns; it takes no {}",
                others.join(", ")
            )));
        }
        return Ok(Table::Parts(by));
    }
    if opts.is_pivot() {
        if opts.layout != Layout::Auto || !opts.sort.is_empty() {
            return Err(Error::Flags(
                "--sort and --layout do not apply to a pivot or ranking: its rows and columns \
                 are its keys' values in natural order"
                    .into(),
            ));
        }
        return Ok(if opts.top.is_some() {
            Table::Top
        } else {
            Table::Pivot
        });
    }
    let machine = format.for_machines();
    let long = match opts.layout {
        Layout::Wide => false,
        Layout::Long => true,
        Layout::Auto => {
            machine || !opts.columns.is_empty() || report.shown().len() > MOST_RUNS_AS_COLUMNS
        }
    };
    Ok(if long || machine {
        Table::Long
    } else {
        Table::Wide
    })
}

impl Table {
    fn lay_out(self, report: &Report, opts: &Options) -> Result<LaidOut, Error> {
        match self {
            Table::Wide => layout::wide::lay_out(report, opts),
            Table::Long => layout::long::lay_out(report, opts),
            Table::Pivot => layout::pivot::lay_out(report, opts),
            Table::Top => layout::top::lay_out(report, opts),
            Table::Parts(by) => layout::parts::lay_out(report, by),
        }
    }
}

impl View {
    fn lay_out(self, report: &Report, opts: &Options) -> Result<LaidOut, Error> {
        match self {
            View::Table(table) => table.lay_out(report, opts),
            View::Page(table) => Ok(layout::charts::every(report, table.lay_out(report, opts)?)),
            View::Members => Ok(LaidOut {
                machine: MachineTable::from_report(report)?,
                ..LaidOut::default()
            }),
            View::Plots => layout::plots::lay_out(report, opts),
            View::Chart(kind) => Ok(layout::charts::one(report, kind)),
            View::Vllm => style::vllm::lay_out(report, opts),
            View::LlamaBench => style::llama_bench::lay_out(report),
        }
    }
}
