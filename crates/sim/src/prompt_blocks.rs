//! A prompt's block hashes, for the batching engine's prefix cache: the prompt's tokens (the
//! words, tokenizer ids or token ids that [`crate::api`] counts) cut into blocks of
//! [`BLOCK_TOKENS`](crate::engine::batching::prefix::BLOCK_TOKENS), each block's hash covering
//! its tokens and the hash of the block before it, as vLLM's automatic prefix caching names its
//! blocks. A last partial block is not hashed (it is never shared).
//!
//! Computed once per request, in the server, and only for an engine that asks
//! ([`crate::engine::Engine::wants_prefix_blocks`]): the body is read again for the prompt's
//! text, which the request parser does not keep.

use crate::api::Kind;
use crate::engine::batching::prefix::BLOCK_TOKENS;
use crate::prompt_count::PromptCount;
use serde_json::Value;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The block hashes of the prompt in `body`, a request already accepted by [`crate::api::parse`]
/// for `kind`, its texts cut into tokens as `count` counts them. Chat messages count their
/// contents in order, as the parser counts them (the template's tokens, which are not rendered,
/// are not hashed).
pub fn of_body(kind: Kind, body: &[u8], count: &PromptCount) -> Vec<u64> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let mut blocks = Blocks {
        count,
        hashes: Vec::new(),
        current: DefaultHasher::new(),
        in_current: 0,
    };
    match kind {
        Kind::Completions => blocks.prompt(value.get("prompt")),
        Kind::Chat => {
            for message in value
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match message.get("content") {
                    Some(Value::String(s)) => blocks.text(s, false),
                    Some(Value::Array(parts)) => {
                        for part in parts {
                            if let Some(text) = part.get("text").and_then(Value::as_str) {
                                blocks.text(text, false);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    blocks.hashes
}

/// Hashes of the whole blocks so far, and the block being filled.
struct Blocks<'a> {
    /// How texts are cut into tokens.
    count: &'a PromptCount,
    hashes: Vec<u64>,
    current: DefaultHasher,
    in_current: u64,
}

impl Blocks<'_> {
    fn prompt(&mut self, prompt: Option<&Value>) {
        match prompt {
            Some(Value::String(s)) => self.text(s, true),
            Some(Value::Array(items)) => {
                for item in items {
                    match item {
                        Value::String(s) => self.text(s, true),
                        Value::Array(ids) => ids.iter().filter_map(Value::as_u64).for_each(|id| {
                            self.token(id);
                        }),
                        Value::Number(n) => {
                            if let Some(id) = n.as_u64() {
                                self.token(id);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// The tokens of `text` (with `special` tokens or without, as the parser counts it): its
    /// words, or the tokenizer's ids.
    fn text(&mut self, text: &str, special: bool) {
        match self.count.ids(text, special) {
            Some(ids) => ids.into_iter().for_each(|id| self.token(id)),
            None => text.split_whitespace().for_each(|word| self.token(word)),
        }
    }

    /// Adds one token; a block full of them gets its hash, and starts the next block's.
    fn token(&mut self, token: impl Hash) {
        token.hash(&mut self.current);
        self.in_current += 1;
        if self.in_current == BLOCK_TOKENS {
            let hash = self.current.finish();
            self.hashes.push(hash);
            self.current = DefaultHasher::new();
            hash.hash(&mut self.current);
            self.in_current = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_body_words(kind: Kind, body: &[u8]) -> Vec<u64> {
        of_body(kind, body, &PromptCount::default())
    }

    fn words(n: usize, from: usize) -> String {
        (from..from + n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn completion(prompt: &str) -> Vec<u8> {
        serde_json::json!({ "prompt": prompt })
            .to_string()
            .into_bytes()
    }

    #[test]
    fn shared_prefixes_share_leading_blocks_only() {
        let a = of_body_words(Kind::Completions, &completion(&words(40, 0)));
        assert_eq!(a.len(), 2, "40 words: two whole blocks");
        // Same first 20 words, then different: only the first block is shared.
        let b_text = format!("{} {}", words(20, 0), words(20, 100));
        let b = of_body_words(Kind::Completions, &completion(&b_text));
        assert_eq!(a[0], b[0]);
        assert_ne!(a[1], b[1]);
        // A salt in front changes every block.
        let salted = of_body_words(
            Kind::Completions,
            &completion(&format!("s {}", words(40, 0))),
        );
        assert!(salted.iter().all(|h| !a.contains(h)));
        // The same block later in a prompt is another block.
        let same = words(16, 0);
        let twice = of_body_words(Kind::Completions, &completion(&format!("{same} {same}")));
        assert_eq!(twice.len(), 2);
        assert_ne!(twice[0], twice[1]);
    }

    #[test]
    fn chat_and_token_ids_are_hashed_too() {
        let chat = serde_json::json!({"messages": [
            {"role": "system", "content": words(10, 0)},
            {"role": "user", "content": [{"type": "text", "text": words(10, 10)}]},
        ]});
        assert_eq!(
            of_body_words(Kind::Chat, chat.to_string().as_bytes()).len(),
            1
        );
        let ids: Vec<u64> = (0..33).collect();
        let body = serde_json::json!({ "prompt": ids }).to_string();
        assert_eq!(of_body_words(Kind::Completions, body.as_bytes()).len(), 2);
        assert!(of_body_words(Kind::Completions, b"not json").is_empty());
    }

    #[test]
    fn a_tokenizer_cuts_blocks_of_its_tokens() {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/arrivals/tokenizer.json"
        );
        let count = PromptCount::tokenizer(std::path::Path::new(fixture), 0).unwrap();
        // 20 words of several tokens each: more than one block of tokens, none of words.
        let text = vec!["unbelievably"; 20].join(" ");
        let tokens = count.count(&text, true);
        assert!(tokens >= 32, "{tokens}");
        let body = completion(&text);
        assert_eq!(of_body_words(Kind::Completions, &body).len(), 1);
        let blocks = of_body(Kind::Completions, &body, &count);
        assert_eq!(blocks.len() as u64, tokens / BLOCK_TOKENS);
    }
}
