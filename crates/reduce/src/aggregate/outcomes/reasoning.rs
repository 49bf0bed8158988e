//! Reasoning and answer apart (docs/metrics.md, "Reasoning and answer"): time to first answer
//! token, reasoning duration, answer-only TPOT and ITL, and the reasoning and answer token
//! totals. Written only when some successful request had reasoning, so a run without any keeps
//! the summary it had; then every successful request counts (one without reasoning has its
//! TTFT as TTFA and all its gaps as the answer's).

use super::latency::{push, write_metric};
use crate::aggregate::{Aggregator, RunSpan, SummaryOptions};
use crate::error::RequestError;
use crate::request::RequestResult;
use crate::stat::Stat;
use tokenpipe_format::vocab::{self, Metric, Unit};
use tokenpipe_format::{Record, Summary};

/// The reasoning figures of one run, from its successful requests.
#[derive(Debug)]
pub struct ReasoningFigures {
    percentiles: Vec<f64>,
    histograms: bool,
    any: bool,
    ttfa: Stat,
    reasoning_duration: Stat,
    answer_tpot: Stat,
    answer_itl: Stat,
    reasoning_tokens: u64,
    answer_tokens: u64,
}

impl ReasoningFigures {
    /// Empty accumulators, written with the percentiles and histograms of `opts`.
    pub fn new(opts: &SummaryOptions) -> Self {
        Self {
            percentiles: opts.percentiles.clone(),
            histograms: opts.histograms,
            any: false,
            ttfa: Stat::new(),
            reasoning_duration: Stat::new(),
            answer_tpot: Stat::new(),
            answer_itl: Stat::new(),
            reasoning_tokens: 0,
            answer_tokens: 0,
        }
    }

    fn metrics(&self) -> [(Metric, &Stat); 4] {
        [
            (vocab::TTFA, &self.ttfa),
            (vocab::REASONING_DURATION, &self.reasoning_duration),
            (vocab::ANSWER_TPOT, &self.answer_tpot),
            (vocab::ANSWER_ITL, &self.answer_itl),
        ]
    }
}

impl Aggregator for ReasoningFigures {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if !r.ok {
            return Ok(());
        }
        self.any |= r.had_reasoning();
        let ms = |v: Option<u64>| v.map(|v| v as f64 / Unit::Ms.per_unit());
        push(&mut self.ttfa, ms(r.ttfa_ns()), Unit::Ms);
        push(
            &mut self.reasoning_duration,
            ms(r.reasoning_duration_ns()),
            Unit::Ms,
        );
        push(
            &mut self.answer_tpot,
            r.answer_tpot_ns().map(|ns| ns / Unit::Ms.per_unit()),
            Unit::Ms,
        );
        self.answer_itl.add_sparse(r.answer_gaps());
        let reasoning = r.reasoning_tokens.unwrap_or(0);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(reasoning);
        let answer = r
            .answer_tokens
            .unwrap_or_else(|| r.output_tokens.saturating_sub(reasoning));
        self.answer_tokens = self.answer_tokens.saturating_add(answer);
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        if !self.any {
            return;
        }
        for (metric, stat) in self.metrics() {
            write_metric(summary, metric, stat, &self.percentiles, self.histograms);
        }
        summary.reasoning_tokens = Some(self.reasoning_tokens);
        summary.answer_tokens = Some(self.answer_tokens);
    }
}
