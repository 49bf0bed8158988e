//! The new traffic shapes through real pipes: a capped open loop run by `fire` against
//! `simserve`, the per-run salt as the server sees it, the schedule features `fire` refuses by
//! name, bad arguments, and an unbounded closed loop ended by its reader.

use crate::common;

use common::{assert_ok, bin, cmd, of_type, peak_in_flight, pipeline, records, run, Server};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn a_capped_open_loop_keeps_the_cap_and_records_the_wait_for_a_slot() {
    // Six requests due at once, at most two in flight, each about 50 + 4·10 = 90 ms long: the
    // last pair waits for two earlier pairs, and that wait is in its queue time.
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "10"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--rate",
                    "inf",
                    "-n",
                    "6",
                    "--max-concurrency",
                    "2",
                    "--input-tokens",
                    "8",
                    "--output-tokens",
                    "5",
                ],
            ),
            cmd("fire", &["--url", &server.url]),
        ],
        None,
    );
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    let done = of_type(&events, "done");
    assert_eq!(done.len(), 6);
    assert!(done.iter().all(|d| d["ok"] == true));
    assert_eq!(peak_in_flight(&events), 2);
    let mut waits: Vec<u64> = of_type(&events, "sent")
        .iter()
        .map(|s| {
            assert_eq!(
                s["scheduled_ns"], 0,
                "the offset stays the scheduled instant"
            );
            s["sent_ns"].as_u64().unwrap()
        })
        .collect();
    waits.sort_unstable();
    assert!(waits[1] < 50_000_000, "{waits:?}");
    assert!(waits[5] >= 150_000_000, "the last pair waited {waits:?}");
}

#[test]
fn every_run_salts_its_prompts_and_the_server_counts_the_salt() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let schedule = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "inf",
                "-n",
                "3",
                "--input-tokens",
                "10",
                "--output-tokens",
                "2",
            ],
        ),
        b"",
    );
    assert_ok(&schedule, "arrivals");
    let requests = records(&schedule.stdout);
    let prompt_words = of_type(&requests, "request")[0]["prompt"]
        .as_str()
        .unwrap()
        .split(' ')
        .count();
    assert_eq!(prompt_words, 6, "the salt's 4 tokens come out of the 10");
    let mut salts = vec![];
    for _ in 0..2 {
        let fired = run(&cmd("fire", &["--url", &server.url]), &schedule.stdout);
        assert_ok(&fired, "fire");
        let events = records(&fired.stdout);
        let salt = events[0]["params"]["salt"].as_str().unwrap().to_string();
        assert_eq!(salt.split(' ').count(), 4);
        // The server saw 10 prompt tokens: 6 words and the salt's 4.
        for d in of_type(&events, "done") {
            assert_eq!(d["prompt_tokens"], 10, "{d}");
        }
        salts.push(salt);
    }
    assert_ne!(salts[0], salts[1], "each run draws its own salt");
    // Without the salt the prompt is the whole length and fire records none.
    let unsalted = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "inf",
                "-n",
                "1",
                "--input-tokens",
                "10",
                "--no-salt",
            ],
        ),
        b"",
    );
    let fired = run(&cmd("fire", &["--url", &server.url]), &unsalted.stdout);
    assert_ok(&fired, "fire");
    let events = records(&fired.stdout);
    assert!(events[0]["params"].get("salt").is_none());
    assert_eq!(of_type(&events, "done")[0]["prompt_tokens"], 10);
}

#[test]
fn fire_refuses_by_name_what_it_cannot_run() {
    // A later turn carries its history as text, which token ids cannot join: refused as soon
    // as it is read, naming its line.
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--rate",
                    "5",
                    "--turns",
                    "2",
                    "-n",
                    "2",
                    "--token-ids",
                    "1000..2000",
                ],
            ),
            cmd("fire", &["--url", "http://127.0.0.1:9/v1", "--model", "m"]),
        ],
        None,
    );
    assert_eq!(outs[1].status.code(), Some(2));
    let err = String::from_utf8_lossy(&outs[1].stderr);
    assert!(
        err.contains("\"prompt_token_ids\"") && err.contains("line 4"),
        "{err}"
    );
}

#[test]
fn bad_arguments_name_the_flag_and_exit_2() {
    for (args, says) in [
        (&["--shard", "3/2"][..], "3/2"),
        (&["--rate", "0"], "rate"),
        (&["--concurrency", "2", "--shard", "2/3"], "shard 2"),
        (&["--input-range", "1.5"], "--input-range"),
        (
            &[
                "--ramp",
                "10s",
                "--ramp-from",
                "0",
                "--ramp-to",
                "5",
                "--ramp-shape",
                "exponential",
            ],
            "exponential",
        ),
        (&["--token-ids", "9..3"], "empty"),
        (&["--think-time", "5s..1s", "--turns", "2"], "backwards"),
        (&["--fill", "1/s"], "--concurrency"),
    ] {
        let out = run(&cmd("arrivals", args), b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn an_unbounded_closed_loop_ends_quietly_when_its_reader_has_had_enough() {
    let mut child = Command::new(bin("arrivals"))
        .args([
            "--concurrency",
            "2",
            "--duration",
            "60s",
            "--input-tokens",
            "4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arrivals starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Vec<String> = (&mut lines).take(200).map(|l| l.unwrap()).collect();
    assert!(first[1].contains(r#""requests":null"#), "{}", first[1]);
    assert!(
        first[1].contains(r#""duration_ns":60000000000"#),
        "{}",
        first[1]
    );
    drop(lines);
    let out = child.wait_with_output().expect("arrivals ends");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
