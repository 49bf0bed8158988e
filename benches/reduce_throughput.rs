//! How fast `reduce` reads fire's events and how much memory it holds (not a timed test: it
//! prints figures for BENCHMARKS.md).
//!
//! Each case writes a synthetic fire stream to a temporary file, the line shapes exactly as
//! `fire` writes them: a header, then 64 requests in flight at a time, each a `sent`, 100
//! `token` events (every 16th `empty`) and a `done` with usage; one request in 500 fails with
//! an HTTP 500 before any token; a `client` record ends the run. The release `reduce` binary
//! reads the file with its output to /dev/null, and wall time, CPU time and peak resident memory
//! come from `wait4`. The figure of merit is events (lines) per CPU-second at 10 million
//! events; the 1 million case beside it shows that memory does not grow with the stream.
//!
//! Run with `cargo bench --bench reduce_throughput` (or `make bench`). Set
//! `REDUCE_BENCH=quick` for the 1 million case alone.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
#[path = "common/rusage.rs"]
mod rusage;

use rusage::wait_with_rusage;
use std::process::{Command, Stdio};
use std::time::Instant;

const IN_FLIGHT: u64 = 64;
const TOKENS_PER_REQUEST: u64 = 100;
const RUNS_PER_CASE: usize = 3;

/// The header fire writes, its parameters as a real run has them.
const HEADER: &str = r#"{"type":"header","format_major":1,"format_minor":4,"tool":"fire","tool_version":"0.1.0","run_id":"fire-bench0000000000","argv":["fire","--url","http://127.0.0.1:8000/v1"],"seed":null,"started_at":"2026-01-01T00:00:00.000000000Z","monotonic_origin_ns":18420744662266,"host":"bench","params":{"api":"completions","api_key":false,"connect_timeout_s":10.0,"first_token_timeout_s":null,"idle_timeout_s":60.0,"ignore_eos":true,"keep_going":false,"model":"tokenpipe-sim","record_text":false,"salt":"winter line government data","stream_usage":"on","timeout_s":1800.0,"transport":{"connections":null,"http":"1.1","preconnected":64,"trust":"system"},"url":"http://127.0.0.1:8000/v1"},"upstream":[{"format_major":1,"format_minor":4,"tool":"arrivals","tool_version":"0.1.0","run_id":"arrivals-bench000000000","argv":["arrivals","--concurrency","64"],"seed":0,"started_at":null,"monotonic_origin_ns":null,"params":{"concurrency":64,"exact_lengths":false,"input_tokens":1024,"mode":"closed","output_tokens":100}}]}"#;

/// One request slot of the closed loop: which request it runs and how far it has got.
struct Slot {
    id: u64,
    tokens_sent: u64,
    fails: bool,
}

/// A small deterministic generator for the jitter of the stamps (xorshift64*).
struct Jitter(u64);

impl Jitter {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % below
    }
}

/// Writes a stream of `requests` requests to `path`; returns the lines after the header.
fn write_stream(path: &Path, requests: u64) -> u64 {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).expect("temp file"));
    writeln!(out, "{HEADER}").expect("write");
    let mut lines = 0u64;
    let mut now = 1_000_000u64;
    let mut jitter = Jitter(0x9e37_79b9_7f4a_7c15);
    let mut next_id = 0u64;
    let mut slots: Vec<Slot> = Vec::new();
    let start = |out: &mut BufWriter<File>, now: u64, next_id: &mut u64| -> Slot {
        let id = *next_id;
        *next_id += 1;
        writeln!(
            out,
            r#"{{"type":"sent","id":{id},"scheduled_ns":{},"sent_ns":{now}}}"#,
            now.saturating_sub(20_000)
        )
        .expect("write");
        Slot {
            id,
            tokens_sent: 0,
            fails: id % 500 == 499,
        }
    };
    while slots.len() < IN_FLIGHT as usize && next_id < requests {
        slots.push(start(&mut out, now, &mut next_id));
        lines += 1;
        now += 10_000;
    }
    while !slots.is_empty() {
        let mut i = 0;
        while i < slots.len() {
            now += 150_000 + jitter.next(20_000);
            let slot = &mut slots[i];
            if slot.fails {
                writeln!(
                    out,
                    r#"{{"type":"done","id":{},"at_ns":{now},"ok":false,"status":500,"error_kind":"http","error":"HTTP 500: {{\"error\":\"simulated failure\"}}","prompt_tokens":null,"completion_tokens":null,"events":0,"finish_reason":null}}"#,
                    slot.id
                )
                .expect("write");
            } else if slot.tokens_sent < TOKENS_PER_REQUEST {
                slot.tokens_sent += 1;
                let empty = if slot.tokens_sent % 16 == 0 {
                    r#","empty":true"#
                } else {
                    ""
                };
                writeln!(
                    out,
                    r#"{{"type":"token","id":{},"at_ns":{now},"tokens":1{empty}}}"#,
                    slot.id
                )
                .expect("write");
                lines += 1;
                i += 1;
                continue;
            } else {
                writeln!(
                    out,
                    r#"{{"type":"done","id":{},"at_ns":{now},"ok":true,"status":200,"error_kind":null,"error":null,"prompt_tokens":1024,"completion_tokens":{TOKENS_PER_REQUEST},"events":{TOKENS_PER_REQUEST},"finish_reason":"length","first_event_ns":{}}}"#,
                    slot.id,
                    now.saturating_sub(TOKENS_PER_REQUEST * 150_000 * IN_FLIGHT)
                )
                .expect("write");
            }
            lines += 1;
            if next_id < requests {
                slots[i] = start(&mut out, now + 5_000, &mut next_id);
                lines += 1;
                i += 1;
            } else {
                slots.swap_remove(i);
            }
        }
    }
    writeln!(
        out,
        r#"{{"type":"client","wall_ns":{now},"cpu_user_ns":{},"cpu_system_ns":{},"cpu_busy":0.3,"threads":2,"max_rss_bytes":31457280,"sent":{requests},"ok":{},"failed":{},"cancelled":0,"not_sent":0,"peak_in_flight":{IN_FLIGHT},"dispatch_lag_p50_ns":51743,"dispatch_lag_p99_ns":241151,"dispatch_lag_max_ns":1241151,"dispatcher_behind_max_ns":0,"kept_up":true,"warnings":[]}}"#,
        now / 4,
        now / 20,
        requests - requests / 500,
        requests / 500
    )
    .expect("write");
    lines += 1;
    out.flush().expect("flush");
    lines
}

struct Figures {
    wall_s: f64,
    cpu_s: f64,
    max_rss_mib: f64,
}

fn reduce_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_reduce"))
}

fn run(stream: &Path, extra: &[&str]) -> Figures {
    let devnull = File::create("/dev/null").expect("/dev/null");
    let started = Instant::now();
    let child = Command::new(reduce_binary())
        .args(extra)
        .arg(stream)
        .stdout(Stdio::from(devnull))
        .spawn()
        .expect("reduce starts");
    let (status, ru) = wait_with_rusage(child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "reduce {extra:?} failed"
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Figures {
        wall_s: started.elapsed().as_secs_f64(),
        cpu_s: secs(ru.ru_utime) + secs(ru.ru_stime),
        max_rss_mib: ru.ru_maxrss as f64 / 1024.0,
    }
}

fn main() {
    let quick = std::env::var("REDUCE_BENCH").is_ok_and(|v| v == "quick");
    let sizes: &[u64] = if quick { &[10_000] } else { &[10_000, 100_000] };
    let variants: [(&str, &[&str]); 2] = [("summary", &[]), ("--per-request", &["--per-request"])];
    println!(
        "reduce: {IN_FLIGHT} requests in flight, {TOKENS_PER_REQUEST} token events each; \
         best of {RUNS_PER_CASE} runs, output to /dev/null"
    );
    println!(
        "| events | output | wall s | events/s | events per CPU-second | peak RSS MiB |\n\
         |---:|---|---:|---:|---:|---:|"
    );
    for &requests in sizes {
        let path = std::env::temp_dir().join(format!(
            "tokenpipe-{}-reduce-bench-{requests}.ndjson",
            std::process::id()
        ));
        let events = write_stream(&path, requests);
        for (name, extra) in &variants {
            let mut best: Option<Figures> = None;
            let mut peak_rss = 0.0f64;
            for _ in 0..RUNS_PER_CASE {
                let f = run(&path, extra);
                peak_rss = peak_rss.max(f.max_rss_mib);
                if best.as_ref().is_none_or(|b| f.cpu_s < b.cpu_s) {
                    best = Some(f);
                }
            }
            let Some(f) = best else { continue };
            println!(
                "| {events} | {name} | {:.2} | {:.0} | {:.0} | {:.1} |",
                f.wall_s,
                events as f64 / f.wall_s,
                events as f64 / f.cpu_s,
                peak_rss
            );
        }
        let _ = std::fs::remove_file(&path);
    }
}
