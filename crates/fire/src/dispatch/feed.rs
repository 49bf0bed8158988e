//! The dispatcher's one inbox: schedule records, read by their own thread so that a slow input
//! never holds up a release, and the ends of requests the dispatcher waits for, sent by the
//! send loop. One channel for both lets the dispatcher wait for "the next thing or the next
//! deadline" with a single timed receive.
//!
//! Read-ahead is bounded by credits (`job::credit`): the reader takes one per record, before
//! reading it, and the record carries it until its job leaves the queues.

use crate::error::Error;
use crate::job::credit::Gate;
use crate::job::{Credit, Ended};
use std::io::BufRead;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use tokenpipe_format::{Record, RecordReader, Request};

/// What the dispatcher hears.
pub enum Event {
    /// A schedule record (boxed: most events are small), the line it was on, and its credit.
    Record(Box<Record>, usize, Credit),
    /// The schedule ended (`Err`: a malformed line, named by its source and line).
    EndOfInput(Result<(), Error>),
    /// A request the dispatcher waits for has ended.
    Ended(Ended),
}

/// Changes a schedule request as it is read, on the reader thread, before the dispatcher sees
/// it (the llama-benchy adapt step), so that the send path does no more work.
pub type Rewrite = Box<dyn Fn(&mut Request) + Send>;

/// Starts the reader thread: `first` (a record already read), then the rest of `reader`, each
/// request passed through `rewrite` when there is one.
pub fn spawn<R: BufRead + Send + 'static>(
    mut reader: RecordReader<R>,
    first: Option<Record>,
    gate: Arc<Gate>,
    events: Sender<Event>,
    rewrite: Option<Rewrite>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("fire-read".into())
        .spawn(move || {
            let mut pending = first;
            let end = loop {
                let Some(credit) = gate.take() else {
                    return;
                };
                let mut record = match pending.take() {
                    Some(r) => r,
                    None => match reader.next_record() {
                        Ok(Some(r)) => r,
                        Ok(None) => break Ok(()),
                        Err(e) => break Err(e.into()),
                    },
                };
                if let (Some(rewrite), Record::Request(req)) = (&rewrite, &mut record) {
                    rewrite(req);
                }
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
