//! The dispatcher's one inbox: schedule records, read by their own thread so that a slow input
//! never holds up a release, and the ends of requests the dispatcher waits for, sent by the
//! send loop. One channel for both lets the dispatcher wait for "the next thing or the next
//! deadline" with a single timed receive.
//!
//! Read-ahead is bounded by credits: the reader takes one per record and the record carries it
//! ([`Credit`]) until its job leaves the queues (sent, or dropped), so records read but not yet
//! sent never exceed [`READ_AHEAD`], whatever the mode.

use crate::job::Ended;
use std::io::BufRead;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use tokenpipe_format::{Record, RecordReader};

/// Records read ahead of their send, at most.
pub const READ_AHEAD: usize = 4096;

/// What the dispatcher hears.
pub enum Event {
    /// A schedule record (boxed: most events are small), the line it was on, and its credit.
    Record(Box<Record>, usize, Credit),
    /// The schedule ended (`Err`: a malformed line, already formatted with source and line).
    EndOfInput(Result<(), anyhow::Error>),
    /// A request the dispatcher waits for has ended.
    Ended(Ended),
}

#[derive(Default)]
struct GateState {
    taken: usize,
    closed: bool,
}

/// The credit counter shared by the reader and every holder of a credit.
#[derive(Default)]
pub struct Gate {
    state: Mutex<GateState>,
    freed: Condvar,
}

impl Gate {
    /// Waits for a credit; `None` once the dispatcher has stopped listening.
    fn take(self: &Arc<Self>) -> Option<Credit> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while st.taken >= READ_AHEAD && !st.closed {
            st = self.freed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        if st.closed {
            return None;
        }
        st.taken += 1;
        Some(Credit(self.clone()))
    }

    /// Stops the reader at its next record.
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.freed.notify_all();
    }
}

/// One record's place in the read-ahead; given back when dropped.
pub struct Credit(Arc<Gate>);

impl Drop for Credit {
    fn drop(&mut self) {
        let mut st = self.0.state.lock().unwrap_or_else(|p| p.into_inner());
        st.taken = st.taken.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

/// Starts the reader thread: `first` (a record already read), then the rest of `reader`.
pub fn spawn<R: BufRead + Send + 'static>(
    mut reader: RecordReader<R>,
    first: Option<Record>,
    gate: Arc<Gate>,
    events: Sender<Event>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("fire-read".into())
        .spawn(move || {
            let mut pending = first;
            let end = loop {
                let Some(credit) = gate.take() else {
                    return;
                };
                let record = match pending.take() {
                    Some(r) => r,
                    None => match reader.next_record() {
                        Ok(Some(r)) => r,
                        Ok(None) => break Ok(()),
                        Err(e) => break Err(e.into()),
                    },
                };
                if events
                    .send(Event::Record(Box::new(record), reader.line(), credit))
                    .is_err()
                {
                    return;
                }
            };
            tokenpipe_cli::warn_truncated("fire", reader.source_name(), reader.truncated_tail());
            // The dispatcher may be gone already; then nobody needs to hear.
            let _ = events.send(Event::EndOfInput(end));
        })
        .map(drop)
}

/// The dispatcher's inbox and the sender the send loop reports ends on.
pub fn channel() -> (Sender<Event>, Receiver<Event>) {
    std::sync::mpsc::channel()
}

/// A request as read, with where it was and its read-ahead credit.
pub struct Line {
    /// The request.
    pub req: tokenpipe_format::Request,
    /// Its line in the schedule, for error messages.
    pub line: usize,
    /// Its read-ahead credit.
    pub credit: Credit,
}
