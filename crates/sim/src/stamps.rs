//! The server's own record of when it sent things (`--stamps FILE`): one NDJSON line per
//! finished generation request, all times on `CLOCK_MONOTONIC` in nanoseconds.
//!
//! This file is the reference the benchmark compares `fire`'s receive stamps with, so a token is
//! stamped at the moment its frame is handed to hyper, not when it was due. A request's line is
//! written when its state is dropped: at the end of its answer, or when the client went away
//! (then `tokens` says how far it got). Lines go through one buffered writer behind a mutex and
//! are flushed on shutdown, never per token.

use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokenpipe_format::clock::monotonic_ns;

/// One line of the stamps file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stamp {
    /// The request's `x-request-id` header, if it had a readable one.
    pub request_id: Option<String>,
    /// When the request body had been fully read (the timetable's origin).
    pub received_ns: u64,
    /// When the first token's frame was handed to hyper; null if none was sent.
    pub first_token_ns: Option<u64>,
    /// When the last token sent was handed to hyper; null if none was sent.
    pub last_token_ns: Option<u64>,
    /// Tokens sent (equal to `max_tokens` unless the client left early or the request was bad).
    pub tokens: u64,
}

/// The shared stamps file.
pub struct StampLog {
    out: Mutex<BufWriter<File>>,
    failed: AtomicBool,
}

impl StampLog {
    /// Creates (truncates) the file.
    pub fn create(path: &Path) -> io::Result<Self> {
        let file = File::create(path)?;
        Ok(Self {
            out: Mutex::new(BufWriter::with_capacity(64 * 1024, file)),
            failed: AtomicBool::new(false),
        })
    }

    /// Appends one line; a write error is reported once on stderr and does not stop serving.
    pub fn record(&self, stamp: &Stamp) {
        let mut line = match serde_json::to_vec(stamp) {
            Ok(line) => line,
            Err(_) => return,
        };
        line.push(b'\n');
        let result = match self.out.lock() {
            Ok(mut out) => out.write_all(&line),
            Err(poisoned) => poisoned.into_inner().write_all(&line),
        };
        if let Err(e) = result {
            if !self.failed.swap(true, Ordering::Relaxed) {
                eprintln!("simserve: cannot write stamps: {e}");
            }
        }
    }

    /// Writes out everything buffered.
    pub fn flush(&self) -> io::Result<()> {
        match self.out.lock() {
            Ok(mut out) => out.flush(),
            Err(poisoned) => poisoned.into_inner().flush(),
        }
    }
}

/// One request's stamps while it is being answered; its line is written when it is dropped.
/// Without a stamps file it reads no clock at all.
pub struct RequestStamps {
    log: Option<Arc<StampLog>>,
    stamp: Stamp,
}

impl RequestStamps {
    /// Starts the record of a request whose body was fully read at `received_ns`.
    pub fn new(log: Option<Arc<StampLog>>, request_id: Option<String>, received_ns: u64) -> Self {
        Self {
            log,
            stamp: Stamp {
                request_id,
                received_ns,
                first_token_ns: None,
                last_token_ns: None,
                tokens: 0,
            },
        }
    }

    /// Notes that `n` more tokens are being handed to hyper right now.
    pub fn sent(&mut self, n: u64) {
        self.stamp.tokens += n;
        if self.log.is_some() {
            let now = monotonic_ns();
            self.stamp.first_token_ns.get_or_insert(now);
            self.stamp.last_token_ns = Some(now);
        }
    }

    /// Tokens sent so far.
    pub fn tokens(&self) -> u64 {
        self.stamp.tokens
    }
}

impl Drop for RequestStamps {
    fn drop(&mut self) {
        if let Some(log) = &self.log {
            log.record(&self.stamp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_written_on_drop_and_flush() {
        let path =
            std::env::temp_dir().join(format!("simserve-stamps-{}.ndjson", std::process::id()));
        let log = Arc::new(StampLog::create(&path).unwrap());
        {
            let mut r = RequestStamps::new(Some(log.clone()), Some("a\"b".into()), 5);
            r.sent(1);
            r.sent(2);
            assert_eq!(r.tokens(), 3);
        }
        drop(RequestStamps::new(Some(log.clone()), None, 7));
        log.flush().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["request_id"], "a\"b");
        assert_eq!(lines[0]["received_ns"], 5);
        assert_eq!(lines[0]["tokens"], 3);
        let first = lines[0]["first_token_ns"].as_u64().unwrap();
        let last = lines[0]["last_token_ns"].as_u64().unwrap();
        assert!(first > 0 && last >= first);
        assert_eq!(
            lines[1],
            serde_json::json!({"request_id": null, "received_ns": 7,
                "first_token_ns": null, "last_token_ns": null, "tokens": 0})
        );
    }
}
