//! Charts of a report, drawn with plotters' SVG backend: throughput, TTFT and TPOT against load
//! as small multiples, per-user against total throughput with its Pareto frontier, a sweep's
//! SLO figures against load with the capacity it found, TTFT and ITL CDFs across runs, and the timeline of a run's `reduce --every` intervals. Each kind first
//! extracts its numbers (tested without drawing) and then draws them (the load chart in two
//! files, [`load`] and [`load_draw`]); [`draw`] holds what every chart shares (size, palette,
//! tick labels), [`axis`] the load axis and [`legend`] the legend beside a plot, so the SVG is
//! the same bytes on every machine.

pub(crate) mod axis;
pub(crate) mod capacity;
pub(crate) mod cdf;
pub(crate) mod draw;
pub(crate) mod legend;
pub(crate) mod load;
pub(crate) mod load_draw;
pub(crate) mod pareto;
pub(crate) mod timeline;

use crate::report::Report;

/// The charts `table` draws (`--chart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// Output throughput, TTFT and TPOT (p50 and p99) against the load setting that differs
    /// between runs (concurrency, else request rate, else batch size), a panel per metric.
    Load,
    /// Per-user output tok/s against total output tok/s (per GPU with `--meta gpus=N`), a point
    /// per load, a line per series, and the Pareto frontier across them.
    Pareto,
    /// The distribution of time to first token, one line per run.
    TtftCdf,
    /// The distribution of inter-token latency, one line per run.
    ItlCdf,
    /// Output tokens/s and requests in flight over a run's time, from `reduce --every`.
    Timeline,
    /// Each SLO bound's member against the load a `sweep` varied, with the bound and the
    /// capacity found, from the `sweep` records.
    Capacity,
}

impl ChartKind {
    /// Every kind, in the order an HTML report shows them.
    pub const ALL: [ChartKind; 6] = [
        ChartKind::Load,
        ChartKind::Pareto,
        ChartKind::Capacity,
        ChartKind::TtftCdf,
        ChartKind::ItlCdf,
        ChartKind::Timeline,
    ];

    /// What the chart shows, for a figure caption.
    pub fn caption(self) -> &'static str {
        match self {
            ChartKind::Load => "Output throughput, TTFT and TPOT against load",
            ChartKind::Pareto => "Per-user speed against total throughput: the Pareto frontier",
            ChartKind::TtftCdf => "Time to first token: cumulative distribution per run",
            ChartKind::ItlCdf => "Inter-token latency: cumulative distribution per run",
            ChartKind::Timeline => "Output tokens/s and requests in flight over time",
            ChartKind::Capacity => {
                "The SLO's figures against load, the bound and the capacity found"
            }
        }
    }

    /// The chart the report suits when none is asked for: `load` when the shown runs differ in
    /// a load setting, else the TTFT distribution.
    pub fn default_for(report: &Report) -> ChartKind {
        if load::load_param(report).is_some() {
            ChartKind::Load
        } else {
            ChartKind::TtftCdf
        }
    }
}

/// Why a chart could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChartError {
    /// The report lacks what the chart plots; the message says what to run to get it.
    #[error("{0}")]
    NoData(String),
    /// plotters failed to draw (it writes into a string, so this is not expected).
    #[error("drawing the chart failed: {0}")]
    Draw(String),
}

/// Draws chart `kind` of `report` as one SVG document.
pub fn render_svg(report: &Report, kind: ChartKind) -> Result<String, ChartError> {
    match kind {
        ChartKind::Load => load_draw::draw(report),
        ChartKind::Pareto => pareto::draw(report),
        ChartKind::TtftCdf => cdf::draw(report, cdf::Metric::Ttft),
        ChartKind::ItlCdf => cdf::draw(report, cdf::Metric::Itl),
        ChartKind::Timeline => timeline::draw(report),
        ChartKind::Capacity => capacity::draw(report),
    }
}

/// The charts a page of every chart shows, in the order of [`ChartKind::ALL`]: the load and
/// Pareto charts when the shown runs differ in a load setting (Pareto when some run has a
/// per-user speed), each distribution some run has data for, and the timeline when there are
/// intervals.
pub fn with_data(report: &Report) -> Vec<ChartKind> {
    ChartKind::ALL
        .into_iter()
        .filter(|&kind| match kind {
            ChartKind::Load => load::load_param(report).is_some(),
            ChartKind::Pareto => {
                load::load_param(report).is_some() && pareto::pareto(report).is_ok()
            }
            ChartKind::TtftCdf => cdf::plotted(report, cdf::Metric::Ttft).is_ok(),
            ChartKind::ItlCdf => cdf::plotted(report, cdf::Metric::Itl).is_ok(),
            ChartKind::Timeline => !timeline::timelines(report).is_empty(),
            ChartKind::Capacity => !capacity::capacity_panels(report).is_empty(),
        })
        .collect()
}

/// One line for stderr per shown run that chart `kind` leaves out, and why, so that a run
/// missing from a chart is never a silent drop (for Pareto, also a `meta gpus` it could not
/// use). The timeline draws every run with intervals (the pooled ones too: a group summary
/// has no timeline of its own), so it names none.
pub fn left_out(report: &Report, kind: ChartKind) -> Vec<String> {
    let labels = crate::labels::column_labels(report);
    let why = |i: usize| -> Option<String> {
        let run = &report.runs[i];
        match kind {
            ChartKind::Load => {
                let param = load::load_param(report)?;
                if run.param(param).is_none() {
                    Some(format!("has no {param}"))
                } else if crate::member::member_num(
                    run,
                    "output_throughput_tokens_per_s",
                    crate::grid::Kind::Value,
                )
                .is_none()
                {
                    Some("has no output throughput".into())
                } else {
                    None
                }
            }
            ChartKind::Pareto => pareto::missing(run, load::chart_param(report)?),
            ChartKind::TtftCdf | ChartKind::ItlCdf => {
                let key = if kind == ChartKind::TtftCdf {
                    tokenpipe_format::vocab::TTFT.name
                } else {
                    tokenpipe_format::vocab::ITL.name
                };
                (!run.summary.histograms.contains_key(key))
                    .then(|| format!("has no {key} histogram (reduced with --no-histograms?)"))
            }
            ChartKind::Timeline | ChartKind::Capacity => None,
        }
    };
    let mut notes: Vec<String> = report
        .shown()
        .into_iter()
        .filter_map(|i| {
            why(i).map(|w| {
                format!(
                    "table: chart {}: run {} {w}; left out",
                    kind.name(),
                    labels[i]
                )
            })
        })
        .collect();
    if kind == ChartKind::Pareto {
        notes.extend(pareto::gpu_notes(report));
    }
    notes
}

impl ChartKind {
    /// The kind's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ChartKind::Load => "load",
            ChartKind::Pareto => "pareto",
            ChartKind::TtftCdf => "ttft-cdf",
            ChartKind::ItlCdf => "itl-cdf",
            ChartKind::Timeline => "timeline",
            ChartKind::Capacity => "capacity",
        }
    }
}

#[cfg(test)]
mod pareto_tests;
#[cfg(test)]
mod tests;
