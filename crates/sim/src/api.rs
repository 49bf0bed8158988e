//! Reading an OpenAI-style generation request: which API it is, and the few fields that shape
//! the answer (how many tokens, streaming or not, usage in the stream, prompt size).
//!
//! Everything else a client sends (`model`, `temperature`, `ignore_eos`, …) is accepted and
//! ignored, but for simserve's own `tokenpipe_fault` members, read by [`crate::fault_kind`].
//! Bad input never panics: it becomes an [`ApiError`] that the server turns into an
//! OpenAI-style 400 answer.

use crate::fault_kind::{self, Asked};
use crate::prompt_count::PromptCount;
use serde_json::{Map, Value};

/// Default `max_tokens` when the request does not say, as in the OpenAI completions API.
pub const DEFAULT_MAX_TOKENS: u64 = 16;

/// The largest `max_tokens` accepted (2^24): far beyond any benchmark, small enough that
/// deadline arithmetic can never overflow.
pub const MAX_TOKENS_LIMIT: u64 = 1 << 24;

/// Which of the two generation endpoints a request came to; it decides the chunk shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `POST /v1/completions`: chunks carry `choices[0].text`.
    Completions,
    /// `POST /v1/chat/completions`: a role chunk first, then `choices[0].delta.content`.
    Chat,
}

/// What a generation request asks for, reduced to what the simulation needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerationRequest {
    /// The API it came to.
    pub kind: Kind,
    /// Tokens to generate, exactly (the simulated model never stops early).
    pub max_tokens: u64,
    /// Whether to answer with a server-sent event stream.
    pub stream: bool,
    /// `stream_options.include_usage`: send a usage chunk (with empty `choices`) before `[DONE]`.
    pub include_usage: bool,
    /// `stream_options.continuous_usage_stats` (vLLM's): usage on every token chunk too, so a
    /// client counts the tokens of a chunk that carries several (`--spec-decode`).
    pub continuous_usage: bool,
    /// Prompt size as the server's [`PromptCount`] counts it (words of the text, or its tokens
    /// under `--tokenizer`; a chat request's template tokens included), or the number of token
    /// ids.
    pub prompt_tokens: u64,
    /// The fault the request asked for itself (`tokenpipe_fault`, `tokenpipe_fault_after`).
    pub fault: Asked,
}

/// A request the server refuses with 400, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The message for the client, naming the field at fault.
    pub message: String,
}

impl ApiError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

/// Parses a request body for the `kind` endpoint, counting its prompt by `count`.
pub fn parse(kind: Kind, body: &[u8], count: &PromptCount) -> Result<GenerationRequest, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(format!("request body is not valid JSON: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(ApiError::new("request body must be a JSON object"));
    };
    let prompt_tokens = match kind {
        Kind::Completions => prompt_tokens(field(&obj, "prompt"), count)?,
        Kind::Chat => messages_tokens(field(&obj, "messages"), count)?,
    };
    // vLLM prefers the newer name when both are given.
    let max_tokens = match kind {
        Kind::Chat => match positive_int(&obj, "max_completion_tokens")? {
            Some(n) => Some(n),
            None => positive_int(&obj, "max_tokens")?,
        },
        Kind::Completions => positive_int(&obj, "max_tokens")?,
    }
    .unwrap_or(DEFAULT_MAX_TOKENS);
    let stream = boolean(&obj, "stream")?.unwrap_or(false);
    let (include_usage, continuous_usage) = match field(&obj, "stream_options") {
        None => (false, false),
        Some(Value::Object(opts)) => {
            let flag = |name: &str| {
                boolean(opts, name)
                    .map_err(|e| ApiError::new(format!("stream_options.{}", e.message)))
                    .map(|b| b.unwrap_or(false))
            };
            // As vLLM: continuous usage only with include_usage.
            let include = flag("include_usage")?;
            (include, include && flag("continuous_usage_stats")?)
        }
        Some(_) => return Err(ApiError::new("'stream_options' must be an object")),
    };
    let fault =
        fault_kind::asked(&obj, MAX_TOKENS_LIMIT).map_err(|e| ApiError::new(e.to_string()))?;
    Ok(GenerationRequest {
        kind,
        max_tokens,
        stream,
        include_usage,
        continuous_usage,
        prompt_tokens,
        fault,
    })
}

/// A field's value, with an explicit `null` read as absent.
pub(crate) fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.get(name).filter(|v| !v.is_null())
}

fn positive_int(obj: &Map<String, Value>, name: &str) -> Result<Option<u64>, ApiError> {
    let Some(v) = field(obj, name) else {
        return Ok(None);
    };
    match v.as_u64() {
        Some(n) if (1..=MAX_TOKENS_LIMIT).contains(&n) => Ok(Some(n)),
        _ => Err(ApiError::new(format!(
            "'{name}' must be an integer from 1 to {MAX_TOKENS_LIMIT}, got {v}"
        ))),
    }
}

fn boolean(obj: &Map<String, Value>, name: &str) -> Result<Option<bool>, ApiError> {
    match field(obj, name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(ApiError::new(format!(
            "'{name}' must be a boolean, got {v}"
        ))),
    }
}

/// `prompt`: a string, an array of strings, an array of token ids, or an array of such arrays
/// (a batch). Texts count as `count` says (with special tokens, as vLLM encodes a completions
/// prompt), token ids count themselves; a batch counts its sum.
pub(crate) fn prompt_tokens(prompt: Option<&Value>, count: &PromptCount) -> Result<u64, ApiError> {
    let count_text = |s: &str| count.count(s, true);
    const WANT: &str =
        "'prompt' must be a string, an array of strings, or an array of token ids (integers)";
    match prompt {
        None => Err(ApiError::new("'prompt' is required")),
        Some(Value::String(s)) => Ok(count_text(s)),
        Some(Value::Array(items)) if items.is_empty() => {
            Err(ApiError::new("'prompt' must not be an empty array"))
        }
        Some(Value::Array(items)) => match &items[0] {
            Value::String(_) => items.iter().try_fold(0, |sum, item| match item {
                Value::String(s) => Ok(sum + count_text(s)),
                _ => Err(ApiError::new(WANT)),
            }),
            Value::Array(_) => items.iter().try_fold(0, |sum, item| match item {
                Value::Array(ids) => Ok(sum + token_ids(ids).ok_or_else(|| ApiError::new(WANT))?),
                _ => Err(ApiError::new(WANT)),
            }),
            _ => token_ids(items).ok_or_else(|| ApiError::new(WANT)),
        },
        Some(_) => Err(ApiError::new(WANT)),
    }
}

/// The number of ids if every item is a non-negative integer.
fn token_ids(ids: &[Value]) -> Option<u64> {
    ids.iter()
        .all(|id| id.as_u64().is_some())
        .then_some(ids.len() as u64)
}

/// `messages`: a non-empty array of `{role, content}`; content is a string, null, or an array of
/// parts whose `text` counts. The counts of all contents (without special tokens: they are the
/// template's) are summed, and the template's tokens added.
pub(crate) fn messages_tokens(
    messages: Option<&Value>,
    count: &PromptCount,
) -> Result<u64, ApiError> {
    let Some(messages) = messages else {
        return Err(ApiError::new("'messages' is required"));
    };
    let Value::Array(list) = messages else {
        return Err(ApiError::new("'messages' must be an array"));
    };
    if list.is_empty() {
        return Err(ApiError::new("'messages' must not be empty"));
    }
    let mut tokens = count.template_tokens();
    for (i, msg) in list.iter().enumerate() {
        let Value::Object(msg) = msg else {
            return Err(ApiError::new(format!("'messages[{i}]' must be an object")));
        };
        if !matches!(msg.get("role"), Some(Value::String(_))) {
            return Err(ApiError::new(format!(
                "'messages[{i}].role' must be a string"
            )));
        }
        tokens += match field(msg, "content") {
            None => 0,
            Some(Value::String(s)) => count.count(s, false),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .map(|s| count.count(s, false))
                .sum(),
            Some(_) => {
                return Err(ApiError::new(format!(
                    "'messages[{i}].content' must be a string or an array of parts"
                )))
            }
        };
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(kind: Kind, body: &str) -> GenerationRequest {
        parse(kind, body.as_bytes(), &PromptCount::default())
            .unwrap_or_else(|e| panic!("{body}: {e}"))
    }

    #[test]
    fn completion_defaults() {
        let r = ok(Kind::Completions, r#"{"model":"x","prompt":"a b  c\nd"}"#);
        assert_eq!(
            r,
            GenerationRequest {
                kind: Kind::Completions,
                max_tokens: DEFAULT_MAX_TOKENS,
                stream: false,
                include_usage: false,
                continuous_usage: false,
                prompt_tokens: 4,
                fault: Asked::default(),
            }
        );
    }

    #[test]
    fn prompt_forms_are_counted() {
        let count = |p: &str| ok(Kind::Completions, &format!(r#"{{"prompt":{p}}}"#)).prompt_tokens;
        assert_eq!(count(r#""""#), 0);
        assert_eq!(count(r#""  one two   three ""#), 3);
        assert_eq!(count("[1, 2, 3, 4, 5]"), 5);
        assert_eq!(count(r#"["a b", "c"]"#), 3);
        assert_eq!(count("[[1, 2], [3]]"), 3);
    }

    #[test]
    fn chat_fields() {
        let r = ok(
            Kind::Chat,
            r#"{"model":"m","messages":[{"role":"system","content":"be brief"},
                {"role":"user","content":[{"type":"text","text":"hi there you"}]},
                {"role":"assistant","content":null}],
               "max_tokens":3,"max_completion_tokens":7,"stream":true,
               "stream_options":{"include_usage":true},"ignore_eos":true,"temperature":0}"#,
        );
        assert_eq!(r.kind, Kind::Chat);
        assert_eq!(r.prompt_tokens, 5);
        assert_eq!(r.max_tokens, 7);
        assert!(r.stream && r.include_usage && !r.continuous_usage);
        let r = ok(
            Kind::Chat,
            r#"{"messages":[{"role":"user","content":"x"}],"max_tokens":3}"#,
        );
        assert_eq!(r.max_tokens, 3);
        assert!(!r.stream && !r.include_usage);
        assert_eq!(r.fault, Asked::default());
    }

    #[test]
    fn template_tokens_are_added_to_chat_requests_only() {
        let count = PromptCount::words(21);
        let chat = r#"{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}"#;
        let r = parse(Kind::Chat, chat.as_bytes(), &count).unwrap();
        assert_eq!(r.prompt_tokens, 3 + 21);
        let r = parse(Kind::Completions, br#"{"prompt":"be brief"}"#, &count).unwrap();
        assert_eq!(r.prompt_tokens, 2);
    }

    #[test]
    fn a_request_can_ask_for_its_own_fault() {
        let r = ok(
            Kind::Completions,
            r#"{"prompt":"a","tokenpipe_fault":"reset","tokenpipe_fault_after":3}"#,
        );
        assert_eq!(
            r.fault,
            Asked {
                choice: fault_kind::Choice::Kind(fault_kind::FaultKind::Reset),
                after: Some(3),
            }
        );
    }

    #[test]
    fn nulls_mean_absent() {
        let r = ok(
            Kind::Completions,
            r#"{"prompt":"a","max_tokens":null,"stream":null,"stream_options":null}"#,
        );
        assert_eq!(r.max_tokens, DEFAULT_MAX_TOKENS);
        assert!(!r.stream && !r.include_usage);
    }

    #[test]
    fn bad_fields_are_refused() {
        let cases: &[(Kind, &str, &str)] = &[
            (Kind::Completions, "{}", "'prompt' is required"),
            (Kind::Completions, r#"{"prompt":5}"#, "'prompt' must be"),
            (Kind::Completions, r#"{"prompt":[]}"#, "empty"),
            (
                Kind::Completions,
                r#"{"prompt":[1,-2]}"#,
                "'prompt' must be",
            ),
            (
                Kind::Completions,
                r#"{"prompt":["a",1]}"#,
                "'prompt' must be",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","max_tokens":0}"#,
                "'max_tokens'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","max_tokens":1.5}"#,
                "'max_tokens'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","max_tokens":"9"}"#,
                "'max_tokens'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","max_tokens":99999999999}"#,
                "'max_tokens'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","stream":"yes"}"#,
                "'stream'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","stream_options":1}"#,
                "'stream_options'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","stream_options":{"include_usage":1}}"#,
                "stream_options.'include_usage'",
            ),
            (Kind::Chat, r#"{"prompt":"a"}"#, "'messages' is required"),
            (Kind::Chat, r#"{"messages":[]}"#, "must not be empty"),
            (Kind::Chat, r#"{"messages":"hi"}"#, "must be an array"),
            (Kind::Chat, r#"{"messages":[1]}"#, "'messages[0]'"),
            (
                Kind::Chat,
                r#"{"messages":[{"content":"x"}]}"#,
                "'messages[0].role'",
            ),
            (
                Kind::Chat,
                r#"{"messages":[{"role":"user","content":3}]}"#,
                "content",
            ),
            (
                Kind::Chat,
                r#"{"messages":[{"role":"user"}],"max_completion_tokens":-1}"#,
                "'max_completion_tokens'",
            ),
            (
                Kind::Completions,
                r#"{"prompt":"a","tokenpipe_fault":"boom"}"#,
                "'tokenpipe_fault': unknown fault `boom`",
            ),
            (
                Kind::Chat,
                r#"{"messages":[{"role":"u"}],"tokenpipe_fault_after":"2"}"#,
                "'tokenpipe_fault_after'",
            ),
            (Kind::Chat, "[1]", "JSON object"),
            (Kind::Chat, "", "not valid JSON"),
        ];
        for (kind, body, want) in cases {
            match parse(*kind, body.as_bytes(), &PromptCount::default()) {
                Ok(r) => panic!("{body} accepted as {r:?}"),
                Err(e) => assert!(e.message.contains(want), "{body}: {e}"),
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut bodies: Vec<Vec<u8>> = vec![
            b"\xff\xfe\x00".to_vec(),
            b"{\"prompt\": \"\xff\"}".to_vec(),
            b"{\"prompt\":".to_vec(),
            b"nul".to_vec(),
            b"[[[[[[[[[[[[".to_vec(),
            "{\"messages\":[{\"role\":\"u\",\"content\":[1,{\"text\":2},{\"text\":\"ok go\"}]}]}"
                .into(),
        ];
        // Every prefix of a valid body, and a few byte flips of it.
        let valid = br#"{"prompt":[1,2],"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}"#;
        for cut in 0..valid.len() {
            bodies.push(valid[..cut].to_vec());
            let mut flipped = valid.to_vec();
            flipped[cut] ^= 0x20;
            bodies.push(flipped);
        }
        for body in &bodies {
            for kind in [Kind::Completions, Kind::Chat] {
                let _ = parse(kind, body, &PromptCount::default());
            }
        }
        let r = parse(Kind::Chat, &bodies[5], &PromptCount::default()).unwrap();
        assert_eq!(r.prompt_tokens, 2);
    }
}
