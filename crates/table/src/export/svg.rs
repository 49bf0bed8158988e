//! The SVG format: one chart of the report as an SVG document (`--chart` picks which; by
//! default `load` when the runs differ in a load setting, else the TTFT distribution).

use super::Exporter;
use crate::chart::{render_svg, ChartKind};
use crate::report::Report;

/// One chart as SVG.
#[derive(Debug, Clone, Copy, Default)]
pub struct Svg {
    /// The chart; `None` picks the one the report suits.
    pub chart: Option<ChartKind>,
}

impl Exporter for Svg {
    fn export(&self, report: &Report) -> anyhow::Result<String> {
        let kind = self.chart.unwrap_or_else(|| ChartKind::default_for(report));
        let svg = render_svg(report, kind).map_err(|e| e.into_anyhow())?;
        Ok(svg.trim_end().to_string())
    }
}
