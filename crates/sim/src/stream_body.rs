//! The streamed answer as a hand-written `http_body::Body`: one struct per request holding its
//! state and one wait for its next deadline, which hyper polls directly.
//!
//! No channel, no task per token: when hyper asks for the next frame, the body either has one
//! due (its deadline passed) and renders it, or waits for the next absolute deadline (one entry
//! on the server's shared timerfd, or its single tokio `Sleep` under virtual time; see
//! [`crate::timetable`]) and returns `Pending`. If the server falls behind, every overdue frame is
//! ready at once, so hyper writes them in one go and the stream is back on its timetable.
//!
//! Event order, as vLLM: (chat only) the role chunk at once, then one chunk per token, the last
//! with `finish_reason` "length", then (if asked) the usage chunk, then `data: [DONE]`.

use crate::api::{GenerationRequest, Kind};
use crate::engine::Departure;
use crate::render::{Chunks, DONE};
use crate::stamps::RequestStamps;
use crate::timetable::Timetable;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Where a stream is in its event sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Chat only: the role chunk is next, due at once.
    Role,
    /// Token `next` is next, due at its deadline.
    Tokens,
    /// The usage chunk is next, due right after the last token.
    Usage,
    /// `[DONE]` is next.
    Done,
    /// Nothing left.
    End,
}

/// One request's server-sent event stream.
pub struct StreamedAnswer {
    chunks: Chunks,
    /// When token `next` is due, and the wait for it while in `Phase::Tokens`.
    timetable: Timetable,
    phase: Phase,
    /// The next token to send (1-based).
    next: u64,
    total: u64,
    prompt_tokens: u64,
    include_usage: bool,
    stamps: RequestStamps,
}

impl StreamedAnswer {
    /// The stream for `req`, its tokens timed by `timetable`.
    pub fn new(
        req: &GenerationRequest,
        chunks: Chunks,
        timetable: Timetable,
        stamps: RequestStamps,
    ) -> Self {
        Self {
            chunks,
            timetable,
            phase: match req.kind {
                Kind::Chat => Phase::Role,
                Kind::Completions => Phase::Tokens,
            },
            next: 1,
            total: req.max_tokens,
            prompt_tokens: req.prompt_tokens,
            include_usage: req.include_usage,
            stamps,
        }
    }

    /// Renders the next event, if it is due.
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        match self.phase {
            Phase::Role => {
                self.phase = Phase::Tokens;
                Poll::Ready(Some(self.chunks.role()))
            }
            Phase::Tokens => {
                ready!(self.timetable.poll_due(cx, self.next));
                let k = self.next;
                let last = k >= self.total;
                let frame = self.chunks.token(k, last);
                if last {
                    self.timetable.depart(Departure::Finished);
                    self.phase = if self.include_usage {
                        Phase::Usage
                    } else {
                        Phase::Done
                    };
                } else {
                    self.next = k + 1;
                }
                // Stamped as late as possible: the frame goes to hyper on return.
                self.stamps.sent(1);
                Poll::Ready(Some(frame))
            }
            Phase::Usage => {
                self.phase = Phase::Done;
                let sent = self.stamps.tokens();
                Poll::Ready(Some(self.chunks.usage(self.prompt_tokens, sent)))
            }
            Phase::Done => {
                self.phase = Phase::End;
                Poll::Ready(Some(Bytes::from_static(DONE)))
            }
            Phase::End => Poll::Ready(None),
        }
    }
}

impl Body for StreamedAnswer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.get_mut()
            .poll_event(cx)
            .map(|event| event.map(|bytes| Ok(Frame::data(bytes))))
    }

    /// True once `[DONE]` has been handed over, so hyper ends the chunked body with that write.
    fn is_end_stream(&self) -> bool {
        self.phase == Phase::End
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::fixed::Fixed;
    use crate::engine::Admission;
    use crate::render::Renderer;
    use crate::waiter::TokenTimer;
    use http_body_util::BodyExt;
    use serde_json::Value;
    use std::sync::Arc;
    use std::time::Duration;
    use tokenpipe_format::clock::monotonic_ns;
    use tokio::time::Instant;

    fn request(kind: Kind, max_tokens: u64, include_usage: bool) -> GenerationRequest {
        GenerationRequest {
            kind,
            max_tokens,
            stream: true,
            include_usage,
            prompt_tokens: 6,
        }
    }

    fn stream(req: &GenerationRequest, ttft_ms: u64, itl_ms: u64) -> StreamedAnswer {
        stream_on(&TokenTimer::tokio(), req, ttft_ms, itl_ms)
    }

    fn stream_on(
        timer: &TokenTimer,
        req: &GenerationRequest,
        ttft_ms: u64,
        itl_ms: u64,
    ) -> StreamedAnswer {
        let engine = Arc::new(Fixed {
            ttft: Duration::from_millis(ttft_ms),
            itl: Duration::from_millis(itl_ms),
        });
        let admission = Admission {
            arrival_ns: timer.now_ns(),
            prompt_tokens: req.prompt_tokens,
            max_tokens: req.max_tokens,
        };
        let timetable = Timetable::admit(engine, timer, &admission);
        let chunks = Renderer::new("sim").chunks(req.kind, 1, 0);
        let stamps = RequestStamps::new(None, None, admission.arrival_ns);
        StreamedAnswer::new(req, chunks, timetable, stamps)
    }

    /// Every event of the stream with the virtual time (since the start) it became ready.
    async fn collect(mut body: StreamedAnswer) -> Vec<(Duration, String)> {
        let start = Instant::now();
        let mut events = Vec::new();
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.unwrap().into_data() else {
                panic!("not a data frame")
            };
            let text = String::from_utf8(data.to_vec()).unwrap();
            let payload = text
                .strip_prefix("data: ")
                .and_then(|t| t.strip_suffix("\n\n"))
                .unwrap_or_else(|| panic!("not one SSE event: {text:?}"));
            events.push((start.elapsed(), payload.to_string()));
        }
        assert!(body.is_end_stream());
        events
    }

    fn check_sequence(kind: Kind, n: u64, usage: bool, events: &[(Duration, String)]) {
        let role = usize::from(kind == Kind::Chat);
        let want = role + n as usize + usize::from(usage) + 1;
        assert_eq!(events.len(), want, "{events:?}");
        assert_eq!(events.last().unwrap().1, "[DONE]");
        let json: Vec<Value> = events[..want - 1]
            .iter()
            .map(|(_, p)| serde_json::from_str(p).unwrap_or_else(|e| panic!("{p}: {e}")))
            .collect();
        if kind == Kind::Chat {
            assert_eq!(json[0]["choices"][0]["delta"]["role"], "assistant");
            assert_eq!(json[0]["choices"][0]["delta"]["content"], "");
        }
        let tokens = &json[role..role + n as usize];
        for (i, t) in tokens.iter().enumerate() {
            let choice = &t["choices"][0];
            let text = match kind {
                Kind::Completions => &choice["text"],
                Kind::Chat => &choice["delta"]["content"],
            };
            assert!(text.as_str().is_some_and(|s| s.starts_with(' ')), "{t}");
            let want = if i + 1 == n as usize { "length" } else { "" };
            assert_eq!(choice["finish_reason"].as_str().unwrap_or(""), want, "{t}");
        }
        if usage {
            let u = &json[want - 2];
            assert_eq!(u["choices"], serde_json::json!([]));
            assert_eq!(u["usage"]["completion_tokens"], n);
            assert_eq!(u["usage"]["prompt_tokens"], 6);
            assert_eq!(u["usage"]["total_tokens"], n + 6);
        }
        for (_, p) in &events[role + n as usize..want - 1] {
            assert!(p.contains("\"usage\""), "{p}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn event_sequences() {
        for kind in [Kind::Completions, Kind::Chat] {
            for usage in [false, true] {
                for n in [1, 2, 17] {
                    let events = collect(stream(&request(kind, n, usage), 5, 1)).await;
                    check_sequence(kind, n, usage, &events);
                }
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_are_ready_exactly_on_their_deadlines() {
        let (ttft, itl, n) = (50, 10, 100);
        for kind in [Kind::Completions, Kind::Chat] {
            let events = collect(stream(&request(kind, n, true), ttft, itl)).await;
            let role = usize::from(kind == Kind::Chat);
            if role == 1 {
                assert_eq!(events[0].0, Duration::ZERO, "role chunk waits for nothing");
            }
            for k in 1..=n {
                let at = events[role + k as usize - 1].0;
                assert_eq!(at, Duration::from_millis(ttft + (k - 1) * itl), "token {k}");
            }
            // Usage and [DONE] follow the last token without delay.
            let last = Duration::from_millis(ttft + (n - 1) * itl);
            assert!(events[role + n as usize..].iter().all(|(t, _)| *t == last));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_reader_gets_overdue_tokens_at_once_and_stays_on_its_timetable() {
        let mut body = stream(&request(Kind::Completions, 10, false), 10, 10);
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(35)).await;
        // Tokens 1..=3 (due at 10, 20, 30 ms) are ready without waiting.
        for _ in 0..3 {
            body.frame().await.unwrap().unwrap();
            assert_eq!(start.elapsed(), Duration::from_millis(35));
        }
        body.frame().await.unwrap().unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(40));
    }

    /// On the real clock with the shared timerfd: every token at or after its deadline, the
    /// sequence intact, and soon after the deadline (loosely: the machine may be loaded).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn precise_pacing_is_never_early() {
        let timer = TokenTimer::start();
        assert!(
            matches!(timer, TokenTimer::Precise(_)),
            "a timerfd on Linux"
        );
        let (ttft, itl, n) = (10, 2, 20);
        let mut body = stream_on(&timer, &request(Kind::Completions, n, false), ttft, itl);
        let origin = body.timetable.arrival_ns();
        let mut late = Vec::new();
        for k in 1..=n {
            body.frame().await.unwrap().unwrap();
            let due = origin + (ttft + (k - 1) * itl) * 1_000_000;
            let now = monotonic_ns();
            assert!(now >= due, "token {k} early by {} ns", due - now);
            late.push(now - due);
        }
        // [DONE] follows at once.
        body.frame().await.unwrap().unwrap();
        assert!(body.frame().await.is_none());
        late.sort_unstable();
        assert!(late[late.len() / 2] < 5_000_000, "{late:?}");
    }
}
