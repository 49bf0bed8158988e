//! The schedule input (stdin, or a file), read so that a stopped run never waits for more.
//!
//! Until the run is stopped, reads block as usual (in slices of 100 ms, so that a stop is
//! noticed while waiting). Once it is stopped, a read that would block is the end of the input:
//! `fire` then writes a `not_sent` done for every request it could still read without waiting
//! (what a killed or stopped `arrivals` left in the pipe, or the rest of a file) and ends,
//! instead of hanging on an upstream that may never write or close.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;
use std::sync::Arc;
use tokenpipe_cli::Input;

use crate::error::Error;
use crate::stop::Stop;

/// Read buffer: large enough that a schedule of short requests costs few reads.
const BUFFER: usize = 256 * 1024;
/// How long one wait for input lasts before the stop signal is looked at again.
const POLL_MS: libc::c_int = 100;

/// Opens `path` (`-` or none is stdin) for reading until EOF, or until the run is stopped and
/// no more is ready. `Err` is a file that cannot be opened, or a stdin that cannot be taken.
pub fn open(path: Option<&Path>, stop: Arc<Stop>) -> Result<Input, Error> {
    let (file, name) = match path {
        Some(p) if p != Path::new("-") => (tokenpipe_cli::open_file(p)?, p.display().to_string()),
        _ => {
            tokenpipe_cli::note_terminal_stdin();
            let fd = io::stdin().as_fd().try_clone_to_owned()?;
            (File::from(fd), "<stdin>".to_string())
        }
    };
    Ok(Input {
        reader: Box::new(BufReader::with_capacity(BUFFER, StopAware { file, stop })),
        name,
    })
}

/// A file whose reads end (as EOF) once the run is stopped and nothing more is ready.
struct StopAware {
    file: File,
    stop: Arc<Stop>,
}

impl Read for StopAware {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let stopped = self.stop.is_stopped();
            match ready(&self.file, if stopped { 0 } else { POLL_MS }) {
                Some(true) | None => break,
                Some(false) if stopped => return Ok(0),
                Some(false) => continue,
            }
        }
        self.file.read(buf)
    }
}

/// Whether a read on `file` would return at once (data, end of file or an error), waiting up to
/// `timeout_ms`; `None` if it cannot tell (then the caller just reads).
fn ready(file: &File, timeout_ms: libc::c_int) -> Option<bool> {
    let mut p = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for a descriptor this struct owns.
    match unsafe { libc::poll(&mut p, 1, timeout_ms) } {
        0 => Some(false),
        n if n > 0 => Some(true),
        _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stop::StopReason;
    use std::io::{BufRead, Write};
    use std::os::fd::FromRawFd;

    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills two new descriptors, each owned by one File below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: fresh descriptors from pipe(2), owned by nothing else.
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    #[test]
    fn once_stopped_an_open_pipe_ends_after_what_is_ready() {
        let (r, mut w) = pipe();
        let stop = Arc::new(Stop::default());
        let mut input = BufReader::new(StopAware {
            file: r,
            stop: stop.clone(),
        });
        w.write_all(b"one\ntwo\n").unwrap();
        let mut line = String::new();
        input.read_line(&mut line).unwrap();
        assert_eq!(line, "one\n");
        stop.trigger(StopReason::Interrupted);
        let mut rest = String::new();
        // The writer is still open: without the stop this would wait for ever.
        input.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "two\n");
        drop(w);
    }

    #[test]
    fn a_stop_ends_a_wait_for_input() {
        let (r, _w) = pipe();
        let stop = Arc::new(Stop::default());
        let s = stop.clone();
        let waiter = std::thread::spawn(move || {
            let mut input = BufReader::new(StopAware { file: r, stop: s });
            let mut v = vec![];
            input.read_to_end(&mut v).map(|_| v.len())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        stop.trigger(StopReason::Interrupted);
        assert_eq!(waiter.join().unwrap().unwrap(), 0);
    }
}
