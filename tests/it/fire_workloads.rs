//! Every workload `arrivals` writes, run by `fire` against `simserve` through real pipes: batches,
//! fills, closed loops bounded by time, capped open loops, trace replay, shards, multi-turn
//! sessions (their history checked on the server's side with `--log-requests`), system prompts
//! and token-id prompts. Timing assertions are one-sided or carry wide tolerances: the machine
//! is small and shared.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;

const MS: u64 = 1_000_000;

/// `arrivals ARGS | fire --url URL FIRE_ARGS`: fire's records.
fn arrivals_then_fire(server: &Server, arrivals: &[&str], fire: &[&str]) -> Vec<Value> {
    let mut fire_args = vec!["--url", server.url.as_str(), "--model", "m"];
    fire_args.extend_from_slice(fire);
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire_args)], None);
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    records(&outs[1].stdout)
}

/// `fire` on a hand-written schedule.
fn fire_on(server: &Server, schedule: &str, fire: &[&str]) -> Vec<Value> {
    let mut fire_args = vec!["--url", server.url.as_str(), "--model", "m"];
    fire_args.extend_from_slice(fire);
    let out = run(&cmd("fire", &fire_args), schedule.as_bytes());
    assert_ok(&out, "fire");
    records(&out.stdout)
}

fn by_id<'a>(recs: &'a [Value], t: &str) -> HashMap<u64, &'a Value> {
    of_type(recs, t)
        .into_iter()
        .map(|r| (r["id"].as_u64().unwrap(), r))
        .collect()
}

fn ns(v: &Value, field: &str) -> u64 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

/// The server's log of requests, keyed by fire's request id (the last 16 hex digits of
/// `x-request-id`).
fn logged_requests(path: &std::path::Path) -> HashMap<u64, Value> {
    let text = std::fs::read_to_string(path).expect("request log");
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let uuid: String = v["request_id"]
                .as_str()
                .unwrap()
                .chars()
                .filter(|c| *c != '-')
                .collect();
            (u64::from_str_radix(&uuid[16..], 16).unwrap(), v)
        })
        .collect()
}

#[test]
fn batches_leave_together_and_only_after_the_batch_before_has_ended() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--batch",
            "3",
            "--runs",
            "3",
            "--input-tokens",
            "8",
            "--output-tokens",
            "10",
            "--no-warmup",
        ],
        &[],
    );
    let (sent, done) = (by_id(&recs, "sent"), by_id(&recs, "done"));
    assert_eq!((sent.len(), done.len()), (9, 9));
    assert!(done.values().all(|d| d["ok"] == true));
    let mut batches: HashMap<u64, Vec<u64>> = HashMap::new();
    for (id, d) in &done {
        batches
            .entry(d["batch"].as_u64().unwrap())
            .or_default()
            .push(*id);
    }
    for b in 0..3u64 {
        let ids = &batches[&b];
        assert_eq!(ids.len(), 3);
        let scheduled: Vec<u64> = ids.iter().map(|i| ns(sent[i], "scheduled_ns")).collect();
        assert!(
            scheduled.iter().all(|s| *s == scheduled[0]),
            "one release instant: {scheduled:?}"
        );
        if b > 0 {
            let last_done = batches[&(b - 1)]
                .iter()
                .map(|i| ns(done[i], "at_ns"))
                .max()
                .unwrap();
            let first_sent = ids.iter().map(|i| ns(sent[i], "sent_ns")).min().unwrap();
            assert!(
                first_sent >= last_done,
                "batch {b} sent at {first_sent}, before {last_done}"
            );
            assert_eq!(
                scheduled[0], last_done,
                "released at the previous batch's last done"
            );
        }
    }
}

#[test]
fn a_fill_opens_one_slot_per_interval() {
    // Requests take about 200 ms, longer than the 100 ms fill interval, so each of the first
    // three goes out when its slot opens.
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "4"]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--concurrency",
            "3",
            "--fill",
            "10/s",
            "-n",
            "3",
            "--input-tokens",
            "8",
            "--output-tokens",
            "50",
        ],
        &[],
    );
    let sent = by_id(&recs, "sent");
    assert_eq!(sent.len(), 3);
    let mut scheduled: Vec<u64> = sent.values().map(|s| ns(s, "scheduled_ns")).collect();
    scheduled.sort_unstable();
    assert_eq!(
        scheduled,
        [0, 100 * MS, 200 * MS],
        "slot k opens at k x interval"
    );
    for s in sent.values() {
        let lag = ns(s, "sent_ns") - ns(s, "scheduled_ns");
        assert!(lag < 50 * MS, "sent {lag} ns after its slot opened: {s}");
    }
}

#[test]
fn a_closed_loop_bounded_by_time_sends_nothing_at_or_after_it() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "3"]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--concurrency",
            "2",
            "--duration",
            "700ms",
            "--input-tokens",
            "8",
            "--output-tokens",
            "20",
        ],
        &[],
    );
    let (sent, done) = (by_id(&recs, "sent"), by_id(&recs, "done"));
    assert!(sent.len() >= 4, "only {} sent", sent.len());
    assert!(sent.values().all(|s| ns(s, "sent_ns") < 700 * MS));
    assert_eq!(
        sent.len(),
        done.len(),
        "every request sent ends, nothing else is recorded"
    );
    assert!(
        done.values().all(|d| d["ok"] == true),
        "no not_sent records"
    );
}

#[test]
fn a_capped_open_loop_never_passes_its_cap_and_records_the_wait() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "5"]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--rate",
            "100",
            "-n",
            "12",
            "--max-concurrency",
            "2",
            "--input-tokens",
            "8",
            "--output-tokens",
            "10",
        ],
        &[],
    );
    assert!(peak_in_flight(&recs) <= 2, "peak {}", peak_in_flight(&recs));
    let waits: Vec<u64> = of_type(&recs, "sent")
        .iter()
        .map(|s| ns(s, "sent_ns") - ns(s, "scheduled_ns"))
        .collect();
    assert_eq!(waits.len(), 12);
    assert!(
        waits.iter().any(|w| *w > 20 * MS),
        "queue time shows: {waits:?}"
    );
    // The wait is the cap's: the client's own lateness stays small, and it kept up.
    let client = of_type(&recs, "client")[0];
    assert_eq!(client["kept_up"], true, "{client}");
    assert!(ns(client, "dispatch_lag_max_ns") < 20 * MS, "{client}");
}

#[test]
fn a_trace_replays_at_its_offsets() {
    let server = Server::start(&["--ttft-ms", "2", "--itl-ms", "1"]);
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/arrivals/mooncake-10.jsonl"
    );
    let schedule = pipeline(
        &[cmd("arrivals", &["--trace", trace, "--time-scale", "0.01"])],
        None,
    )
    .remove(0);
    assert_ok(&schedule, "arrivals");
    let offsets: HashMap<u64, u64> = of_type(&records(&schedule.stdout), "request")
        .iter()
        .map(|r| (ns(r, "id"), ns(r, "offset_ns")))
        .collect();
    let recs = fire_on(&server, std::str::from_utf8(&schedule.stdout).unwrap(), &[]);
    let sent = by_id(&recs, "sent");
    assert_eq!(sent.len(), offsets.len());
    for (id, s) in sent {
        assert_eq!(ns(s, "scheduled_ns"), offsets[&id]);
        assert!(ns(s, "sent_ns") >= offsets[&id]);
    }
    assert!(of_type(&recs, "done").iter().all(|d| d["ok"] == true));
}

#[test]
fn a_shard_runs_and_its_header_keeps_the_shard() {
    let server = Server::start(&["--ttft-ms", "2", "--itl-ms", "1"]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--concurrency",
            "2",
            "-n",
            "6",
            "--shard",
            "1/2",
            "--input-tokens",
            "8",
            "--output-tokens",
            "4",
        ],
        &[],
    );
    let header = &recs[0];
    assert_eq!(header["tool"], "fire");
    let shard = serde_json::json!({"index": 1, "count": 2});
    assert_eq!(header["shard"], shard, "{header}");
    assert_eq!(header["upstream"][0]["shard"], shard, "{header}");
    assert_eq!(of_type(&recs, "done").len(), 3);
    assert!(of_type(&recs, "done").iter().all(|d| d["ok"] == true));
}

/// Runs a closed loop of sessions with `--log-requests`; returns fire's records and the log.
fn sessions(api: &str) -> (Vec<Value>, HashMap<u64, Value>) {
    let log = temp_path(&format!("sessions-{api}.ndjson"));
    let log_arg = log.to_str().unwrap().to_string();
    let server = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "2",
        "--log-requests",
        &log_arg,
    ]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--concurrency",
            "2",
            "--turns",
            "3",
            "--think-time",
            "150ms",
            "-n",
            "2",
            "--input-tokens",
            "8",
            "--output-tokens",
            "6",
        ],
        &["--api", api, "--record-text"],
    );
    server.stop();
    let logged = logged_requests(&log);
    std::fs::remove_file(&log).ok();
    (recs, logged)
}

/// Checks the think time: each later turn is scheduled its think time after the turn before
/// ended, and sent then. Returns each session's requests in turn order.
fn check_think_time(recs: &[Value]) -> Vec<Vec<u64>> {
    let (sent, done) = (by_id(recs, "sent"), by_id(recs, "done"));
    assert_eq!((sent.len(), done.len()), (6, 6));
    let mut by_session: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    for (id, d) in &done {
        assert_eq!(d["ok"], true, "{d}");
        let s = d["session"].as_str().unwrap().to_string();
        by_session
            .entry(s)
            .or_default()
            .push((d["turn"].as_u64().unwrap(), *id));
    }
    let mut out = vec![];
    for (_, mut turns) in by_session {
        turns.sort_unstable();
        let ids: Vec<u64> = turns.iter().map(|t| t.1).collect();
        for w in ids.windows(2) {
            let ended = ns(done[&w[0]], "at_ns");
            let s = sent[&w[1]];
            assert_eq!(ns(s, "scheduled_ns"), ended + 150 * MS, "{s}");
            assert!(ns(s, "sent_ns") >= ended + 150 * MS, "{s}");
        }
        out.push(ids);
    }
    out
}

#[test]
fn chat_sessions_carry_the_text_each_turn_actually_got() {
    let (recs, logged) = sessions("chat");
    let done = by_id(&recs, "done");
    for ids in check_think_time(&recs) {
        for k in 1..ids.len() {
            let messages = logged[&ids[k]]["body"]["messages"]
                .as_array()
                .unwrap()
                .clone();
            assert_eq!(messages.len(), 2 * k + 1, "{messages:?}");
            for j in 0..k {
                let before = &logged[&ids[j]]["body"]["messages"];
                let asked = &before[before.as_array().unwrap().len() - 1];
                assert_eq!(messages[2 * j], *asked, "turn {j}'s prompt, as sent");
                assert_eq!(messages[2 * j + 1]["role"], "assistant");
                assert_eq!(
                    messages[2 * j + 1]["content"],
                    done[&ids[j]]["text"],
                    "turn {j}'s answer"
                );
            }
            assert!(!done[&ids[k - 1]]["text"].as_str().unwrap().is_empty());
        }
    }
}

#[test]
fn completions_sessions_join_the_history_into_one_prompt() {
    let (recs, logged) = sessions("completions");
    let done = by_id(&recs, "done");
    for ids in check_think_time(&recs) {
        let first = logged[&ids[0]]["body"]["prompt"]
            .as_str()
            .unwrap()
            .to_string();
        let answer = done[&ids[0]]["text"].as_str().unwrap();
        let second = logged[&ids[1]]["body"]["prompt"].as_str().unwrap();
        assert!(
            second.starts_with(&format!("{first}{answer}\n\n")),
            "{second:?}"
        );
        let third = logged[&ids[2]]["body"]["prompt"].as_str().unwrap();
        let answer2 = done[&ids[1]]["text"].as_str().unwrap();
        let second_own = &second[first.len() + answer.len() + 2..];
        assert!(
            third.starts_with(&format!("{first}{answer}\n\n{second_own}{answer2}\n\n")),
            "{third:?}"
        );
    }
}

const HAND_HEADER: &str = r#"{"type":"header","format_major":1,"format_minor":3,"tool":"arrivals","tool_version":"0","run_id":"hand"}"#;

#[test]
fn a_failed_turn_ends_its_session_with_not_sent_turns_that_name_it() {
    let server = Server::start(&["--ttft-ms", "2", "--itl-ms", "1"]);
    let schedule = [
        HAND_HEADER,
        r#"{"type":"schedule","mode":"closed","concurrency":1,"requests":4}"#,
        r#"{"type":"request","id":0,"prompt":"a","max_tokens":3,"turns":3,"session":"s","turn":0,"extra_body":{"tokenpipe_fault":"error"}}"#,
        r#"{"type":"request","id":1,"prompt":"b","max_tokens":3,"think_time_ns":1000,"turns":3,"session":"s","turn":1}"#,
        r#"{"type":"request","id":2,"prompt":"c","max_tokens":3,"think_time_ns":1000,"turns":3,"session":"s","turn":2}"#,
        r#"{"type":"request","id":3,"prompt":"d","max_tokens":3}"#,
    ]
    .join("\n");
    let recs = fire_on(&server, &schedule, &[]);
    let done = by_id(&recs, "done");
    assert_eq!(done.len(), 4);
    assert_eq!(done[&0]["ok"], false);
    for id in [1, 2] {
        assert_eq!(done[&id]["error_kind"], "not_sent", "{}", done[&id]);
        assert!(done[&id]["error"].as_str().unwrap().contains("request 0"));
    }
    assert_eq!(
        done[&3]["ok"], true,
        "the session's slot was freed for the next request"
    );
    assert!(!by_id(&recs, "sent").contains_key(&1));
}

#[test]
fn a_system_prompt_reaches_both_apis() {
    let log = temp_path("system.ndjson");
    let log_arg = log.to_str().unwrap().to_string();
    let server = Server::start(&[
        "--ttft-ms",
        "2",
        "--itl-ms",
        "1",
        "--log-requests",
        &log_arg,
    ]);
    let schedule = [
        HAND_HEADER,
        r#"{"type":"request","id":0,"prompt":"hello","max_tokens":2,"system":"Be brief."}"#,
    ]
    .join("\n");
    fire_on(&server, &schedule, &["--api", "chat"]);
    let chat = logged_requests(&log)[&0]["body"]["messages"].clone();
    assert_eq!(
        chat,
        serde_json::json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}])
    );
    std::fs::write(&log, "").unwrap();
    let server = Server::start(&[
        "--ttft-ms",
        "2",
        "--itl-ms",
        "1",
        "--log-requests",
        &log_arg,
    ]);
    fire_on(&server, &schedule, &["--api", "completions"]);
    assert_eq!(
        logged_requests(&log)[&0]["body"]["prompt"],
        "Be brief.\n\nhello"
    );
    std::fs::remove_file(&log).ok();
}

#[test]
fn token_id_prompts_go_out_as_ids() {
    let log = temp_path("ids.ndjson");
    let log_arg = log.to_str().unwrap().to_string();
    let server = Server::start(&[
        "--ttft-ms",
        "2",
        "--itl-ms",
        "1",
        "--log-requests",
        &log_arg,
    ]);
    let schedule = [
        HAND_HEADER,
        r#"{"type":"request","id":0,"prompt_token_ids":[11,12,13],"max_tokens":2}"#,
    ]
    .join("\n");
    let recs = fire_on(&server, &schedule, &[]);
    assert_eq!(by_id(&recs, "done")[&0]["ok"], true);
    assert_eq!(
        logged_requests(&log)[&0]["body"]["prompt"],
        serde_json::json!([11, 12, 13])
    );
    std::fs::remove_file(&log).ok();
}

#[test]
fn done_records_the_first_event_and_the_text() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "2"]);
    let recs = arrivals_then_fire(
        &server,
        &[
            "--concurrency",
            "1",
            "-n",
            "2",
            "--input-tokens",
            "8",
            "--output-tokens",
            "5",
        ],
        &["--api", "chat", "--record-text"],
    );
    for d in of_type(&recs, "done") {
        let first = ns(d, "first_event_ns");
        let tokens: Vec<u64> = of_type(&recs, "token")
            .iter()
            .filter(|t| t["id"] == d["id"])
            .map(|t| ns(t, "at_ns"))
            .collect();
        assert!(first <= tokens[0], "the role chunk comes first: {d}");
        assert!(!d["text"].as_str().unwrap().is_empty(), "{d}");
    }
    let plain = arrivals_then_fire(
        &server,
        &[
            "--concurrency",
            "1",
            "-n",
            "1",
            "--input-tokens",
            "8",
            "--output-tokens",
            "3",
        ],
        &[],
    );
    assert!(
        of_type(&plain, "done")[0].get("text").is_none(),
        "text only with --record-text"
    );
}

#[test]
fn a_multi_turn_closed_loop_with_a_duration_ends_when_the_duration_does() {
    // Sessions hold their slot between turns; when the duration passes, the turns never sent
    // must give their slots back, or the run never ends. `timeout` turns a hang into a failure.
    let server = Server::start(&["--ttft-ms", "2", "--itl-ms", "1"]);
    for extra in [
        &["--turns", "3"][..],
        &["--turns", "3", "--think-time", "300ms"],
    ] {
        let mut args = vec![
            "--concurrency",
            "2",
            "--duration",
            "1s",
            "--input-tokens",
            "8",
            "--output-tokens",
            "4",
        ];
        args.extend_from_slice(extra);
        let mut fire = vec!["timeout".to_string(), "30".to_string()];
        fire.extend(cmd("fire", &["--url", server.url.as_str(), "--model", "m"]));
        let outs = pipeline(&[cmd("arrivals", &args), fire], None);
        assert_ok(&outs[1], "fire");
        let recs = records(&outs[1].stdout);
        let dones = of_type(&recs, "done");
        assert!(dones.len() >= 4, "{extra:?}: {} requests", dones.len());
        assert!(dones.iter().all(|d| d["ok"] == true), "{extra:?}");
    }
}
