//! Whether `simserve --profile spark-gpt-oss-120b` reproduces seed 001's published llama-benchy
//! sweep (gpt-oss-120b on one DGX Spark) when measured with tokenpipe's own pipe, the way
//! llama-benchy measures: for each concurrency C,
//!
//! ```text
//! arrivals --batch C --runs R --input-tokens 1024 --output-tokens 128 | fire --url URL
//!   | reduce --llama-benchy
//! ```
//!
//! and the summary's `llama_benchy.tg_tps` and `pp_tps` (per batch above concurrency one, per
//! request at one) beside the published decode and prefill t/s. It prints one row per
//! concurrency with the ratio and the summary's `client_kept_up`, and exits 1 if any figure is
//! more than 10 % off.
//!
//! One server (one tokio worker) serves the whole sweep; batches follow each other on an idle
//! engine. Run with `cargo bench --bench simserve_calibration` (the full sweep: C = 1 … 64,
//! 3 runs each, about 4 minutes, most of it the C = 64 batches' simulated time). Set
//! `SIMSERVE_CALIBRATION=quick` for C = 1, 4 and 16 with 1 run each (about 20 seconds).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// The largest relative difference accepted.
const TOLERANCE: f64 = 0.10;

/// A `simserve` child, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server() -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simserve"))
        .args(["--port", "0", "--workers", "1"])
        .args(["--profile", "spark-gpt-oss-120b"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start simserve");
    let stdout = child.stdout.take().expect("simserve stdout");
    let mut url = String::new();
    BufReader::new(stdout)
        .read_line(&mut url)
        .expect("read simserve's URL");
    (Server(child), url.trim().to_owned())
}

/// Runs `arrivals | fire | reduce --llama-benchy` for one concurrency; the summary record.
fn measure(url: &str, c: u64, runs: u64) -> serde_json::Value {
    let (c, runs) = (c.to_string(), runs.to_string());
    let arrivals = Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(["--batch", &c, "--runs", &runs])
        .args(["--input-tokens", "1024", "--output-tokens", "128"])
        .output()
        .expect("run arrivals");
    assert!(arrivals.status.success(), "arrivals failed");
    let mut fire = Command::new(env!("CARGO_BIN_EXE_fire"))
        .args(["--url", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start fire");
    let mut stdin = fire.stdin.take().expect("fire stdin");
    let schedule = arrivals.stdout;
    let writer = std::thread::spawn(move || stdin.write_all(&schedule));
    let fired = fire.wait_with_output().expect("run fire");
    let _ = writer.join();
    assert!(fired.status.success(), "fire failed");
    let mut reduce = Command::new(env!("CARGO_BIN_EXE_reduce"))
        .arg("--llama-benchy")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start reduce");
    let mut stdin = reduce.stdin.take().expect("reduce stdin");
    let events = fired.stdout;
    let writer = std::thread::spawn(move || stdin.write_all(&events));
    let reduced = reduce.wait_with_output().expect("run reduce");
    let _ = writer.join();
    assert!(reduced.status.success(), "reduce failed");
    String::from_utf8_lossy(&reduced.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| r["type"] == "summary")
        .expect("a summary record")
}

fn main() {
    let quick = std::env::var("SIMSERVE_CALIBRATION").is_ok_and(|v| v == "quick");
    let (wanted, runs): (&[u64], u64) = if quick {
        (&[1, 4, 16], 1)
    } else {
        (&[1, 2, 4, 8, 16, 32, 64], 3)
    };
    let (_server, url) = start_server();
    let started = Instant::now();
    println!("simserve --profile spark-gpt-oss-120b against seed 001 ({runs} run(s) each)");
    println!(
        "{:>3}  {:>9} {:>9} {:>6}  {:>9} {:>9} {:>6}  {:>9}",
        "c", "tg t/s", "seed 001", "ratio", "pp t/s", "seed 001", "ratio", "kept up"
    );
    let mut failures = Vec::new();
    for &(c, tg_want, pp_want) in tokenpipe_sim::engine::profile::SPARK_PUBLISHED
        .iter()
        .filter(|r| wanted.contains(&r.0))
    {
        let summary = measure(&url, c, runs);
        let figure = |name: &str| summary["llama_benchy"][name]["mean"].as_f64();
        let tg = figure("tg_tps").unwrap_or(f64::NAN);
        let pp = figure("pp_tps").unwrap_or(f64::NAN);
        let kept_up = summary["client_kept_up"].as_bool().unwrap_or(true);
        let (tg_ratio, pp_ratio) = (tg / tg_want, pp_want.map_or(f64::NAN, |w| pp / w));
        println!(
            "{c:>3}  {tg:>9.2} {tg_want:>9.2} {tg_ratio:>6.3}  {pp:>9.0} {:>9} {:>6}  {kept_up:>9}",
            pp_want.map_or("-".to_owned(), |w| format!("{w:.0}")),
            pp_want.map_or("-".to_owned(), |_| format!("{pp_ratio:.3}")),
        );
        let off = |ratio: f64| !((1.0 - TOLERANCE)..=(1.0 + TOLERANCE)).contains(&ratio);
        if off(tg_ratio) {
            failures.push(format!("c={c}: decode {tg:.2} t/s, published {tg_want}"));
        }
        if pp_want.is_some() && off(pp_ratio) {
            failures.push(format!(
                "c={c}: prefill {pp:.0} t/s, published {}",
                pp_want.unwrap_or(f64::NAN)
            ));
        }
        if !kept_up {
            // A dispatch lag of a millisecond or two (a batch of 1,024-word bodies on two busy
            // cores) is noise beside steps of hundreds of ms: reported, not failed.
            eprintln!("simserve_calibration: c={c}: fire did not keep up (see its warning)");
        }
    }
    println!("took {:.1} s", started.elapsed().as_secs_f64());
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("simserve_calibration: {f}");
        }
        std::process::exit(1);
    }
}
