//! Reads one run's events (`sent`, `token`, `done` of interleaved requests, `stall`, and the
//! closing `client`) into
//! per-request results and feeds them to an aggregator. A run ends at the next `header` (a
//! stream may hold several runs, as `for c in 1 2 4; do ... fire; done | reduce` writes) or at
//! the end of the input. The stream's ordering rules are the format's [`RequestTracker`];
//! per-request state lives only while the request is in flight.

use crate::aggregate::Aggregator;
use crate::request::{InFlight, RequestResult};
use std::io::BufRead;
use tokenpipe_format::{Header, Record, RecordReader, RequestTracker};

/// How a run's records ended.
#[derive(Debug, Default)]
pub struct RunEnd {
    /// The header that starts the next run, if the input goes on.
    pub next_header: Option<Header>,
    /// Requests sent but never done (a killed run); counted as failed.
    pub unfinished: u64,
    /// Requests the run held (with a `sent` or a `done`).
    pub requests: u64,
}

/// Reads the rest of the run that `header` started from `reader`, feeding `agg`. Faults name
/// the reader's source and the line, and a run without requests is refused: all are bad input
/// (exit status 2).
pub fn fold_run<R: BufRead>(
    reader: &mut RecordReader<R>,
    header: &Header,
    agg: &mut dyn Aggregator,
) -> anyhow::Result<RunEnd> {
    let mut tracker = RequestTracker::<InFlight>::new();
    let mut end = RunEnd::default();
    while let Some(record) = reader.next_record()? {
        let line = reader.line();
        let fault = |message: String| {
            tokenpipe_cli::bad_input(format!("{}: line {line}: {message}", reader.source_name()))
        };
        match record {
            Record::Header(h) => {
                end.next_header = Some(h);
                break;
            }
            Record::Sent(s) => {
                end.requests += 1;
                tracker
                    .sent(&s, line, InFlight::new(&s))
                    .map_err(|e| fault(e.0))?;
            }
            Record::Token(t) => {
                let flight = tracker.token(&t).map_err(|e| fault(e.0))?;
                flight.token(&t).map_err(fault)?;
            }
            Record::Done(d) => {
                let flight = tracker.done(&d).map_err(|e| fault(e.0))?;
                if flight.is_none() {
                    end.requests += 1;
                }
                agg.add(&RequestResult::ended(flight, &d)).map_err(fault)?;
            }
            Record::Stall(s) => agg.stall(&s),
            Record::Client(c) => agg.client(&c),
            _ => {}
        }
    }
    let mut unfinished: Vec<(u64, InFlight)> = tracker.into_unfinished().collect();
    unfinished.sort_by_key(|(id, _)| *id);
    end.unfinished = unfinished.len() as u64;
    for (id, flight) in unfinished {
        agg.add(&RequestResult::unfinished(id, flight))
            .map_err(tokenpipe_cli::bad_input)?;
    }
    if end.requests == 0 {
        return Err(tokenpipe_cli::bad_input(format!(
            "{}: run {} (from {}) has no sent or done records; reduce reads the output of fire",
            reader.source_name(),
            header.run_id,
            header.tool
        )));
    }
    Ok(end)
}
