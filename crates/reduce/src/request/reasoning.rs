//! A request's reasoning and answer apart: when each began, the reasoning's tokens, and the
//! answer's own gaps (docs/metrics.md, "Reasoning and answer").

use crate::sparse::SparseStat;
use tokenpipe_format::Token;

/// When a request's reasoning and its answer began, and the gaps of its answer once reasoning
/// came (kept only then: without reasoning the answer's gaps are all of them).
#[derive(Debug, Default)]
pub(super) struct ReasoningTimes {
    pub(super) first_reasoning_ns: Option<u64>,
    pub(super) first_answer_ns: Option<u64>,
    last_answer_ns: Option<u64>,
    pub(super) reasoning_tokens: u64,
    pub(super) answer_gaps: Option<SparseStat>,
}

impl ReasoningTimes {
    /// Notes a content event (the caller skips the empty ones).
    pub(super) fn event(&mut self, t: &Token) {
        if t.reasoning {
            self.first_reasoning_ns.get_or_insert(t.at_ns);
            self.reasoning_tokens = self.reasoning_tokens.saturating_add(u64::from(t.tokens));
            self.answer_gaps.get_or_insert_with(SparseStat::default);
            // A gap across reasoning is not the answer's.
            self.last_answer_ns = None;
            return;
        }
        self.first_answer_ns.get_or_insert(t.at_ns);
        if let Some(gaps) = &mut self.answer_gaps {
            if let Some(prev) = self.last_answer_ns {
                gaps.push_ns(t.at_ns.saturating_sub(prev));
            }
        }
        self.last_answer_ns = Some(t.at_ns);
    }
}
