//! Text of exactly `n` tokens for one model, checked with its Hugging Face `tokenizer.json`.
//!
//! At load, [`TokenizerMaker`] keeps the words that the tokenizer encodes as one token both at
//! the start of a text and after a space (the shared [`ONE_TOKEN_WORDS`] first, then, if too
//! few of those pass, words from the tokenizer's own vocabulary), and checks that a text of
//! them has as many tokens as words. A prompt of `n` tokens is then `n` such words, encoded
//! once more and corrected (words appended or trimmed) until its count is exactly `n`. Counts
//! never include special tokens: the chat template or BOS a server adds are its own.

use super::maker::{SaltAlphabet, TokenMaker};
use super::{Content, PromptError};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use tokenizers::Tokenizer;
use tokenpipe_format::ONE_TOKEN_WORDS;

/// Fewest usable words a tokenizer must give: fewer would make prompts too repetitive to
/// stand for real text (and hints at a tokenizer this maker does not understand).
pub const MIN_WORDS: usize = 50;

/// Usable shared words below which the tokenizer's own vocabulary is searched for more.
const WANTED_WORDS: usize = 200;

/// Most words kept from the tokenizer's own vocabulary.
const MAX_VOCAB_WORDS: usize = 1000;

/// Rounds of correction before a prompt is given as it is (never reached with words that
/// passed the load-time checks).
const MAX_ROUNDS: usize = 256;

/// Makes text of exact token lengths for the tokenizer it was loaded with.
pub struct TokenizerMaker {
    tokenizer: Tokenizer,
    /// Words of one token each, with or without a leading space, prompts are made of.
    words: Vec<String>,
    /// The shared words among them, for the salt.
    salt: Vec<String>,
}

impl std::fmt::Debug for TokenizerMaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenizerMaker")
            .field("words", &self.words.len())
            .field("salt", &self.salt.len())
            .finish_non_exhaustive()
    }
}

impl TokenizerMaker {
    /// Loads the `tokenizer.json` at `path`; the error names the file and what was wrong with
    /// it, for `arrivals: FILE: ...`.
    pub fn open(path: &Path) -> Result<Self, PromptError> {
        let name = path.display();
        let bytes = std::fs::read(path).map_err(|e| PromptError::new(format!("{name}: {e}")))?;
        let tokenizer = Tokenizer::from_bytes(&bytes).map_err(|e| {
            PromptError::new(format!("{name}: not a Hugging Face tokenizer.json: {e}"))
        })?;
        Self::new(tokenizer).map_err(|e| PromptError::new(format!("{name}: {}", e.message)))
    }

    /// A maker for `tokenizer`, already loaded; fails where it gives fewer than [`MIN_WORDS`]
    /// usable words or does not add up the tokens of words put side by side.
    pub fn new(mut tokenizer: Tokenizer) -> Result<Self, PromptError> {
        // A file's own truncation or padding would change every count.
        tokenizer
            .with_truncation(None)
            .map_err(|e| PromptError::new(format!("cannot turn off truncation: {e}")))?;
        tokenizer.with_padding(None);
        let salt = usable(&tokenizer, ONE_TOKEN_WORDS.iter().copied());
        let mut words = salt.clone();
        if words.len() < WANTED_WORDS {
            let own = vocab_words(&tokenizer, &words);
            words.extend(usable(&tokenizer, own.iter().map(String::as_str)));
        }
        if words.len() < MIN_WORDS {
            return Err(PromptError::new(format!(
                "only {} words encode as one token each (at least {MIN_WORDS} are needed)",
                words.len()
            )));
        }
        let maker = Self {
            tokenizer,
            words,
            salt,
        };
        let all = maker.words.join(" ");
        if maker.tokens(&all) != Some(maker.words.len() as u64) {
            return Err(PromptError::new(
                "the tokens of words side by side do not add up: this tokenizer does not split \
                 text at spaces",
            ));
        }
        Ok(maker)
    }

    /// Tokens in `text`, special tokens left out; `None` where the tokenizer fails on it.
    fn tokens(&self, text: &str) -> Option<u64> {
        tokens(&self.tokenizer, text)
    }
}

/// Tokens `tokenizer` gives `text` without special tokens.
fn tokens(tokenizer: &Tokenizer, text: &str) -> Option<u64> {
    tokenizer
        .encode(text, false)
        .ok()
        .map(|e| e.get_ids().len() as u64)
}

/// Whether `text` is one token that decodes back to it (an unknown word is one token too, the
/// unknown token, in a word-level vocabulary).
fn one_token(tokenizer: &Tokenizer, text: &str) -> bool {
    let Ok(encoding) = tokenizer.encode(text, false) else {
        return false;
    };
    let ids = encoding.get_ids();
    ids.len() == 1
        && tokenizer
            .decode(ids, false)
            .is_ok_and(|back| back.trim() == text.trim())
}

/// The `candidates` that are one token alone and one token after a space, in order, once each.
fn usable<'a>(tokenizer: &Tokenizer, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    candidates
        .filter(|w| seen.insert(*w))
        .filter(|w| one_token(tokenizer, w) && one_token(tokenizer, &format!(" {w}")))
        .map(str::to_string)
        .collect()
}

/// Plain lowercase words of the tokenizer's vocabulary, by id, not already in `have`, at most
/// [`MAX_VOCAB_WORDS`]: candidates where too few shared words pass.
fn vocab_words(tokenizer: &Tokenizer, have: &[String]) -> Vec<String> {
    let mut vocab: Vec<(String, u32)> = tokenizer.get_vocab(false).into_iter().collect();
    vocab.sort_by_key(|(_, id)| *id);
    vocab
        .into_iter()
        .filter_map(|(_, id)| tokenizer.decode(&[id], true).ok())
        .map(|w| w.trim().to_string())
        .filter(|w| (2..=12).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()))
        .filter(|w| !have.contains(w))
        .take(MAX_VOCAB_WORDS)
        .collect()
}

impl TokenMaker for TokenizerMaker {
    fn make(&mut self, n: u64, rng: &mut ChaCha8Rng) -> Content {
        let vocab = self.words.len();
        let mut words: Vec<usize> = (0..n).map(|_| rng.random_range(0..vocab)).collect();
        let text = |words: &[usize]| {
            words
                .iter()
                .map(|&i| self.words[i].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let count = |words: &[usize]| self.tokens(&text(words)).unwrap_or(u64::MAX);
        // With words that passed the load-time checks the first count is `n`; the rest is a
        // guard against a tokenizer that joins some pair of them.
        let mut overshot = false;
        for _ in 0..MAX_ROUNDS {
            let have = count(&words);
            if have == n {
                break;
            }
            if have > n {
                // The longest start of the text that is not too long.
                let (mut low, mut high) = (0, words.len());
                while low < high {
                    let mid = (low + high).div_ceil(2);
                    if count(&words[..mid]) <= n {
                        low = mid;
                    } else {
                        high = mid - 1;
                    }
                }
                words.truncate(low);
                continue;
            }
            let before = words.len();
            let add = if overshot { 1 } else { n - have };
            words.extend((0..add).map(|_| rng.random_range(0..vocab)));
            overshot = count(&words) > n;
            if overshot {
                words.truncate(before);
            }
        }
        Content::Text(text(&words))
    }

    fn exact(&self) -> bool {
        true
    }

    fn count(&self, text: &str) -> u64 {
        self.tokens(text)
            .unwrap_or_else(|| super::maker::approx_tokens(text))
    }

    fn salt_alphabet(&self) -> SaltAlphabet {
        let words = if self.salt.len() >= MIN_WORDS {
            &self.salt
        } else {
            &self.words
        };
        SaltAlphabet::Words(words.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::path::PathBuf;

    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/arrivals/tokenizer.json")
    }

    fn maker() -> TokenizerMaker {
        TokenizerMaker::open(&fixture()).expect("the fixture loads")
    }

    fn text(c: Content) -> String {
        match c {
            Content::Text(t) => t,
            Content::TokenIds(_) => panic!("text expected"),
        }
    }

    /// Tokens by the fixture itself, special tokens left out.
    fn exact(m: &TokenizerMaker, text: &str) -> u64 {
        m.tokenizer.encode(text, false).unwrap().get_ids().len() as u64
    }

    #[test]
    fn prompts_have_exactly_the_asked_length() {
        let mut m = maker();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in [0u64, 1, 7, 100, 1000, 4000] {
            let t = text(m.make(n, &mut rng));
            assert_eq!(exact(&m, &t), n, "{n} tokens asked");
            assert_eq!(m.count(&t), n);
        }
        assert!(m.exact());
    }

    #[test]
    fn counts_leave_special_tokens_out() {
        let m = maker();
        // The fixture's template puts `<s>` first when special tokens are added.
        let with = m.tokenizer.encode("the of", true).unwrap().get_ids().len();
        assert_eq!((with, m.count("the of")), (3, 2));
    }

    #[test]
    fn joins_add_lengths() {
        let mut m = maker();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for (a, b) in [(5u64, 9u64), (1, 1), (0, 3), (64, 0), (200, 300)] {
            let first = m.make(a, &mut rng);
            let second = m.make(b, &mut rng);
            let joined = text(m.join(&first, &second));
            assert_eq!(exact(&m, &joined), a + b, "{a} + {b}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_text() {
        let mut m = maker();
        let a = m.make(500, &mut ChaCha8Rng::seed_from_u64(9));
        let b = m.make(500, &mut ChaCha8Rng::seed_from_u64(9));
        let c = m.make(500, &mut ChaCha8Rng::seed_from_u64(10));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn salt_words_are_one_token_and_add_up_before_a_prompt() {
        let mut m = maker();
        let SaltAlphabet::Words(words) = m.salt_alphabet() else {
            panic!("words expected")
        };
        assert!(words.len() >= MIN_WORDS);
        for w in &words {
            assert_eq!((exact(&m, w), exact(&m, &format!(" {w}"))), (1, 1), "{w}");
            assert!(ONE_TOKEN_WORDS.contains(&w.as_str()));
        }
        // As `fire` salts a prompt: the salt's words, a space, the prompt.
        let salt = words[..4].join(" ");
        let prompt = text(m.make(50, &mut ChaCha8Rng::seed_from_u64(1)));
        assert_eq!(exact(&m, &format!("{salt} {prompt}")), 54);
    }

    #[test]
    fn words_of_several_tokens_are_left_out() {
        let m = maker();
        let kept = usable(&m.tokenizer, ["the", "xylophone", "of", "the"].into_iter());
        assert_eq!(kept, ["the", "of"]);
        assert!(!m.words.iter().any(|w| w == "xylophone"));
    }

    #[test]
    fn correction_reaches_the_length_with_words_of_several_tokens() {
        let mut m = maker();
        m.words = ["the", "of", "xylophone", "serendipity"]
            .map(String::from)
            .to_vec();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for n in [1u64, 2, 13, 100] {
            let t = text(m.make(n, &mut rng));
            assert_eq!(exact(&m, &t), n, "{n} tokens asked: {t}");
        }
    }

    #[test]
    fn a_missing_or_malformed_file_is_named_in_the_error() {
        let missing = PathBuf::from("/nonexistent/tokenizer.json");
        let e = TokenizerMaker::open(&missing).unwrap_err().message;
        assert!(e.starts_with("/nonexistent/tokenizer.json: "), "{e}");
        let dir = std::env::temp_dir().join(format!("tokenpipe-tok-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{\"model\": 3}").unwrap();
        let e = TokenizerMaker::open(&bad).unwrap_err().message;
        assert!(
            e.starts_with(&format!(
                "{}: not a Hugging Face tokenizer.json",
                bad.display()
            )),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_tokenizer_with_too_few_words_is_refused() {
        let vocab: Vec<String> = ["the", "of", "and", "[UNK]"]
            .iter()
            .enumerate()
            .map(|(i, w)| format!("\"{w}\": {i}"))
            .collect();
        let json = format!(
            r#"{{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
                "normalizer": null, "pre_tokenizer": {{"type": "Whitespace"}},
                "post_processor": null, "decoder": null,
                "model": {{"type": "WordLevel", "vocab": {{{}}}, "unk_token": "[UNK]"}}}}"#,
            vocab.join(", ")
        );
        let tokenizer = Tokenizer::from_bytes(json.as_bytes()).expect("a word-level tokenizer");
        let e = TokenizerMaker::new(tokenizer).unwrap_err();
        assert!(e.message.contains("only 3 words"), "{e}");
    }
}
