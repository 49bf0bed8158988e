//! The prefix cache's hits as the usage told them (docs/metrics.md, "Cache hits"): the prompt
//! tokens the server's cache served to the successful requests, and their share of those
//! requests' prompt tokens (inference-perf's cached prompt tokens). Written only when some
//! request's usage said (`done.cached_tokens`); the server's own counters are
//! `server_metrics`'.

use crate::aggregate::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use tokenpipe_format::{Record, Summary};

/// Cached and prompt tokens of the successful requests that reported a cached count.
#[derive(Debug, Default)]
pub struct CacheHits {
    reported: bool,
    cached: u64,
    prompt: u64,
}

impl Aggregator for CacheHits {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        let Some(cached) = r.cached_tokens.filter(|_| r.ok) else {
            return Ok(());
        };
        self.reported = true;
        self.cached = self.cached.saturating_add(cached);
        self.prompt = self.prompt.saturating_add(r.input_tokens.unwrap_or(0));
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        if !self.reported {
            return;
        }
        summary.cached_prompt_tokens = Some(self.cached);
        summary.cache_hit_ratio =
            (self.prompt > 0).then(|| self.cached as f64 / self.prompt as f64);
    }
}
