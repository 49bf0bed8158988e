//! The synthetic prompt source: prompts of controlled lengths, made by a [`TokenMaker`], in the
//! shapes of seed 004's scenarios.
//!
//! - **Distinct** (B1/B2, the default): every prompt drawn anew, so no two share a prefix
//!   beyond chance.
//! - **Same** (A1/A2, `--same-prompt`): every prompt is the start of one fixed sequence, so
//!   prompts of one length are identical and any two share their common length.
//! - **Shared prefixes** (C, `--prefix-tokens P --prefix-groups G`): request `i` starts with
//!   the prefix of group `i mod G` (P tokens, the same for every request of the group), followed
//!   by its own part of `--input-tokens`, as vLLM's `--random-prefix-len` adds the prefix on top
//!   of the input length.
//!
//! The fixed sequences come from their own streams of the seed (one for "same", one per prefix
//! group), so they do not depend on the order in which requests are drawn.

use super::lengths::LengthDist;
use super::maker::{SaltAlphabet, TokenMaker};
use super::{Ask, Content, Prompt, PromptError, PromptSource};
use crate::numpy::NumpyGenerator;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Longest prompt or answer accepted, 2^24 tokens.
pub const MAX_TOKENS: u64 = 1 << 24;

/// How prompts relate to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Every prompt drawn anew.
    Distinct,
    /// Every prompt the start of one fixed sequence.
    Same,
}

/// Shared prefixes: `groups` of them, `tokens` long each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefixes {
    /// Tokens per prefix.
    pub tokens: u64,
    /// How many different prefixes; request `i` uses prefix `i mod groups`.
    pub groups: u64,
}

/// Prompts of lengths drawn from `input`, answers from `output`, content from `maker`.
pub struct Synthetic {
    input: LengthDist,
    output: LengthDist,
    shape: Shape,
    prefixes: Option<Prefixes>,
    maker: Box<dyn TokenMaker>,
    seed: u64,
    /// Prefixes made so far, by group (a prefix is made once and reused).
    made: Vec<Option<Content>>,
    /// vLLM's lengths for each request, where they replace our own draws.
    vllm: Option<VllmLengths>,
    /// Tokens of context made as each prompt's system message; 0 for none.
    depth: u64,
    /// The stream contexts are drawn from (the seed's [`crate::streams::CONTEXT`]).
    context_rng: Option<ChaCha8Rng>,
}

/// The input and output lengths `vllm bench serve --dataset-name random --seed S` gives
/// request `i`: `np.random.default_rng(S).integers` over vLLM's bounds, all the input lengths
/// first, then all the output lengths. Drawn at the start, so that any request (a shard's, or
/// out of order) finds its own.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmLengths {
    input: Vec<u32>,
    output: Vec<u32>,
}

impl VllmLengths {
    /// vLLM's lengths for `requests` requests, or `None` where `input` or `output` is not a
    /// distribution vLLM's random dataset has (fixed or uniform) or a length passes 2³².
    pub fn new(seed: u64, requests: u64, input: LengthDist, output: LengthDist) -> Option<Self> {
        let bounds = |d: LengthDist, least: u64| -> Option<(i64, i64)> {
            let (low, high) = match d {
                LengthDist::Fixed(n) => (n, n),
                LengthDist::Uniform { mean, ratio } => (
                    (mean as f64 * (1.0 - ratio)).floor() as u64,
                    (mean as f64 * (1.0 + ratio)).ceil() as u64,
                ),
                _ => return None,
            };
            let (low, high) = (low.max(least), high.max(least));
            (high <= u32::MAX as u64).then_some((low as i64, high as i64))
        };
        let (in_low, in_high) = bounds(input, 0)?;
        let (out_low, out_high) = bounds(output, 1)?;
        let requests = usize::try_from(requests).ok()?;
        let mut g = NumpyGenerator::new(seed);
        let mut draw = |low: i64, high: i64| -> Vec<u32> {
            (0..requests)
                .map(|_| g.integer(low, high + 1) as u32)
                .collect()
        };
        let input = draw(in_low, in_high);
        let output = draw(out_low, out_high);
        Some(Self { input, output })
    }

    /// Request `index`'s input and output lengths, if the run has that many.
    fn get(&self, index: u64) -> Option<(u64, u64)> {
        let i = usize::try_from(index).ok()?;
        Some((*self.input.get(i)? as u64, *self.output.get(i)? as u64))
    }
}

impl Synthetic {
    /// A source of `shape` prompts, with optional shared prefixes, for the run seeded `seed`.
    pub fn new(
        input: LengthDist,
        output: LengthDist,
        shape: Shape,
        prefixes: Option<Prefixes>,
        maker: Box<dyn TokenMaker>,
        seed: u64,
    ) -> Self {
        let groups = prefixes.map_or(0, |p| p.groups.min(1 << 20) as usize);
        Self {
            input,
            output,
            shape,
            prefixes,
            maker,
            seed,
            made: vec![None; groups],
            vllm: None,
            depth: 0,
            context_rng: None,
        }
    }

    /// Gives each prompt `depth` tokens of context as its system message (`--depth`), drawn
    /// from a stream of their own so that the prompts stay those of no depth.
    pub fn with_depth(mut self, depth: u64) -> Self {
        self.depth = depth;
        self.context_rng = (depth > 0).then(|| self.fixed_stream(crate::streams::CONTEXT));
        self
    }

    /// Takes each request's lengths from `lengths` (vLLM's draws) instead of drawing them.
    pub fn with_vllm_lengths(mut self, lengths: Option<VllmLengths>) -> Self {
        self.vllm = lengths;
        self
    }

    /// The seed's own stream `stream` (see [`crate::streams`]).
    fn fixed_stream(&self, stream: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stream);
        rng
    }

    /// The group of request `index`, its prefix made on first use; `None` without prefixes.
    fn prefix_group(&mut self, index: u64) -> Option<usize> {
        let p = self.prefixes?;
        let group = (index % p.groups.max(1)) as usize;
        if self.made[group].is_none() {
            let mut rng = self.fixed_stream(crate::streams::PREFIX_BASE + group as u64);
            self.made[group] = Some(self.maker.make(p.tokens, &mut rng));
        }
        Some(group)
    }
}

impl PromptSource for Synthetic {
    fn next_prompt(&mut self, ask: &Ask, rng: &mut ChaCha8Rng) -> Result<Prompt, PromptError> {
        let vllm = self.vllm.as_ref().and_then(|v| v.get(ask.index));
        let input = ask.input_tokens.unwrap_or_else(|| match vllm {
            Some((input, _)) => input,
            None => self.input.sample(rng, 0, MAX_TOKENS),
        });
        let max_tokens = ask.output_tokens.unwrap_or_else(|| match vllm {
            Some((_, output)) => output,
            None => self.output.sample(rng, 1, MAX_TOKENS),
        });
        let group = self.prefix_group(ask.index);
        let prefix_tokens = self.prefixes.map_or(0, |p| p.tokens);
        // The salt goes before the whole prompt; it comes out of the request's own part.
        let own = input.saturating_sub(ask.reserve_tokens);
        let body = match self.shape {
            Shape::Distinct => self.maker.make(own, rng),
            Shape::Same => {
                let mut fixed = self.fixed_stream(crate::streams::SAME);
                self.maker.make(own, &mut fixed)
            }
        };
        // The prefix is joined where it is kept, never copied first.
        let content = match group.and_then(|g| self.made[g].as_ref()) {
            Some(prefix) => self.maker.join(prefix, &body),
            None => body,
        };
        let system = match self.context_rng.as_mut() {
            None => None,
            Some(context_rng) => match self.maker.make(self.depth, context_rng) {
                Content::Text(text) => Some(text),
                // The flags refuse --depth with token ids: a system message is text.
                Content::TokenIds(_) => {
                    return Err(PromptError::new(
                        "--depth makes a system message, which must be text: use --tokenizer instead of --token-ids",
                    ))
                }
            },
        };
        Ok(Prompt {
            content,
            prompt_tokens: Some(prefix_tokens + own + self.depth),
            max_tokens,
            system,
        })
    }

    fn exact_lengths(&self) -> bool {
        self.maker.exact()
    }

    fn salt_alphabet(&self) -> SaltAlphabet {
        self.maker.salt_alphabet()
    }
}

#[cfg(test)]
mod tests {
    use super::super::maker::{TokenIds, Words};
    use super::*;

    fn ask(index: u64) -> Ask {
        Ask {
            index,
            ..Ask::default()
        }
    }

    fn text(p: &Prompt) -> &str {
        match &p.content {
            Content::Text(t) => t,
            Content::TokenIds(_) => panic!("text expected"),
        }
    }

    #[test]
    fn distinct_prompts_have_the_set_lengths_and_differ() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = Synthetic::new(
            LengthDist::Fixed(12),
            LengthDist::Fixed(34),
            Shape::Distinct,
            None,
            Box::new(Words),
            1,
        );
        let a = s.next_prompt(&ask(0), &mut rng).unwrap();
        let b = s.next_prompt(&ask(1), &mut rng).unwrap();
        assert_eq!((a.prompt_tokens, a.max_tokens), (Some(12), 34));
        assert_eq!(text(&a).split(' ').count(), 12);
        assert_ne!(text(&a), text(&b));
    }

    #[test]
    fn same_prompts_are_identical_and_share_their_common_length() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = Synthetic::new(
            LengthDist::Fixed(20),
            LengthDist::Fixed(4),
            Shape::Same,
            None,
            Box::new(Words),
            9,
        );
        let a = s.next_prompt(&ask(0), &mut rng).unwrap();
        let b = s.next_prompt(&ask(1), &mut rng).unwrap();
        assert_eq!(text(&a), text(&b));
        let shorter = s
            .next_prompt(
                &Ask {
                    reserve_tokens: 4,
                    ..ask(2)
                },
                &mut rng,
            )
            .unwrap();
        assert!(text(&a).starts_with(text(&shorter)));
        assert_eq!(shorter.prompt_tokens, Some(16));
    }

    #[test]
    fn prefix_groups_share_their_prefix_and_add_to_the_length() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = Synthetic::new(
            LengthDist::Fixed(3),
            LengthDist::Fixed(4),
            Shape::Distinct,
            Some(Prefixes {
                tokens: 5,
                groups: 2,
            }),
            Box::new(TokenIds {
                start: 0,
                end: 1000,
            }),
            9,
        );
        let ids = |p: Prompt| match p.content {
            Content::TokenIds(ids) => ids,
            Content::Text(_) => panic!("ids expected"),
        };
        let p: Vec<Vec<u32>> = (0..4)
            .map(|i| ids(s.next_prompt(&ask(i), &mut rng).unwrap()))
            .collect();
        assert!(p.iter().all(|ids| ids.len() == 8));
        assert_eq!(p[0][..5], p[2][..5]);
        assert_eq!(p[1][..5], p[3][..5]);
        assert_ne!(p[0][..5], p[1][..5]);
        assert_ne!(p[0][5..], p[2][5..]);
    }

    #[test]
    fn vllm_lengths_are_vllms_random_dataset_draws() {
        // vLLM's get_sampling_params with seed 0, --random-input-len 200, --random-output-len
        // 48, --random-range-ratio 0.25: rng.integers(150, 251, size=5), then
        // rng.integers(36, 61, size=5) (numpy 2.3).
        let v = VllmLengths::new(
            0,
            5,
            LengthDist::Uniform {
                mean: 200,
                ratio: 0.25,
            },
            LengthDist::Uniform {
                mean: 48,
                ratio: 0.25,
            },
        )
        .unwrap();
        assert_eq!(v.input, [235, 214, 201, 177, 181]);
        assert_eq!(v.output, [37, 37, 36, 40, 56]);
        // Fixed lengths draw nothing; other families are not vLLM's.
        let fixed = VllmLengths::new(0, 3, LengthDist::Fixed(7), LengthDist::Fixed(9)).unwrap();
        assert_eq!((fixed.input, fixed.output), (vec![7; 3], vec![9; 3]));
        let normal = LengthDist::Normal { mean: 9, cv: 0.1 };
        assert!(VllmLengths::new(0, 3, LengthDist::Fixed(7), normal).is_none());
    }
}
