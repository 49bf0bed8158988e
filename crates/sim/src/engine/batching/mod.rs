//! The continuous-batching engine: requests share one simulated accelerator, so each one's
//! tokens depend on what else is running. The scheduling and its arithmetic are in [`model`],
//! on virtual time; this file puts the model behind the [`Engine`] seam, one lock around it.

pub mod curve;
pub mod model;

#[cfg(test)]
mod tests;

use super::{Admission, Departure, Due, Engine, EngineGauges, Ticket};
use model::{Gauges, Model, Params};
use std::sync::Mutex;

/// A [`Model`] shared by every connection.
#[derive(Debug)]
pub struct Batching {
    model: Mutex<Model>,
    /// KV-cache capacity in tokens, the denominator of the usage gauge.
    kv_tokens: u64,
}

impl Batching {
    /// An idle engine with these limits and costs.
    pub fn new(params: Params) -> Self {
        Self {
            kv_tokens: params.kv_tokens,
            model: Mutex::new(Model::new(params)),
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
        let slot = self.lock().admit(
            admission.arrival_ns,
            admission.prompt_tokens,
            admission.max_tokens,
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

    fn gauges(&self, now_ns: u64) -> EngineGauges {
        let g = Batching::gauges(self, now_ns);
        EngineGauges {
            running: Some(g.running as u64),
            waiting: g.waiting as u64,
            kv_cache_usage: kv_fraction(g.kv_used, self.kv_tokens),
        }
    }
}

/// `used / capacity`, within 0 to 1 (0 for a cache of no size).
fn kv_fraction(used: u64, capacity: u64) -> f64 {
    if capacity == 0 {
        0.0
    } else {
        (used as f64 / capacity as f64).clamp(0.0, 1.0)
    }
}
