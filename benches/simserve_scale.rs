//! What simserve itself costs and how well it keeps its timetable as streams grow (not a timed
//! test: it prints figures for BENCHMARKS.md).
//!
//! Each scenario starts a fresh `simserve --workers 1 --stamps` pinned to one CPU (TTFT 50 ms,
//! fixed timetable) and a `fire` closed loop of N streams pinned to another, all N sent at
//! once. From `wait4` it takes the server's CPU time, and from the server's own stamps every
//! request's lateness: `late_sum_ns / tokens` (the mean over its tokens), `late_max_ns`, and
//! its last token's lateness, each against the instant its timetable named.
//!
//! Run with `cargo bench --bench simserve_scale` (about a minute). `SIMSERVE_SCALE=quick` runs
//! shorter streams.

#[path = "../tests/it/common/pin.rs"]
mod pin;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use tokenpipe_format::{Record, RecordReader, RecordType};

const TTFT_MS: u64 = 50;

struct Scenario {
    streams: u64,
    itl_ms: u64,
    tokens: u64,
}

/// What one scenario measured.
struct Figures {
    tokens: u64,
    user_s: f64,
    sys_s: f64,
    wall_s: f64,
    /// Per request, ms: its tokens' mean lateness, its worst, its last token's.
    mean_late: Vec<f64>,
    max_late: Vec<f64>,
    first_late: Vec<f64>,
    last_late: Vec<f64>,
}

fn main() {
    let quick = std::env::var("SIMSERVE_SCALE").as_deref() == Ok("quick");
    let tokens = if quick { 50 } else { 200 };
    let scenarios = [
        (100, 10),
        (1_000, 10),
        (2_000, 10),
        (5_000, 10),
        (10_000, 10),
        (10_000, 50),
        (10_000, 100),
    ]
    .map(|(streams, itl_ms)| Scenario {
        streams,
        itl_ms,
        tokens,
    });
    let hard = pin::open_files_hard_limit();
    let cpus = pin::allowed_cpus();
    let (server_cpu, client_cpu) = (cpus.first().copied(), cpus.get(1).copied());
    let dir = std::env::temp_dir().join(format!("tokenpipe-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!("| streams | ITL (ms) | frames/s asked | tokens | server CPU s (user + sys) | CPU µs per token | first token late p50 / p99 (ms) | token late, mean per request p50 / p99 (ms) | worst token late p99 / max (ms) | last token late p50 / p99 (ms) | wall (s) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for s in &scenarios {
        if hard < s.streams + 500 {
            println!(
                "| {} | {} | skipped: the open-file hard limit is {hard} |",
                s.streams, s.itl_ms
            );
            continue;
        }
        let f = run(s, &dir, server_cpu, client_cpu);
        let p = |v: &[f64], q: f64| percentile(v, q);
        let cpu = f.user_s + f.sys_s;
        println!(
            "| {} | {} | {} | {} | {:.2} ({:.2} + {:.2}) | {:.2} | {:.1} / {:.1} | {:.2} / {:.1} | {:.1} / {:.1} | {:.1} / {:.1} | {:.1} |",
            s.streams,
            s.itl_ms,
            s.streams * 1000 / s.itl_ms,
            f.tokens,
            cpu,
            f.user_s,
            f.sys_s,
            cpu / f.tokens.max(1) as f64 * 1e6,
            p(&f.first_late, 0.5),
            p(&f.first_late, 0.99),
            p(&f.mean_late, 0.5),
            p(&f.mean_late, 0.99),
            p(&f.max_late, 0.99),
            p(&f.max_late, 1.0),
            p(&f.last_late, 0.5),
            p(&f.last_late, 0.99),
            f.wall_s,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `q` quantile of `v` (nearest rank).
fn percentile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn run(s: &Scenario, dir: &Path, server_cpu: Option<usize>, client_cpu: Option<usize>) -> Figures {
    let stamps = dir.join("stamps.ndjson");
    let schedule = dir.join("schedule.ndjson");
    let n = s.streams.to_string();
    let status = Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(["--concurrency", &n, "-n", &n, "--input-tokens", "8"])
        .args(["--output-tokens", &s.tokens.to_string()])
        .stdout(File::create(&schedule).expect("schedule file"))
        .status()
        .expect("arrivals");
    assert!(status.success(), "arrivals failed");

    let mut server = Command::new(env!("CARGO_BIN_EXE_simserve"));
    server
        .args(["--port", "0", "--workers", "1"])
        .args(["--ttft-ms", &TTFT_MS.to_string()])
        .args(["--itl-ms", &s.itl_ms.to_string()])
        .arg("--stamps")
        .arg(&stamps)
        .stdout(Stdio::piped());
    pin::pinned(&mut server, server_cpu);
    let mut server = server.spawn().expect("start simserve");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("simserve url");

    let started = Instant::now();
    let mut fire = Command::new(env!("CARGO_BIN_EXE_fire"));
    fire.args(["--url", url.trim(), "--quiet"])
        .arg(&schedule)
        .stdout(Stdio::null());
    pin::pinned(&mut fire, client_cpu);
    let status = fire.status().expect("fire");
    assert!(status.success(), "fire failed");
    let wall_s = started.elapsed().as_secs_f64();
    // The server's CPU time: what the children waited for add up to, before and after it.
    let before = children_cpu();
    // SAFETY: signalling our own child, so that it flushes its stamps.
    unsafe {
        libc::kill(server.id() as i32, libc::SIGTERM);
    }
    server.wait().expect("simserve exit");
    let after = children_cpu();
    let mut f = Figures {
        tokens: 0,
        user_s: after.0 - before.0,
        sys_s: after.1 - before.1,
        wall_s,
        mean_late: Vec::new(),
        max_late: Vec::new(),
        first_late: Vec::new(),
        last_late: Vec::new(),
    };
    read_stamps(&stamps, s, &mut f);
    f
}

/// User and system CPU seconds of every child waited for so far.
fn children_cpu() -> (f64, f64) {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

fn read_stamps(path: &Path, s: &Scenario, f: &mut Figures) {
    const MS: f64 = 1e6;
    let mut input = RecordReader::new(BufReader::new(File::open(path).expect("stamps")), "stamps")
        .keep(&[RecordType::Stamp]);
    input.read_header().expect("simserve header");
    while let Some(rec) = input.next_record().expect("stamp record") {
        let Record::Stamp(stamp) = rec else { continue };
        let (Some(first), Some(last), Some(max), Some(sum)) = (
            stamp.first_token_ns,
            stamp.last_token_ns,
            stamp.late_max_ns,
            stamp.late_sum_ns,
        ) else {
            continue;
        };
        f.tokens += stamp.tokens;
        let first_due = stamp.received_ns + TTFT_MS * 1_000_000;
        let last_due = first_due + stamp.tokens.saturating_sub(1) * s.itl_ms * 1_000_000;
        f.first_late
            .push(first.saturating_sub(first_due) as f64 / MS);
        f.last_late.push(last.saturating_sub(last_due) as f64 / MS);
        f.max_late.push(max as f64 / MS);
        f.mean_late
            .push(sum as f64 / stamp.tokens.max(1) as f64 / MS);
    }
}
