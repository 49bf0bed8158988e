//! How a prompt's tokens are counted: whitespace-separated words by default, or with the
//! Hugging Face `tokenizer.json` of `--tokenizer`, as a real engine serving that model counts
//! them. The count is `usage.prompt_tokens`, `/tokenize`'s `count`, and the prompt size the
//! engine prefills; with a tokenizer the prefix cache hashes the tokenizer's ids too.
//!
//! As vLLM: a completions prompt is encoded with the tokenizer's special tokens (its BOS, if its
//! post-processor adds one), chat contents without (a real engine renders the chat template,
//! which holds them, and encodes the whole without special tokens). The template itself is not
//! rendered: `--template-tokens N` adds a fixed N tokens per chat request instead.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokenizers::Tokenizer;

/// The counting rule of one server: words, or a tokenizer; and the chat template's tokens.
#[derive(Clone, Default)]
pub struct PromptCount {
    /// `None`: count words.
    tokenizer: Option<Arc<Loaded>>,
    /// Tokens added to every chat request's count, standing for its chat template.
    template_tokens: u64,
}

/// A tokenizer and the file it came from (for `Debug` and equality).
struct Loaded {
    path: PathBuf,
    tokenizer: Tokenizer,
}

/// Why `--tokenizer` cannot be used: the file named, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--tokenizer {path}: {problem}")]
pub struct TokenizerError {
    /// The path as given.
    pub path: String,
    /// What is wrong: unreadable, or not a Hugging Face tokenizer.json.
    pub problem: String,
}

impl PromptCount {
    /// Counts words, with `template_tokens` more per chat request.
    pub fn words(template_tokens: u64) -> Self {
        Self {
            tokenizer: None,
            template_tokens,
        }
    }

    /// Counts with the `tokenizer.json` at `path`, with `template_tokens` more per chat
    /// request; a missing, unreadable or malformed file is an error naming it.
    pub fn tokenizer(path: &Path, template_tokens: u64) -> Result<Self, TokenizerError> {
        let error = |problem: String| TokenizerError {
            path: path.display().to_string(),
            problem,
        };
        let bytes = std::fs::read(path).map_err(|e| error(e.to_string()))?;
        let tokenizer = Tokenizer::from_bytes(&bytes)
            .map_err(|e| error(format!("not a Hugging Face tokenizer.json: {e}")))?;
        Ok(Self {
            tokenizer: Some(Arc::new(Loaded {
                path: path.to_path_buf(),
                tokenizer,
            })),
            template_tokens,
        })
    }

    /// Whether a tokenizer counts (else words do).
    pub fn has_tokenizer(&self) -> bool {
        self.tokenizer.is_some()
    }

    /// The tokens a chat request's template adds to its contents' count.
    pub fn template_tokens(&self) -> u64 {
        self.template_tokens
    }

    /// The tokens of `text`: of a completions prompt with `special` (the tokenizer's BOS and
    /// such), of a chat content without.
    pub fn count(&self, text: &str, special: bool) -> u64 {
        match &self.tokenizer {
            None => text.split_whitespace().count() as u64,
            Some(t) => t.encode(text, special).len() as u64,
        }
    }

    /// Runs `work`, which counts with this rule, where it cannot hold up the tokens of other
    /// streams: on tokio's blocking threads when a tokenizer counts (encoding a long prompt
    /// takes milliseconds), inline when words do. `None` if the runtime shut down meanwhile.
    pub async fn off_loop<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        if self.tokenizer.is_none() {
            return Some(work());
        }
        match tokio::task::spawn_blocking(work).await {
            Ok(done) => Some(done),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => None,
        }
    }

    /// The tokenizer's ids of `text`, or `None` when words count.
    pub fn ids(&self, text: &str, special: bool) -> Option<Vec<u64>> {
        self.tokenizer
            .as_ref()
            .map(|t| t.encode(text, special).into_iter().map(u64::from).collect())
    }
}

impl Loaded {
    /// The ids of `text`; a text the tokenizer cannot encode (it never happens with a loaded
    /// `tokenizer.json` and valid UTF-8) counts as no tokens rather than failing the request.
    fn encode(&self, text: &str, special: bool) -> Vec<u32> {
        self.tokenizer
            .encode(text, special)
            .map(|e| e.get_ids().to_vec())
            .unwrap_or_default()
    }
}

impl fmt::Debug for PromptCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptCount")
            .field("tokenizer", &self.tokenizer.as_ref().map(|t| &t.path))
            .field("template_tokens", &self.template_tokens)
            .finish()
    }
}

/// Two rules are equal when they read the same file (or both count words) and add the same
/// template tokens.
impl PartialEq for PromptCount {
    fn eq(&self, other: &Self) -> bool {
        let path = |c: &Self| c.tokenizer.as_ref().map(|t| t.path.clone());
        path(self) == path(other) && self.template_tokens == other.template_tokens
    }
}

impl Eq for PromptCount {}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/arrivals/tokenizer.json"
    );

    #[test]
    fn words_by_default_and_the_tokenizer_when_given() {
        let words = PromptCount::default();
        assert_eq!(words.count("  one two\nthree ", true), 3);
        assert_eq!(words.ids("one", true), None);
        let tok = PromptCount::tokenizer(Path::new(FIXTURE), 7).unwrap();
        assert!(tok.has_tokenizer());
        assert_eq!(tok.template_tokens(), 7);
        let text = "the quick brown fox, unbelievably";
        let plain = tok.count(text, false);
        assert_ne!(plain, words.count(text, false), "a word is not a token");
        // The fixture's post-processor adds `<s>` (id 0) in front.
        assert_eq!(tok.count(text, true), plain + 1);
        assert_eq!(tok.ids(text, true).unwrap()[0], 0);
        assert_eq!(tok.ids(text, false).unwrap().len() as u64, plain);
        assert_eq!(tok, PromptCount::tokenizer(Path::new(FIXTURE), 7).unwrap());
        assert_ne!(tok, PromptCount::words(7));
    }

    #[test]
    fn a_missing_or_malformed_file_is_named() {
        let e = PromptCount::tokenizer(Path::new("/nonexistent/tokenizer.json"), 0).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--tokenizer /nonexistent/tokenizer.json: "),
            "{e}"
        );
        let bad = std::env::temp_dir().join(format!("simserve-bad-{}.json", std::process::id()));
        std::fs::write(&bad, b"{\"model\": 3}").unwrap();
        let e = PromptCount::tokenizer(&bad, 0).unwrap_err();
        std::fs::remove_file(&bad).ok();
        assert!(
            e.to_string().contains("not a Hugging Face tokenizer.json"),
            "{e}"
        );
    }
}
