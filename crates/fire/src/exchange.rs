//! One request from send to `done`: POST the body, read the SSE stream frame by frame, stamp
//! each frame the moment it is read, and write a `token` record for every event that carries
//! content. Every path out of here (success, HTTP error, reset, timeout, cancel) writes exactly
//! one `done` record.

use crate::api::Dialect;
use crate::http::HttpClient;
use crate::job::Job;
use crate::sink::Sink;
use crate::sse_split::SseSplitter;
use crate::stop::Stop;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::Uri;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::writer::encode_token;
use tokenpipe_format::{Done, ErrorKind, Record, Sent, Token};

/// Everything a request task shares with the others.
pub struct Ctx {
    /// Pooled HTTP client.
    pub client: HttpClient,
    /// Full endpoint URI.
    pub uri: Uri,
    /// The API dialect, which reads the streamed chunks.
    pub dialect: &'static dyn Dialect,
    /// `Authorization` header, when an API key was given.
    pub auth: Option<HeaderValue>,
    /// Run clock.
    pub clock: RunClock,
    /// Output.
    pub sink: Arc<Sink>,
    /// Per-request time limit.
    pub timeout: Duration,
    /// Run stop signal.
    pub stop: Arc<Stop>,
    /// High half of each request's `x-request-id`.
    pub run_hash: u64,
    /// Failures by kind, for the closing message.
    pub failures: Mutex<Vec<(ErrorKind, u64)>>,
}

/// The `x-request-id` of a request: a UUID-shaped string whose first 16 hex digits identify
/// the run and last 16 the request id (some servers accept only UUIDs here).
pub fn request_uuid(run_hash: u64, id: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        run_hash >> 32,
        (run_hash >> 16) & 0xffff,
        run_hash & 0xffff,
        id >> 48,
        id & 0xffff_ffff_ffff
    )
}

struct Failure {
    kind: ErrorKind,
    message: String,
}

impl Failure {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// What one stream said so far; survives a timeout or cancel so partial counts are kept.
struct StreamState {
    id: u64,
    dialect: &'static dyn Dialect,
    status: Option<u16>,
    events: u64,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    finish_reason: Option<String>,
    done_marker_ns: Option<u64>,
    end_ns: Option<u64>,
    /// Some content event came without usage, so usage is not continuous (per event).
    usage_gap: bool,
}

impl StreamState {
    fn new(id: u64, dialect: &'static dyn Dialect) -> Self {
        Self {
            id,
            dialect,
            status: None,
            events: 0,
            prompt_tokens: None,
            completion_tokens: None,
            finish_reason: None,
            done_marker_ns: None,
            end_ns: None,
            usage_gap: false,
        }
    }

    /// Handles one SSE event's data that arrived at `at_ns`; token records go onto `out`.
    fn on_event(&mut self, data: &[u8], at_ns: u64, out: &mut Vec<u8>) -> Result<(), Failure> {
        // `[DONE]` ends the stream: whatever a server sends after it is not part of the answer
        // (and would otherwise be stamped after this request's `done`).
        if self.done_marker_ns.is_some() {
            return Ok(());
        }
        if data == b"[DONE]" {
            self.done_marker_ns = Some(at_ns);
            return Ok(());
        }
        let info = self.dialect.read_chunk(data).map_err(|e| {
            Failure::new(
                ErrorKind::Parse,
                format!("event {}: {e}: {}", self.events + 1, snippet(data)),
            )
        })?;
        if let Some(err) = info.error {
            return Err(Failure::new(ErrorKind::Server, snippet(err.as_bytes())));
        }
        if info.has_content {
            self.events += 1;
            // Usage on every content event (vLLM's continuous usage stats) tells how many tokens
            // each carried; usage on the last event alone (llama.cpp) is the total, not a delta.
            self.usage_gap |= info.completion_tokens.is_none();
            let tokens = match (info.completion_tokens, self.usage_gap) {
                (Some(now), false) => now
                    .saturating_sub(self.completion_tokens.unwrap_or(0))
                    .max(1),
                _ => 1,
            };
            encode_token(
                out,
                &Token {
                    id: self.id,
                    at_ns,
                    tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
                    empty: false,
                },
            );
        }
        if info.prompt_tokens.is_some() {
            self.prompt_tokens = info.prompt_tokens;
        }
        if info.completion_tokens.is_some() {
            self.completion_tokens = info.completion_tokens;
        }
        if let Some(reason) = info.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        Ok(())
    }
}

/// Sends one request and records everything about it; returns when it ended (`done.at_ns`).
pub async fn run(ctx: Arc<Ctx>, job: Job) -> u64 {
    let mut st = StreamState::new(job.id, ctx.dialect);
    let sent_ns = ctx.clock.now_ns();
    ctx.sink.record(&Record::Sent(Sent {
        id: job.id,
        scheduled_ns: job.scheduled_ns,
        sent_ns,
    }));
    let result = tokio::select! {
        biased;
        r = exchange(&ctx, job.body, &mut st) => r,
        _ = ctx.stop.stopped() => Err(Failure::new(ErrorKind::Cancelled, "run stopped while the request was in flight")),
        _ = tokio::time::sleep(ctx.timeout) => Err(Failure::new(
            ErrorKind::Timeout,
            format!("no complete response within {:.3} s", ctx.timeout.as_secs_f64()),
        )),
    };
    let at_ns = st.end_ns.unwrap_or_else(|| ctx.clock.now_ns());
    let (ok, error_kind, error) = match result {
        Ok(()) => (true, None, None),
        Err(f) => {
            count_failure(&ctx, f.kind);
            (false, Some(f.kind.into()), Some(f.message))
        }
    };
    ctx.sink.record(&Record::Done(Done {
        id: st.id,
        at_ns,
        ok,
        status: st.status,
        error_kind,
        error,
        prompt_tokens: st.prompt_tokens,
        completion_tokens: st.completion_tokens,
        events: st.events,
        finish_reason: st.finish_reason,
        first_event_ns: None,
        text: None,
        grouping: job.echo,
    }));
    at_ns
}

fn count_failure(ctx: &Ctx, kind: ErrorKind) {
    let mut f = ctx.failures.lock().unwrap_or_else(|p| p.into_inner());
    match f.iter_mut().find(|(k, _)| *k == kind) {
        Some((_, n)) => *n += 1,
        None => f.push((kind, 1)),
    }
}

async fn exchange(ctx: &Ctx, body: Bytes, st: &mut StreamState) -> Result<(), Failure> {
    let mut req = hyper::Request::post(ctx.uri.clone())
        .header(CONTENT_TYPE, "application/json")
        .header("x-request-id", request_uuid(ctx.run_hash, st.id));
    if let Some(auth) = &ctx.auth {
        req = req.header(AUTHORIZATION, auth.clone());
    }
    let req = req
        .body(Full::new(body))
        .map_err(|e| Failure::new(ErrorKind::Connect, e.to_string()))?;
    let resp = ctx.client.request(req).await.map_err(|e| {
        let kind = if e.is_connect() {
            ErrorKind::Connect
        } else {
            ErrorKind::Body
        };
        Failure::new(kind, error_chain(&e))
    })?;
    let status = resp.status();
    st.status = Some(status.as_u16());
    let mut body = resp.into_body();
    if !status.is_success() {
        let text = read_prefix(&mut body, 4096).await;
        return Err(Failure::new(
            ErrorKind::Http,
            format!("HTTP {status}: {}", snippet(&text)),
        ));
    }
    let mut sse = SseSplitter::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::new(ErrorKind::Body, error_chain(&e)))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let at_ns = ctx.clock.now_ns();
        let mut failed = None;
        let fed = {
            let mut out = ctx.sink.lock();
            sse.feed(&data, |event| match st.on_event(event, at_ns, out.buf()) {
                Ok(()) => true,
                Err(f) => {
                    failed = Some(f);
                    false
                }
            })
        };
        if let Some(f) = failed {
            return Err(f);
        }
        if let Err(too_long) = fed {
            return Err(Failure::new(ErrorKind::Parse, too_long.to_string()));
        }
    }
    st.end_ns = Some(st.done_marker_ns.unwrap_or_else(|| ctx.clock.now_ns()));
    if sse.has_partial() {
        return Err(Failure::new(
            ErrorKind::Incomplete,
            "stream ended in the middle of an event",
        ));
    }
    if st.finish_reason.is_none() {
        let how = if st.done_marker_ns.is_some() {
            "[DONE]"
        } else {
            "the end of the body"
        };
        return Err(Failure::new(
            ErrorKind::Incomplete,
            format!("stream reached {how} without a finish_reason"),
        ));
    }
    Ok(())
}

async fn read_prefix(body: &mut hyper::body::Incoming, limit: usize) -> Vec<u8> {
    let mut text = Vec::new();
    while text.len() < limit {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(d) = frame.into_data() {
                    text.extend_from_slice(&d);
                }
            }
            _ => break,
        }
    }
    text
}

/// A short, printable excerpt of server bytes for error messages.
fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.chars().count() > 300 {
        let cut: String = text.chars().take(300).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

/// An error and its sources, joined: hyper's top-level messages alone are vague.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Api;

    #[test]
    fn uuid_shape_and_round_trip() {
        let u = request_uuid(0x0123_4567_89ab_cdef, 42);
        assert_eq!(u, "01234567-89ab-cdef-0000-00000000002a");
        let hex: String = u.chars().filter(|c| *c != '-').collect();
        assert_eq!(u64::from_str_radix(&hex[16..], 16).unwrap(), 42);
    }

    #[test]
    fn events_become_tokens_and_usage() {
        let mut st = StreamState::new(7, Api::Completions.dialect());
        let mut out = vec![];
        st.on_event(
            br#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
            1,
            &mut out,
        )
        .ok()
        .unwrap();
        assert!(out.is_empty());
        st.on_event(br#"{"choices":[{"delta":{"content":"a"}}]}"#, 5, &mut out)
            .ok()
            .unwrap();
        st.on_event(
            br#"{"choices":[{"delta":{"content":"b"},"finish_reason":"length"}]}"#,
            9,
            &mut out,
        )
        .ok()
        .unwrap();
        st.on_event(
            br#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
            9,
            &mut out,
        )
        .ok()
        .unwrap();
        st.on_event(b"[DONE]", 10, &mut out).ok().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"type\":\"token\",\"id\":7,\"at_ns\":5,\"tokens\":1}\n{\"type\":\"token\",\"id\":7,\"at_ns\":9,\"tokens\":1}\n"
        );
        assert_eq!(st.events, 2);
        assert_eq!((st.prompt_tokens, st.completion_tokens), (Some(4), Some(2)));
        assert_eq!(st.finish_reason.as_deref(), Some("length"));
        assert_eq!(st.done_marker_ns, Some(10));
        let mut st = StreamState::new(0, Api::Chat.dialect());
        assert!(matches!(
            st.on_event(b"{oops", 11, &mut vec![]).err().map(|f| f.kind),
            Some(ErrorKind::Parse)
        ));
        assert!(matches!(
            st.on_event(br#"{"error":{"message":"x"}}"#, 11, &mut vec![])
                .err()
                .map(|f| f.kind),
            Some(ErrorKind::Server)
        ));
    }

    #[test]
    fn usage_on_the_last_event_only_is_not_a_delta() {
        let mut st = StreamState::new(0, Api::Chat.dialect());
        let mut out = vec![];
        for (data, at) in [
            (&br#"{"choices":[{"text":"a"}]}"#[..], 1),
            (br#"{"choices":[{"text":"b"}]}"#, 2),
            (br#"{"choices":[{"text":"c","finish_reason":"length"}],"usage":{"completion_tokens":3}}"#, 3),
        ] {
            st.on_event(data, at, &mut out).ok().unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("\"tokens\":1}").count(), 3, "{text}");
        assert_eq!(st.completion_tokens, Some(3));
    }

    #[test]
    fn nothing_after_done_counts() {
        let mut st = StreamState::new(0, Api::Chat.dialect());
        let mut out = vec![];
        st.on_event(
            br#"{"choices":[{"text":"a","finish_reason":"stop"}]}"#,
            1,
            &mut out,
        )
        .ok()
        .unwrap();
        st.on_event(b"[DONE]", 2, &mut out).ok().unwrap();
        st.on_event(br#"{"choices":[{"text":"late"}]}"#, 50, &mut out)
            .ok()
            .unwrap();
        st.on_event(b"{not json", 51, &mut out).ok().unwrap();
        assert_eq!(st.events, 1);
        assert_eq!(st.done_marker_ns, Some(2));
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);
    }

    #[test]
    fn continuous_usage_counts_tokens_per_event() {
        let mut st = StreamState::new(0, Api::Chat.dialect());
        let mut out = vec![];
        st.on_event(
            br#"{"choices":[{"text":"ab"}],"usage":{"completion_tokens":2}}"#,
            1,
            &mut out,
        )
        .ok()
        .unwrap();
        st.on_event(
            br#"{"choices":[{"text":"c"}],"usage":{"completion_tokens":3}}"#,
            2,
            &mut out,
        )
        .ok()
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"at_ns\":1,\"tokens\":2"), "{text}");
        assert!(text.contains("\"at_ns\":2,\"tokens\":1"), "{text}");
    }
}
