//! Per-request results: what one request measured, from its `sent` to its `done`. Every
//! aggregate (the summary today; windows, goodput, groups by tag later) is computed from these,
//! never from raw events, so each definition in docs/metrics.md lives in one place.

use crate::sparse::SparseStat;
use tokenpipe_format::{Done, ErrorKind, Grouping, OrOther, Sent, Token};

/// A request between its `sent` and its `done`: what its `token` records have said so far.
#[derive(Debug)]
pub struct InFlight {
    scheduled_ns: Option<u64>,
    sent_ns: u64,
    first_token_ns: Option<u64>,
    last_token_ns: Option<u64>,
    tokens: u64,
    gaps: SparseStat,
}

impl InFlight {
    /// A request that was just sent.
    pub fn new(sent: &Sent) -> Self {
        InFlight {
            scheduled_ns: sent.scheduled_ns,
            sent_ns: sent.sent_ns,
            first_token_ns: None,
            last_token_ns: None,
            tokens: 0,
            gaps: SparseStat::default(),
        }
    }

    /// Adds a token event; its gap to the previous one is an inter-token latency. The caller has
    /// checked the order (see `RequestTracker`).
    pub fn token(&mut self, t: &Token) -> Result<(), String> {
        self.tokens = self
            .tokens
            .checked_add(u64::from(t.tokens))
            .ok_or_else(|| format!("request {}: its token counts pass 2^64", t.id))?;
        // Tokens without text count, but their events are not content: TTFT and ITL are
        // measured between events that carried text (docs/metrics.md).
        if t.empty {
            return Ok(());
        }
        match self.last_token_ns {
            Some(prev) => self.gaps.push_ns(t.at_ns.saturating_sub(prev)),
            None => self.first_token_ns = Some(t.at_ns),
        }
        self.last_token_ns = Some(t.at_ns);
        Ok(())
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
    /// When it should have been sent.
    pub scheduled_ns: Option<u64>,
    /// When it was sent; `None` if it never was.
    pub sent_ns: Option<u64>,
    /// When it ended; `None` if the run ended first.
    pub done_ns: Option<u64>,
    /// When its first content arrived.
    pub first_token_ns: Option<u64>,
    /// Output length: the server's `completion_tokens`, else the sum of its token events.
    pub output_tokens: u64,
    /// The server's `prompt_tokens`.
    pub input_tokens: Option<u64>,
    /// Its inter-token gaps.
    pub gaps: SparseStat,
    /// Its session, turn and tags, echoed by `fire` on the `done`.
    pub grouping: Grouping,
}

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
        r.done_ns = Some(d.at_ns);
        r.input_tokens = d.prompt_tokens;
        if let Some(n) = d.completion_tokens {
            r.output_tokens = n;
        }
        r.grouping = d.grouping.clone();
        r
    }

    /// The result of a request still in flight when its run ended (a killed run): a failure.
    pub fn unfinished(id: u64, flight: InFlight) -> Self {
        Self::from_flight(id, flight)
    }

    fn from_flight(id: u64, f: InFlight) -> Self {
        RequestResult {
            id,
            scheduled_ns: f.scheduled_ns,
            sent_ns: Some(f.sent_ns),
            first_token_ns: f.first_token_ns,
            output_tokens: f.tokens,
            gaps: f.gaps,
            ..Self::default()
        }
    }

    /// Time to first token: from the send to the first content.
    pub fn ttft_ns(&self) -> Option<u64> {
        Some(self.first_token_ns?.saturating_sub(self.sent_ns?))
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

    /// How late it was sent against its schedule (0 when early).
    pub fn dispatch_lag_ns(&self) -> Option<u64> {
        Some(self.sent_ns?.saturating_sub(self.scheduled_ns?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(at_ns: u64, empty: bool) -> Token {
        Token {
            id: 1,
            at_ns,
            tokens: 1,
            empty,
        }
    }

    #[test]
    fn an_empty_token_counts_but_does_not_set_ttft_or_a_gap() {
        let mut f = InFlight::new(&Sent {
            id: 1,
            scheduled_ns: Some(0),
            sent_ns: 100,
        });
        f.token(&token(150, true)).unwrap();
        f.token(&token(300, false)).unwrap();
        f.token(&token(350, true)).unwrap();
        f.token(&token(400, false)).unwrap();
        let r = RequestResult::ended(
            Some(f),
            &Done {
                id: 1,
                at_ns: 450,
                ok: true,
                ..Done::default()
            },
        );
        assert_eq!(r.output_tokens, 4, "empty tokens count toward the output");
        assert_eq!(
            r.ttft_ns(),
            Some(200),
            "TTFT is to the first token with text"
        );
        assert_eq!(
            r.gaps.running().count(),
            1,
            "one gap, between the two tokens with text"
        );
    }
}
