//! What `arrivals` writes for `fire`: how to pace (`schedule`) and what to send (`request`).

use crate::OrOther;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How requests are paced: open loop (each request at its `offset_ns`) or closed loop
/// (`concurrency` requests in flight, the next sent as soon as one ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Schedule {
    /// `open` or `closed`; a newer mode is kept as its string.
    pub mode: OrOther<LoopMode>,
    /// Requests kept in flight in closed loop; ignored in open loop.
    #[serde(default)]
    pub concurrency: Option<u64>,
    /// Number of request records that follow, when known.
    #[serde(default)]
    pub requests: Option<u64>,
}

/// Whether sends follow a timetable (open) or completions (closed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoopMode {
    /// Each request is sent at its scheduled offset, whatever the server is doing.
    Open,
    /// A fixed number of requests is kept in flight.
    Closed,
}

impl AsRef<str> for LoopMode {
    fn as_ref(&self) -> &str {
        match self {
            LoopMode::Open => "open",
            LoopMode::Closed => "closed",
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
    /// What the request belongs to: its session, turn and tags (flat members on the wire).
    #[serde(flatten)]
    pub grouping: Grouping,
    /// Members merged into the API request body as they are (`{"temperature": 0.7}`); they
    /// never replace the members `fire` itself sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
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
    /// Free labels (`{"class": "long"}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}
