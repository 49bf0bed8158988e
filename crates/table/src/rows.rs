//! Which metrics the wide layout shows, in which order, and how a value reads: the sideways
//! version of `vllm bench serve`'s result block. [`crate::layout::wide`] lays a
//! [`MetricTable`] out as a grid.

use crate::grid::{Align, Cell, Grid, Kind, Num};
use crate::member::member_num;
use crate::report::Report;
use tokenpipe_format::vocab::{self, Family, Figure};
use tokenpipe_format::{stat_key, StatName, Summary};

/// The run-wide figures before the latency metrics, in the order `vllm bench serve`'s block
/// shows them. `Failed` is the server's and the network's failures only; the run's own ends
/// follow it in [`RUN_ENDS`].
const HEAD_ROWS: &[Figure] = &[
    vocab::REQUESTS_OK,
    vocab::FAILED,
    vocab::DURATION_S,
    vocab::REQUEST_RATE,
    vocab::OUTPUT_TPS,
    vocab::TOTAL_TPS,
];

/// The requests the run itself ended (stopped, cut off): rows after `Failed requests`, shown
/// when some run has one, never counted as failed.
const RUN_ENDS: &[Figure] = &[vocab::CANCELLED, vocab::NOT_SENT, vocab::UNFINISHED];

/// What the server did beyond the tokens: the answers' reasoning and the prefix cache's hits,
/// rows shown only when some run has them (docs/metrics.md, "Reasoning and answer", "Cache
/// hits").
const SERVED_ROWS: &[Figure] = &[
    vocab::REASONING_TOKENS,
    vocab::ANSWER_TOKENS,
    vocab::CACHED_PROMPT_TOKENS,
    vocab::CACHE_HIT_RATIO,
    vocab::SERVER_CACHE_HIT_RATIO,
];

/// Heading of the first column.
pub const METRIC_HEADING: &str = "Metric";

/// The numbers of a table, before layout: one column per run, one row per metric statistic.
/// Kept as numbers so that machine formats can be laid out beside the text ones.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricTable {
    /// Column headings, one per run.
    pub labels: Vec<String>,
    /// One row per metric statistic.
    pub rows: Vec<Row>,
}

/// One metric across all runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Row heading with unit.
    pub name: String,
    /// Whole number or two decimals.
    pub kind: Kind,
    /// One cell per column: the value, or for a group summary the mean over its runs with
    /// their spread.
    pub cells: Vec<Cell>,
}

impl MetricTable {
    /// Every run of `report`, as [`MetricTable::for_runs`] lays them out (the tests' table).
    #[cfg(test)]
    pub fn from_report(report: &Report) -> Self {
        let all: Vec<usize> = (0..report.runs.len()).collect();
        Self::for_runs(report, &all)
    }

    /// Lays the runs `runs` (indices into `report.runs`) side by side, in that order: the counts
    /// and throughputs, then each latency metric's mean and every percentile the summaries carry
    /// (p50 as the median), the ITL jitter, the dispatch lag at the highest percentile, and
    /// output stalls when a run had any.
    pub fn for_runs(report: &Report, runs: &[usize]) -> Self {
        let summaries: Vec<&Summary> = runs.iter().map(|&i| &report.runs[i].summary).collect();
        let mut percentiles: Vec<f64> = summaries
            .iter()
            .flat_map(|s| s.percentile_set().into_owned())
            .collect();
        percentiles.sort_by(f64::total_cmp);
        percentiles.dedup();
        let mut rows = Vec::new();
        let mut push =
            |name: String, member: &str, kind: Kind, get: &dyn Fn(&Summary) -> Option<f64>| {
                let values: Vec<Option<f64>> = summaries.iter().map(|s| get(s)).collect();
                let cells = runs
                    .iter()
                    .zip(&values)
                    .map(|(&i, value)| {
                        let run = &report.runs[i];
                        let own = value.map(|value| Num {
                            value,
                            kind,
                            spread: None,
                        });
                        // A group's mean over its runs where it has one, else its pooled value.
                        let num = match own {
                            Some(own) if run.is_group() => {
                                Some(member_num(run, member, kind).unwrap_or(own))
                            }
                            other => other,
                        };
                        num.map_or(Cell::Missing, Cell::Num)
                    })
                    .collect();
                rows.push(Row { name, kind, cells })
            };
        let figure_row = |figure: &'static Figure| {
            (
                figure.row.unwrap_or(figure.heading).to_string(),
                figure.member,
                Kind::from(figure.kind),
                move |s: &Summary| (figure.get)(s).and_then(|v| v.as_f64()),
            )
        };
        for figure in HEAD_ROWS {
            let (name, member, kind, get) = figure_row(figure);
            push(name, member, kind, &get);
            if figure.member != vocab::FAILED.member {
                continue;
            }
            // The server's failures by kind, then the run's own ends, where some run has them.
            let mut kinds: Vec<&str> = summaries
                .iter()
                .flat_map(|s| tokenpipe_format::server_failures(s).map(|(kind, _)| kind))
                .collect();
            kinds.sort_unstable();
            kinds.dedup();
            for kind in kinds {
                push(
                    format!("Failed: {kind}"),
                    &format!("errors.{kind}"),
                    Kind::Count,
                    &|s| {
                        let n = tokenpipe_format::server_failures(s)
                            .find(|(k, _)| *k == kind)
                            .map_or(0, |(_, n)| n);
                        Some(n as f64)
                    },
                );
            }
            for end in RUN_ENDS {
                let (name, member, kind, get) = figure_row(end);
                if summaries.iter().any(|s| get(s).is_some_and(|n| n > 0.0)) {
                    push(name, member, kind, &get);
                }
            }
        }
        for latency in vocab::metrics_of(Family::Latency) {
            let metric = latency.name;
            for (name, member, stat) in latency_rows(metric, latency.heading, &percentiles) {
                push(name, &member, Kind::Value, &|s| s.stat(metric, stat));
            }
            if metric == vocab::ITL.name {
                push(
                    "ITL jitter (p99/p50)".into(),
                    "itl_jitter",
                    Kind::Value,
                    &|s| s.itl_jitter,
                );
            }
        }
        // Reasoning and answer apart, and the cache's hits: only where some run has them.
        let ttfa = vocab::TTFA.name;
        if summaries
            .iter()
            .any(|s| s.stat(ttfa, StatName::Mean).is_some())
        {
            for (name, member, stat) in latency_rows(ttfa, vocab::TTFA.heading, &percentiles) {
                push(name, &member, Kind::Value, &|s| s.stat(ttfa, stat));
            }
        }
        for figure in SERVED_ROWS {
            let (name, member, kind, get) = figure_row(figure);
            if summaries.iter().any(|s| get(s).is_some()) {
                push(name, member, kind, &get);
            }
        }
        // The client's own lag at the highest percentile shown (p99 by default).
        if let Some(&top) = percentiles.last() {
            let lag = vocab::DISPATCH_LAG.name;
            push(
                format!("{} p{top} (ms)", vocab::DISPATCH_LAG.heading),
                &stat_key(lag, StatName::Percentile(top), "ms"),
                Kind::Value,
                &|s| s.stat(lag, StatName::Percentile(top)),
            );
        }
        // A mark for runs whose client fell behind or ran out of CPU (their load or stamps
        // may be distorted); shown only when some run has one.
        if summaries.iter().any(|s| s.client_kept_up == Some(false)) {
            push("Client kept up".into(), "", Kind::YesNo, &|s| {
                s.client_kept_up.map(|up| if up { 1.0 } else { 0.0 })
            });
        }
        if summaries.iter().any(|s| s.output_stalls > 0) {
            push("Output stalls".into(), "output_stalls", Kind::Count, &|s| {
                Some(s.output_stalls as f64)
            });
        }
        // The server's figures (speculative decoding, gauges, energy): each where some run
        // has it.
        for figure in vocab::SERVER_FIGURES {
            let (name, member, kind, get) = figure_row(figure);
            if summaries.iter().any(|s| get(s).is_some()) {
                push(name, member, kind, &get);
            }
        }
        let all_labels = crate::labels::column_labels(report);
        Self {
            labels: runs.iter().map(|&i| all_labels[i].clone()).collect(),
            rows,
        }
    }

    /// The table as a [`Grid`]: metric names left, one right-aligned column of numbers per run.
    pub fn to_grid(&self) -> Grid {
        let mut headings = vec![METRIC_HEADING.to_string()];
        headings.extend(self.labels.iter().cloned());
        let mut align = vec![Align::Left];
        align.extend(self.labels.iter().map(|_| Align::Right));
        let rows = self
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![Cell::text(row.name.clone())];
                cells.extend(row.cells.iter().cloned());
                cells
            })
            .collect();
        Grid {
            headings,
            align,
            rows,
            ..Grid::default()
        }
    }
}

/// The rows of a latency metric: its mean, then each percentile shown (p50 as the median), as
/// (row name, summary member, statistic).
fn latency_rows(metric: &str, shown: &str, percentiles: &[f64]) -> Vec<(String, String, StatName)> {
    let mean = StatName::Mean;
    let mut rows = vec![(
        format!("Mean {shown} (ms)"),
        stat_key(metric, mean, "ms"),
        mean,
    )];
    for &p in percentiles {
        let name = if p == 50.0 {
            format!("Median {shown} (ms)")
        } else {
            format!("P{p} {shown} (ms)")
        };
        let stat = StatName::Percentile(p);
        rows.push((name, stat_key(metric, stat, "ms"), stat));
    }
    rows
}

#[cfg(test)]
mod tests;
