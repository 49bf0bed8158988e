//! The default style's layouts: which one the flags ask for. Pivots and rankings
//! (`--rows`/`--cols`/`--top`) come first, then runs as rows or as columns (`--layout`).

use crate::export::Format;
use crate::options::Options;
use crate::report::Report;
use crate::style::Rendered;

/// Renders `report` in the layout `opts` asks for, in `format`.
pub fn render(report: &Report, format: Format, opts: &Options) -> anyhow::Result<Rendered> {
    if opts.is_pivot() || format == Format::Mermaid {
        return crate::pivot::render(report, format, opts);
    }
    Ok(Rendered {
        text: format.exporter().export(report)?,
        notes: Vec::new(),
    })
}
