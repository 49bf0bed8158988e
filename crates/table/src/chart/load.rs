//! The load chart's numbers: output throughput, TTFT and TPOT against the load setting that
//! differs between the shown runs, one line per series (a label) and statistic. A group summary
//! of repeated runs is plotted at its mean over runs with an error bar of ± one sample standard
//! deviation. [`super::load_draw`] draws them as small multiples.

use crate::grid::Kind;
use crate::member::member_num;
use crate::report::{Report, RunReport};
use crate::workload::load_settings;
use tokenpipe_format::{stat_key, vocab, StatName};

/// One panel of the load chart: a metric with its own y axis, so that TPOT (tens of ms) is
/// not flattened under TTFT (seconds at high load).
#[derive(Debug, Clone, PartialEq)]
pub struct PanelSpec {
    /// The panel's title.
    pub title: &'static str,
    /// The y axis description, unit included.
    pub y_name: &'static str,
    /// The lines of each series: (summary member, statistic), the first solid, the next dashed.
    pub series: Vec<(String, String)>,
}

/// The throughput series: (summary member, statistic).
pub fn throughput_series() -> Vec<(String, String)> {
    vec![(vocab::OUTPUT_TPS.member.to_string(), "value".to_string())]
}

/// The p50 and p99 of a latency metric: (summary member, statistic).
fn percentiles(metric: vocab::Metric) -> Vec<(String, String)> {
    [50.0, 99.0]
        .into_iter()
        .map(|p| {
            let member = stat_key(metric.name, StatName::Percentile(p), metric.unit.suffix());
            (member, format!("p{p}"))
        })
        .collect()
}

/// The panels, top to bottom: output throughput, TTFT p50 and p99, TPOT p50 and p99.
pub fn panel_specs() -> Vec<PanelSpec> {
    vec![
        PanelSpec {
            title: "Output throughput",
            y_name: "output throughput (tok/s)",
            series: throughput_series(),
        },
        PanelSpec {
            title: "Time to first token",
            y_name: "TTFT (ms)",
            series: percentiles(vocab::TTFT),
        },
        PanelSpec {
            title: "Time per output token",
            y_name: "TPOT (ms)",
            series: percentiles(vocab::TPOT),
        },
    ]
}

/// The load setting of `run` as a number.
pub fn load_value(run: &RunReport, param: &str) -> Option<f64> {
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
    let mut lines = Vec::new();
    for name in series_names(report, param) {
        let name = name.as_str();
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

/// The series of a chart against `param`, in order of first appearance among the shown runs
/// (see [`crate::labels::series_labels`]).
pub fn series_names(report: &Report, param: &str) -> Vec<String> {
    let names = crate::labels::series_labels(report, param);
    let mut series: Vec<String> = Vec::new();
    for i in report.shown() {
        if !series.contains(&names[i]) {
            series.push(names[i].clone());
        }
    }
    series
}

/// The most series one panel draws; more go to further panels.
pub const MAX_SERIES_PER_PANEL: usize = 8;

/// `n` series split into as few groups of at most [`MAX_SERIES_PER_PANEL`] as will do, sizes
/// as even as can be (10 → 5 and 5, not 8 and 2), each group drawn in panels of its own.
pub fn series_groups(n: usize) -> Vec<std::ops::Range<usize>> {
    let groups = n.div_ceil(MAX_SERIES_PER_PANEL).max(1);
    let (base, extra) = (n / groups, n % groups);
    let mut start = 0;
    (0..groups)
        .map(|g| {
            let len = base + usize::from(g < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect()
}

/// The load setting to draw against: the one that differs, else the first any shown run has.
pub fn chart_param(report: &Report) -> Option<&'static str> {
    load_param(report).or_else(|| {
        load_settings().find(|p| {
            report
                .shown()
                .into_iter()
                .any(|i| load_value(&report.runs[i], p).is_some())
        })
    })
}

/// Whether `param` counts things (concurrency, batch size): its axis ticks are whole numbers.
pub fn counts(param: &str) -> bool {
    vocab::setting(param).is_some_and(|s| s.kind == vocab::ValueKind::Count)
}

/// The x axis description of a load setting.
pub fn axis_name(param: &str) -> String {
    vocab::setting(param)
        .and_then(|s| s.axis)
        .unwrap_or(param)
        .to_string()
}
