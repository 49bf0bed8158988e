//! Prompt sources: what each request asks, and how long its answer may be.
//!
//! Every source implements [`PromptSource`], one file each; [`build`] maps a [`PromptSpec`] to
//! the boxed source. [`Prompt`] is what a source gives for one request, and
//! [`Prompt::into_request`] is the one place a prompt becomes a `request` record. A source that
//! reads a dataset knows its own lengths (or not), and may give each prompt its own output
//! length, so adding one is a new file, a `PromptSpec` variant and a match arm in [`build`]; the
//! writer loop does not change. How a given number of tokens is made (plain words, token ids,
//! text checked with a tokenizer) is a [`maker::TokenMaker`], apart from the source.

pub mod corpus;
mod jsonl;
pub mod lengths;
pub mod maker;
pub mod sharegpt;
mod synthetic;
pub mod tokenizer;

pub use corpus::CorpusCuts;
pub use jsonl::Jsonl;
pub use lengths::{DistKind, LengthDist, LengthError};
pub use maker::{SaltAlphabet, TokenIds, TokenMaker, Words};
pub use sharegpt::ShareGpt;
pub use synthetic::{Prefixes, Shape, Synthetic, VllmLengths, MAX_TOKENS};
pub use tokenizer::TokenizerMaker;

use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;
use tokenpipe_format::Request;

/// What the writer loop asks of a source for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ask {
    /// The request's index in the whole schedule (0, 1, 2, ... in order, shards included).
    pub index: u64,
    /// The turn within its session, 0 without sessions.
    pub turn: u32,
    /// A prompt length the arrival dictates (a trace's row), overriding the source's own.
    pub input_tokens: Option<u64>,
    /// An answer length the arrival dictates.
    pub output_tokens: Option<u64>,
    /// Tokens the salt will take at the start of this prompt: a source that controls lengths
    /// leaves room for them, so that the prompt with its salt has the asked length.
    pub reserve_tokens: u64,
}

/// Gives the prompt of each request in turn, so that the writer loop does not care whether
/// prompts are drawn, read from a file, or built from earlier turns.
pub trait PromptSource {
    /// The prompt for `ask`. Randomness comes from `rng`, the seed's prompt stream, which is
    /// apart from the arrival stream so that prompts never move arrival times.
    fn next_prompt(&mut self, ask: &Ask, rng: &mut ChaCha8Rng) -> Result<Prompt, PromptError>;

    /// Whether prompt lengths are exact for the target model; written to the header.
    fn exact_lengths(&self) -> bool {
        false
    }

    /// What the salt is drawn from for this source's prompts.
    fn salt_alphabet(&self) -> SaltAlphabet {
        SaltAlphabet::DefaultWords
    }
}

/// Which source to use, with its settings: the library-level form of the prompt flags.
pub enum PromptSpec {
    /// Prompts of drawn lengths in one of the synthetic shapes.
    Synthetic {
        /// Prompt lengths.
        input: LengthDist,
        /// Answer lengths (`max_tokens`).
        output: LengthDist,
        /// Distinct or identical prompts.
        shape: Shape,
        /// Shared prefixes, if any.
        prefixes: Option<Prefixes>,
        /// How tokens are made.
        maker: Box<dyn TokenMaker>,
        /// The run's seed, for the fixed sequences.
        seed: u64,
        /// vLLM's random-dataset lengths for each request (`--vllm-compatible`), where the
        /// distributions are vLLM's.
        vllm: Option<VllmLengths>,
        /// Tokens of context made before each prompt as its system message (`--depth`); 0
        /// for none.
        depth: u64,
    },
    /// Prompts and their context cut out of a text in the model's tokenizer, as llama-benchy
    /// cuts them out of its book (`--corpus`).
    Corpus {
        /// The text.
        path: PathBuf,
        /// The model's `tokenizer.json`.
        tokenizer: PathBuf,
        /// Prompt tokens per request (`--input-tokens`).
        input_tokens: u64,
        /// Answer tokens per request (`max_tokens`).
        output_tokens: u64,
        /// Context tokens per request, sent as the system message (`--depth`).
        depth: u64,
    },
    /// Conversations of a ShareGPT file, sampled as `vllm bench serve` samples them.
    ShareGpt {
        /// The JSON file, read whole.
        path: PathBuf,
        /// Counts prompt and answer lengths.
        maker: Box<dyn TokenMaker>,
        /// Every answer's length, where the user fixed it (`--output-tokens`).
        fixed_output: Option<u64>,
        /// Sessions the schedule needs, where known: taken at once, so that a short file fails
        /// before any output.
        needed: Option<u64>,
        /// The run's seed, whose own stream shuffles the conversations.
        seed: u64,
    },
    /// The prompts of a JSONL file, in order, round and round.
    Jsonl {
        /// The file, streamed a line at a time.
        path: PathBuf,
        /// Counts prompt lengths.
        maker: Box<dyn TokenMaker>,
        /// Every answer's length, where the user fixed it (`--output-tokens`).
        fixed_output: Option<u64>,
        /// The answer's length for a line that gives none.
        default_output: u64,
    },
}

/// Opens the source `spec` describes; fails where a source cannot be opened (a missing or
/// malformed dataset).
pub fn build(spec: PromptSpec) -> Result<Box<dyn PromptSource>, PromptError> {
    Ok(match spec {
        PromptSpec::Synthetic {
            input,
            output,
            shape,
            prefixes,
            maker,
            seed,
            vllm,
            depth,
        } => Box::new(
            Synthetic::new(input, output, shape, prefixes, maker, seed)
                .with_vllm_lengths(vllm)
                .with_depth(depth),
        ),
        PromptSpec::Corpus {
            path,
            tokenizer,
            input_tokens,
            output_tokens,
            depth,
        } => Box::new(CorpusCuts::open(
            &path,
            &tokenizer,
            input_tokens,
            output_tokens,
            depth,
        )?),
        PromptSpec::ShareGpt {
            path,
            maker,
            fixed_output,
            needed,
            seed,
        } => {
            let mut rng = crate::seed_stream(seed, crate::streams::DATASET);
            Box::new(ShareGpt::open(
                &path,
                maker,
                fixed_output,
                needed,
                &mut rng,
            )?)
        }
        PromptSpec::Jsonl {
            path,
            maker,
            fixed_output,
            default_output,
        } => Box::new(Jsonl::open(&path, maker, fixed_output, default_output)?),
    })
}

/// One request's prompt and lengths, as a source gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// What to send.
    pub content: Content,
    /// The content's length in tokens (the salt not counted), where the source knows it; a
    /// dataset of raw text may not. The server's usage count stays the authoritative one.
    pub prompt_tokens: Option<u64>,
    /// Tokens to generate (`max_tokens` of the API request).
    pub max_tokens: u64,
    /// Context sent before the prompt as a system message (`--depth`), where there is one.
    pub system: Option<String>,
}

/// The body of a prompt: text for any API, or token ids for the completions API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text, sent as `prompt` or as one user message.
    Text(String),
    /// Token ids, sent as the completions API's `prompt`.
    TokenIds(Vec<u32>),
}

impl Prompt {
    /// The `request` record for this prompt, as request `id` sent at `offset_ns`.
    pub fn into_request(self, id: u64, offset_ns: Option<u64>) -> Request {
        let (prompt, prompt_token_ids) = match self.content {
            Content::Text(text) => (Some(text), None),
            Content::TokenIds(ids) => (None, Some(ids)),
        };
        Request {
            id,
            offset_ns,
            prompt,
            prompt_token_ids,
            prompt_tokens: self.prompt_tokens,
            max_tokens: self.max_tokens,
            system: self.system,
            ..Request::default()
        }
    }
}

/// Why a source could not give a prompt (a dataset that is short, unreadable or malformed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PromptError {
    /// What was wrong and where, for `arrivals: ...` on stderr.
    pub message: String,
}

impl PromptError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_lands_in_the_matching_request_field() {
        let text = Prompt {
            content: Content::Text("hi there".into()),
            prompt_tokens: Some(2),
            max_tokens: 5,
            system: None,
        }
        .into_request(3, Some(7));
        assert_eq!(
            (text.id, text.offset_ns, text.prompt.as_deref()),
            (3, Some(7), Some("hi there"))
        );
        assert_eq!(
            (text.prompt_token_ids, text.prompt_tokens, text.max_tokens),
            (None, Some(2), 5)
        );
        let ids = Prompt {
            content: Content::TokenIds(vec![1, 2, 3]),
            prompt_tokens: None,
            max_tokens: 1,
            system: None,
        }
        .into_request(0, None);
        assert_eq!(ids.prompt, None);
        assert_eq!(ids.prompt_token_ids, Some(vec![1, 2, 3]));
    }
}
