//! The `summary` of a run: counts, throughputs over the run's duration, and the statistics of
//! each latency metric. docs/metrics.md defines each field; this file is the code of those
//! definitions.

use super::timing::window::{WarmupBatches, Window, WindowChoice, WindowCounter};
use super::RunSpan;
use crate::error::RequestError;
use crate::request::RequestResult;
use crate::stat::{Moments, Stat};
use tokenpipe_format::vocab;
use tokenpipe_format::{Client, Stall, StatName, Summary, Token};

/// What a summary carries beyond the fixed fields.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryOptions {
    /// Percentiles of every latency metric, from 0 to 100.
    pub percentiles: Vec<f64>,
    /// Whether to carry each metric's histogram for exact merging later.
    pub histograms: bool,
    /// Which runs get llama-benchy's figures, and its network latency.
    pub llama_benchy: super::LlamaBenchyOptions,
    /// Per-request records, goodput and run metadata (`--per-request`, `--slo`, `--meta`).
    pub outcomes: super::outcomes::OutcomeOptions,
    /// `--vllm-compatible`: vLLM's figures too, with these settings.
    pub vllm: Option<super::vllm::VllmOptions>,
    /// Which part of each run is measured (docs/metrics.md, "Windows").
    pub window: WindowChoice,
    /// Write an `interval` record per this many ns of the run clock.
    pub every_ns: Option<u64>,
}

impl SummaryOptions {
    /// Whether the run that `header` starts keeps every event's time: vLLM's figures and
    /// llama-benchy's token stamps need them.
    pub fn keeps_events(&self, header: &tokenpipe_format::Header) -> bool {
        self.vllm.is_some() || self.llama_benchy.wants(header)
    }
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            percentiles: vec![50.0, 90.0, 99.0],
            histograms: true,
            llama_benchy: super::LlamaBenchyOptions::default(),
            outcomes: Default::default(),
            vllm: None,
            window: WindowChoice::Default,
            every_ns: None,
        }
    }
}

/// Folds a run's results into its summary. Latency samples and token counts come from
/// successful requests only; dispatch lag from every request that was sent.
#[derive(Debug, Default)]
pub struct SummaryAggregator {
    requests_ok: u64,
    requests_failed: u64,
    input_tokens: u64,
    output_tokens: u64,
    ttft: Stat,
    tpot: Stat,
    itl: Stat,
    e2el: Stat,
    dispatch_lag: Stat,
    stalls: u64,
    stall_ns: u64,
    client: Option<Client>,
    window: Option<WindowCounter>,
    warmup: Option<WarmupBatches>,
}

impl SummaryAggregator {
    /// Counts a token toward the window's throughput.
    pub fn token(&mut self, token: &Token) {
        if let Some(w) = &mut self.window {
            w.token(token);
        }
    }

    /// Notes that `fire`'s output was blocked for a while.
    pub fn stall(&mut self, stall: &Stall) {
        self.stalls += 1;
        self.stall_ns = self.stall_ns.saturating_add(stall.duration_ns);
    }

    /// Takes `fire`'s account of itself.
    pub fn client(&mut self, client: &Client) {
        self.client = Some(client.clone());
    }

    /// Whether `r` belongs to the measured window (always, without one); the requests left
    /// out are counted in `requests_outside_window`. Call once per request.
    pub fn admit(&mut self, r: &RequestResult) -> bool {
        if let Some(warmup) = &mut self.warmup {
            if warmup.leaves_out(r) {
                return false;
            }
        }
        self.window.as_mut().is_none_or(|w| w.admit(r))
    }

    /// Adds a request that [`SummaryAggregator::admit`] let in.
    pub fn add_admitted(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if let Some(lag) = r.dispatch_lag_ns() {
            self.dispatch_lag.push_ns(lag);
        }
        if !r.ok {
            self.requests_failed += 1;
            return Ok(());
        }
        let overflow = |tokens| RequestError::RunTotal {
            request: r.id,
            tokens,
        };
        self.output_tokens = self
            .output_tokens
            .checked_add(r.output_tokens)
            .ok_or_else(|| overflow("output"))?;
        self.input_tokens = self
            .input_tokens
            .checked_add(r.input_tokens.unwrap_or(0))
            .ok_or_else(|| overflow("input"))?;
        self.requests_ok += 1;
        if let Some(e2el) = r.e2el_ns() {
            self.e2el.push_ns(e2el);
        }
        if let Some(ttft) = r.ttft_ns() {
            self.ttft.push_ns(ttft);
        }
        if let Some(tpot) = r.tpot_ns() {
            self.tpot.push_ns_f64(tpot);
        }
        self.itl.add_sparse(&r.gaps);
        Ok(())
    }

    /// Counts only the requests sent in `window`, and divides throughputs by its span.
    pub fn set_window(&mut self, window: Option<Window>) {
        self.window = window.map(WindowCounter::new);
    }

    /// Leaves out the requests of the warm-up batches (`None`: none), on a clock whose run
    /// starts at `origin_ns` (docs/metrics.md, "Windows").
    pub fn set_warmup(&mut self, warmup: Option<WarmupBatches>) {
        self.warmup = warmup;
    }

    /// The summary record of the run that `span` bounds: throughputs over the measured
    /// requests' first send → last `done`, or over the window when there is one.
    pub fn finish(
        &self,
        span: &RunSpan,
        label: String,
        run_id: String,
        opts: &SummaryOptions,
    ) -> Summary {
        let duration_ns = span.measured.duration_ns();
        let duration_s = duration_ns as f64 / 1e9;
        let per_s = |x: f64| {
            if duration_ns == 0 {
                0.0
            } else {
                x / duration_s
            }
        };
        // Jitter needs p50 and p99 whatever percentiles were asked for.
        let itl_jitter = self.itl.moments(&[50.0, 99.0]).and_then(|m| {
            let (p50, p99) = (m.p(50.0)?, m.p(99.0)?);
            (p50 > 0.0).then(|| p99 / p50)
        });
        let mut summary = Summary {
            label,
            run_id,
            requests_ok: self.requests_ok,
            requests_failed: self.requests_failed,
            duration_s,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            request_throughput_per_s: per_s(self.requests_ok as f64),
            output_throughput_tokens_per_s: per_s(self.output_tokens as f64),
            total_throughput_tokens_per_s: per_s(
                self.input_tokens as f64 + self.output_tokens as f64,
            ),
            output_stalls: self.stalls,
            output_stall_ms: self.stall_ns as f64 / 1e6,
            client_kept_up: self.client.as_ref().map(|c| c.kept_up),
            client_warnings: self
                .client
                .as_ref()
                .map(|c| c.warnings.clone())
                .unwrap_or_default(),
            client_cpu_s: self
                .client
                .as_ref()
                .map(|c| c.cpu_user_ns.saturating_add(c.cpu_system_ns) as f64 / 1e9),
            client_not_judged: self.client.as_ref().and_then(|c| c.not_judged.clone()),
            itl_jitter,
            percentiles: opts.percentiles.clone(),
            ..Summary::default()
        };
        for (metric, stat) in self.metrics() {
            set_moments(&mut summary, metric, stat.moments(&opts.percentiles), opts);
            summary.samples.insert(metric.into(), stat.count());
            if opts.histograms && stat.count() > 0 {
                summary.histograms.insert(metric.into(), stat.to_state());
            }
        }
        if let Some(w) = &self.window {
            w.apply(span, &mut summary);
        }
        if let Some(warmup) = &self.warmup {
            warmup.apply(span, &mut summary);
        }
        summary
    }

    /// Every latency metric with its name in the summary.
    fn metrics(&self) -> [(&'static str, &Stat); 5] {
        [
            (vocab::TTFT.name, &self.ttft),
            (vocab::TPOT.name, &self.tpot),
            (vocab::ITL.name, &self.itl),
            (vocab::E2EL.name, &self.e2el),
            (vocab::DISPATCH_LAG.name, &self.dispatch_lag),
        ]
    }
}

/// Writes one metric's statistics (nulls when it had no samples).
fn set_moments(s: &mut Summary, metric: &str, m: Option<Moments>, opts: &SummaryOptions) {
    s.set_stat(metric, StatName::Mean, m.as_ref().map(|m| m.mean_ms));
    s.set_stat(metric, StatName::Std, m.as_ref().map(|m| m.std_ms));
    s.set_stat(
        metric,
        StatName::SampleStd,
        m.as_ref().and_then(|m| m.sstd_ms),
    );
    s.set_stat(metric, StatName::Min, m.as_ref().map(|m| m.min_ms));
    s.set_stat(metric, StatName::Max, m.as_ref().map(|m| m.max_ms));
    for &p in &opts.percentiles {
        let value = m.as_ref().and_then(|m| m.p(p));
        s.set_stat(metric, StatName::Percentile(p), value);
    }
}
