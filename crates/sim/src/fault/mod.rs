//! Simulated failures: simserve can make chosen requests fail in each way a real server fails,
//! so that every failure a client must classify can be produced on demand, end to end.
//!
//! This module decides what a failing answer looks like; [`select`] decides which requests fail
//! (`--fault KIND[:FRACTION]`, or the request's own `"tokenpipe_fault"` member). The stream body
//! and the server only carry out the [`Divert`] or [`WholeDivert`] they are handed.
//!
//! The kinds, for a streamed answer (`after` is the number of tokens sent first, see
//! [`Fault::after`]):
//!
//! | kind            | on the wire                                                           |
//! |-----------------|-----------------------------------------------------------------------|
//! | `http[=STATUS]` | at once: STATUS (default 500) and an OpenAI-style JSON error body      |
//! | `reset`         | after tokens, the connection closes without the final `0` chunk       |
//! | `stall`         | after tokens, nothing more is sent; the connection stays open         |
//! | `garbage`       | after tokens, one `data:` event that is not JSON; the answer goes on   |
//! | `error`         | after tokens, `data: {"error":{…}}` then `data: [DONE]` (as vLLM)     |
//! | `truncate`      | after tokens, the body ends cleanly: no finish_reason, no `[DONE]`    |
//! | `bare-done`     | after tokens, `data: [DONE]` with no finish_reason (llama-cpp-python) |
//! | `json`          | the whole answer as `application/json`, as if `stream` were false     |
//! | `html`          | at once: 200 with a `text/html` page (a proxy's or a login page)      |
//! | `stall=MS`      | after tokens, a pause of MS ms, then the rest on their schedule + MS  |
//! | `slow-headers=MS` | the status and headers held back MS ms; tokens keep their schedule  |
//! | `endless`       | tokens keep coming past `max_tokens`, never a finish_reason or end    |
//! | `long[=N]`      | an answer of N tokens (default 10,000) whatever `max_tokens` says     |
//! | `uncounted`     | the answer as asked; the request is left out of `/metrics`            |
//!
//! `http=429` and `http=503` carry a `Retry-After` header (`--retry-after`). The last five
//! kinds do not break the answer but change its shape ([`Reshape`]): the answer is well formed,
//! and only a client's limits (`fire --idle-timeout`, `--first-token-timeout`, `--timeout`)
//! can make it fail; `uncounted` changes only what the server's counters say of it.
//!
//! A fault acts when token `after + 1` is due (or right after the last token when `after` is
//! all of them), as if the server broke while generating it, and no token of an answer that
//! the fault ends carries a `finish_reason`. An answer that is not streamed fails at the same
//! moment in whole-answer form: `reset` closes the connection with no answer, `stall` never
//! answers, and the others answer 200 with a body that is not JSON (`garbage`), an error object
//! (`error`), the answer's JSON cut short (`truncate`), or the tokens so far with a null
//! `finish_reason` (`bare-done`).

pub mod header;
mod reshape;
pub mod select;

pub use reshape::Reshape;

pub use crate::fault_kind::{
    FaultKind, KindError, DEFAULT_HTTP_STATUS, DEFAULT_LONG_TOKENS, KIND_NAMES, MAX_LONG_TOKENS,
    MAX_PAUSE_MS,
};

use crate::api::GenerationRequest;
use crate::render::{self, Renderer};
use bytes::Bytes;
use std::fmt;

/// The fault one request will suffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// How it fails.
    pub kind: FaultKind,
    /// Tokens sent before it fails, at most the request's `max_tokens` (unused by `http`).
    pub after: u64,
}

/// What the server answers at once for an `http` fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The status, 400 to 599.
    pub status: u16,
    /// The OpenAI error `type`.
    pub kind: &'static str,
    /// The error message.
    pub message: String,
    /// Whether a `Retry-After` header goes with it (429 and 503, as rate limiters and
    /// overloaded servers send it).
    pub retry_after: bool,
}

/// What a streamed answer does at its fault point instead of its next event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Divert {
    /// Fail the body, so that hyper closes the connection without the final chunk.
    Reset,
    /// Send nothing more, ever; the answer ends when the client leaves.
    Stall,
    /// Send this event, then go on with the answer as if nothing happened.
    Insert(Bytes),
    /// End the answer: this event if any, then `[DONE]` if `done`, then the body's clean end.
    Finish {
        /// An event to send first.
        event: Option<Bytes>,
        /// Whether `data: [DONE]` follows.
        done: bool,
    },
}

/// What an answer that is not streamed does at its fault point instead of answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WholeDivert {
    /// Close the connection with no answer.
    Reset,
    /// Never answer.
    Stall,
    /// Answer 200 with this body, which holds `tokens` tokens of text.
    Answer {
        /// The body, sent as `application/json` whatever it holds.
        body: Bytes,
        /// Tokens of text in it, for the stamps file.
        tokens: u64,
    },
}

/// The error a streamed body fails with for `reset`, and the service for an unstreamed
/// `reset`: hyper then drops the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset;

impl fmt::Display for Reset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("simulated connection reset (fault `reset`)")
    }
}

impl std::error::Error for Reset {}

/// The `type` of the error objects faults send, as OpenAI names them.
fn error_type(status: u16) -> &'static str {
    match status {
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

/// The status the in-stream `error` event reports.
const ERROR_EVENT_STATUS: u16 = 500;

impl Fault {
    /// The answer given at once for an `http` fault; `None` for the kinds that act later.
    pub fn refusal(&self) -> Option<Refusal> {
        match self.kind {
            FaultKind::Http(status) => Some(Refusal {
                status,
                kind: error_type(status),
                message: format!("simulated failure (fault `{}`)", self.kind),
                retry_after: matches!(status, 429 | 503),
            }),
            _ => None,
        }
    }

    /// The token whose deadline a later-acting fault waits for before acting: `after + 1`, or
    /// the last token (already sent) when `after` is all of them.
    pub fn due_token(&self, max_tokens: u64) -> u64 {
        self.after.saturating_add(1).min(max_tokens)
    }

    /// Whether the answer ends at the fault, so that no token may carry a `finish_reason`.
    pub fn ends_answer(&self) -> bool {
        !matches!(self.kind, FaultKind::Garbage)
    }

    /// What a stream sends at its fault point.
    pub fn divert(&self) -> Divert {
        match self.kind {
            FaultKind::Reset => Divert::Reset,
            FaultKind::Stall => Divert::Stall,
            FaultKind::Garbage => Divert::Insert(Bytes::from_static(render::GARBAGE_EVENT)),
            FaultKind::Error => Divert::Finish {
                event: Some(render::error_event(
                    ERROR_EVENT_STATUS,
                    error_type(ERROR_EVENT_STATUS),
                    "simulated failure mid-stream (fault `error`)",
                )),
                done: true,
            },
            FaultKind::Truncate => Divert::Finish {
                event: None,
                done: false,
            },
            // The kinds that act before any stream exists, or reshape it instead of diverting
            // it: read as a bare `[DONE]` if they ever got here.
            FaultKind::BareDone
            | FaultKind::Http(_)
            | FaultKind::Json
            | FaultKind::Html
            | FaultKind::StallFor(_)
            | FaultKind::SlowHeaders(_)
            | FaultKind::Endless
            | FaultKind::Long(_)
            | FaultKind::Uncounted => Divert::Finish {
                event: None,
                done: true,
            },
        }
    }

    /// What an answer that is not streamed gets at its fault point.
    pub fn whole(
        &self,
        renderer: &Renderer,
        req: &GenerationRequest,
        id: u64,
        created: u64,
    ) -> WholeDivert {
        let tokens = self.after.min(req.max_tokens);
        match self.kind {
            FaultKind::Reset => WholeDivert::Reset,
            FaultKind::Stall => WholeDivert::Stall,
            FaultKind::Garbage => WholeDivert::Answer {
                body: Bytes::from_static(render::GARBAGE),
                tokens: 0,
            },
            FaultKind::Error => WholeDivert::Answer {
                body: render::error(
                    ERROR_EVENT_STATUS,
                    error_type(ERROR_EVENT_STATUS),
                    "simulated failure (fault `error`)",
                ),
                tokens: 0,
            },
            FaultKind::Truncate => {
                let body = renderer.partial_response(req, id, created, tokens);
                WholeDivert::Answer {
                    body: body.slice(..body.len() / 2),
                    tokens,
                }
            }
            FaultKind::BareDone
            | FaultKind::Http(_)
            | FaultKind::Json
            | FaultKind::Html
            | FaultKind::StallFor(_)
            | FaultKind::SlowHeaders(_)
            | FaultKind::Endless
            | FaultKind::Long(_)
            | FaultKind::Uncounted => WholeDivert::Answer {
                body: renderer.partial_response(req, id, created, tokens),
                tokens,
            },
        }
    }

    /// How a request the fault answers without an event stream is answered instead (`json`,
    /// `html`); `None` for the other kinds.
    pub fn not_stream(&self) -> Option<NotStream> {
        match self.kind {
            FaultKind::Json => Some(NotStream::WholeJson),
            FaultKind::Html => Some(NotStream::Html(Bytes::from_static(HTML_PAGE))),
            _ => None,
        }
    }
}

/// An answer that is not an event stream, whatever the request asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotStream {
    /// The whole answer as JSON, at the last token's deadline, as if `stream` were false.
    WholeJson,
    /// This `text/html` page, at once, with status 200.
    Html(Bytes),
}

/// What the `html` fault answers: the kind of page a proxy or a login form shows.
const HTML_PAGE: &[u8] = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n\
<body><h1>Sign in to continue</h1><p>simulated page (fault `html`)</p></body></html>\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Kind;

    #[test]
    fn kinds_parse_and_print_back() {
        for name in [
            "http=500",
            "http=503",
            "http=429",
            "reset",
            "stall",
            "garbage",
            "error",
            "truncate",
            "bare-done",
            "json",
            "html",
            "stall=250",
            "slow-headers=40",
            "endless",
            "long=10000",
            "uncounted",
        ] {
            let kind = FaultKind::parse(name).unwrap();
            assert_eq!(kind.to_string(), name);
        }
        assert_eq!(FaultKind::parse("http"), Ok(FaultKind::Http(500)));
        assert_eq!(FaultKind::parse("stall"), Ok(FaultKind::Stall));
        assert_eq!(FaultKind::parse("long"), Ok(FaultKind::Long(10_000)));
        for bad in [
            "",
            "HTTP",
            "http=200",
            "http=600",
            "http=",
            "http=5xx",
            "rst",
            "none",
            "stall=",
            "stall=-1",
            "stall=3600001",
            "slow-headers",
            "long=0",
            "long=1000001",
            "endless=3",
            "uncounted=3",
        ] {
            let e = FaultKind::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn refusals_are_openai_errors() {
        let fault = |status| Fault {
            kind: FaultKind::Http(status),
            after: 3,
        };
        let r = fault(503).refusal().unwrap();
        assert_eq!((r.status, r.kind), (503, "server_error"));
        assert!(r.message.contains("http=503"), "{}", r.message);
        assert_eq!(fault(429).refusal().unwrap().kind, "rate_limit_error");
        assert_eq!(fault(404).refusal().unwrap().kind, "invalid_request_error");
        assert!(fault(429).refusal().unwrap().retry_after);
        assert!(fault(503).refusal().unwrap().retry_after);
        assert!(!fault(500).refusal().unwrap().retry_after);
        let reset = Fault {
            kind: FaultKind::Reset,
            after: 3,
        };
        assert_eq!(reset.refusal(), None);
    }

    #[test]
    fn the_fault_point_is_the_next_token_or_the_last() {
        let f = |after| Fault {
            kind: FaultKind::Truncate,
            after,
        };
        assert_eq!(f(0).due_token(10), 1);
        assert_eq!(f(4).due_token(10), 5);
        assert_eq!(f(10).due_token(10), 10);
        assert!(f(1).ends_answer());
        assert!(!Fault {
            kind: FaultKind::Garbage,
            after: 1
        }
        .ends_answer());
    }

    #[test]
    fn whole_answers_fail_in_kind() {
        let renderer = Renderer::new("m");
        let req = GenerationRequest {
            kind: Kind::Completions,
            max_tokens: 4,
            stream: false,
            include_usage: false,
            continuous_usage: false,
            prompt_tokens: 2,
            fault: select::Asked::default(),
        };
        let whole = |kind| Fault { kind, after: 2 }.whole(&renderer, &req, 1, 0);
        assert_eq!(whole(FaultKind::Reset), WholeDivert::Reset);
        assert_eq!(whole(FaultKind::Stall), WholeDivert::Stall);
        let json = |d: WholeDivert| match d {
            WholeDivert::Answer { body, tokens } => {
                (serde_json::from_slice::<serde_json::Value>(&body), tokens)
            }
            other => panic!("{other:?}"),
        };
        assert!(json(whole(FaultKind::Garbage)).0.is_err());
        let (v, _) = json(whole(FaultKind::Error));
        assert_eq!(v.unwrap()["error"]["code"], 500);
        let (v, tokens) = json(whole(FaultKind::Truncate));
        assert!(v.is_err(), "cut short");
        assert_eq!(tokens, 2);
        let (v, tokens) = json(whole(FaultKind::BareDone));
        let v = v.unwrap();
        assert_eq!(tokens, 2);
        assert_eq!(v["choices"][0]["text"], " the quick");
        assert!(v["choices"][0]["finish_reason"].is_null(), "{v}");
        assert_eq!(v["usage"]["completion_tokens"], 2);
    }
}
