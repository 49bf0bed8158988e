//! The flags that say what each request asks: lengths, prompt shapes, sessions and the salt.

use crate::prompts::DistKind;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// What each request asks.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "What each request asks")]
pub struct Content {
    /// Prompt length in tokens, at most 16,777,216 [default: 1024, or the --scenario's].
    /// `--pp` is llama-benchy's name for it.
    #[arg(long, visible_alias = "pp", value_parser = clap::value_parser!(u64).range(0..=crate::prompts::MAX_TOKENS))]
    pub input_tokens: Option<u64>,

    /// Spread of prompt lengths: the range ratio of a uniform draw (0.2 gives ±20 %), or the
    /// coefficient of variation of a normal or lognormal one.
    #[arg(long, value_name = "SPREAD", default_value_t = 0.0)]
    pub input_range: f64,

    /// How prompt lengths spread around --input-tokens.
    #[arg(long, value_enum, default_value_t = DistKind::Uniform)]
    pub input_dist: DistKind,

    /// Tokens to generate per request, `max_tokens` (at most 16,777,216) [default: 128; with
    /// --dataset, each prompt's own answer length]. `--tg` is llama-benchy's name for it.
    #[arg(long, visible_alias = "tg", value_parser = clap::value_parser!(u64).range(1..=crate::prompts::MAX_TOKENS))]
    pub output_tokens: Option<u64>,

    /// Spread of answer lengths, as --input-range.
    #[arg(long, value_name = "SPREAD", default_value_t = 0.0)]
    pub output_range: f64,

    /// How answer lengths spread around --output-tokens.
    #[arg(long, value_enum, default_value_t = DistKind::Uniform)]
    pub output_dist: DistKind,

    /// Spread prompt and answer lengths alike: vLLM's --random-range-ratio, the same as
    /// --input-range R --output-range R.
    #[arg(long, value_name = "R", conflicts_with_all = ["input_range", "output_range"])]
    pub range_ratio: Option<f64>,

    /// Send the same prompt every time (best case for a prefix cache).
    #[arg(long)]
    pub same_prompt: bool,

    /// Start every prompt with a shared prefix of this many tokens, added to --input-tokens.
    #[arg(long, value_name = "TOKENS",
          value_parser = clap::value_parser!(u64).range(1..=crate::prompts::MAX_TOKENS))]
    pub prefix_tokens: Option<u64>,

    /// How many different shared prefixes; request i uses prefix i mod GROUPS.
    #[arg(long, value_name = "GROUPS", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub prefix_groups: u64,

    /// Token ids to make prompts of, START..END (end excluded): exact lengths on
    /// /v1/completions, for any model whose vocabulary holds them.
    #[arg(long, value_name = "START..END", value_parser = parse_id_range, conflicts_with = "tokenizer")]
    pub token_ids: Option<[u32; 2]>,

    /// A Hugging Face `tokenizer.json` to make text prompts of exactly --input-tokens tokens
    /// for its model (special tokens and the chat template not counted), with a salt of
    /// words that are one token each in it. For exact token ids instead, use --token-ids.
    #[arg(long, value_name = "PATH")]
    pub tokenizer: Option<PathBuf>,

    /// Tokens of extra context before each prompt, sent as a system message (llama-benchy's
    /// --depth): exact with --tokenizer, approximate words without it. Counted apart from
    /// --input-tokens, as llama-benchy counts it.
    #[arg(long, value_name = "TOKENS",
          value_parser = clap::value_parser!(u64).range(0..=crate::prompts::MAX_TOKENS),
          conflicts_with_all = ["token_ids", "dataset", "turns", "scenario"])]
    pub depth: Option<u64>,

    /// Cut every prompt (and its --depth context) out of this text, as llama-benchy cuts them
    /// out of its book: the text is tokenized once with --tokenizer, and each request takes
    /// --input-tokens + --depth consecutive tokens from a start drawn with --seed (the text
    /// repeated when it is too short); the first --depth of them, decoded, are the context,
    /// the rest the prompt. llama-benchy's book is Project Gutenberg's `1661-0.txt`.
    #[arg(long, value_name = "FILE", requires = "tokenizer",
          conflicts_with_all = [
              "dataset", "same_prompt", "prefix_tokens", "scenario", "input_range",
              "output_range", "range_ratio", "turns",
          ])]
    pub corpus: Option<PathBuf>,

    /// Turns per session: each arrival starts a conversation whose later turns carry the
    /// earlier turns and the answers really received. --num-prompts then counts sessions
    /// [default: 1, or the --scenario's].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub turns: Option<u32>,

    /// Think time before each later turn: a duration (`2s`) or a uniform range (`1s..5s`).
    #[arg(long, value_name = "DURATION[..DURATION]", value_parser = parse_think)]
    pub think_time: Option<(Duration, Duration)>,

    /// Do not salt prompts. By default `fire` puts a short salt, new for every run, before
    /// each session's first prompt, so a repeated run never finds its prompts in a warm
    /// prefix cache (shared prefixes stay shared within a run).
    #[arg(long)]
    pub no_salt: bool,

    /// Salt length in tokens (counted in each first prompt's length).
    #[arg(long, value_name = "TOKENS", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub salt_tokens: u32,

    /// A workload of the closed-loop study (seed 004): A1 same short prompt, A2 same long, B1
    /// distinct short, B2 distinct long, C long shared prefix and short queries, D multi-turn.
    #[arg(long, value_enum, ignore_case = true)]
    pub scenario: Option<Scenario>,
}

/// The workloads of the closed-loop study, as prompt settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// Identical 50-token prompts: best case for a prefix cache.
    A1,
    /// Identical 2,500-token prompts: prefix cache with long prefill.
    A2,
    /// Distinct 50-token prompts: raw throughput, no caching.
    B1,
    /// Distinct 2,500-token prompts: diverse and long.
    B2,
    /// A 2,000-token shared prefix before distinct 50-token queries (RAG, agents).
    C,
    /// Five-turn conversations of 50-token messages: history grows each turn.
    D,
}

/// `--input-dist` and `--output-dist` take the library's families by these names, each with its
/// doc comment as help (as clap's derive would give it: `make generated` checks the words).
impl clap::ValueEnum for DistKind {
    fn value_variants<'a>() -> &'a [Self] {
        &DistKind::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, help) = match self {
            DistKind::Uniform => (
                "uniform",
                "Uniform within mean × (1 ± spread) (vLLM's range ratio)",
            ),
            DistKind::Normal => ("normal", "Normal, spread = standard deviation / mean"),
            DistKind::Lognormal => ("lognormal", "Lognormal, spread = standard deviation / mean"),
        };
        Some(clap::builder::PossibleValue::new(name).help(help))
    }
}

impl Content {
    /// The spread of prompt lengths, from --input-range or --range-ratio.
    pub fn input_spread(&self) -> f64 {
        self.range_ratio.unwrap_or(self.input_range)
    }

    /// The spread of answer lengths, from --output-range or --range-ratio.
    pub fn output_spread(&self) -> f64 {
        self.range_ratio.unwrap_or(self.output_range)
    }
}

impl Scenario {
    /// Prompt tokens per request (per turn for D).
    pub fn input_tokens(self) -> u64 {
        match self {
            Scenario::A2 | Scenario::B2 => 2500,
            Scenario::A1 | Scenario::B1 | Scenario::C | Scenario::D => 50,
        }
    }

    /// Whether every prompt is the same.
    pub fn same(self) -> bool {
        matches!(self, Scenario::A1 | Scenario::A2)
    }

    /// Shared prefix tokens.
    pub fn prefix_tokens(self) -> Option<u64> {
        (self == Scenario::C).then_some(2000)
    }

    /// Turns per session.
    pub fn turns(self) -> u32 {
        if self == Scenario::D {
            5
        } else {
            1
        }
    }
}

fn parse_id_range(s: &str) -> Result<[u32; 2], String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected START..END (say 1000..30000), got `{s}`"))?;
    let parse = |x: &str| {
        x.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{x}` in `{s}` is not a token id"))
    };
    let (start, end) = (parse(a)?, parse(b)?);
    if start >= end {
        return Err(format!("the range {s} is empty; END is excluded"));
    }
    Ok([start, end])
}

fn parse_think(s: &str) -> Result<(Duration, Duration), String> {
    match s.split_once("..") {
        Some((a, b)) => {
            let (low, high) = (
                tokenpipe_cli::parse_duration(a)?,
                tokenpipe_cli::parse_duration(b)?,
            );
            if low > high {
                return Err(format!("the range {s} runs backwards"));
            }
            Ok((low, high))
        }
        None => {
            let d = tokenpipe_cli::parse_duration(s)?;
            Ok((d, d))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_ranges_and_think_times_parse() {
        assert_eq!(parse_id_range("10..20"), Ok([10, 20]));
        assert!(parse_id_range("20..10").is_err());
        assert!(parse_id_range("20").is_err());
        assert_eq!(
            parse_think("1s..3s"),
            Ok((Duration::from_secs(1), Duration::from_secs(3)))
        );
        assert_eq!(
            parse_think("2s"),
            Ok((Duration::from_secs(2), Duration::from_secs(2)))
        );
        assert!(parse_think("3s..1s").is_err());
    }

    #[test]
    fn length_families_keep_their_names() {
        use clap::ValueEnum;
        let names: Vec<_> = DistKind::value_variants()
            .iter()
            .map(|k| k.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        assert_eq!(names, ["uniform", "normal", "lognormal"]);
        assert_eq!(
            DistKind::from_str("lognormal", false),
            Ok(DistKind::Lognormal)
        );
    }
}
