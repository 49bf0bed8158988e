//! The dispatcher thread: takes schedule records and request ends from its inbox (`feed`),
//! encodes each body ahead of its instant, and releases it by the [`Policy`], by the batch gate
//! or, for a later turn of a session, its think time after the turn before it ended.
//!
//! It waits for "the next record or end, or the next instant" with one timed receive, then
//! spins the last stretch to the instant, so releases are as precise as the old blocking waits.

use super::batch::Gate as BatchGate;
use super::feed::Event;
use super::{tighten_timer_slack, Admit, Dispatch, Pace, Policy};
use crate::api::{BodyError, BodyOptions, Dialect};
use crate::error::Error;
use crate::exchange::{not_sent_because, stopped_before_sent};
use crate::job::credit::Gate;
use crate::job::{Ended, Flow, Job, Line};
use crate::salt::RunSalt;
use crate::session::{Failed, Session, Sessions};
use crate::sink::Sink;
use hyper::header::{HeaderName, HeaderValue};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use tokenpipe_format::{IdSet, Record, Request};
use tokio::sync::mpsc::UnboundedSender;

/// Something released at an instant.
enum Due {
    /// A request to the queue (open loop at its offset; a later turn that needs a slot).
    Queue(Job),
    /// A later turn that holds its session's slot.
    WithSlot(Job),
    /// A fill opens one more slot.
    OpenSlot,
}

/// Releases, earliest first; ties in the order they were scheduled.
#[derive(Default)]
struct Timers {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    items: HashMap<u64, Due>,
    seq: u64,
}

impl Timers {
    fn push(&mut self, at_ns: u64, due: Due) {
        self.seq += 1;
        self.heap.push(Reverse((at_ns, self.seq)));
        self.items.insert(self.seq, due);
    }

    fn next_at(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    fn pop_due(&mut self, now_ns: u64) -> Option<(u64, Due)> {
        let Reverse((at, seq)) = *self.heap.peek()?;
        if at > now_ns {
            return None;
        }
        self.heap.pop();
        Some((at, self.items.remove(&seq)?))
    }

    fn drain(&mut self) -> impl Iterator<Item = Due> + '_ {
        self.heap.clear();
        self.items.drain().map(|(_, d)| d)
    }

    fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The dispatcher thread: releases the schedule's requests by a [`Policy`].
pub struct Dispatcher {
    /// Clock and stop signal.
    pub pace: Pace,
    /// Requests that take a slot (or need none), in release order.
    pub queue: UnboundedSender<Job>,
    /// Control messages and later turns that hold their slot.
    pub priority: UnboundedSender<Dispatch>,
    /// The inbox: records from the reader thread, ends from the send loop.
    pub events: Receiver<Event>,
    /// The reader's read-ahead gate, closed when the dispatcher is done.
    pub gate: Arc<Gate>,
    /// Output, for `not_sent` records.
    pub sink: Arc<Sink>,
    /// The API dialect that encodes bodies.
    pub dialect: &'static dyn Dialect,
    /// Body settings.
    pub body: BodyOptions,
    /// When requests leave.
    pub policy: Box<dyn Policy>,
    /// The run's cache-busting salt, when the schedule asks for one.
    pub salt: Option<RunSalt>,
    /// Nothing is sent at or after this run time (`duration_ns`).
    pub duration_ns: Option<u64>,
    /// The schedule's name, for error messages.
    pub source: String,
    /// The run's counts.
    pub live: Arc<crate::live::Counters>,
}

/// The dispatcher's working state.
struct State {
    timers: Timers,
    sessions: Sessions,
    batches: BatchGate<Line>,
    batch_mode: bool,
    seen: IdSet,
    input_done: bool,
}

impl Dispatcher {
    /// Runs until every request is released (or the run stops, or its duration ends); returns
    /// the error of a malformed schedule line.
    pub fn run(self) -> Result<(), Error> {
        let result = self.dispatch();
        // Whatever happened, the reader has nothing more to do.
        self.gate.close();
        result
    }

    fn dispatch(&self) -> Result<(), Error> {
        tighten_timer_slack();
        let mut st = State {
            timers: Timers::default(),
            sessions: Sessions::default(),
            batches: BatchGate::default(),
            batch_mode: false,
            seen: IdSet::new(),
            input_done: false,
        };
        if let Some(limit) = self.policy.in_flight_limit() {
            self.control(limit);
        }
        if let Some(d) = self.duration_ns {
            self.control(Dispatch::Deadline(d));
        }
        for at in self.policy.slot_openings() {
            st.timers.push(at, Due::OpenSlot);
        }
        loop {
            if self.pace.stop.is_stopped() {
                return self.stopped(&mut st);
            }
            let now = self.pace.clock.now_ns();
            if self.duration_ns.is_some_and(|d| now >= d) {
                // Whatever is still waiting was never reached: no record (see `dispatch`).
                return Ok(());
            }
            if let Some((at, due)) = st.timers.pop_due(now) {
                self.release(at, due);
                continue;
            }
            if let Some((lines, at)) = st.batches.ready(st.input_done, now) {
                for line in lines {
                    self.take(&mut st, line, Some(at))?;
                }
                continue;
            }
            if st.input_done
                && st.timers.is_empty()
                && st.sessions.is_empty()
                && st.batches.is_empty()
                && (!st.batch_mode || st.batches.outstanding == 0)
            {
                return Ok(());
            }
            let next = match (st.timers.next_at(), self.duration_ns) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let nap = self.pace.nap_before(next);
            if nap.is_zero() {
                if let Some(at) = next {
                    self.pace.spin_until(at);
                }
                continue;
            }
            match self.events.recv_timeout(nap) {
                Ok(event) => self.handle(&mut st, event)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    // Nobody can send records or ends any more: release what is timed.
                    st.input_done = true;
                    st.sessions.live.clear();
                    std::thread::sleep(nap);
                }
            }
        }
    }

    fn control(&self, d: Dispatch) {
        // The send loop outlives the dispatcher; a closed channel means the runtime is gone.
        let _ = self.priority.send(d);
    }

    fn release(&self, at: u64, due: Due) {
        if let Due::Queue(_) | Due::WithSlot(_) = due {
            self.live.released(at, self.pace.clock.now_ns());
        }
        match due {
            Due::Queue(job) => self.to_queue(job),
            Due::WithSlot(job) => {
                if let Err(e) = self.priority.send(Dispatch::Job(job)) {
                    if let Dispatch::Job(job) = e.0 {
                        stopped_before_sent(
                            &self.live,
                            &self.sink,
                            &self.pace.clock,
                            &self.pace.stop,
                            job.id,
                            job.echo,
                        );
                    }
                }
            }
            Due::OpenSlot => self.control(Dispatch::OpenSlot(at)),
        }
    }

    fn to_queue(&self, job: Job) {
        if let Err(e) = self.queue.send(job) {
            // The send loop is gone (the runtime ended): this request was never sent.
            stopped_before_sent(
                &self.live,
                &self.sink,
                &self.pace.clock,
                &self.pace.stop,
                e.0.id,
                e.0.echo,
            );
        }
    }

    /// The request's own headers, checked; an error names its line.
    fn own_headers(
        &self,
        line: usize,
        req: &Request,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, Error> {
        match &req.headers {
            None => Ok(Vec::new()),
            Some(map) => crate::headers::per_request(map).map_err(|m| self.bad(line, m)),
        }
    }

    /// A schedule record that cannot be sent, by its line.
    fn bad(&self, line: usize, problem: impl ToString) -> Error {
        Error::Schedule {
            input: self.source.clone(),
            line,
            problem: problem.to_string(),
        }
    }

    /// A request the dialect cannot encode, by its line.
    fn unencodable(&self, line: usize, source: BodyError) -> Error {
        Error::Body {
            input: self.source.clone(),
            line,
            source,
        }
    }

    fn handle(&self, st: &mut State, event: Event) -> Result<(), Error> {
        match event {
            Event::EndOfInput(end) => {
                st.input_done = true;
                self.orphan_sessions(st);
                end
            }
            Event::Ended(end) => self.ended(st, end),
            Event::Record(record, line, credit) => {
                let Record::Request(req) = *record else {
                    return Ok(());
                };
                self.live.read();
                if !st.seen.insert(req.id) {
                    return Err(self.bad(
                        line,
                        format_args!(
                            "field \"id\": request {} appears twice; ids must be unique within a run",
                            req.id
                        ),
                    ));
                }
                let line = Line { req, line, credit };
                if line.req.think_time_ns.is_none() {
                    match self
                        .policy
                        .admit(&line.req)
                        .map_err(|m| self.bad(line.line, m))?
                    {
                        Admit::Batch(b) => {
                            st.batch_mode = true;
                            st.batches.push(b, line);
                            return Ok(());
                        }
                        Admit::At(_) | Admit::WhenFree => {}
                    }
                } else if st.batch_mode {
                    if let Some(b) = line.req.grouping.batch {
                        st.batches.push(b, line);
                        return Ok(());
                    }
                }
                self.take(st, line, None)
            }
        }
    }

    /// A request read (or released with its batch at `batch_at`): a first request is encoded
    /// and released by the policy, a later turn joins its session.
    fn take(&self, st: &mut State, line: Line, batch_at: Option<u64>) -> Result<(), Error> {
        if line.req.think_time_ns.is_some() {
            return self.later_turn(st, line);
        }
        let Line {
            mut req,
            line,
            credit,
        } = line;
        if let Some(salt) = &self.salt {
            let turn = req.grouping.turn;
            salt.apply(&mut req, turn);
        }
        let starts_session = req.grouping.session.is_some() && req.turns.is_some_and(|t| t > 1);
        let body = self
            .dialect
            .encode(&req, &[], &self.body)
            .map_err(|e| self.unencodable(line, e))?;
        let headers = self.own_headers(line, &req)?;
        let admit = match batch_at {
            Some(at) => Admit::At(at),
            None => self.policy.admit(&req).map_err(|m| self.bad(line, m))?,
        };
        if starts_session {
            let name = req.grouping.session.clone().unwrap_or_default();
            st.sessions.waiting_on.insert(req.id, name.clone());
            st.sessions.live.insert(
                name,
                Session {
                    turns: req.turns.unwrap_or(1),
                    next_turn: 1,
                    history: Vec::new(),
                    sent_prompt: req.prompt.take(),
                    ended_at: None,
                    parked: Default::default(),
                },
            );
        }
        let job = Job {
            id: req.id,
            scheduled_ns: None,
            ready_ns: None,
            body,
            headers,
            echo: req.grouping,
            keep_text: starts_session,
            flow: Flow {
                has_slot: false,
                continues: starts_session,
                report_end: starts_session || st.batch_mode,
            },
            credit: Some(credit),
        };
        match admit {
            Admit::At(at) if batch_at.is_some() => self.to_queue(Job {
                scheduled_ns: Some(at),
                ..job
            }),
            Admit::At(at) => st.timers.push(
                at,
                Due::Queue(Job {
                    scheduled_ns: Some(at),
                    ..job
                }),
            ),
            Admit::WhenFree | Admit::Batch(_) => self.to_queue(job),
        }
        Ok(())
    }

    /// A later turn read: checked against its session, then parked until the turn before it
    /// ends, or scheduled at once when that turn already has.
    fn later_turn(&self, st: &mut State, line: Line) -> Result<(), Error> {
        let req = &line.req;
        let Some(name) = req.grouping.session.clone() else {
            return Err(self.bad(
                line.line,
                "field \"session\": a later turn (with think_time_ns) needs the session it continues",
            ));
        };
        let turn = req.grouping.turn.unwrap_or(0);
        if req.prompt.is_none() && req.prompt_token_ids.is_some() {
            return Err(self.unencodable(line.line, BodyError::LaterTurnWithTokenIds));
        }
        if let Some(failed) = st.sessions.failed.get(&name) {
            let why = failed.reason.clone();
            if turn + 1 >= failed.turns {
                st.sessions.failed.remove(&name);
            }
            self.give_up(st, line, why);
            return Ok(());
        }
        let Some(session) = st.sessions.live.get_mut(&name) else {
            return Err(self.bad(
                line.line,
                format_args!("field \"session\": turn {turn} of session \"{name}\" comes without the turns before it (a session's turns are written together, in order)"),
            ));
        };
        if turn != session.next_turn {
            return Err(self.bad(
                line.line,
                format_args!(
                    "field \"turn\": session \"{name}\" expected turn {}, found {turn}",
                    session.next_turn
                ),
            ));
        }
        session.next_turn += 1;
        match session.ended_at.take() {
            Some(at) if session.parked.is_empty() => self.schedule_turn(st, &name, line, at),
            ended_at => {
                session.ended_at = ended_at;
                session.parked.push_back(line);
                Ok(())
            }
        }
    }

    /// Encodes a session's next turn with its history and schedules it `think_time_ns` after
    /// `after_ns` (the end of the turn before it).
    fn schedule_turn(
        &self,
        st: &mut State,
        name: &str,
        line: Line,
        after_ns: u64,
    ) -> Result<(), Error> {
        let Some(session) = st.sessions.live.get_mut(name) else {
            return Ok(());
        };
        let Line {
            mut req,
            line,
            credit,
        } = line;
        let body = self
            .dialect
            .encode(&req, &session.history, &self.body)
            .map_err(|e| self.unencodable(line, e))?;
        let headers = self.own_headers(line, &req)?;
        let last = req.grouping.turn.unwrap_or(0) + 1 >= session.turns;
        if last {
            // The history is no longer needed.
            st.sessions.live.remove(name);
        } else {
            session.sent_prompt = req.prompt.take();
            st.sessions.waiting_on.insert(req.id, name.to_string());
        }
        let at = after_ns.saturating_add(req.think_time_ns.unwrap_or(0));
        let holds = self.policy.sessions_hold_slots() && !st.batch_mode;
        let job = Job {
            id: req.id,
            scheduled_ns: Some(at),
            ready_ns: None,
            body,
            headers,
            echo: req.grouping,
            keep_text: !last,
            flow: Flow {
                has_slot: holds,
                continues: holds && !last,
                report_end: !last || st.batch_mode,
            },
            credit: Some(credit),
        };
        st.timers.push(
            at,
            if holds {
                Due::WithSlot(job)
            } else {
                Due::Queue(job)
            },
        );
        Ok(())
    }

    /// A request the dispatcher waited on has ended.
    fn ended(&self, st: &mut State, end: Ended) -> Result<(), Error> {
        if st.batch_mode {
            st.batches.ended(Some(end.at_ns));
        }
        let Some(name) = st.sessions.waiting_on.remove(&end.id) else {
            return Ok(());
        };
        let Some(session) = st.sessions.live.get_mut(&name) else {
            return Ok(());
        };
        if !end.ok {
            let Some(session) = st.sessions.live.remove(&name) else {
                return Ok(());
            };
            let why = format!(
                "not sent: request {} (an earlier turn of session \"{name}\") failed, which ends the session",
                end.id
            );
            if session.next_turn < session.turns {
                st.sessions.failed.insert(
                    name,
                    Failed {
                        turns: session.turns,
                        reason: why.clone(),
                    },
                );
            }
            for line in session.parked {
                self.give_up(st, line, why.clone());
            }
            return Ok(());
        }
        session.history.push(crate::api::PastTurn {
            prompt: session.sent_prompt.take().unwrap_or_default(),
            answer: end.text.unwrap_or_default(),
        });
        match session.parked.pop_front() {
            Some(line) => return self.schedule_turn(st, &name, line, end.at_ns),
            None if st.input_done => self.orphan(st, &name),
            None => session.ended_at = Some(end.at_ns),
        }
        Ok(())
    }

    /// Sessions whose next turn will never be read (the schedule ended early) give their slot
    /// back and are dropped.
    fn orphan_sessions(&self, st: &mut State) {
        let idle: Vec<String> = st
            .sessions
            .live
            .iter()
            .filter(|(_, s)| s.ended_at.is_some() && s.parked.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        for name in idle {
            self.orphan(st, &name);
        }
    }

    fn orphan(&self, st: &mut State, name: &str) {
        st.sessions.live.remove(name);
        if self.policy.sessions_hold_slots() && !st.batch_mode {
            self.control(Dispatch::Free);
        }
    }

    /// Ends a request that will not be sent because its session failed.
    fn give_up(&self, st: &mut State, line: Line, why: String) {
        if st.batch_mode {
            st.batches.ended(None);
        }
        not_sent_because(
            &self.live,
            &self.sink,
            &self.pace.clock,
            line.req.id,
            line.req.grouping,
            why,
        );
    }

    /// After a stop: every request still waiting, and every one still read, ends `not_sent`.
    /// A schedule bounded by time is read no further: like the requests its duration never
    /// reaches, those not yet read were never part of the run (and an endless closed-loop
    /// schedule would otherwise be read for as long as its writer writes).
    fn stopped(&self, st: &mut State) -> Result<(), Error> {
        let clock = &self.pace.clock;
        for due in st.timers.drain() {
            if let Due::Queue(job) | Due::WithSlot(job) = due {
                stopped_before_sent(
                    &self.live,
                    &self.sink,
                    clock,
                    &self.pace.stop,
                    job.id,
                    job.echo,
                );
            }
        }
        for line in st.batches.drain() {
            stopped_before_sent(
                &self.live,
                &self.sink,
                clock,
                &self.pace.stop,
                line.req.id,
                line.req.grouping,
            );
        }
        for (_, session) in st.sessions.live.drain() {
            for line in session.parked {
                stopped_before_sent(
                    &self.live,
                    &self.sink,
                    clock,
                    &self.pace.stop,
                    line.req.id,
                    line.req.grouping,
                );
            }
        }
        if st.input_done || self.duration_ns.is_some() {
            return Ok(());
        }
        while let Ok(event) = self.events.recv() {
            match event {
                Event::Record(record, ..) => {
                    if let Record::Request(req) = *record {
                        self.live.read();
                        stopped_before_sent(
                            &self.live,
                            &self.sink,
                            clock,
                            &self.pace.stop,
                            req.id,
                            req.grouping,
                        );
                    }
                }
                Event::EndOfInput(end) => return end,
                Event::Ended(_) => {}
            }
        }
        Ok(())
    }
}
