//! One plan on several hosts, the starting half (docs/fire/start.md, docs/arrivals.md
//! "Shards"): `arrivals --shard auto` with each launcher's environment and with none, `fire
//! --host`, and `fire --start-at` with three fires given one instant, stopped while waiting,
//! and given an instant already past.

use crate::common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Every variable `--shard auto` or `--start-at +DUR` reads, removed from a command so that the
/// test's own environment (a CI job under Slurm) cannot leak in.
const LAUNCHER_VARS: &[&str] = &[
    "TOKENPIPE_SHARD",
    "TOKENPIPE_SHARDS",
    "PARALLEL_SEQ",
    "JOB_COMPLETION_INDEX",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "TOKENPIPE_START_BASE",
    "SLURM_JOB_START_TIME",
];

/// `tool args` with exactly the launcher variables `env` set; its output.
fn with_env(tool: &str, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> std::process::Output {
    let mut c = Command::new(bin(tool));
    c.args(args);
    for v in LAUNCHER_VARS {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("stdin writer");
    out
}

const PLAN: &[&str] = &[
    "--rate",
    "40",
    "-n",
    "9",
    "--input-tokens",
    "8",
    "--output-tokens",
    "3",
    "--seed",
    "5",
];

fn shard_of(env: &[(&str, &str)]) -> (serde_json::Value, String) {
    let mut args = PLAN.to_vec();
    args.extend(["--shard", "auto"]);
    let out = with_env("arrivals", &args, env, b"");
    assert_ok(&out, "arrivals --shard auto");
    let recs = records(&out.stdout);
    (
        recs[0]["shard"].clone(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A launcher's environment, the index and count it gives, and the variables named.
type Case = (
    &'static [(&'static str, &'static str)],
    u64,
    u64,
    &'static str,
);

#[test]
fn shard_auto_reads_each_launchers_environment() {
    let cases: &[Case] = &[
        (
            &[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "3")],
            2,
            3,
            "SLURM_PROCID/SLURM_NTASKS",
        ),
        (
            &[("JOB_COMPLETION_INDEX", "1"), ("TOKENPIPE_SHARDS", "4")],
            1,
            4,
            "JOB_COMPLETION_INDEX/TOKENPIPE_SHARDS",
        ),
        (
            &[("PARALLEL_SEQ", "1"), ("TOKENPIPE_SHARDS", "2")],
            0,
            2,
            "PARALLEL_SEQ/TOKENPIPE_SHARDS",
        ),
        (&[("TOKENPIPE_SHARD", "1/3")], 1, 3, "TOKENPIPE_SHARD"),
    ];
    for (env, index, count, from) in cases {
        let (shard, stderr) = shard_of(env);
        assert_eq!(
            shard,
            serde_json::json!({"index": index, "count": count}),
            "{env:?}"
        );
        assert!(
            stderr.contains(&format!("{index}/{count} from {from}")),
            "{stderr}"
        );
    }
    // The part auto gives is the part I/N gives, byte for byte past the header's argv.
    let mut explicit = PLAN.to_vec();
    explicit.extend(["--shard", "2/3"]);
    let a = with_env("arrivals", &explicit, &[], b"");
    let mut auto = PLAN.to_vec();
    auto.extend(["--shard", "auto"]);
    let b = with_env(
        "arrivals",
        &auto,
        &[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "3")],
        b"",
    );
    let body = |o: &std::process::Output| records(&o.stdout)[1..].to_vec();
    assert_eq!(body(&a), body(&b));
    // None set, or an index without its count: exit 2 naming the variables.
    for (env, names) in [
        (
            &[][..],
            &[
                "SLURM_PROCID",
                "JOB_COMPLETION_INDEX",
                "PARALLEL_SEQ",
                "TOKENPIPE_SHARD",
            ][..],
        ),
        (
            &[("JOB_COMPLETION_INDEX", "0")][..],
            &["JOB_COMPLETION_INDEX", "TOKENPIPE_SHARDS"][..],
        ),
        (
            &[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "3")][..],
            &["SLURM_PROCID", "3/3"][..],
        ),
    ] {
        let out = with_env("arrivals", &auto, env, b"");
        assert_eq!(out.status.code(), Some(2), "{env:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        for n in names {
            assert!(stderr.contains(n), "{n} in {stderr}");
        }
        assert!(out.stdout.is_empty());
    }
}

/// A schedule of part `i` of 3.
fn part(i: u32) -> Vec<u8> {
    let shard = format!("{i}/3");
    let mut args = PLAN.to_vec();
    args.extend(["--shard", shard.as_str()]);
    let out = run(&cmd("arrivals", &args), b"");
    assert_ok(&out, "arrivals");
    out.stdout
}

fn wall_ns(rfc3339: &str) -> i128 {
    tokenpipe_format::clock::parse_rfc3339_ns(rfc3339).expect("an RFC 3339 time")
}

fn rfc3339_in(ahead: Duration) -> String {
    let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + ahead;
    tokenpipe_format::clock::rfc3339_nanos(at.as_secs() as i64, at.subsec_nanos())
}

#[test]
fn three_fires_given_one_instant_send_their_first_requests_together() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let at = rfc3339_in(Duration::from_millis(1500));
    let outs: Vec<std::process::Output> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let (url, at) = (server.url.clone(), at.clone());
                s.spawn(move || {
                    let host = format!("h{i}");
                    with_env(
                        "fire",
                        &["--url", &url, "--start-at", &at, "--host", &host],
                        &[],
                        &part(i),
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("fire"))
            .collect()
    });
    let mut first_sends = Vec::new();
    for (i, out) in outs.iter().enumerate() {
        assert_ok(out, "fire --start-at");
        let recs = records(&out.stdout);
        let h = &recs[0];
        assert_eq!(h["host"], format!("h{i}"));
        assert_eq!(wall_ns(h["start_at"].as_str().unwrap()), wall_ns(&at));
        let late = h["start_late_ms"].as_f64().expect("start_late_ms");
        assert!((0.0..50.0).contains(&late), "late {late} ms");
        assert_eq!(h["schedule_requests"], 3);
        let started = wall_ns(h["started_at"].as_str().unwrap());
        let sent = of_type(&recs, "sent")[0];
        // Where the first request left on the wall clock, less its own offset: the instant the
        // part's schedule counted from.
        let lag = sent["sent_ns"].as_i64().unwrap() - sent["scheduled_ns"].as_i64().unwrap();
        first_sends.push(started + i128::from(lag));
    }
    let spread_ms =
        (first_sends.iter().max().unwrap() - first_sends.iter().min().unwrap()) as f64 / 1e6;
    eprintln!("start spread of 3 fires with --start-at: {spread_ms:.3} ms");
    assert!(spread_ms <= 50.0, "spread {spread_ms} ms");
}

#[test]
fn a_start_is_stopped_while_waiting_or_taken_at_once_when_past() {
    let server = Server::start(&[]);
    let at = rfc3339_in(Duration::from_secs(60));
    let mut child = Command::new(bin("fire"))
        .args(["--url", &server.url, "--start-at", &at])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fire");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&part(0)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(800));
    let t = Instant::now();
    send_signal(child.id() as i32, libc::SIGINT);
    let (out, _) = read_until_exit(child, Duration::from_secs(20));
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "the wait did not end"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recs = records(&out.stdout);
    assert_eq!(recs[0]["type"], "header");
    assert_eq!(of_type(&recs, "sent").len(), 0);
    assert_eq!(of_type(&recs, "client").len(), 1, "{recs:?}");
    // An instant 2 s past: a warning, and the run goes on.
    let past = tokenpipe_format::clock::rfc3339_nanos(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
            - 2,
        0,
    );
    let out = with_env(
        "fire",
        &["--url", &server.url, "--start-at", &past],
        &[],
        &part(1),
    );
    assert_ok(&out, "fire past");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: --start-at") && stderr.contains("starting now"),
        "{stderr}"
    );
    let h = &records(&out.stdout)[0];
    assert!(h["start_late_ms"].as_f64().unwrap() >= 1000.0, "{h}");
    // Further past than a minute, or +DUR without a reference: exit 2 before any request.
    let old = tokenpipe_format::clock::rfc3339_nanos(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
            - 120,
        0,
    );
    let out = with_env(
        "fire",
        &["--url", &server.url, "--start-at", &old],
        &[],
        &part(1),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("passed"));
    let out = with_env(
        "fire",
        &["--url", &server.url, "--start-at", "+1s"],
        &[],
        &part(1),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TOKENPIPE_START_BASE") && stderr.contains("SLURM_JOB_START_TIME"),
        "{stderr}"
    );
    // With the reference set, +DUR counts from it.
    let base = format!(
        "{}",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    );
    let out = with_env(
        "fire",
        &["--url", &server.url, "--start-at", "+300ms"],
        &[("TOKENPIPE_START_BASE", &base)],
        &part(2),
    );
    assert_ok(&out, "fire +300ms");
    let h = &records(&out.stdout)[0];
    let want = (base.parse::<f64>().unwrap() * 1e9) as i128 + 300_000_000;
    let got = wall_ns(h["start_at"].as_str().unwrap());
    assert!((got - want).abs() < 1_000_000, "{got} vs {want}");
}
