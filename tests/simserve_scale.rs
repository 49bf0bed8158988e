//! simserve at scale: one process, pinned to one core with one worker thread, serves 10,000
//! concurrent streams at an inter-token latency of 10 ms, and its own stamps show that its
//! timing does not drift.
//!
//! 10,000 streams at 10 ms ask for a million token frames a second, more than one core can
//! write on a small machine (BENCHMARKS.md measures what it can). A server that keeps its
//! timetable absolute then hands every overdue token over at once and is back on time as soon
//! as it can be; one whose deadlines slip with each late token drifts further behind with every
//! token. So the check is relative, and holds however loaded the machine is: half the streams
//! are three times as long as the others, and their last tokens must not be later than the
//! short streams' (with drift they would be about three times as late). Besides: every stream
//! completes whole, no token leaves before its deadline, and the server's own lateness account
//! (`late_max_ns`) covers what its stamps show.

mod common;
use common::*;

use common::pin::{allowed_cpus, open_files_hard_limit, pinned};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const STREAMS: u64 = 10_000;
const SHORT: u64 = 50;
const LONG: u64 = 150;
const TTFT_MS: u64 = 50;
const ITL_MS: u64 = 10;
const MS: u64 = 1_000_000;
/// How much later than the short streams' the long streams' last tokens may be, at the median:
/// the noise of a shared machine, far below the 2 × 100 tokens of drift it would take.
const DRIFT_MARGIN_NS: u64 = 50 * MS;

/// A closed loop of `STREAMS` at once, alternately `SHORT` and `LONG` tokens long.
fn schedule() -> Vec<u8> {
    closed_schedule(STREAMS, LONG, |rec| {
        if rec["id"].as_u64().expect("id") % 2 == 0 {
            rec["max_tokens"] = SHORT.into();
        }
    })
}

/// The median of `v`.
fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

#[test]
fn one_core_serves_10000_streams_at_10ms_without_drifting() {
    let needed = STREAMS + 500;
    let hard = open_files_hard_limit();
    if hard < needed {
        eprintln!("skipped: the open-file hard limit is {hard}, {needed} are needed per process");
        return;
    }
    let cpus = allowed_cpus();
    let (server_cpu, client_cpu) = (cpus.first().copied(), cpus.get(1).copied());
    let stamps = temp_path("scale-stamps.ndjson");
    let events = temp_path("scale-events.ndjson");

    let mut server = Command::new(bin("simserve"));
    server
        .args(["--port", "0", "--workers", "1"])
        .args(["--ttft-ms", &TTFT_MS.to_string()])
        .args(["--itl-ms", &ITL_MS.to_string()])
        .arg("--stamps")
        .arg(&stamps)
        .stdout(Stdio::piped());
    pinned(&mut server, server_cpu);
    let mut server = server.spawn().expect("start simserve");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("simserve url");

    let schedule = schedule();
    let mut fire = Command::new(bin("fire"));
    fire.args(["--url", url.trim(), "--quiet"])
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&events).expect("events file"))
        .stderr(Stdio::piped());
    pinned(&mut fire, client_cpu);
    let mut fire = fire.spawn().expect("start fire");
    let mut stdin = fire.stdin.take().expect("fire stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(&schedule));
    let fired = fire.wait_with_output().expect("fire");
    feeder.join().expect("feeder").expect("schedule written");
    assert!(
        fired.status.success(),
        "fire: {}",
        String::from_utf8_lossy(&fired.stderr)
    );
    // SAFETY: signalling our own child, so that it flushes its stamps.
    unsafe {
        libc::kill(server.id() as i32, libc::SIGTERM);
    }
    server.wait().expect("simserve exit");

    // Every stream whole, as the client saw it.
    let summary = run(&cmd("reduce", &[events.to_str().expect("path")]), b"");
    assert_ok(&summary, "reduce");
    let recs = records(&summary.stdout);
    let s = of_type(&recs, "summary")[0];
    assert_eq!(s["requests_ok"], STREAMS, "{s}");
    assert_eq!(s["output_tokens"], STREAMS / 2 * (SHORT + LONG), "{s}");

    // The server's own account, request by request.
    let text = std::fs::read_to_string(&stamps).expect("stamps");
    let stamps_recs = records(text.as_bytes());
    let server_stamps = of_type(&stamps_recs, "stamp");
    assert_eq!(server_stamps.len() as u64, STREAMS);
    let (mut short_late, mut long_late) = (Vec::new(), Vec::new());
    let mut first_late = Vec::new();
    for stamp in server_stamps {
        let field = |name: &str| stamp[name].as_u64().unwrap_or_else(|| panic!("{stamp}"));
        let tokens = field("tokens");
        let (received, first, last) = (
            field("received_ns"),
            field("first_token_ns"),
            field("last_token_ns"),
        );
        let first_due = received + TTFT_MS * MS;
        let last_due = first_due + (tokens - 1) * ITL_MS * MS;
        assert!(first >= first_due && last >= last_due, "early: {stamp}");
        let late = last - last_due;
        // Its deadlines count from the arrival read on the timer's clock just after
        // `received_ns`: allow for the instant between the two readings.
        assert!(field("late_max_ns") + MS >= late, "{stamp}");
        first_late.push(first - first_due);
        match tokens {
            SHORT => short_late.push(late),
            LONG => long_late.push(late),
            _ => panic!("a stream cut short: {stamp}"),
        }
    }
    assert_eq!(short_late.len(), long_late.len());
    let (short, long) = (median(&mut short_late), median(&mut long_late));
    eprintln!(
        "last token late at the median: {:.1} ms after {SHORT} tokens, {:.1} ms after {LONG}; \
         first token late at the median {:.1} ms",
        short as f64 / 1e6,
        long as f64 / 1e6,
        median(&mut first_late) as f64 / 1e6,
    );
    assert!(
        long <= short + DRIFT_MARGIN_NS,
        "the server drifts: the last of {LONG} tokens is {:.1} ms late at the median, the last \
         of {SHORT} {:.1} ms",
        long as f64 / 1e6,
        short as f64 / 1e6
    );
    let _ = std::fs::remove_file(&stamps);
    let _ = std::fs::remove_file(&events);
}
