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
    /// The most any sent token was handed over after the instant its timetable named (or
    /// after the response head was let go, when it was held back on purpose): the server's own
    /// timing error, which a loaded server must keep from growing. Null if none
    /// was sent (and in files from before format 1.6).
    #[serde(default)]
    pub late_max_ns: Option<u64>,
    /// Every sent token's lateness added up, so that `late_sum_ns / tokens` is its mean.
    #[serde(default)]
    pub late_sum_ns: Option<u64>,
}
