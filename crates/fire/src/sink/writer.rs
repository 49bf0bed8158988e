//! The writer threads behind the sink: one per output (stdout, and the `--save` file), each
//! writing every full buffer in order, its token slots formatted (`staged`; each writer formats
//! its own copy, so `--save` formats the tokens twice, off the network thread). A buffer is shared by the writers and counted as queued
//! until the last of them has written it; then it is recycled. Writers never stop each other:
//! a stdout whose reader went away (or stalls) does not hold back the saved file.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// What runs once when a write to an output fails.
pub type OnError = Box<dyn FnOnce(&io::Error) + Send>;

/// One place the events go.
pub struct Output {
    /// The name used in messages (`<stdout>`, a path).
    pub name: String,
    /// Where the bytes go.
    pub out: Box<dyn Write + Send>,
    /// Runs once when a write fails (for stdout: the reader went away, which stops the run).
    pub on_error: Option<OnError>,
}

/// What the sink and its writers share: how many bytes wait to be written, and a condition
/// variable for the network side to wait on when that passes the bound.
#[derive(Default)]
pub(super) struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
pub(super) struct State {
    /// Bytes handed to the writers that some writer has not written yet.
    pub queued: u64,
    /// Writer threads still running.
    pub alive: usize,
    /// Threads waiting in [`Shared::wait`]; the writers wake them only when there are some.
    waiters: u32,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// Waits on the condition (state changed) until `until` holds or `deadline` passes.
    pub(super) fn wait<'a>(
        &self,
        mut st: MutexGuard<'a, State>,
        mut until: impl FnMut(&State) -> bool,
        deadline: Option<std::time::Instant>,
    ) -> MutexGuard<'a, State> {
        st.waiters += 1;
        while !until(&st) {
            st = match deadline {
                None => self.changed.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    self.changed
                        .wait_timeout(st, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
        st.waiters -= 1;
        st
    }

    fn changed(&self, mut f: impl FnMut(&mut State)) {
        let mut st = self.lock();
        f(&mut st);
        let wake = st.waiters > 0;
        drop(st);
        if wake {
            self.changed.notify_all();
        }
    }
}

/// Counts a writer as running until it is dropped, even by a panic, so that nobody waits for a
/// writer that is gone.
struct Alive(Arc<Shared>);

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.changed(|st| st.alive -= 1);
    }
}

/// Starts one writer thread.
pub(super) fn spawn(
    output: Output,
    rx: Receiver<Arc<Vec<u8>>>,
    shared: Arc<Shared>,
    spare: SyncSender<Vec<u8>>,
) -> io::Result<std::thread::JoinHandle<io::Result<()>>> {
    shared.changed(|st| st.alive += 1);
    let alive = Alive(shared);
    std::thread::Builder::new()
        .name("fire-writer".into())
        .spawn(move || write_loop(output, rx, alive, spare))
}

fn write_loop(
    mut output: Output,
    rx: Receiver<Arc<Vec<u8>>>,
    alive: Alive,
    spare: SyncSender<Vec<u8>>,
) -> io::Result<()> {
    let mut failed: Option<io::Error> = None;
    // The records as written: each buffer's token slots made into lines (`staged`).
    let mut text = Vec::new();
    for buf in rx {
        if failed.is_none() {
            text.clear();
            super::staged::expand(&buf, &mut text);
            if let Err(e) = output.out.write_all(&text).and_then(|_| output.out.flush()) {
                if let Some(f) = output.on_error.take() {
                    f(&e);
                }
                failed = Some(e);
            }
        }
        // The last writer to finish with a buffer takes it off the queue and recycles it.
        if let Some(mut done) = Arc::into_inner(buf) {
            let n = done.len() as u64;
            alive
                .0
                .changed(|st| st.queued = st.queued.saturating_sub(n));
            done.clear();
            let _ = spare.try_send(done);
        }
    }
    drop(alive);
    match failed {
        Some(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(io::Error::new(
            e.kind(),
            format!("writing {}: {e}", output.name),
        )),
        _ => Ok(()),
    }
}

pub(super) use crate::sync::lock;
