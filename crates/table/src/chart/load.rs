//! The load chart: output throughput (top) and latency (bottom) against the load setting that
//! differs between the shown runs, one line per label. A group summary of repeated runs is
//! plotted at its mean over runs with an error bar of ± one sample standard deviation.

use super::draw::{self, bounds, color, drawing, padded, tick, zero_based, FONT};
use super::ChartError;
use crate::grid::Kind;
use crate::member::member_num;
use crate::report::{Report, RunReport};
use crate::workload::load_settings;
use plotters::prelude::*;
use tokenpipe_format::{stat_key, vocab, StatName};

/// The throughput series: (summary member, legend name).
pub fn throughput_series() -> Vec<(String, String)> {
    vec![(vocab::OUTPUT_TPS.member.to_string(), "output".to_string())]
}

/// The latency series, (summary member, legend name): TTFT p50 and p99, TPOT p50.
pub fn latency_series() -> Vec<(String, String)> {
    [
        (vocab::TTFT, 50.0),
        (vocab::TTFT, 99.0),
        (vocab::TPOT, 50.0),
    ]
    .into_iter()
    .map(|(metric, p)| {
        let member = stat_key(metric.name, StatName::Percentile(p), metric.unit.suffix());
        (member, format!("{} p{p}", metric.heading))
    })
    .collect()
}

/// The load setting of `run` as a number.
fn load_value(run: &RunReport, param: &str) -> Option<f64> {
    run.param(param).and_then(serde_json::Value::as_f64)
}

/// The load setting that differs between the shown runs: the first of [`load_settings`] with two
/// or more distinct values; `None` when none does.
pub fn load_param(report: &Report) -> Option<&'static str> {
    load_settings().find(|param| {
        let mut values: Vec<f64> = report
            .shown()
            .into_iter()
            .filter_map(|i| load_value(&report.runs[i], param))
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        values.len() >= 2
    })
}

/// One point of a load line: the load, the value, and ± sd for a mean over repeated runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPoint {
    /// The load setting.
    pub x: f64,
    /// The value (mean over runs for a group summary).
    pub y: f64,
    /// Sample standard deviation over runs, for a group summary.
    pub sd: Option<f64>,
}

/// One line: a label's values of one metric, sorted by load.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadLine {
    /// The runs' label.
    pub label: String,
    /// The legend name of the metric.
    pub metric: String,
    /// Points in increasing load.
    pub points: Vec<LoadPoint>,
}

/// The lines of `metrics` against `param`: one per series (a label, with what tells its runs
/// apart other than the load: `sim osl=64`; see [`crate::labels::series_labels`]) and metric,
/// in order of first appearance among the shown runs, points by load. Repeats at one load
/// that no group summary pools are drawn as their mean ± sample sd. Runs without the load
/// setting or the metric are left out; lines without points too.
pub fn load_lines(report: &Report, param: &str, metrics: &[(String, String)]) -> Vec<LoadLine> {
    let names = crate::labels::series_labels(report, param);
    let shown = report.shown();
    let mut series: Vec<&str> = Vec::new();
    for &i in &shown {
        if !series.contains(&names[i].as_str()) {
            series.push(&names[i]);
        }
    }
    let mut lines = Vec::new();
    for name in series {
        for (key, metric) in metrics {
            // (x, values at x, the one value's own spread)
            let mut at: Vec<(f64, Vec<f64>, Option<f64>)> = Vec::new();
            for &i in shown.iter().filter(|&&i| names[i] == name) {
                let run = &report.runs[i];
                let (Some(x), Some(n)) =
                    (load_value(run, param), member_num(run, key, Kind::Value))
                else {
                    continue;
                };
                match at.iter_mut().find(|(ax, ..)| *ax == x) {
                    Some((_, values, _)) => values.push(n.value),
                    None => at.push((x, vec![n.value], n.spread.map(|s| s.sd))),
                }
            }
            let mut points: Vec<LoadPoint> = at
                .into_iter()
                .map(|(x, values, own_sd)| {
                    if values.len() == 1 {
                        return LoadPoint {
                            x,
                            y: values[0],
                            sd: own_sd,
                        };
                    }
                    let n = values.len() as f64;
                    let mean = values.iter().sum::<f64>() / n;
                    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
                    LoadPoint {
                        x,
                        y: mean,
                        sd: Some(var.sqrt()),
                    }
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            if !points.is_empty() {
                lines.push(LoadLine {
                    label: name.to_string(),
                    metric: metric.clone(),
                    points,
                });
            }
        }
    }
    lines
}

/// The x axis description of a load setting.
fn axis_name(param: &str) -> String {
    vocab::setting(param)
        .and_then(|s| s.axis)
        .unwrap_or(param)
        .to_string()
}

/// Draws the load chart: throughput above, latency below.
pub fn draw(report: &Report) -> Result<String, ChartError> {
    let param = load_param(report)
        .or_else(|| {
            load_settings().find(|p| {
                report
                    .shown()
                    .into_iter()
                    .any(|i| load_value(&report.runs[i], p).is_some())
            })
        })
        .ok_or_else(|| {
            ChartError::NoData(
                "--chart load: no run has a load setting (concurrency, rate_per_s or batch) in \
                 its headers; pipe arrivals | fire | reduce with their headers, or use \
                 --chart ttft-cdf"
                    .into(),
            )
        })?;
    let throughput = load_lines(report, param, &throughput_series());
    let latency = load_lines(report, param, &latency_series());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (draw::WIDTH, draw::HEIGHT_TWO_PANELS))
            .into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let panels = root.split_evenly((2, 1));
        panel(
            &panels[0],
            "Output throughput",
            param,
            "output throughput (tok/s)",
            &throughput,
            false,
        )?;
        panel(&panels[1], "Latency", param, "latency (ms)", &latency, true)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// One panel: a line with points (and error bars) per series, a legend in the upper left.
fn panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    param: &str,
    y_name: &str,
    lines: &[LoadLine],
    metric_in_legend: bool,
) -> Result<(), ChartError> {
    let (x_lo, x_hi) =
        bounds(lines.iter().flat_map(|l| l.points.iter().map(|p| p.x))).unwrap_or((0.0, 1.0));
    let (_, y_hi) = bounds(
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.y + p.sd.unwrap_or(0.0))),
    )
    .unwrap_or((0.0, 1.0));
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(padded(x_lo, x_hi), zero_based(y_hi, 0.35))
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc(axis_name(param))
        .y_desc(y_name)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
        .max_light_lines(0)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()
        .map_err(drawing)?;
    // A colour per series, the same in both panels; in the latency panel each metric after
    // the first is dashed.
    let mut series: Vec<&str> = Vec::new();
    for line in lines {
        if !series.contains(&line.label.as_str()) {
            series.push(&line.label);
        }
    }
    let metrics: Vec<String> = latency_series().into_iter().map(|(_, m)| m).collect();
    for line in lines {
        let i = series.iter().position(|s| *s == line.label).unwrap_or(0);
        let m = metrics.iter().position(|m| *m == line.metric).unwrap_or(0);
        // One series: a colour per metric. Several: a colour per series, later metrics dashed.
        let (c, dashed) = if series.len() == 1 {
            (color(m), false)
        } else {
            (color(i), draw::dashed(i) || m > 0)
        };
        let name = if metric_in_legend {
            format!("{} {}", line.label, line.metric)
        } else {
            line.label.clone()
        };
        let points = line.points.iter().map(|p| (p.x, p.y)).collect();
        draw::labelled_line(&mut chart, points, c, dashed, name)?;
        chart
            .draw_series(
                line.points
                    .iter()
                    .map(|p| Circle::new((p.x, p.y), 4, c.filled())),
            )
            .map_err(drawing)?;
        chart
            .draw_series(line.points.iter().filter_map(|p| {
                p.sd.map(|sd| ErrorBar::new_vertical(p.x, p.y - sd, p.y, p.y + sd, c, 8))
            }))
            .map_err(drawing)?;
    }
    draw::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    Ok(())
}
