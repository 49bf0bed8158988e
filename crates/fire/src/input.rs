//! The schedule input (stdin, or a file), read so that a stopped run never waits for more.
//!
//! Until the run is stopped, reads block as usual (in slices of 100 ms, so that a stop is
//! noticed while waiting). Once it is stopped, a read that would block is the end of the input:
//! `fire` then writes a `not_sent` done for every request it could still read without waiting
//! (what a killed or stopped `arrivals` left in the pipe, or the rest of a file) and ends,
//! instead of hanging on an upstream that may never write or close.
//!
//! A stop that finds the input in the middle of a line waits a little longer for the rest
//! ([`MID_LINE_GRACE`]): a Ctrl-C reaches `arrivals` at the same moment, and `arrivals` then
//! completes the line it was writing before it ends, so the schedule ends on a whole line. Only
//! a line still cut after that (the writer was killed, or is stopped itself) is reported cut.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokenpipe_cli::Input;

use crate::error::Error;
use crate::stop::Stop;

/// Read buffer: large enough that a schedule of short requests costs few reads.
const BUFFER: usize = 256 * 1024;
/// How long one wait for input lasts before the stop signal is looked at again.
const POLL_MS: libc::c_int = 100;
/// How long a stopped run still waits for the rest of a line it read only the start of.
const MID_LINE_GRACE: Duration = Duration::from_secs(1);

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
        reader: Box::new(BufReader::with_capacity(BUFFER, StopAware::new(file, stop))),
        name,
    })
}

/// A file whose reads end (as EOF) once the run is stopped and nothing more is ready, after
/// the rest of a line begun, if it comes within [`MID_LINE_GRACE`].
struct StopAware {
    file: File,
    stop: Arc<Stop>,
    /// The last byte read was not a newline: the writer is in the middle of a line.
    mid_line: bool,
    /// Until when a stopped run waits for the rest of that line (set at the first wait).
    grace_until: Option<Instant>,
}

impl StopAware {
    fn new(file: File, stop: Arc<Stop>) -> Self {
        Self {
            file,
            stop,
            mid_line: false,
            grace_until: None,
        }
    }

    /// How long the next wait for input may last: the poll slice while the run goes on, or
    /// while a stopped run waits out the grace for the rest of a line; `None` when a stopped
    /// run takes "nothing ready" as the end.
    fn wait_ms(&mut self) -> Option<libc::c_int> {
        if !self.stop.is_stopped() {
            return Some(POLL_MS);
        }
        if !self.mid_line {
            return None;
        }
        let until = *self
            .grace_until
            .get_or_insert_with(|| Instant::now() + MID_LINE_GRACE);
        let left = until.saturating_duration_since(Instant::now());
        (!left.is_zero()).then(|| left.as_millis().clamp(1, POLL_MS as u128) as libc::c_int)
    }
}

impl Read for StopAware {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let wait = self.wait_ms();
            match ready(&self.file, wait.unwrap_or(0)) {
                Some(true) | None => break,
                Some(false) if wait.is_none() => return Ok(0),
                Some(false) => continue,
            }
        }
        let n = self.file.read(buf)?;
        if let Some(last) = buf[..n].last() {
            self.mid_line = *last != b'\n';
        }
        Ok(n)
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
        let mut input = BufReader::new(StopAware::new(r, stop.clone()));
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
            let mut input = BufReader::new(StopAware::new(r, s));
            let mut v = vec![];
            input.read_to_end(&mut v).map(|_| v.len())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        stop.trigger(StopReason::Interrupted);
        assert_eq!(waiter.join().unwrap().unwrap(), 0);
    }

    #[test]
    fn a_stop_mid_line_waits_for_the_rest_of_the_line() {
        let (r, mut w) = pipe();
        let stop = Arc::new(Stop::default());
        let mut input = BufReader::new(StopAware::new(r, stop.clone()));
        w.write_all(b"one\ntw").unwrap();
        let mut line = String::new();
        input.read_line(&mut line).unwrap();
        assert_eq!(line, "one\n");
        stop.trigger(StopReason::Interrupted);
        // The writer completes its line a moment after the stop, and keeps its end open.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(150));
            w.write_all(b"o\n").unwrap();
            w
        });
        let mut rest = String::new();
        input.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "two\n");
        drop(writer.join().unwrap());
    }

    #[test]
    fn a_line_left_cut_ends_the_input_after_the_grace_or_at_the_close() {
        // The writer stays open but never completes the line: the grace ends the wait.
        let (r, mut w) = pipe();
        let stop = Arc::new(Stop::default());
        let mut input = BufReader::new(StopAware::new(r, stop.clone()));
        w.write_all(b"one\ntw").unwrap();
        stop.trigger(StopReason::Interrupted);
        let start = Instant::now();
        let mut all = String::new();
        input.read_to_string(&mut all).unwrap();
        assert_eq!(all, "one\ntw");
        assert!(start.elapsed() >= MID_LINE_GRACE, "{:?}", start.elapsed());
        // A writer killed mid-line closes the pipe: the end comes at once.
        let (r, mut w) = pipe();
        let stop = Arc::new(Stop::default());
        let mut input = BufReader::new(StopAware::new(r, stop.clone()));
        w.write_all(b"one\ntw").unwrap();
        drop(w);
        stop.trigger(StopReason::Interrupted);
        let start = Instant::now();
        let mut all = String::new();
        input.read_to_string(&mut all).unwrap();
        assert_eq!(all, "one\ntw");
        assert!(start.elapsed() < MID_LINE_GRACE, "{:?}", start.elapsed());
    }
}
