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

use crate::error::Error;
use crate::grid::Grid;
use crate::laid_out::LaidOut;
use crate::report::{Report, RunReport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use tokenpipe_format::vllm::{self, key, latency_key, Stat};
use tokenpipe_format::vocab;
use tokenpipe_format::{StatName, Summary};

/// The blocks of every run as one preformatted grid, which every text format writes as it is.
pub(crate) fn lay_out(report: &Report) -> Result<LaidOut, Error> {
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
pub fn blocks(report: &Report) -> Result<String, Error> {
    let blocks = report
        .runs
        .iter()
        .zip(crate::labels::column_labels(report))
        .map(|(run, label)| block(&figures(run), &label))
        .collect::<Result<Vec<_>, _>>()?;
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
    ("Successful requests:", key::COMPLETED, Shown::Plain),
    ("Failed requests:", key::FAILED, Shown::Plain),
    (
        "Maximum request concurrency:",
        key::MAX_CONCURRENCY,
        Shown::Plain,
    ),
    ("Benchmark duration (s):", key::DURATION, Shown::TwoDecimals),
    ("Total input tokens:", key::TOTAL_INPUT_TOKENS, Shown::Plain),
    (
        "Total generated tokens:",
        key::TOTAL_OUTPUT_TOKENS,
        Shown::Plain,
    ),
    (
        "Request throughput (req/s):",
        key::REQUEST_THROUGHPUT,
        Shown::TwoDecimals,
    ),
    (
        "Request goodput (req/s):",
        key::REQUEST_GOODPUT,
        Shown::TwoDecimals,
    ),
    (
        "Output token throughput (tok/s):",
        key::OUTPUT_THROUGHPUT,
        Shown::TwoDecimals,
    ),
    (
        "Peak output token throughput (tok/s):",
        key::MAX_OUTPUT_TOKENS_PER_S,
        Shown::TwoDecimals,
    ),
    (
        "Peak concurrent requests:",
        key::MAX_CONCURRENT_REQUESTS,
        Shown::TwoDecimals,
    ),
    (
        "Total token throughput (tok/s):",
        key::TOTAL_TOKEN_THROUGHPUT,
        Shown::TwoDecimals,
    ),
];

/// The figures a run's block shows: its `vllm` member, or our own fields under vLLM's keys;
/// plus the concurrency limit of its run (`max_concurrency` of a vLLM run, `concurrency` of a
/// closed loop), which vLLM prints but keeps out of its figures.
pub fn figures(run: &RunReport) -> Figures {
    let mut figures = match &run.summary.vllm {
        Some(vllm) => vllm.clone(),
        None => our_figures(&run.summary),
    };
    if !figures.contains_key(key::MAX_CONCURRENCY) {
        let limit = run.header.as_ref().and_then(|h| {
            [
                key::MAX_CONCURRENCY,
                tokenpipe_format::vocab::CONCURRENCY.key,
            ]
            .iter()
            .find_map(|key| h.param(key).filter(|v| v.is_number()))
        });
        if let Some(limit) = limit {
            figures.insert(key::MAX_CONCURRENCY.into(), limit.clone());
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
    // The run-wide figures vLLM has too, where the summary has them.
    for figure in vocab::FIGURES {
        if let (Some(key), Some(value)) = (figure.vllm, (figure.get)(s)) {
            put(key, value);
        }
    }
    for metric in vllm::METRICS.iter().map(|m| m.name) {
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
        put(&latency_key(metric, Stat::Mean), value(StatName::Mean));
        if has(StatName::Percentile(50.0)) {
            put(
                &latency_key(metric, Stat::Median),
                value(StatName::Percentile(50.0)),
            );
        }
        if has(StatName::Std) {
            put(&latency_key(metric, Stat::Std), value(StatName::Std));
        }
        for &p in s.percentile_set().iter().filter(|&&p| p != 50.0) {
            if has(StatName::Percentile(p)) {
                put(
                    &latency_key(metric, Stat::Percentile(p)),
                    value(StatName::Percentile(p)),
                );
            }
        }
    }
    f
}

/// One run's block. `label` names the run in the error about a figure that is not a number.
pub fn block(figures: &Figures, label: &str) -> Result<String, Error> {
    let number = |key: &str| -> Result<Option<&serde_json::Number>, Error> {
        match figures.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n)),
            Some(other) => Err(Error::VllmFigure {
                run: label.to_string(),
                key: key.to_string(),
                found: other.clone(),
            }),
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
    for vllm::Metric {
        name: metric,
        shown: shown_name,
        title,
    } in vllm::METRICS
    {
        let Some(mean) = number(&latency_key(metric, Stat::Mean))? else {
            continue;
        };
        let _ = writeln!(out, "{title:-^50}");
        line(
            &mut out,
            &format!("Mean {shown_name} (ms):"),
            mean,
            Shown::TwoDecimals,
        );
        if let Some(median) = number(&latency_key(metric, Stat::Median))? {
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
