//! Reading the answer to a sent request. Its head decides whether there is a stream to read: a
//! non-2xx status or another content type fails the request, with the start of the body in the
//! message. Then every body frame is stamped the moment it is read, and its events go through
//! the stream rules (`stream`) straight into the output buffer. The connection goes back to the
//! pool only when the body was read to its end.

use super::stream::{failed_body, StreamState};
use super::Ctx;
use crate::failure::{http_error_message, snippet, Failure};
use crate::http::direct::{self, Lease};
use crate::limits::Watch;
use crate::sse_split::SseSplitter;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use std::task::{Context, Poll};
use tokenpipe_format::ErrorKind;

/// The most of a refused answer's body read for its error message.
const REFUSAL_PREFIX: usize = 4096;

/// Reads the head of the answer `resp` into `st` and hands back its body, or fails the request
/// when the answer is no event stream; `lease` is the connection it came on (HTTP/1.1).
pub(super) async fn head(
    watch: &mut Watch,
    lease: Option<&mut Lease<'_>>,
    resp: hyper::Response<Incoming>,
    st: &mut StreamState,
) -> Result<Incoming, Failure> {
    let status = resp.status();
    st.status = Some(status.as_u16());
    let content_type = resp.headers().get(CONTENT_TYPE).cloned();
    let retry_after = resp.headers().get(RETRY_AFTER).cloned();
    let mut body = resp.into_body();
    if !status.is_success() {
        let text = watch
            .wait(false, read_prefix(&mut body, lease, REFUSAL_PREFIX))
            .await?;
        return Err(Failure::new(
            ErrorKind::Http,
            http_error_message(status, retry_after.as_ref(), &text),
        ));
    }
    if let Some(other) = content_type.filter(|t| !is_event_stream(t)) {
        let text = watch
            .wait(false, read_prefix(&mut body, lease, REFUSAL_PREFIX))
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
    Ok(body)
}

/// Reads the event stream `body` to its end into `st`, within the limits of `watch`, and gives
/// `lease` back to the pool when the body ended cleanly.
pub(super) async fn stream(
    ctx: &Ctx,
    watch: &mut Watch,
    mut lease: Option<Lease<'_>>,
    mut body: Incoming,
    st: &mut StreamState,
) -> Result<(), Failure> {
    let mut sse = SseSplitter::new();
    let ended = {
        let mut reading = Reading {
            ctx,
            watch,
            lease: lease.as_mut(),
            body: &mut body,
            st: &mut *st,
            sse: &mut sse,
        };
        std::future::poll_fn(|cx| reading.poll(cx)).await?
    };
    if ended == BodyEnd::Broken {
        // The connection broke, so it cannot carry another request.
        lease = None;
    }
    st.end_ns = Some(st.done_marker_ns.unwrap_or_else(|| ctx.clock.now_ns()));
    // The response was read to its end: the connection can carry the next request.
    if let Some(lease) = lease {
        lease.release();
    }
    st.check_end(sse.has_partial())
}

/// How a body read to its end ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyEnd {
    /// Its last frame came.
    Clean,
    /// The connection broke after the answer was whole (see `failed_body`).
    Broken,
}

/// A body being read: one poll takes every frame the connection has and waits for the next
/// within the limits. A hand-written poll rather than an `await` per frame, so that a token's
/// wake-up runs one compact loop instead of stepping through the states of three futures
/// made anew for each frame (the wait, the connection's drive, the frame).
struct Reading<'a, 'l, 'p> {
    ctx: &'a Ctx,
    watch: &'a mut Watch,
    lease: Option<&'l mut Lease<'p>>,
    body: &'a mut Incoming,
    st: &'a mut StreamState,
    sse: &'a mut SseSplitter,
}

impl Reading<'_, '_, '_> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<BodyEnd, Failure>> {
        loop {
            let frame = match direct::poll_body(self.lease.as_deref_mut(), self.body, cx) {
                Poll::Ready(frame) => frame,
                Poll::Pending => {
                    return match self.watch.poll_expired(cx, self.st.events > 0) {
                        Poll::Ready(expired) => Poll::Ready(Err(expired.into())),
                        Poll::Pending => Poll::Pending,
                    }
                }
            };
            let Some(frame) = frame else {
                return Poll::Ready(Ok(BodyEnd::Clean));
            };
            // The frame's stamp, which is also its read for the idle limit: one clock read a
            // frame.
            let at_ns = self.ctx.clock.now_ns();
            self.watch.read(at_ns);
            let frame = match frame {
                Ok(frame) => frame,
                Err(e) => {
                    return Poll::Ready(match failed_body(self.st, &e) {
                        Some(failure) => Err(failure),
                        None => Ok(BodyEnd::Broken),
                    })
                }
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if let Err(failure) = self.feed(&data, at_ns) {
                return Poll::Ready(Err(failure));
            }
        }
    }

    /// Hands the events of a frame that arrived at `at_ns` to the stream rules.
    fn feed(&mut self, data: &[u8], at_ns: u64) -> Result<(), Failure> {
        let st = &mut *self.st;
        let events_before = st.events;
        let mut failed = None;
        let fed = {
            let mut out = self.ctx.sink.lock();
            self.sse
                .feed(data, |event| match st.on_event(event, at_ns, out.buf()) {
                    Ok(()) => true,
                    Err(f) => {
                        failed = Some(f);
                        false
                    }
                })
        };
        self.ctx.live.tokens(st.events - events_before);
        if let Some(f) = failed {
            return Err(f);
        }
        fed.map_err(|too_long| Failure::new(ErrorKind::Parse, too_long.to_string()))
    }
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

/// The first `limit` bytes (or a little more: whole frames) of `body`, for an error message.
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

    #[test]
    fn event_stream_content_types() {
        for yes in ["text/event-stream", "Text/Event-Stream; charset=utf-8"] {
            assert!(is_event_stream(&HeaderValue::from_static(yes)), "{yes}");
        }
        for no in ["application/json", "text/html", "text/event-streamx"] {
            assert!(!is_event_stream(&HeaderValue::from_static(no)), "{no}");
        }
    }
}
