//! API dialects: how a schedule request becomes an HTTP body, and how a streamed chunk is read.
//!
//! One [`Dialect`] per endpoint, one file each (`completions`, `chat`); [`Api`] is the
//! `--api` flag that picks one. A new dialect is a new file and one arm in [`Api::dialect`].
//! Bodies are built once per request, before its send time, so that serialisation never sits
//! between the deadline and the send. Chunks are read on the network thread, once per event:
//! [`read_chunk`] tries the allocation-free scanner (`scan`) and falls back to the serde
//! reference parser (`reference`); both fill the one [`ChunkInfo`] type (`chunk`).

mod chat;
pub(crate) mod chunk;
mod completions;
mod prefix;
pub mod reference;
pub mod scan;

use bytes::Bytes;
pub use chunk::ChunkInfo;
pub use completions::SEPARATOR;
pub use prefix::ChunkPrefix;
use serde::Serialize;
use tokenpipe_format::Request;

/// Which OpenAI-compatible endpoint to call (the `--api` flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST {url}/completions` with `prompt`.
    Completions,
    /// `POST {url}/chat/completions` with one user message.
    Chat,
}

impl Api {
    /// The dialect that speaks this endpoint.
    pub fn dialect(self) -> &'static dyn Dialect {
        match self {
            Api::Completions => &completions::Completions,
            Api::Chat => &chat::Chat,
        }
    }

    /// The path under the base URL.
    pub fn path(self) -> &'static str {
        self.dialect().path()
    }
}

/// One API dialect: the request body it sends and how it reads the streamed answer. Shared by
/// the dispatcher thread (bodies) and the network tasks (chunks), hence `Sync`.
pub trait Dialect: Sync {
    /// The endpoint's path under the base URL (`/completions`).
    fn path(&self) -> &'static str;

    /// Encodes the body for `req`, after the earlier turns of its session (`history`, oldest
    /// first; empty for a request that starts a conversation), or says (naming the field) why
    /// this dialect cannot express it.
    fn encode(
        &self,
        req: &Request,
        history: &[PastTurn],
        opts: &BodyOptions,
    ) -> Result<Bytes, BodyError>;

    /// Reads one SSE event's data; `Err` means it was not a chunk at all. Runs once per streamed
    /// event: it must not allocate for the common chunks. Both OpenAI dialects stream the same
    /// chunk shape, read by [`read_chunk`]; a dialect with another shape overrides this.
    fn read_chunk<'a>(&self, data: &'a [u8]) -> Result<ChunkInfo<'a>, serde_json::Error> {
        read_chunk(data)
    }

    /// [`Dialect::read_chunk`] for the next event of a stream, which may skip the bytes it
    /// shares with that stream's earlier chunks (`prefix`, one per stream; see `prefix`). The
    /// OpenAI dialects do; this default, for a dialect with another chunk shape, ignores it.
    fn read_stream_chunk<'a>(
        &self,
        data: &'a [u8],
        prefix: &mut ChunkPrefix,
    ) -> Result<ChunkInfo<'a>, serde_json::Error> {
        let _ = prefix;
        self.read_chunk(data)
    }
}

/// Why a dialect cannot encode a request: each names the schedule's field at fault, so that
/// the message points at what to change.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The request has neither a text prompt nor token ids.
    #[error("missing field \"prompt\" (or \"prompt_token_ids\")")]
    NoPrompt,
    /// A system prompt cannot be joined with token ids into one completions prompt.
    #[error("field \"system\": a system prompt needs a text prompt; it cannot be joined with \"prompt_token_ids\"")]
    SystemWithTokenIds,
    /// A later turn carries its session's history as text, so its own prompt must be text too.
    #[error("field \"prompt_token_ids\": a later turn of a session needs a text prompt; the history it carries is text")]
    LaterTurnWithTokenIds,
    /// The chat API takes text messages, not token ids.
    #[error("field \"prompt_token_ids\": token-id prompts need --api completions; the chat API takes text")]
    ChatWithTokenIds,
    /// The body could not be serialised (not expected: every member is plain JSON).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// One earlier turn of a session, as the next turn sends it: the prompt that was sent (salt
/// included) and the answer actually received (content only, reasoning left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PastTurn {
    /// The turn's prompt as sent.
    pub prompt: String,
    /// The text the server generated for it.
    pub answer: String,
}

/// Settings shared by every request body.
#[derive(Debug, Clone, Default)]
pub struct BodyOptions {
    /// `model` field; omitted when unknown (servers with one model accept that).
    pub model: Option<String>,
    /// Send `ignore_eos: true` so that every request generates exactly `max_tokens`.
    pub ignore_eos: bool,
    /// `temperature` (`--temperature`): when set, it replaces any a request's `extra_body` or
    /// `--extra-body` gives, since the flag was asked for this run.
    pub temperature: Option<f64>,
    /// Members added to every body (`--extra-body`). A request's own `extra_body` wins for a
    /// member both give (the schedule is the more specific), and neither replaces fire's own
    /// members ([`is_own_member`]).
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
    /// What `stream_options` asks for (`--stream-usage`).
    pub stream_usage: StreamUsage,
}

/// How much usage the stream is asked to carry (the `--stream-usage` flag). Servers that do not
/// know `stream_options` may refuse the request (`off` then helps); fire counts tokens by events
/// when no usage comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamUsage {
    /// `stream_options: {include_usage: true}`: one usage chunk at the end (OpenAI, vLLM, SGLang).
    #[default]
    On,
    /// Also `continuous_usage_stats: true`: usage on every chunk (vLLM), so each event's token
    /// count is exact even when one event carries several tokens.
    Continuous,
    /// No `stream_options` member at all, for servers that refuse it.
    Off,
}

/// Reads one OpenAI-style chunk, whichever endpoint sent it: content may be in
/// `choices[].text` or `choices[].delta.{content,reasoning_content,reasoning}`. Plain chunks are
/// answered by the scanner; anything it does not fully check, by serde.
pub fn read_chunk(data: &[u8]) -> Result<ChunkInfo<'_>, serde_json::Error> {
    match scan::scan(data) {
        Some(info) => Ok(info),
        None => reference::parse(data),
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    continuous_usage_stats: bool,
}

impl StreamUsage {
    fn options(self) -> Option<StreamOptions> {
        match self {
            StreamUsage::On => Some(StreamOptions {
                include_usage: true,
                continuous_usage_stats: false,
            }),
            StreamUsage::Continuous => Some(StreamOptions {
                include_usage: true,
                continuous_usage_stats: true,
            }),
            StreamUsage::Off => None,
        }
    }
}

/// The members every OpenAI-style streaming body has, around the dialect's own `input`
/// (`prompt`, `messages`), which is flattened in after `model`.
#[derive(Serialize)]
struct Body<'a, I: Serialize> {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(flatten)]
    input: I,
    max_tokens: u64,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    ignore_eos: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(flatten)]
    extra: Extra<'a>,
}

/// The members `fire` sets itself, in any dialect; a request's `extra_body` cannot replace them.
const OWN_MEMBERS: &[&str] = &[
    "model",
    "prompt",
    "messages",
    "max_tokens",
    "stream",
    "stream_options",
    "ignore_eos",
];

/// True for the members `fire` sets itself, which no `extra_body` may replace.
pub fn is_own_member(name: &str) -> bool {
    OWN_MEMBERS.contains(&name)
}

type Members = serde_json::Map<String, serde_json::Value>;

/// The added members of one body: a request's `extra_body`, then the run's `--extra-body` for
/// members the request did not give, less fire's own members (and `temperature` when
/// `--temperature` set it).
struct Extra<'a> {
    request: Option<&'a Members>,
    run: Option<&'a Members>,
    temperature_set: bool,
}

impl Extra<'_> {
    fn keeps(&self, name: &str) -> bool {
        let replaced_by_flag = self.temperature_set && name == "temperature";
        !(is_own_member(name) || replaced_by_flag)
    }
}

impl Serialize for Extra<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.request.into_iter().flatten() {
            if self.keeps(k) {
                map.serialize_entry(k, v)?;
            }
        }
        for (k, v) in self.run.into_iter().flatten() {
            if self.keeps(k) && !self.request.is_some_and(|r| r.contains_key(k)) {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// Encodes a streaming body around a dialect's `input` members.
fn encode_body<I: Serialize>(
    req: &Request,
    opts: &BodyOptions,
    input: I,
) -> Result<Bytes, BodyError> {
    let body = Body {
        model: opts.model.as_deref(),
        input,
        max_tokens: req.max_tokens,
        stream: true,
        stream_options: opts.stream_usage.options(),
        ignore_eos: opts.ignore_eos,
        temperature: opts.temperature,
        extra: Extra {
            request: req.extra_body.as_ref(),
            run: opts.extra.as_ref(),
            temperature_set: opts.temperature.is_some(),
        },
    };
    Ok(Bytes::from(serde_json::to_vec(&body)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn req() -> Request {
        Request {
            id: 1,
            prompt: Some("hi \"there\"".into()),
            prompt_tokens: Some(2),
            max_tokens: 7,
            ..Request::default()
        }
    }

    #[test]
    fn extra_body_adds_members_but_never_replaces_fires_own() {
        let opts = BodyOptions {
            model: Some("m".into()),
            ignore_eos: true,
            ..BodyOptions::default()
        };
        let mut r = req();
        r.extra_body = serde_json::from_str(
            r#"{"temperature":0.5,"max_tokens":1,"stream":false,"model":"x","ignore_eos":false,"messages":[]}"#,
        )
        .unwrap();
        let b = Api::Completions.dialect().encode(&r, &[], &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"model":"m","prompt":"hi \"there\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0.5}"#
        );
    }

    #[test]
    fn run_wide_options_and_their_precedence() {
        let mut r = req();
        r.extra_body = serde_json::from_str(r#"{"top_p":0.9,"seed":1,"temperature":0.1}"#).unwrap();
        let opts = BodyOptions {
            temperature: Some(0.7),
            extra: serde_json::from_str(r#"{"seed":2,"top_k":5,"stream":false}"#).unwrap(),
            stream_usage: StreamUsage::Continuous,
            ..BodyOptions::default()
        };
        let b = Api::Completions.dialect().encode(&r, &[], &opts).unwrap();
        assert_eq!(
            std::str::from_utf8(&b).unwrap(),
            r#"{"prompt":"hi \"there\"","max_tokens":7,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"temperature":0.7,"seed":1,"top_p":0.9,"top_k":5}"#
        );
        let off = BodyOptions {
            stream_usage: StreamUsage::Off,
            ..BodyOptions::default()
        };
        let b = Api::Chat.dialect().encode(&req(), &[], &off).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert!(v.get("stream_options").is_none(), "{v}");
        assert!(v.get("temperature").is_none(), "{v}");
    }

    #[test]
    fn paths() {
        assert_eq!(Api::Completions.path(), "/completions");
        assert_eq!(Api::Chat.path(), "/chat/completions");
    }

    #[test]
    fn both_dialects_read_both_chunk_shapes() {
        for api in [Api::Completions, Api::Chat] {
            let d = api.dialect();
            assert!(
                d.read_chunk(br#"{"choices":[{"text":"a"}]}"#)
                    .unwrap()
                    .has_content
            );
            let c = d
                .read_chunk(
                    br#"{"choices":[{"delta":{"content":"\u00e9"},"finish_reason":"st\u006fp"}]}"#,
                )
                .unwrap();
            assert!(c.has_content);
            assert_eq!(c.finish_reason.as_deref(), Some("stop"));
            assert!(d.read_chunk(b"data").is_err());
        }
    }
}
