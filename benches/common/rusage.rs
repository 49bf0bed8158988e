//! What a benchmark reads back from a child it ran: its wait status and its resource usage
//! (CPU time, peak resident memory), shared by the benchmarks that measure a tool as a process.

use std::process::Child;

/// Waits for the child and returns its wait status and resource usage.
pub fn wait_with_rusage(child: Child) -> (i32, libc::rusage) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter; wait4 on our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4 failed");
    (status, ru)
}
