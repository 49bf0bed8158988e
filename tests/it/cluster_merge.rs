//! One plan on several hosts, the merging half (docs/metrics.md, "Shards"): three `fire`
//! processes as three hosts (`--host`) against one simserve, merged by reduce into the run
//! the unsharded plan gives; a part killed with SIGKILL, an empty part and a header-only part
//! counted, never aborting the merge; a part passed through `jq -c .` still of its plan.

use crate::common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The plan: 60 requests at 40/s (1.5 s), 8 → 5 tokens.
const PLAN: &[&str] = &[
    "--rate",
    "40",
    "-n",
    "60",
    "--input-tokens",
    "8",
    "--output-tokens",
    "5",
    "--seed",
    "9",
];

/// arrivals PLAN [--shard i/3].
fn schedule(shard: Option<u32>) -> Vec<u8> {
    let mut args = PLAN.to_vec();
    let spec = shard.map(|i| format!("{i}/3"));
    if let Some(s) = &spec {
        args.extend(["--shard", s.as_str()]);
    }
    let out = run(&cmd("arrivals", &args), b"");
    assert_ok(&out, "arrivals");
    out.stdout
}

/// fire for part `i` as host `h{i}`, started (not waited for) at `at` when given.
fn spawn_part(url: &str, i: u32, at: Option<&str>) -> std::process::Child {
    let host = format!("h{i}");
    let mut args = vec!["--url", url, "--host", host.as_str(), "--quiet"];
    if let Some(at) = at {
        args.extend(["--start-at", at]);
    }
    let mut child = Command::new(bin("fire"))
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fire");
    let mut stdin = child.stdin.take().expect("stdin");
    let sched = schedule(Some(i));
    std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&sched);
    });
    child
}

fn soon() -> String {
    let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + Duration::from_millis(800);
    tokenpipe_format::clock::rfc3339_nanos(at.as_secs() as i64, at.subsec_nanos())
}

/// Writes `bytes` to a fresh file named `name`; its path.
fn file(name: &str, bytes: &[u8]) -> String {
    let path = temp_path(name);
    std::fs::write(&path, bytes).expect("write a part");
    path.to_string_lossy().into_owned()
}

/// Waits for each part's fire, which must succeed, and keeps its output in `{prefix}{i}.ndjson`.
fn finish_parts(parts: Vec<std::process::Child>, prefix: &str) -> Vec<String> {
    parts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let out = c.wait_with_output().expect("fire");
            assert_ok(&out, "fire part");
            file(&format!("{prefix}{i}.ndjson"), &out.stdout)
        })
        .collect()
}

/// reduce FILES: its one summary and its stderr.
fn merge(files: &[String]) -> (serde_json::Value, String) {
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = run(&cmd("reduce", &args), b"");
    assert_ok(&out, "reduce");
    let recs = records(&out.stdout);
    let s = of_type(&recs, "summary");
    assert_eq!(s.len(), 1, "{recs:?}");
    (
        s[0].clone(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn three_hosts_merge_into_the_unsharded_run() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let at = soon();
    let parts: Vec<_> = (0..3)
        .map(|i| spawn_part(&server.url, i, Some(&at)))
        .collect();
    let files = finish_parts(parts, "merge-part");
    let whole = run(
        &cmd("fire", &["--url", &server.url, "--quiet"]),
        &schedule(None),
    );
    assert_ok(&whole, "fire whole");
    let whole = run(&cmd("reduce", &[]), &whole.stdout);
    let whole = of_type(&records(&whole.stdout), "summary")[0].clone();
    let (merged, _) = merge(&files);
    for k in ["requests_ok", "input_tokens", "output_tokens"] {
        assert_eq!(merged[k], whole[k], "{k}");
    }
    assert_eq!(merged["requests_ok"], 60);
    let (a, b) = (
        merged["ttft_p50_ms"].as_f64().unwrap(),
        whole["ttft_p50_ms"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 5.0, "ttft p50 merged {a} whole {b}");
    let parts = merged["parts"].as_array().expect("parts");
    let hosts: Vec<&str> = parts.iter().map(|p| p["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["h0", "h1", "h2"]);
    assert!(parts
        .iter()
        .all(|p| p["status"] == "ok" && p["requests_planned"] == 20));
    assert_eq!(merged["requests_lost"], 0);
    let spread = merged["start_spread_ms"].as_f64().unwrap();
    eprintln!("merged start spread with --start-at: {spread:.3} ms");
    assert!(spread <= 50.0, "spread {spread}");
    assert_eq!(
        merged["verdict"]["parts"]["ok"], true,
        "{}",
        merged["verdict"]
    );
    // Every host here is this machine: each offset to the server's clock holds 0, and so
    // does the skew within its error.
    for p in parts {
        let o = &p["server_clock_offset_ms"];
        let (lo, hi) = (o[0].as_f64().unwrap(), o[1].as_f64().unwrap());
        assert!(lo <= 0.0 && 0.0 <= hi, "{p}");
    }
    let (skew, error) = (
        merged["clock_skew_ms"].as_f64().unwrap(),
        merged["clock_skew_error_ms"].as_f64().unwrap(),
    );
    eprintln!("clock skew of 3 parts on one host: {skew:.1} ± {error:.1} ms");
    assert!(skew <= error, "{skew} ± {error}");
    // A host whose clock is 2 s slow sees the server 2 s ahead: not comparable, by its Date.
    let slow: Vec<u8> = records(&std::fs::read(&files[1]).unwrap())
        .into_iter()
        .flat_map(|mut r| {
            if r["type"] == "client" {
                for b in r["server_clock_offset_ms"].as_array_mut().unwrap() {
                    *b = serde_json::json!(b.as_f64().unwrap() + 2000.0);
                }
            }
            let mut line = serde_json::to_vec(&r).unwrap();
            line.push(b'\n');
            line
        })
        .collect();
    let slow = file("merge-part1-slow.ndjson", &slow);
    let (skewed, _) = merge(&[files[0].clone(), slow, files[2].clone()]);
    let reason = skewed["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("host clocks ") && reason.contains("by the server's Date"),
        "{reason}"
    );
    let (skew, error) = (
        skewed["clock_skew_ms"].as_f64().unwrap(),
        skewed["clock_skew_error_ms"].as_f64().unwrap(),
    );
    assert!((skew - 2000.0).abs() <= error, "{skew} ± {error}");
    assert_eq!(skewed["verdict"]["comparable"], false);
    // Passed through `jq -c .`: 1.0 becomes 1, and the part is still of its plan.
    let jq = jq_like(&std::fs::read(&files[0]).unwrap());
    assert_ne!(jq, std::fs::read(&files[0]).unwrap(), "the plan holds 1.0");
    let through = file("merge-part0-jq.ndjson", &jq);
    let (again, _) = merge(&[through, files[1].clone(), files[2].clone()]);
    assert_eq!(again["requests_ok"], 60);
    assert!(again.get("shards_missing").is_none(), "{again}");
}

/// What `jq -c .` does to numbers: a whole number written with `.0` loses it.
fn jq_like(text: &[u8]) -> Vec<u8> {
    let s = String::from_utf8(text.to_vec()).unwrap();
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let whole_dot_zero = b[i] == b'.'
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b.get(i + 1) == Some(&b'0')
            && matches!(b.get(i + 2), Some(b',' | b'}' | b']'));
        if whole_dot_zero {
            i += 2;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out.into_bytes()
}

#[test]
fn a_killed_an_empty_and_a_header_only_part_are_counted_not_fatal() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "5"]);
    let at = soon();
    let mut parts: Vec<_> = (0..3)
        .map(|i| spawn_part(&server.url, i, Some(&at)))
        .collect();
    // Part 2's host dies 0.5 s into the run, a third of the way through its 20 requests.
    let killed = parts.pop().unwrap();
    std::thread::sleep(Duration::from_millis(1300));
    send_signal(killed.id() as i32, libc::SIGKILL);
    let (out, _) = read_until_exit(killed, Duration::from_secs(10));
    let killed = file("lost-part2.ndjson", &out.stdout);
    let files = finish_parts(parts, "lost-part");
    let empty = file("lost-empty.ndjson", b"");
    let (merged, stderr) = merge(&[files[0].clone(), files[1].clone(), killed.clone(), empty]);
    assert!(stderr.contains("is empty"), "{stderr}");
    assert!(stderr.contains("shard 2 (host h2) lost"), "{stderr}");
    let p2 = &merged["parts"][2];
    assert_eq!(p2["status"], "lost", "{p2}");
    let (planned, seen) = (
        p2["requests_planned"].as_u64().unwrap(),
        p2["requests_seen"].as_u64().unwrap(),
    );
    assert_eq!(planned, 20);
    assert!(seen < planned, "{p2}");
    assert_eq!(p2["requests_lost"].as_u64(), Some(planned - seen));
    assert_eq!(merged["requests_lost"].as_u64(), Some(planned - seen));
    let verdict = &merged["verdict"];
    assert_eq!(verdict["comparable"], false);
    let reason = verdict["reason"].as_str().unwrap();
    assert!(reason.contains("shard 2 (host h2) lost"), "{reason}");
    // table's view of the parts: a row per host, the lost one named.
    let reduced = run(&cmd("reduce", &[&files[0], &files[1], &killed]), b"");
    assert_ok(&reduced, "reduce");
    let by_host = run(
        &cmd("table", &["--by", "host", "--format", "csv"]),
        &reduced.stdout,
    );
    assert_ok(&by_host, "table --by host");
    let csv = String::from_utf8_lossy(&by_host.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("label,shard,host,status,"), "{csv}");
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[3].contains(",2,h2,lost,"), "{csv}");
    let by_shard = run(&cmd("table", &["--by", "shard"]), &reduced.stdout);
    assert_ok(&by_shard, "table --by shard");
    let text = String::from_utf8_lossy(&by_shard.stdout);
    assert!(text.contains("lost") && text.contains("h2"), "{text}");
    // Requests the merged run holds, and those lost: the whole plan.
    let held = merged["requests_scheduled"].as_u64().unwrap();
    assert_eq!(held + planned - seen, 60, "{merged}");
    // A part of only its header: lost, all its requests with it; the merge goes on.
    let first_line: Vec<u8> = std::fs::read(&files[1])
        .unwrap()
        .split(|b| *b == b'\n')
        .next()
        .unwrap()
        .iter()
        .copied()
        .chain([b'\n'])
        .collect();
    let header_only = file("lost-header-only.ndjson", &first_line);
    let (merged, _) = merge(&[files[0].clone(), header_only, killed]);
    assert_eq!(merged["parts"][1]["status"], "lost");
    assert_eq!(merged["parts"][1]["requests_lost"], 20);
    let (ok, lost) = (
        merged["requests_ok"].as_u64().unwrap(),
        merged["requests_lost"].as_u64().unwrap(),
    );
    assert!(ok + lost <= 60, "{merged}");
    // Only two parts given: the third is missing, and its share of the 60 known.
    let (merged, stderr) = merge(&files);
    assert!(stderr.contains("shard(s) 2 of 3 missing"), "{stderr}");
    assert_eq!(merged["parts"][2]["status"], "missing");
    assert_eq!(merged["parts"][2]["requests_lost"], 20);
    assert_eq!(merged["requests_lost"], 20);
}
