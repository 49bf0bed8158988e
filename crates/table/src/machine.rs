//! The long table the machine formats (CSV, JSON) write: one row per run, one column per
//! summary member, named as in the summary so that a column reads as `jq .member` would. Values
//! are the summary's own numbers, never the two-decimal strings people read.

use crate::report::Report;
use serde_json::Value;
use std::collections::BTreeSet;

/// The summary members that lead every machine table, in the summary's own order, after
/// `label` and `run_id`; each is present in every summary.
const LEADING: &[&str] = &[
    "label",
    "run_id",
    "requests_ok",
    "requests_failed",
    "duration_s",
    "input_tokens",
    "output_tokens",
    "request_throughput_per_s",
    "output_throughput_tokens_per_s",
    "total_throughput_tokens_per_s",
    "itl_jitter",
];

/// Runs as rows and summary members as columns, values as JSON scalars (`null` where a run has
/// no value).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MachineTable {
    /// Column names: [`LEADING`], then every other scalar member any run carries, by name,
    /// then the statistic members (`ttft_p99_ms`) by name.
    pub columns: Vec<String>,
    /// One row per run, one value per column.
    pub rows: Vec<Vec<Value>>,
}

impl MachineTable {
    /// Flattens the scalar members of every summary of `report`; nested members (`llama_benchy`,
    /// `vllm`, `across_runs`, histograms) and lists stay in the NDJSON summary.
    pub fn from_report(report: &Report) -> anyhow::Result<Self> {
        let mut objects = Vec::with_capacity(report.runs.len());
        for run in &report.runs {
            match serde_json::to_value(&run.summary)? {
                Value::Object(map) => objects.push(map),
                other => anyhow::bail!("a summary serialized as {other}, not an object"),
            }
        }
        let stat_names: BTreeSet<&str> = report
            .runs
            .iter()
            .flat_map(|r| r.summary.stats.0.keys().map(String::as_str))
            .collect();
        let others: BTreeSet<&str> = objects
            .iter()
            .flat_map(|o| o.iter())
            .filter(|(k, v)| is_scalar(v) && !LEADING.contains(&k.as_str()))
            .map(|(k, _)| k.as_str())
            .filter(|k| !stat_names.contains(k))
            .collect();
        let columns: Vec<String> = LEADING
            .iter()
            .copied()
            .chain(others)
            .chain(stat_names)
            .map(String::from)
            .collect();
        let rows = objects
            .iter()
            .map(|o| {
                columns
                    .iter()
                    .map(|c| {
                        o.get(c)
                            .filter(|v| is_scalar(v))
                            .cloned()
                            .unwrap_or(Value::Null)
                    })
                    .collect()
            })
            .collect();
        Ok(Self { columns, rows })
    }
}

/// Whether a member fits one cell: a number, string, boolean or null.
fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

impl MachineTable {
    /// CSV: one header row of the column names, one line per row; null is empty, strings bare,
    /// numbers and booleans as JSON writes them (RFC 4180 quoting).
    pub fn to_csv(&self) -> anyhow::Result<String> {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(&self.columns)?;
        for row in &self.rows {
            w.write_record(row.iter().map(|v| match v {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }))?;
        }
        let mut text = String::from_utf8(w.into_inner()?)?;
        if text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }

    /// JSON: an array with one object per row, members in column order (written by hand, as
    /// serde_json's map would sort them).
    pub fn to_json(&self) -> anyhow::Result<String> {
        let mut objects = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let mut members = Vec::with_capacity(row.len());
            for (name, value) in self.columns.iter().zip(row) {
                members.push(format!(
                    "    {}: {}",
                    serde_json::to_string(name)?,
                    serde_json::to_string(value)?
                ));
            }
            objects.push(format!("  {{\n{}\n  }}", members.join(",\n")));
        }
        if objects.is_empty() {
            return Ok("[]".into());
        }
        Ok(format!("[\n{}\n]", objects.join(",\n")))
    }
}
