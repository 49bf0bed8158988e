//! How much error and cost `fire` itself adds, measured against the simulated server's own
//! send stamps (not a timed test: it prints figures for BENCHMARKS.md).
//!
//! For each scenario it starts `simserve --stamps`, runs `fire` on a schedule from `arrivals`
//! with stdout to a file, and compares, request by request, the instant `fire` read the first
//! token with the instant the server handed it to the socket. Both are `CLOCK_MONOTONIC`
//! (fire's header carries its origin). CPU time and peak memory of `fire` come from `wait4`.
//!
//! Run with `cargo bench --bench fire_overhead` (or `make bench`). Set
//! `FIRE_BENCH=quick` for a short smoke run.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use tokenpipe_format::{Record, RecordReader, RecordType};

struct Scenario {
    name: &'static str,
    arrivals: Vec<String>,
    ttft_ms: f64,
    itl_ms: f64,
}

struct Figures {
    requests: usize,
    failed: usize,
    tokens: u64,
    ttft_err_p50_ms: f64,
    ttft_err_p99_ms: f64,
    itl_p50_ms: f64,
    itl_p99_ms: f64,
    lag_p50_ms: f64,
    lag_p99_ms: f64,
    lag_max_ms: f64,
    user_s: f64,
    sys_s: f64,
    cpu_s_per_m_tokens: f64,
    max_rss_mib: f64,
    wall_s: f64,
}

fn main() {
    let quick = std::env::var("FIRE_BENCH").as_deref() == Ok("quick");
    let dir = std::env::temp_dir().join(format!("tokenpipe-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (rounds, lag_n) = if quick { (1, 500) } else { (3, 2500) };
    let scenarios = vec![
        closed(100, 128, rounds * 2),
        closed(1000, 128, rounds),
        Scenario {
            name: "open loop, 500 req/s Poisson, 16 tokens",
            arrivals: args(&[
                "--rate",
                "500",
                "--num-prompts",
                &lag_n.to_string(),
                "--input-tokens",
                "32",
                "--output-tokens",
                "16",
                "--seed",
                "1",
            ]),
            ttft_ms: 50.0,
            itl_ms: 10.0,
        },
    ];
    println!("| scenario | requests | tokens | TTFT error p50 / p99 (ms) | ITL p50 / p99 (ms) | dispatch lag p50 / p99 / max (ms) | fire CPU user + sys (s) | CPU s per 1M tokens | peak RSS (MiB) | wall (s) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for s in &scenarios {
        let f = measure(s, &dir);
        println!(
            "| {} | {}{} | {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} / {:.3} | {:.2} + {:.2} | {:.2} | {:.1} | {:.1} |",
            s.name,
            f.requests,
            if f.failed > 0 { format!(" ({} failed)", f.failed) } else { String::new() },
            f.tokens,
            f.ttft_err_p50_ms,
            f.ttft_err_p99_ms,
            f.itl_p50_ms,
            f.itl_p99_ms,
            f.lag_p50_ms,
            f.lag_p99_ms,
            f.lag_max_ms,
            f.user_s,
            f.sys_s,
            f.cpu_s_per_m_tokens,
            f.max_rss_mib,
            f.wall_s,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn closed(streams: usize, tokens: u64, rounds: usize) -> Scenario {
    Scenario {
        name: Box::leak(
            format!("closed loop, {streams} streams, {tokens} tokens").into_boxed_str(),
        ),
        arrivals: args(&[
            "--concurrency",
            &streams.to_string(),
            "--num-prompts",
            &(streams * rounds).to_string(),
            "--input-tokens",
            "32",
            "--output-tokens",
            &tokens.to_string(),
            "--seed",
            "1",
        ]),
        ttft_ms: 50.0,
        itl_ms: 10.0,
    }
}

fn start_server(s: &Scenario, stamps: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simserve"))
        .args([
            "--port",
            "0",
            "--ttft-ms",
            &s.ttft_ms.to_string(),
            "--itl-ms",
            &s.itl_ms.to_string(),
        ])
        .arg("--stamps")
        .arg(stamps)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start simserve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("simserve url");
    (child, line.trim().to_string())
}

fn measure(s: &Scenario, dir: &Path) -> Figures {
    let schedule = dir.join("schedule.ndjson");
    let events = dir.join("events.ndjson");
    let stamps = dir.join("stamps.ndjson");
    let out = Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(&s.arrivals)
        .output()
        .expect("arrivals");
    std::fs::write(&schedule, out.stdout).expect("write schedule");

    let (mut server, url) = start_server(s, &stamps);
    let started = std::time::Instant::now();
    let fire = Command::new(env!("CARGO_BIN_EXE_fire"))
        .args(["--url", &url])
        .arg(&schedule)
        .stdout(File::create(&events).expect("events file"))
        .spawn()
        .expect("start fire");
    let (user_s, sys_s, max_rss_kib) = wait_with_rusage(fire);
    let wall_s = started.elapsed().as_secs_f64();
    // SAFETY: signalling our own child so it flushes its stamps.
    unsafe {
        libc::kill(server.id() as i32, libc::SIGTERM);
    }
    let _ = server.wait();
    analyse(&events, &stamps, (user_s, sys_s), max_rss_kib, wall_s)
}

/// Waits for the child and returns its user and system CPU seconds and peak RSS in KiB.
fn wait_with_rusage(child: Child) -> (f64, f64, i64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter; wait4 on our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4 failed");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime), ru.ru_maxrss)
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

fn analyse(
    events: &PathBuf,
    stamps: &PathBuf,
    (user_s, sys_s): (f64, f64),
    max_rss_kib: i64,
    wall_s: f64,
) -> Figures {
    let cpu_s = user_s + sys_s;
    // Server: request id (last 16 hex digits of x-request-id) -> first token send stamp, on
    // CLOCK_MONOTONIC (the stamps are from the server header's origin).
    let mut server_first: HashMap<u64, u64> = HashMap::new();
    let mut stamps_in = RecordReader::new(
        BufReader::new(File::open(stamps).expect("stamps")),
        "stamps",
    )
    .keep(&[RecordType::Stamp]);
    let server_origin = stamps_in
        .read_header()
        .expect("simserve header")
        .monotonic_origin_ns
        .expect("server origin");
    while let Some(rec) = stamps_in.next_record().expect("stamp record") {
        let Record::Stamp(stamp) = rec else { continue };
        let (Some(rid), Some(first)) = (stamp.request_id, stamp.first_token_ns) else {
            continue;
        };
        let hex: String = rid.chars().filter(|c| *c != '-').collect();
        if let Ok(id) = u64::from_str_radix(&hex[hex.len().saturating_sub(16)..], 16) {
            server_first.insert(id, server_origin + first);
        }
    }
    let mut reader = RecordReader::new(
        BufReader::new(File::open(events).expect("events")),
        "events",
    );
    let header = reader.read_header().expect("fire header");
    let origin = header.monotonic_origin_ns.expect("origin");
    let mut first_seen: HashMap<u64, u64> = HashMap::new();
    let mut last_seen: HashMap<u64, u64> = HashMap::new();
    let (mut itl, mut lag, mut ttft_err) = (vec![], vec![], vec![]);
    let (mut requests, mut failed, mut tokens) = (0, 0, 0u64);
    while let Some(rec) = reader.next_record().expect("record") {
        match rec {
            Record::Sent(s) => {
                if let Some(sch) = s.scheduled_ns {
                    lag.push(s.sent_ns.saturating_sub(sch) as f64 / 1e6);
                }
            }
            Record::Token(t) => {
                tokens += u64::from(t.tokens);
                first_seen.entry(t.id).or_insert(t.at_ns);
                if let Some(prev) = last_seen.insert(t.id, t.at_ns) {
                    itl.push((t.at_ns - prev) as f64 / 1e6);
                }
            }
            Record::Done(d) => {
                requests += 1;
                if !d.ok {
                    failed += 1;
                }
            }
            _ => {}
        }
    }
    for (id, at) in &first_seen {
        if let Some(server) = server_first.get(id) {
            ttft_err.push((origin + at) as f64 / 1e6 - *server as f64 / 1e6);
        }
    }
    Figures {
        requests,
        failed,
        tokens,
        ttft_err_p50_ms: percentile(&mut ttft_err, 0.5),
        ttft_err_p99_ms: percentile(&mut ttft_err, 0.99),
        itl_p50_ms: percentile(&mut itl, 0.5),
        itl_p99_ms: percentile(&mut itl, 0.99),
        lag_p50_ms: percentile(&mut lag, 0.5),
        lag_p99_ms: percentile(&mut lag, 0.99),
        lag_max_ms: percentile(&mut lag, 1.0),
        user_s,
        sys_s,
        cpu_s_per_m_tokens: cpu_s / (tokens.max(1) as f64 / 1e6),
        max_rss_mib: max_rss_kib as f64 / 1024.0,
        wall_s,
    }
}
