//! Output formats. Each format is one module with a `render(&MetricTable) -> String`; [`Format`]
//! picks one. A new format (csv, json) is a new variant and a new module.

use crate::rows::MetricTable;

pub mod markdown;
pub mod terminal;

/// The output formats of `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// A box-drawn table for a terminal, numbers right-aligned.
    #[default]
    Terminal,
    /// A GitHub-flavoured Markdown table, for reports and pull requests.
    Markdown,
}

impl Format {
    /// Lays out `table` in this format; the text ends without a newline.
    pub fn render(self, table: &MetricTable) -> String {
        match self {
            Format::Terminal => terminal::render(table),
            Format::Markdown => markdown::render(table),
        }
    }
}
