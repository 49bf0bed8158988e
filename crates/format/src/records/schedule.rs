//! What `arrivals` writes for `fire`: how to pace (`schedule`) and what to send (`request`).

use crate::OrOther;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most requests a schedule may keep in flight (`concurrency`, `max_concurrency`, a batch):
/// a larger value is a typo, not a benchmark, and would have `fire` reserve memory and
/// connections it can never use. `arrivals` refuses flags above it and `fire` schedules that
/// carry one (docs/arrivals.md, docs/fire.md).
pub const MAX_IN_FLIGHT: u64 = 1_000_000;

/// How requests are paced: open loop (each request at its `offset_ns`), closed loop
/// (`concurrency` requests in flight, the next sent as soon as one ends) or batches
/// (`concurrency` at once, the next batch when all have ended); and what bounds the run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Schedule {
    /// `open`, `closed` or `batch`; a newer mode is kept as its string.
    pub mode: OrOther<LoopMode>,
    /// Requests kept in flight in closed loop, or sent together per batch in batch mode;
    /// ignored in open loop.
    #[serde(default)]
    pub concurrency: Option<u64>,
    /// Number of request records that follow, when known (null for a closed loop bounded by
    /// time, whose requests go on until the reader has had enough).
    #[serde(default)]
    pub requests: Option<u64>,
    /// Open loop: at most this many requests in flight; a request due while all slots are
    /// taken waits for one, and that wait is part of its recorded queue time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u64>,
    /// Closed loop: the first `concurrency` requests start this far apart instead of together
    /// (a fill phase that avoids a thundering first wave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_interval_ns: Option<u64>,
    /// No request is sent this long or later after the run start; those in flight finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ns: Option<u64>,
    /// Named stretches of the run (`fill`, `stabilize`, `measure`, `drain`), so that a reader
    /// can keep only the steady state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// The cache-busting salt the sender puts at the start of every session's first prompt:
    /// new for every run, so a repeated run never finds its prompts in a warm prefix cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt: Option<Salt>,
    /// Batch mode: the first this many batches warm the server up and are measured by no
    /// figure (llama-benchy's discarded run 0); their requests are sent and recorded as usual.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_batches: Option<u64>,
}

/// One named stretch of a run, in run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Phase {
    /// `fill`, `stabilize`, `measure` or `drain` (readers keep other names as they are).
    pub name: String,
    /// Where the phase begins, ns from the run start.
    pub start_ns: u64,
    /// Where it ends (exclusive); null for the last phase, which ends with the run.
    #[serde(default)]
    pub end_ns: Option<u64>,
}

/// How the sender draws the per-run salt: `tokens` pieces, each one token, from `words` for a
/// text prompt and from the ids `id_range[0] .. id_range[1]` (end exclusive) for a token-id
/// prompt. The request's `prompt_tokens` counts the salt; its `prompt` leaves it out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Salt {
    /// Salt length in tokens.
    pub tokens: u32,
    /// Words to draw from, each one token with a leading space; empty means
    /// [`ONE_TOKEN_WORDS`](crate::ONE_TOKEN_WORDS).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// Token ids to draw from for token-id prompts, `[start, end)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_range: Option<[u32; 2]>,
}

/// Whether sends follow a timetable (open), completions (closed) or batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoopMode {
    /// Each request is sent at its scheduled offset, whatever the server is doing.
    #[default]
    Open,
    /// A fixed number of requests is kept in flight.
    Closed,
    /// `concurrency` requests are sent together; the next batch goes when all have ended
    /// (llama-benchy's runs).
    Batch,
}

impl AsRef<str> for LoopMode {
    fn as_ref(&self) -> &str {
        match self {
            LoopMode::Open => "open",
            LoopMode::Closed => "closed",
            LoopMode::Batch => "batch",
        }
    }
}

/// One request to send: its prompt, its lengths, (open loop) when, and what it belongs to.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Request {
    /// Request id, unique within the run; every later record about this request carries it.
    pub id: u64,
    /// When to send, in nanoseconds from the run start (open loop); null in closed loop.
    #[serde(default)]
    pub offset_ns: Option<u64>,
    /// The prompt as text (sent as `prompt`, or as one user message on the chat API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The prompt as token ids (completions API only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_token_ids: Option<Vec<u32>>,
    /// Intended prompt length in tokens, when the writer knows it (a dataset's prompt may not
    /// have been tokenized); the server's usage count is the authoritative one.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Tokens to generate (`max_tokens` of the API request).
    pub max_tokens: u64,
    /// A system prompt: the chat API's system message, put before the prompt on the
    /// completions API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// A later turn of a session: how long after the previous turn's end to send it (its
    /// `offset_ns` is null; the session's first turn carries the session's arrival). Present
    /// on exactly the turns that wait for another; a `turn` without it is only a label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time_ns: Option<u64>,
    /// How many turns the request's session has, on every turn, so that the sender can drop
    /// a session's history after its last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// What the request belongs to: its session, turn and tags (flat members on the wire).
    #[serde(flatten)]
    pub grouping: Grouping,
    /// Members merged into the API request body as they are (`{"temperature": 0.7}`); they
    /// never replace the members `fire` itself sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// HTTP headers added to this request alone (`{"x-tokenpipe-fault": "reset;after=3"}`);
    /// one of the same name replaces a `fire -H` header. Those `fire` sets itself (framing,
    /// `x-request-id`) cannot be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
}

/// What a request belongs to, for grouping results: written by `arrivals` on the `request`,
/// echoed by `fire` on its `done`. Flat members on the wire, each omitted when empty.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Grouping {
    /// The conversation the request is a turn of (multi-turn workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The turn's index within its session, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// The batch the request is part of, from 0 (batch mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<u64>,
    /// Free labels (`{"class": "long"}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}
