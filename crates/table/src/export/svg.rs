//! The SVG format: the one chart the layout chose (`--chart`, else the one the runs suit),
//! drawn as an SVG document.

use super::Exporter;
use crate::chart::render_svg;
use crate::error::Error;
use crate::laid_out::LaidOut;
use crate::report::Report;

/// One chart as SVG.
pub(crate) struct Svg;

impl Exporter for Svg {
    /// A chart the report has no data for is bad input (exit 2), with what to run to get it.
    fn export(&self, laid: &LaidOut, report: &Report) -> Result<String, Error> {
        let Some(&kind) = laid.charts.first() else {
            return Err(Error::NoChartLaidOut);
        };
        let svg = render_svg(report, kind)?;
        Ok(svg.trim_end().to_string())
    }
}
