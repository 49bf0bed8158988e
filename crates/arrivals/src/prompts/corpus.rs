//! Prompts cut out of a text in the model's tokenizer, step for step as llama-benchy 0.4's
//! `PromptGenerator.generate` cuts them out of its book (`--corpus`).
//!
//! The text is tokenized once, without special tokens. For each request, `input + depth`
//! consecutive tokens are taken from a start drawn uniformly in `[0, len - needed)` (the text
//! repeated `needed / len + 2` times first when it is shorter than `needed`, as llama-benchy
//! repeats it); the first `depth` of them, decoded, are the context (the system message) and
//! the rest, decoded, the prompt. Decoding keeps special tokens, as llama-benchy's does. Where
//! llama-benchy's numpy would fail (a text exactly `needed` tokens long leaves no start to
//! draw), the cut starts at 0. The start is drawn from the seed's prompt stream, so a seed
//! gives the same cuts every time (llama-benchy's numpy is not seeded).

use super::{Ask, Content, Prompt, PromptError, PromptSource};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use tokenizers::Tokenizer;

/// What llama-benchy sends as a user message that would be empty (vLLM refuses empty content).
pub const EMPTY_PROMPT: &str = ".";

/// Cuts prompts and their context out of one tokenized text.
pub struct CorpusCuts {
    tokenizer: Tokenizer,
    /// The text's tokens, special tokens not added.
    tokens: Vec<u32>,
    input_tokens: u64,
    output_tokens: u64,
    depth: u64,
}

impl CorpusCuts {
    /// Reads the text at `text` and the `tokenizer.json` at `tokenizer`; the error names the
    /// file and what was wrong with it.
    pub fn open(
        text: &Path,
        tokenizer: &Path,
        input_tokens: u64,
        output_tokens: u64,
        depth: u64,
    ) -> Result<Self, PromptError> {
        let name = tokenizer.display();
        let bytes =
            std::fs::read(tokenizer).map_err(|e| PromptError::new(format!("{name}: {e}")))?;
        let tokenizer = Tokenizer::from_bytes(&bytes).map_err(|e| {
            PromptError::new(format!("{name}: not a Hugging Face tokenizer.json: {e}"))
        })?;
        let corpus = std::fs::read_to_string(text)
            .map_err(|e| PromptError::new(format!("--corpus {}: {e}", text.display())))?;
        Self::new(tokenizer, &corpus, input_tokens, output_tokens, depth)
            .map_err(|e| PromptError::new(format!("--corpus {}: {}", text.display(), e.message)))
    }

    /// Cuts from `corpus` in `tokenizer`; fails where the text has no tokens.
    pub fn new(
        mut tokenizer: Tokenizer,
        corpus: &str,
        input_tokens: u64,
        output_tokens: u64,
        depth: u64,
    ) -> Result<Self, PromptError> {
        // A file's own truncation or padding would cut the corpus short.
        tokenizer
            .with_truncation(None)
            .map_err(|e| PromptError::new(format!("cannot turn off truncation: {e}")))?;
        tokenizer.with_padding(None);
        let tokens = tokenizer
            .encode(corpus, false)
            .map_err(|e| PromptError::new(format!("cannot tokenize the text: {e}")))?
            .get_ids()
            .to_vec();
        if tokens.is_empty() {
            return Err(PromptError::new(
                "the text has no tokens to cut prompts from",
            ));
        }
        Ok(Self {
            tokenizer,
            tokens,
            input_tokens,
            output_tokens,
            depth,
        })
    }

    /// The `(context, prompt)` token ids of one cut of `prompt` + `depth` tokens.
    fn cut(&self, prompt: u64, rng: &mut ChaCha8Rng) -> (Vec<u32>, Vec<u32>) {
        let len = self.tokens.len() as u64;
        let needed = prompt + self.depth;
        // llama-benchy repeats the whole text `needed / len + 2` times when it is too short.
        let pool = if len < needed {
            len.saturating_mul(needed / len + 2)
        } else {
            len
        };
        let max_start = pool - needed;
        let start = if max_start == 0 {
            0
        } else {
            rng.random_range(0..max_start)
        };
        let at = |i: u64| self.tokens[((start + i) % len) as usize];
        let context = (0..self.depth).map(at).collect();
        let prompt = (self.depth..needed).map(at).collect();
        (context, prompt)
    }

    fn decode(&self, ids: &[u32]) -> Result<String, PromptError> {
        self.tokenizer
            .decode(ids, false)
            .map_err(|e| PromptError::new(format!("cannot decode a cut of the text: {e}")))
    }
}

impl PromptSource for CorpusCuts {
    fn next_prompt(&mut self, ask: &Ask, rng: &mut ChaCha8Rng) -> Result<Prompt, PromptError> {
        let input = ask.input_tokens.unwrap_or(self.input_tokens);
        // The salt takes the place of llama-benchy's no-cache suffix: out of the prompt.
        let own = input.saturating_sub(ask.reserve_tokens);
        let (context, prompt) = self.cut(own, rng);
        let system = match context.is_empty() {
            true => None,
            false => Some(self.decode(&context)?),
        };
        let mut text = self.decode(&prompt)?;
        if text.trim().is_empty() {
            text = EMPTY_PROMPT.to_string();
        }
        Ok(Prompt {
            content: Content::Text(text),
            prompt_tokens: Some(own + self.depth),
            max_tokens: ask.output_tokens.unwrap_or(self.output_tokens),
            system,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use tokenizers::models::wordlevel::WordLevel;
    use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;

    /// A word-level tokenizer of `w0 … w99`, whose decoding joins words with spaces.
    fn words_tokenizer() -> Tokenizer {
        let vocab = (0..100u32).map(|i| (format!("w{i}"), i)).collect();
        let model = WordLevel::builder()
            .vocab(vocab)
            .unk_token("w0".into())
            .build()
            .unwrap();
        let mut t = Tokenizer::new(model);
        t.with_pre_tokenizer(Some(WhitespaceSplit));
        t
    }

    fn text(n: u32) -> String {
        (0..n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn ask() -> Ask {
        Ask::default()
    }

    #[test]
    fn a_cut_is_consecutive_tokens_split_into_context_and_prompt() {
        let mut cuts = CorpusCuts::new(words_tokenizer(), &text(100), 5, 7, 3).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..50 {
            let p = cuts.next_prompt(&ask(), &mut rng).unwrap();
            let system = p.system.unwrap();
            let Content::Text(prompt) = p.content else {
                panic!("text")
            };
            let all: Vec<u32> = format!("{system} {prompt}")
                .split(' ')
                .map(|w| w[1..].parse().unwrap())
                .collect();
            assert_eq!(all.len(), 8);
            assert!(all.windows(2).all(|w| w[1] == w[0] + 1), "{all:?}");
            // A start is drawn below len - needed, never at it.
            assert!(all[0] < 92, "{all:?}");
            assert_eq!((p.prompt_tokens, p.max_tokens), (Some(8), 7));
        }
    }

    #[test]
    fn a_short_text_is_repeated_and_a_seed_gives_the_same_cuts() {
        let mut cuts = CorpusCuts::new(words_tokenizer(), &text(10), 25, 1, 0).unwrap();
        let draw = |cuts: &mut CorpusCuts, seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..5)
                .map(|_| cuts.next_prompt(&ask(), &mut rng).unwrap().content)
                .collect::<Vec<_>>()
        };
        let a = draw(&mut cuts, 3);
        assert_eq!(a, draw(&mut cuts, 3));
        assert_ne!(a, draw(&mut cuts, 4));
        for c in &a {
            let Content::Text(t) = c else { panic!() };
            let ids: Vec<u32> = t.split(' ').map(|w| w[1..].parse().unwrap()).collect();
            assert_eq!(ids.len(), 25);
            assert!(ids.windows(2).all(|w| w[1] == (w[0] + 1) % 10), "{ids:?}");
        }
    }

    #[test]
    fn a_text_of_exactly_the_needed_length_starts_at_zero_and_the_salt_comes_out() {
        let mut cuts = CorpusCuts::new(words_tokenizer(), &text(6), 6, 1, 0).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let p = cuts.next_prompt(&ask(), &mut rng).unwrap();
        assert_eq!(p.content, Content::Text(text(6)));
        let salted = Ask {
            reserve_tokens: 2,
            ..ask()
        };
        let p = cuts.next_prompt(&salted, &mut rng).unwrap();
        assert_eq!(p.prompt_tokens, Some(4));
        assert!(CorpusCuts::new(words_tokenizer(), "  ", 6, 1, 0).is_err());
    }
}
