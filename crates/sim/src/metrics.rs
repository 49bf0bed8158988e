//! `GET /metrics`: what the server did, in Prometheus text format 0.0.4, under the names vLLM
//! exposes, so that a scraper, a dashboard or `fire --server-metrics` can be tried against
//! simserve before a real server is free.
//!
//! Names, help texts, labels and bucket boundaries follow vLLM's `PrometheusStatLogger` in
//! `vllm/v1/metrics/loggers.py` (vllm-project/vllm): every series carries
//! `model_name` and `engine="0"`; `vllm:request_success_total` adds `finished_reason`
//! (`stop`, `length`, `abort`, `error`, `repetition`). Where vLLM renamed a metric, both names
//! are exposed with the same values, so that a scraper written for either release finds its
//! own: the inter-token histogram as `vllm:inter_token_latency_seconds` (0.11 on) and
//! `vllm:time_per_output_token_seconds` (before), the KV gauge as `vllm:kv_cache_usage_perc`
//! and `vllm:gpu_cache_usage_perc`. docs/simserve.md lists what differs from any one release.
//!
//! Where each value is measured: a request counts once it is admitted to the engine (a request
//! refused with 400 or a simulated HTTP error never is). Its clock readings are taken on the
//! server's clock at the instants its tokens are handed to hyper, the same instants `--stamps`
//! records: TTFT is from the end of the request body to the first token, each inter-token
//! latency is between two consecutive hand-offs (an answer sent whole hands all its tokens over
//! at once and adds none), E2E is from the end of the body to the last token. As in vLLM, the
//! token counters move while a request runs: its prompt tokens when its first token is handed
//! over (the prefill is done), each token as it is handed over; its TTFT is observed then too.
//! The rest is committed once, under one lock, when the request ends: at its last token
//! (`finished_reason="length"`, as the simulated model never stops early) or, if a fault or the
//! client cut it short, when its answer is dropped (`"abort"`, which adds its inter-token
//! latencies but no E2E or length observation). The per-token cost is one clock reading, one
//! atomic add and a bucket search in the request's own state; a lock twice per request (its
//! first token, its end).
//!
//! The gauges come from the [`Engine`](crate::engine::Engine) at scrape time; an engine that
//! keeps no queue reports the requests admitted and not yet ended as running.

use crate::engine::{EngineGauges, PrefixCacheCounts};
use crate::waiter::TokenTimer;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The context length reported for an engine with no limit of its own (the fixed timetable):
/// `max_model_len` in `/tokenize`, and the top of the token-count histograms' buckets, as vLLM
/// builds them from its `max_model_len`.
pub const DEFAULT_MAX_MODEL_LEN: u64 = 131_072;

/// Nanoseconds in a second: the histograms are in seconds, the clocks in nanoseconds.
const SECOND_NS: f64 = 1e9;

/// The `Content-Type` of the exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// vLLM's `vllm:time_to_first_token_seconds` boundaries.
const TTFT_BUCKETS: [f64; 22] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];

/// vLLM's `vllm:inter_token_latency_seconds` (and `time_per_output_token_seconds`) boundaries.
const ITL_BUCKETS: [f64; 19] = [
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
    40.0, 80.0,
];

/// vLLM's request latency boundaries (`vllm:e2e_request_latency_seconds`).
const E2E_BUCKETS: [f64; 21] = [
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
];

/// Why a request ended, vLLM's `finished_reason` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The model emitted a stop token (never, in the simulation; listed because vLLM lists it).
    Stop,
    /// The request generated all its `max_tokens`.
    Length,
    /// A fault or the client's departure ended it early.
    Abort,
    /// The engine failed the request (never, in the simulation; listed because vLLM lists it).
    Error,
    /// Repetition detection stopped it (never, in the simulation; listed as vLLM lists it).
    Repetition,
}

impl FinishReason {
    const ALL: [FinishReason; 5] = [
        FinishReason::Stop,
        FinishReason::Length,
        FinishReason::Abort,
        FinishReason::Error,
        FinishReason::Repetition,
    ];

    fn label(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::Abort => "abort",
            FinishReason::Error => "error",
            FinishReason::Repetition => "repetition",
        }
    }
}

/// A histogram with fixed boundaries: a count per bucket (not cumulative; the last is +Inf) and
/// the sum of the observations.
#[derive(Debug, Clone)]
struct Histogram {
    bounds: Vec<f64>,
    counts: Vec<u64>,
    sum: f64,
}

impl Histogram {
    fn new(bounds: Vec<f64>) -> Self {
        let counts = vec![0; bounds.len() + 1];
        Self {
            bounds,
            counts,
            sum: 0.0,
        }
    }

    fn observe(&mut self, value: f64) {
        self.counts[bucket(&self.bounds, value)] += 1;
        self.sum += value;
    }
}

/// The bucket of `value`: the first boundary it does not exceed (Prometheus' `le`), or the
/// overflow bucket past the last.
fn bucket(bounds: &[f64], value: f64) -> usize {
    bounds.partition_point(|&b| b < value)
}

/// vLLM's `build_1_2_5_buckets(max)`: 1, 2, 5, 10, 20, 50, … up to `max`.
fn one_two_five(max: u64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut scale = 1u64;
    loop {
        for m in [1, 2, 5] {
            let v = m * scale;
            if v > max {
                return out;
            }
            out.push(v as f64);
        }
        scale = scale.saturating_mul(10);
    }
}

/// The histograms and the finish counts, under one lock.
#[derive(Debug, Clone)]
struct Totals {
    success: [u64; FinishReason::ALL.len()],
    ttft: Histogram,
    itl: Histogram,
    e2e: Histogram,
    prompt: Histogram,
    generation: Histogram,
}

/// The server's counters and histograms, shared by every connection.
#[derive(Debug)]
pub struct Metrics {
    /// `model_name="…",engine="0"`, escaped once.
    labels: String,
    /// Requests admitted and not yet ended.
    in_flight: AtomicU64,
    /// Prompt tokens of the requests that got their first token (their prefill was done), as
    /// vLLM counts them in the step that finishes the prefill.
    prompt_tokens: AtomicU64,
    /// Tokens handed over, counted at each hand-off as vLLM counts them at each step.
    generation_tokens: AtomicU64,
    totals: Mutex<Totals>,
    /// Requests in flight over time, for the modelled GPUs of `--gpus` ([`crate::dcgm`]).
    pub(crate) occupancy: crate::dcgm::Occupancy,
}

impl Metrics {
    /// Empty totals for a server of `model` whose context is `max_model_len` tokens.
    pub fn new(model: &str, max_model_len: u64) -> Self {
        Self {
            labels: format!("model_name=\"{}\",engine=\"0\"", escape_label(model)),
            in_flight: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            generation_tokens: AtomicU64::new(0),
            totals: Mutex::new(Totals {
                success: [0; FinishReason::ALL.len()],
                ttft: Histogram::new(TTFT_BUCKETS.to_vec()),
                itl: Histogram::new(ITL_BUCKETS.to_vec()),
                e2e: Histogram::new(E2E_BUCKETS.to_vec()),
                prompt: Histogram::new(one_two_five(max_model_len)),
                generation: Histogram::new(one_two_five(max_model_len)),
            }),
            occupancy: crate::dcgm::Occupancy::default(),
        }
    }

    /// `model_name="…",engine="0"`: the labels every series of the server carries.
    pub fn labels(&self) -> &str {
        &self.labels
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Totals> {
        // Totals are plain numbers, consistent after any panic: keep counting.
        self.totals.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The exposition text, with the engine's `gauges` read at scrape time.
    pub fn render(&self, gauges: EngineGauges) -> String {
        let totals = self.lock().clone();
        let running = gauges
            .running
            .unwrap_or_else(|| self.in_flight.load(Ordering::Relaxed));
        let l = &self.labels;
        let mut out = String::with_capacity(16 * 1024);
        let gauge = |out: &mut String, name: &str, help: &str, value: f64| {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{{{l}}} {value:?}\n"
            );
        };
        gauge(
            &mut out,
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            running as f64,
        );
        gauge(
            &mut out,
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            gauges.waiting as f64,
        );
        gauge(
            &mut out,
            "vllm:gpu_cache_usage_perc",
            "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
            gauges.kv_cache_usage,
        );
        gauge(
            &mut out,
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            gauges.kv_cache_usage,
        );
        counter(
            &mut out,
            l,
            "vllm:prompt_tokens",
            "Number of prefill tokens processed.",
            self.prompt_tokens.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            l,
            "vllm:generation_tokens",
            "Number of generation tokens processed.",
            self.generation_tokens.load(Ordering::Relaxed),
        );
        let name = "vllm:request_success";
        let _ = write!(
            out,
            "# HELP {name}_total Count of successfully processed requests.\n\
             # TYPE {name}_total counter\n"
        );
        for (reason, n) in FinishReason::ALL.iter().zip(totals.success) {
            let reason = reason.label();
            let _ = writeln!(
                out,
                "{name}_total{{{l},finished_reason=\"{reason}\"}} {:?}",
                n as f64
            );
        }
        let histograms = [
            (
                "vllm:request_prompt_tokens",
                "Number of prefill tokens processed.",
                &totals.prompt,
            ),
            (
                "vllm:request_generation_tokens",
                "Number of generation tokens processed.",
                &totals.generation,
            ),
            (
                "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.",
                &totals.ttft,
            ),
            (
                "vllm:time_per_output_token_seconds",
                "Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
                &totals.itl,
            ),
            (
                "vllm:inter_token_latency_seconds",
                "Histogram of inter-token latency in seconds.",
                &totals.itl,
            ),
            (
                "vllm:e2e_request_latency_seconds",
                "Histogram of e2e request latency in seconds.",
                &totals.e2e,
            ),
        ];
        for (name, help, h) in histograms {
            histogram(&mut out, l, name, help, h);
        }
        prefix_cache_counters(&mut out, l, gauges.prefix_cache);
        out
    }

    /// A request's first token is being handed over `ttft_ns` after it arrived: its prompt
    /// was prefilled.
    fn first_token(&self, prompt_tokens: u64, ttft_ns: u64) {
        self.prompt_tokens
            .fetch_add(prompt_tokens, Ordering::Relaxed);
        self.lock().ttft.observe(ttft_ns as f64 / SECOND_NS);
    }

    /// A request ended: its finish reason, and its inter-token latencies. The per-request
    /// histograms (E2E, prompt and generation lengths) take the requests that finished, not
    /// the aborted ones, whose lengths and latencies say how far they got rather than what
    /// they cost (and vLLM V1 records aborted requests in none of them).
    fn commit(&self, meter: &Meter, reason: FinishReason) {
        let mut t = self.lock();
        t.success[reason as usize] += 1;
        if reason != FinishReason::Abort {
            t.prompt.observe(meter.prompt_tokens as f64);
            t.generation.observe(meter.tokens as f64);
            let end = match meter.first_ns {
                Some(_) => meter.last_ns,
                None => meter.clock.now_ns(),
            };
            t.e2e
                .observe(end.saturating_sub(meter.arrival_ns) as f64 / SECOND_NS);
        }
        for (total, own) in t.itl.counts.iter_mut().zip(&meter.itl_counts) {
            *total += u64::from(*own);
        }
        t.itl.sum += meter.itl_sum_ns as f64 / SECOND_NS;
    }
}

/// One counter, vLLM-style: the family named `NAME_total`.
fn counter(out: &mut String, labels: &str, name: &str, help: &str, value: u64) {
    let _ = write!(
        out,
        "# HELP {name}_total {help}\n# TYPE {name}_total counter\n{name}_total{{{labels}}} {:?}\n",
        value as f64
    );
}

/// The prefix cache's lookups and hits in prompt tokens, when the engine has one: vLLM V1's
/// `vllm:prefix_cache_queries_total` and `vllm:prefix_cache_hits_total`, and V0's
/// `vllm:gpu_prefix_cache_*` names with the same values, so a scraper of either finds its own.
fn prefix_cache_counters(out: &mut String, labels: &str, counts: Option<PrefixCacheCounts>) {
    let Some(c) = counts else {
        return;
    };
    for (name, help, value) in [
        (
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            c.queries,
        ),
        (
            "vllm:prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            c.hits,
        ),
        (
            "vllm:gpu_prefix_cache_queries",
            "GPU prefix cache queries, in terms of number of queried tokens.DEPRECATED: Use vllm:prefix_cache_queries instead.",
            c.queries,
        ),
        (
            "vllm:gpu_prefix_cache_hits",
            "GPU prefix cache hits, in terms of number of cached tokens.DEPRECATED: Use vllm:prefix_cache_hits instead.",
            c.hits,
        ),
    ] {
        counter(out, labels, name, help, value);
    }
}

/// One histogram family: cumulative `_bucket` lines ending at `+Inf`, then `_count` and `_sum`.
fn histogram(out: &mut String, labels: &str, name: &str, help: &str, h: &Histogram) {
    let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} histogram\n");
    let mut cumulative = 0u64;
    for (i, n) in h.counts.iter().enumerate() {
        cumulative += n;
        let le = match h.bounds.get(i) {
            Some(b) => format!("{b:?}"),
            None => "+Inf".to_string(),
        };
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels},le=\"{le}\"}} {:?}",
            cumulative as f64
        );
    }
    let _ = write!(
        out,
        "{name}_count{{{labels}}} {:?}\n{name}_sum{{{labels}}} {:?}\n",
        cumulative as f64, h.sum
    );
}

/// A label value escaped as the text format requires: `\`, `"` and newline.
pub(crate) fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One admitted request's measurements, kept in its own state while it is answered and
/// committed to the shared [`Metrics`] once, when it ends (or on drop, as aborted).
pub struct Meter {
    metrics: Arc<Metrics>,
    clock: TokenTimer,
    arrival_ns: u64,
    prompt_tokens: u64,
    tokens: u64,
    first_ns: Option<u64>,
    last_ns: u64,
    itl_counts: [u32; ITL_BUCKETS.len() + 1],
    itl_sum_ns: u64,
    ended: bool,
}

impl Meter {
    /// Starts measuring a request of `prompt_tokens` whose body was read at `arrival_ns` on
    /// `clock`; it counts as running from now until it ends.
    pub fn start(
        metrics: Arc<Metrics>,
        clock: TokenTimer,
        arrival_ns: u64,
        prompt_tokens: u64,
    ) -> Self {
        metrics.in_flight.fetch_add(1, Ordering::Relaxed);
        metrics.occupancy.start(arrival_ns);
        Self {
            metrics,
            clock,
            arrival_ns,
            prompt_tokens,
            tokens: 0,
            first_ns: None,
            last_ns: arrival_ns,
            itl_counts: [0; ITL_BUCKETS.len() + 1],
            itl_sum_ns: 0,
            ended: false,
        }
    }

    /// Notes that `n` tokens are being handed to hyper now: the first hand-off is the request's
    /// first token, each later one an inter-token latency.
    pub fn sent(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        let now = self.clock.now_ns();
        self.metrics
            .generation_tokens
            .fetch_add(n, Ordering::Relaxed);
        if self.first_ns.is_none() {
            self.first_ns = Some(now);
            let ttft_ns = now.saturating_sub(self.arrival_ns);
            self.metrics.first_token(self.prompt_tokens, ttft_ns);
        } else {
            let gap = now.saturating_sub(self.last_ns);
            let slot = &mut self.itl_counts[bucket(&ITL_BUCKETS, gap as f64 / 1e9)];
            *slot = slot.saturating_add(1);
            self.itl_sum_ns = self.itl_sum_ns.saturating_add(gap);
        }
        self.last_ns = now;
        self.tokens += n;
    }

    /// The request ended for `reason`; later calls, and the drop, change nothing.
    pub fn end(&mut self, reason: FinishReason) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.metrics.commit(self, reason);
        self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        let now = self.clock.now_ns();
        self.metrics.occupancy.end(self.arrival_ns, now);
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.end(FinishReason::Abort);
    }
}

#[cfg(test)]
mod tests;
