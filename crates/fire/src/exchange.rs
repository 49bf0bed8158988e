//! One request from send to `done`: POST the body, read the SSE stream frame by frame, stamp
//! each frame the moment it is read, and write a `token` record for every event that carries
//! content. Every path out of here (success, HTTP error, reset, timeout, cancel) writes exactly
//! one `done` record.

use crate::api::{chunk::append_text, Dialect};
use crate::failure::{
    closed_unanswered, error_chain, http_error_message, not_connected, snippet, Failure,
};
use crate::http::{direct, HttpClient};
use crate::job::{Ended, Job};
use crate::limits::{Limits, Watch};
use crate::sink::Sink;
use crate::sse_split::SseSplitter;
use crate::stop::{Stop, StopReason};
use crate::verdict::Verdict;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use hyper::Uri;
use std::sync::Arc;
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
    /// Extra headers of every request: `-H`, and `Authorization` for `--api-key`.
    pub headers: HeaderMap,
    /// Run clock.
    pub clock: RunClock,
    /// Output.
    pub sink: Arc<Sink>,
    /// The whole-request, first-token and idle limits.
    pub limits: Limits,
    /// The connect limit, for messages (the connector enforces it).
    pub connect_timeout: Duration,
    /// Run stop signal.
    pub stop: Arc<Stop>,
    /// High half of each request's `x-request-id`.
    pub run_hash: u64,
    /// The early-stop rule and the exit status.
    pub verdict: Verdict,
    /// The run's counts, for the progress view and the self-check.
    pub live: Arc<crate::live::Counters>,
    /// Write each request's generated text in its `done` (`--record-text`).
    pub record_text: bool,
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
    /// When a closing chunk of empty text without usage arrived, while it is not yet known
    /// whether it stood for a token (see `on_event`).
    closing_empty_ns: Option<u64>,
    /// When the first event of the response arrived, whatever it held.
    first_event_ns: Option<u64>,
    /// The answer so far, when it is kept (a session's next turn needs it, or
    /// `--record-text`); `None` otherwise, so that reading a stream allocates nothing for it.
    text: Option<String>,
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
            closing_empty_ns: None,
            first_event_ns: None,
            text: None,
        }
    }

    /// Keeps the generated text from now on.
    fn keep_text(mut self) -> Self {
        self.text = Some(String::new());
        self
    }

    /// Handles one SSE event's data that arrived at `at_ns`; token records go onto `out`.
    fn on_event(&mut self, data: &[u8], at_ns: u64, out: &mut Vec<u8>) -> Result<(), Failure> {
        // `[DONE]` ends the stream: whatever a server sends after it is not part of the answer
        // (and would otherwise be stamped after this request's `done`).
        if self.done_marker_ns.is_some() {
            return Ok(());
        }
        if self.first_event_ns.is_none() {
            self.first_event_ns = Some(at_ns);
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
        // With usage on every event so far (vLLM's continuous usage stats), a chunk whose count
        // grew stood for tokens even when it carried no text.
        let grew = !self.usage_gap
            && matches!(
                (info.completion_tokens, self.completion_tokens),
                (Some(now), Some(before)) if now > before
            );
        // A closing chunk of empty text (a finish reason, no usage) may be vLLM's last token,
        // whose usage follows in a chunk of its own, or a closer that stands for no token, as
        // llama.cpp's (which carries the usage) and llama-cpp-python's (which sends none). It
        // counts once the stream goes on after it (more tokens, or the usage); one that only
        // [DONE] or the end of the body follows was a closer.
        if let Some(pending) = self.closing_empty_ns.take() {
            if info.has_content || info.empty_text || info.completion_tokens.is_some() {
                self.usage_gap = true;
                encode_token(
                    out,
                    &Token {
                        id: self.id,
                        at_ns: pending,
                        tokens: 1,
                        empty: true,
                    },
                );
            }
        }
        let closing = info.finished_empty && !info.has_content && !info.empty_text;
        if closing && info.completion_tokens.is_none() {
            self.closing_empty_ns = Some(at_ns);
        } else if info.has_content || info.empty_text || grew {
            // Usage on every token event (vLLM's continuous usage stats) tells how many tokens
            // each carried; usage on the last event alone (llama.cpp) is the total, not a delta.
            self.usage_gap |= info.completion_tokens.is_none();
            let tokens = match (info.completion_tokens, self.usage_gap) {
                (Some(now), false) => now
                    .saturating_sub(self.completion_tokens.unwrap_or(0))
                    .max(1),
                _ => 1,
            };
            if info.has_content {
                self.events += 1;
            }
            encode_token(
                out,
                &Token {
                    id: self.id,
                    at_ns,
                    tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
                    empty: !info.has_content,
                },
            );
        }
        if let (Some(text), Some(raw)) = (&mut self.text, info.text) {
            append_text(raw, text);
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

/// One request of the send loop, from before its task first runs to its `done`. It writes the
/// `done` exactly once: when the exchange ends, or when it is dropped first. The send loop
/// aborts every request task when the run stops (so that no task has to watch the stop signal
/// on every frame), and dropping the task's future drops this: a request that was sent ends
/// `cancelled`, one whose task never ran ends `not_sent`.
pub struct Request {
    ctx: Arc<Ctx>,
    job: Job,
    st: StreamState,
    /// The `sent` record is written: dropping now means `cancelled`, not `not_sent`.
    sent: bool,
    /// The `done` is written.
    ended: bool,
}

impl Request {
    /// Takes `job` into the care of this request; nothing is written until it runs or drops.
    pub fn new(ctx: Arc<Ctx>, job: Job) -> Self {
        let mut st = StreamState::new(job.id, ctx.dialect);
        if job.keep_text || ctx.record_text {
            st = st.keep_text();
        }
        Self {
            ctx,
            job,
            st,
            sent: false,
            ended: false,
        }
    }

    /// Sends the request and records everything about it; returns how it ended, with its text
    /// when the job keeps it.
    pub async fn run(mut self) -> Ended {
        let ctx = self.ctx.clone();
        let job = &mut self.job;
        let body = std::mem::take(&mut job.body);
        let own_headers = std::mem::take(&mut job.headers);
        let sent_ns = ctx.clock.now_ns();
        ctx.sink.record(&Record::Sent(Sent {
            id: job.id,
            scheduled_ns: job.scheduled_ns,
            sent_ns,
        }));
        ctx.live.sent(job.ready_ns.or(job.scheduled_ns), sent_ns);
        self.sent = true;
        let result = exchange(&ctx, body, own_headers, &mut self.st).await;
        self.end(result)
    }

    /// Writes the `done`, and tells the run how the request went.
    fn end(&mut self, result: Result<(), Failure>) -> Ended {
        self.ended = true;
        let ctx = &self.ctx;
        let st = &mut self.st;
        let keep_text = self.job.keep_text;
        let echo = std::mem::take(&mut self.job.echo);
        let at_ns = st.end_ns.unwrap_or_else(|| ctx.clock.now_ns());
        ctx.live.done(result.as_ref().err().map(|f| f.kind));
        ctx.live
            .tokens(st.completion_tokens.unwrap_or(0).saturating_sub(st.events));
        let (ok, error_kind, error) = match result {
            Ok(()) => (true, None, None),
            Err(f) => (false, Some(f.kind), Some(f.message)),
        };
        if ctx.verdict.record(error_kind, st.status, error.as_deref()) {
            ctx.stop.trigger(StopReason::Unreachable);
        }
        let error_kind = error_kind.map(Into::into);
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
            finish_reason: st.finish_reason.take(),
            first_event_ns: st.first_event_ns,
            // Copied only when a session needs the text too.
            text: match (ctx.record_text, keep_text) {
                (true, true) => st.text.clone(),
                (true, false) => st.text.take(),
                (false, _) => None,
            },
            grouping: echo,
        }));
        Ended {
            id: st.id,
            at_ns,
            ok,
            text: if keep_text { st.text.take() } else { None },
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if !self.sent {
            self.ended = true;
            let ctx = &self.ctx;
            let echo = std::mem::take(&mut self.job.echo);
            crate::dispatch::not_sent(&ctx.live, &ctx.sink, &ctx.clock, self.job.id, echo);
            return;
        }
        self.end(Err(Failure::new(
            ErrorKind::Cancelled,
            "run stopped while the request was in flight",
        )));
    }
}

async fn exchange(
    ctx: &Ctx,
    body: Bytes,
    own_headers: Vec<(HeaderName, HeaderValue)>,
    st: &mut StreamState,
) -> Result<(), Failure> {
    let mut req = hyper::Request::post(ctx.uri.clone())
        .body(Full::new(body))
        .map_err(|e| Failure::new(ErrorKind::Connect, e.to_string()))?;
    let headers = req.headers_mut();
    headers.clone_from(&ctx.headers);
    for (name, value) in own_headers {
        headers.insert(name, value);
    }
    if !headers.contains_key(CONTENT_TYPE) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if let Ok(id) = HeaderValue::from_str(&request_uuid(ctx.run_hash, st.id)) {
        headers.insert("x-request-id", id);
    }
    let mut watch = Watch::start(ctx.limits, tokio::time::Instant::now());
    let (mut lease, resp) = match ctx.client.direct() {
        Some(pool) => {
            let (lease, resp) = send_direct(ctx, pool, &mut watch, req).await?;
            (Some(lease), resp)
        }
        None => {
            let resp = watch
                .wait(false, ctx.client.request(req))
                .await?
                .map_err(|e| connect_failure(ctx, &e))?;
            (None, resp)
        }
    };
    let status = resp.status();
    st.status = Some(status.as_u16());
    let content_type = resp.headers().get(CONTENT_TYPE).cloned();
    let retry_after = resp.headers().get(RETRY_AFTER).cloned();
    let mut body = resp.into_body();
    if !status.is_success() {
        let text = watch
            .wait(false, read_prefix(&mut body, lease.as_mut(), 4096))
            .await?;
        return Err(Failure::new(
            ErrorKind::Http,
            http_error_message(status, retry_after.as_ref(), &text),
        ));
    }
    if let Some(other) = content_type.filter(|t| !is_event_stream(t)) {
        let text = watch
            .wait(false, read_prefix(&mut body, lease.as_mut(), 4096))
            .await?;
        let shown = String::from_utf8_lossy(other.as_bytes()).into_owned();
        let hint = if shown.contains("json") {
            " (a server that ignored \"stream\": true?)"
        } else {
            ""
        };
        return Err(Failure::new(
            ErrorKind::NotStream,
            format!(
                "content type {shown:?}, not text/event-stream{hint}: {}",
                snippet(&text)
            ),
        ));
    }
    let mut sse = SseSplitter::new();
    while let Some(frame) = watch
        .wait(st.events > 0, direct::drive(lease.as_mut(), body.frame()))
        .await?
    {
        watch.read(tokio::time::Instant::now());
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => match failed_body(st, &e) {
                Some(failure) => return Err(failure),
                // The connection broke, so it cannot carry another request.
                None => {
                    lease = None;
                    break;
                }
            },
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let at_ns = ctx.clock.now_ns();
        let events_before = st.events;
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
        ctx.live.tokens(st.events - events_before);
        if let Some(f) = failed {
            return Err(f);
        }
        if let Err(too_long) = fed {
            return Err(Failure::new(ErrorKind::Parse, too_long.to_string()));
        }
    }
    st.end_ns = Some(st.done_marker_ns.unwrap_or_else(|| ctx.clock.now_ns()));
    // The response was read to its end: the connection can carry the next request.
    if let Some(lease) = lease {
        lease.release();
    }
    // Bytes after `[DONE]` are not part of the answer, a piece of an event among them too.
    if st.done_marker_ns.is_none() && sse.has_partial() {
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

/// How a response body that failed in transit ends the request: as a `body` failure, unless
/// `[DONE]` had come. The answer is whole then, and its `finish_reason` (or the lack of one)
/// decides: llama-cpp-python's server closes the connection without ending the chunked body
/// after the `[DONE]` of a stream it cut.
fn failed_body(st: &StreamState, e: &dyn std::error::Error) -> Option<Failure> {
    match st.done_marker_ns {
        Some(_) => None,
        None => Some(Failure::new(ErrorKind::Body, error_chain(e))),
    }
}

/// Sends `req` on a pooled HTTP/1.1 connection and waits for the response head.
///
/// A kept-alive connection can be closed by the server just as a request is written on it: the
/// server advertised keep-alive but closes after each streamed response (llama.cpp's
/// `llama-server` does, docs/real-engines.md), and its close had not reached us when the
/// connection was taken from the pool. Such a request was never read, so when a reused
/// connection closes before any byte of an answer, the request is sent once more on a new
/// connection; its `sent_ns` stays the first attempt's, so the reconnect counts in its latency.
/// A server that did read it and then closed (it crashed, say) gets it twice; the end-of-run
/// line counts the requests sent again, so neither case passes unseen.
async fn send_direct<'p>(
    ctx: &Ctx,
    pool: &'p direct::DirectPool,
    watch: &mut Watch,
    req: hyper::Request<Full<Bytes>>,
) -> Result<(direct::Lease<'p>, hyper::Response<hyper::body::Incoming>), Failure> {
    let mut lease = watch
        .wait(false, pool.lease(&ctx.uri))
        .await?
        .map_err(|e| direct_connect_failure(ctx, e))?;
    let again = lease.reused().then(|| copy_request(&req));
    let sending = Box::pin(lease.send(req));
    let first = watch.wait(false, lease.drive(sending)).await?;
    let req = match (first, again) {
        (Ok(resp), _) => return Ok((lease, resp)),
        (Err(e), Some(again)) if closed_unanswered(&e) => again,
        (Err(e), _) => return Err(Failure::new(ErrorKind::Body, error_chain(&e))),
    };
    drop(lease);
    ctx.live.resent();
    let mut lease = watch
        .wait(false, pool.lease_new(&ctx.uri))
        .await?
        .map_err(|e| direct_connect_failure(ctx, e))?;
    let sending = Box::pin(lease.send(req));
    let resp = watch
        .wait(false, lease.drive(sending))
        .await?
        .map_err(|e| Failure::new(ErrorKind::Body, error_chain(&e)))?;
    Ok((lease, resp))
}

/// A copy of a request whose body is held whole, to send it again.
fn copy_request(req: &hyper::Request<Full<Bytes>>) -> hyper::Request<Full<Bytes>> {
    let mut copy = hyper::Request::new(req.body().clone());
    *copy.method_mut() = req.method().clone();
    *copy.uri_mut() = req.uri().clone();
    *copy.version_mut() = req.version();
    copy.headers_mut().clone_from(req.headers());
    copy
}

/// True for `text/event-stream` (any parameters, any case). A response with no content type
/// at all is read as a stream too, since some servers send none.
fn is_event_stream(content_type: &HeaderValue) -> bool {
    content_type
        .to_str()
        .ok()
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("text/event-stream"))
}

/// The failure of a request the client could not send: `connect_timeout` when the connector's
/// limit passed, `connect` for other connection failures, `body` when the connection broke
/// while the request or the response head was in transit.
fn connect_failure(ctx: &Ctx, e: &hyper_util::client::legacy::Error) -> Failure {
    if !e.is_connect() {
        return Failure::new(ErrorKind::Body, error_chain(e));
    }
    not_connected(e, &ctx.uri, ctx.connect_timeout)
}

/// The same classification for a direct HTTP/1.1 connection that could not be had.
fn direct_connect_failure(ctx: &Ctx, e: direct::ConnectError) -> Failure {
    match e {
        direct::ConnectError::Connect(e) => not_connected(&*e, &ctx.uri, ctx.connect_timeout),
        direct::ConnectError::Handshake(e) => Failure::new(ErrorKind::Connect, error_chain(&e)),
    }
}

async fn read_prefix(
    body: &mut hyper::body::Incoming,
    mut lease: Option<&mut direct::Lease<'_>>,
    limit: usize,
) -> Vec<u8> {
    let mut text = Vec::new();
    while text.len() < limit {
        match direct::drive(lease.as_deref_mut(), body.frame()).await {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Api;

    #[test]
    fn event_stream_content_types() {
        for yes in ["text/event-stream", "Text/Event-Stream; charset=utf-8"] {
            assert!(is_event_stream(&HeaderValue::from_static(yes)), "{yes}");
        }
        for no in ["application/json", "text/html", "text/event-streamx"] {
            assert!(!is_event_stream(&HeaderValue::from_static(no)), "{no}");
        }
    }

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

    /// Feeds `events` (data, stamp) and returns the token records as (at_ns, empty).
    fn tokens_of(st: &mut StreamState, events: &[(&str, u64)]) -> Vec<(u64, bool)> {
        let mut out = vec![];
        for (data, at) in events {
            st.on_event(data.as_bytes(), *at, &mut out).ok().unwrap();
        }
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["at_ns"].as_u64().unwrap(), v["empty"] == true)
            })
            .collect()
    }

    #[test]
    fn vllm_completions_empty_text_tokens_count_but_are_marked() {
        let mut st = StreamState::new(0, Api::Completions.dialect()).keep_text();
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"index":0,"text":"a","finish_reason":null}]}"#,
                    10,
                ),
                (
                    r#"{"choices":[{"index":0,"text":"","finish_reason":null}]}"#,
                    20,
                ),
                (
                    r#"{"choices":[{"index":0,"text":"b","finish_reason":"length"}]}"#,
                    30,
                ),
                (
                    r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3}}"#,
                    30,
                ),
                ("[DONE]", 31),
            ],
        );
        assert_eq!(toks, [(10, false), (20, true), (30, false)]);
        assert_eq!(st.events, 2);
        assert_eq!(st.first_event_ns, Some(10));
        assert_eq!(st.text.as_deref(), Some("ab"));
    }

    /// vLLM ends with the last token's chunk, finish reason included, and then usage alone: a
    /// last token whose text is empty still counts (seen on the tiny model's random tokens).
    #[test]
    fn vllm_last_token_with_empty_text_counts() {
        let mut st = StreamState::new(0, Api::Completions.dialect()).keep_text();
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"index":0,"text":"a","finish_reason":null}],"usage":null}"#,
                    10,
                ),
                (
                    r#"{"choices":[{"index":0,"text":"","finish_reason":"length","stop_reason":null}],"usage":null}"#,
                    20,
                ),
                (
                    r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2}}"#,
                    21,
                ),
                ("[DONE]", 22),
            ],
        );
        assert_eq!(toks, [(10, false), (20, true)]);
        assert_eq!(st.events, 1);
        assert_eq!(st.text.as_deref(), Some("a"));
        assert_eq!(st.finish_reason.as_deref(), Some("length"));
    }

    /// llama-cpp-python's server ignores `stream_options` and closes a completions stream with
    /// an empty text and the finish reason, no usage: that chunk stands for no token (one that
    /// decodes to nothing comes as an empty text without a finish reason, and counts).
    #[test]
    fn a_closing_chunk_without_usage_is_no_token() {
        let mut st = StreamState::new(0, Api::Completions.dialect());
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"text":" Map","index":0,"logprobs":null,"finish_reason":null}]}"#,
                    10,
                ),
                (
                    r#"{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":null}]}"#,
                    20,
                ),
                (
                    r#"{"choices":[{"text":"eq","index":0,"logprobs":null,"finish_reason":null}]}"#,
                    30,
                ),
                (
                    r#"{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}]}"#,
                    40,
                ),
                ("[DONE]", 41),
            ],
        );
        assert_eq!(toks, [(10, false), (20, true), (30, false)]);
        assert_eq!(st.events, 2);
        assert_eq!(st.finish_reason.as_deref(), Some("length"));
        // The same closing chunk followed by more of the answer did stand for a token.
        let mut st = StreamState::new(0, Api::Completions.dialect());
        let toks = tokens_of(
            &mut st,
            &[
                (r#"{"choices":[{"text":"","finish_reason":"length"}]}"#, 5),
                (r#"{"choices":[{"text":"z"}]}"#, 6),
            ],
        );
        assert_eq!(toks, [(5, true), (6, false)]);
    }

    /// A body that breaks after `[DONE]` (llama-cpp-python's, after a stream it cut) does not
    /// fail the request; before `[DONE]` it is a `body` failure.
    #[test]
    fn a_body_broken_after_done_is_no_failure() {
        let broken = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed");
        let mut st = StreamState::new(0, Api::Completions.dialect());
        st.on_event(br#"{"choices":[{"text":"a"}]}"#, 1, &mut vec![])
            .ok()
            .unwrap();
        let failure = failed_body(&st, &broken).map(|f| (f.kind, f.message));
        assert!(
            matches!(&failure, Some((ErrorKind::Body, m)) if m.contains("closed")),
            "{:?}",
            failure.map(|f| f.1)
        );
        st.on_event(b"[DONE]", 2, &mut vec![]).ok().unwrap();
        assert!(failed_body(&st, &broken).is_none());
    }

    /// llama.cpp's completions close with an empty text, the finish reason and the usage: the
    /// answer's tokens came before, and that chunk is none.
    #[test]
    fn llama_cpp_completions_closing_chunk_is_no_token() {
        let mut st = StreamState::new(0, Api::Completions.dialect());
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"index":0,"text":"a","finish_reason":null}]}"#,
                    10,
                ),
                (
                    r#"{"choices":[{"index":0,"text":"b","finish_reason":null}]}"#,
                    11,
                ),
                (
                    r#"{"choices":[{"text":"","index":0,"finish_reason":"length"}],"usage":{"completion_tokens":2,"prompt_tokens":3}}"#,
                    12,
                ),
                ("[DONE]", 13),
            ],
        );
        assert_eq!(toks, [(10, false), (11, false)]);
        assert_eq!(st.completion_tokens, Some(2));
    }

    #[test]
    fn vllm_chat_role_chunk_is_the_first_event_but_no_token() {
        let mut st = StreamState::new(0, Api::Chat.dialect());
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
                    5,
                ),
                (
                    r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}"#,
                    9,
                ),
                (
                    r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}"#,
                    12,
                ),
                (
                    r#"{"choices":[{"index":0,"delta":{"content":"y"},"finish_reason":"length"}]}"#,
                    14,
                ),
            ],
        );
        assert_eq!(toks, [(9, false), (12, true), (14, false)]);
        assert_eq!(st.first_event_ns, Some(5));
        assert_eq!(st.text, None, "text is kept only when asked");
    }

    #[test]
    fn llama_cpp_chat_null_role_chunk_and_usage_on_the_last_chunk() {
        let mut st = StreamState::new(0, Api::Chat.dialect()).keep_text();
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}"#,
                    3,
                ),
                (
                    r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
                    7,
                ),
                (
                    r#"{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}"#,
                    8,
                ),
                (
                    r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
                    9,
                ),
                ("[DONE]", 9),
            ],
        );
        assert_eq!(toks, [(7, false), (8, false)]);
        assert_eq!(st.first_event_ns, Some(3));
        assert_eq!(st.text.as_deref(), Some("Hi there"));
        assert_eq!(st.completion_tokens, Some(2));
    }

    #[test]
    fn continuous_usage_growth_without_text_is_an_empty_token() {
        let mut st = StreamState::new(0, Api::Chat.dialect());
        let toks = tokens_of(
            &mut st,
            &[
                (
                    r#"{"choices":[{"delta":{"role":"assistant","content":""}}],"usage":{"completion_tokens":0}}"#,
                    1,
                ),
                (
                    r#"{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}"#,
                    2,
                ),
                (
                    r#"{"choices":[{"delta":{"content":""},"finish_reason":"length"}],"usage":{"completion_tokens":3}}"#,
                    3,
                ),
                (r#"{"choices":[],"usage":{"completion_tokens":3}}"#, 4),
            ],
        );
        assert_eq!(toks, [(2, false), (3, true)]);
        let mut out = vec![];
        let mut st2 = StreamState::new(0, Api::Chat.dialect());
        st2.on_event(
            br#"{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}"#,
            2,
            &mut out,
        )
        .ok()
        .unwrap();
        st2.on_event(br#"{"choices":[{"delta":{"content":""},"finish_reason":"length"}],"usage":{"completion_tokens":3}}"#, 3, &mut out).ok().unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("\"tokens\":2,\"empty\":true"));
    }
}
