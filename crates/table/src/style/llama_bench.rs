//! `--style llama-bench`: llama-benchy's own Markdown table (every column, byte for byte, see
//! [`benchy_md`]), then the two tables llama-benchy users post (seed 001), decode ("t/s (total)
//! | +/- stddev | CV%") and prefill ("pp t/s (total) | +/- stddev"), one row per run by
//! concurrency.
//! Figures come from each summary's `llama_benchy` member; a group summary of repeated runs
//! without one gives its decode row from `across_runs.output_throughput_tokens_per_s`, and the
//! caption of each table says which source its rows came from.

mod benchy_md;

use crate::error::Error;
use crate::grid::{Align, Cell, Grid, Kind, Num};
use crate::laid_out::LaidOut;
use crate::report::Report;
use benchy_md::BenchyRun;
use tokenpipe_format::{vocab, Summary};

/// llama-benchy's tables of `report`, with a note for each run that had nothing to put in them;
/// no run with figures at all is bad input.
pub(crate) fn lay_out(report: &Report) -> Result<LaidOut, Error> {
    let tables = LlamaBenchTables::from_report(report)?;
    let runs: Vec<BenchyRun> = report.runs.iter().filter_map(BenchyRun::of).collect();
    let own = benchy_md::render(&runs).map(|text| Grid {
        preformatted: Some(text),
        ..Grid::default()
    });
    Ok(LaidOut {
        grids: own.into_iter().chain(tables.to_grids()).collect(),
        notes: tables.left_out,
        ..LaidOut::default()
    })
}

/// Where the decode figures of a run with llama-benchy's own figures come from.
pub const DECODE_SOURCE: &str = "llama_benchy.tg_tps";
/// Where the prefill figures come from.
pub const PREFILL_SOURCE: &str = "llama_benchy.pp_tps";
/// Where the decode figures of a group summary without llama-benchy's figures come from.
pub const GROUP_DECODE_SOURCE: &str = "across_runs.output_throughput_tokens_per_s";
/// The `across_runs` member a group summary's decode row reads.
const GROUP_DECODE_MEMBER: &str = "output_throughput_tokens_per_s";

/// One run's throughput as llama-benchy prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputRow {
    /// The run's label (its run id when unlabelled): the model, when runs of several are shown.
    pub model: String,
    /// Requests sent together; `None` when the run does not say.
    pub concurrency: Option<u64>,
    /// Mean tokens per second.
    pub mean: f64,
    /// Its standard deviation.
    pub std: f64,
    /// `100 · std / mean`; `None` when the mean is 0.
    pub cv_pct: Option<f64>,
    /// Which member the figures were read from.
    pub source: &'static str,
}

/// Both tables, before layout, and the runs that had nothing to put in them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LlamaBenchTables {
    /// Decode rows, sorted by model (order of first appearance), then concurrency.
    pub decode: Vec<ThroughputRow>,
    /// Prefill rows, sorted the same way.
    pub prefill: Vec<ThroughputRow>,
    /// Whether runs of more than one model (label) are shown, which adds a model column.
    pub several_models: bool,
    /// One note per run without any llama-benchy figures, for stderr.
    pub left_out: Vec<String>,
}

impl LlamaBenchTables {
    /// Collects the rows of every run of `report`. No run with figures at all is bad input.
    pub fn from_report(report: &Report) -> Result<Self, Error> {
        let mut tables = Self::default();
        let mut models: Vec<String> = Vec::new();
        // Runs pooled by a group summary that is shown are in its row, not left out.
        let pooled: Vec<&str> = report
            .runs
            .iter()
            .filter(|r| r.summary.across_runs.contains_key(GROUP_DECODE_MEMBER))
            .flat_map(|r| r.summary.runs.iter().map(String::as_str))
            .collect();
        for run in &report.runs {
            let s = &run.summary;
            let model = name_of(s);
            let batch_param = run
                .header
                .as_ref()
                .and_then(|h| {
                    h.param(vocab::BATCH.key)
                        .or_else(|| h.param(vocab::CONCURRENCY.key))
                })
                .and_then(serde_json::Value::as_u64);
            let (decode, prefill) = rows_of(s, &model, batch_param);
            if decode.is_none() && prefill.is_none() {
                if pooled.contains(&s.run_id.as_str()) {
                    continue;
                }
                tables.left_out.push(format!(
                    "table: run {model} ({}) has no llama-benchy figures (reduce writes them for \
                     batch runs, `arrivals --batch`, or with `reduce --llama-benchy`); left out",
                    s.run_id
                ));
                continue;
            }
            if !models.contains(&model) {
                models.push(model);
            }
            tables.decode.extend(decode);
            tables.prefill.extend(prefill);
        }
        if models.is_empty() {
            let mut message = String::from("--style llama-bench: no run has llama-benchy figures");
            for note in &tables.left_out {
                message.push('\n');
                message.push_str(note);
            }
            return Err(Error::NothingToShow(message));
        }
        let order = |r: &ThroughputRow| {
            let model = models.iter().position(|m| *m == r.model).unwrap_or(0);
            (model, r.concurrency.is_none(), r.concurrency)
        };
        tables.decode.sort_by_key(order);
        tables.prefill.sort_by_key(order);
        tables.several_models = models.len() > 1;
        Ok(tables)
    }

    /// Both tables, each under a caption naming its source; a table with no rows is left out.
    pub fn to_grids(&self) -> Vec<Grid> {
        let mut grids = Vec::new();
        if !self.decode.is_empty() {
            grids.push(self.section(
                "Decode throughput",
                &self.decode,
                &["t/s (total)", "+/- stddev", "CV%"],
            ));
        }
        if !self.prefill.is_empty() {
            grids.push(self.section(
                "Prefill throughput",
                &self.prefill,
                &["pp t/s (total)", "+/- stddev"],
            ));
        }
        grids
    }

    fn section(&self, title: &str, rows: &[ThroughputRow], figures: &[&str]) -> Grid {
        let mut sources: Vec<&str> = Vec::new();
        for r in rows {
            if !sources.contains(&r.source) {
                sources.push(r.source);
            }
        }
        let sources: Vec<String> = sources.into_iter().map(describe_source).collect();
        let mut headings = Vec::new();
        let mut align = Vec::new();
        if self.several_models {
            headings.push("Model".to_string());
            align.push(Align::Left);
        }
        headings.push("Concurrency".to_string());
        align.push(Align::Right);
        for f in figures {
            headings.push(f.to_string());
            align.push(Align::Right);
        }
        let num = |value: f64, kind: Kind| {
            Cell::Num(Num {
                value,
                kind,
                spread: None,
            })
        };
        let cells = rows.iter().map(|r| {
            let mut line = Vec::new();
            if self.several_models {
                line.push(Cell::text(&r.model));
            }
            line.push(
                r.concurrency
                    .map_or(Cell::Missing, |c| num(c as f64, Kind::Count)),
            );
            line.push(num(r.mean, Kind::Value));
            line.push(num(r.std, Kind::Value));
            if figures.len() > 2 {
                line.push(r.cv_pct.map_or(Cell::Missing, |cv| {
                    Cell::text(format!("{}%", tokenpipe_format::number::fixed(cv, 1)))
                }));
            }
            line
        });
        Grid {
            caption: Some(format!("{title}, from {}:", sources.join("; "))),
            headings,
            align,
            rows: cells.collect(),
            ..Grid::default()
        }
    }
}

/// A source as the caption names it.
fn describe_source(source: &str) -> String {
    if source == GROUP_DECODE_SOURCE {
        format!("{source} (mean and sample sd over repeated runs)")
    } else {
        source.to_string()
    }
}

/// The run's name in tables: its label, else its run id.
fn name_of(s: &Summary) -> String {
    if s.label.is_empty() {
        s.run_id.clone()
    } else {
        s.label.clone()
    }
}

/// A run's decode and prefill rows. `batch_param` is the schedule's batch size, the
/// concurrency of a group summary (which has no `llama_benchy.concurrency`).
fn rows_of(
    s: &Summary,
    model: &str,
    batch_param: Option<u64>,
) -> (Option<ThroughputRow>, Option<ThroughputRow>) {
    if let Some(b) = &s.llama_benchy {
        let concurrency = b.concurrency.or(batch_param);
        let row = |f: &tokenpipe_format::SpreadFigure, source| ThroughputRow {
            model: model.to_string(),
            concurrency,
            mean: f.mean,
            std: f.std,
            cv_pct: f.cv_pct,
            source,
        };
        return (
            b.tg_tps.as_ref().map(|f| row(f, DECODE_SOURCE)),
            b.pp_tps.as_ref().map(|f| row(f, PREFILL_SOURCE)),
        );
    }
    let decode = s
        .across_runs
        .get(GROUP_DECODE_MEMBER)
        .map(|a| ThroughputRow {
            model: model.to_string(),
            concurrency: batch_param,
            mean: a.mean,
            std: a.sd,
            cv_pct: a.cv_pct,
            source: GROUP_DECODE_SOURCE,
        });
    (decode, None)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_own;
