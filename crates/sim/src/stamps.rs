//! The server's own record of when it sent things (`--stamps FILE`): a stream of the tokenpipe
//! format, a `header` for the server's run, then one `stamp` record per finished generation
//! request, its times in nanoseconds from the header's `monotonic_origin_ns` (docs/format.md).
//!
//! This file is the reference the benchmark compares `fire`'s receive stamps with, so a token is
//! stamped at the moment its frame is handed to hyper, not when it was due. A request's line is
//! written when its state is dropped: at the end of its answer, or when the client went away
//! (then `tokens` says how far it got). Lines go through one buffered writer behind a mutex and
//! are flushed on shutdown, never per token.

use crate::metrics::{FinishReason, Meter};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokenpipe_format::clock::{monotonic_ns, RunClock};
use tokenpipe_format::{Header, Record, Stamp};

/// The shared stamps file: a stream of the tokenpipe format, `simserve`'s header first.
pub struct StampLog {
    out: Mutex<BufWriter<File>>,
    failed: AtomicBool,
    origin_ns: u64,
}

impl StampLog {
    /// Creates (truncates) the file and writes its header: the server's run starts now, and
    /// every stamp is nanoseconds from this moment. `params` are the server's settings worth
    /// keeping with the stamps.
    pub fn create(path: &Path, params: BTreeMap<String, serde_json::Value>) -> io::Result<Self> {
        let clock = RunClock::start();
        let hash = tokenpipe_format::ids::unique_run_hash(clock.origin_ns());
        let mut header = Header::measured(
            "simserve",
            format!("simserve-{hash:016x}"),
            tokenpipe_cli::argv(),
            &clock,
        );
        header.params = params;
        let mut out = BufWriter::with_capacity(64 * 1024, File::create(path)?);
        serde_json::to_writer(&mut out, &Record::Header(header))?;
        out.write_all(b"\n")?;
        out.flush()?;
        Ok(Self {
            out: Mutex::new(out),
            failed: AtomicBool::new(false),
            origin_ns: clock.origin_ns(),
        })
    }

    /// The server run's start on `CLOCK_MONOTONIC`: its header's `monotonic_origin_ns`.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Appends the `stamp` record of a request whose times are `CLOCK_MONOTONIC` readings;
    /// they are written as nanoseconds from the run start.
    pub fn record(&self, absolute: &Stamp) {
        let since = |t: u64| t.saturating_sub(self.origin_ns);
        let stamp = Stamp {
            request_id: absolute.request_id.clone(),
            received_ns: since(absolute.received_ns),
            first_token_ns: absolute.first_token_ns.map(since),
            last_token_ns: absolute.last_token_ns.map(since),
            tokens: absolute.tokens,
            late_max_ns: absolute.late_max_ns,
            late_sum_ns: absolute.late_sum_ns,
        };
        self.write_line(&Record::Stamp(stamp));
    }

    fn write_line(&self, record: &Record) {
        let mut line = match serde_json::to_vec(record) {
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
    /// The request's `/metrics` measurements, once it was admitted; they are taken at the
    /// same hand-offs as the stamps.
    meter: Option<Meter>,
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
                late_max_ns: None,
                late_sum_ns: None,
            },
            meter: None,
        }
    }

    /// Measures the request for `/metrics` from now on (it was admitted to the engine).
    pub fn meter(&mut self, meter: Meter) {
        self.meter = Some(meter);
    }

    /// The request sent its last token: it counts as finished by length, not aborted.
    pub fn finished(&mut self) {
        if let Some(meter) = &mut self.meter {
            meter.end(FinishReason::Length);
        }
    }

    /// Notes that `n` more tokens are being handed to hyper right now, `late_ns()` after the
    /// instant they were due (asked only when stamps are written, so that no clock is read
    /// otherwise).
    pub fn sent(&mut self, n: u64, late_ns: impl FnOnce() -> u64) {
        self.stamp.tokens += n;
        if let Some(meter) = &mut self.meter {
            meter.sent(n);
        }
        if self.log.is_some() {
            let now = monotonic_ns();
            self.stamp.first_token_ns.get_or_insert(now);
            self.stamp.last_token_ns = Some(now);
            let late = late_ns();
            let max = self.stamp.late_max_ns.get_or_insert(0);
            *max = (*max).max(late);
            let sum = self.stamp.late_sum_ns.get_or_insert(0);
            *sum = sum.saturating_add(late.saturating_mul(n));
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
    fn a_header_then_a_stamp_record_per_request_on_the_header_clock() {
        let path =
            std::env::temp_dir().join(format!("simserve-stamps-{}.ndjson", std::process::id()));
        let mut params = BTreeMap::new();
        params.insert("ttft_ms".to_string(), 50.0.into());
        let log = Arc::new(StampLog::create(&path, params).unwrap());
        let origin = log.origin_ns();
        {
            let mut r = RequestStamps::new(Some(log.clone()), Some("a\"b".into()), origin + 5);
            r.sent(1, || 4);
            r.sent(2, || 3);
            assert_eq!(r.tokens(), 3);
        }
        drop(RequestStamps::new(Some(log.clone()), None, origin + 7));
        log.flush().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let mut reader = tokenpipe_format::RecordReader::new(text.as_bytes(), "stamps");
        let header = reader.read_header().unwrap();
        assert_eq!(header.tool, "simserve");
        assert_eq!(header.monotonic_origin_ns, Some(origin));
        assert_eq!(header.params["ttft_ms"], 50.0);
        let mut stamps = vec![];
        while let Some(r) = reader.next_record().unwrap() {
            let Record::Stamp(s) = r else { panic!("{r:?}") };
            stamps.push(s);
        }
        assert_eq!(stamps.len(), 2);
        assert_eq!(stamps[0].request_id.as_deref(), Some("a\"b"));
        assert_eq!((stamps[0].received_ns, stamps[0].tokens), (5, 3));
        let (first, last) = (
            stamps[0].first_token_ns.unwrap(),
            stamps[0].last_token_ns.unwrap(),
        );
        assert!(first > 5 && last >= first, "{first} {last}");
        // The most late of the three tokens, and all three's lateness added up.
        assert_eq!(stamps[0].late_max_ns, Some(4));
        assert_eq!(stamps[0].late_sum_ns, Some(4 + 2 * 3));
        assert_eq!(
            stamps[1],
            Stamp {
                request_id: None,
                received_ns: 7,
                first_token_ns: None,
                last_token_ns: None,
                tokens: 0,
                late_max_ns: None,
                late_sum_ns: None,
            }
        );
    }
}
