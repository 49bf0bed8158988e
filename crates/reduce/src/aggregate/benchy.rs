//! llama-benchy's figures (the summary's `llama_benchy` member), by its own formulas, so that a
//! batch run (`arrivals --batch N --runs R`) can be compared with a number from its table:
//! prefill and generation tokens per second per batch and per request, TTFR, the estimated
//! prompt processing time and the end-to-end TTFT. docs/metrics.md, "llama-benchy's figures",
//! gives every formula; the code follows them step for step, including llama-benchy's
//! thresholds, so that ties and edge cases land where its own do.

use super::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use crate::running::Running;
use std::collections::BTreeMap;
use tokenpipe_format::{vocab, Header, LlamaBenchy, MeanStd, Record, SpreadFigure, Summary};

const NS_PER_S: f64 = 1e9;
const NS_PER_MS: f64 = 1e6;

/// What reduce's flags ask of the llama-benchy figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LlamaBenchyOptions {
    /// Compute them for every run, not only for batch runs.
    pub always: bool,
    /// The network round trip llama-benchy subtracts from TTFR and TTFT (its `latency`).
    pub net_latency_ns: u64,
}

/// What the run's header says about its schedule, for llama-benchy's formulas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Plan {
    /// The prompt length asked for (arrivals' `input_tokens`): llama-benchy's expected length.
    expected_prompt_tokens: Option<u64>,
    /// The batch size asked for (`batch`, else `concurrency`).
    concurrency: Option<u64>,
    /// The schedule is in batch mode (its header has `batch`).
    batch_mode: bool,
}

impl Plan {
    fn of(header: &Header) -> Self {
        let number = |key: &str| header.param(key).and_then(serde_json::Value::as_u64);
        let batch = number(vocab::BATCH.key);
        Plan {
            expected_prompt_tokens: number(vocab::INPUT_TOKENS.key),
            concurrency: batch.or_else(|| number(vocab::CONCURRENCY.key)),
            batch_mode: batch.is_some(),
        }
    }
}

/// One batch's sums and extremes over its successful requests (llama-benchy's `valid_results`).
#[derive(Debug, Clone, Default)]
struct BatchSums {
    /// Every request of the batch, failed ones included: its size.
    members: u64,
    valid: u64,
    prompt_tokens: u64,
    /// A request's prompt length was unknown (no expected length and no usage): no pp figure.
    prompt_tokens_unknown: bool,
    gen_tokens: u64,
    min_start_ns: Option<u64>,
    max_end_ns: Option<u64>,
    min_first_token_ns: Option<u64>,
    max_first_token_ns: Option<u64>,
}

impl BatchSums {
    /// `Σ prompt_tokens / (max first_token − min start)`, in tokens per second.
    fn pp_tps(&self) -> Option<f64> {
        let span = self.max_first_token_ns?.checked_sub(self.min_start_ns?)?;
        (span > 0 && !self.prompt_tokens_unknown).then_some(())?;
        Some(self.prompt_tokens as f64 * NS_PER_S / span as f64)
    }

    /// `(Σ total_tokens − n_valid) / (max end − min first_token)`, when Σ > n_valid.
    fn tg_tps(&self) -> Option<f64> {
        let span = self.max_end_ns?.checked_sub(self.min_first_token_ns?)?;
        (span > 0 && self.gen_tokens > self.valid).then_some(())?;
        Some((self.gen_tokens - self.valid) as f64 * NS_PER_S / span as f64)
    }
}

fn keep_min(slot: &mut Option<u64>, x: u64) {
    *slot = Some(slot.map_or(x, |v| v.min(x)));
}

fn keep_max(slot: &mut Option<u64>, x: u64) {
    *slot = Some(slot.map_or(x, |v| v.max(x)));
}

/// llama-benchy's prompt length of one request: the server's count when it is positive and
/// within 20 % of the expected length (strictly), else the expected length. Without an
/// expected length the server's count is taken as it is, and none is known without either.
pub fn llama_benchy_prompt_tokens(expected: Option<u64>, usage: Option<u64>) -> Option<u64> {
    let usage = usage.filter(|&u| u > 0);
    match (expected, usage) {
        (Some(e), Some(u)) if (u.abs_diff(e) as f64) < e as f64 * 0.2 => Some(u),
        (Some(e), _) => Some(e),
        (None, u) => u,
    }
}

/// Folds a run's successful requests into llama-benchy's figures.
#[derive(Debug, Default)]
pub struct LlamaBenchyAggregator {
    opts: LlamaBenchyOptions,
    plan: Plan,
    batches: BTreeMap<u64, BatchSums>,
    ok_requests: u64,
    pp_request: Running,
    tg_request: Running,
    ttfr_ns: Running,
    est_ppt_ns: Running,
    e2e_ttft_ns: Running,
}

impl LlamaBenchyAggregator {
    /// The aggregator of the run that `header` starts.
    pub fn new(opts: LlamaBenchyOptions, header: &Header) -> Self {
        LlamaBenchyAggregator {
            opts,
            plan: Plan::of(header),
            ..Self::default()
        }
    }

    /// Adds one successful request to the per-request figures; returns its prompt length.
    fn add_request(&mut self, r: &RequestResult, start: u64) -> Option<u64> {
        let latency = self.opts.net_latency_ns;
        let prompt_tokens =
            llama_benchy_prompt_tokens(self.plan.expected_prompt_tokens, r.input_tokens);
        // TTFR falls back to the first token where the writer did not stamp the first event.
        let ttfr = r.ttfr_ns();
        if let Some(ttfr) = ttfr {
            self.ttfr_ns.push(ttfr as f64);
        }
        if let Some(first_token) = r.first_token_ns {
            let e2e_ttft = first_token.saturating_sub(start);
            let est_ppt = ttfr.unwrap_or(0).saturating_sub(latency);
            self.e2e_ttft_ns.push(e2e_ttft as f64);
            self.est_ppt_ns.push(est_ppt as f64);
            if let (true, Some(p)) = (est_ppt > 0, prompt_tokens) {
                self.pp_request.push(p as f64 * NS_PER_S / est_ppt as f64);
            }
            let decode_ns = r.done_ns.map_or(0, |end| end.saturating_sub(first_token));
            if r.output_tokens > 1 && decode_ns > 0 {
                let tps = (r.output_tokens - 1) as f64 * NS_PER_S / decode_ns as f64;
                self.tg_request.push(tps);
            }
        }
        prompt_tokens
    }

    /// The batch figures of every batch that has them, in batch order.
    fn batch_figures(&self) -> (Running, Running) {
        let (mut pp, mut tg) = (Running::default(), Running::default());
        for batch in self.batches.values() {
            if let Some(x) = batch.pp_tps() {
                pp.push(x);
            }
            if let Some(x) = batch.tg_tps() {
                tg.push(x);
            }
        }
        (pp, tg)
    }

    /// The figures, when the run is one to report and has a successful request.
    pub fn figures(&self) -> Option<LlamaBenchy> {
        let wanted = self.opts.always || self.plan.batch_mode || !self.batches.is_empty();
        (wanted && self.ok_requests > 0).then_some(())?;
        let largest = self.batches.values().map(|b| b.members).max();
        let concurrency = self.plan.concurrency.or(largest);
        let batches = self.batches.values().filter(|b| b.valid > 0).count() as u64;
        let (pp_batch, tg_batch) = self.batch_figures();
        let pp_tps_request = spread(&self.pp_request, "request");
        let tg_tps_request = spread(&self.tg_request, "request");
        let pp_tps_batch = spread(&pp_batch, "batch");
        let tg_tps_batch = spread(&tg_batch, "batch");
        // llama-benchy's table shows batch figures above concurrency 1, else request figures.
        let per_batch = batches > 0 && concurrency.is_some_and(|c| c > 1);
        let (pp_tps, tg_tps) = if per_batch {
            (pp_tps_batch.clone(), tg_tps_batch.clone())
        } else {
            (pp_tps_request.clone(), tg_tps_request.clone())
        };
        Some(LlamaBenchy {
            concurrency,
            batches,
            net_latency_ms: self.opts.net_latency_ns as f64 / NS_PER_MS,
            pp_tps,
            tg_tps,
            pp_tps_request,
            tg_tps_request,
            pp_tps_batch,
            tg_tps_batch,
            ttfr_ms: in_ms(&self.ttfr_ns),
            est_ppt_ms: in_ms(&self.est_ppt_ns),
            e2e_ttft_ms: in_ms(&self.e2e_ttft_ns),
        })
    }
}

/// Mean, population std and CV of a rate; `None` without values.
fn spread(values: &Running, per: &str) -> Option<SpreadFigure> {
    (values.count() > 0).then(|| {
        let (mean, std) = (values.mean(), values.std());
        SpreadFigure {
            mean,
            std,
            cv_pct: (mean != 0.0).then(|| 100.0 * std / mean),
            n: values.count(),
            per: per.to_string(),
        }
    })
}

/// Mean and population std of nanosecond samples, in milliseconds; `None` without samples.
fn in_ms(values: &Running) -> Option<MeanStd> {
    (values.count() > 0).then(|| MeanStd {
        mean: values.mean() / NS_PER_MS,
        std: values.std() / NS_PER_MS,
    })
}

impl Aggregator for LlamaBenchyAggregator {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if let Some(index) = r.grouping.batch {
            self.batches.entry(index).or_default().members += 1;
        }
        // llama-benchy keeps the requests without error that it started.
        let (true, Some(start)) = (r.ok, r.sent_ns) else {
            return Ok(());
        };
        self.ok_requests += 1;
        let prompt_tokens = self.add_request(r, start);
        let Some(sums) = r.grouping.batch.and_then(|i| self.batches.get_mut(&i)) else {
            return Ok(());
        };
        let overflow = |tokens| RequestError::BatchTotal {
            request: r.id,
            tokens,
        };
        sums.valid += 1;
        match prompt_tokens {
            Some(p) => {
                sums.prompt_tokens = sums
                    .prompt_tokens
                    .checked_add(p)
                    .ok_or_else(|| overflow("prompt"))?;
            }
            None => sums.prompt_tokens_unknown = true,
        }
        sums.gen_tokens = sums
            .gen_tokens
            .checked_add(r.output_tokens)
            .ok_or_else(|| overflow("output"))?;
        keep_min(&mut sums.min_start_ns, start);
        if let Some(end) = r.done_ns {
            keep_max(&mut sums.max_end_ns, end);
        }
        if let Some(first) = r.first_token_ns {
            keep_min(&mut sums.min_first_token_ns, first);
            keep_max(&mut sums.max_first_token_ns, first);
        }
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.llama_benchy = self.figures();
    }
}
