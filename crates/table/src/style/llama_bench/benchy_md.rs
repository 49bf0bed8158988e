//! llama-benchy's own Markdown table (`results.py`, `_generate_md_report`), byte for byte: one
//! pp row and one tg row per run, `mean ± std` cells with two decimals, empty cells where it
//! leaves them empty, the `(cN)` suffix and the nine columns when the largest concurrency shown
//! is above 1 (seven otherwise), laid out as `tabulate(..., tablefmt="pipe", colalign=…)`
//! writes it: every column as wide as its widest cell or its heading plus 2, cells padded by
//! one space, the first column left-aligned and the rest right-aligned, `:` marking the side.

use crate::report::RunReport;
use tokenpipe_format::{vocab, LlamaBenchy, MeanStd, SpreadFigure};

/// One run's place in llama-benchy's table: its model, test sizes and figures.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchyRun {
    /// The model served (the run's `model` setting), else its label, else its run id.
    pub model: String,
    /// The prompt size asked for (`input_tokens`): the `pp` of the test name.
    pub pp: Option<u64>,
    /// The response size asked for (`output_tokens`): the `tg` of the test name.
    pub tg: Option<u64>,
    /// The context depth (`depth`), 0 when the run has none.
    pub depth: u64,
    /// Requests per batch (1 when the run does not say).
    pub concurrency: u64,
    /// The run's llama-benchy figures.
    pub figures: LlamaBenchy,
}

impl BenchyRun {
    /// The run's place in the table, when its summary has llama-benchy's figures.
    pub fn of(run: &RunReport) -> Option<Self> {
        let figures = run.summary.llama_benchy.clone()?;
        let param = |key: &str| run.header.as_ref().and_then(|h| h.param(key));
        let number = |key: &str| param(key).and_then(serde_json::Value::as_u64);
        let s = &run.summary;
        let model = param(vocab::MODEL.key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .or_else(|| (!s.label.is_empty()).then(|| s.label.clone()))
            .unwrap_or_else(|| s.run_id.clone());
        Some(BenchyRun {
            model: model.trim().to_string(),
            pp: number(vocab::INPUT_TOKENS.key),
            tg: number(vocab::OUTPUT_TOKENS.key),
            depth: number(vocab::DEPTH.key).unwrap_or(0),
            concurrency: figures.concurrency.unwrap_or(1),
            figures,
        })
    }
}

/// llama-benchy's `fmt`: `f"{mean:.2f} ± {std:.2f}"`, empty without a figure.
fn cell(mean_std: Option<(f64, f64)>) -> String {
    mean_std.map_or(String::new(), |(m, s)| format!("{} ± {}", py2(m), py2(s)))
}

/// Python's `f"{x:.2f}"` (Rust rounds the same way; only the non-finite values are spelt apart),
/// except that from a thousand trillion on it is written `1.00e308`, not in 309 digits.
fn py2(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        tokenpipe_format::number::fixed(x, 2)
    }
}

fn spread(f: &Option<SpreadFigure>) -> Option<(f64, f64)> {
    f.as_ref().map(|f| (f.mean, f.std))
}

fn ms(f: &Option<MeanStd>) -> Option<(f64, f64)> {
    f.as_ref().map(|f| (f.mean, f.std))
}

/// The table of `runs`, in llama-benchy's order (model as first seen, then depth, prompt size,
/// response size and concurrency, as its loops run); `None` without a row.
pub fn render(runs: &[BenchyRun]) -> Option<String> {
    let mut models: Vec<&str> = Vec::new();
    for r in runs {
        if !models.contains(&r.model.as_str()) {
            models.push(&r.model);
        }
    }
    let mut order: Vec<&BenchyRun> = runs.iter().collect();
    order.sort_by_key(|r| {
        let model = models.iter().position(|m| *m == r.model);
        (model, r.depth, r.pp, r.tg, r.concurrency)
    });
    let max_concurrency = runs.iter().map(|r| r.concurrency).max()?;
    let several = max_concurrency > 1;
    let mut rows: Vec<Vec<String>> = Vec::new();
    for r in order {
        let c_suffix = if several {
            format!(" (c{})", r.concurrency)
        } else {
            String::new()
        };
        let d_suffix = if r.depth > 0 {
            format!(" @ d{}", r.depth)
        } else {
            String::new()
        };
        let size = |n: Option<u64>| n.map_or(String::new(), |n| n.to_string());
        let b = &r.figures;
        if b.pp_tps.is_some() {
            let test = format!("pp{}{d_suffix}{c_suffix}", size(r.pp));
            let (ttfr, est, e2e) = (ms(&b.ttfr_ms), ms(&b.est_ppt_ms), ms(&b.e2e_ttft_ms));
            let (ts, ts_req) = (spread(&b.pp_tps), spread(&b.pp_tps_request));
            rows.push(row(
                &r.model,
                test,
                [ts, ts_req, None, None, ttfr, est, e2e],
                several,
            ));
        }
        if b.tg_tps.is_some() || b.peak_tps.is_some() {
            let test = format!("tg{}{d_suffix}{c_suffix}", size(r.tg));
            let (ts, ts_req) = (spread(&b.tg_tps), spread(&b.tg_tps_request));
            let (peak, peak_req) = (spread(&b.peak_tps), spread(&b.peak_tps_request));
            rows.push(row(
                &r.model,
                test,
                [ts, ts_req, peak, peak_req, None, None, None],
                several,
            ));
        }
    }
    let headers: &[&str] = if several {
        &[
            "model",
            "test",
            "t/s (total)",
            "t/s (req)",
            "peak t/s",
            "peak t/s (req)",
            "ttfr (ms)",
            "est_ppt (ms)",
            "e2e_ttft (ms)",
        ]
    } else {
        &[
            "model",
            "test",
            "t/s",
            "peak t/s",
            "ttfr (ms)",
            "est_ppt (ms)",
            "e2e_ttft (ms)",
        ]
    };
    (!rows.is_empty()).then(|| pipe_table(headers, &rows))
}

/// One row's cells: the model, the test and the seven figures, of which the seven-column
/// table keeps t/s, peak t/s and the three times.
fn row(model: &str, test: String, figures: [Option<(f64, f64)>; 7], several: bool) -> Vec<String> {
    let mut cells = vec![model.to_string(), test];
    for (i, f) in figures.into_iter().enumerate() {
        if several || !matches!(i, 1 | 3) {
            cells.push(cell(f));
        }
    }
    cells
}

/// tabulate's `pipe` format with the first column left-aligned and the others right-aligned:
/// each column as wide as its widest cell and at least its heading plus 2 (tabulate's
/// `MIN_PADDING`); `|:---|` over a left column, `|---:|` over a right one.
pub fn pipe_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let width = |s: &str| s.chars().count();
    let widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| width(c))
                .fold(width(h) + 2, usize::max)
        })
        .collect();
    let pad = |i: usize, s: &str| {
        let fill = " ".repeat(widths[i].saturating_sub(width(s)));
        if i == 0 {
            format!("{s}{fill}")
        } else {
            format!("{fill}{s}")
        }
    };
    let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
    let mut out = vec![line(
        headers.iter().enumerate().map(|(i, h)| pad(i, h)).collect(),
    )];
    let rule: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let dashes = "-".repeat(w + 1);
            if i == 0 {
                format!(":{dashes}")
            } else {
                format!("{dashes}:")
            }
        })
        .collect();
    out.push(format!("|{}|", rule.join("|")));
    for r in rows {
        let cells = (0..headers.len())
            .map(|i| pad(i, r.get(i).map_or("", String::as_str)))
            .collect();
        out.push(line(cells));
    }
    out.join("\n")
}
