//! The flags that say how simserve counts prompt tokens: `--tokenizer` and `--template-tokens`
//! (see [`crate::prompt_count`]).

use crate::prompt_count::{PromptCount, TokenizerError};
use std::path::PathBuf;

/// How prompt tokens are counted.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct PromptArgs {
    /// Count prompt tokens with this Hugging Face tokenizer.json, as an engine serving its
    /// model would [default: whitespace-separated words]
    ///
    /// The count is usage.prompt_tokens, /tokenize's count, and the prompt the engine prefills
    /// (its time, its KV cache, the prefix cache's blocks). As vLLM: a completions prompt is
    /// encoded with the tokenizer's special tokens (a BOS, if it adds one), chat contents
    /// without, every message's content counted. A real engine also renders its chat template
    /// around the messages; simserve does not (see --template-tokens). A file that cannot be
    /// read or is not a tokenizer.json stops simserve at start (exit status 2).
    #[arg(long, value_name = "FILE")]
    pub tokenizer: Option<PathBuf>,

    /// Tokens added to every chat request's prompt count, as a chat template would add (role
    /// markers, BOS, the generation prompt): a fixed count, whether words or --tokenizer count.
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub template_tokens: u64,
}

impl PromptArgs {
    /// The counting rule the flags ask for, the tokenizer loaded.
    pub fn prompt_count(&self) -> Result<PromptCount, TokenizerError> {
        match &self.tokenizer {
            Some(path) => PromptCount::tokenizer(path, self.template_tokens),
            None => Ok(PromptCount::words(self.template_tokens)),
        }
    }
}
