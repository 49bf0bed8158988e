//! Per-request results: what one request measured, from its `sent` to its `done`. Every
//! aggregate (the summary, windows, goodput, several runs) is computed from these, never from
//! raw events, so each definition in docs/metrics.md lives in one place: the methods here.

mod reasoning;

use crate::error::RequestError;
use crate::sparse::SparseStat;
use reasoning::ReasoningTimes;
use tokenpipe_format::{Done, ErrorKind, Grouping, OrOther, Sent, Token};

/// One streamed event of a request, kept only when an aggregator asks for every event
/// (`FoldOptions::keep_events`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTime {
    /// When it was read.
    pub at_ns: u64,
    /// Tokens it carried.
    pub tokens: u32,
    /// It carried no text (see `token.empty`).
    pub empty: bool,
}

/// A request between its `sent` and its `done`: what its `token` records have said so far.
#[derive(Debug)]
pub struct InFlight {
    scheduled_ns: Option<u64>,
    sent_ns: u64,
    first_token_ns: Option<u64>,
    last_token_ns: Option<u64>,
    last_event_ns: Option<u64>,
    tokens: u64,
    content_events: u64,
    empty_events: u64,
    gaps: SparseStat,
    token_gaps: SparseStat,
    events: Option<Vec<EventTime>>,
    reasoning: ReasoningTimes,
}

impl InFlight {
    /// A request that was just sent; `keep_events` keeps the time of every event it gets.
    pub fn new(sent: &Sent, keep_events: bool) -> Self {
        InFlight {
            scheduled_ns: sent.scheduled_ns,
            sent_ns: sent.sent_ns,
            first_token_ns: None,
            last_token_ns: None,
            last_event_ns: None,
            tokens: 0,
            content_events: 0,
            empty_events: 0,
            gaps: SparseStat::default(),
            token_gaps: SparseStat::default(),
            events: keep_events.then(Vec::new),
            reasoning: ReasoningTimes::default(),
        }
    }

    /// Tokens its events have brought so far, and the time since its send at `at_ns`: what a
    /// count is judged against (the `plausible` module).
    pub fn tokens_over(&self, at_ns: u64) -> (u64, u64) {
        (self.tokens, at_ns.saturating_sub(self.sent_ns))
    }

    /// Adds a token event; its gap to the previous one is an inter-token latency. The caller has
    /// checked the order (see `RequestTracker`).
    pub fn token(&mut self, t: &Token) -> Result<(), RequestError> {
        self.tokens = self
            .tokens
            .checked_add(u64::from(t.tokens))
            .ok_or(RequestError::TokenCount { request: t.id })?;
        self.last_event_ns = Some(t.at_ns);
        if let Some(events) = &mut self.events {
            events.push(EventTime {
                at_ns: t.at_ns,
                tokens: t.tokens,
                empty: t.empty,
            });
        }
        // Tokens without text count, but their events are not content: TTFT and ITL are
        // measured between events that carried text (docs/metrics.md).
        if t.empty {
            self.empty_events += 1;
            return Ok(());
        }
        self.content_events += 1;
        self.reasoning.event(t);
        match self.last_token_ns {
            Some(prev) => {
                let gap = t.at_ns.saturating_sub(prev);
                self.gaps.push_ns(gap);
                // Per token: the gap shared by the tokens the event brought, once per token.
                let m = u64::from(t.tokens.max(1));
                self.token_gaps.push_ns_n(gap / m, m);
            }
            None => self.first_token_ns = Some(t.at_ns),
        }
        self.last_token_ns = Some(t.at_ns);
        Ok(())
    }
}

/// Where a request's output length came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CountSource {
    /// The server's `usage` (exact).
    Usage,
    /// The sum of the request's `token` events (exact only when each event was one token).
    #[default]
    Counted,
}

impl CountSource {
    /// The name used in per-request records.
    pub fn as_str(self) -> &'static str {
        match self {
            CountSource::Usage => "usage",
            CountSource::Counted => "counted",
        }
    }
}

/// What one request measured. Times are nanoseconds on the run's clock.
#[derive(Debug, Clone, Default)]
pub struct RequestResult {
    /// Request id.
    pub id: u64,
    /// True when its `done` was ok.
    pub ok: bool,
    /// Why it failed; `None` when ok, or when it never ended (a killed run).
    pub error_kind: Option<OrOther<ErrorKind>>,
    /// The failure's detail, as `fire` wrote it.
    pub error: Option<String>,
    /// The HTTP status, when a response head arrived.
    pub status: Option<u16>,
    /// The last choice's `finish_reason`.
    pub finish_reason: Option<String>,
    /// When it should have been sent.
    pub scheduled_ns: Option<u64>,
    /// When it was sent; `None` if it never was.
    pub sent_ns: Option<u64>,
    /// When it ended; `None` if the run ended first.
    pub done_ns: Option<u64>,
    /// When the first event of the response arrived, whatever it held (a role-only chunk
    /// included); `None` from a writer before format 1.3.
    pub first_event_ns: Option<u64>,
    /// When its first content arrived.
    pub first_token_ns: Option<u64>,
    /// When its last content arrived.
    pub last_token_ns: Option<u64>,
    /// When its last token event (empty or not) arrived.
    pub last_event_ns: Option<u64>,
    /// Output length: the server's `completion_tokens`, else the sum of its token events.
    pub output_tokens: u64,
    /// Where `output_tokens` came from.
    pub output_source: CountSource,
    /// The sum of its token events' `tokens`, whatever usage says.
    pub counted_tokens: u64,
    /// The server's `prompt_tokens`.
    pub input_tokens: Option<u64>,
    /// Token events that carried text.
    pub content_events: u64,
    /// Token events that stood for tokens without text.
    pub empty_events: u64,
    /// Its inter-token gaps, one per pair of content events.
    pub gaps: SparseStat,
    /// Its inter-token gaps per token: each gap divided by the tokens of the event that ended
    /// it, counted once per token.
    pub token_gaps: SparseStat,
    /// Every token event, when the fold kept them (`FoldOptions::keep_events`).
    pub events: Option<Vec<EventTime>>,
    /// Its session, turn and tags, echoed by `fire` on the `done`.
    pub grouping: Grouping,
    /// When its first reasoning event arrived; `None` without reasoning.
    pub first_reasoning_ns: Option<u64>,
    /// When its first answer event (content that was not reasoning) arrived.
    pub first_answer_ns: Option<u64>,
    /// The gaps between its consecutive answer events with no reasoning between them; `None`
    /// without reasoning (every gap is the answer's then).
    pub answer_gaps: Option<SparseStat>,
    /// Output tokens spent reasoning: the `done`'s, else the sum of its reasoning events';
    /// `None` without reasoning.
    pub reasoning_tokens: Option<u64>,
    /// Output tokens of the answer proper: the `done`'s, else the output less the reasoning.
    pub answer_tokens: Option<u64>,
    /// Prompt tokens the server's prefix cache served (`done.cached_tokens`).
    pub cached_tokens: Option<u64>,
}

const NS_PER_S: f64 = 1e9;

impl RequestResult {
    /// The result of a request that ended in `done`, from its state while in flight (`None` if
    /// it was never sent).
    pub fn ended(flight: Option<InFlight>, d: &Done) -> Self {
        let mut r = match flight {
            Some(f) => Self::from_flight(d.id, f),
            None => RequestResult {
                id: d.id,
                ..Self::default()
            },
        };
        r.ok = d.ok;
        r.error_kind = d.error_kind.clone();
        r.error = d.error.clone();
        r.status = d.status;
        r.finish_reason = d.finish_reason.clone();
        r.done_ns = Some(d.at_ns);
        r.first_event_ns = d.first_event_ns;
        r.input_tokens = d.prompt_tokens;
        if let Some(n) = d.completion_tokens {
            r.output_tokens = n;
            r.output_source = CountSource::Usage;
        }
        r.grouping = d.grouping.clone();
        r.cached_tokens = d.cached_tokens;
        if d.reasoning_tokens.is_some() {
            r.reasoning_tokens = d.reasoning_tokens;
        }
        r.answer_tokens = d.answer_tokens.or_else(|| {
            let reasoning = r.reasoning_tokens?;
            Some(r.output_tokens.saturating_sub(reasoning))
        });
        r
    }

    /// The result of a request still in flight when its run ended (a killed run): a failure.
    pub fn unfinished(id: u64, flight: InFlight) -> Self {
        Self::from_flight(id, flight)
    }

    fn from_flight(id: u64, f: InFlight) -> Self {
        let reasoned = f.reasoning.reasoning_tokens;
        RequestResult {
            first_reasoning_ns: f.reasoning.first_reasoning_ns,
            first_answer_ns: f.reasoning.first_answer_ns,
            answer_gaps: f.reasoning.answer_gaps,
            reasoning_tokens: (reasoned > 0).then_some(reasoned),
            id,
            scheduled_ns: f.scheduled_ns,
            sent_ns: Some(f.sent_ns),
            first_token_ns: f.first_token_ns,
            last_token_ns: f.last_token_ns,
            last_event_ns: f.last_event_ns,
            output_tokens: f.tokens,
            counted_tokens: f.tokens,
            content_events: f.content_events,
            empty_events: f.empty_events,
            gaps: f.gaps,
            token_gaps: f.token_gaps,
            events: f.events,
            ..Self::default()
        }
    }

    /// Time to first token: from the send to the first content.
    pub fn ttft_ns(&self) -> Option<u64> {
        Some(self.first_token_ns?.saturating_sub(self.sent_ns?))
    }

    /// Time to first response: from the send to the first event of any kind (llama-benchy's
    /// TTFR; vLLM's chat TTFT, which stops at the role-only chunk). Falls back to the first
    /// token where the writer did not record the first event.
    pub fn ttfr_ns(&self) -> Option<u64> {
        let first = self.first_event_ns.or(self.first_token_ns)?;
        Some(first.saturating_sub(self.sent_ns?))
    }

    /// End-to-end latency: from the send to the end.
    pub fn e2el_ns(&self) -> Option<u64> {
        Some(self.done_ns?.saturating_sub(self.sent_ns?))
    }

    /// Time per output token after the first: `(E2EL − TTFT) / (n − 1)`, for n > 1.
    pub fn tpot_ns(&self) -> Option<f64> {
        let n = self.output_tokens;
        (n > 1).then_some(())?;
        Some((self.e2el_ns()? - self.ttft_ns()?) as f64 / (n - 1) as f64)
    }

    /// How late it was sent against its schedule (0 when early): the client's queue time.
    pub fn dispatch_lag_ns(&self) -> Option<u64> {
        Some(self.sent_ns?.saturating_sub(self.scheduled_ns?))
    }

    /// Time to first token from the instant the request was due, not from its send: a client
    /// that fell behind cannot hide the wait (coordinated omission).
    pub fn ttft_from_scheduled_ns(&self) -> Option<u64> {
        Some(self.first_token_ns?.saturating_sub(self.scheduled_ns?))
    }

    /// End-to-end latency from the instant the request was due (coordinated-omission safe).
    pub fn e2el_from_scheduled_ns(&self) -> Option<u64> {
        Some(self.done_ns?.saturating_sub(self.scheduled_ns?))
    }

    /// What the user saw, in tokens per second, TTFT included: `n / E2EL`.
    pub fn user_tps(&self) -> Option<f64> {
        let e2el = self.e2el_ns().filter(|&e| e > 0)?;
        Some(self.output_tokens as f64 * NS_PER_S / e2el as f64)
    }

    /// Streaming speed once tokens flow, TTFT excluded: `n / (E2EL − TTFT)` (the closed-loop
    /// framework's "generation throughput").
    pub fn user_gen_tps(&self) -> Option<f64> {
        let span = self.e2el_ns()?.checked_sub(self.ttft_ns()?)?;
        (span > 0).then(|| self.output_tokens as f64 * NS_PER_S / span as f64)
    }

    /// Mean gap between its content events; `None` with fewer than two.
    pub fn itl_mean_ns(&self) -> Option<f64> {
        let gaps = self.gaps.running();
        (gaps.count() > 0).then(|| gaps.mean())
    }

    /// Its longest gap between content events: the worst pause its reader saw.
    pub fn itl_max_ns(&self) -> Option<f64> {
        let gaps = self.gaps.running();
        (gaps.count() > 0).then(|| gaps.max())
    }

    /// Population standard deviation of its gaps.
    pub fn itl_std_ns(&self) -> Option<f64> {
        let gaps = self.gaps.running();
        (gaps.count() > 0).then(|| gaps.std())
    }

    /// Mean gap per token: each gap split over the tokens of the event that ended it.
    pub fn itl_per_token_mean_ns(&self) -> Option<f64> {
        let gaps = self.token_gaps.running();
        (gaps.count() > 0).then(|| gaps.mean())
    }

    /// How unevenly this request streamed: the coefficient of variation of its own gaps,
    /// population std / mean, for at least two gaps with a mean above 0. Unlike the run's
    /// `itl_jitter`, one slow request cannot hide among many even ones.
    pub fn itl_cv(&self) -> Option<f64> {
        let gaps = self.gaps.running();
        (gaps.count() >= 2 && gaps.mean() > 0.0).then(|| gaps.std() / gaps.mean())
    }

    /// Whether the answer had reasoning (a reasoning event, or the server's count of them).
    pub fn had_reasoning(&self) -> bool {
        self.reasoning_tokens.is_some() || self.first_reasoning_ns.is_some()
    }

    /// Time to first answer token: from the send to the first content that was not reasoning
    /// (AIPerf's time to first output token).
    pub fn ttfa_ns(&self) -> Option<u64> {
        Some(self.first_answer_ns?.saturating_sub(self.sent_ns?))
    }

    /// Reasoning duration: from the first reasoning event to the first answer event.
    pub fn reasoning_duration_ns(&self) -> Option<u64> {
        Some(
            self.first_answer_ns?
                .saturating_sub(self.first_reasoning_ns?),
        )
    }

    /// Time per answer token after the first: `(E2EL − TTFA) / (answer_tokens − 1)`, for more
    /// than one answer token (the output when the answer had no reasoning).
    pub fn answer_tpot_ns(&self) -> Option<f64> {
        let n = self.answer_tokens.unwrap_or(self.output_tokens);
        (n > 1).then_some(())?;
        let span = self.e2el_ns()?.checked_sub(self.ttfa_ns()?)?;
        Some(span as f64 / (n - 1) as f64)
    }

    /// The gaps between the answer's events: those with no reasoning between them when there
    /// was some, else every gap.
    pub fn answer_gaps(&self) -> &SparseStat {
        self.answer_gaps.as_ref().unwrap_or(&self.gaps)
    }

    /// The share of its prompt the server's prefix cache served: `cached_tokens / input_tokens`.
    pub fn cache_hit_ratio(&self) -> Option<f64> {
        let prompt = self.input_tokens.filter(|&n| n > 0)?;
        Some(self.cached_tokens? as f64 / prompt as f64)
    }

    /// Prompt tokens per second of TTFT: `prompt_tokens / TTFT`.
    pub fn prefill_tps(&self) -> Option<f64> {
        let ttft = self.ttft_ns().filter(|&t| t > 0)?;
        Some(self.input_tokens? as f64 * NS_PER_S / ttft as f64)
    }
}

#[cfg(test)]
mod tests;
