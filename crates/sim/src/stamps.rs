//! The server's own record of when it sent things (`--stamps FILE`): a stream of the tokenpipe
//! format, a `header` for the server's run, then one `stamp` record per finished generation
//! request, its times in nanoseconds from the header's `monotonic_origin_ns` (docs/format.md).
//!
//! This file is the reference the benchmark compares `fire`'s receive stamps with, so a token is
//! stamped at the moment its frame is handed to hyper, not when it was due. A request's line is
//! written when its state is dropped: at the end of its answer, or when the client went away
//! (then `tokens` says how far it got). Lines go through one buffered writer behind a mutex and
//! are flushed on shutdown, never per token.
//!
//! With `--token-stamps FILE` every token's hand-over instant is kept too, so that a client's
//! gaps between tokens can be compared with the server's: one JSON line per request,
//! `{"request_id":…,"token_ns":[…]}`, on the same origin as the stamps file, written beside its
//! `stamp` line.

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
    /// Every token's instant per request (`--token-stamps`), if asked for.
    tokens: Option<Mutex<BufWriter<File>>>,
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
            tokens: None,
            failed: AtomicBool::new(false),
            origin_ns: clock.origin_ns(),
        })
    }

    /// Also writes every token's hand-over instant to `path` (created, truncated), one JSON line
    /// per request, so that the gaps between tokens can be checked, not only the first token.
    pub fn with_token_file(mut self, path: &Path) -> io::Result<Self> {
        let file = BufWriter::with_capacity(256 * 1024, File::create(path)?);
        self.tokens = Some(Mutex::new(file));
        Ok(self)
    }

    /// Whether every token's instant is kept (`--token-stamps`).
    fn keeps_tokens(&self) -> bool {
        self.tokens.is_some()
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

    /// Appends the line of a request's token instants (`CLOCK_MONOTONIC` readings, written as
    /// nanoseconds from the run start) to the token file, if there is one.
    fn record_tokens(&self, request_id: Option<&str>, token_ns: &[u64]) {
        let Some(tokens) = &self.tokens else { return };
        let mut line = Vec::with_capacity(32 + token_ns.len() * 12);
        line.extend_from_slice(b"{\"request_id\":");
        if serde_json::to_writer(&mut line, &request_id).is_err() {
            return;
        }
        line.extend_from_slice(b",\"token_ns\":[");
        for (i, t) in token_ns.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let _ = write!(line, "{sep}{}", t.saturating_sub(self.origin_ns));
        }
        line.extend_from_slice(b"]}\n");
        let result = match tokens.lock() {
            Ok(mut out) => out.write_all(&line),
            Err(poisoned) => poisoned.into_inner().write_all(&line),
        };
        if let Err(e) = result {
            if !self.failed.swap(true, Ordering::Relaxed) {
                eprintln!("simserve: cannot write token stamps: {e}");
            }
        }
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
        let flush = |out: &Mutex<BufWriter<File>>| match out.lock() {
            Ok(mut out) => out.flush(),
            Err(poisoned) => poisoned.into_inner().flush(),
        };
        flush(&self.out)?;
        match &self.tokens {
            Some(tokens) => flush(tokens),
            None => Ok(()),
        }
    }
}

/// One request's stamps while it is being answered; its line is written when it is dropped.
/// Without a stamps file it reads no clock at all.
pub struct RequestStamps {
    log: Option<Arc<StampLog>>,
    stamp: Stamp,
    /// Every token's instant, when the log keeps them (`--token-stamps`); empty otherwise.
    token_ns: Vec<u64>,
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
            token_ns: Vec::new(),
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
        if let Some(log) = &self.log {
            let now = monotonic_ns();
            if log.keeps_tokens() {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                self.token_ns.extend(std::iter::repeat_n(now, n));
            }
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
            log.record_tokens(self.stamp.request_id.as_deref(), &self.token_ns);
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

    #[test]
    fn token_stamps_give_every_token_its_instant_on_the_stamps_clock() {
        let dir = std::env::temp_dir();
        let pid = std::process::id();
        let path = dir.join(format!("simserve-stamps-t-{pid}.ndjson"));
        let tokens_path = dir.join(format!("simserve-token-stamps-{pid}.jsonl"));
        let log = StampLog::create(&path, BTreeMap::new())
            .unwrap()
            .with_token_file(&tokens_path)
            .unwrap();
        let log = Arc::new(log);
        let origin = log.origin_ns();
        {
            let mut r = RequestStamps::new(Some(log.clone()), Some("a\"b".into()), origin + 5);
            r.sent(1, || 0);
            r.sent(2, || 0);
        }
        drop(RequestStamps::new(Some(log.clone()), None, origin + 7));
        log.flush().unwrap();
        let text = std::fs::read_to_string(&tokens_path).unwrap();
        let stamps = std::fs::read_to_string(&path).unwrap();
        let _ = (
            std::fs::remove_file(&path),
            std::fs::remove_file(&tokens_path),
        );
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["request_id"], "a\"b");
        let t: Vec<u64> = lines[0]["token_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        // Three tokens: the two of one hand-over share its instant.
        assert_eq!(t.len(), 3);
        assert!(t[0] > 5 && t[1] >= t[0] && t[2] == t[1], "{t:?}");
        let stamp: serde_json::Value =
            serde_json::from_str(stamps.lines().nth(1).unwrap()).unwrap();
        assert_eq!(stamp["first_token_ns"].as_u64(), Some(t[0]));
        assert_eq!(stamp["last_token_ns"].as_u64(), Some(t[2]));
        assert_eq!(
            lines[1],
            serde_json::json!({"request_id": null, "token_ns": []})
        );
    }
}
