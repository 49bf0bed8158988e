//! The reference chunk parser: serde over one streamed JSON chunk of the OpenAI API, reading
//! whether it carries generated content, its finish reason, usage counts, and errors, without
//! allocating a `Vec` for the choices. The scanner in `scan` answers the common chunks faster;
//! this parser answers the rest, and the scanner's tests check it agrees with this one.
//!
//! Content is text in `choices[].text` (completions) or `choices[].delta.content`,
//! `reasoning_content` or `reasoning` (chat); an empty string or null is no content, so a
//! role-only first chunk does not count as the first token. Usage may ride on its own chunk
//! with `"choices": []` (vLLM) or on the last content chunk (llama.cpp), with its
//! `completion_tokens_details.reasoning_tokens` and `prompt_tokens_details.cached_tokens`.

use super::chunk::ChunkInfo;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default)]
    choices: Choices<'a>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
    /// `"error"` in vLLM's error responses (`{"object":"error","message":…}`).
    #[serde(default, borrow)]
    object: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

/// `usage.completion_tokens_details` (OpenAI's): the reasoning share of the output.
#[derive(Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// `usage.prompt_tokens_details`: the prompt tokens a prefix cache served.
#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    text: Option<&'a RawValue>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    reasoning_content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    reasoning: Option<&'a RawValue>,
    #[serde(default, borrow)]
    role: Option<&'a RawValue>,
}

/// Folds the `choices` array as it is parsed, so no Vec is built.
#[derive(Default)]
struct Choices<'a> {
    has_content: bool,
    text: Option<&'a str>,
    empty_text: bool,
    finished_empty: bool,
    finish_reason: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Choices<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Choices<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Choices::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Choices::default();
                while let Some(c) = seq.next_element::<Choice<'de>>()? {
                    let content = c.delta.as_ref().and_then(|d| d.content);
                    let reasoning = c
                        .delta
                        .as_ref()
                        .is_some_and(|d| is_text(d.reasoning_content) || is_text(d.reasoning));
                    let answer = Some(c.text)
                        .filter(|t| is_text(*t))
                        .or(Some(content).filter(|t| is_text(*t)))
                        .flatten();
                    if let Some(answer) = answer {
                        out.text = Some(answer.get());
                    }
                    out.has_content |= answer.is_some() || reasoning;
                    let role = c.delta.as_ref().is_some_and(|d| d.role.is_some());
                    if (is_empty_text(c.text) || is_empty_text(content)) && !role {
                        if c.finish_reason.is_none() {
                            out.empty_text = true;
                        } else {
                            out.finished_empty = true;
                        }
                    }
                    if c.finish_reason.is_some() {
                        out.finish_reason = c.finish_reason;
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A JSON value that is a non-empty string.
fn is_text(v: Option<&RawValue>) -> bool {
    v.is_some_and(|r| {
        let s = r.get();
        s.len() > 2 && s.starts_with('"')
    })
}

/// A JSON value that is the empty string.
fn is_empty_text(v: Option<&RawValue>) -> bool {
    v.is_some_and(|r| r.get() == "\"\"")
}

/// Parses one event's data with serde; `Err` means the data was not a JSON chunk at all.
pub fn parse(data: &[u8]) -> Result<ChunkInfo<'_>, serde_json::Error> {
    let c: Chunk = serde_json::from_slice(data)?;
    Ok(ChunkInfo {
        has_content: c.choices.has_content,
        text: c.choices.text,
        empty_text: c.choices.empty_text,
        finished_empty: c.choices.finished_empty,
        finish_reason: c.choices.finish_reason,
        prompt_tokens: c.usage.as_ref().and_then(|u| u.prompt_tokens),
        completion_tokens: c.usage.as_ref().and_then(|u| u.completion_tokens),
        reasoning_tokens: c
            .usage
            .as_ref()
            .and_then(|u| u.completion_tokens_details.as_ref())
            .and_then(|d| d.reasoning_tokens),
        cached_tokens: c
            .usage
            .as_ref()
            .and_then(|u| u.prompt_tokens_details.as_ref())
            .and_then(|d| d.cached_tokens),
        error: c.error.map(RawValue::get).or_else(|| {
            c.object
                .filter(|o| o.get() == "\"error\"")
                .map(|_| std::str::from_utf8(data).unwrap_or("error"))
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_chunks() {
        let c = parse(br#"{"id":"x","choices":[{"index":0,"text":" hi","logprobs":null,"finish_reason":null}]}"#).unwrap();
        assert!(c.has_content && c.finish_reason.is_none());
        let c = parse(br#"{"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":9,"total_tokens":12}}"#).unwrap();
        assert!(!c.has_content);
        assert_eq!(c.finish_reason.as_deref(), Some("length"));
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(3), Some(9)));
    }

    #[test]
    fn chat_role_chunk_is_not_content() {
        for role in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#,
        ] {
            assert!(!parse(role.as_bytes()).unwrap().has_content, "{role}");
        }
        let c = parse(br#"{"choices":[{"delta":{"content":"\u00e9"}}]}"#).unwrap();
        assert!(c.has_content);
        let c = parse(br#"{"choices":[{"delta":{"reasoning_content":"hmm"}}]}"#).unwrap();
        assert!(c.has_content);
    }

    #[test]
    fn usage_only_and_errors() {
        let c =
            parse(br#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#).unwrap();
        assert!(!c.has_content);
        assert_eq!(c.completion_tokens, Some(2));
        let c = parse(br#"{"error":{"message":"boom","code":500}}"#).unwrap();
        assert!(c.error.unwrap().contains("boom"));
        assert!(parse(b"not json").is_err());
        assert!(parse(br#"{"choices":5}"#).is_err());
    }
}
