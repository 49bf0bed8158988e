//! The stream rules: what an answer's SSE events say, one at a time. Which events stand for
//! tokens (and for how many), which carry a server's error or cannot be read, where the answer
//! ends (`[DONE]`, a finish reason) and which endings leave it incomplete. Every server's
//! quirks are settled here, on plain bytes and without I/O (`read` feeds the events in), so
//! that each can be tested as the bytes that server sends.

use crate::api::{chunk::append_text, ChunkPrefix, Dialect};
use crate::failure::{error_chain, snippet, Failure};
use crate::sink::staged::stage_token;
use tokenpipe_format::{ErrorKind, Token};

/// What one stream said so far; survives a timeout or cancel so partial counts are kept.
pub(super) struct StreamState {
    /// The request's id, which its token records carry.
    pub(super) id: u64,
    dialect: &'static dyn Dialect,
    /// The HTTP status, once the head came.
    pub(super) status: Option<u16>,
    /// Events with content (`done.events`).
    pub(super) events: u64,
    /// The server's own counts, from the last usage it sent.
    pub(super) prompt_tokens: Option<u64>,
    /// See `prompt_tokens`.
    pub(super) completion_tokens: Option<u64>,
    /// `usage.completion_tokens_details.reasoning_tokens`, from the last usage that had it.
    usage_reasoning_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens` (`done.cached_tokens`).
    pub(super) cached_tokens: Option<u64>,
    /// Tokens of the token records written so far, and of the reasoning ones among them.
    counted_tokens: u64,
    /// See `counted_tokens`.
    counted_reasoning: u64,
    /// The last finish reason sent.
    pub(super) finish_reason: Option<String>,
    /// When `[DONE]` came; nothing after it is part of the answer.
    pub(super) done_marker_ns: Option<u64>,
    /// When the stream ended (`done.at_ns`): `[DONE]`, or else the end of the body.
    pub(super) end_ns: Option<u64>,
    /// Some content event came without usage, so usage is not continuous (per event).
    usage_gap: bool,
    /// When a closing chunk of empty text without usage arrived, while it is not yet known
    /// whether it stood for a token (see `on_event`).
    closing_empty_ns: Option<u64>,
    /// When the first event of the response arrived, whatever it held.
    pub(super) first_event_ns: Option<u64>,
    /// The answer so far, when it is kept (a session's next turn needs it, or
    /// `--record-text`); `None` otherwise, so that reading a stream allocates nothing for it.
    pub(super) text: Option<String>,
    /// The last chunk kept (its start, or the whole chunk around its answer string), which the
    /// next chunk's read may skip.
    prefix: ChunkPrefix,
}

impl StreamState {
    /// The state of request `id`'s stream before its first event, read in `dialect`.
    pub(super) fn new(id: u64, dialect: &'static dyn Dialect) -> Self {
        Self {
            id,
            dialect,
            status: None,
            events: 0,
            prompt_tokens: None,
            completion_tokens: None,
            usage_reasoning_tokens: None,
            cached_tokens: None,
            counted_tokens: 0,
            counted_reasoning: 0,
            finish_reason: None,
            done_marker_ns: None,
            end_ns: None,
            usage_gap: false,
            closing_empty_ns: None,
            first_event_ns: None,
            text: None,
            prefix: ChunkPrefix::default(),
        }
    }

    /// Keeps the generated text from now on.
    pub(super) fn keep_text(mut self) -> Self {
        self.text = Some(String::new());
        self
    }

    /// Handles one SSE event's data that arrived at `at_ns`; token records go onto `out`.
    pub(super) fn on_event(
        &mut self,
        data: &[u8],
        at_ns: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), Failure> {
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
        let info = self
            .dialect
            .read_stream_chunk(data, &mut self.prefix)
            .map_err(|e| {
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
                self.emit(
                    out,
                    &Token {
                        id: self.id,
                        at_ns: pending,
                        tokens: 1,
                        empty: true,
                        reasoning: false,
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
            self.emit(
                out,
                &Token {
                    id: self.id,
                    at_ns,
                    tokens: u32::try_from(tokens).unwrap_or(u32::MAX),
                    empty: !info.has_content,
                    reasoning: info.is_reasoning(),
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
        if info.reasoning_tokens.is_some() {
            self.usage_reasoning_tokens = info.reasoning_tokens;
        }
        if info.cached_tokens.is_some() {
            self.cached_tokens = info.cached_tokens;
        }
        if let Some(reason) = info.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        Ok(())
    }

    /// Writes one token record, counting its tokens.
    fn emit(&mut self, out: &mut Vec<u8>, token: &Token) {
        self.counted_tokens = self.counted_tokens.saturating_add(u64::from(token.tokens));
        if token.reasoning {
            self.counted_reasoning = self
                .counted_reasoning
                .saturating_add(u64::from(token.tokens));
        }
        stage_token(out, token);
    }

    /// The output's reasoning and answer tokens (`done.reasoning_tokens`, `answer_tokens`):
    /// the server's `completion_tokens_details.reasoning_tokens` when it gave a positive one,
    /// else the tokens of the reasoning events; the answer is the rest of the output (usage,
    /// else counted). `None` for both when the answer had no reasoning.
    pub(super) fn reasoning_split(&self) -> (Option<u64>, Option<u64>) {
        let counted = (self.counted_reasoning > 0).then_some(self.counted_reasoning);
        let reasoning = self.usage_reasoning_tokens.filter(|&n| n > 0).or(counted);
        let total = self.completion_tokens.unwrap_or(self.counted_tokens);
        (reasoning, reasoning.map(|r| total.saturating_sub(r)))
    }

    /// How the stream, read to its end, ended: `Err` when it stopped in the middle of an event
    /// (`partial_event`, what the splitter still holds) or without a finish reason.
    pub(super) fn check_end(&self, partial_event: bool) -> Result<(), Failure> {
        // Bytes after `[DONE]` are not part of the answer, a piece of an event among them too.
        if self.done_marker_ns.is_none() && partial_event {
            return Err(Failure::new(
                ErrorKind::Incomplete,
                "stream ended in the middle of an event",
            ));
        }
        if self.finish_reason.is_none() {
            let how = if self.done_marker_ns.is_some() {
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
}

/// How a response body that failed in transit ends the request: as a `body` failure, unless
/// `[DONE]` had come. The answer is whole then, and its `finish_reason` (or the lack of one)
/// decides: llama-cpp-python's server closes the connection without ending the chunked body
/// after the `[DONE]` of a stream it cut.
pub(super) fn failed_body(st: &StreamState, e: &dyn std::error::Error) -> Option<Failure> {
    match st.done_marker_ns {
        Some(_) => None,
        None => Some(Failure::new(ErrorKind::Body, error_chain(e))),
    }
}

#[cfg(test)]
mod tests;
