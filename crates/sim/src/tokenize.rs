//! `POST /tokenize`, as vLLM answers it: `{"model":…, "prompt": …}` or `{"model":…,
//! "messages": […]}` in, `{"count": N, "max_model_len": M, "tokens": [ids…], "token_strs":
//! null}` out.
//!
//! The count is the one the generation endpoints use for `usage.prompt_tokens` and for the
//! engine ([`crate::api`], [`crate::prompt_count`]): a text counts its whitespace-separated
//! words, or its tokens under `--tokenizer`; token ids count themselves; chat messages count
//! their contents plus `--template-tokens`. The ids are the tokenizer's under `--tokenizer`;
//! without, they stand in for a tokenizer's: a prompt given as ids gets them back, each word of
//! a text gets a stable id from its bytes. A chat template's tokens come first, as id 0 each
//! (stand-ins: the template is not rendered).

use crate::api::{self, ApiError};
use crate::prompt_count::PromptCount;
use serde_json::{json, Map, Value};

/// The size of the stand-in vocabulary that word ids are drawn from.
const VOCABULARY: u64 = 100_000;

/// The answer to a `/tokenize` body for a model of `max_model_len` tokens whose prompts are
/// counted by `count`, or the 400 it deserves.
pub fn answer(body: &[u8], max_model_len: u64, count: &PromptCount) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(format!("request body is not valid JSON: {e}")))?;
    let Value::Object(obj) = value else {
        return Err(ApiError::new("request body must be a JSON object"));
    };
    let (n, tokens) = match api::field(&obj, "messages") {
        Some(messages) => {
            let n = api::messages_tokens(Some(messages), count)?;
            (n, message_ids(messages, count))
        }
        None => {
            let prompt = api::field(&obj, "prompt");
            let n = api::prompt_tokens(prompt, count)
                .map_err(|e| ApiError::new(format!("{} (or give 'messages')", e.message)))?;
            (n, prompt.map(|p| prompt_ids(p, count)).unwrap_or_default())
        }
    };
    Ok(json!({
        "count": n,
        "max_model_len": max_model_len,
        "tokens": tokens,
        "token_strs": Value::Null,
    }))
}

/// The ids of an already validated `prompt`: a batch's are concatenated.
fn prompt_ids(prompt: &Value, count: &PromptCount) -> Vec<u64> {
    let mut ids = Vec::new();
    let mut add = |item: &Value| match item {
        Value::String(s) => ids.extend(text_ids(s, true, count)),
        Value::Number(n) => ids.extend(n.as_u64()),
        Value::Array(inner) => ids.extend(inner.iter().filter_map(Value::as_u64)),
        _ => {}
    };
    match prompt {
        Value::Array(items) => items.iter().for_each(&mut add),
        other => add(other),
    }
    ids
}

/// The ids of already validated chat `messages`: the template's stand-ins, then the tokens of
/// every content, in order.
fn message_ids(messages: &Value, count: &PromptCount) -> Vec<u64> {
    let template = usize::try_from(count.template_tokens()).unwrap_or(usize::MAX);
    let mut ids = vec![0; template];
    for msg in messages.as_array().into_iter().flatten() {
        let content = msg
            .as_object()
            .and_then(|m: &Map<String, Value>| api::field(m, "content"));
        match content {
            Some(Value::String(s)) => ids.extend(text_ids(s, false, count)),
            Some(Value::Array(parts)) => {
                for text in parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                {
                    ids.extend(text_ids(text, false, count));
                }
            }
            _ => {}
        }
    }
    ids
}

/// The ids of `text` as `count` counts it (with `special` tokens or without): the tokenizer's,
/// or one per word.
fn text_ids(text: &str, special: bool, count: &PromptCount) -> Vec<u64> {
    count
        .ids(text, special)
        .unwrap_or_else(|| words(text).collect())
}

/// One id per word of `text` (the words [`PromptCount`] counts without a tokenizer), from its
/// bytes (FNV-1a).
fn words(text: &str) -> impl Iterator<Item = u64> + '_ {
    text.split_whitespace().map(|word| {
        let hash = word.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        hash % VOCABULARY
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Kind;

    fn tokenize(body: &str) -> Value {
        answer(body.as_bytes(), 4096, &PromptCount::default()).unwrap()
    }

    #[test]
    fn counts_agree_with_the_generation_endpoints() {
        let prompts = [
            r#""the quick  brown fox""#,
            r#"["a b", "c"]"#,
            "[1, 2, 3, 99999999]",
            "[[1, 2], [3]]",
        ];
        for p in prompts {
            let t = tokenize(&format!(r#"{{"model":"m","prompt":{p}}}"#));
            let g = api::parse(
                Kind::Completions,
                format!(r#"{{"prompt":{p}}}"#).as_bytes(),
                &PromptCount::default(),
            );
            let count = t["count"].as_u64().unwrap();
            assert_eq!(count, g.unwrap().prompt_tokens, "{p}");
            assert_eq!(t["tokens"].as_array().unwrap().len() as u64, count, "{p}");
            assert_eq!(t["max_model_len"], 4096);
        }
        let messages = r#"[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi there you"}]},{"role":"assistant","content":null}]"#;
        let t = tokenize(&format!(r#"{{"model":"m","messages":{messages}}}"#));
        let g = api::parse(
            Kind::Chat,
            format!(r#"{{"messages":{messages}}}"#).as_bytes(),
            &PromptCount::default(),
        );
        assert_eq!(t["count"], 5);
        assert_eq!(g.unwrap().prompt_tokens, 5);
        assert_eq!(t["tokens"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn ids_are_stable_and_given_ids_come_back() {
        let a = tokenize(r#"{"prompt":"hello world hello"}"#);
        let ids = a["tokens"].as_array().unwrap();
        assert_eq!(ids[0], ids[2]);
        assert_ne!(ids[0], ids[1]);
        assert!(ids.iter().all(|id| id.as_u64().unwrap() < VOCABULARY));
        assert_eq!(tokenize(r#"{"prompt":[7, 8]}"#)["tokens"], json!([7, 8]));
    }

    #[test]
    fn a_tokenizer_gives_its_counts_and_ids_and_the_template_its_stand_ins() {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/arrivals/tokenizer.json"
        );
        let count = PromptCount::tokenizer(std::path::Path::new(fixture), 3).unwrap();
        let text = "unbelievably quick";
        let want = count.ids(text, true).unwrap();
        let t = answer(format!(r#"{{"prompt":"{text}"}}"#).as_bytes(), 64, &count).unwrap();
        assert_eq!(t["count"], want.len());
        assert_eq!(t["tokens"], json!(want));
        let body = format!(r#"{{"messages":[{{"role":"user","content":"{text}"}}]}}"#);
        let t = answer(body.as_bytes(), 64, &count).unwrap();
        let mut want = vec![0, 0, 0];
        want.extend(count.ids(text, false).unwrap());
        assert_eq!(t["count"], want.len());
        assert_eq!(t["tokens"], json!(want));
        let g = api::parse(Kind::Chat, body.as_bytes(), &count).unwrap();
        assert_eq!(g.prompt_tokens, want.len() as u64);
    }

    #[test]
    fn bad_bodies_are_refused_with_the_field_named() {
        for (body, says) in [
            ("{", "not valid JSON"),
            ("[]", "JSON object"),
            ("{}", "'prompt' is required"),
            (r#"{"prompt":5}"#, "'prompt' must be"),
            (r#"{"messages":[]}"#, "'messages' must not be empty"),
            (r#"{"messages":[{"content":"x"}]}"#, "role"),
        ] {
            let e = answer(body.as_bytes(), 4096, &PromptCount::default()).unwrap_err();
            assert!(e.message.contains(says), "{body}: {}", e.message);
        }
    }
}
