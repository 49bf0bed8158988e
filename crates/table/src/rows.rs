//! Which metrics a table shows, in which order, and how a value reads: the sideways version of
//! `vllm bench serve`'s result block. Renderers take a [`MetricTable`] and only decide layout.

use tokenpipe_format::{StatName, Summary};

/// How a row's values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A count, written as a whole number.
    Count,
    /// A measurement, written with two decimals.
    Value,
}

/// One metric row: its name (with unit), its kind, and how to read it from a summary.
#[derive(Debug, Clone, Copy)]
pub struct RowDef {
    /// Row heading, unit included, as vLLM names it where vLLM has the metric.
    pub name: &'static str,
    /// Whole number or two decimals.
    pub kind: Kind,
    /// The value in one summary, `None` when the run had none.
    pub get: fn(&Summary) -> Option<f64>,
}

/// The rows of every table, in order.
pub const ROWS: &[RowDef] = &[
    count("Successful requests", |s| Some(s.requests_ok as f64)),
    count("Failed requests", |s| Some(s.requests_failed as f64)),
    value("Duration (s)", |s| Some(s.duration_s)),
    value("Request throughput (req/s)", |s| {
        Some(s.request_throughput_per_s)
    }),
    value("Output token throughput (tok/s)", |s| {
        Some(s.output_throughput_tokens_per_s)
    }),
    value("Total token throughput (tok/s)", |s| {
        Some(s.total_throughput_tokens_per_s)
    }),
    value("Mean TTFT (ms)", |s| s.stat("ttft", StatName::Mean)),
    value("Median TTFT (ms)", |s| {
        s.stat("ttft", StatName::Percentile(50.0))
    }),
    value("P99 TTFT (ms)", |s| {
        s.stat("ttft", StatName::Percentile(99.0))
    }),
    value("Mean TPOT (ms)", |s| s.stat("tpot", StatName::Mean)),
    value("Median TPOT (ms)", |s| {
        s.stat("tpot", StatName::Percentile(50.0))
    }),
    value("P99 TPOT (ms)", |s| {
        s.stat("tpot", StatName::Percentile(99.0))
    }),
    value("Mean ITL (ms)", |s| s.stat("itl", StatName::Mean)),
    value("Median ITL (ms)", |s| {
        s.stat("itl", StatName::Percentile(50.0))
    }),
    value("P99 ITL (ms)", |s| {
        s.stat("itl", StatName::Percentile(99.0))
    }),
    value("ITL jitter (p99/p50)", |s| s.itl_jitter),
    value("Mean E2EL (ms)", |s| s.stat("e2el", StatName::Mean)),
    value("Median E2EL (ms)", |s| {
        s.stat("e2el", StatName::Percentile(50.0))
    }),
    value("P99 E2EL (ms)", |s| {
        s.stat("e2el", StatName::Percentile(99.0))
    }),
    value("Dispatch lag p99 (ms)", |s| {
        s.stat("dispatch_lag", StatName::Percentile(99.0))
    }),
];

const fn count(name: &'static str, get: fn(&Summary) -> Option<f64>) -> RowDef {
    RowDef {
        name,
        kind: Kind::Count,
        get,
    }
}

const fn value(name: &'static str, get: fn(&Summary) -> Option<f64>) -> RowDef {
    RowDef {
        name,
        kind: Kind::Value,
        get,
    }
}

/// Heading of the first column.
pub const METRIC_HEADING: &str = "Metric";

/// Written where a run has no value for a metric.
pub const MISSING: &str = "-";

/// The numbers of a table, before layout: one column per summary, one row per [`ROWS`] entry.
/// Kept as numbers so that machine formats (csv, json) can be added beside the text ones.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricTable {
    /// Column headings: each summary's label (its run id when the label is empty).
    pub labels: Vec<String>,
    /// One row per metric.
    pub rows: Vec<Row>,
}

/// One metric across all runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Row heading with unit.
    pub name: &'static str,
    /// Whole number or two decimals.
    pub kind: Kind,
    /// One value per column.
    pub values: Vec<Option<f64>>,
}

impl MetricTable {
    /// Lays the summaries side by side.
    pub fn from_summaries(summaries: &[Summary]) -> Self {
        let labels = summaries
            .iter()
            .map(|s| {
                if s.label.is_empty() {
                    s.run_id.clone()
                } else {
                    s.label.clone()
                }
            })
            .collect();
        let rows = ROWS
            .iter()
            .map(|def| Row {
                name: def.name,
                kind: def.kind,
                values: summaries.iter().map(def.get).collect(),
            })
            .collect();
        Self { labels, rows }
    }

    /// The table as text cells, heading row first: what the text renderers lay out.
    pub fn text_cells(&self) -> Vec<Vec<String>> {
        let mut cells = Vec::with_capacity(self.rows.len() + 1);
        let mut heading = vec![METRIC_HEADING.to_string()];
        heading.extend(self.labels.iter().cloned());
        cells.push(heading);
        for row in &self.rows {
            let mut line = vec![row.name.to_string()];
            line.extend(row.values.iter().map(|v| format_value(*v, row.kind)));
            cells.push(line);
        }
        cells
    }
}

/// Writes one value as people read it: counts whole, measurements with two decimals, `-` for
/// none.
pub fn format_value(value: Option<f64>, kind: Kind) -> String {
    match (value, kind) {
        (None, _) => MISSING.to_string(),
        (Some(v), Kind::Count) => format!("{v:.0}"),
        (Some(v), Kind::Value) => format!("{v:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_values() {
        assert_eq!(format_value(None, Kind::Value), "-");
        assert_eq!(format_value(Some(12.0), Kind::Count), "12");
        assert_eq!(format_value(Some(1.005), Kind::Value), "1.00");
        assert_eq!(format_value(Some(2623.256), Kind::Value), "2623.26");
    }

    #[test]
    fn empty_label_shows_run_id() {
        let s = Summary {
            run_id: "r1".into(),
            ..Summary::default()
        };
        let t = MetricTable::from_summaries(&[s]);
        assert_eq!(t.labels, ["r1"]);
        assert_eq!(t.rows.len(), ROWS.len());
        assert_eq!(t.rows[6].values, [None]);
    }
}
