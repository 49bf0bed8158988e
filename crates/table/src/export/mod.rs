//! Output formats. Each format is one file with an [`Exporter`] that receives the whole
//! [`Report`] (every summary with its header), as hyperfine's exporters receive the whole
//! results; [`Format`] maps the `--format` flag to one. A new format is a new file and a match
//! arm.

use crate::report::Report;

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod mermaid;
pub mod svg;
pub mod terminal;

/// Turns a report into the text of one format.
pub trait Exporter {
    /// The report in this format; the text ends without a newline.
    fn export(&self, report: &Report) -> anyhow::Result<String>;
}

/// The output formats of `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
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
    /// The exporter of this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Terminal => Box::new(terminal::Terminal),
            Format::Markdown => Box::new(markdown::Markdown),
            Format::Csv => Box::new(csv::Csv),
            Format::Json => Box::new(json::Json),
            Format::Mermaid => Box::new(mermaid::Mermaid),
            Format::Svg => Box::new(svg::Svg::default()),
            Format::Html => Box::new(html::Html),
        }
    }
}
