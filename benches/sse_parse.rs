//! What reading a stream costs `fire` per event, on one core: `SseSplitter` + `api::read_chunk`
//! over the chunks real servers send, cut into frames the way a socket delivers them; the same
//! read as `fire` does it, with what the stream's earlier chunks showed
//! (`Dialect::read_stream_chunk`: a repeated start skipped, or only the answer string read); and
//! the cost of a `token` record: formatting it (`encode_token`) into a plain buffer, staging it
//! into the `Sink` as the network thread does (`stage_token`), and the writers' formatting of the
//! staged slots (`expand`).
//!
//! Run with `cargo bench --bench sse_parse` (or `make bench`); `FIRE_BENCH=quick` runs each case
//! for a tenth of the time. Prints a markdown table for BENCHMARKS.md. Figures are wall time of
//! one thread: run on a quiet machine for numbers to keep.

use std::hint::black_box;
use std::time::{Duration, Instant};
use tokenpipe_fire::api::scan::scan;
use tokenpipe_fire::api::{read_chunk, reference, Api, ChunkPrefix};
use tokenpipe_fire::sink::staged::{expand, stage_token};
use tokenpipe_fire::sink::{Output, Sink};
use tokenpipe_fire::sse_split::SseSplitter;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::writer::encode_token;
use tokenpipe_format::Token;

/// Words the streamed tokens carry, so that chunks differ in length as real ones do.
const WORDS: &[&str] = &[
    " the",
    " model",
    ",",
    " of",
    " inference",
    "\\n",
    " é",
    " servers",
];

/// One streamed chunk of each server shape, with `{}` where the token text goes.
const SHAPES: &[(&str, &str)] = &[
    (
        "vLLM chat",
        r#"{"id":"chatcmpl-8f2a4c1e9b7d4e0f","object":"chat.completion.chunk","created":1732000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":"{}"},"logprobs":null,"finish_reason":null}]}"#,
    ),
    (
        "vLLM completions",
        r#"{"id":"cmpl-8f2a4c1e9b7d4e0f","object":"text_completion","created":1732000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":"{}","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
    ),
    (
        "vLLM chat, continuous usage",
        r#"{"id":"chatcmpl-8f2a4c1e9b7d4e0f","object":"chat.completion.chunk","created":1732000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":"{}"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":512,"total_tokens":530,"completion_tokens":18}}"#,
    ),
    (
        "llama.cpp chat",
        r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"{}"}}],"created":1732000000,"id":"chatcmpl-Zq3kX9","model":"gpt-3.5-turbo","system_fingerprint":"b4500-1a2b3c4d","object":"chat.completion.chunk"}"#,
    ),
];

/// How the socket hands the body over.
#[derive(Clone, Copy)]
enum Cut {
    /// One event per read, as at a steady inter-token gap.
    PerEvent,
    /// Bunched reads of this many bytes, cutting events anywhere (a busy client catching up).
    Bytes(usize),
}

/// A body of `n` events of `shape`, cut into frames.
fn frames(shape: &str, n: usize, cut: Cut) -> Vec<Vec<u8>> {
    let events: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("data: {}\n\n", shape.replace("{}", WORDS[i % WORDS.len()])).into_bytes())
        .collect();
    match cut {
        Cut::PerEvent => events,
        Cut::Bytes(size) => events.concat().chunks(size).map(<[u8]>::to_vec).collect(),
    }
}

/// What each pass over the frames does with an event.
#[derive(Clone, Copy, PartialEq)]
enum Work {
    Split,
    /// Only the allocation-free scanner (`None` counted as a miss, nothing falls back).
    SplitScan,
    /// Only the serde reference parser, which `read_chunk` falls back to.
    SplitReference,
    SplitRead,
    SplitReadEncode,
    /// `read_stream_chunk` with one `ChunkPrefix` for the body, as a stream's events are read.
    SplitReadStream,
}

/// Runs `work` over `frames` for about `budget`; returns (bytes, events, seconds) and the
/// events the scanner left to serde.
fn run(frames: &[Vec<u8>], work: Work, budget: Duration) -> ((u64, u64, f64), u64) {
    let mut out = Vec::with_capacity(128 << 10);
    let (mut bytes, mut events, mut misses) = (0u64, 0u64, 0u64);
    let started = Instant::now();
    let mut at_ns = 0u64;
    let dialect = Api::Chat.dialect();
    while started.elapsed() < budget {
        let mut sse = SseSplitter::new();
        let mut prefix = ChunkPrefix::default();
        for frame in frames {
            at_ns += 1;
            let fed = sse.feed(frame, |data| {
                events += 1;
                match work {
                    Work::Split => {
                        black_box(data);
                        return true;
                    }
                    Work::SplitScan => {
                        misses += u64::from(black_box(scan(data)).is_none());
                        return true;
                    }
                    Work::SplitReference => {
                        black_box(reference::parse(data).is_ok());
                        return true;
                    }
                    Work::SplitReadStream => {
                        let info = dialect.read_stream_chunk(data, &mut prefix);
                        return black_box(info).is_ok();
                    }
                    _ => {}
                }
                let Ok(info) = read_chunk(data) else {
                    return false;
                };
                if work == Work::SplitReadEncode && info.has_content {
                    encode_token(
                        &mut out,
                        &Token {
                            id: 12_345,
                            at_ns,
                            tokens: 1,
                            empty: false,
                            reasoning: false,
                        },
                    );
                }
                black_box(info);
                true
            });
            assert!(fed.is_ok(), "a benchmark body did not split");
            bytes += frame.len() as u64;
        }
        if out.len() > 64 << 10 {
            out.clear();
        }
    }
    ((bytes, events, started.elapsed().as_secs_f64()), misses)
}

/// ns per `token` record: into a plain buffer, and into the `Sink` (lock, encode, unlock, and
/// its hand-over to a writer thread every 64 KiB).
fn token_cost(budget: Duration) -> (f64, f64, f64) {
    let token = |i: u64| Token {
        id: i & 0xffff,
        at_ns: 1_000_000_000 + i * 10_000,
        tokens: 1,
        empty: false,
        reasoning: false,
    };
    let mut buf = Vec::with_capacity(128 << 10);
    let (mut n, started) = (0u64, Instant::now());
    while started.elapsed() < budget {
        for _ in 0..1024 {
            encode_token(&mut buf, &token(n));
            n += 1;
        }
        if buf.len() > 64 << 10 {
            buf.clear();
        }
    }
    let plain = started.elapsed().as_secs_f64() * 1e9 / n as f64;
    let sink = Sink::start(
        vec![Output {
            name: "null".into(),
            out: Box::new(std::io::sink()),
            on_error: None,
        }],
        256 << 20,
        RunClock::start(),
    )
    .expect("sink");
    let (mut n, started) = (0u64, Instant::now());
    while started.elapsed() < budget {
        for _ in 0..1024 {
            stage_token(sink.lock().buf(), &token(n));
            n += 1;
        }
    }
    let locked = started.elapsed().as_secs_f64() * 1e9 / n as f64;
    sink.finish().expect("sink finish");
    let mut staged = Vec::with_capacity(64 << 10);
    for n in 0..3000 {
        stage_token(&mut staged, &token(n));
    }
    let mut text = Vec::with_capacity(256 << 10);
    let (mut n, started) = (0u64, Instant::now());
    while started.elapsed() < budget {
        text.clear();
        expand(black_box(&staged), &mut text);
        n += 3000;
    }
    let expanded = started.elapsed().as_secs_f64() * 1e9 / n as f64;
    (plain, locked, expanded)
}

fn main() {
    let quick = std::env::var("FIRE_BENCH").as_deref() == Ok("quick");
    let budget = Duration::from_millis(if quick { 100 } else { 1000 });
    println!("| chunks | reads | work | MB/s | events/s | ns/event |");
    println!("|---|---|---|---:|---:|---:|");
    for (name, shape) in SHAPES {
        for (cut, cut_name) in [
            (Cut::PerEvent, "one event per read"),
            (Cut::Bytes(1460), "1,460-byte reads"),
        ] {
            let body = frames(shape, 512, cut);
            for (work, work_name) in [
                (Work::Split, "split"),
                (Work::SplitScan, "split + scan"),
                (Work::SplitReference, "split + serde reference"),
                (Work::SplitRead, "split + read_chunk"),
                (Work::SplitReadEncode, "split + read_chunk + encode_token"),
                (Work::SplitReadStream, "split + read_stream_chunk"),
            ] {
                let ((bytes, events, secs), misses) = run(&body, work, budget);
                let missed = if misses > 0 {
                    format!(
                        " ({:.0}% left to serde)",
                        misses as f64 * 100.0 / events as f64
                    )
                } else {
                    String::new()
                };
                println!(
                    "| {name} | {cut_name} | {work_name}{missed} | {:.0} | {:.2} M | {:.0} |",
                    bytes as f64 / secs / 1e6,
                    events as f64 / secs / 1e6,
                    secs * 1e9 / events as f64,
                );
            }
        }
    }
    let (plain, locked, expanded) = token_cost(budget);
    println!();
    println!("| token record | ns/token |");
    println!("|---|---:|");
    println!("| encode_token into a Vec | {plain:.1} |");
    println!(
        "| stage_token under Sink::lock (one lock per token; the network thread) | {locked:.1} |"
    );
    println!("| expand, a buffer of 3,000 slots (the writer thread) | {expanded:.1} |");
}
