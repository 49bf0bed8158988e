//! `--style vllm`: every run as the "Serving Benchmark Result" block that `vllm bench serve`
//! prints, byte for byte, so a run measured here can be pasted where vLLM's output is expected.
//!
//! vLLM writes each line with Python's `"{:<40} {:<10}".format(name, value)` (counts) or
//! `"{:<40} {:<10.2f}"` (everything else), so every value line ends in the spaces that pad the
//! value to 10 characters; section rules are `"{s:{c}^{n}}".format(s=title, n=50, c='-')` and
//! the banners 50 `=`. A line is written only when the run has its figure, as vLLM leaves out
//! the goodput without `--goodput`, the concurrency limit without `--max-concurrency`, and a
//! latency section whose metric was not selected.
//!
//! The figures are the summary's `vllm` member when it has one (`reduce --vllm-compatible`, or a
//! vLLM result file read as input): vLLM's own definitions. Otherwise they are our own fields
//! under vLLM's names (see [`our_figures`]).

use crate::grid::Grid;
use crate::laid_out::LaidOut;
use crate::report::{Report, RunReport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use tokenpipe_format::{StatName, Summary};

/// The blocks of every run as one preformatted grid, which every text format writes as it is.
pub(crate) fn lay_out(report: &Report) -> anyhow::Result<LaidOut> {
    let grid = Grid {
        preformatted: Some(blocks(report)?),
        ..Grid::default()
    };
    Ok(LaidOut {
        grids: vec![grid],
        ..LaidOut::default()
    })
}

/// Each run as vLLM's result block, in input order, with no blank line between blocks (as
/// consecutive `vllm bench serve` runs print them).
pub fn blocks(report: &Report) -> anyhow::Result<String> {
    let blocks = report
        .runs
        .iter()
        .zip(crate::labels::column_labels(report))
        .map(|(run, label)| block(&figures(run), &label))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(blocks.join("\n"))
}

/// vLLM's result figures by its result-JSON key.
pub type Figures = BTreeMap<String, Value>;

/// How vLLM writes a value: `{:<10}` of the Python value, or `{:<10.2f}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Plain,
    TwoDecimals,
}

/// The lines before the latency sections: (text, result-JSON key, how the value is written).
const HEAD_LINES: &[(&str, &str, Shown)] = &[
    ("Successful requests:", "completed", Shown::Plain),
    ("Failed requests:", "failed", Shown::Plain),
    (
        "Maximum request concurrency:",
        "max_concurrency",
        Shown::Plain,
    ),
    ("Benchmark duration (s):", "duration", Shown::TwoDecimals),
    ("Total input tokens:", "total_input_tokens", Shown::Plain),
    (
        "Total generated tokens:",
        "total_output_tokens",
        Shown::Plain,
    ),
    (
        "Request throughput (req/s):",
        "request_throughput",
        Shown::TwoDecimals,
    ),
    (
        "Request goodput (req/s):",
        "request_goodput",
        Shown::TwoDecimals,
    ),
    (
        "Output token throughput (tok/s):",
        "output_throughput",
        Shown::TwoDecimals,
    ),
    (
        "Peak output token throughput (tok/s):",
        "max_output_tokens_per_s",
        Shown::TwoDecimals,
    ),
    (
        "Peak concurrent requests:",
        "max_concurrent_requests",
        Shown::TwoDecimals,
    ),
    (
        "Total token throughput (tok/s):",
        "total_token_throughput",
        Shown::TwoDecimals,
    ),
];

/// The latency sections: (metric in the keys, name in the lines, section title).
const SECTIONS: &[(&str, &str, &str)] = &[
    ("ttft", "TTFT", "Time to First Token"),
    ("tpot", "TPOT", "Time per Output Token (excl. 1st token)"),
    ("itl", "ITL", "Inter-token Latency"),
    ("e2el", "E2EL", "End-to-end Latency"),
];

/// The figures a run's block shows: its `vllm` member, or our own fields under vLLM's keys;
/// plus the concurrency limit of its run (`max_concurrency` of a vLLM run, `concurrency` of a
/// closed loop), which vLLM prints but keeps out of its figures.
pub fn figures(run: &RunReport) -> Figures {
    let mut figures = match &run.summary.vllm {
        Some(vllm) => vllm.clone(),
        None => our_figures(&run.summary),
    };
    if !figures.contains_key("max_concurrency") {
        let limit = run.header.as_ref().and_then(|h| {
            ["max_concurrency", "concurrency"]
                .iter()
                .find_map(|key| h.param(key).filter(|v| v.is_number()))
        });
        if let Some(limit) = limit {
            figures.insert("max_concurrency".into(), limit.clone());
        }
    }
    figures
}

/// Our summary's fields under vLLM's keys, where they mean the same thing; the latency
/// statistics follow docs/metrics.md, not vLLM (`reduce --vllm-compatible` gives vLLM's).
/// Percentiles other than the median are each written, as vLLM writes each one of its
/// `--metric-percentiles`; a statistic without a value reads 0, as in vLLM.
pub fn our_figures(s: &Summary) -> Figures {
    let mut f = Figures::new();
    let mut put = |key: &str, value: Value| {
        f.insert(key.to_string(), value);
    };
    put("completed", json!(s.requests_ok));
    put("failed", json!(s.requests_failed));
    put("duration", json!(s.duration_s));
    put("total_input_tokens", json!(s.input_tokens));
    put("total_output_tokens", json!(s.output_tokens));
    put("request_throughput", json!(s.request_throughput_per_s));
    if let Some(goodput) = s.goodput_per_s {
        put("request_goodput", json!(goodput));
    }
    put("output_throughput", json!(s.output_throughput_tokens_per_s));
    if let Some(peak) = s.peak_output_tps {
        put("max_output_tokens_per_s", json!(peak));
    }
    if let Some(peak) = s.peak_concurrency {
        put("max_concurrent_requests", json!(peak));
    }
    put(
        "total_token_throughput",
        json!(s.total_throughput_tokens_per_s),
    );
    for (metric, _, _) in SECTIONS {
        // A metric the summary has no member of at all is one the run did not measure.
        let has = |stat: StatName| {
            s.stats
                .0
                .contains_key(&tokenpipe_format::stat_key(metric, stat, "ms"))
        };
        if !has(StatName::Mean) {
            continue;
        }
        let value = |stat: StatName| json!(s.stat(metric, stat).unwrap_or(0.0));
        put(&format!("mean_{metric}_ms"), value(StatName::Mean));
        if has(StatName::Percentile(50.0)) {
            put(
                &format!("median_{metric}_ms"),
                value(StatName::Percentile(50.0)),
            );
        }
        if has(StatName::Std) {
            put(&format!("std_{metric}_ms"), value(StatName::Std));
        }
        for &p in s.percentile_set().iter().filter(|&&p| p != 50.0) {
            if has(StatName::Percentile(p)) {
                put(&format!("p{p}_{metric}_ms"), value(StatName::Percentile(p)));
            }
        }
    }
    f
}

/// One run's block. `label` names the run in the error about a figure that is not a number.
pub fn block(figures: &Figures, label: &str) -> anyhow::Result<String> {
    let number = |key: &str| -> anyhow::Result<Option<&serde_json::Number>> {
        match figures.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n)),
            Some(other) => Err(tokenpipe_cli::bad_input(format!(
                "run {label}: vLLM figure \"{key}\": expected a number, got {other}"
            ))),
        }
    };
    let mut out = format!("{:=^50}\n", " Serving Benchmark Result ");
    let line = |out: &mut String, name: &str, n: &serde_json::Number, shown: Shown| {
        let value = match shown {
            Shown::Plain => python_str(n),
            Shown::TwoDecimals => format!("{:.2}", n.as_f64().unwrap_or(f64::NAN)),
        };
        // `{:<40} {:<10}`: the value's padding spaces end the line.
        let _ = writeln!(out, "{name:<40} {value:<10}");
    };
    for (name, key, shown) in HEAD_LINES {
        if let Some(n) = number(key)? {
            line(&mut out, name, n, *shown);
        }
    }
    for (metric, shown_name, title) in SECTIONS {
        let Some(mean) = number(&format!("mean_{metric}_ms"))? else {
            continue;
        };
        let _ = writeln!(out, "{title:-^50}");
        line(
            &mut out,
            &format!("Mean {shown_name} (ms):"),
            mean,
            Shown::TwoDecimals,
        );
        if let Some(median) = number(&format!("median_{metric}_ms"))? {
            line(
                &mut out,
                &format!("Median {shown_name} (ms):"),
                median,
                Shown::TwoDecimals,
            );
        }
        for p in percentiles_of(figures, metric) {
            if let Some(v) = number(&format!("p{p}_{metric}_ms"))? {
                line(
                    &mut out,
                    &format!("P{p} {shown_name} (ms):"),
                    v,
                    Shown::TwoDecimals,
                );
            }
        }
    }
    out.push_str(&"=".repeat(50));
    Ok(out)
}

/// The percentiles the figures carry for `metric`, as written in their keys (`99`, `99.9`), in
/// increasing order.
fn percentiles_of(figures: &Figures, metric: &str) -> Vec<String> {
    let suffix = format!("_{metric}_ms");
    let mut found: Vec<(f64, String)> = figures
        .keys()
        .filter_map(|k| {
            let p = k.strip_prefix('p')?.strip_suffix(&suffix)?;
            Some((p.parse::<f64>().ok()?, p.to_string()))
        })
        .collect();
    found.sort_by(|a, b| a.0.total_cmp(&b.0));
    found.into_iter().map(|(_, p)| p).collect()
}

/// A JSON number as Python's `str` writes it: integers as digits, floats with a decimal point
/// (`10.0`).
fn python_str(n: &serde_json::Number) -> String {
    if n.is_f64() {
        let v = n.as_f64().unwrap_or(f64::NAN);
        if v.fract() == 0.0 && v.abs() < 1e16 {
            format!("{v:.1}")
        } else {
            format!("{v}")
        }
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests;
