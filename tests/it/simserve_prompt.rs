//! simserve's chat stream and prompt counting through the real binary: the role chunk leaves
//! with the first token, after the prefill (as vLLM's does), and `--tokenizer` counts prompts in
//! the tokenizer's tokens. Timings are lower bounds only, so a busy machine cannot fail them.

use crate::common;

use common::{bin, Server};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};
use tokenizers::Tokenizer;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/tokenizer.json"
);

/// Opens a connection to `server` and sends `body` to `path` with the extra header lines
/// `headers` (each ending in "\r\n").
fn post(server: &Server, path: &str, headers: &str, body: &Value) -> (TcpStream, Instant) {
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/v1");
    let body = body.to_string();
    let mut conn = TcpStream::connect(addr).expect("connect");
    conn.set_nodelay(true).expect("nodelay");
    let started = Instant::now();
    write!(
        conn,
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n{headers}\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    (conn, started)
}

/// Streams a chat answer; every SSE event's payload with how long after the request was sent
/// its line had arrived.
fn chat_events(server: &Server, headers: &str, body: &Value) -> Vec<(Duration, String)> {
    let (conn, started) = post(server, "/v1/chat/completions", headers, body);
    let mut events = Vec::new();
    for line in BufReader::new(conn).lines() {
        let line = line.expect("read");
        // Chunk framing puts its sizes on lines of their own; events are whole lines.
        if let Some(payload) = line.strip_prefix("data: ") {
            events.push((started.elapsed(), payload.to_string()));
        }
    }
    events
}

/// A chat request of `words` distinct words, streamed, `max_tokens` 2.
fn chat_body(words: usize) -> Value {
    let prompt: Vec<String> = (0..words).map(|i| format!("w{i}")).collect();
    json!({"model": "m", "stream": true, "max_tokens": 2,
           "messages": [{"role": "user", "content": prompt.join(" ")}]})
}

#[test]
fn the_role_chunk_leaves_after_the_prefill_with_the_first_token() {
    // 300 prompt tokens at 1,000 t/s: 300 ms of prefill before the first output.
    let server = Server::start(&["--profile", "small-gpu", "--prefill-tps", "1000"]);
    let events = chat_events(&server, "", &chat_body(300));
    assert_eq!(events.len(), 4, "role, two tokens, [DONE]: {events:?}");
    let role: Value = serde_json::from_str(&events[0].1).unwrap();
    assert_eq!(
        role["choices"][0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    assert!(
        events[0].0 >= Duration::from_millis(240),
        "the role chunk waits for the prefill: {events:?}"
    );
    let first: Value = serde_json::from_str(&events[1].1).unwrap();
    assert!(
        first["choices"][0]["delta"]["content"].is_string(),
        "{first}"
    );
    assert!(
        first["choices"][0]["delta"].get("role").is_none(),
        "{first}"
    );
}

#[test]
fn a_pause_after_no_token_falls_between_the_role_chunk_and_the_first_token() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let fault = "x-tokenpipe-fault: stall=600;after=0\r\n";
    let events = chat_events(&server, fault, &chat_body(4));
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(events[0].1.contains(r#""role":"assistant""#), "{events:?}");
    // The role chunk at the first output (20 ms), the first token 600 ms later.
    assert!(
        events[1].0 >= events[0].0 + Duration::from_millis(300),
        "{events:?}"
    );
}

/// `POST path` with `body`, answered whole: the JSON body.
fn answer(server: &Server, path: &str, body: &Value) -> Value {
    let (mut conn, _) = post(server, path, "", body);
    let mut raw = String::new();
    conn.read_to_string(&mut raw).expect("read");
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    let body = raw.split("\r\n\r\n").nth(1).expect("a body");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"))
}

#[test]
fn a_tokenizer_counts_the_prompt_tokens() {
    let tokenizer = Tokenizer::from_file(FIXTURE).unwrap();
    let count = |text: &str, special: bool| -> u64 {
        tokenizer.encode(text, special).unwrap().get_ids().len() as u64
    };
    let (system, user) = ("Answer briefly, please.", "unbelievably quick brown foxes");
    let words = (system.split_whitespace().count() + user.split_whitespace().count()) as u64;
    let tokens = count(system, false) + count(user, false);
    assert_ne!(tokens, words, "the fixture's tokens are not words");
    let server = Server::start(&["--tokenizer", FIXTURE, "--template-tokens", "21"]);
    let chat = json!({"model": "m", "max_tokens": 1, "messages": [
        {"role": "system", "content": system},
        {"role": "user", "content": [{"type": "text", "text": user}]}]});
    let v = answer(&server, "/v1/chat/completions", &chat);
    assert_eq!(v["usage"]["prompt_tokens"], tokens + 21, "{v}");
    // A completions prompt is encoded with the tokenizer's special tokens, as vLLM does.
    let completion = json!({"model": "m", "max_tokens": 1, "prompt": user});
    let v = answer(&server, "/v1/completions", &completion);
    assert_eq!(v["usage"]["prompt_tokens"], count(user, true), "{v}");
    assert_eq!(count(user, true), count(user, false) + 1);
    let v = answer(&server, "/tokenize", &completion);
    assert_eq!(v["count"], count(user, true), "{v}");
    // Without --tokenizer, words count.
    let plain = Server::start(&[]);
    let v = answer(&plain, "/v1/chat/completions", &chat);
    assert_eq!(v["usage"]["prompt_tokens"], words, "{v}");
}

#[test]
fn a_missing_or_malformed_tokenizer_stops_simserve_at_start() {
    let bad = common::temp_path("simserve-not-a-tokenizer.json");
    std::fs::write(&bad, b"{\"model\": 3}").unwrap();
    for (path, says) in [
        ("/nonexistent/tokenizer.json", "No such file"),
        (bad.to_str().unwrap(), "not a Hugging Face tokenizer.json"),
    ] {
        let out = Command::new(bin("simserve"))
            .args(["--port", "0", "--tokenizer", path])
            .output()
            .expect("run simserve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.starts_with(&format!("simserve: --tokenizer {path}: ")),
            "{stderr}"
        );
        assert!(stderr.contains(says), "{stderr}");
        assert!(out.stdout.is_empty(), "no URL printed");
    }
    std::fs::remove_file(&bad).ok();
}
