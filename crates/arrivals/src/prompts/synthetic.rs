//! The synthetic prompt source (`--input-tokens`, `--output-tokens`): random common words of a
//! requested length, without a tokenizer.
//!
//! A prompt of `n` tokens is `n` words drawn from a list of common English words that every
//! byte-level BPE vocabulary we know of (GPT-2, Llama 3, Qwen) encodes as one token each when
//! preceded by a space. The server's `usage.prompt_tokens` remains the exact count: chat
//! templates and the first word (which lacks a leading space) add a few tokens.

use super::{Content, Prompt, PromptError, PromptSource};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Words that are a single token with a leading space in common vocabularies.
const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "that",
    "on",
    "as",
    "with",
    "by",
    "he",
    "it",
    "at",
    "from",
    "his",
    "an",
    "were",
    "are",
    "which",
    "this",
    "be",
    "or",
    "had",
    "first",
    "not",
    "their",
    "but",
    "after",
    "one",
    "new",
    "also",
    "they",
    "have",
    "two",
    "has",
    "her",
    "who",
    "been",
    "other",
    "time",
    "its",
    "year",
    "all",
    "into",
    "would",
    "there",
    "she",
    "during",
    "more",
    "up",
    "only",
    "most",
    "over",
    "when",
    "school",
    "three",
    "city",
    "between",
    "world",
    "later",
    "some",
    "where",
    "about",
    "years",
    "state",
    "out",
    "can",
    "many",
    "used",
    "may",
    "made",
    "then",
    "known",
    "while",
    "under",
    "since",
    "people",
    "season",
    "film",
    "team",
    "such",
    "him",
    "them",
    "than",
    "both",
    "early",
    "being",
    "through",
    "these",
    "before",
    "second",
    "part",
    "work",
    "well",
    "each",
    "any",
    "life",
    "released",
    "became",
    "until",
    "series",
    "war",
    "number",
    "album",
    "area",
    "four",
    "high",
    "music",
    "including",
    "game",
    "name",
    "back",
    "five",
    "called",
    "county",
    "group",
    "against",
    "did",
    "like",
    "could",
    "south",
    "north",
    "final",
    "member",
    "will",
    "club",
    "long",
    "family",
    "based",
    "last",
    "several",
    "band",
    "church",
    "line",
    "house",
    "government",
    "book",
    "company",
    "played",
    "national",
    "public",
    "because",
    "local",
    "very",
    "home",
    "large",
    "small",
    "water",
    "history",
    "river",
    "light",
    "field",
    "power",
    "order",
    "open",
    "point",
    "model",
    "level",
    "data",
    "system",
    "market",
    "table",
    "value",
    "story",
    "place",
    "night",
    "day",
    "way",
    "road",
    "word",
    "hand",
    "head",
    "side",
    "town",
    "land",
    "sea",
    "air",
    "fire",
    "stone",
    "tree",
    "bird",
    "fish",
    "horse",
    "king",
    "queen",
    "child",
    "man",
    "woman",
    "friend",
    "heart",
    "mind",
    "voice",
    "face",
    "eye",
    "door",
    "room",
    "wall",
    "floor",
    "window",
    "chair",
    "paper",
    "letter",
    "page",
    "song",
    "color",
    "red",
    "blue",
    "green",
    "black",
    "white",
    "gold",
    "silver",
    "iron",
    "glass",
    "summer",
    "winter",
    "spring",
    "morning",
    "evening",
    "plan",
    "idea",
    "test",
    "note",
];

/// Appends a prompt of `tokens` words drawn with `rng` to `out` (separated by spaces).
pub fn write_prompt(rng: &mut ChaCha8Rng, tokens: u64, out: &mut String) {
    for i in 0..tokens {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS[rng.random_range(0..WORDS.len())]);
    }
}

/// Every prompt `input_tokens` random words long, every answer `output_tokens` long: the
/// controlled lengths a sweep over prompt or answer size needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synthetic {
    input_tokens: u64,
    output_tokens: u64,
}

impl Synthetic {
    /// Prompts of `input_tokens` words asking for `output_tokens` tokens.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
        }
    }
}

impl PromptSource for Synthetic {
    fn next_prompt(&mut self, _index: u64, rng: &mut ChaCha8Rng) -> Result<Prompt, PromptError> {
        let mut text = String::new();
        write_prompt(rng, self.input_tokens, &mut text);
        Ok(Prompt {
            content: Content::Text(text),
            prompt_tokens: Some(self.input_tokens),
            max_tokens: self.output_tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn prompt_has_requested_word_count() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for n in [0u64, 1, 7, 1024] {
            let mut s = String::new();
            write_prompt(&mut rng, n, &mut s);
            assert_eq!(s.split_whitespace().count() as u64, n);
        }
    }

    #[test]
    fn source_gives_text_of_the_set_lengths() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut source = Synthetic::new(12, 34);
        let p = source.next_prompt(0, &mut rng).unwrap();
        assert_eq!((p.prompt_tokens, p.max_tokens), (Some(12), 34));
        let Content::Text(text) = p.content else {
            panic!("synthetic prompts are text");
        };
        assert_eq!(text.split(' ').count(), 12);
    }
}
