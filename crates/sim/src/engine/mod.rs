//! The engine seam: what decides when each token of each request is due.
//!
//! The server never computes a deadline itself. For every generation request it tells the
//! server's [`Engine`] three things and asks one:
//!
//! 1. **admission** ([`Engine::admit`]): the request's body was read at `arrival_ns`, with
//!    `prompt_tokens` of prompt and `max_tokens` to generate. The engine answers with a
//!    [`Ticket`] that names the request in every later call.
//! 2. **the question** ([`Engine::due`]): when is token `k` due, asked with the current time.
//!    A stream asks for k = 1, 2, … in order, token k only once token k − 1 is out; an answer
//!    sent whole asks only for its last token (or a fault's token). The answer is either final
//!    ([`Due::At`]) or "not known yet, ask again at this instant" ([`Due::AskAt`]).
//! 3. **departure** ([`Engine::depart`]): the request left, having sent its last token
//!    ([`Departure::Finished`]), cut short by a simulated fault ([`Departure::Failed`]), or with
//!    its client gone ([`Departure::Gone`]). Departure is certain: the per-request
//!    [`Timetable`](crate::timetable::Timetable) that holds the ticket departs on drop.
//!
//! All times are nanoseconds on the server's clock ([`TokenTimer::now_ns`]): `CLOCK_MONOTONIC`
//! in a real server, tokio's paused virtual clock in unit tests. An engine never reads a clock
//! itself, so the same engine runs on both.
//!
//! What it costs: per request, one `admit`, one `depart` and one `Arc` clone of the engine; per
//! token, one `due` call (a virtual call, no allocation) each time the stream is polled, and one
//! entry on the shared timer for the instant it returned. There is no task, channel or
//! allocation per token.
//!
//! # Adding an engine
//!
//! One file beside [`fixed`] that implements [`Engine`], and one arm in [`from_settings`]. A
//! continuous-batching engine fits as follows: `admit` queues the sequence (prompt length and
//! budget) in its shared state behind a mutex and hands out a slot number as the ticket; `due`
//! advances its simulated steps up to `now_ns` (each step's duration a function of the batch
//! and of the prompts being prefilled in it, new arrivals joining at the next step boundary)
//! and answers `At(end of the step that produces token k)` once that step has started, or
//! `AskAt(end of the current step)` before; `depart` frees the slot. Because the current step's
//! end is never later than the end of a step still to come, `AskAt` is never later than the
//! deadline it stands for, so a token is never sent late because of the laziness.
//!
//! [`TokenTimer::now_ns`]: crate::waiter::TokenTimer::now_ns

pub mod batching;
pub mod fixed;
pub mod profile;

use std::sync::Arc;
use std::time::Duration;

/// What an engine learns of a request when it is admitted: all it needs to place the request in
/// a batch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Admission {
    /// When the request's body had been fully read, on the server's clock (ns).
    pub arrival_ns: u64,
    /// Prompt size in tokens (see [`crate::api::GenerationRequest::prompt_tokens`]).
    pub prompt_tokens: u64,
    /// Tokens the request will generate unless it leaves early.
    pub max_tokens: u64,
    /// Hashes of the prompt's whole 16-token blocks, each covering every token before it
    /// ([`crate::prompt_blocks`]): what a prefix cache needs. Empty unless the engine asks for
    /// them ([`Engine::wants_prefix_blocks`]).
    pub prefix_blocks: Vec<u64>,
}

/// How an engine names an admitted request in later calls. The engine decides what `slot`
/// means (an index into its own table, or nothing); `arrival_ns` is kept so that a stateless
/// engine needs no table at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// The engine's own key for the request.
    pub slot: u64,
    /// The admission's `arrival_ns`.
    pub arrival_ns: u64,
}

/// An engine's answer to "when is token k due?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Token k is due at this instant (ns on the server's clock); it may already be past. Final:
    /// asking again for the same token gives the same instant.
    At(u64),
    /// Not known yet: ask again at this instant, which must be later than the `now_ns` the
    /// question was asked with and no later than the token's eventual deadline.
    AskAt(u64),
}

/// Why a request left the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// Its last token was handed to the network stack.
    Finished,
    /// A simulated fault ended its answer early (see [`crate::fault`]).
    Failed,
    /// The client went away, or the answer was dropped, before its last token.
    Gone,
}

/// Decides when each token of each request is due. Shared by every connection, so it takes
/// `&self` and keeps whatever state it needs behind its own lock.
pub trait Engine: Send + Sync {
    /// A request arrives; the ticket names it in every later call.
    fn admit(&self, admission: &Admission) -> Ticket;

    /// When token `k` (1-based) of `ticket`'s request is due, asked at `now_ns`. For one ticket
    /// `k` never decreases from call to call (a stream asks for each token once the previous
    /// one was sent; an answer sent whole asks for its last token only), and the same `k` may
    /// be asked several times (a stream is polled for other reasons too), so it must be cheap
    /// and must not allocate.
    fn due(&self, ticket: &Ticket, k: u64, now_ns: u64) -> Due;

    /// The request left; called exactly once per admitted ticket.
    fn depart(&self, ticket: &Ticket, why: Departure);

    /// Why the request can never be served (too long for the model), asked before `admit`:
    /// the server answers 400 with this message instead of admitting it. None by default.
    fn refuse(&self, _admission: &Admission) -> Option<String> {
        None
    }

    /// Whether `admit` reads [`Admission::prefix_blocks`], so the server hashes prompts only
    /// for an engine that uses the hashes.
    fn wants_prefix_blocks(&self) -> bool {
        false
    }

    /// The longest prompt + completion served, which `/tokenize` reports and the token-count
    /// histograms of `/metrics` are bucketed up to; None for an engine with no limit.
    fn max_model_len(&self) -> Option<u64> {
        None
    }

    /// What the engine holds at `now_ns`, for `/metrics`. An engine that keeps no queue (the
    /// fixed one) answers the default: nothing waiting, no cache, and `running` left to the
    /// server, which counts the answers in flight.
    fn gauges(&self, _now_ns: u64) -> EngineGauges {
        EngineGauges::default()
    }

    /// Prompt tokens of `ticket`'s request that the engine's prefix cache held when it was
    /// scheduled (the usage's `cached_tokens`); `None` for an engine without a prefix cache,
    /// or before the request was scheduled.
    fn cached_tokens(&self, _ticket: &Ticket) -> Option<u64> {
        None
    }
}

/// An engine's occupancy at one instant: vLLM's `num_requests_running`, `num_requests_waiting`
/// and `kv_cache_usage_perc`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EngineGauges {
    /// Requests being prefilled or decoded; `None` where the engine does not track them, and
    /// the server reports the answers it has in flight instead.
    pub running: Option<u64>,
    /// Requests queued or preempted.
    pub waiting: u64,
    /// KV-cache use as a fraction of its capacity, 0 to 1.
    pub kv_cache_usage: f64,
    /// The prefix cache's lookups so far; `None` for an engine without one.
    pub prefix_cache: Option<PrefixCacheCounts>,
}

/// What a prefix cache was asked and found, in prompt tokens, since the server started:
/// vLLM's `vllm:prefix_cache_queries_total` and `vllm:prefix_cache_hits_total`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrefixCacheCounts {
    /// Prompt tokens looked up (each scheduling of a request counts, as in vLLM).
    pub queries: u64,
    /// Prompt tokens found cached.
    pub hits: u64,
}

/// The engine the settings ask for: the fixed timetable of `--ttft-ms` and `--itl-ms` (`ttft`
/// and `itl`), or a continuous-batching engine with a profile's costs (see [`profile`]).
pub fn from_settings(
    settings: &profile::EngineSettings,
    ttft: Duration,
    itl: Duration,
) -> Arc<dyn Engine> {
    match settings {
        profile::EngineSettings::Fixed => Arc::new(fixed::Fixed { ttft, itl }),
        profile::EngineSettings::Batching(settings) => {
            Arc::new(batching::Batching::new(settings.clone()))
        }
    }
}
