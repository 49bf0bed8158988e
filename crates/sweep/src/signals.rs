//! SIGINT and SIGTERM: sweep runs each point's command in a process group of its own, so a
//! terminal's Ctrl-C reaches sweep alone; the handler notes the signal and passes it on to the
//! running command's group, whose `fire` then ends its run and writes what it measured. sweep
//! reads that to the end, writes the point and the `sweep` record, and exits 130 or 143.
//!
//! A second signal kills the command's group and ends sweep at once, as the other tools do.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use tokenpipe_cli::Ending;

/// The first stop signal received, as its number; 0 until one arrives.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The running command's process group; 0 when none runs.
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

/// Installs the handler for SIGINT and SIGTERM. A signal that was ignored when the process
/// started (a background job's SIGINT, `nohup`) stays ignored, as the shell meant.
pub fn install() -> io::Result<()> {
    tokenpipe_cli::handle_stop_signals(on_signal, libc::SA_RESTART)
}

extern "C" fn on_signal(signal: libc::c_int) {
    let group = CHILD_GROUP.load(Ordering::SeqCst);
    if RECEIVED
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // SAFETY: kill(2) and _exit(2) are async-signal-safe.
        unsafe {
            if group > 0 {
                libc::kill(-group, libc::SIGKILL);
            }
            libc::_exit(128 + signal);
        }
    }
    if group > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(-group, signal);
        }
    }
}

/// Notes the group of the command now running (its leader's pid), or 0 when it has ended. A
/// signal that came before the group was noted is passed on here.
pub fn set_child_group(pid: i32) {
    CHILD_GROUP.store(pid, Ordering::SeqCst);
    let signal = RECEIVED.load(Ordering::SeqCst);
    if pid > 0 && signal != 0 {
        // SAFETY: plain kill(2) on the group sweep started.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

/// How the sweep was stopped, if it was.
pub fn received() -> Option<Ending> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGTERM => Some(Ending::Terminated),
        _ => Some(Ending::Interrupted),
    }
}
