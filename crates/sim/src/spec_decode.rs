//! `--spec-decode K:P`: a simulated speculative decoder, so that a client's handling of chunks
//! that carry several tokens, and a reader of vLLM's `vllm:spec_decode_*` counters, can be
//! tried without a draft model.
//!
//! The first token of an answer comes from the prefill, alone. Every later decode step proposes
//! K draft tokens; each is accepted with probability P, in order, until the first rejection;
//! the target model then adds one token of its own (the bonus, or the correction of the rejected
//! draft). So a step emits 1 to K+1 tokens, sent together in one SSE chunk, and the engine times
//! steps, not tokens: a request of N tokens takes fewer steps than N. The last step of an answer
//! is cut to the tokens still owed.
//!
//! The draws are seeded by the request's number (the `N` of its `cmpl-N` id), so the same
//! requests accept the same drafts in every run.
//!
//! The counters follow vLLM's (`vllm/v1/spec_decode/metrics.py`): `vllm:spec_decode_num_drafts`
//! (steps that proposed drafts), `_num_draft_tokens` (K per such step), `_num_accepted_tokens`
//! (drafts accepted, the bonus not counted) and `_num_accepted_tokens_per_pos` (by draft
//! position, label `position="0"` …). They count the draws as the drafter made them, also on
//! a last step cut short, so that with P = 1 the acceptance rate is exactly 1 and the mean
//! acceptance length (1 + accepted / drafts) exactly K + 1.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The most draft tokens per step accepted on the command line (vLLM's configurations use 1
/// to about 10).
pub const MAX_DRAFT_TOKENS: u32 = 64;

/// K draft tokens per step, each accepted with probability P.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpecDecode {
    /// Draft tokens proposed per decode step, 1 to [`MAX_DRAFT_TOKENS`].
    pub k: u32,
    /// The probability that a draft token is accepted, given the ones before it were; 0 to 1.
    pub p: f64,
}

// `p` is checked finite when parsed, so equality is an equivalence.
impl Eq for SpecDecode {}

impl SpecDecode {
    /// Parses `K:P`, e.g. `3:0.7`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (k, p) = text
            .split_once(':')
            .ok_or_else(|| format!("expected K:P (e.g. 3:0.7), got `{text}`"))?;
        let k: u32 = k
            .trim()
            .parse()
            .ok()
            .filter(|k| (1..=MAX_DRAFT_TOKENS).contains(k))
            .ok_or_else(|| {
                format!("K must be a whole number of draft tokens from 1 to {MAX_DRAFT_TOKENS}, got `{k}`")
            })?;
        let p: f64 = p
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| p.is_finite() && (0.0..=1.0).contains(p))
            .ok_or_else(|| format!("P must be a probability from 0 to 1, got `{p}`"))?;
        Ok(Self { k, p })
    }
}

/// The server's speculative-decoding counters, shared by every request.
#[derive(Debug)]
pub struct SpecCounters {
    /// `model_name="…",engine="0"`, as the other series carry.
    labels: String,
    drafts: AtomicU64,
    draft_tokens: AtomicU64,
    accepted: AtomicU64,
    /// Accepted drafts by position, 0-based.
    per_pos: Vec<AtomicU64>,
}

impl SpecCounters {
    /// Zero counters for `k` draft positions, written with `labels`.
    pub fn new(labels: String, k: u32) -> Self {
        Self {
            labels,
            drafts: AtomicU64::new(0),
            draft_tokens: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            per_pos: (0..k).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Appends the four counter families to `out`, in vLLM's names and help texts.
    pub fn render(&self, out: &mut String) {
        let l = &self.labels;
        let families = [
            (
                "vllm:spec_decode_num_drafts",
                "Number of spec decoding drafts.",
                &self.drafts,
            ),
            (
                "vllm:spec_decode_num_draft_tokens",
                "Number of draft tokens.",
                &self.draft_tokens,
            ),
            (
                "vllm:spec_decode_num_accepted_tokens",
                "Number of accepted tokens.",
                &self.accepted,
            ),
        ];
        for (name, help, value) in families {
            let v = value.load(Ordering::Relaxed) as f64;
            let _ = write!(
                out,
                "# HELP {name}_total {help}\n# TYPE {name}_total counter\n{name}_total{{{l}}} {v:?}\n"
            );
        }
        let name = "vllm:spec_decode_num_accepted_tokens_per_pos";
        let _ = write!(
            out,
            "# HELP {name}_total Accepted tokens per draft position.\n# TYPE {name}_total counter\n"
        );
        for (pos, value) in self.per_pos.iter().enumerate() {
            let v = value.load(Ordering::Relaxed) as f64;
            let _ = writeln!(out, "{name}_total{{{l},position=\"{pos}\"}} {v:?}");
        }
    }
}

/// One request's drafter: its own seeded draws, counted into the server's counters.
#[derive(Debug)]
pub struct Drafter {
    spec: SpecDecode,
    state: u64,
    counters: Arc<SpecCounters>,
}

impl Drafter {
    /// The drafter of request number `seq`.
    pub fn new(spec: SpecDecode, seq: u64, counters: Arc<SpecCounters>) -> Self {
        Self {
            spec,
            state: seq.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5bd1_e995,
            counters,
        }
    }

    /// A uniform draw in [0, 1).
    fn uniform(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One decode step: drafts K tokens, counts what was accepted, and answers the tokens the
    /// step emits (accepted drafts plus one), at most `owed`, at least 1.
    pub fn step(&mut self, owed: u64) -> u64 {
        let mut accepted = 0u32;
        while accepted < self.spec.k && self.uniform() < self.spec.p {
            accepted += 1;
        }
        let c = &self.counters;
        c.drafts.fetch_add(1, Ordering::Relaxed);
        c.draft_tokens
            .fetch_add(u64::from(self.spec.k), Ordering::Relaxed);
        c.accepted.fetch_add(u64::from(accepted), Ordering::Relaxed);
        for pos in &c.per_pos[..accepted as usize] {
            pos.fetch_add(1, Ordering::Relaxed);
        }
        (u64::from(accepted) + 1).min(owed).max(1)
    }

    /// How many steps an answer of `tokens` takes, the prefill's first token being one: the
    /// whole answer drawn at once, for an answer sent whole.
    pub fn steps_for(&mut self, tokens: u64) -> u64 {
        if tokens == 0 {
            return 0;
        }
        let (mut sent, mut steps) = (1, 1);
        while sent < tokens {
            sent += self.step(tokens - sent);
            steps += 1;
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::{parse_exposition, sum_series};

    fn counters(k: u32) -> Arc<SpecCounters> {
        Arc::new(SpecCounters::new("engine=\"0\"".into(), k))
    }

    #[test]
    fn k_and_p_are_parsed_and_checked() {
        assert_eq!(
            SpecDecode::parse("3:0.7").unwrap(),
            SpecDecode { k: 3, p: 0.7 }
        );
        for bad in [
            "3", "0:0.5", "65:0.5", "x:0.5", "3:1.5", "3:-0.1", "3:nan", "3:",
        ] {
            let e = SpecDecode::parse(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(SpecDecode::parse("3:nan")
            .unwrap_err()
            .starts_with("P must"));
        assert!(SpecDecode::parse("0:1").unwrap_err().starts_with("K must"));
    }

    #[test]
    fn certain_acceptance_emits_k_plus_one_and_none_emits_one() {
        let c = counters(4);
        let mut d = Drafter::new(SpecDecode { k: 4, p: 1.0 }, 1, c.clone());
        assert_eq!(d.step(100), 5);
        assert_eq!(d.step(3), 3, "cut to what is owed");
        assert_eq!(d.steps_for(11), 3, "1 + 5 + 5");
        let mut out = String::new();
        c.render(&mut out);
        let s = parse_exposition(&out, "vllm:");
        let total = |n: &str| sum_series(&s, n, |_| true).unwrap();
        assert_eq!(total("vllm:spec_decode_num_drafts_total"), 4.0);
        assert_eq!(total("vllm:spec_decode_num_draft_tokens_total"), 16.0);
        assert_eq!(total("vllm:spec_decode_num_accepted_tokens_total"), 16.0);
        assert_eq!(
            s["vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",position=\"3\"}"],
            4.0
        );
        let c = counters(2);
        let mut d = Drafter::new(SpecDecode { k: 2, p: 0.0 }, 1, c.clone());
        assert_eq!(d.steps_for(10), 10);
        assert_eq!(c.accepted.load(Ordering::Relaxed), 0);
        assert_eq!(c.draft_tokens.load(Ordering::Relaxed), 18);
    }

    #[test]
    fn half_acceptance_is_near_its_expectation_and_seeded() {
        let c = counters(3);
        let mut d = Drafter::new(SpecDecode { k: 3, p: 0.5 }, 7, c.clone());
        let steps: Vec<u64> = (0..4000).map(|_| d.step(u64::MAX)).collect();
        let mut again = Drafter::new(SpecDecode { k: 3, p: 0.5 }, 7, counters(3));
        let repeat: Vec<u64> = (0..4000).map(|_| again.step(u64::MAX)).collect();
        assert_eq!(steps, repeat, "same request number, same draws");
        // Accepted per step: 0.5 + 0.25 + 0.125 = 0.875 on average.
        let accepted = c.accepted.load(Ordering::Relaxed) as f64 / 4000.0;
        assert!((accepted - 0.875).abs() < 0.06, "{accepted}");
    }
}
