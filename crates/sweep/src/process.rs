//! One run of a command: `sh -c` in a process group of its own (see [`crate::signals`]), its
//! stdout read whole into memory (fire's events, which reduce reads afterwards), its stderr
//! left on sweep's own so that the user sees fire's messages as they come.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

/// What a command run gave.
pub struct Ran {
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// `None` when it exited 0, else how it ended: `exited with status 3`, `was killed by
    /// signal 9`.
    pub failure: Option<String>,
}

/// Runs `command` under `sh -c`, stdin closed, and waits for it.
pub fn run(command: &str, capture: bool) -> std::io::Result<Ran> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .process_group(0)
        .spawn()?;
    let pid = i32::try_from(child.id()).unwrap_or(0);
    crate::signals::set_child_group(pid);
    let mut stdout = Vec::new();
    let read = match child.stdout.take() {
        Some(mut out) => out.read_to_end(&mut stdout).map(|_| ()),
        None => Ok(()),
    };
    let status = child.wait();
    crate::signals::set_child_group(0);
    read?;
    let status = status?;
    let failure = if status.success() {
        None
    } else if let Some(code) = status.code() {
        Some(format!("exited with status {code}"))
    } else {
        Some(format!(
            "was killed by signal {}",
            status.signal().unwrap_or_default()
        ))
    };
    Ok(Ran { stdout, failure })
}
