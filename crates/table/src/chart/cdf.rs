//! The TTFT and ITL distribution charts: one cumulative distribution line per shown run, read
//! from the HdrHistogram the summary carries (`histograms`). Latencies are kept in nanoseconds
//! and plotted in milliseconds; the x axis is logarithmic when the values span more than two
//! decades, so that a long tail and the body both stay readable.

use super::draw::{self, bounds, color, drawing, tick, FONT};
use super::ChartError;
use crate::report::Report;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use tokenpipe_format::histogram::HistogramError;
use tokenpipe_format::{vocab, MetricState};

/// The latency a distribution chart shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Time to first token.
    Ttft,
    /// Inter-token latency.
    Itl,
}

impl Metric {
    /// The metric in format's vocabulary.
    fn vocab(self) -> &'static vocab::Metric {
        match self {
            Metric::Ttft => &vocab::TTFT,
            Metric::Itl => &vocab::ITL,
        }
    }

    /// The key of the metric in a summary's `histograms`.
    pub fn key(self) -> &'static str {
        self.vocab().name
    }

    fn title(self) -> &'static str {
        self.vocab().title
    }

    fn chart(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft-cdf",
            Metric::Itl => "itl-cdf",
        }
    }
}

/// The cumulative distribution of a saved histogram: for each recorded bucket in increasing
/// order, its value in milliseconds and the fraction of samples at or below it (the last is 1),
/// preceded by the first value at fraction 0 so that the line starts on the x axis.
pub fn cdf_points(state: &MetricState) -> Result<Vec<(f64, f64)>, HistogramError> {
    let buckets = state.buckets()?;
    let total: u64 = buckets.iter().map(|&(_, n)| n).sum();
    if total == 0 {
        return Ok(Vec::new());
    }
    let mut points = Vec::with_capacity(buckets.len() + 1);
    let mut seen = 0u64;
    for (value_ns, n) in buckets {
        let ms = value_ns / 1e6;
        if points.is_empty() {
            points.push((ms, 0.0));
        }
        seen += n;
        points.push((ms, seen as f64 / total as f64));
    }
    Ok(points)
}

/// One run's distribution: its column label and its (ms, fraction) points.
pub type CdfLine = (String, Vec<(f64, f64)>);

/// One line per shown run that has the metric's histogram.
pub fn cdf_lines(report: &Report, metric: Metric) -> Result<Vec<CdfLine>, ChartError> {
    let labels = crate::labels::column_labels(report);
    let mut lines = Vec::new();
    for i in report.shown() {
        let run = &report.runs[i];
        let Some(state) = run.summary.histograms.get(metric.key()) else {
            continue;
        };
        let points = cdf_points(state).map_err(|e| {
            ChartError::NoData(format!(
                "{}: run {:?}: histograms.{}: {e}",
                run.source,
                labels[i],
                metric.key()
            ))
        })?;
        if !points.is_empty() {
            lines.push((labels[i].clone(), points));
        }
    }
    Ok(lines)
}

/// Whether an axis over `lo..hi` should be logarithmic: the values span more than two decades.
pub fn wants_log(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo > 100.0
}

/// The lines the distribution chart of `metric` draws and the range of their values (ms);
/// no line, or a histogram that does not decode, is [`ChartError::NoData`].
pub fn plotted(report: &Report, metric: Metric) -> Result<(Vec<CdfLine>, f64, f64), ChartError> {
    let lines = cdf_lines(report, metric)?;
    let Some((lo, hi)) = bounds(lines.iter().flat_map(|(_, p)| p.iter().map(|&(x, _)| x))) else {
        return Err(ChartError::NoData(format!(
            "--chart {}: no run carries a {} histogram; reduce without --no-histograms \
             (reduce keeps them by default)",
            metric.chart(),
            metric.key()
        )));
    };
    Ok((lines, lo, hi))
}

/// Draws the distribution chart of `metric`.
pub fn draw(report: &Report, metric: Metric) -> Result<String, ChartError> {
    let (lines, lo, hi) = plotted(report, metric)?;
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (draw::WIDTH, draw::HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        if wants_log(lo, hi) {
            plot(&root, metric, (lo / 1.2..hi * 1.2).log_scale(), &lines)?;
        } else {
            let pad = ((hi - lo) * 0.05).max(hi * 0.01).max(1e-3);
            plot(&root, metric, (lo - pad).max(0.0)..hi + pad, &lines)?;
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// The chart on a linear or logarithmic x axis.
fn plot<X>(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    metric: Metric,
    x: X,
    lines: &[CdfLine],
) -> Result<(), ChartError>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("{}: cumulative distribution", metric.title()),
            (FONT, 20),
        )
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(x, 0.0..1.0)
        .map_err(drawing)?;
    draw::house_mesh(&mut chart.configure_mesh(), 14)
        .x_desc(format!("{} (ms)", metric.key().to_uppercase()))
        .y_desc("fraction of samples at or below")
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(drawing)?;
    for (i, (label, points)) in lines.iter().enumerate() {
        draw::labelled_line(
            &mut chart,
            points.clone(),
            color(i),
            draw::dashed(i),
            label.clone(),
        )?;
    }
    draw::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    Ok(())
}
