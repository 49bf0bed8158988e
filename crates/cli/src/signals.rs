//! Installing a stop handler the way every tool does: for SIGINT and SIGTERM, leaving a signal
//! the process started with ignored (a background job's SIGINT, `nohup`) ignored, as the shell
//! meant.

use std::io;

/// Installs `handler` for SIGINT and SIGTERM with `flags` (`SA_RESTART` to go on after it,
/// `SA_RESETHAND` so that a second signal acts as if none were caught). Each tool's handler
/// must be async-signal-safe: atomics, `write(2)`, `kill(2)`, `_exit(2)`.
pub fn handle_stop_signals(
    handler: extern "C" fn(libc::c_int),
    flags: libc::c_int,
) -> io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction with a zeroed struct to read the current disposition, then with a
        // filled one whose handler the caller vouches is async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
                return Err(io::Error::last_os_error());
            }
            if old.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = flags;
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}
