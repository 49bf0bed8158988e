//! The typed records of the stream. Each struct is one `"type"` of line; [`Record`] is the union
//! that readers return and writers take. Field names carry their unit.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One line of a tokenpipe stream, tagged by its `"type"` field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// Provenance; always the first line of a stream.
    Header(Header),
    /// How `fire` should pace the requests that follow (written by `arrivals`).
    Schedule(Schedule),
    /// One request to send (written by `arrivals`).
    Request(Request),
    /// A request left the client (written by `fire`).
    Sent(Sent),
    /// A streamed event that carried content arrived (written by `fire`).
    Token(Token),
    /// A request ended, successfully or not; exactly one per request (written by `fire`).
    Done(Done),
    /// Metrics over a run (written by `reduce`).
    Summary(Box<Summary>),
}

impl Record {
    /// The `"type"` value of this record, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::Schedule(_) => "schedule",
            Record::Request(_) => "request",
            Record::Sent(_) => "sent",
            Record::Token(_) => "token",
            Record::Done(_) => "done",
            Record::Summary(_) => "summary",
        }
    }
}

/// Says which tool made a stream, from what, and when, so that a final table knows how its data
/// was made. Tools carry their upstream headers forward in `upstream`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    /// Major version of the stream format; readers refuse a higher one than they know.
    pub format_major: u32,
    /// Minor version of the stream format; additions only.
    #[serde(default)]
    pub format_minor: u32,
    /// The tool that wrote this stream (`arrivals`, `fire`, `reduce`).
    pub tool: String,
    /// The writing tool's version.
    pub tool_version: String,
    /// Identifies this run; `reduce` and `table` use it to tell runs apart.
    pub run_id: String,
    /// The command line that produced this stream.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The random seed, where the tool draws random numbers.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Wall-clock time of the run start (RFC 3339, UTC). Null for pure generators such as
    /// `arrivals`, whose output depends on their arguments alone.
    #[serde(default)]
    pub started_at: Option<String>,
    /// `CLOCK_MONOTONIC` at the run start, in nanoseconds: lets processes on the same host line
    /// up their stamps with this stream's `*_ns` times.
    #[serde(default)]
    pub monotonic_origin_ns: Option<u64>,
    /// Tool-specific settings worth keeping with the data (fire's url, api and model; arrivals'
    /// rate and burstiness).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
    /// The headers of the streams this one was made from, oldest first, each without its own
    /// `upstream`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<Header>,
}

impl Header {
    /// The upstream list a tool should write when its input carried `input`: the input's own
    /// upstream chain followed by the input header itself.
    pub fn chain(input: &Header) -> Vec<Header> {
        let mut chain = input.upstream.clone();
        let mut me = input.clone();
        me.upstream.clear();
        chain.push(me);
        chain
    }

    /// Looks up a parameter in this header or, failing that, its upstream headers (newest first).
    pub fn param(&self, key: &str) -> Option<&serde_json::Value> {
        self.params
            .get(key)
            .or_else(|| self.upstream.iter().rev().find_map(|h| h.params.get(key)))
    }
}

/// How requests are paced: open loop (each request at its `offset_ns`) or closed loop
/// (`concurrency` requests in flight, the next sent as soon as one ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Schedule {
    /// `open` or `closed`.
    pub mode: LoopMode,
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

/// One request to send: its prompt, its lengths, and (open loop) when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// Intended prompt length in tokens; the server's usage count is the authoritative one.
    pub prompt_tokens: u64,
    /// Tokens to generate (`max_tokens` of the API request).
    pub max_tokens: u64,
}

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
}

/// The end of a request. Every request the client was given ends in exactly one `done`,
/// failures included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    /// What went wrong; null when `ok`.
    #[serde(default)]
    pub error_kind: Option<ErrorKind>,
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
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The connection could not be made.
    Connect,
    /// The request did not finish within the client's timeout.
    Timeout,
    /// The server answered with a non-2xx status.
    Http,
    /// Reading the response failed (connection reset, closed mid-body).
    Body,
    /// The response was not valid SSE or JSON.
    Parse,
    /// The server reported an error inside the stream.
    Server,
    /// The stream ended without a `finish_reason` or `[DONE]`.
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
            ErrorKind::Timeout => "timeout",
            ErrorKind::Http => "http",
            ErrorKind::Body => "body",
            ErrorKind::Parse => "parse",
            ErrorKind::Server => "server",
            ErrorKind::Incomplete => "incomplete",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::NotSent => "not_sent",
        }
    }
}

/// Metrics over one run, as `reduce` computes them (docs/metrics.md defines each). Times in
/// milliseconds; `null` where no request contributed a value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Name of this run in tables (reduce's `--label`, else the model, else the run id).
    pub label: String,
    /// The run id of the `fire` run summarised.
    pub run_id: String,
    /// Requests that ended `ok`.
    pub requests_ok: u64,
    /// Requests that failed, whatever the kind.
    pub requests_failed: u64,
    /// From the first send to the last `done`, in seconds.
    pub duration_s: f64,
    /// Prompt tokens of successful requests, from the server's usage (0 where it reported none).
    pub input_tokens: u64,
    /// Output tokens of successful requests (usage, else the sum of token events).
    pub output_tokens: u64,
    /// Successful requests per second of `duration_s`.
    pub request_throughput_per_s: f64,
    /// Output tokens per second of `duration_s`.
    pub output_throughput_tokens_per_s: f64,
    /// Input plus output tokens per second of `duration_s`.
    pub total_throughput_tokens_per_s: f64,
    /// Time to first token: mean.
    pub ttft_mean_ms: Option<f64>,
    /// Time to first token: standard deviation.
    pub ttft_std_ms: Option<f64>,
    /// Time to first token: median.
    pub ttft_p50_ms: Option<f64>,
    /// Time to first token: 90th percentile.
    pub ttft_p90_ms: Option<f64>,
    /// Time to first token: 99th percentile.
    pub ttft_p99_ms: Option<f64>,
    /// Time to first token: maximum.
    pub ttft_max_ms: Option<f64>,
    /// Time per output token after the first: mean.
    pub tpot_mean_ms: Option<f64>,
    /// Time per output token: standard deviation.
    pub tpot_std_ms: Option<f64>,
    /// Time per output token: median.
    pub tpot_p50_ms: Option<f64>,
    /// Time per output token: 90th percentile.
    pub tpot_p90_ms: Option<f64>,
    /// Time per output token: 99th percentile.
    pub tpot_p99_ms: Option<f64>,
    /// Time per output token: maximum.
    pub tpot_max_ms: Option<f64>,
    /// Inter-token latency (gaps between content events): mean.
    pub itl_mean_ms: Option<f64>,
    /// Inter-token latency: standard deviation.
    pub itl_std_ms: Option<f64>,
    /// Inter-token latency: median.
    pub itl_p50_ms: Option<f64>,
    /// Inter-token latency: 90th percentile.
    pub itl_p90_ms: Option<f64>,
    /// Inter-token latency: 99th percentile.
    pub itl_p99_ms: Option<f64>,
    /// Inter-token latency: maximum.
    pub itl_max_ms: Option<f64>,
    /// End-to-end latency: mean.
    pub e2el_mean_ms: Option<f64>,
    /// End-to-end latency: standard deviation.
    pub e2el_std_ms: Option<f64>,
    /// End-to-end latency: median.
    pub e2el_p50_ms: Option<f64>,
    /// End-to-end latency: 90th percentile.
    pub e2el_p90_ms: Option<f64>,
    /// End-to-end latency: 99th percentile.
    pub e2el_p99_ms: Option<f64>,
    /// End-to-end latency: maximum.
    pub e2el_max_ms: Option<f64>,
    /// Jitter: ITL p99 divided by ITL p50 (1.0 is perfectly even streaming).
    pub itl_jitter: Option<f64>,
    /// How late requests were sent against their schedule: mean.
    pub dispatch_lag_mean_ms: Option<f64>,
    /// Dispatch lag: median.
    pub dispatch_lag_p50_ms: Option<f64>,
    /// Dispatch lag: 99th percentile.
    pub dispatch_lag_p99_ms: Option<f64>,
    /// Dispatch lag: maximum.
    pub dispatch_lag_max_ms: Option<f64>,
}
