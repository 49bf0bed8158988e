//! The flags of a thinking model's answers: `--reasoning-share` and `--reasoning-member` (see
//! [`crate::reasoning`]).

use crate::reasoning::{Reasoning, ReasoningMember};

/// How much of each chat answer is reasoning, and in which member.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ReasoningArgs {
    /// Stream this share of each chat answer's tokens as reasoning first, from 0 to 1, as a
    /// thinking model (gpt-oss, DeepSeek-R1, Qwen3) does [default: none]
    ///
    /// The first round(F × max_tokens) tokens of a chat stream go in the delta's reasoning
    /// member (--reasoning-member), the rest in `content`, and the usage chunk adds
    /// `completion_tokens_details.reasoning_tokens` (OpenAI's member). So `fire` and `reduce`
    /// can be checked end to end: with --reasoning-share 0.25 and 100 tokens, 25 reasoning
    /// then 75 answer tokens, and the time to first answer token is TTFT + 25 ITL. The
    /// completions API and answers sent whole have no reasoning member and are unchanged.
    /// Example: `simserve --ttft-ms 50 --itl-ms 10 --reasoning-share 0.25`.
    #[arg(long, value_name = "F", value_parser = Reasoning::parse_share)]
    pub reasoning_share: Option<f64>,

    /// The delta member reasoning is sent in: reasoning_content (vLLM's reasoning parsers,
    /// llama.cpp's --reasoning-format deepseek) or reasoning (vLLM 0.10 on, llama.cpp's newer
    /// builds) [default: reasoning_content]
    #[arg(long, value_name = "MEMBER", value_parser = parse_member, requires = "reasoning_share")]
    pub reasoning_member: Option<ReasoningMember>,
}

impl ReasoningArgs {
    /// The reasoning the flags ask for; `None` without --reasoning-share or with a share of 0.
    pub fn reasoning(&self) -> Option<Reasoning> {
        let share = self.reasoning_share.filter(|&s| s > 0.0)?;
        Some(Reasoning {
            share,
            member: self.reasoning_member.unwrap_or_default(),
        })
    }
}

/// `reasoning_content` or `reasoning`.
fn parse_member(s: &str) -> Result<ReasoningMember, String> {
    [
        ReasoningMember::ReasoningContent,
        ReasoningMember::Reasoning,
    ]
    .into_iter()
    .find(|m| m.name() == s.trim())
    .ok_or_else(|| format!("expected reasoning_content or reasoning, got `{s}`"))
}

#[cfg(test)]
mod tests {
    use super::super::Args;
    use crate::reasoning::{Reasoning, ReasoningMember};
    use clap::Parser;

    fn reasoning(argv: &[&str]) -> Result<Option<Reasoning>, clap::Error> {
        Args::try_parse_from(argv).map(|a| a.reasoning.reasoning())
    }

    #[test]
    fn share_and_member_from_the_command_line() {
        assert_eq!(reasoning(&["simserve"]).unwrap(), None);
        assert_eq!(
            reasoning(&["simserve", "--reasoning-share", "0"]).unwrap(),
            None
        );
        let r = reasoning(&["simserve", "--reasoning-share", "0.25"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.share, r.member),
            (0.25, ReasoningMember::ReasoningContent)
        );
        let argv = [
            "simserve",
            "--reasoning-share",
            "1",
            "--reasoning-member",
            "reasoning",
        ];
        assert_eq!(
            reasoning(&argv).unwrap().unwrap().member,
            ReasoningMember::Reasoning
        );
        for bad in [
            &["simserve", "--reasoning-share", "1.5"][..],
            &["simserve", "--reasoning-share", "x"],
            &[
                "simserve",
                "--reasoning-share",
                "0.5",
                "--reasoning-member",
                "thinking",
            ],
            &["simserve", "--reasoning-member", "reasoning"],
        ] {
            let e = reasoning(bad).unwrap_err().to_string();
            assert!(e.contains("reasoning"), "{bad:?}: {e}");
        }
    }
}
