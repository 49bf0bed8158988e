//! llama-benchy's figures (the summary's `llama_benchy` member), by its own formulas, so that a
//! batch run (`arrivals --batch N --runs R`) can be compared with a number from its table:
//! prefill and generation tokens per second per batch and per request, TTFR, the estimated
//! prompt processing time and the end-to-end TTFT. docs/metrics.md, "llama-benchy's figures",
//! gives every formula; the code follows them step for step, including llama-benchy's
//! thresholds, so that ties and edge cases land where its own do.

mod batch;
pub mod stamps;

use super::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use crate::running::Running;
use batch::{BatchSums, RequestOfBatch};
use stamps::{peak_tps, Counting, Stamps};
use std::collections::BTreeMap;
use tokenpipe_format::{vocab, Header, LlamaBenchy, MeanStd, Record, SpreadFigure, Summary};

const NS_PER_S: f64 = 1e9;
const NS_PER_MS: f64 = 1e6;

/// fire's header parameter saying how much usage the stream carried (`on`, `continuous`,
/// `off`): whether each token event's count is exact.
const STREAM_USAGE: &str = "stream_usage";

/// What reduce's flags ask of the llama-benchy figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LlamaBenchyOptions {
    /// Compute them for every run, not only for batch runs.
    pub always: bool,
    /// The network round trip llama-benchy subtracts from TTFR (its `latency`), given by
    /// `--net-latency`; `None` takes the one fire measured (its header's `net_latency_ms`),
    /// else 0.
    pub net_latency_ns: Option<u64>,
}

impl LlamaBenchyOptions {
    /// Whether the run that `header` starts gets llama-benchy's figures whatever its requests
    /// carry, so that its requests' events are worth keeping (the token stamps need them).
    pub fn wants(&self, header: &Header) -> bool {
        self.always || header.param(vocab::BATCH.key).is_some()
    }
}

/// What the run's headers say, for llama-benchy's formulas.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Plan {
    /// llama-benchy's expected prompt length: arrivals' `input_tokens` + `depth`, less what
    /// fire's adapt step took off (`adapt_tokens`).
    expected_prompt_tokens: Option<u64>,
    /// The batch size asked for (`batch`, else `concurrency`).
    concurrency: Option<u64>,
    /// The schedule is in batch mode (its header has `batch`).
    batch_mode: bool,
    /// The network latency fire measured (`net_latency_ms`), in ns.
    measured_latency_ns: Option<u64>,
    /// Which of llama-benchy's branches the token events stand for.
    counting: Counting,
}

impl Plan {
    fn of(header: &Header) -> Self {
        let number = |key: &str| header.param(key).and_then(serde_json::Value::as_u64);
        let batch = number(vocab::BATCH.key);
        let expected = number(vocab::INPUT_TOKENS.key).map(|input| {
            let depth = number(vocab::DEPTH.key).unwrap_or(0);
            let adapt = number(vocab::ADAPT_TOKENS).unwrap_or(0);
            input.saturating_add(depth).saturating_sub(adapt)
        });
        let measured_latency_ns = header
            .param(vocab::NET_LATENCY_MS)
            .and_then(serde_json::Value::as_f64)
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| (ms * NS_PER_MS).round() as u64);
        let stream_usage = header.param(STREAM_USAGE).and_then(|v| v.as_str());
        Plan {
            expected_prompt_tokens: expected,
            concurrency: batch.or_else(|| number(vocab::CONCURRENCY.key)),
            batch_mode: batch.is_some(),
            measured_latency_ns,
            counting: Counting::of_stream_usage(stream_usage),
        }
    }
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
    peak_request: Running,
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

    /// The latency subtracted: `--net-latency`, else fire's measured one, else 0.
    fn net_latency_ns(&self) -> u64 {
        self.opts
            .net_latency_ns
            .or(self.plan.measured_latency_ns)
            .unwrap_or(0)
    }

    /// Adds one successful request to the per-request figures.
    fn add_request(&mut self, r: &RequestResult, start: u64, prompt: Option<u64>, s: &Stamps) {
        let latency = self.net_latency_ns();
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
            if let (true, Some(p)) = (est_ppt > 0, prompt) {
                self.pp_request.push(p as f64 * NS_PER_S / est_ppt as f64);
            }
        }
        // tg to the last token's stamp: decode tokens over last − first stamp.
        if let (true, Some((first, last))) = (s.total > 1 && s.at_ns.len() > 1, s.ends()) {
            let (span, decode) = (last - first, s.decode_tokens());
            if span > 0.0 && decode > 0 {
                self.tg_request.push(decode as f64 * NS_PER_S / span);
            }
        }
        if let Some(peak) = peak_tps(&mut s.at_ns.clone()) {
            self.peak_request.push(peak);
        }
    }

    /// The batch figures of every batch that has them, in batch order: pp, tg and peak.
    fn batch_figures(&mut self) -> [Running; 3] {
        let mut figures: [Running; 3] = Default::default();
        for batch in self.batches.values_mut() {
            batch.close();
            let values = [batch.pp_tps(), batch.tg_tps(), batch.peak_tps()];
            for (figure, value) in figures.iter_mut().zip(values) {
                if let Some(x) = value {
                    figure.push(x);
                }
            }
        }
        figures
    }

    /// The figures, when the run is one to report and has a successful request. Closes every
    /// batch still open.
    pub fn figures(&mut self) -> Option<LlamaBenchy> {
        let wanted = self.opts.always || self.plan.batch_mode || !self.batches.is_empty();
        (wanted && self.ok_requests > 0).then_some(())?;
        let largest = self.batches.values().map(|b| b.members).max();
        let concurrency = self.plan.concurrency.or(largest);
        let batches = self.batches.values().filter(|b| b.valid > 0).count() as u64;
        let [pp_batch, tg_batch, peak_batch] = self.batch_figures();
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
            net_latency_ms: self.net_latency_ns() as f64 / NS_PER_MS,
            pp_tps,
            tg_tps,
            pp_tps_request,
            tg_tps_request,
            pp_tps_batch,
            tg_tps_batch,
            peak_tps: spread(&peak_batch, "batch"),
            peak_tps_request: spread(&self.peak_request, "request"),
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
        if let (true, Some(start)) = (r.ok, r.sent_ns) {
            self.ok_requests += 1;
            let prompt_tokens =
                llama_benchy_prompt_tokens(self.plan.expected_prompt_tokens, r.input_tokens);
            let stamps = Stamps::of(r, self.plan.counting);
            self.add_request(r, start, prompt_tokens, &stamps);
            if let Some(sums) = r.grouping.batch.and_then(|i| self.batches.get_mut(&i)) {
                let of_batch = RequestOfBatch {
                    prompt_tokens,
                    first_token_ns: r.first_token_ns,
                    done_ns: r.done_ns,
                };
                sums.add(start, &of_batch, &stamps)
                    .ok_or(RequestError::BatchTotal {
                        request: r.id,
                        tokens: "prompt",
                    })?;
            }
        }
        // A batch whose every request has ended gives its peak now and lets its stamps go.
        let size = self.plan.concurrency.filter(|_| self.plan.batch_mode);
        if let Some(sums) = r.grouping.batch.and_then(|i| self.batches.get_mut(&i)) {
            if size.is_some_and(|n| sums.members >= n) {
                sums.close();
            }
        }
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.llama_benchy = self.figures();
    }
}
