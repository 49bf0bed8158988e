//! What `fire` writes while it runs: `sent`, `token`, `done` per request, and `stall` when its
//! own output held it back.

use crate::{Grouping, OrOther};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A request was written to a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Sent {
    /// Request id.
    pub id: u64,
    /// When the request should have been sent: its open-loop offset, or in closed loop the
    /// instant its slot became free.
    #[serde(default)]
    pub scheduled_ns: Option<u64>,
    /// When the client handed the request to the connection.
    pub sent_ns: u64,
}

/// A streamed server event that carried generated content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Token {
    /// Request id.
    pub id: u64,
    /// When the bytes of this event were read from the socket.
    pub at_ns: u64,
    /// Tokens this event carries: the growth of `usage.completion_tokens` where the server
    /// reports usage on every chunk, otherwise 1.
    pub tokens: u32,
    /// The event stood for generated tokens whose text is empty (a lone byte of a UTF-8
    /// character, a special token): counted, but not content, so TTFT does not stop at it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub empty: bool,
    /// The event carried reasoning (`delta.reasoning_content` or `delta.reasoning`) and no
    /// answer text: a thinking model's tokens before its answer. Written only when true, so an
    /// answer without reasoning reads as before format 1.10.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reasoning: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The end of a request. Every request the client was given ends in exactly one `done`,
/// failures included. It echoes the request's session, turn and tags, so that results can be
/// grouped by them without the schedule.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    /// Request id.
    pub id: u64,
    /// When the request ended (the stream's end, or the failure).
    pub at_ns: u64,
    /// True when the server answered 2xx and the stream ended properly.
    pub ok: bool,
    /// HTTP status, when a response head arrived.
    #[serde(default)]
    pub status: Option<u16>,
    /// What went wrong; null when `ok`. A kind from a newer writer is kept as its string.
    #[serde(default)]
    pub error_kind: Option<OrOther<ErrorKind>>,
    /// Human-readable detail of the failure.
    #[serde(default)]
    pub error: Option<String>,
    /// `usage.prompt_tokens` as reported by the server.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens` as reported by the server; the exact output length.
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    /// Content-carrying events received (the number of `token` records for this request).
    pub events: u64,
    /// The `finish_reason` of the last choice (`length`, `stop`, ...).
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// When the first event of the response arrived, whatever it held (a role-only chat chunk
    /// included): the time to first response, which some tools report as their TTFT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event_ns: Option<u64>,
    /// Output tokens spent reasoning: `usage.completion_tokens_details.reasoning_tokens` when
    /// the server sent a positive one (vLLM sends 0 when the template opens the thinking),
    /// else the tokens of this request's `reasoning` token events. Omitted when the answer had
    /// no reasoning at all (format 1.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Output tokens of the answer proper: the output (usage, else counted) less
    /// `reasoning_tokens`. Present exactly when `reasoning_tokens` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_tokens: Option<u64>,
    /// Prompt tokens the server took from its prefix cache:
    /// `usage.prompt_tokens_details.cached_tokens` (vLLM with
    /// `--enable-prompt-tokens-details`, llama.cpp, SGLang, simserve `--prefix-cache`). Omitted
    /// when the server did not say (format 1.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// The generated text (`fire --record-text`), reasoning excluded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The request's session, turn and tags, echoed from the schedule (flat members).
    #[serde(flatten)]
    pub grouping: Grouping,
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The connection could not be made.
    Connect,
    /// The connection was not made within the connect timeout.
    ConnectTimeout,
    /// The request did not finish within the client's timeout.
    Timeout,
    /// No content arrived within the first-token timeout after the send.
    FirstTokenTimeout,
    /// The stream went silent for longer than the idle timeout between two events.
    IdleTimeout,
    /// The server answered with a non-2xx status.
    Http,
    /// Reading the response failed (connection reset, closed mid-body).
    Body,
    /// The response was not valid SSE or JSON.
    Parse,
    /// A 2xx answer that is not an event stream (HTML, or plain JSON from a server that
    /// ignored `stream: true`).
    NotStream,
    /// The server reported an error inside the stream.
    Server,
    /// The stream ended without a `finish_reason`: a bare `[DONE]`, or a body that ended
    /// cleanly before one came.
    Incomplete,
    /// The client was interrupted while the request was in flight.
    Cancelled,
    /// The client stopped before sending this request.
    NotSent,
}

impl ErrorKind {
    /// The wire name of this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::Timeout => "timeout",
            ErrorKind::FirstTokenTimeout => "first_token_timeout",
            ErrorKind::IdleTimeout => "idle_timeout",
            ErrorKind::Http => "http",
            ErrorKind::Body => "body",
            ErrorKind::Parse => "parse",
            ErrorKind::NotStream => "not_stream",
            ErrorKind::Server => "server",
            ErrorKind::Incomplete => "incomplete",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::NotSent => "not_sent",
        }
    }
}

impl ErrorKind {
    /// Every kind, in the order of the format's documentation.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::Connect,
        ErrorKind::ConnectTimeout,
        ErrorKind::Timeout,
        ErrorKind::FirstTokenTimeout,
        ErrorKind::IdleTimeout,
        ErrorKind::Http,
        ErrorKind::Body,
        ErrorKind::Parse,
        ErrorKind::NotStream,
        ErrorKind::Server,
        ErrorKind::Incomplete,
        ErrorKind::Cancelled,
        ErrorKind::NotSent,
    ];

    /// True when the server or the network failed the request; false when the run itself
    /// ended it (`cancelled`, `not_sent`), which says nothing about the server.
    pub fn is_failure(self) -> bool {
        !matches!(self, ErrorKind::Cancelled | ErrorKind::NotSent)
    }
}

impl AsRef<str> for ErrorKind {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// `fire`'s output was full (its reader was slower than the run) and a network thread waited
/// for room: token stamps taken during the wait may be late by up to `duration_ns`. Written
/// once the wait is over; a run without stalls has none of these records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Stall {
    /// When the wait began.
    pub at_ns: u64,
    /// How long the network thread was held.
    pub duration_ns: u64,
    /// Bytes waiting for the reader when the wait began (the bound that was hit; `fire` holds a
    /// token as 22 bytes until it is written).
    pub buffered_bytes: u64,
}
