//! The server seen while the run went on: its gauges over the measured window (mean and
//! largest, from `fire --server-metrics-every`'s scrapes during the run), the GPUs' power and
//! energy per output token ([`energy`], from a DCGM exporter scraped with `fire --scrape`), and
//! the tokens each streamed event carried (from fire's own events).
//!
//! Memory: per scrape, its few gauges and GPU readings; no sample of the pages is kept.

mod energy;
pub(crate) mod gauges;

use super::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use energy::GpuReadings;
use std::collections::BTreeMap;
use tokenpipe_format::{GaugeSummary, Record, ServerMetrics, Summary};

/// What one scrape keeps.
#[derive(Debug, Clone)]
struct Kept {
    at_ns: u64,
    url: String,
    gauges: Vec<(&'static str, f64)>,
    gpus: GpuReadings,
}

/// Folds the scrapes and the successful requests' token counts.
#[derive(Debug, Default)]
pub struct TelemetryAggregator {
    scrapes: Vec<Kept>,
    /// Output tokens and token-carrying events of the successful requests.
    output_tokens: u64,
    events: u64,
}

impl Aggregator for TelemetryAggregator {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if r.ok {
            self.output_tokens = self.output_tokens.saturating_add(r.output_tokens);
            self.events = self
                .events
                .saturating_add(r.content_events + r.empty_events);
        }
        Ok(())
    }

    fn server_metrics(&mut self, scrape: &ServerMetrics) {
        let kept = Kept {
            at_ns: scrape.at_ns,
            url: scrape.url.clone(),
            gauges: gauges::values(&scrape.samples),
            gpus: GpuReadings::of(&scrape.samples),
        };
        if !kept.gauges.is_empty() || !kept.gpus.is_empty() {
            self.scrapes.push(kept);
        }
    }

    fn finish(&mut self, span: &RunSpan, s: &mut Summary, _out: &mut Vec<Record>) {
        if self.events > 0 && self.output_tokens != self.events {
            s.tokens_per_event = Some(self.output_tokens as f64 / self.events as f64);
        }
        let (Some(start), Some(end)) = (span.measured.first_sent_ns, span.measured.last_done_ns)
        else {
            return;
        };
        let mut folded: BTreeMap<&str, (f64, f64, u32)> = BTreeMap::new();
        for kept in self
            .scrapes
            .iter()
            .filter(|k| (start..=end).contains(&k.at_ns))
        {
            for &(name, value) in &kept.gauges {
                let (sum, max, n) = folded.entry(name).or_insert((0.0, f64::MIN, 0));
                *sum += value;
                *max = max.max(value);
                *n += 1;
            }
        }
        s.gauges = folded
            .into_iter()
            .map(|(name, (sum, max, n))| {
                let mean = sum / f64::from(n);
                (name.to_string(), GaugeSummary { mean, max })
            })
            .collect();
        energy::fill(&self.scrapes, start, end, s);
    }
}
