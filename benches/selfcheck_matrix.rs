//! Whether fire's self-check can be believed, both ways (not a timed test: it prints figures for
//! BENCHMARKS.md and docs/fire/self-check.md).
//!
//! **Normal runs.** One `simserve --ttft-ms 50 --itl-ms 10` pinned to one CPU, and `fire` free to
//! run on any (its schedule written to a file first), run a matrix of ordinary workloads: closed loops of 1 to 1,024 streams, open loops
//! of 1 to 1,000 req/s, batches of 1 to 64, `--rate inf`, runs against a server that fails 30 %
//! or all of its requests, and 3-request runs. On an idle machine any "did not keep up" is a
//! false alarm. Target: at most 1 % of the runs.
//!
//! **Starved runs.** The client genuinely short of CPU: fire pinned to one CPU shared with three
//! busy-loop processes, at a rate that needs more than its share; and `--threads 1` sending
//! 10,000 streams at one instant. Each trial must say that the client did not keep up.
//!
//! For each scenario it prints the runs judged, not judged and flagged, and the measurements
//! the rule's thresholds rest on: the slowest wave (requests due at one instant) over the run's
//! median TTFT, the worst lag of a request due alone, the largest `cpu_busy`, and the largest
//! mean wait for a CPU (`cpu_wait_per_slice_ns`).
//!
//! Run with `cargo bench --bench selfcheck_matrix` (about 5 minutes); `SELFCHECK_MATRIX=quick`
//! runs each scenario once (about a minute).

#[path = "../tests/it/common/pin.rs"]
mod pin;

use serde_json::Value;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// One workload of the matrix.
struct Scenario {
    name: &'static str,
    arrivals: Vec<String>,
    fire: Vec<&'static str>,
    /// Which server: the healthy one, or one failing a share of its requests.
    server: Server,
    trials: usize,
    /// Fire shares its CPU with three busy loops.
    hogs: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Server {
    Healthy,
    Fails30,
    FailsAll,
}

/// What one run of a scenario said and measured.
#[derive(Default)]
struct Outcome {
    kept_up: bool,
    not_judged: Option<String>,
    warning: Option<String>,
    /// The slowest wave's last send after its instant, over the median TTFT.
    wave_over_ttft: Option<f64>,
    /// The worst lag of a request due alone, ms.
    alone_lag_ms: Option<f64>,
    cpu_busy: f64,
    /// The network threads' mean wait for a CPU each time they were given one, ms.
    cpu_wait_ms: Option<f64>,
    wall_s: f64,
}

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

fn main() {
    let quick = std::env::var("SELFCHECK_MATRIX").as_deref() == Ok("quick");
    let t = |n: usize| if quick { 1 } else { n };
    let tokens = "--input-tokens 16 --output-tokens 4 --seed 1";
    let normal = |name, a: &str, trials, server| Scenario {
        name,
        arrivals: args(&format!("{a} {tokens}")),
        fire: vec![],
        server,
        trials,
        hogs: false,
    };
    use Server::*;
    let scenarios = vec![
        normal("closed 1", "--concurrency 1 -n 30", t(3), Healthy),
        normal("closed 8", "--concurrency 8 -n 160", t(5), Healthy),
        normal("closed 64", "--concurrency 64 -n 512", t(5), Healthy),
        normal("closed 256", "--concurrency 256 -n 1024", t(5), Healthy),
        normal("closed 1024", "--concurrency 1024 -n 2048", t(5), Healthy),
        normal("open 1 req/s", "--rate 1 -n 20", t(1), Healthy),
        normal("open 10 req/s", "--rate 10 -n 40", t(3), Healthy),
        normal("open 100 req/s", "--rate 100 -n 300", t(5), Healthy),
        normal("open 1000 req/s", "--rate 1000 -n 2000", t(5), Healthy),
        normal("batch 1 × 30", "--batch 1 --runs 30", t(3), Healthy),
        normal("batch 8 × 5", "--batch 8 --runs 5", t(5), Healthy),
        normal("batch 64 × 3", "--batch 64 --runs 3", t(5), Healthy),
        normal("rate inf 64", "--rate inf -n 64", t(5), Healthy),
        normal("rate inf 256", "--rate inf -n 256", t(5), Healthy),
        normal("rate inf 1000", "--rate inf -n 1000", t(5), Healthy),
        normal(
            "open 100 req/s, 30 % fail",
            "--rate 100 -n 200",
            t(5),
            Fails30,
        ),
        normal(
            "closed 16, 30 % fail",
            "--concurrency 16 -n 200",
            t(5),
            Fails30,
        ),
        normal(
            "open 100 req/s, all fail",
            "--rate 100 -n 100",
            t(5),
            FailsAll,
        ),
        normal("3 requests, open 10 req/s", "--rate 10 -n 3", t(5), Healthy),
        normal(
            "3 requests, closed 3",
            "--concurrency 3 -n 3",
            t(5),
            Healthy,
        ),
        normal("3 requests, all fail", "--rate 100 -n 3", t(5), FailsAll),
    ];
    let starved = vec![
        Scenario {
            name: "open 5000 req/s, 3 hogs on fire's CPU",
            arrivals: args(&format!("--rate 5000 -n 5000 {tokens}")),
            fire: vec![],
            server: Healthy,
            trials: t(3),
            hogs: true,
        },
        Scenario {
            name: "closed 256, 3 hogs on fire's CPU",
            arrivals: args(&format!("--concurrency 256 -n 4096 {tokens}")),
            fire: vec![],
            server: Healthy,
            trials: t(3),
            hogs: true,
        },
        Scenario {
            name: "rate inf 10,000, --threads 1",
            arrivals: args(&format!("--rate inf -n 10000 {tokens}")),
            fire: vec!["--threads", "1"],
            server: Healthy,
            trials: t(3),
            hogs: false,
        },
    ];

    // 10,000 streams need as many sockets in fire and in simserve.
    let hard = pin::open_files_hard_limit();
    let starved: Vec<Scenario> = starved
        .into_iter()
        .filter(|s| {
            let fits = !s.name.contains("10,000") || hard >= 10_500;
            if !fits {
                println!("{}: skipped, the open-file hard limit is {hard}", s.name);
            }
            fits
        })
        .collect();
    let cpus = pin::allowed_cpus();
    let (client_cpu, server_cpu) = (cpus.first().copied(), cpus.get(1).copied());
    let dir = std::env::temp_dir().join(format!("tokenpipe-selfcheck-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut servers = HashMap::new();
    for (kind, faults) in [
        (Healthy, vec![]),
        (
            Fails30,
            vec!["--fault", "http=503:0.3", "--fault-seed", "7"],
        ),
        (FailsAll, vec!["--fault", "http=503:1"]),
    ] {
        servers.insert(kind, start_server(&faults, server_cpu));
    }

    let started = Instant::now();
    println!("Normal runs (simserve on CPU {server_cpu:?}, fire on any):\n");
    let (runs, alarms) = table(&scenarios, &servers, &dir, client_cpu);
    println!(
        "\nFalse alarms: {alarms} of {runs} normal runs ({:.1} %)\n",
        alarms as f64 * 100.0 / runs.max(1) as f64
    );
    println!("Starved runs:\n");
    let (runs, flagged) = table(&starved, &servers, &dir, client_cpu);
    println!(
        "\nStarved runs reported as not kept up: {flagged} of {runs}\n\nTotal {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for (_, (mut child, _)) in servers {
        let _ = child.kill();
        let _ = child.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs each scenario's trials and prints a row for each; returns the runs and how many of
/// them said the client did not keep up.
fn table(
    scenarios: &[Scenario],
    servers: &HashMap<Server, (Child, String)>,
    dir: &Path,
    cpu: Option<usize>,
) -> (usize, usize) {
    println!("| scenario | runs | judged | too short to judge | did not keep up | slowest wave / median TTFT | worst lag due alone (ms) | cpu_busy max | CPU wait per slice max (ms) | wall per run (s) | first warning or reason |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut runs, mut flagged) = (0, 0);
    for s in scenarios {
        let url = &servers[&s.server].1;
        // Only a starved client is pinned, with its busy loops.
        let pin = if s.hogs { cpu } else { None };
        let outcomes: Vec<Outcome> = (0..s.trials).map(|_| run(s, url, dir, pin)).collect();
        let n = outcomes.len();
        let not_judged = outcomes.iter().filter(|o| o.not_judged.is_some()).count();
        let bad = outcomes.iter().filter(|o| !o.kept_up).count();
        runs += n;
        flagged += bad;
        let max = |f: &dyn Fn(&Outcome) -> Option<f64>| {
            outcomes
                .iter()
                .filter_map(f)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        };
        let show =
            |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
        let note = outcomes
            .iter()
            .find_map(|o| o.warning.clone())
            .or_else(|| outcomes.iter().find_map(|o| o.not_judged.clone()))
            .map(|w| w.chars().take(90).collect::<String>())
            .unwrap_or_default();
        println!(
            "| {} | {n} | {} | {not_judged} | {bad} | {} | {} | {:.3} | {} | {:.1} | {note} |",
            s.name,
            n - not_judged,
            show(max(&|o| o.wave_over_ttft), 3),
            show(max(&|o| o.alone_lag_ms), 2),
            max(&|o| Some(o.cpu_busy)).unwrap_or(0.0),
            show(max(&|o| o.cpu_wait_ms), 3),
            outcomes.iter().map(|o| o.wall_s).sum::<f64>() / n.max(1) as f64,
        );
    }
    (runs, flagged)
}

/// Starts a simserve with `faults` on `cpu`; returns it and its URL.
fn start_server(faults: &[&str], cpu: Option<usize>) -> (Child, String) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_simserve"));
    server
        .args(["--port", "0", "--ttft-ms", "50", "--itl-ms", "10"])
        .args(faults)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    pin::pinned(&mut server, cpu);
    let mut server = server.spawn().expect("start simserve");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("simserve url");
    (server, url.trim().to_string())
}

/// One trial: the schedule written to a file first, then fire (on `cpu` with three busy loops,
/// when the scenario has them).
fn run(s: &Scenario, url: &str, dir: &Path, cpu: Option<usize>) -> Outcome {
    let schedule = dir.join("schedule.ndjson");
    let status = Command::new(env!("CARGO_BIN_EXE_arrivals"))
        .args(&s.arrivals)
        .stdout(File::create(&schedule).expect("schedule file"))
        .status()
        .expect("arrivals");
    assert!(status.success(), "arrivals {:?} failed", s.arrivals);
    let mut hogs = Vec::new();
    if s.hogs {
        for _ in 0..3 {
            let mut hog = Command::new("sh");
            hog.args(["-c", "while :; do :; done"]);
            pin::pinned(&mut hog, cpu);
            hogs.push(hog.spawn().expect("start a busy loop"));
        }
    }
    let started = Instant::now();
    let mut fire = Command::new(env!("CARGO_BIN_EXE_fire"));
    fire.args(["--url", url, "--model", "m", "--quiet"])
        .args(&s.fire)
        .stdin(File::open(&schedule).expect("schedule"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    pin::pinned(&mut fire, cpu);
    let out = fire
        .spawn()
        .expect("fire")
        .wait_with_output()
        .expect("fire");
    let wall_s = started.elapsed().as_secs_f64();
    for mut hog in hogs {
        let _ = hog.kill();
        let _ = hog.wait();
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A run whose requests all failed exits 1 where it ends early: its records still count.
    let recs: Vec<Value> = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("fire's output is NDJSON"))
        .collect();
    let Some(client) = recs.iter().rev().find(|r| r["type"] == "client") else {
        panic!("{}: no client record ({stderr})", s.name);
    };
    let concurrency = s
        .arrivals
        .iter()
        .position(|a| a == "--concurrency")
        .and_then(|i| s.arrivals.get(i + 1)?.parse().ok());
    let (wave_over_ttft, alone_lag_ms) = measure(&recs, concurrency);
    Outcome {
        kept_up: client["kept_up"] == true,
        not_judged: client["not_judged"].as_str().map(String::from),
        warning: client["warnings"][0].as_str().map(String::from),
        wave_over_ttft,
        alone_lag_ms,
        cpu_busy: client["cpu_busy"].as_f64().unwrap_or(0.0),
        cpu_wait_ms: client["cpu_wait_per_slice_ns"].as_f64().map(|ns| ns / 1e6),
        wall_s,
    }
}

/// From the events: the slowest wave's last send after its instant over the median TTFT, and
/// the worst lag of a request due alone (ms). A wave is the requests scheduled at one instant,
/// and in a closed loop of `concurrency` streams its first `concurrency` requests, due when the
/// first of them left.
fn measure(recs: &[Value], concurrency: Option<usize>) -> (Option<f64>, Option<f64>) {
    let ns = |r: &Value, k: &str| r[k].as_u64();
    let sent: Vec<(u64, u64, u64)> = recs
        .iter()
        .filter(|r| r["type"] == "sent")
        .filter_map(|r| Some((ns(r, "id")?, ns(r, "scheduled_ns")?, ns(r, "sent_ns")?)))
        .collect();
    let sent_at: HashMap<u64, u64> = sent.iter().map(|(id, _, at)| (*id, *at)).collect();
    let mut ttft: Vec<u64> = recs
        .iter()
        .filter(|r| r["type"] == "done")
        .filter_map(|r| Some(ns(r, "first_event_ns")?.saturating_sub(*sent_at.get(&ns(r, "id")?)?)))
        .collect();
    ttft.sort_unstable();
    let median = ttft.get(ttft.len() / 2).copied();
    // Due instant → (requests, worst lag).
    let mut instants: HashMap<u64, (u64, u64)> = HashMap::new();
    let first_wave = concurrency.unwrap_or(0).min(sent.len());
    let wave_at = sent.iter().take(first_wave).map(|s| s.1).min();
    for (k, (_, scheduled, at)) in sent.iter().enumerate() {
        let due = match wave_at {
            Some(w) if k < first_wave && first_wave > 1 => w,
            _ => *scheduled,
        };
        let e = instants.entry(due).or_insert((0, 0));
        e.0 += 1;
        e.1 = e.1.max(at.saturating_sub(due));
    }
    let wave = instants
        .values()
        .filter(|(n, _)| *n > 1)
        .map(|(_, worst)| *worst)
        .max();
    let alone = instants
        .values()
        .filter(|(n, _)| *n == 1)
        .map(|(_, worst)| *worst)
        .max();
    (
        wave.zip(median).map(|(w, m)| w as f64 / m.max(1) as f64),
        alone.map(|a| a as f64 / 1e6),
    )
}
