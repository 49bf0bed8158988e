//! The one output path of `fire`: records are encoded into a shared in-memory buffer, and full
//! buffers go to a writer thread that owns stdout.
//!
//! Network tasks never block on the pipe and never flush: a token costs one uncontended lock and
//! a few dozen bytes of formatting. When the buffer passes 64 KiB it is swapped for a recycled
//! one and handed over; the writer thread's queue is bounded, so a consumer that stops reading
//! slows `fire` down instead of growing its memory. A closed pipe stops the run (see `Stop`).

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use tokenpipe_format::writer::encode_record;
use tokenpipe_format::Record;

const FLUSH_AT: usize = 64 * 1024;
const QUEUE: usize = 64;

/// Shared, cheap-to-lock record buffer in front of a writer thread.
pub struct Sink {
    buf: Mutex<Vec<u8>>,
    full_tx: Mutex<Option<SyncSender<Vec<u8>>>>,
    spare_rx: Mutex<Receiver<Vec<u8>>>,
    writer: Mutex<Option<JoinHandle<io::Result<()>>>>,
}

impl Sink {
    /// Starts the writer thread on `out`. `on_closed` runs once if the reader goes away.
    pub fn new(
        out: impl Write + Send + 'static,
        on_closed: impl FnOnce() + Send + 'static,
    ) -> Arc<Self> {
        let (full_tx, full_rx) = sync_channel::<Vec<u8>>(QUEUE);
        let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(QUEUE + 2);
        let writer = std::thread::Builder::new()
            .name("fire-writer".into())
            .spawn(move || write_loop(out, full_rx, spare_tx, on_closed))
            .ok();
        Arc::new(Self {
            buf: Mutex::new(Vec::with_capacity(FLUSH_AT * 2)),
            full_tx: Mutex::new(Some(full_tx)),
            spare_rx: Mutex::new(spare_rx),
            writer: Mutex::new(writer),
        })
    }

    /// Locks the buffer for appending records; call [`SinkGuard::done`] (or drop) to release.
    pub fn lock(&self) -> SinkGuard<'_> {
        SinkGuard {
            sink: self,
            buf: lock(&self.buf),
        }
    }

    /// Appends one record.
    pub fn record(&self, record: &Record) {
        let mut g = self.lock();
        encode_record(g.buf(), record);
    }

    /// Hands whatever is buffered to the writer now, so that a slow run's records reach the
    /// pipe within a fraction of a second rather than when 64 KiB have gathered.
    pub fn flush_now(&self) {
        let mut buf = lock(&self.buf);
        if !buf.is_empty() {
            self.hand_over(&mut buf);
        }
    }

    fn hand_over(&self, buf: &mut Vec<u8>) {
        let spare = lock(&self.spare_rx)
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(FLUSH_AT * 2));
        let full = std::mem::replace(buf, spare);
        if let Some(tx) = lock(&self.full_tx).as_ref() {
            // A send fails only when the writer has stopped (closed pipe): drop the data.
            let _ = tx.send(full);
        }
    }

    /// Hands over what is buffered, stops the writer thread and waits for it to write
    /// everything. Returns the writer's error, if it had one other than a closed pipe.
    pub fn finish(&self) -> io::Result<()> {
        self.flush_now();
        lock(&self.full_tx).take();
        match lock(&self.writer).take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("output writer thread panicked")),
            None => Err(io::Error::other("output writer thread could not start")),
        }
    }
}

/// Exclusive access to the record buffer; hands a full buffer to the writer when released.
pub struct SinkGuard<'a> {
    sink: &'a Sink,
    buf: MutexGuard<'a, Vec<u8>>,
}

impl SinkGuard<'_> {
    /// The buffer to encode records onto.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

impl Drop for SinkGuard<'_> {
    fn drop(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.sink.hand_over(&mut self.buf);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn write_loop(
    mut out: impl Write,
    full_rx: Receiver<Vec<u8>>,
    spare_tx: SyncSender<Vec<u8>>,
    on_closed: impl FnOnce(),
) -> io::Result<()> {
    let mut on_closed = Some(on_closed);
    let mut failed: Option<io::Error> = None;
    for mut buf in full_rx {
        if failed.is_none() {
            if let Err(e) = out.write_all(&buf).and_then(|_| out.flush()) {
                if let Some(f) = on_closed.take() {
                    f();
                }
                failed = Some(e);
            }
        }
        buf.clear();
        let _ = spare_tx.try_send(buf);
    }
    match failed {
        Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::Token;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            lock(&self.0).extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_record_arrives_in_order() {
        let out = Shared::default();
        let sink = Sink::new(out.clone(), || {});
        for i in 0..20_000u64 {
            sink.record(&Record::Token(Token {
                id: i,
                at_ns: i * 2,
                tokens: 1,
            }));
        }
        sink.finish().unwrap();
        let text = String::from_utf8(lock(&out.0).clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 20_000);
        assert!(lines[19_999].contains("\"id\":19999,"));
    }

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn closed_pipe_calls_back_and_ends_quietly() {
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Sink::new(Closed, move || tx.send(()).unwrap());
        for i in 0..10_000u64 {
            sink.record(&Record::Token(Token {
                id: i,
                at_ns: 0,
                tokens: 1,
            }));
        }
        sink.finish().unwrap();
        assert!(rx.try_recv().is_ok());
    }
}
