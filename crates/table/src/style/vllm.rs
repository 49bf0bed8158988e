//! `--style vllm`: every run as the "Serving Benchmark Result" block that `vllm bench serve`
//! prints, byte for byte, so a run measured here can be pasted where vLLM's output is expected.
//!
//! vLLM writes each line with Python's `"{:<40} {:<10}".format(name, value)` (counts) or
//! `"{:<40} {:<10.2f}"` (everything else), so every value line ends in the spaces that pad the
//! value to 10 characters; section rules are `"{s:{c}^{n}}".format(s=title, n=50, c='-')` and
//! the banners 50 `=`. A line is written only when the run has its figure, as vLLM leaves out
//! the goodput without `--goodput`, the concurrency limit without `--max-concurrency` and the
//! configured request rate when it is infinite (its default).
//!
//! The latency sections are vLLM's `process_one_metric`: one per metric of
//! `--percentile-metrics` (default `ttft,tpot,itl`), always in vLLM's order (TTFT, TPOT, ITL,
//! E2EL) whatever the order given, each with its mean, its median and one `P…` line per
//! percentile of `--metric-percentiles` (default `99`) in the order given, named as Python's
//! `str(int(p)) if int(p) == p else str(p)` names it (`P99`, `P99.9`). See [`Sections`].
//!
//! The figures are the summary's `vllm` member when it has one (`reduce --vllm-compatible`, or a
//! vLLM result file read as input): vLLM's own definitions. Otherwise they are our own fields
//! under vLLM's names (see [`our_figures`]).

use crate::error::Error;
use crate::grid::Grid;
use crate::laid_out::LaidOut;
use crate::options::Options;
use crate::report::{Report, RunReport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;
use tokenpipe_format::vllm::{self, key, latency_key, Stat};
use tokenpipe_format::vocab;
use tokenpipe_format::{StatName, Summary};

/// The blocks of every run as one preformatted grid, which every text format writes as it is;
/// `opts` chooses their latency sections.
pub(crate) fn lay_out(report: &Report, opts: &Options) -> Result<LaidOut, Error> {
    let sections = Sections::from_options(opts)?;
    let grid = Grid {
        preformatted: Some(blocks(report, &sections)?),
        ..Grid::default()
    };
    Ok(LaidOut {
        grids: vec![grid],
        ..LaidOut::default()
    })
}

/// The latency sections of a block, as vLLM's `--percentile-metrics` and
/// `--metric-percentiles` choose them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sections {
    /// The metrics with a section, in vLLM's order (that of [`vllm::METRICS`]).
    metrics: Vec<&'static vllm::Metric>,
    /// The percentiles of each section's `P…` lines, in the order given.
    percentiles: Vec<f64>,
}

impl Default for Sections {
    /// vLLM's defaults: TTFT, TPOT and ITL, each with its P99.
    fn default() -> Self {
        Sections {
            metrics: Self::in_vllms_order(vllm::DEFAULT_PERCENTILE_METRICS),
            percentiles: vllm::DEFAULT_METRIC_PERCENTILES.to_vec(),
        }
    }
}

impl Sections {
    /// The sections `opts` asks for, vLLM's defaults for what it leaves out. A metric vLLM does
    /// not report, or a percentile outside 0 to 100, is bad input naming it.
    pub fn from_options(opts: &Options) -> Result<Self, Error> {
        let mut sections = Sections::default();
        if let Some(names) = &opts.percentile_metrics {
            if let Some(bad) = names.iter().find(|n| vllm::metric(n).is_none()) {
                let known: Vec<&str> = vllm::METRICS.iter().map(|m| m.name).collect();
                return Err(Error::Flags(format!(
                    "--percentile-metrics: `{bad}` is not one of vLLM's metrics ({})",
                    known.join(", ")
                )));
            }
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            sections.metrics = Self::in_vllms_order(&names);
        }
        if let Some(percentiles) = &opts.metric_percentiles {
            if let Some(bad) = percentiles.iter().find(|p| !(0.0..=100.0).contains(*p)) {
                return Err(Error::Flags(format!(
                    "--metric-percentiles: a percentile is from 0 to 100, got {bad}"
                )));
            }
            sections.percentiles = percentiles.clone();
        }
        Ok(sections)
    }

    /// vLLM's metrics among `names`, in the order vLLM prints their sections.
    fn in_vllms_order(names: &[&str]) -> Vec<&'static vllm::Metric> {
        vllm::METRICS
            .iter()
            .filter(|m| names.contains(&m.name))
            .collect()
    }
}

/// Each run as vLLM's result block, in input order, with no blank line between blocks (as
/// consecutive `vllm bench serve` runs print them).
pub fn blocks(report: &Report, sections: &Sections) -> Result<String, Error> {
    let blocks = report
        .runs
        .iter()
        .zip(crate::labels::column_labels(report))
        .map(|(run, label)| block(&figures(run), &label, sections))
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
    (
        "Request rate configured (RPS):",
        key::REQUEST_RATE,
        Shown::TwoDecimals,
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
/// closed loop) and its request rate (`request_rate` of a vLLM run, `rate_per_s` of an open
/// loop), which vLLM prints but keeps out of its figures. vLLM prints the rate only when it is
/// finite (`"inf"` in its result file): a rate that is not a number has no line.
pub fn figures(run: &RunReport) -> Figures {
    let mut figures = match &run.summary.vllm {
        Some(vllm) => vllm.clone(),
        None => our_figures(&run.summary),
    };
    if !matches!(figures.get(key::REQUEST_RATE), Some(Value::Number(_))) {
        figures.remove(key::REQUEST_RATE);
        let rate = run
            .param(vocab::RATE.key)
            .filter(|v| v.as_f64().is_some_and(f64::is_finite));
        if let Some(rate) = rate {
            figures.insert(key::REQUEST_RATE.into(), rate.clone());
        }
    }
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
/// Every percentile the summary carries is written, the median both as `median_…` and as
/// `p50_…`, as vLLM writes each one of its `--metric-percentiles`; a statistic without a value
/// reads 0, as in vLLM.
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
        for &p in s.percentile_set().iter() {
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

/// One run's block, with the latency sections `sections` chooses. `label` names the run in the
/// error about a figure that is not a number, or a percentile chosen that it does not carry.
pub fn block(figures: &Figures, label: &str, sections: &Sections) -> Result<String, Error> {
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
            Shown::TwoDecimals => {
                tokenpipe_format::number::fixed(n.as_f64().unwrap_or(f64::NAN), 2)
            }
        };
        // `{:<40} {:<10}`: the value's padding spaces end the line.
        let _ = writeln!(out, "{name:<40} {value:<10}");
    };
    for (name, key, shown) in HEAD_LINES {
        if let Some(n) = number(key)? {
            line(&mut out, name, n, *shown);
        }
    }
    for &&vllm::Metric {
        name: metric,
        shown: shown_name,
        title,
    } in &sections.metrics
    {
        // A metric the run did not measure has no section, whatever was chosen.
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
        for &p in &sections.percentiles {
            let key = latency_key(metric, Stat::Percentile(p));
            let Some(v) = number(&key)? else {
                return Err(Error::VllmPercentile {
                    run: label.to_string(),
                    key,
                });
            };
            line(
                &mut out,
                &format!("P{} {shown_name} (ms):", vllm::percentile_label(p)),
                v,
                Shown::TwoDecimals,
            );
        }
    }
    out.push_str(&"=".repeat(50));
    Ok(out)
}

/// `v` as Python's `repr` writes a float past 1e16: the shortest digits, `e`, a sign, and an
/// exponent of at least two digits (`1e+308`, `1.5e+20`).
fn python_exponent(v: f64) -> String {
    let text = format!("{v:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// A JSON number as Python's `str` writes it: integers as digits, floats with a decimal point
/// (`10.0`), and from 1e16 on in Python's scientific notation (`1e+308`).
fn python_str(n: &serde_json::Number) -> String {
    if n.is_f64() {
        let v = n.as_f64().unwrap_or(f64::NAN);
        if v.fract() == 0.0 && v.abs() < 1e16 {
            format!("{v:.1}")
        } else if v.is_finite() && v.abs() >= 1e16 {
            python_exponent(v)
        } else {
            format!("{v}")
        }
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests;
