//! Whole-line output. Records are encoded into one buffer of whole NDJSON lines, which is
//! written with plain `write` calls; after each record and each `write` the sink asks whether
//! to stop. A stop takes effect only at a line boundary: the line partly written when it came
//! is completed, the lines after it are dropped, and the reader never sees half a record.
//!
//! `std::io::BufWriter` cannot do this: it retries an interrupted `write` by itself, so a writer
//! blocked on a full pipe never gets to look at the stop flag, and when it gives up on an error
//! it may have written any prefix of its buffer.

use crate::signals::Signal;
use std::io::{self, Write};
use tokenpipe_format::Record;

/// Bytes gathered before they are written: few system calls, bounded memory.
const CAPACITY: usize = 64 * 1024;

/// Why the sink ended early.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// A stop was asked for; the output ends after a whole line.
    #[error("{}", .0.message())]
    Stopped(Signal),
    /// Writing failed (a reader that closed the pipe included) with no stop asked for.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes records as whole lines to `out`, asking `stop` between records and between writes.
pub struct LineSink<W, S> {
    out: W,
    buf: Vec<u8>,
    stop: S,
}

impl<W: Write, S: FnMut() -> Option<Signal>> LineSink<W, S> {
    /// A sink writing to `out` (unbuffered is best: each `write` should be one system call)
    /// that stops once `stop` returns a signal.
    pub fn new(out: W, stop: S) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(CAPACITY),
            stop,
        }
    }

    /// Adds one record, writing the buffer out once it is full. Nothing is added once a stop
    /// has been asked for.
    pub fn write(&mut self, record: &Record) -> Result<(), SinkError> {
        if let Some(signal) = (self.stop)() {
            return Err(SinkError::Stopped(signal));
        }
        serde_json::to_writer(&mut self.buf, record).map_err(io::Error::from)?;
        self.buf.push(b'\n');
        if self.buf.len() >= CAPACITY {
            self.drain()?;
        }
        Ok(())
    }

    /// Writes out every buffered line.
    pub fn flush(&mut self) -> Result<(), SinkError> {
        self.drain()?;
        self.out.flush().map_err(|e| self.stopped_or(e))
    }

    /// Writes the buffer; on a stop, only up to the end of the line being written.
    fn drain(&mut self) -> Result<(), SinkError> {
        let mut done = 0;
        let mut end = self.buf.len();
        let mut stopped = None;
        while done < end {
            match self.out.write(&self.buf[done..end]) {
                Ok(0) => {
                    self.buf.clear();
                    return Err(self.stopped_or(io::ErrorKind::WriteZero.into()));
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.clear();
                    return Err(stopped.map_or_else(|| self.stopped_or(e), SinkError::Stopped));
                }
            }
            if stopped.is_none() {
                stopped = (self.stop)();
                if stopped.is_some() {
                    end = line_end(&self.buf, done);
                }
            }
        }
        self.buf.clear();
        match stopped {
            Some(signal) => Err(SinkError::Stopped(signal)),
            None => Ok(()),
        }
    }

    /// A failed write after a stop is part of the stop (the reader was interrupted too).
    fn stopped_or(&mut self, e: io::Error) -> SinkError {
        match (self.stop)() {
            Some(signal) => SinkError::Stopped(signal),
            None => SinkError::Io(e),
        }
    }
}

/// Where the line holding `buf[at]` ends (just past its newline), or `at` itself when `at` is
/// already at a line boundary.
fn line_end(buf: &[u8], at: usize) -> usize {
    if at == 0 || buf[at - 1] == b'\n' {
        return at;
    }
    buf[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(buf.len(), |i| at + i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;
    use tokenpipe_format::Schedule;

    /// A pipe that takes at most `chunk` bytes per write and, on its `interrupt_at`-th call,
    /// raises the stop flag and fails with EINTR, as a blocked write does when a signal comes.
    struct SlowPipe {
        got: Vec<u8>,
        chunk: usize,
        calls: usize,
        interrupt_at: usize,
        flag: Rc<Cell<Option<Signal>>>,
        then: Option<io::ErrorKind>,
    }

    impl Write for SlowPipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls == self.interrupt_at {
                self.flag.set(Some(Signal::Interrupt));
                return Err(io::ErrorKind::Interrupted.into());
            }
            if let (Some(kind), true) = (self.then, self.calls > self.interrupt_at) {
                return Err(kind.into());
            }
            let n = buf.len().min(self.chunk);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn record(i: u64) -> Record {
        Record::Schedule(Schedule {
            mode: tokenpipe_format::LoopMode::Closed.into(),
            concurrency: Some(i),
            requests: None,
            ..Schedule::default()
        })
    }

    fn all_lines(n: u64) -> Vec<u8> {
        let mut v = vec![];
        for i in 0..n {
            serde_json::to_writer(&mut v, &record(i)).unwrap();
            v.push(b'\n');
        }
        v
    }

    /// Writes `n` records through a sink over `pipe`, then flushes.
    fn run(pipe: &mut SlowPipe, n: u64) -> Result<(), SinkError> {
        let flag = pipe.flag.clone();
        let mut sink = LineSink::new(&mut *pipe, move || flag.get());
        for i in 0..n {
            sink.write(&record(i))?;
        }
        sink.flush()
    }

    fn pipe(chunk: usize, interrupt_at: usize) -> SlowPipe {
        SlowPipe {
            got: vec![],
            chunk,
            calls: 0,
            interrupt_at,
            flag: Rc::new(Cell::new(None)),
            then: None,
        }
    }

    #[test]
    fn without_a_stop_every_line_is_written() {
        let mut p = pipe(7, usize::MAX);
        run(&mut p, 5000).unwrap();
        assert_eq!(p.got, all_lines(5000));
    }

    #[test]
    fn a_write_interrupted_mid_line_completes_that_line_and_stops() {
        // 7-byte writes: the third call finds the sink 14 bytes into its first line.
        let mut p = pipe(7, 3);
        let err = run(&mut p, 5000).unwrap_err();
        assert!(
            matches!(err, SinkError::Stopped(Signal::Interrupt)),
            "{err}"
        );
        let all = all_lines(5000);
        let first_line = all.iter().position(|&b| b == b'\n').unwrap() + 1;
        assert_eq!(p.got, all[..first_line]);
    }

    #[test]
    fn a_stop_between_lines_writes_nothing_more() {
        let mut p = pipe(1 << 20, 2);
        let err = run(&mut p, 5000).unwrap_err();
        assert!(matches!(err, SinkError::Stopped(_)), "{err}");
        // The first write took the whole first buffer, the second was interrupted at a line
        // boundary: nothing after it.
        assert!(p.got.ends_with(b"\n") && p.got.len() >= CAPACITY);
        assert_eq!(p.got, all_lines(5000)[..p.got.len()]);
    }

    #[test]
    fn a_stop_before_a_record_drops_the_buffered_lines() {
        let flag = Rc::new(Cell::new(None));
        let mut got = vec![];
        let stop = {
            let flag = flag.clone();
            move || flag.get()
        };
        let mut sink = LineSink::new(&mut got, stop);
        sink.write(&record(0)).unwrap();
        flag.set(Some(Signal::Terminate));
        assert!(matches!(
            sink.write(&record(1)),
            Err(SinkError::Stopped(Signal::Terminate))
        ));
        drop(sink);
        assert!(got.is_empty());
    }

    #[test]
    fn a_closed_pipe_is_an_io_error_unless_a_stop_came_first() {
        // No call is number 0, so there is no stop, and every call fails.
        let mut closed = pipe(7, 0);
        closed.then = Some(io::ErrorKind::BrokenPipe);
        let err = run(&mut closed, 5000).unwrap_err();
        assert!(
            matches!(&err, SinkError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe),
            "{err}"
        );

        let mut after_stop = pipe(7, 3);
        after_stop.then = Some(io::ErrorKind::BrokenPipe);
        let err = run(&mut after_stop, 5000).unwrap_err();
        assert!(matches!(err, SinkError::Stopped(_)), "{err}");
    }

    #[test]
    fn line_end_finds_the_boundary() {
        let buf = b"ab\ncd\n";
        assert_eq!(line_end(buf, 0), 0);
        assert_eq!(line_end(buf, 1), 3);
        assert_eq!(line_end(buf, 3), 3);
        assert_eq!(line_end(buf, 4), 6);
        assert_eq!(line_end(buf, 6), 6);
    }
}
