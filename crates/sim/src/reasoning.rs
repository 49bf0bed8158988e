//! `--reasoning-share`: a thinking model's answer, its first share of tokens streamed as
//! reasoning (`delta.reasoning_content`, vLLM's member, or `delta.reasoning`, newer vLLM's and
//! llama.cpp's name with `--reasoning-format`), the rest as content, and the usage's
//! `completion_tokens_details.reasoning_tokens` saying how many were reasoning. Only chat
//! streams carry it: the completions API and answers sent whole have no reasoning member.

/// The delta member reasoning tokens are sent in (`--reasoning-member`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningMember {
    /// `reasoning_content`: vLLM's reasoning parsers, DeepSeek's API, llama.cpp's
    /// `--reasoning-format deepseek`.
    #[default]
    ReasoningContent,
    /// `reasoning`: vLLM from 0.10 on (OpenAI's gpt-oss shape) and llama.cpp's
    /// `--reasoning-format auto` in its newer builds.
    Reasoning,
}

impl ReasoningMember {
    /// The member's name as the flag and the wire write it.
    pub fn name(self) -> &'static str {
        match self {
            ReasoningMember::ReasoningContent => "reasoning_content",
            ReasoningMember::Reasoning => "reasoning",
        }
    }

    /// The choices' opening bytes up to the reasoning text's first character.
    pub(crate) fn open(self) -> &'static [u8] {
        match self {
            ReasoningMember::ReasoningContent => br#"[{"index":0,"delta":{"reasoning_content":""#,
            ReasoningMember::Reasoning => br#"[{"index":0,"delta":{"reasoning":""#,
        }
    }
}

/// How much of each chat answer is reasoning, and in which member it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reasoning {
    /// The share of each answer's tokens sent as reasoning first, 0 to 1.
    pub share: f64,
    /// Where the reasoning goes.
    pub member: ReasoningMember,
}

impl Eq for Reasoning {}

impl Reasoning {
    /// Reasoning tokens of an answer of `max_tokens`: the share, rounded to the nearest token.
    pub fn tokens(&self, max_tokens: u64) -> u64 {
        let n = (self.share * max_tokens as f64).round();
        (n.max(0.0) as u64).min(max_tokens)
    }

    /// Reads `--reasoning-share`: a number from 0 to 1.
    pub fn parse_share(text: &str) -> Result<f64, String> {
        let share: f64 = text
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not a number (expected a share from 0 to 1)"))?;
        if !(0.0..=1.0).contains(&share) {
            return Err(format!("{share} is not a share from 0 to 1"));
        }
        Ok(share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_round_to_whole_tokens_and_stay_in_range() {
        let r = |share| Reasoning {
            share,
            member: ReasoningMember::Reasoning,
        };
        assert_eq!(r(0.25).tokens(100), 25);
        assert_eq!(r(0.29).tokens(100), 29);
        assert_eq!(r(1.0).tokens(7), 7);
        assert_eq!(r(0.0).tokens(7), 0);
        assert_eq!(r(0.5).tokens(3), 2);
        assert_eq!(Reasoning::parse_share("0.25"), Ok(0.25));
        for bad in ["1.5", "-0.1", "x", "NaN"] {
            assert!(Reasoning::parse_share(bad).is_err(), "{bad}");
        }
    }
}
