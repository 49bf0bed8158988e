//! The SVG format: the one chart the layout chose (`--chart`, else the one the runs suit),
//! drawn as an SVG document.

use super::Exporter;
use crate::chart::render_svg;
use crate::laid_out::LaidOut;
use crate::report::Report;

/// One chart as SVG.
pub(crate) struct Svg;

impl Exporter for Svg {
    /// A chart the report has no data for is bad input (exit 2), with what to run to get it.
    fn export(&self, laid: &LaidOut, report: &Report) -> anyhow::Result<String> {
        let Some(&kind) = laid.charts.first() else {
            anyhow::bail!("no chart was laid out for --format svg");
        };
        let svg = render_svg(report, kind).map_err(|e| e.into_anyhow())?;
        Ok(svg.trim_end().to_string())
    }
}
