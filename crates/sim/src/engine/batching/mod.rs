//! The continuous-batching engine: requests share one simulated accelerator, so each one's
//! tokens depend on what else is running. The scheduling and its arithmetic are in [`model`],
//! on virtual time; this file puts the model behind the [`Engine`] seam, one lock around it.

pub mod curve;
pub mod model;
pub mod prefix;

#[cfg(test)]
mod tests;

use super::profile::BatchingSettings;
use super::{Admission, Departure, Due, Engine, EngineGauges, PrefixCacheCounts, Ticket};
use model::{Gauges, Model};
use std::sync::Mutex;

/// A [`Model`] shared by every connection.
#[derive(Debug)]
pub struct Batching {
    model: Mutex<Model>,
    /// The longest prompt + completion served: the profile's context length, or the KV
    /// capacity if smaller (a longer request could never be scheduled).
    max_model_len: u64,
    prefix_cache: bool,
    /// KV-cache capacity in tokens, the denominator of the usage gauge.
    kv_tokens: u64,
}

impl Batching {
    /// An idle engine with these limits and costs.
    pub fn new(settings: BatchingSettings) -> Self {
        Self {
            max_model_len: settings.max_model_len.min(settings.params.kv_tokens),
            prefix_cache: settings.params.prefix_cache,
            kv_tokens: settings.params.kv_tokens,
            model: Mutex::new(Model::new(settings.params)),
        }
    }

    /// What the engine holds at `now_ns` (for `/metrics`).
    pub fn gauges(&self, now_ns: u64) -> Gauges {
        self.lock().gauges(now_ns)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Model> {
        // A panic while holding the lock leaves a model that is still consistent enough to
        // time tokens; keep serving rather than fail every later request.
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Engine for Batching {
    fn admit(&self, admission: &Admission) -> Ticket {
        let slot = self.lock().admit_blocks(
            admission.arrival_ns,
            admission.prompt_tokens,
            admission.max_tokens,
            admission.prefix_blocks.clone(),
        );
        Ticket {
            slot: slot as u64,
            arrival_ns: admission.arrival_ns,
        }
    }

    fn due(&self, ticket: &Ticket, k: u64, now_ns: u64) -> Due {
        let slot = usize::try_from(ticket.slot).unwrap_or(usize::MAX);
        match self.lock().due(slot, k, now_ns) {
            Ok(at) => Due::At(at),
            Err(ask) => Due::AskAt(ask),
        }
    }

    fn depart(&self, ticket: &Ticket, _why: Departure) {
        let slot = usize::try_from(ticket.slot).unwrap_or(usize::MAX);
        self.lock().depart(slot);
    }

    fn refuse(&self, admission: &Admission) -> Option<String> {
        let asked = admission.prompt_tokens.saturating_add(admission.max_tokens);
        (asked > self.max_model_len).then(|| context_length_message(self.max_model_len, admission))
    }

    fn wants_prefix_blocks(&self) -> bool {
        self.prefix_cache
    }

    fn max_model_len(&self) -> Option<u64> {
        Some(self.max_model_len)
    }

    fn gauges(&self, now_ns: u64) -> EngineGauges {
        let g = Batching::gauges(self, now_ns);
        EngineGauges {
            running: Some(g.running as u64),
            waiting: g.waiting as u64,
            kv_cache_usage: kv_fraction(g.kv_used, self.kv_tokens),
            prefix_cache: self.prefix_cache.then_some(PrefixCacheCounts {
                queries: g.prefix_queried_tokens,
                hits: g.prefix_hit_tokens,
            }),
        }
    }

    fn cached_tokens(&self, ticket: &Ticket) -> Option<u64> {
        let slot = usize::try_from(ticket.slot).ok()?;
        self.lock().cached_tokens(slot)
    }
}

/// vLLM's answer to a request longer than the model's context, word for word.
pub fn context_length_message(max_model_len: u64, admission: &Admission) -> String {
    format!(
        "This model's maximum context length is {max_model_len} tokens. However, you requested \
         {} tokens ({} in the messages, {} in the completion). Please reduce the length of the \
         messages or completion.",
        admission.prompt_tokens.saturating_add(admission.max_tokens),
        admission.prompt_tokens,
        admission.max_tokens,
    )
}

/// `used / capacity`, within 0 to 1 (0 for a cache of no size).
fn kv_fraction(used: u64, capacity: u64) -> f64 {
    if capacity == 0 {
        0.0
    } else {
        (used as f64 / capacity as f64).clamp(0.0, 1.0)
    }
}
