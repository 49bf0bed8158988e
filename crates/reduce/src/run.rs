//! Folds one run's event stream (`sent`, `token`, `done` of interleaved requests) into
//! [`RunStats`]. Per-request state lives only while the request is in flight; finished ids are
//! remembered in an [`IdSet`] so that late or repeated records are caught.

use crate::stat::Stat;
use std::collections::HashMap;
use std::io::BufRead;
use tokenpipe_format::{Done, Header, IdSet, Record, RecordReader, Sent, Token};

/// Everything a run's summary is computed from. Latency samples come from successful requests
/// only; dispatch lag from every sent request.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Requests whose `done` was ok.
    pub requests_ok: u64,
    /// Requests whose `done` was not ok, plus those that never got a `done`.
    pub requests_failed: u64,
    /// The earliest `sent_ns` of the run.
    pub first_sent_ns: Option<u64>,
    /// The latest `done.at_ns` of the run.
    pub last_done_ns: Option<u64>,
    /// Sum of `done.prompt_tokens` over successful requests.
    pub input_tokens: u64,
    /// Sum of each successful request's output length n.
    pub output_tokens: u64,
    /// Time to first token.
    pub ttft: Stat,
    /// Time per output token after the first.
    pub tpot: Stat,
    /// Gaps between consecutive token events.
    pub itl: Stat,
    /// End-to-end latency.
    pub e2el: Stat,
    /// `sent_ns - scheduled_ns`.
    pub dispatch_lag: Stat,
}

/// What reading one run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The header of the input stream.
    pub header: Header,
    /// The folded metrics.
    pub stats: RunStats,
    /// Requests sent but never done (a killed run); already counted in `requests_failed`.
    pub unfinished: u64,
}

/// A request between its `sent` and its `done`.
#[derive(Debug)]
struct InFlight {
    sent_line: usize,
    sent_ns: u64,
    first_token_ns: Option<u64>,
    last_token_ns: Option<u64>,
    tokens: u64,
    /// ITL gaps, recorded into the run only if the request ends ok.
    gaps: Vec<u64>,
}

impl InFlight {
    /// The time of the request's latest event, which the next one must not precede.
    fn last_ns(&self) -> u64 {
        self.last_token_ns.unwrap_or(self.sent_ns)
    }
}

/// The streaming fold over one run's records. Feed records with [`Reducer::push`], then call
/// [`Reducer::finish`].
#[derive(Debug, Default)]
pub struct Reducer {
    stats: RunStats,
    in_flight: HashMap<u64, InFlight>,
    finished: IdSet,
    requests_seen: bool,
}

/// Input that breaks the stream's rules, with the line it was found on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Reducer {
    /// A reducer for a run with no records yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Folds one record read from `line`. Records other than `sent`, `token` and `done` are
    /// ignored.
    pub fn push(&mut self, record: &Record, line: usize) -> Result<(), Fault> {
        let fault = |message: String| Fault { line, message };
        match record {
            Record::Sent(s) => self.sent(s, line).map_err(fault),
            Record::Token(t) => self.token(t).map_err(fault),
            Record::Done(d) => self.done(d).map_err(fault),
            Record::Header(_) => Err(fault(
                "a second header: each input must hold one run (pass runs as separate files)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    fn sent(&mut self, s: &Sent, line: usize) -> Result<(), String> {
        self.requests_seen = true;
        if let Some(prev) = self.in_flight.get(&s.id) {
            return Err(format!(
                "request {}: a second sent record (the first is on line {})",
                s.id, prev.sent_line
            ));
        }
        if self.finished.contains(s.id) {
            return Err(format!("request {}: sent record after its done", s.id));
        }
        self.stats.first_sent_ns = Some(
            self.stats
                .first_sent_ns
                .map_or(s.sent_ns, |t| t.min(s.sent_ns)),
        );
        if let Some(scheduled) = s.scheduled_ns {
            // A send ahead of its schedule has no lag.
            self.stats
                .dispatch_lag
                .push_ns(s.sent_ns.saturating_sub(scheduled));
        }
        self.in_flight.insert(
            s.id,
            InFlight {
                sent_line: line,
                sent_ns: s.sent_ns,
                first_token_ns: None,
                last_token_ns: None,
                tokens: 0,
                gaps: Vec::new(),
            },
        );
        Ok(())
    }

    fn token(&mut self, t: &Token) -> Result<(), String> {
        let Some(req) = self.in_flight.get_mut(&t.id) else {
            return Err(if self.finished.contains(t.id) {
                format!("request {}: token record after its done", t.id)
            } else {
                format!(
                    "request {}: token record for a request that was never sent",
                    t.id
                )
            });
        };
        let last = req.last_ns();
        if t.at_ns < last {
            return Err(format!(
                "request {}: token at_ns {} is earlier than the request's previous event ({last})",
                t.id, t.at_ns
            ));
        }
        match req.last_token_ns {
            Some(prev) => req.gaps.push(t.at_ns - prev),
            None => req.first_token_ns = Some(t.at_ns),
        }
        req.last_token_ns = Some(t.at_ns);
        req.tokens = req
            .tokens
            .checked_add(u64::from(t.tokens))
            .ok_or_else(|| format!("request {}: its token counts pass 2^64", t.id))?;
        Ok(())
    }

    fn done(&mut self, d: &Done) -> Result<(), String> {
        self.requests_seen = true;
        if !self.finished.insert(d.id) {
            return Err(format!("request {}: a second done record", d.id));
        }
        self.stats.last_done_ns = Some(self.stats.last_done_ns.map_or(d.at_ns, |t| t.max(d.at_ns)));
        let Some(req) = self.in_flight.remove(&d.id) else {
            if d.ok {
                return Err(format!(
                    "request {}: done record with ok true for a request that was never sent",
                    d.id
                ));
            }
            self.stats.requests_failed += 1;
            return Ok(());
        };
        if d.at_ns < req.last_ns() {
            return Err(format!(
                "request {}: done at_ns {} is earlier than the request's previous event ({})",
                d.id,
                d.at_ns,
                req.last_ns()
            ));
        }
        if d.ok {
            self.succeeded(d, req)?;
        } else {
            self.stats.requests_failed += 1;
        }
        Ok(())
    }

    /// Adds a successful request's samples to the run (docs/metrics.md has the formulas).
    fn succeeded(&mut self, d: &Done, req: InFlight) -> Result<(), String> {
        let s = &mut self.stats;
        let n = d.completion_tokens.unwrap_or(req.tokens);
        let overflow = |what: &str| {
            format!(
                "request {}: the run's {what} token total passes 2^64 (corrupt usage counts?)",
                d.id
            )
        };
        s.output_tokens = s
            .output_tokens
            .checked_add(n)
            .ok_or_else(|| overflow("output"))?;
        s.input_tokens = s
            .input_tokens
            .checked_add(d.prompt_tokens.unwrap_or(0))
            .ok_or_else(|| overflow("input"))?;
        s.requests_ok += 1;
        let e2el = d.at_ns - req.sent_ns;
        s.e2el.push_ns(e2el);
        if let Some(first) = req.first_token_ns {
            let ttft = first - req.sent_ns;
            s.ttft.push_ns(ttft);
            if n > 1 {
                s.tpot.push_ns_f64((e2el - ttft) as f64 / (n - 1) as f64);
            }
        }
        for gap in req.gaps {
            s.itl.push_ns(gap);
        }
        Ok(())
    }

    /// Requests currently between `sent` and `done`.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Ends the run: requests still in flight count as failed. Returns the stats and the number
    /// of such unfinished requests, or `None` when the run held no requests at all.
    pub fn finish(mut self) -> Option<(RunStats, u64)> {
        if !self.requests_seen {
            return None;
        }
        let unfinished = self.in_flight.len() as u64;
        self.stats.requests_failed += unfinished;
        Some((self.stats, unfinished))
    }
}

/// Reads the rest of one run from `reader`, whose header has already been read, and folds it.
/// Faults name the reader's source and the line; they are bad input (exit status 2).
pub fn reduce_run<R: BufRead>(
    reader: &mut RecordReader<R>,
    header: Header,
) -> anyhow::Result<RunOutcome> {
    let mut reducer = Reducer::new();
    while let Some(record) = reader.next_record()? {
        reducer.push(&record, reader.line()).map_err(|f| {
            tokenpipe_cli::bad_input(format!(
                "{}: line {}: {}",
                reader.source_name(),
                f.line,
                f.message
            ))
        })?;
    }
    let Some((stats, unfinished)) = reducer.finish() else {
        return Err(tokenpipe_cli::bad_input(format!(
            "{}: no requests: the stream (from {}) has no sent or done records; reduce reads the output of fire",
            reader.source_name(),
            header.tool
        )));
    };
    Ok(RunOutcome {
        header,
        stats,
        unfinished,
    })
}
