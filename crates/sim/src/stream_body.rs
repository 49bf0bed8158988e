//! The streamed answer as a hand-written `http_body::Body`: one struct per request holding its
//! state and one wait for its next deadline, which hyper polls directly.
//!
//! No channel, no task per token: when hyper asks for the next frame, the body either has one
//! due (its deadline passed) and renders it, or waits for the next absolute deadline (one entry
//! on the server's shared timerfd, or its single tokio `Sleep` under virtual time; see
//! [`crate::timetable`]) and returns `Pending`. If the server falls behind, every overdue frame is
//! ready at once, so hyper writes them in one go and the stream is back on its timetable.
//!
//! Event order, as vLLM: (chat only) the role chunk, then one chunk per token, the last with
//! `finish_reason` "length", then (if asked) the usage chunk, then `data: [DONE]`. The role
//! chunk leaves with the engine's first output, right before the first token's chunk, as vLLM's
//! `chat_completion_stream_generator` yields it on its first iteration, after prefill (so a
//! client timing the first chunk with `choices` times the prefill, as against vLLM). A
//! `stall=MS` pause after no token comes between the two; a fault after no token acts after
//! the role chunk.
//!
//! A request chosen to fail carries its [`Fault`]; when the fault's point comes the body carries
//! out the [`Divert`] the fault layer names (see [`crate::fault`]) and decides nothing itself.

use crate::api::{GenerationRequest, Kind};
use crate::engine::Departure;
use crate::fault::{Divert, Fault, Reset};
use crate::render::{Chunks, DONE};
use crate::spec_decode::Drafter;
use crate::stamps::RequestStamps;
use crate::timetable::Timetable;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Where a stream is in its event sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Chat only: the role chunk is next, due with the engine's first output.
    Role,
    /// Token `next` is next, due at its deadline.
    Tokens,
    /// The fault acts now: its point was reached.
    Fault,
    /// The usage chunk is next, due right after the last token.
    Usage,
    /// `[DONE]` is next.
    Done,
    /// Nothing left.
    End,
    /// `reset`: hyper was given one turn to write out what it holds; now the body fails.
    Resetting,
    /// `stall`: nothing more, ever.
    Stalled,
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
    continuous_usage: bool,
    stamps: RequestStamps,
    /// The fault still to come, if the request was chosen to fail mid-stream.
    fault: Option<Fault>,
    /// `--spec-decode`: how many tokens each decode step emits; none, one token a step.
    drafter: Option<Drafter>,
    /// The next step to ask the timetable for (1-based): `next` without a drafter.
    step: u64,
    /// Whether the usage reports the prompt tokens the prefix cache held.
    cache_details: bool,
    /// Those tokens, read from the engine at the last token, before the request departs.
    cached_tokens: Option<u64>,
}

impl StreamedAnswer {
    /// The stream for `req`, its tokens timed by `timetable`, failing as `fault` says if given
    /// (an `http` fault never gets this far: it is answered before any stream exists).
    pub fn new(
        req: &GenerationRequest,
        chunks: Chunks,
        timetable: Timetable,
        stamps: RequestStamps,
        fault: Option<Fault>,
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
            continuous_usage: req.continuous_usage,
            stamps,
            fault,
            drafter: None,
            step: 1,
            cache_details: false,
            cached_tokens: None,
        }
    }

    /// Emits several tokens per step as `drafter` draws them (`--spec-decode`); the timetable
    /// then times steps.
    pub fn with_drafter(mut self, drafter: Option<Drafter>) -> Self {
        self.drafter = drafter;
        self
    }

    /// Reports the prompt tokens the engine's prefix cache held in the usage chunk
    /// (`usage.prompt_tokens_details.cached_tokens`), where the engine has a prefix cache.
    pub fn with_cache_details(mut self, on: bool) -> Self {
        self.cache_details = on;
        self
    }

    /// What follows the last token: the usage chunk if asked, else `[DONE]`.
    fn tail(&self) -> Phase {
        if self.include_usage {
            Phase::Usage
        } else {
            Phase::Done
        }
    }

    /// Whether the fault to come ends the answer, so no token may say `finish_reason`.
    fn fault_ends_answer(&self) -> bool {
        self.fault.is_some_and(|f| f.ends_answer())
    }

    /// Renders the next event, if it is due; `Err` only for the `reset` fault.
    fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Reset>>> {
        loop {
            match self.phase {
                Phase::Role => {
                    ready!(self.timetable.poll_first_output(cx));
                    self.phase = Phase::Tokens;
                    return Poll::Ready(Some(Ok(self.chunks.role())));
                }
                Phase::Tokens => {
                    let k = self.next;
                    let due_ns = ready!(self.timetable.poll_due(cx, self.step));
                    if self.fault.is_some_and(|f| k > f.after) {
                        // Token k is due but the server "breaks" while generating it.
                        self.phase = Phase::Fault;
                        continue;
                    }
                    // The first token is the prefill's, alone; a draft step may emit more.
                    let owed = self.total.saturating_sub(k) + 1;
                    let n = match &mut self.drafter {
                        Some(drafter) if k > 1 => {
                            let owed = match self.fault {
                                Some(f) if f.after >= k => owed.min(f.after - k + 1),
                                _ => owed,
                            };
                            drafter.step(owed)
                        }
                        _ => 1,
                    };
                    let last = k + n > self.total;
                    let finish = last && !self.fault_ends_answer();
                    let frame = if self.continuous_usage {
                        self.chunks
                            .tokens_with_usage(k, n, finish, self.prompt_tokens)
                    } else {
                        self.chunks.tokens(k, n, finish)
                    };
                    self.next = k + n;
                    self.step += 1;
                    if last {
                        if self.cache_details {
                            self.cached_tokens = self.timetable.cached_tokens();
                        }
                        self.phase = if self.fault.is_some() {
                            Phase::Fault
                        } else {
                            self.tail()
                        };
                        if !self.fault_ends_answer() {
                            self.timetable.depart(Departure::Finished);
                        }
                    }
                    // Stamped as late as possible: the frame goes to hyper on return.
                    let timetable = &self.timetable;
                    self.stamps.sent(n, || timetable.late_ns(due_ns));
                    if last && !self.fault_ends_answer() {
                        self.stamps.finished();
                    }
                    return Poll::Ready(Some(Ok(frame)));
                }
                Phase::Fault => return self.divert(cx),
                Phase::Usage => {
                    self.phase = Phase::Done;
                    let sent = self.stamps.tokens();
                    let usage = self
                        .chunks
                        .usage(self.prompt_tokens, sent, self.cached_tokens);
                    return Poll::Ready(Some(Ok(usage)));
                }
                Phase::Done => {
                    self.phase = Phase::End;
                    return Poll::Ready(Some(Ok(Bytes::from_static(DONE))));
                }
                Phase::End => return Poll::Ready(None),
                Phase::Resetting => return Poll::Ready(Some(Err(Reset))),
                // No waker kept: only the client leaving (hyper sees the socket close) ends it.
                Phase::Stalled => return Poll::Pending,
            }
        }
    }

    /// Carries out the fault, whose point has come.
    fn divert(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Reset>>> {
        let Some(fault) = self.fault.take() else {
            self.phase = self.tail();
            return self.poll_event(cx);
        };
        let divert = fault.divert();
        if !matches!(divert, Divert::Insert(_)) {
            self.timetable.depart(Departure::Failed);
        }
        match divert {
            Divert::Reset => {
                // Tokens already handed to hyper may still sit in its buffer: yield once so
                // that it writes them, and fail on the next poll.
                self.phase = Phase::Resetting;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Divert::Stall => {
                self.phase = Phase::Stalled;
                Poll::Pending
            }
            Divert::Insert(event) => {
                self.phase = if self.next > self.total {
                    self.tail()
                } else {
                    Phase::Tokens
                };
                Poll::Ready(Some(Ok(event)))
            }
            Divert::Finish { event, done } => {
                self.phase = if done { Phase::Done } else { Phase::End };
                match event {
                    Some(event) => Poll::Ready(Some(Ok(event))),
                    None => self.poll_event(cx),
                }
            }
        }
    }
}

impl Body for StreamedAnswer {
    type Data = Bytes;
    type Error = Reset;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Reset>>> {
        self.get_mut()
            .poll_event(cx)
            .map(|event| event.map(|bytes| bytes.map(Frame::data)))
    }

    /// True once the last event has been handed over, so hyper ends the chunked body with that
    /// write.
    fn is_end_stream(&self) -> bool {
        self.phase == Phase::End
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests;
