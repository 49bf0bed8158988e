//! Renderers: how a laid-out report is written. As in hyperfine's `src/export/`, each format is
//! one file with a type that implements [`Exporter`]; it reads the [`LaidOut`] a layout made
//! (the grids, the machine table, the plots or the charts it chose) and, to draw charts, the
//! report, and it never calls a layout. Formats that write tables for people implement
//! [`markup::MarkupExporter`] instead, which supplies the frame (caption, table, notes, one grid
//! after another, preformatted text) and asks only for what differs. [`Format`] maps
//! `--format` to its renderer; which layout feeds it is decided in [`crate::render`].
//!
//! Adding a format takes: a file here with its type and its `Exporter` (or `MarkupExporter`)
//! impl; a [`Format`] variant, whose doc comment is its `--format` help; its arm in
//! [`Format::exporter`]; and, for a format that writes the machine table (as CSV does), its arm
//! in [`Format::for_machines`]. A format of tables for people or of the machine table then
//! writes every table layout; a chart format also needs the arm in [`crate::render`] that
//! picks what it draws.
//!
//! Adding a layout takes: a file in [`crate::layout`] (or [`crate::style`] for another tool's)
//! with a `lay_out` that fills in a [`LaidOut`]: its grids, and its machine table when machines
//! may ask for it; and, in [`crate::render`], a variant of its `View` (of its `Table`, for a
//! table of this tool's) with its arm in `lay_out`, and in `choose` (or `table`) the flags that
//! pick it and the refusal of flags it cannot honour. Every format of tables then writes it,
//! unchanged.

use crate::error::Error;
use crate::laid_out::LaidOut;
use crate::report::Report;

pub(crate) mod csv;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod markup;
pub(crate) mod mermaid;
pub(crate) mod svg;
pub(crate) mod terminal;

/// Writes a laid-out report in one format.
pub(crate) trait Exporter {
    /// The text of `laid` in this format, without a final newline; `report` is there to draw
    /// charts from.
    fn export(&self, laid: &LaidOut, report: &Report) -> Result<String, Error>;
}

/// The output formats of `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// A box-drawn table for a terminal, numbers right-aligned.
    #[default]
    Terminal,
    /// A GitHub-flavoured Markdown table, for reports and pull requests.
    Markdown,
    /// Comma-separated values: one row per run and a column per summary member, or the
    /// chosen layout's rows (`--columns`, `--sort`, `--baseline`, pivots, rankings) with raw
    /// numbers.
    Csv,
    /// A JSON array of objects with the members of the CSV columns.
    Json,
    /// Mermaid `xychart-beta` bar or line charts of `--cell` (default output throughput) in
    /// fenced blocks, which GitHub renders: one chart per `--cols` value with a pivot.
    Mermaid,
    /// One chart as an SVG document (`--chart` picks which).
    Svg,
    /// One self-contained HTML page: the table and every chart the runs have data for.
    Html,
}

impl Format {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Terminal => "terminal",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Mermaid => "mermaid",
            Format::Svg => "svg",
            Format::Html => "html",
        }
    }

    /// The renderer of this format.
    pub(crate) fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Terminal => Box::new(terminal::Terminal),
            Format::Markdown => Box::new(markdown::Markdown),
            Format::Csv => Box::new(csv::Csv),
            Format::Json => Box::new(json::Json),
            Format::Mermaid => Box::new(mermaid::Mermaid),
            Format::Svg => Box::new(svg::Svg),
            Format::Html => Box::new(html::Html),
        }
    }

    /// Whether this format writes the machine table (named columns of raw values) rather than
    /// grids for people.
    pub(crate) fn for_machines(self) -> bool {
        matches!(self, Format::Csv | Format::Json)
    }
}
