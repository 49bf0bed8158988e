//! `simserve --token-stamps`: every token's hand-over instant, per request, on the stamps
//! file's clock, through the real binaries (the benchmark's ITL error is built on it).

use crate::common::{assert_ok, closed_schedule, cmd, of_type, records, run, temp_path, Server};
use std::collections::HashMap;

/// The last 16 hex digits of an `x-request-id`: fire's request id.
fn request_id(rid: &str) -> u64 {
    let hex: String = rid.chars().filter(|c| *c != '-').collect();
    u64::from_str_radix(&hex[hex.len() - 16..], 16).expect("hex request id")
}

#[test]
fn token_stamps_give_each_token_the_instant_fire_read_it_after() {
    let (stamps, tokens) = (temp_path("ts-stamps.ndjson"), temp_path("ts-tokens.jsonl"));
    let server = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "2",
        "--stamps",
        stamps.to_str().unwrap(),
        "--token-stamps",
        tokens.to_str().unwrap(),
    ]);
    let schedule = closed_schedule(4, 6, |_| {});
    let fired = run(&cmd("fire", &["--url", &server.url, "--quiet"]), &schedule);
    server.stop();
    assert_ok(&fired, "fire");
    let (stamp_text, token_text) = (
        std::fs::read(&stamps).unwrap(),
        std::fs::read_to_string(&tokens).unwrap(),
    );
    let _ = (std::fs::remove_file(&stamps), std::fs::remove_file(&tokens));

    let events = records(&fired.stdout);
    let fire_origin = events[0]["monotonic_origin_ns"].as_u64().unwrap();
    let mut seen: HashMap<u64, Vec<u64>> = HashMap::new();
    for t in of_type(&events, "token") {
        let at = fire_origin + t["at_ns"].as_u64().unwrap();
        let n = t["tokens"].as_u64().unwrap() as usize;
        let id = t["id"].as_u64().unwrap();
        seen.entry(id)
            .or_default()
            .extend(std::iter::repeat_n(at, n));
    }
    let stamp_records = records(&stamp_text);
    let origin = stamp_records[0]["monotonic_origin_ns"].as_u64().unwrap();
    let firsts: HashMap<u64, (u64, u64)> = of_type(&stamp_records, "stamp")
        .iter()
        .map(|s| {
            let id = request_id(s["request_id"].as_str().unwrap());
            let ends = (
                s["first_token_ns"].as_u64().unwrap(),
                s["last_token_ns"].as_u64().unwrap(),
            );
            (id, ends)
        })
        .collect();

    let lines: Vec<serde_json::Value> = token_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "one line per request: {token_text}");
    for line in &lines {
        let id = request_id(line["request_id"].as_str().unwrap());
        let server: Vec<u64> = line["token_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect();
        assert_eq!(server.len(), 6, "every token: {line}");
        assert!(server.windows(2).all(|w| w[0] <= w[1]), "{line}");
        // The stamp record's first and last are the same instants.
        assert_eq!((server[0], server[5]), firsts[&id], "{line}");
        // fire read every token after the server handed it over, never before.
        let client = &seen[&id];
        assert_eq!(client.len(), 6, "fire saw every token of {id}");
        for (k, (c, s)) in client.iter().zip(&server).enumerate() {
            assert!(
                *c >= origin + s,
                "request {id} token {k}: read before it was sent"
            );
        }
    }
}

#[test]
fn token_stamps_without_stamps_is_refused() {
    let out = run(
        &cmd("simserve", &["--port", "0", "--token-stamps", "t.jsonl"]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--stamps"), "{err}");
}
