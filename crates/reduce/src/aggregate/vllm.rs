//! `reduce --vllm-compatible`: every figure of a `vllm bench serve` result, computed from our
//! events with vLLM's own definitions (its `calculate_metrics` and its streaming client), and
//! written to the summary's `vllm` member under vLLM's key names and units. The summary's other
//! fields keep our definitions; docs/metrics.md lists each difference.
//!
//! vLLM's client sees "chunks": every SSE event whose `choices` is not empty. Our events map
//! onto them as the first event of the response (`done.first_event_ns`, the role-only chunk of
//! a chat answer) when it came before the first `token` event, then every `token` event, empty
//! ones included.

mod peak;

use super::{Aggregator, RunSpan};
use crate::aggregate::outcomes::slo::{SloBound, SloMetric};
use crate::error::RequestError;
use crate::exact::Samples;
use crate::request::RequestResult;
use crate::vllm_import;
use peak::PeakCounter;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use tokenpipe_format::vllm::{self, key, latency_key, Stat};
use tokenpipe_format::{Header, Record, Summary};

/// What `--vllm-compatible` computes beyond vLLM's fixed figures.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VllmOptions {
    /// Percentiles of every metric (vLLM's `--metric-percentiles`; its default is 99).
    pub percentiles: Vec<f64>,
    /// The objectives of `request_goodput` (vLLM's `--goodput`); none leaves it null.
    pub slos: Vec<SloBound>,
}

/// The figures of an imported vLLM run that its events cannot give back.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct FromFile {
    /// vLLM's `duration`, which starts before the first send.
    duration_s: Option<f64>,
    /// vLLM's own peaks, used when the file had no `start_times` (every send is then at 0).
    peaks: Option<(f64, u64)>,
}

impl FromFile {
    fn of(header: &Header) -> Self {
        let Some(h) = header.find(vllm::TOOL) else {
            return FromFile::default();
        };
        let num = |key: &str| h.params.get(key).and_then(Value::as_f64);
        let had_start_times = h.params.get(vllm_import::PARAM_START_TIMES) == Some(&json!(true));
        let peaks = match (
            had_start_times,
            num(key::MAX_OUTPUT_TOKENS_PER_S),
            num(key::MAX_CONCURRENT_REQUESTS),
        ) {
            (false, Some(tokens), Some(concurrent)) => Some((tokens, concurrent as u64)),
            _ => None,
        };
        FromFile {
            duration_s: num(vllm_import::PARAM_DURATION),
            peaks,
        }
    }
}

/// Folds a run into vLLM's result figures.
#[derive(Debug, Default)]
pub struct VllmAggregator {
    opts: VllmOptions,
    from_file: FromFile,
    completed: u64,
    failed: u64,
    good: u64,
    total_input: u64,
    total_output: u64,
    /// Where vLLM's benchmark clock would have started: the run's t = 0, or the start of the
    /// measured window.
    origin_ns: u64,
    ttft_ms: Samples,
    tpot_ms: Samples,
    itl_ms: Samples,
    e2el_ms: Samples,
    peaks: PeakCounter,
}

const NS_PER_MS: f64 = 1e6;

impl VllmAggregator {
    /// An aggregator for the run `header` starts, whose duration counts from `origin_ns` (the
    /// run's t = 0, or the start of its measured window); an imported vLLM run brings the
    /// figures its events cannot give back (see docs/metrics.md).
    pub fn new(opts: VllmOptions, header: &Header, origin_ns: u64) -> Self {
        VllmAggregator {
            opts,
            from_file: FromFile::of(header),
            origin_ns,
            ..Self::default()
        }
    }

    fn is_good(&self, ttft_ns: f64, tpot_ns: f64, e2el_ns: f64) -> bool {
        // The bound itself is met, as in vLLM.
        self.opts.slos.iter().all(|slo| {
            let value = match slo.metric {
                SloMetric::Ttft => ttft_ns,
                SloMetric::Tpot => tpot_ns,
                _ => e2el_ns,
            };
            value <= slo.bound_ns
        })
    }
}

/// The times of the chunks vLLM's client would have seen: the first event when it came before
/// the first token event, then every token event, empty ones included.
pub fn vllm_chunks(r: &RequestResult) -> Result<Vec<u64>, RequestError> {
    let events = r
        .events
        .as_deref()
        .ok_or(RequestError::EventsNotKept { request: r.id })?;
    let mut chunks = Vec::with_capacity(events.len() + 1);
    match (r.first_event_ns, events.first()) {
        (Some(first), Some(e)) if first < e.at_ns => chunks.push(first),
        (Some(first), None) => chunks.push(first),
        _ => {}
    }
    chunks.extend(events.iter().map(|e| e.at_ns));
    Ok(chunks)
}

impl Aggregator for VllmAggregator {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        // A failed request, or one never sent (a stopped run's rest), is one of vLLM's failures
        // whatever it streamed.
        if !r.ok || r.sent_ns.is_none() {
            self.failed += 1;
            return Ok(());
        }
        let chunks = vllm_chunks(r)?;
        // vLLM fails a response without a single chunk ("Never received a valid chunk").
        let (Some(sent), Some(&first), Some(&last), true) =
            (r.sent_ns, chunks.first(), chunks.last(), r.ok)
        else {
            self.failed += 1;
            return Ok(());
        };
        let ttft = first.saturating_sub(sent) as f64;
        let e2el = last.saturating_sub(sent) as f64;
        let n = r.output_tokens;
        let tpot = if n > 1 {
            let t = (e2el - ttft) / (n - 1) as f64;
            self.tpot_ms.push(t / NS_PER_MS);
            t
        } else {
            0.0
        };
        self.ttft_ms.push(ttft / NS_PER_MS);
        self.e2el_ms.push(e2el / NS_PER_MS);
        self.itl_ms.extend(
            chunks
                .windows(2)
                .map(|w| w[1].saturating_sub(w[0]) as f64 / NS_PER_MS),
        );
        if self.is_good(ttft, tpot, e2el) {
            self.good += 1;
        }
        self.peaks.add(sent, &chunks);
        self.total_input = self.total_input.saturating_add(r.input_tokens.unwrap_or(0));
        self.total_output = self.total_output.saturating_add(n);
        self.completed += 1;
        Ok(())
    }

    fn finish(&mut self, span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.definitions = Some("vllm".into());
        summary.vllm = Some(self.result(span.measured.last_done_ns));
    }
}

impl VllmAggregator {
    /// vLLM's result object: its keys, its units (seconds for the duration, milliseconds for
    /// latencies), and 0 for the statistics of a metric without values (`np.mean(x or 0)`).
    /// vLLM's clock stops at the last `done` of the measured requests.
    fn result(&mut self, last_done_ns: Option<u64>) -> BTreeMap<String, Value> {
        let duration = self.from_file.duration_s.unwrap_or_else(|| {
            last_done_ns.map_or(0, |d| d.saturating_sub(self.origin_ns)) as f64 / 1e9
        });
        let per_s = |x: f64| if duration > 0.0 { x / duration } else { 0.0 };
        let (peak_tokens, peak_requests) = match self.from_file.peaks {
            Some(p) => p,
            None => {
                let p = self.peaks.peaks();
                (p.max_output_tokens_per_s, p.max_concurrent_requests)
            }
        };
        let mut m = Map::new();
        m.insert(key::DURATION.into(), json!(duration));
        m.insert(key::COMPLETED.into(), json!(self.completed));
        m.insert(key::FAILED.into(), json!(self.failed));
        m.insert(key::TOTAL_INPUT_TOKENS.into(), json!(self.total_input));
        m.insert(key::TOTAL_OUTPUT_TOKENS.into(), json!(self.total_output));
        m.insert(
            key::REQUEST_THROUGHPUT.into(),
            json!(per_s(self.completed as f64)),
        );
        let goodput = (!self.opts.slos.is_empty()).then(|| per_s(self.good as f64));
        m.insert(key::REQUEST_GOODPUT.into(), json!(goodput));
        m.insert(
            key::OUTPUT_THROUGHPUT.into(),
            json!(per_s(self.total_output as f64)),
        );
        m.insert(
            key::TOTAL_TOKEN_THROUGHPUT.into(),
            json!(per_s((self.total_input + self.total_output) as f64)),
        );
        m.insert(key::MAX_OUTPUT_TOKENS_PER_S.into(), json!(peak_tokens));
        m.insert(key::MAX_CONCURRENT_REQUESTS.into(), json!(peak_requests));
        let percentiles = self.opts.percentiles.clone();
        // vLLM's metrics in its order: ttft, tpot, itl, e2el.
        let samples_of = [
            &mut self.ttft_ms,
            &mut self.tpot_ms,
            &mut self.itl_ms,
            &mut self.e2el_ms,
        ];
        for (metric, samples) in vllm::METRICS.iter().zip(samples_of) {
            let name = metric.name;
            m.insert(
                latency_key(name, Stat::Mean),
                json!(samples.mean().unwrap_or(0.0)),
            );
            m.insert(
                latency_key(name, Stat::Median),
                json!(samples.percentile(50.0).unwrap_or(0.0)),
            );
            m.insert(
                latency_key(name, Stat::Std),
                json!(samples.std().unwrap_or(0.0)),
            );
            for &p in &percentiles {
                m.insert(
                    latency_key(name, Stat::Percentile(p)),
                    json!(samples.percentile(p).unwrap_or(0.0)),
                );
            }
        }
        m.into_iter().collect()
    }
}
