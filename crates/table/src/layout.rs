//! The default style's layouts: which one the flags ask for. Pivots and rankings
//! (`--rows`/`--cols`/`--top`) come first, then runs as rows or as columns (`--layout`).

use crate::export::Format;
use crate::options::Options;
use crate::report::Report;
use crate::style::Rendered;

/// Renders `report` in the layout `opts` asks for, in `format`.
pub fn render(report: &Report, format: Format, opts: &Options) -> anyhow::Result<Rendered> {
    if opts.is_pivot() {
        return Err(tokenpipe_cli::bad_input(
            "--rows, --cols and --top are not available in this build",
        ));
    }
    Ok(Rendered {
        text: format.exporter().export(report)?,
        notes: Vec::new(),
    })
}
