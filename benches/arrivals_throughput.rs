//! How fast `arrivals` writes a schedule and how much memory it holds (not a timed test: it
//! prints figures for BENCHMARKS.md).
//!
//! Each scenario runs the release `arrivals` binary with its output to /dev/null, a pipe
//! reader that never waits, and reads wall time, CPU time and peak resident memory from
//! `wait4`. The figure of merit is schedule lines per second at 1M requests with 1,000-token
//! prompts; the peak memory shows the schedule is streamed, not held.
//!
//! Run with `cargo bench --bench arrivals_throughput` (or `make bench`). Set
//! `ARRIVALS_BENCH=quick` for 100,000 requests instead of 1,000,000.

use std::fs::File;
#[path = "common/rusage.rs"]
mod rusage;

use rusage::wait_with_rusage;
use std::process::{Command, Stdio};
use std::time::Instant;

struct Figures {
    wall_s: f64,
    user_s: f64,
    sys_s: f64,
    max_rss_mib: f64,
}

fn run(args: &[String]) -> Figures {
    let devnull = File::create("/dev/null").expect("/dev/null");
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(args)
        .stdout(Stdio::from(devnull))
        .spawn()
        .expect("arrivals starts");
    let (status, ru) = wait_with_rusage(child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "arrivals {args:?} failed"
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Figures {
        wall_s: started.elapsed().as_secs_f64(),
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        max_rss_mib: ru.ru_maxrss as f64 / 1024.0,
    }
}

fn main() {
    let quick = std::env::var("ARRIVALS_BENCH").is_ok_and(|v| v == "quick");
    let n: u64 = if quick { 100_000 } else { 1_000_000 };
    let scenarios: &[(&str, &[&str])] = &[
        (
            "open loop, Poisson, 1000-word prompts",
            &["--rate", "1000", "--input-tokens", "1000"],
        ),
        (
            "open loop, 1000 token ids",
            &[
                "--rate",
                "1000",
                "--input-tokens",
                "1000",
                "--token-ids",
                "1000..30000",
            ],
        ),
        (
            "closed loop, lognormal lengths around 1000",
            &[
                "--concurrency",
                "64",
                "--input-tokens",
                "1000",
                "--input-range",
                "0.5",
                "--input-dist",
                "lognormal",
            ],
        ),
        (
            "shared prefix 900 + 100 words",
            &[
                "--rate",
                "1000",
                "--prefix-tokens",
                "900",
                "--prefix-groups",
                "16",
                "--input-tokens",
                "100",
            ],
        ),
        (
            "shard 0/4 of the first scenario",
            &["--rate", "1000", "--input-tokens", "1000", "--shard", "0/4"],
        ),
    ];
    println!("arrivals: {n} requests per scenario, output to /dev/null");
    println!(
        "| scenario | lines/s | MB/s | wall s | CPU s (user+sys) | peak RSS MiB |\n|---|---:|---:|---:|---:|---:|"
    );
    for (name, extra) in scenarios {
        let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        args.extend(["-n".to_string(), n.to_string()]);
        // Bytes written, measured once with the output to a counting pipe would cost as much
        // as the run; estimate from a small run instead (the lines are all alike).
        let bytes_per_line = bytes_per_line(&args);
        let f = run(&args);
        let lines = if name.starts_with("shard") { n / 4 } else { n } as f64;
        println!(
            "| {name} | {:.0} | {:.0} | {:.2} | {:.2} | {:.1} |",
            lines / f.wall_s,
            lines * bytes_per_line / f.wall_s / 1e6,
            f.wall_s,
            f.user_s + f.sys_s,
            f.max_rss_mib
        );
    }
}

/// Mean bytes per request line, from a 1,000-request run of the same scenario.
fn bytes_per_line(args: &[String]) -> f64 {
    let mut small: Vec<String> = args.to_vec();
    if let Some(i) = small.iter().position(|a| a == "-n") {
        small[i + 1] = "1000".into();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(&small)
        .output()
        .expect("arrivals runs");
    let lines = out.stdout.iter().filter(|&&b| b == b'\n').count().max(1);
    out.stdout.len() as f64 / lines as f64
}
