//! The timeline chart: a run's output tokens/s (top) and requests in flight (below) against
//! seconds since its start, from the `interval` records of `reduce --every`, then a panel per
//! server gauge some run's intervals carry (`fire --server-metrics-every`: KV-cache usage,
//! requests running and waiting, GPU utilisation and power), in [`GAUGE_PANELS`] order. Every
//! run with intervals is one line per panel. Tokens/s and the gauges are means over a slice,
//! so they sit at the slice's middle; in flight is counted at the slice's end, so it sits there.

use super::draw::{self, bounds, color, drawing, tick, zero_based, FONT};
use super::ChartError;
use crate::report::Report;
use plotters::prelude::*;
use std::collections::BTreeMap;

/// One run's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The run's column label.
    pub label: String,
    /// (middle of the slice in s, output tokens/s).
    pub tokens_per_s: Vec<(f64, f64)>,
    /// (end of the slice in s, requests in flight).
    pub in_flight: Vec<(f64, f64)>,
    /// Per gauge, (middle of the slice in s, its mean there), for the slices that have it.
    pub gauges: BTreeMap<String, Vec<(f64, f64)>>,
}

/// The gauge panels, in order: the gauge's name in the interval records, the panel's title
/// and its y axis. A gauge not listed gets a panel after these, under its own name.
pub const GAUGE_PANELS: [(&str, &str, &str); 6] = [
    (
        "kv_cache_usage",
        "KV-cache usage",
        "KV-cache usage (0 to 1)",
    ),
    (
        "requests_running",
        "Requests running (server)",
        "requests running",
    ),
    (
        "requests_waiting",
        "Requests waiting (server)",
        "requests waiting",
    ),
    (
        "prefix_cache_hit_rate",
        "Prefix-cache hit rate",
        "hit rate (0 to 1)",
    ),
    ("gpu_util_pct", "GPU utilisation", "GPU utilisation (%)"),
    ("power_w", "GPU power", "power (W)"),
];

/// The gauges some run has, in panel order.
fn gauge_names(runs: &[Timeline]) -> Vec<String> {
    let mut names: Vec<String> = GAUGE_PANELS
        .iter()
        .map(|(name, _, _)| name.to_string())
        .filter(|name| runs.iter().any(|t| t.gauges.contains_key(name)))
        .collect();
    for t in runs {
        for name in t.gauges.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// The timelines of every run that has intervals, in input order.
pub fn timelines(report: &Report) -> Vec<Timeline> {
    let labels = crate::labels::column_labels(report);
    report
        .runs
        .iter()
        .zip(labels)
        .filter(|(run, _)| !run.intervals.is_empty())
        .map(|(run, label)| Timeline {
            label,
            tokens_per_s: run
                .intervals
                .iter()
                .map(|i| ((i.start_s + i.end_s) / 2.0, i.output_tps))
                .collect(),
            in_flight: run
                .intervals
                .iter()
                .map(|i| (i.end_s, i.in_flight as f64))
                .collect(),
            gauges: {
                let mut gauges: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
                for i in &run.intervals {
                    for (name, &value) in &i.gauges {
                        let middle = (i.start_s + i.end_s) / 2.0;
                        gauges
                            .entry(name.clone())
                            .or_default()
                            .push((middle, value));
                    }
                }
                gauges
            },
        })
        .collect()
}

/// Draws the timeline chart.
pub fn draw(report: &Report) -> Result<String, ChartError> {
    let runs = timelines(report);
    if runs.is_empty() {
        return Err(ChartError::NoData(
            "--chart timeline: no interval records in the input; run reduce with --every \
             (e.g. `reduce --every 1s`) to write them"
                .into(),
        ));
    }
    let end = report
        .runs
        .iter()
        .flat_map(|r| r.intervals.iter().map(|i| i.end_s))
        .fold(0.0, f64::max);
    let gauges = gauge_names(&runs);
    let count = 2 + gauges.len();
    let height = draw::HEIGHT_TWO_PANELS / 2 * count as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let panels = root.split_evenly((count, 1));
        let series = |t: &Timeline| t.tokens_per_s.clone();
        panel(
            &panels[0],
            "Output tokens/s",
            "output tokens/s",
            end,
            &runs,
            series,
        )?;
        let series = |t: &Timeline| t.in_flight.clone();
        panel(
            &panels[1],
            "Requests in flight",
            "requests in flight",
            end,
            &runs,
            series,
        )?;
        for (area, name) in panels[2..].iter().zip(&gauges) {
            let (title, y_name) = GAUGE_PANELS
                .iter()
                .find(|(n, _, _)| n == name)
                .map_or((name.as_str(), name.as_str()), |(_, t, y)| (*t, *y));
            let series = |t: &Timeline| t.gauges.get(name).cloned().unwrap_or_default();
            panel(area, title, y_name, end, &runs, series)?;
        }
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// One panel: a line with points per run, the legend in the upper right.
fn panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    y_name: &str,
    end_s: f64,
    runs: &[Timeline],
    series: impl Fn(&Timeline) -> Vec<(f64, f64)>,
) -> Result<(), ChartError> {
    let (_, y_hi) =
        bounds(runs.iter().flat_map(|t| series(t).into_iter().map(|p| p.1))).unwrap_or((0.0, 1.0));
    let x_hi = if end_s > 0.0 { end_s } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_hi, zero_based(y_hi, 0.35))
        .map_err(drawing)?;
    draw::house_mesh(&mut chart.configure_mesh(), 14)
        .x_desc("time since run start (s)")
        .y_desc(y_name)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .draw()
        .map_err(drawing)?;
    for (i, run) in runs.iter().enumerate() {
        let c = color(i);
        let points = series(run);
        draw::labelled_line(
            &mut chart,
            points.clone(),
            c,
            draw::dashed(i),
            run.label.clone(),
        )?;
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))
            .map_err(drawing)?;
    }
    draw::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    Ok(())
}
