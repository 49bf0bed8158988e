//! How `n` tokens of prompt content are made: the part of a prompt source that knows the
//! tokenizer (or knows it has none).
//!
//! [`Words`] writes `n` words that are one token each in common vocabularies: plain text whose
//! length is approximate (see [`tokenpipe_format::ONE_TOKEN_WORDS`]). [`TokenIds`] writes `n`
//! token ids, exact on any server that accepts ids on /v1/completions. A tokenizer-backed maker
//! writes text of exactly `n` tokens for one model.

use super::Content;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokenpipe_format::ONE_TOKEN_WORDS;

/// Makes prompt content of a given token length.
pub trait TokenMaker {
    /// `n` tokens of content drawn with `rng`.
    fn make(&mut self, n: u64, rng: &mut ChaCha8Rng) -> Content;

    /// Joins two pieces (a shared prefix and a request's own part) into one prompt whose
    /// length is the sum of theirs.
    fn join(&self, first: &Content, second: &Content) -> Content {
        match (first, second) {
            (Content::TokenIds(a), Content::TokenIds(b)) => {
                Content::TokenIds(a.iter().chain(b).copied().collect())
            }
            (Content::Text(a), Content::Text(b)) if a.is_empty() => Content::Text(b.clone()),
            (Content::Text(a), Content::Text(b)) if b.is_empty() => Content::Text(a.clone()),
            (Content::Text(a), Content::Text(b)) => Content::Text(format!("{a} {b}")),
            // Mixed kinds never come from one maker; keep the second as it is.
            (_, b) => b.clone(),
        }
    }

    /// Whether lengths are exact (ids, or text checked with the model's tokenizer) rather than
    /// approximate; written to the header.
    fn exact(&self) -> bool;

    /// Tokens in `text` by this maker's measure: exact with a tokenizer, [`approx_tokens`]
    /// without one. Dataset sources filter and report lengths with it.
    fn count(&self, text: &str) -> u64 {
        approx_tokens(text)
    }

    /// The salt's alphabet for this maker's prompts: words for text, an id range for ids.
    fn salt_alphabet(&self) -> SaltAlphabet {
        SaltAlphabet::DefaultWords
    }
}

/// What the per-run salt is drawn from, for the `schedule` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaltAlphabet {
    /// [`ONE_TOKEN_WORDS`], which readers know without being told.
    DefaultWords,
    /// These words, each checked to be one token.
    Words(Vec<String>),
    /// Token ids in `[start, end)`.
    Ids([u32; 2]),
}

/// An estimate of the tokens in `text` without a tokenizer: one per four characters, the usual
/// figure for English under byte-level BPE vocabularies (GPT-2 to Llama 3), rounded up.
pub fn approx_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Appends `tokens` words drawn with `rng` to `out`, separated by spaces.
pub fn write_words(rng: &mut ChaCha8Rng, tokens: u64, out: &mut String) {
    for i in 0..tokens {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(ONE_TOKEN_WORDS[rng.random_range(0..ONE_TOKEN_WORDS.len())]);
    }
}

/// Words of one token each in common vocabularies, without a tokenizer: lengths are
/// approximate (a chat template and the first word, which lacks its leading space, add a few
/// tokens; an unusual vocabulary may split some words).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Words;

impl TokenMaker for Words {
    fn make(&mut self, n: u64, rng: &mut ChaCha8Rng) -> Content {
        let mut text = String::new();
        write_words(rng, n, &mut text);
        Content::Text(text)
    }

    fn exact(&self) -> bool {
        false
    }
}

/// Token ids uniform in `[start, end)`: exact lengths on /v1/completions (vLLM, SGLang and
/// llama.cpp accept a list of ids as the prompt). Choose a range of ordinary tokens of the
/// model's vocabulary, away from its special tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenIds {
    /// First id drawn.
    pub start: u32,
    /// One past the last id drawn.
    pub end: u32,
}

impl TokenMaker for TokenIds {
    fn make(&mut self, n: u64, rng: &mut ChaCha8Rng) -> Content {
        Content::TokenIds(
            (0..n)
                .map(|_| rng.random_range(self.start..self.end))
                .collect(),
        )
    }

    fn exact(&self) -> bool {
        true
    }

    fn salt_alphabet(&self) -> SaltAlphabet {
        SaltAlphabet::Ids([self.start, self.end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn words_and_ids_have_the_asked_length() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for n in [0u64, 1, 7, 1024] {
            let Content::Text(t) = Words.make(n, &mut rng) else {
                panic!("text")
            };
            assert_eq!(t.split_whitespace().count() as u64, n);
            let Content::TokenIds(ids) = TokenIds { start: 10, end: 20 }.make(n, &mut rng) else {
                panic!("ids")
            };
            assert_eq!(ids.len() as u64, n);
            assert!(ids.iter().all(|i| (10..20).contains(i)));
        }
    }

    #[test]
    fn joining_adds_lengths() {
        let w = Words;
        let joined = w.join(&Content::Text("a b".into()), &Content::Text("c".into()));
        assert_eq!(joined, Content::Text("a b c".into()));
        assert_eq!(
            w.join(&Content::Text(String::new()), &Content::Text("c".into())),
            Content::Text("c".into())
        );
        let ids = w.join(&Content::TokenIds(vec![1]), &Content::TokenIds(vec![2, 3]));
        assert_eq!(ids, Content::TokenIds(vec![1, 2, 3]));
    }
}
