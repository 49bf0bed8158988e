//! The one output path of `fire`: records are encoded into a shared in-memory buffer, and full
//! buffers go to writer threads that own stdout and the `--save` file (see `writer`).
//!
//! Network tasks never write to the pipe and never flush: a token costs one uncontended lock
//! and a 22-byte slot, which the writers format (`staged`). When the buffer passes 64 KiB it is
//! swapped for a recycled one and queued for the writers without blocking.
//!
//! Bounded by design: the bytes queued and not yet written are capped (`--output-buffer`,
//! [`DEFAULT_OUTPUT_BUFFER`] by default). Below the cap a slow reader of `fire`'s output costs
//! memory, never time. At the cap the thread handing over a buffer waits for room, which holds
//! back the network thread and makes token stamps late; so the wait is measured and written as
//! a `stall` record when it ends, and the first one is announced on stderr. A closed stdout
//! stops the run (see `Stop`); the saved file is still written to the end.

pub mod staged;
mod writer;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::writer::encode_record;
use tokenpipe_format::{Record, Stall};
pub use writer::Output;
use writer::{lock, Shared};

/// A buffer is handed to the writers once it holds this much.
const FLUSH_AT: usize = 64 * 1024;
/// Recycled buffers kept for reuse.
const SPARES: usize = 64;

/// The default cap on output bytes waiting for a slow reader: a minute or more of a heavy run's
/// events (about 12 million tokens as the writers' 22-byte slots, 4 million as written), well
/// within a benchmarking host's memory.
pub const DEFAULT_OUTPUT_BUFFER: u64 = 256 << 20;

/// Shared, cheap-to-lock record buffer in front of the writer threads.
pub struct Sink {
    buf: Mutex<Vec<u8>>,
    queues: Mutex<Vec<Sender<Arc<Vec<u8>>>>>,
    spare_rx: Mutex<Receiver<Vec<u8>>>,
    shared: Arc<Shared>,
    writers: Mutex<Vec<JoinHandle<io::Result<()>>>>,
    started: usize,
    bound: u64,
    clock: RunClock,
    warned: AtomicBool,
}

impl Sink {
    /// Starts one writer thread per output. `bound` caps the bytes queued for them before a
    /// hand-over waits (and records a `stall`); `clock` stamps those records.
    pub fn start(outputs: Vec<Output>, bound: u64, clock: RunClock) -> io::Result<Arc<Self>> {
        let shared = Arc::new(Shared::default());
        let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(SPARES);
        let mut queues = Vec::new();
        let mut writers = Vec::new();
        for output in outputs {
            let (tx, rx) = channel();
            writers.push(writer::spawn(output, rx, shared.clone(), spare_tx.clone())?);
            queues.push(tx);
        }
        Ok(Arc::new(Self {
            buf: Mutex::new(Vec::with_capacity(FLUSH_AT * 2)),
            started: queues.len(),
            queues: Mutex::new(queues),
            spare_rx: Mutex::new(spare_rx),
            shared,
            writers: Mutex::new(writers),
            bound: bound.max(1),
            clock,
            warned: AtomicBool::new(false),
        }))
    }

    /// Locks the buffer for appending records; dropping the guard releases it.
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

    /// Hands whatever is buffered to the writers now, so that a slow run's records reach the
    /// pipe within a fraction of a second rather than when 64 KiB have gathered.
    pub fn flush_now(&self) {
        let mut buf = lock(&self.buf);
        if !buf.is_empty() {
            self.hand_over(&mut buf, true);
        }
    }

    /// Swaps the buffer for an empty one and queues the full one for every writer. With
    /// `may_wait`, first waits while the queue is at its bound, and records that wait as a
    /// `stall` at the start of the new buffer.
    fn hand_over(&self, buf: &mut Vec<u8>, may_wait: bool) {
        let stall = if may_wait { self.wait_for_room() } else { None };
        let spare = lock(&self.spare_rx)
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(FLUSH_AT * 2));
        let full = std::mem::replace(buf, spare);
        let queues = lock(&self.queues);
        if let Some((last, others)) = queues.split_last() {
            let len = full.len() as u64;
            self.shared.lock().queued += len;
            // The writer that finishes with a buffer last takes it off the queue, so no
            // reference may stay here once it is sent.
            let full = Arc::new(full);
            for q in others {
                self.send(q, full.clone(), len);
            }
            self.send(last, full, len);
        }
        drop(queues);
        if let Some(stall) = stall {
            encode_record(buf, &Record::Stall(stall));
        }
    }

    /// Queues a buffer for one writer. A send fails only when that writer is gone; then, if
    /// this was the buffer's last reference, it comes off the queue here.
    fn send(&self, q: &Sender<Arc<Vec<u8>>>, buf: Arc<Vec<u8>>, len: u64) {
        if let Err(e) = q.send(buf) {
            if Arc::into_inner(e.0).is_some() {
                let mut st = self.shared.lock();
                st.queued = st.queued.saturating_sub(len);
            }
        }
    }

    /// Waits while the writers are `bound` bytes behind; returns the wait, if there was one.
    fn wait_for_room(&self) -> Option<Stall> {
        let st = self.shared.lock();
        if st.queued < self.bound || st.alive < self.started {
            return None;
        }
        let at_ns = self.clock.now_ns();
        let buffered_bytes = st.queued;
        if !self.warned.swap(true, Ordering::Relaxed) {
            crate::live::say(&format!(
                "fire: warning: output reader is slower than the run; {} of events are waiting for it, so fire waits too and its time stamps are late meanwhile (see the \"stall\" records; --output-buffer raises the bound)",
                in_units(buffered_bytes)
            ));
        }
        let bound = self.bound;
        let started = self.started;
        let st = self
            .shared
            .wait(st, |st| st.queued < bound || st.alive < started, None);
        drop(st);
        Some(Stall {
            at_ns,
            duration_ns: self.clock.now_ns().saturating_sub(at_ns),
            buffered_bytes,
        })
    }

    /// Hands over what is buffered, stops the writer threads and waits for them to write
    /// everything. Returns a writer's error, if one had one other than a closed pipe.
    pub fn finish(&self) -> io::Result<()> {
        {
            let mut buf = lock(&self.buf);
            if !buf.is_empty() {
                self.hand_over(&mut buf, false);
            }
        }
        lock(&self.queues).clear();
        let mut result = Ok(());
        for w in lock(&self.writers).drain(..) {
            let r = w
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("output writer thread panicked")));
            if result.is_ok() {
                result = r;
            }
        }
        result
    }

    /// The way out of a second Ctrl-C: queues what is buffered (whole records only: each is
    /// encoded whole under the buffer's lock) if the lock can be had at once, stops the
    /// writers, and gives them up to `grace` to write it all. Requests still in flight get no
    /// `done`. The saved file is written apace with stdout, or ahead of it when stdout's
    /// reader is slow.
    pub fn abandon(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        let give_up = Instant::now() + Duration::from_millis(100);
        loop {
            match self.buf.try_lock() {
                Ok(mut buf) => break self.hand_over(&mut buf, false),
                Err(TryLockError::Poisoned(p)) => break self.hand_over(&mut p.into_inner(), false),
                // Held by a thread waiting for room (a stall): what it holds stays unwritten.
                Err(TryLockError::WouldBlock) if Instant::now() >= give_up => break,
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        lock(&self.queues).clear();
        let st = self.shared.lock();
        drop(self.shared.wait(st, |st| st.alive == 0, Some(deadline)));
    }
}

/// A byte count for people: `512 KiB`, `256 MiB`.
fn in_units(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    }
}

/// Exclusive access to the record buffer; hands a full buffer to the writers when released.
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
            self.sink.hand_over(&mut self.buf, true);
        }
    }
}

#[cfg(test)]
mod tests;
