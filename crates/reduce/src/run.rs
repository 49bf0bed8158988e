//! Reads one run's events (`sent`, `token`, `done` of interleaved requests, `stall`, and the
//! closing `client`) into
//! per-request results and feeds them to an aggregator. A run ends at the next `header` (a
//! stream may hold several runs, as `for c in 1 2 4; do ... fire; done | reduce` writes) or at
//! the end of the input. The stream's ordering rules are the format's [`RequestTracker`];
//! per-request state lives only while the request is in flight.

use crate::aggregate::Aggregator;
use crate::error::{Error, Implausible};
use crate::plausible::{self, RunTimes};
use crate::request::{InFlight, RequestResult};
use std::io::{self, BufRead};
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

/// How to read a run's events.
#[derive(Debug, Clone, Copy, Default)]
pub struct FoldOptions {
    /// Keep every event's time on its request's result (`RequestResult::events`): only the
    /// aggregators that need each event (vLLM's definitions) ask for it, since it costs memory
    /// per event of the requests in flight.
    pub keep_events: bool,
    /// Added to every time of the run, so that runs measured on different clocks (the shards
    /// of one plan) line up on one.
    pub offset_ns: u64,
    /// A run of fire's without requests is a run, not wrong input: the part of a sharded plan
    /// whose fire was killed before its first send (it counts as lost).
    pub empty_ok: bool,
}

/// Where records that aggregators write while the run goes on are sent: an output, so its
/// one error is an I/O error.
pub type Emit<'a> = dyn FnMut(Record) -> io::Result<()> + 'a;

/// Reads the rest of the run that `header` started from `reader`, feeding `agg`; records the
/// aggregators have ready go to `emit` as soon as they are. Faults name the reader's source and
/// the line, and a run without requests or with a time or a count no run can hold
/// (`plausible`) is refused: all are bad input.
pub fn fold_run<R: BufRead>(
    reader: &mut RecordReader<R>,
    header: &Header,
    agg: &mut dyn Aggregator,
    opts: &FoldOptions,
    emit: &mut Emit<'_>,
) -> Result<RunEnd, Error> {
    let mut tracker = RequestTracker::<InFlight>::new();
    let mut end = RunEnd::default();
    let mut ready = Vec::new();
    let mut times = RunTimes::default();
    let shift = |t: u64| t.saturating_add(opts.offset_ns);
    let implausible = |reader: &RecordReader<R>, source: Implausible| Error::Implausible {
        input: reader.source_name().to_string(),
        source,
    };
    while let Some(record) = reader.next_record()? {
        let line = reader.line();
        check_times(&mut times, line, &record).map_err(|e| implausible(reader, e))?;
        let input = || reader.source_name().to_string();
        let order = |source| Error::Order {
            input: input(),
            line,
            source,
        };
        let request = |source| Error::Request {
            input: input(),
            line,
            source,
        };
        match record {
            Record::Header(h) => {
                end.next_header = Some(h);
                break;
            }
            Record::Sent(mut s) => {
                s.sent_ns = shift(s.sent_ns);
                s.scheduled_ns = s.scheduled_ns.map(shift);
                end.requests += 1;
                agg.sent(&s);
                tracker
                    .sent(&s, line, InFlight::new(&s, opts.keep_events))
                    .map_err(order)?;
            }
            Record::Token(mut t) => {
                t.at_ns = shift(t.at_ns);
                agg.token(&t);
                let flight = tracker.token(&t).map_err(order)?;
                flight.token(&t).map_err(request)?;
                let (tokens, life_ns) = flight.tokens_over(t.at_ns);
                plausible::count(line, "token.tokens", tokens, life_ns)
                    .map_err(|e| implausible(reader, e))?;
            }
            Record::Done(mut d) => {
                d.at_ns = shift(d.at_ns);
                d.first_event_ns = d.first_event_ns.map(shift);
                let flight = tracker.done(&d).map_err(order)?;
                if flight.is_none() {
                    end.requests += 1;
                }
                let result = RequestResult::ended(flight, &d);
                check_counts(line, &result).map_err(|e| implausible(reader, e))?;
                agg.add(&result).map_err(request)?;
            }
            Record::Stall(mut s) => {
                s.at_ns = shift(s.at_ns);
                agg.stall(&s)
            }
            Record::Client(c) => agg.client(&c),
            Record::ServerMetrics(m) => agg.server_metrics(&m),
            _ => {}
        }
        agg.drain(&mut ready);
        for record in ready.drain(..) {
            emit(record)?;
        }
    }
    times.finish().map_err(|e| implausible(reader, e))?;
    let mut unfinished: Vec<(u64, InFlight)> = tracker.into_unfinished().collect();
    unfinished.sort_by_key(|(id, _)| *id);
    end.unfinished = unfinished.len() as u64;
    for (id, flight) in unfinished {
        agg.add(&RequestResult::unfinished(id, flight))
            .map_err(Error::Unfinished)?;
    }
    agg.drain(&mut ready);
    for record in ready.drain(..) {
        emit(record)?;
    }
    if end.requests == 0 && !(opts.empty_ok && header.tool == "fire") {
        return Err(Error::NoRequests {
            input: reader.source_name().to_string(),
            run: header.run_id.clone(),
            tool: header.tool.clone(),
        });
    }
    Ok(end)
}

/// Notes the times of a record, on its own clock (before a shard's offset), for the run's
/// plausibility (`plausible`).
fn check_times(times: &mut RunTimes, line: usize, record: &Record) -> Result<(), Implausible> {
    match record {
        // A missing time reads as 0, which no rule refuses (and no allocation per request).
        Record::Sent(s) => times.record(
            line,
            &[
                ("sent.sent_ns", s.sent_ns),
                ("sent.scheduled_ns", s.scheduled_ns.unwrap_or(0)),
            ],
        ),
        Record::Token(t) => times.record(line, &[("token.at_ns", t.at_ns)]),
        Record::Done(d) => times.record(
            line,
            &[
                ("done.at_ns", d.at_ns),
                ("done.first_event_ns", d.first_event_ns.unwrap_or(0)),
            ],
        ),
        Record::Stall(s) => times.record(
            line,
            &[
                ("stall.at_ns", s.at_ns),
                ("stall.duration_ns", s.at_ns.saturating_add(s.duration_ns)),
            ],
        ),
        Record::Client(c) => times.client(line, c.wall_ns),
        _ => Ok(()),
    }
}

/// A request's usage counts against its life, from its send (or the run's start, for one never
/// sent) to its `done`.
fn check_counts(line: usize, r: &RequestResult) -> Result<(), Implausible> {
    let life_ns = r
        .done_ns
        .unwrap_or(0)
        .saturating_sub(r.sent_ns.unwrap_or(0));
    if let Some(n) = r.input_tokens {
        plausible::count(line, "done.prompt_tokens", n, life_ns)?;
    }
    if r.output_source == crate::request::CountSource::Usage {
        plausible::count(line, "done.completion_tokens", r.output_tokens, life_ns)?;
    }
    Ok(())
}
