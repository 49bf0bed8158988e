//! How much error and cost `fire` itself adds, measured against the simulated server's own
//! send stamps and against a floor client (not a timed test: it prints figures for
//! BENCHMARKS.md).
//!
//! For each scenario it writes a schedule with `arrivals`, then runs two clients on it, each
//! against its own fresh `simserve --stamps` (TTFT 50 ms, ITL 10 ms, chat API): `fire` (release
//! build, default settings) with its output to a file, and the floor (`overhead/floor.rs`: the
//! same hyper client and runtime, counting bytes and nothing else), which is this binary
//! re-executed with `--floor`. Both are separate processes, so CPU time and peak memory come
//! from `wait4` for both. Request by request, each client's first-token instant is compared
//! with the instant the server handed that token to its socket (both `CLOCK_MONOTONIC`), and
//! token by token its gaps with the server's (the ITL error, `overhead/itl.rs`).
//!
//! Run with `cargo bench --bench fire_overhead` (or `make bench`; about ten minutes). Set
//! `FIRE_BENCH=quick` for a short smoke run, `FIRE_BENCH_ONLY=TEXT` to run only the
//! scenarios whose name contains TEXT, and `FIRE_BENCH_REPS=N` to run each scenario's two
//! clients N times, alternated (fire, floor, fire, floor, …), to see the spread; each
//! scenario then ends with a line of the pooled ratio of their CPU per token and its 95 %
//! interval.
//!
//! With two or more CPUs, the client runs on the first and the server on the last
//! (`FIRE_BENCH_PIN=0` leaves both to the scheduler): pinned apart, every run meets the same
//! placement, and one pair's CPU ratio spreads by a few percent instead of ten or more.

mod overhead;

use overhead::measure::{self, Client, Figures};
use std::io::Write;
use std::path::Path;

struct Scenario {
    name: String,
    arrivals: Vec<String>,
    /// Streams of a closed loop (its first wave); 0 for an open loop.
    streams: usize,
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some("--floor") {
        if let Err(e) = overhead::floor::main(&argv[2..]) {
            eprintln!("floor: {e}");
            std::process::exit(1);
        }
        return;
    }
    overhead::itl::check_formula();
    let quick = std::env::var("FIRE_BENCH").as_deref() == Ok("quick");
    let only = std::env::var("FIRE_BENCH_ONLY").unwrap_or_default();
    let reps: usize = match std::env::var("FIRE_BENCH_REPS") {
        Ok(n) => n.parse().expect("FIRE_BENCH_REPS: a number of repetitions"),
        Err(_) => 1,
    };
    let dir = std::env::temp_dir().join(format!("tokenpipe-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let rounds = if quick { 1 } else { 4 };
    let mut scenarios = vec![
        closed(32, 128, rounds * 4),
        closed(100, 128, rounds * 2),
        closed(256, 128, rounds),
        closed(1024, 128, rounds),
        open(1000, if quick { 1 } else { 5 }, 16),
        closed(10_000, if quick { 16 } else { 128 }, 1),
    ];
    scenarios.retain(|s| s.name.contains(&only));
    println!("| scenario | client | requests | tokens | CPU s per 1M tokens (user + sys s) | client TTFT p50 (ms) | TTFT error p50 / p99 (ms) | ITL error p50 / p99 (ms) | ITL p99 client / server (ms) | dispatch lag p50 / p99 / max (ms) | first-wave lag p99 (ms) | peak RSS (MiB) | RSS per stream (KiB) | wall (s) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for s in &scenarios {
        let schedule = dir.join("schedule.ndjson");
        write_schedule(s, &schedule);
        let mut cpu = [Vec::new(), Vec::new()];
        for _ in 0..reps.max(1) {
            for (i, client) in [Client::Fire, Client::Floor].into_iter().enumerate() {
                let f = measure::run(client, &schedule, &dir);
                print_row(s, client, &f);
                cpu[i].push(f.cpu_per_m_tokens());
            }
        }
        print_ratio(s, &cpu[0], &cpu[1]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The pooled ratio of fire's CPU per token to the floor's over a scenario's pairs (sums of
/// s per 1M tokens), its 95 % interval, and the median of the pairs' own ratios. One pair
/// spreads by ±15 % on a shared box, so a target a few percent away is judged by the
/// interval, not by one set's figure.
fn print_ratio(s: &Scenario, fire: &[f64], floor: &[f64]) {
    let pooled = fire.iter().sum::<f64>() / floor.iter().sum::<f64>();
    let (lo, hi) = pooled_interval(fire, floor);
    let mut pairs: Vec<f64> = fire.iter().zip(floor).map(|(a, b)| a / b).collect();
    pairs.sort_by(f64::total_cmp);
    println!(
        "| {} | fire / floor CPU per token over {} pairs: **{pooled:.3}×** pooled (95 % interval {lo:.3}–{hi:.3}), median pair {:.3}× (pairs {:.3}–{:.3}) |",
        s.name,
        pairs.len(),
        pairs[pairs.len() / 2],
        pairs[0],
        pairs[pairs.len() - 1],
    );
}

/// The 95 % bootstrap interval of the pooled ratio: the pairs drawn again with replacement
/// 10,000 times (a fixed seed, so a set's line is repeatable), the 2.5th and 97.5th
/// percentiles of the ratios of their sums. A pair is drawn whole, since fire and the floor
/// of one pair met the box in the same state.
fn pooled_interval(fire: &[f64], floor: &[f64]) -> (f64, f64) {
    const DRAWS: usize = 10_000;
    let n = fire.len().min(floor.len());
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    // splitmix64: enough for drawing indices, and no dependency for it.
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut ratios: Vec<f64> = (0..DRAWS)
        .map(|_| {
            let (mut a, mut b) = (0.0, 0.0);
            for _ in 0..n {
                let i = (next() % n as u64) as usize;
                a += fire[i];
                b += floor[i];
            }
            a / b
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    (ratios[DRAWS / 40], ratios[DRAWS - 1 - DRAWS / 40])
}

fn print_row(s: &Scenario, client: Client, f: &Figures) {
    let per_stream = if s.streams > 0 {
        format!("{:.1}", f.max_rss_kib as f64 / s.streams as f64)
    } else {
        "–".into()
    };
    let first_wave = if s.streams > 0 {
        format!("{:.3}", f.first_wave_lag_p99(s.streams))
    } else {
        "–".into()
    };
    println!(
        "| {} | {} | {}{} | {} | {:.2} ({:.2} + {:.2}) | {:.3} | {:.3} / {:.3} | {:.3} / {:.3}{} | {:.3} / {:.3} | {:.3} / {:.3} / {:.3} | {} | {:.1} | {} | {:.1} |",
        s.name,
        if client == Client::Fire { "fire" } else { "floor" },
        f.requests,
        if f.failed > 0 { format!(" ({} failed)", f.failed) } else { String::new() },
        f.tokens,
        f.cpu_per_m_tokens(),
        f.user_s,
        f.sys_s,
        Figures::p(&f.ttft_ms, 0.5),
        Figures::p(&f.ttft_err_ms, 0.5),
        Figures::p(&f.ttft_err_ms, 0.99),
        Figures::p(&f.itl.error_ms, 0.5),
        Figures::p(&f.itl.error_ms, 0.99),
        if f.itl.unjoined > 0 {
            format!(" ({} unjoined)", f.itl.unjoined)
        } else {
            String::new()
        },
        Figures::p(&f.itl.client_ms, 0.99),
        Figures::p(&f.itl.server_ms, 0.99),
        Figures::p(&f.lag_ms, 0.5),
        Figures::p(&f.lag_ms, 0.99),
        Figures::p(&f.lag_ms, 1.0),
        first_wave,
        f.max_rss_kib as f64 / 1024.0,
        per_stream,
        f.wall_s,
    );
    let _ = std::io::stdout().flush();
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// The arrivals arguments of a scenario: `pacing` (`--concurrency N` or `--rate R`), `n`
/// prompts of 32 tokens, answers of `tokens` tokens.
fn schedule_args(pacing: &str, value: usize, n: usize, tokens: u64) -> Vec<String> {
    args(&[
        pacing,
        &value.to_string(),
        "--num-prompts",
        &n.to_string(),
        "--input-tokens",
        "32",
        "--output-tokens",
        &tokens.to_string(),
        "--seed",
        "1",
    ])
}

fn closed(streams: usize, tokens: u64, rounds: usize) -> Scenario {
    Scenario {
        name: format!("closed loop, {streams} streams, {tokens} tokens"),
        arrivals: schedule_args("--concurrency", streams, streams * rounds, tokens),
        streams,
    }
}

fn open(rate: usize, seconds: usize, tokens: u64) -> Scenario {
    Scenario {
        name: format!("open loop, {rate} req/s Poisson, {tokens} tokens"),
        arrivals: schedule_args("--rate", rate, rate * seconds, tokens),
        streams: 0,
    }
}

fn write_schedule(s: &Scenario, path: &Path) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(&s.arrivals)
        .output()
        .expect("arrivals");
    assert!(out.status.success(), "arrivals {:?} failed", s.arrivals);
    std::fs::write(path, out.stdout).expect("write schedule");
}
