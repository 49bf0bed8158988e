//! One request from send to `done`: POST the body, read the SSE stream frame by frame, stamp
//! each frame the moment it is read, and write a `token` record for every event that carries
//! content. Every path out of here (success, HTTP error, reset, timeout, cancel) writes exactly
//! one `done` record.
//!
//! This file keeps that promise: `Request` is the lifecycle, which writes the `sent` record,
//! then the `done` once, whether the exchange ends or its task is dropped first. The exchange
//! itself is three steps, a file each: `send` (the request, over either transport, up to the
//! response head), `read` (the answer's head and body, frame by frame) and `stream` (the rules
//! that make events into tokens and decide how a stream ended). The `done` of a request that is
//! never sent (`not_sent`) is written here too, for the dispatcher and the send loop, so that
//! one place decides what every `done` holds.

mod read;
mod send;
mod stream;

use crate::api::Dialect;
use crate::failure::Failure;
use crate::http::HttpClient;
use crate::job::{Ended, Job};
use crate::limits::{Limits, Watch};
use crate::live::Counters;
use crate::sink::Sink;
use crate::stop::{Stop, StopReason};
use crate::verdict::{Reaction, Verdict};
use bytes::Bytes;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::Uri;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use stream::StreamState;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{Done, ErrorKind, Grouping, Record, Sent};

pub use send::request_uuid;

/// Everything a request task shares with the others.
pub(crate) struct Ctx {
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
    /// The connect-failure stop (or wait) and the exit status.
    pub verdict: Verdict,
    /// The run's counts, for the progress view and the self-check.
    pub live: Arc<Counters>,
    /// Write each request's generated text in its `done` (`--record-text`).
    pub record_text: bool,
    /// This host's clock against the server's, from the responses' `Date` headers.
    pub server_clock: crate::server_clock::ServerClock,
}

/// One request of the send loop, from before its task first runs to its `done`. It writes the
/// `done` exactly once: when the exchange ends, or when it is dropped first. The send loop
/// aborts every request task when the run stops (so that no task has to watch the stop signal
/// on every frame), and dropping the task's future drops this: a request that was sent ends
/// `cancelled`, one whose task never ran ends `not_sent`.
pub(crate) struct Request {
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
    /// when the job keeps it, and `then` (what the send loop carries for the request).
    ///
    /// A future of one `async move` block rather than an `async fn`, which would hold the
    /// request twice (its argument and the local it moves into); with the send boxed (in
    /// `exchange`) this keeps the task a request runs in small.
    #[allow(clippy::manual_async_fn)]
    pub fn run<T>(mut self, then: T) -> impl Future<Output = (Ended, T)> {
        async move {
            let ctx = self.ctx.clone();
            let job = &mut self.job;
            // While sending waits for the server to come back (`--retry-connect`), the request
            // could leave no earlier than the moment it did: the wait is not the client's.
            if ctx.verdict.connectable().await {
                job.ready_ns = Some(ctx.clock.now_ns());
            }
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
            if let Some(first) = self.st.first_event_ns {
                ctx.live.first_token(first.saturating_sub(sent_ns));
            }
            (self.end(result), then)
        }
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
        match ctx.verdict.record(error_kind, st.status, error.as_deref()) {
            Reaction::Go => {}
            Reaction::Stop => {
                let why = ctx.verdict.not_sent_detail(&ctx.uri.to_string());
                ctx.stop.trigger_because(StopReason::Unreachable, Some(why));
            }
            Reaction::Wait(limit) => send::wait_for_server(ctx, limit),
        }
        let error_kind = error_kind.map(Into::into);
        let (reasoning_tokens, answer_tokens) = st.reasoning_split();
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
            reasoning_tokens,
            answer_tokens,
            cached_tokens: st.cached_tokens,
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
            not_sent(ctx, self.job.id, echo);
            return;
        }
        self.end(Err(Failure::new(
            ErrorKind::Cancelled,
            "run stopped while the request was in flight",
        )));
    }
}

/// Writes the `done` of a request that will never be sent, so that no request goes unrecorded;
/// `why` is its error message.
pub(crate) fn not_sent_because(
    live: &Counters,
    sink: &Sink,
    clock: &RunClock,
    id: u64,
    echo: Grouping,
    why: String,
) {
    live.not_sent();
    sink.record(&Record::Done(Done {
        id,
        at_ns: clock.now_ns(),
        ok: false,
        error_kind: Some(ErrorKind::NotSent.into()),
        error: Some(why),
        grouping: echo,
        ..Done::default()
    }));
}

/// Writes the `done` of a request the run stopped before it was sent; its `error` says why
/// when the stop gave a reason (`Stop::not_sent_error`).
pub(crate) fn not_sent(ctx: &Ctx, id: u64, echo: Grouping) {
    stopped_before_sent(&ctx.live, &ctx.sink, &ctx.clock, &ctx.stop, id, echo);
}

/// [`not_sent`], for the dispatcher, which has no [`Ctx`].
pub(crate) fn stopped_before_sent(
    live: &Counters,
    sink: &Sink,
    clock: &RunClock,
    stop: &Stop,
    id: u64,
    echo: Grouping,
) {
    not_sent_because(live, sink, clock, id, echo, stop.not_sent_error());
}

/// Sends the request and reads its answer into `st`; `Err` is how it failed.
async fn exchange(
    ctx: &Ctx,
    body: Bytes,
    own_headers: Vec<(HeaderName, HeaderValue)>,
    st: &mut StreamState,
) -> Result<(), Failure> {
    let req = send::request(ctx, body, own_headers, st.id)?;
    let send_ns = ctx.clock.now_ns();
    let mut watch = Watch::start(ctx.limits, tokio::time::Instant::now(), send_ns);
    // Sending (a connection leased or opened, the request written) and reading the head are
    // boxed: they are the request task's largest states (3.6 and 0.8 KiB) and over before the
    // first token. Inline, they would make every task that large, and the few bytes each
    // token's wake-up touches (the states of the futures the task is in, the stream's) would
    // lie kilobytes apart, on more cache lines than a compact task needs (BENCHMARKS.md).
    let (mut lease, resp) = Box::pin(send::send(ctx, &mut watch, req)).await?;
    ctx.server_clock
        .observe(resp.headers(), send_ns, ctx.clock.now_ns());
    let body = Box::pin(read::head(&mut watch, lease.as_mut(), resp, st)).await?;
    read::stream(ctx, &mut watch, lease, body, st).await
}
