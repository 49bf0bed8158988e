//! The `stamp` record: the simulated server's own account of when it sent each request's
//! tokens, the reference `fire`'s timing error is measured against.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// When `simserve` handed a request's first and last tokens to the network stack. Times are
/// nanoseconds from the start of the server's run (its header's `monotonic_origin_ns`), so they
/// line up with a `fire` run on the same host through the two headers' origins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Stamp {
    /// The request's `x-request-id` header, if it had a readable one (fire's encodes its run
    /// and request id).
    pub request_id: Option<String>,
    /// When the request body had been fully read (the origin of its token timetable).
    pub received_ns: u64,
    /// When the first token's frame was handed to the network stack; null if none was sent.
    pub first_token_ns: Option<u64>,
    /// When the last token sent was handed to the network stack; null if none was sent.
    pub last_token_ns: Option<u64>,
    /// Tokens sent (equal to `max_tokens` unless the client left early or the request failed).
    pub tokens: u64,
}
