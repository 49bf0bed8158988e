//! `arrivals`: writes a reproducible request schedule for `fire`.
//!
//! The output is a pure function of the arguments: a header (without a wall-clock time, so the
//! same seed gives byte-identical output), a `schedule` record saying how to pace, and one
//! `request` record per prompt. Arrival times and prompt text are drawn from two independent
//! ChaCha8 streams of the seed, so changing the prompt length does not move the arrival times.
//!
//! [`cli`] owns the flags, `main`, and the step from flags to a [`Plan`]; [`process`] decides
//! when each request goes (one file per arrival process); [`prompts`] says what each request
//! asks (one file per prompt source); [`signals`] and [`sink`] end an interrupted schedule after
//! a whole line; [`error`] says how each failure ends the process. This file wires them
//! together: [`Plan`] is a schedule described without a command line.

pub(crate) mod cli;
pub(crate) mod error;
pub(crate) mod numpy;
pub mod process;
pub mod prompts;
pub mod session;
pub mod shard;
pub(crate) mod shard_env;
pub(crate) mod signals;
pub(crate) mod sink;

pub use cli::{main, write_schedule, Args};
pub use error::Error;
pub use signals::Signal;

use process::ArrivalProcess;
use prompts::{Ask, PromptSource, SaltAlphabet};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use session::Sessions;
use shard::{ShardError, ShardSpec};
use sink::{LineSink, SinkError};
use std::io::Write;
use tokenpipe_format::{Grouping, Header, LoopMode, Phase, Record, Salt, Schedule};

/// The seed's independent ChaCha8 streams: one per kind of draw, so that changing one kind
/// (the prompts, the think times) never moves another (the arrivals).
pub(crate) mod streams {
    /// Arrival times.
    pub const ARRIVALS: u64 = 0;
    /// Prompt lengths and content.
    pub const PROMPTS: u64 = 1;
    /// Think times between the turns of a session.
    pub const THINK: u64 = 2;
    /// The one fixed sequence identical prompts are cut from.
    pub const SAME: u64 = 3;
    /// Shared prefix `g` is drawn from stream `PREFIX_BASE + g`.
    pub const PREFIX_BASE: u64 = 4;
    /// The order a dataset's entries are taken in; above every prefix stream (there are at
    /// most 2^20 groups).
    pub const DATASET: u64 = 1 << 32;
    /// The `--depth` context of each prompt, apart from the prompts so that a depth leaves
    /// them as they were.
    pub const CONTEXT: u64 = (1 << 32) + 1;
}

/// The seed's stream `stream` (see [`streams`]).
pub(crate) fn seed_stream(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// The seed's stream for arrival times.
pub fn arrival_rng(seed: u64) -> ChaCha8Rng {
    seed_stream(seed, streams::ARRIVALS)
}

/// The seed's stream for prompt content, independent of [`arrival_rng`].
pub fn prompt_rng(seed: u64) -> ChaCha8Rng {
    seed_stream(seed, streams::PROMPTS)
}

/// What bounds and paces a schedule beyond its arrival process: written to the `schedule`
/// record for `fire`, and (count, duration in open loop) obeyed by the writer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bounds {
    /// Arrivals to write (sessions, with several turns); `None` for no limit but the
    /// process's own, or, in closed loop, until the reader has had enough.
    pub count: Option<u64>,
    /// No request is sent this long or later after the start: open-loop arrivals at or past it
    /// are not written, and `fire` stops sending in closed loop.
    pub duration_ns: Option<u64>,
    /// Open loop: the most requests in flight, which `fire` enforces.
    pub max_concurrency: Option<u64>,
    /// Closed loop: how far apart the first requests start.
    pub fill_interval_ns: Option<u64>,
    /// Named stretches of the run.
    pub phases: Vec<Phase>,
    /// Batch mode: the first this many batches are a warm-up that `reduce` leaves out
    /// (llama-benchy's discarded run 0); the process already counts them among its batches.
    pub warmup_batches: Option<u64>,
}

/// One schedule, described without a command line: what a library caller builds, and what
/// [`Plan::write`] writes.
pub struct Plan {
    /// The first record, saying how the schedule was made.
    pub header: Header,
    /// When each arrival goes.
    pub process: Box<dyn ArrivalProcess>,
    /// What each request asks.
    pub prompts: Box<dyn PromptSource>,
    /// The stream prompts draw from, [`prompt_rng`] of the seed.
    pub prompt_rng: ChaCha8Rng,
    /// Counts, durations and limits.
    pub bounds: Bounds,
    /// Turns per arrival and the think time between them.
    pub sessions: Sessions,
    /// The part of the schedule to write, when it is split.
    pub shard: Option<ShardSpec>,
    /// Salt tokens `fire` puts before each session's first prompt; 0 for none.
    pub salt_tokens: u32,
}

impl Plan {
    /// Writes the header, the `schedule` record and every request to `out`: the library's
    /// entry point. When a process or a source fails part way, the records before the failure
    /// are still written.
    pub fn write(self, out: impl Write) -> Result<(), Error> {
        self.write_until(out, || None)
    }

    /// As [`Plan::write`], but ends early, after a whole line, once `stop` returns a signal
    /// (asked between records and after every `write` call); the error is then
    /// [`Error::Stopped`]. `out` should be unbuffered, so that a `write` blocked on a full pipe
    /// is one system call that a signal interrupts.
    pub fn write_until(
        mut self,
        out: impl Write,
        stop: impl FnMut() -> Option<Signal>,
    ) -> Result<(), Error> {
        let mut sink = LineSink::new(out, stop);
        match self.write_records(&mut sink) {
            Ok(()) => Ok(sink.flush()?),
            // A stop drops the lines still buffered; a failed write has nowhere to put them.
            Err(Ended::Sink(e)) => Err(e.into()),
            // The lines made before a failed input go out; the input's error is the one to
            // report, unless a signal came meanwhile.
            Err(Ended::Input(e)) => match sink.flush() {
                Err(SinkError::Stopped(signal)) => Err(Error::Stopped(signal)),
                _ => Err(e),
            },
        }
    }

    /// The `schedule` record: the process's pacing, this shard's share of it, the bounds and
    /// the salt. An error when a shard would get no share of a limit.
    pub(crate) fn schedule(&self) -> Result<Schedule, ShardError> {
        let shard = |total: Option<u64>, what: &'static str| -> Result<Option<u64>, ShardError> {
            match (total, self.shard) {
                (Some(t), Some(s)) => s.share(t, what).map(Some),
                (t, _) => Ok(t),
            }
        };
        let units =
            self.bounds
                .count
                .or(self.process.limit())
                .map(|n| match self.process.limit() {
                    Some(limit) => n.min(limit),
                    None => n,
                });
        let open_with_duration =
            self.process.mode() == LoopMode::Open && self.bounds.duration_ns.is_some();
        let requests = match units {
            // An open loop cut by its duration has an unknown count.
            Some(_) if open_with_duration => None,
            Some(u) => {
                let mine = match self.shard {
                    Some(s) => s.units_in(u, self.batch_size()),
                    None => u,
                };
                Some(mine.saturating_mul(u64::from(self.sessions.turns)))
            }
            None => None,
        };
        let salt = (self.salt_tokens > 0).then(|| {
            let (words, id_range) = match self.prompts.salt_alphabet() {
                SaltAlphabet::DefaultWords => (vec![], None),
                SaltAlphabet::Words(w) => (w, None),
                SaltAlphabet::Ids(range) => (vec![], Some(range)),
            };
            Salt {
                tokens: self.salt_tokens,
                words,
                id_range,
            }
        });
        Ok(Schedule {
            mode: self.process.mode().into(),
            concurrency: shard(self.process.concurrency(), "--concurrency")?,
            requests,
            max_concurrency: shard(self.bounds.max_concurrency, "--max-concurrency")?,
            fill_interval_ns: self.bounds.fill_interval_ns,
            duration_ns: self.bounds.duration_ns,
            phases: self.bounds.phases.clone(),
            salt,
            warmup_batches: self
                .bounds
                .warmup_batches
                .filter(|_| self.batch_size().is_some()),
        })
    }

    fn batch_size(&self) -> Option<u64> {
        match self.process.mode() {
            LoopMode::Batch => self.process.concurrency(),
            _ => None,
        }
    }

    fn write_records<W: Write, S: FnMut() -> Option<Signal>>(
        &mut self,
        sink: &mut LineSink<W, S>,
    ) -> Result<(), Ended> {
        let schedule = self.schedule().map_err(|e| Ended::Input(e.into()))?;
        sink.write(&Record::Header(self.header.clone()))?;
        sink.write(&Record::Schedule(schedule))?;
        let turns = self.sessions.turns.max(1);
        let batch_size = self.batch_size();
        let mut id = 0u64;
        let mut unit = 0u64;
        loop {
            if self.bounds.count.is_some_and(|n| unit >= n) {
                break;
            }
            let Some(arrival) = self
                .process
                .next_arrival()
                .map_err(|e| Ended::Input(e.into()))?
            else {
                break;
            };
            if let (Some(at), Some(end)) = (arrival.offset_ns, self.bounds.duration_ns) {
                if at >= end {
                    break;
                }
            }
            let batch = self.process.batch();
            let mine = self.shard.is_none_or(|s| s.holds(unit, batch_size));
            for turn in 0..turns {
                let reserve = if turn == 0 {
                    u64::from(self.salt_tokens)
                } else {
                    0
                };
                let ask = Ask {
                    index: id,
                    turn,
                    input_tokens: arrival.input_tokens,
                    output_tokens: arrival.output_tokens,
                    reserve_tokens: reserve,
                };
                // Every prompt is drawn, even another shard's, so that each shard's prompts
                // are exactly those of the whole schedule.
                let prompt = self
                    .prompts
                    .next_prompt(&ask, &mut self.prompt_rng)
                    .map_err(|e| Ended::Input(e.into()))?;
                let think_time_ns = (turn > 0).then(|| self.sessions.think_ns());
                if mine {
                    let offset = if turn == 0 { arrival.offset_ns } else { None };
                    let mut request = prompt.into_request(id, offset);
                    request.prompt_tokens = request.prompt_tokens.map(|n| n + reserve);
                    request.grouping = Grouping {
                        session: (turns > 1).then(|| format!("s{unit}")),
                        turn: (turns > 1).then_some(turn),
                        batch,
                        ..Grouping::default()
                    };
                    request.think_time_ns = think_time_ns;
                    request.turns = (turns > 1).then_some(turns);
                    sink.write(&Record::Request(request))?;
                }
                id += 1;
            }
            unit += 1;
        }
        Ok(())
    }
}

/// What cut the writer loop short: the output (a stop, a closed pipe) or the input (a process
/// that overflowed, a source that failed), which still lets the lines before it out.
enum Ended {
    Sink(SinkError),
    Input(Error),
}

impl From<SinkError> for Ended {
    fn from(e: SinkError) -> Self {
        Ended::Sink(e)
    }
}

#[cfg(test)]
mod tests;
