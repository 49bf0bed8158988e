//! Every body the server writes, byte for byte in vLLM's shapes: SSE chunks, whole JSON answers,
//! the model list and OpenAI-style errors.
//!
//! Chunks are rendered from pieces fixed per server (the model name, escaped once) and per
//! request (the `data: {"id":…,"created":…,"model":…,"choices":` head), so a token costs one
//! allocation of exactly the frame's size and a few copies, no JSON serialisation.

use crate::api::{GenerationRequest, Kind};
use crate::reasoning::Reasoning;
use bytes::Bytes;
use std::io::Write;

/// The event that ends every stream.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// The `garbage` fault's payload: it starts like an answer and breaks off, valid UTF-8 but not
/// JSON.
macro_rules! garbage {
    () => {
        r#"{"id":"garbage","choices":[{"text": not JSON"#
    };
}

/// A body that is not JSON, for the `garbage` fault on an answer that is not streamed.
pub const GARBAGE: &[u8] = garbage!().as_bytes();

/// The `garbage` fault's event: a `data:` line whose payload is [`GARBAGE`].
pub const GARBAGE_EVENT: &[u8] = concat!("data: ", garbage!(), "\n\n").as_bytes();

/// The simulated model's vocabulary, cycled so that answers read as text.
const WORDS: [&str; 9] = [
    " the", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog.",
];

/// The text of token `k` (1-based).
pub fn word(k: u64) -> &'static str {
    WORDS[(k.saturating_sub(1) % WORDS.len() as u64) as usize]
}

const COMPLETION_OPEN: &[u8] = br#"[{"index":0,"text":""#;
const COMPLETION_CLOSE: &[u8] =
    b"\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}\n\n";
const COMPLETION_CLOSE_LAST: &[u8] =
    b"\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}]}\n\n";
const CHAT_OPEN: &[u8] = br#"[{"index":0,"delta":{"content":""#;
const CHAT_CLOSE: &[u8] = b"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
const CHAT_CLOSE_LAST: &[u8] = b"\"},\"logprobs\":null,\"finish_reason\":\"length\"}]}\n\n";
const CHAT_ROLE: &[u8] = b"[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

/// What is fixed for the life of the server: the model name as a JSON string, and the
/// reasoning share of chat answers.
#[derive(Debug, Clone)]
pub struct Renderer {
    model_json: String,
    reasoning: Option<Reasoning>,
}

impl Renderer {
    /// Escapes the model name once.
    pub fn new(model: &str) -> Self {
        Self {
            model_json: serde_json::Value::from(model).to_string(),
            reasoning: None,
        }
    }

    /// Streams the first share of each chat answer as reasoning (`--reasoning-share`).
    pub fn with_reasoning(mut self, reasoning: Option<Reasoning>) -> Self {
        self.reasoning = reasoning.filter(|r| r.share > 0.0);
        self
    }

    /// The pieces of one streamed answer of `max_tokens`.
    pub fn chunks(&self, kind: Kind, id: u64, created: u64, max_tokens: u64) -> Chunks {
        let mut head = Vec::with_capacity(96 + self.model_json.len());
        head.extend_from_slice(b"data: ");
        self.write_envelope(&mut head, kind, id, created, true);
        head.extend_from_slice(b",\"choices\":");
        let reasoning = self.reasoning.filter(|_| kind == Kind::Chat);
        Chunks {
            kind,
            head: head.into_boxed_slice(),
            reasoning_tokens: reasoning.map_or(0, |r| r.tokens(max_tokens)),
            reasoning_open: reasoning.map_or(CHAT_OPEN, |r| r.member.open()),
        }
    }

    /// `{"id":…,"object":…,"created":…,"model":…` without the closing brace.
    fn write_envelope(&self, out: &mut Vec<u8>, kind: Kind, id: u64, created: u64, chunk: bool) {
        let (prefix, object) = match (kind, chunk) {
            (Kind::Completions, _) => ("cmpl", "text_completion"),
            (Kind::Chat, true) => ("chatcmpl", "chat.completion.chunk"),
            (Kind::Chat, false) => ("chatcmpl", "chat.completion"),
        };
        // Writing into a Vec cannot fail.
        let _ = write!(
            out,
            r#"{{"id":"{prefix}-{id}","object":"{object}","created":{created},"model":{}"#,
            self.model_json
        );
    }

    /// The whole non-streamed answer: all the text, `finish_reason` "length", and usage.
    pub fn full_response(&self, req: &GenerationRequest, id: u64, created: u64) -> Bytes {
        self.whole(req, id, created, req.max_tokens, true)
    }

    /// A non-streamed answer broken off after `tokens` tokens: their text, a null
    /// `finish_reason`, and usage counting them (the `bare-done` and `truncate` faults).
    pub fn partial_response(
        &self,
        req: &GenerationRequest,
        id: u64,
        created: u64,
        tokens: u64,
    ) -> Bytes {
        self.whole(req, id, created, tokens, false)
    }

    fn whole(
        &self,
        req: &GenerationRequest,
        id: u64,
        created: u64,
        tokens: u64,
        finished: bool,
    ) -> Bytes {
        let mut out = Vec::with_capacity(256 + self.model_json.len() + 8 * tokens as usize);
        self.write_envelope(&mut out, req.kind, id, created, false);
        out.extend_from_slice(match req.kind {
            Kind::Completions => br#","choices":[{"index":0,"text":""#.as_slice(),
            Kind::Chat => br#","choices":[{"index":0,"message":{"role":"assistant","content":""#,
        });
        for k in 1..=tokens {
            out.extend_from_slice(word(k).as_bytes());
        }
        out.extend_from_slice(match req.kind {
            Kind::Completions => br#"","logprobs":null,"#.as_slice(),
            Kind::Chat => br#""},"logprobs":null,"#,
        });
        out.extend_from_slice(if finished {
            br#""finish_reason":"length","stop_reason":null}],"#.as_slice()
        } else {
            br#""finish_reason":null,"stop_reason":null}],"#
        });
        write_usage(&mut out, req.prompt_tokens, tokens);
        out.push(b'}');
        Bytes::from(out)
    }

    /// The answer to `GET /v1/models`.
    pub fn models(&self) -> Bytes {
        Bytes::from(format!(
            r#"{{"object":"list","data":[{{"id":{},"object":"model","created":0,"owned_by":"tokenpipe"}}]}}"#,
            self.model_json
        ))
    }
}

/// `"usage":{"prompt_tokens":P,"completion_tokens":N,"total_tokens":P+N}`
fn write_usage(out: &mut Vec<u8>, prompt: u64, completion: u64) {
    let _ = write!(
        out,
        r#""usage":{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{}}}"#,
        prompt.saturating_add(completion)
    );
}

/// The usage's detail members, where there is something to say: `prompt_tokens_details`
/// (`cached_tokens`, as vLLM and llama.cpp send it) and `completion_tokens_details`
/// (`reasoning_tokens`, OpenAI's member). Nothing when both are `None`, so a plain usage stays
/// byte for byte vLLM's.
fn write_usage_details(out: &mut Vec<u8>, cached: Option<u64>, reasoning: Option<u64>) {
    if let Some(cached) = cached {
        let _ = write!(
            out,
            r#","prompt_tokens_details":{{"cached_tokens":{cached}}}"#
        );
    }
    if let Some(reasoning) = reasoning {
        let _ = write!(
            out,
            r#","completion_tokens_details":{{"reasoning_tokens":{reasoning}}}"#
        );
    }
}

/// An OpenAI-style error body: `{"error":{"message":…,"type":…,"code":status}}`.
pub fn error(status: u16, kind: &str, message: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"error":{{"message":{},"type":{},"code":{status}}}}}"#,
        serde_json::Value::from(message),
        serde_json::Value::from(kind)
    ))
}

/// An in-stream error event, `data: {"error":{…}}`, as vLLM sends when generation fails after
/// the stream began.
pub fn error_event(status: u16, kind: &str, message: &str) -> Bytes {
    let body = error(status, kind, message);
    let mut out = Vec::with_capacity(body.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(&body);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The per-request pieces of a stream; each method renders one whole SSE event.
#[derive(Debug)]
pub struct Chunks {
    kind: Kind,
    head: Box<[u8]>,
    /// Tokens 1 to this are reasoning (chat with `--reasoning-share`; 0 otherwise).
    reasoning_tokens: u64,
    /// The choices' opening bytes of a reasoning token's event.
    reasoning_open: &'static [u8],
}

impl Chunks {
    /// The chat stream's first event: the assistant role, no content (not a token).
    pub fn role(&self) -> Bytes {
        self.frame(&[CHAT_ROLE])
    }

    /// The event carrying token `k`; the last one says `"finish_reason":"length"`. The first
    /// `reasoning_tokens` of a chat answer go in the reasoning member instead of `content`.
    pub fn token(&self, k: u64, last: bool) -> Bytes {
        let (mut open, close) = match (self.kind, last) {
            (Kind::Completions, false) => (COMPLETION_OPEN, COMPLETION_CLOSE),
            (Kind::Completions, true) => (COMPLETION_OPEN, COMPLETION_CLOSE_LAST),
            (Kind::Chat, false) => (CHAT_OPEN, CHAT_CLOSE),
            (Kind::Chat, true) => (CHAT_OPEN, CHAT_CLOSE_LAST),
        };
        if k <= self.reasoning_tokens {
            open = self.reasoning_open;
        }
        self.frame(&[open, word(k).as_bytes(), close])
    }

    /// The event carrying tokens `k` to `k + n - 1` together (a speculative step's), their
    /// words joined in one `content` or `text` (those still in the reasoning share in the
    /// reasoning member, before the content); `n` = 1 is [`Chunks::token`].
    pub fn tokens(&self, k: u64, n: u64, last: bool) -> Bytes {
        if n <= 1 {
            return self.token(k, last);
        }
        let (open, close) = match (self.kind, last) {
            (Kind::Completions, false) => (COMPLETION_OPEN, COMPLETION_CLOSE),
            (Kind::Completions, true) => (COMPLETION_OPEN, COMPLETION_CLOSE_LAST),
            (Kind::Chat, false) => (CHAT_OPEN, CHAT_CLOSE),
            (Kind::Chat, true) => (CHAT_OPEN, CHAT_CLOSE_LAST),
        };
        // Tokens before `answer` are reasoning; a step across the end of the reasoning carries
        // both members in one delta, as vLLM's reasoning parser sends it.
        let end = k + n;
        let answer = self.reasoning_tokens.clamp(k - 1, end - 1) + 1;
        let reasoning: String = (k..answer).map(word).collect();
        let text: String = (answer..end).map(word).collect();
        match (reasoning.is_empty(), text.is_empty()) {
            (true, _) => self.frame(&[open, text.as_bytes(), close]),
            (false, true) => self.frame(&[self.reasoning_open, reasoning.as_bytes(), close]),
            (false, false) => self.frame(&[
                self.reasoning_open,
                reasoning.as_bytes(),
                b"\",\"content\":\"",
                text.as_bytes(),
                close,
            ]),
        }
    }

    /// [`Chunks::tokens`] with the usage so far (`completion` tokens) in the chunk, as vLLM
    /// writes it under `stream_options.continuous_usage_stats`.
    pub fn tokens_with_usage(&self, k: u64, n: u64, last: bool, prompt: u64) -> Bytes {
        let frame = self.tokens(k, n, last);
        // Every token chunk ends `}]}\n\n`: the usage goes after the choices.
        let body = &frame[..frame.len() - 3];
        let mut out = Vec::with_capacity(frame.len() + 96);
        out.extend_from_slice(body);
        out.push(b',');
        write_usage(&mut out, prompt, k + n - 1);
        out.extend_from_slice(b"}\n\n");
        Bytes::from(out)
    }

    /// The usage event, sent after the last token when `stream_options.include_usage` is set,
    /// with the prompt tokens a prefix cache held (`cached`, when reported) and, for an answer
    /// with reasoning, how many of the `completion` tokens sent were reasoning.
    pub fn usage(&self, prompt: u64, completion: u64, cached: Option<u64>) -> Bytes {
        let mut out = Vec::with_capacity(self.head.len() + 192);
        out.extend_from_slice(&self.head);
        out.extend_from_slice(b"[],");
        write_usage(&mut out, prompt, completion);
        let reasoning = (self.reasoning_tokens > 0).then(|| self.reasoning_tokens.min(completion));
        if cached.is_some() || reasoning.is_some() {
            out.pop();
            write_usage_details(&mut out, cached, reasoning);
            out.push(b'}');
        }
        out.extend_from_slice(b"}\n\n");
        Bytes::from(out)
    }

    /// The head followed by `parts`, in one allocation of exactly the right size (so that
    /// `Bytes::from` keeps it without a second one).
    fn frame(&self, parts: &[&[u8]]) -> Bytes {
        let len = self.head.len() + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.head);
        for part in parts {
            out.extend_from_slice(part);
        }
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests;
