//! Ctrl-C and SIGTERM, handled on a thread of their own so that they work in every phase of a
//! run (reading the schedule, asking the server for its model, sending) and even while the
//! network thread is held by a slow output.
//!
//! Both signals are blocked in every thread (they are blocked before any other thread starts,
//! and threads inherit the mask) and taken with `sigwait` by the `fire-signals` thread. The
//! first stops the run ([`Stop`]): sending stops, requests in flight end as `cancelled`, the
//! requests still readable without waiting end as `not_sent`, and `fire` exits 130 (143) once
//! everything is written. The second quits at once: what is buffered goes out (whole lines
//! only), the writers get [`GRACE`] to write it, and `fire` exits without waiting for requests
//! in flight, which then have no `done`.

use crate::sink::Sink;
use crate::stop::{Stop, StopReason};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long a second signal waits for the writers before exiting.
pub const GRACE: Duration = Duration::from_secs(2);

/// What a second signal flushes: the sink, once the run has one.
#[derive(Default)]
pub struct LastResort {
    sink: OnceLock<Arc<Sink>>,
}

impl LastResort {
    /// From now on a second signal writes out what `sink` holds before exiting.
    pub fn arm(&self, sink: Arc<Sink>) {
        let _ = self.sink.set(sink);
    }
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set; sigaddset adds valid signal numbers to it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        set
    }
}

/// Blocks SIGINT and SIGTERM and starts the thread that takes them. Call before starting any
/// other thread. If that fails, says so and leaves the signals' default action (exit at once).
pub fn watch(stop: Arc<Stop>) -> Arc<LastResort> {
    let last = Arc::new(LastResort::default());
    let set = signal_set();
    // SAFETY: changes the calling thread's signal mask with a valid set.
    if unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } != 0 {
        eprintln!("fire: warning: cannot watch for SIGINT/SIGTERM; an interrupted run loses its last records");
        return last;
    }
    let l = last.clone();
    let started = std::thread::Builder::new()
        .name("fire-signals".into())
        .spawn(move || take_signals(set, &stop, &l));
    if started.is_err() {
        // SAFETY: as above, undoing the block.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        eprintln!("fire: warning: cannot watch for SIGINT/SIGTERM; an interrupted run loses its last records");
    }
    last
}

fn take_signals(set: libc::sigset_t, stop: &Stop, last: &LastResort) {
    let mut taken = 0;
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: waits for a signal of a valid set that every thread blocks.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            return;
        }
        let reason = if sig == libc::SIGTERM {
            StopReason::Terminated
        } else {
            StopReason::Interrupted
        };
        taken += 1;
        if taken == 1 {
            let how = if reason == StopReason::Terminated {
                "terminated"
            } else {
                "interrupted"
            };
            crate::live::say(&format!("fire: {how}; finishing: requests in flight end as cancelled, unsent ones as not_sent (Ctrl-C again to quit at once)"));
            stop.trigger(reason);
            continue;
        }
        crate::live::say("fire: quitting at once; requests still in flight have no done record");
        if let Some(sink) = last.sink.get() {
            sink.abandon(GRACE);
        }
        let ending = reason
            .exit()
            .map_or(tokenpipe_cli::Ending::Interrupted, |(ending, _)| ending);
        std::process::exit(ending.code());
    }
}
