//! Simulated failures on the wire: the server on 127.0.0.1:0 inside the test, a client speaking
//! raw HTTP/1.1 over a `TcpStream`, so that what each fault does to the bytes and to the
//! connection is seen as a client would see it.
//!
//! Nothing here measures speed. Waits are generous upper bounds (a loaded machine only makes
//! them longer to reach), and the one check of silence (`stall`) asks for 300 ms without a byte
//! from a server that, unstalled, would have sent every remaining token within 20 ms.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokenpipe_sim::fault::select::{parse_flag, FaultPlan};
use tokenpipe_sim::{Config, Server, StampLog};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server with 5 ms to the first token and 2 ms between tokens, failing as `flags` say, and
/// its stamps file, named after the test.
async fn serve(test: &str, flags: &[&str]) -> (SocketAddr, Arc<StampLog>, PathBuf) {
    let mut config = Config::from_ms("m", 5.0, 2.0).unwrap();
    let flags: Vec<_> = flags.iter().map(|f| parse_flag(f).unwrap()).collect();
    config.faults = FaultPlan::new(&flags, 0, None).unwrap();
    let path = std::env::temp_dir().join(format!(
        "simserve-faults-{test}-{}.ndjson",
        std::process::id()
    ));
    let stamps = Arc::new(StampLog::create(&path, Default::default()).unwrap());
    let server = Server::bind(("127.0.0.1", 0), config, Some(stamps.clone()))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run(std::future::pending()));
    (addr, stamps, path)
}

fn post(path: &str, id: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\nx-request-id: {id}\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A streamed completion of `n` tokens with usage, and these extra members.
fn streamed(n: u64, extra: &str) -> String {
    format!(
        r#"{{"prompt":"a b","max_tokens":{n},"stream":true,"stream_options":{{"include_usage":true}}{extra}}}"#
    )
}

/// How the server left the connection.
#[derive(Debug, PartialEq, Eq)]
enum Close {
    /// It closed it (EOF, or a reset seen as a read error).
    Closed,
    /// It kept it open and silent for the whole wait.
    Silent,
}

/// Sends `request` on a fresh connection and reads until the server closes it, or until it sent
/// nothing for `quiet`.
async fn exchange(addr: SocketAddr, request: &str, quiet: Duration) -> (String, Close) {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    read_until_closed(&mut conn, quiet).await
}

async fn read_until_closed(conn: &mut TcpStream, quiet: Duration) -> (String, Close) {
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let close = loop {
        match tokio::time::timeout(quiet, conn.read(&mut buf)).await {
            Err(_) => break Close::Silent,
            Ok(Ok(0)) | Ok(Err(_)) => break Close::Closed,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
        }
    };
    (String::from_utf8_lossy(&raw).into_owned(), close)
}

/// Long enough for any answer here to end on a loaded machine.
const ENDS: Duration = Duration::from_secs(10);

/// The SSE payloads (after `data: `) of a response, in order.
fn events(response: &str) -> Vec<&str> {
    response
        .split("data: ")
        .skip(1)
        .map(|e| e.split("\n\n").next().unwrap_or_default())
        .collect()
}

fn token_events(events: &[&str]) -> usize {
    events.iter().filter(|e| e.contains(r#""text":" "#)).count()
}

fn no_finish_reason(events: &[&str]) -> bool {
    !events
        .iter()
        .any(|e| e.contains(r#""finish_reason":"length""#))
}

/// The chunked body ended with its final, empty chunk.
fn ends_cleanly(response: &str) -> bool {
    response.ends_with("\r\n0\r\n\r\n")
}

/// The stamps line of request `id`, once written.
async fn stamp(log: &StampLog, path: &PathBuf, id: &str) -> serde_json::Value {
    for _ in 0..500 {
        log.flush().unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let found = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|s| s["request_id"] == id);
        if let Some(found) = found {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no stamps line for {id}");
}

#[tokio::test]
async fn http_answers_the_status_with_an_openai_error() {
    let (addr, log, path) = serve("http", &[]).await;
    for (id, route, body) in [
        (
            "h1",
            "/v1/completions",
            streamed(4, r#","tokenpipe_fault":"http=503""#),
        ),
        (
            "h2",
            "/v1/chat/completions",
            r#"{"messages":[{"role":"user","content":"x"}],"tokenpipe_fault":"http"}"#.into(),
        ),
    ] {
        let (response, close) = exchange(addr, &post(route, id, &body), ENDS).await;
        assert_eq!(close, Close::Closed);
        let status = if id == "h1" { 503 } else { 500 };
        assert!(
            response.starts_with(&format!("HTTP/1.1 {status} ")),
            "{response}"
        );
        let lower = response.to_ascii_lowercase();
        assert!(
            lower.contains("content-type: application/json"),
            "{response}"
        );
        assert!(lower.contains(&format!("x-request-id: {id}")), "{response}");
        let json = response.split("\r\n\r\n").nth(1).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["error"]["code"], status);
        assert_eq!(v["error"]["type"], "server_error");
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()));
        let s = stamp(&log, &path, id).await;
        assert_eq!(s["tokens"], 0, "{s}");
    }
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn reset_closes_the_connection_without_the_final_chunk() {
    let (addr, log, path) = serve("reset", &[]).await;
    let body = streamed(6, r#","tokenpipe_fault":"reset","tokenpipe_fault_after":2"#);
    let (response, close) = exchange(addr, &post("/v1/completions", "r", &body), ENDS).await;
    assert_eq!(close, Close::Closed);
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let ev = events(&response);
    assert_eq!((token_events(&ev), ev.len()), (2, 2), "{response}");
    assert!(
        !ends_cleanly(&response),
        "the body must not end: {response:?}"
    );
    assert!(!response.contains("[DONE]"));
    assert_eq!(stamp(&log, &path, "r").await["tokens"], 2);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn stall_keeps_the_connection_open_and_silent() {
    let (addr, log, path) = serve("stall", &[]).await;
    let body = streamed(
        10,
        r#","tokenpipe_fault":"stall","tokenpipe_fault_after":3"#,
    );
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(post("/v1/completions", "s", &body).as_bytes())
        .await
        .unwrap();
    // Everything up to the third token, then nothing for 300 ms, and still open.
    let mut raw = String::new();
    let mut buf = [0u8; 8192];
    while token_events(&events(&raw)) < 3 {
        let n = tokio::time::timeout(ENDS, conn.read(&mut buf))
            .await
            .expect("three tokens in time")
            .unwrap();
        assert!(n > 0, "closed early: {raw}");
        raw.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let (more, close) = read_until_closed(&mut conn, Duration::from_millis(300)).await;
    assert_eq!(close, Close::Silent, "sent {more:?} after: {raw}");
    assert!(more.is_empty(), "{more}");
    assert_eq!(token_events(&events(&raw)), 3);
    // The client gives up; the server notices and writes the request's stamps.
    drop(conn);
    assert_eq!(stamp(&log, &path, "s").await["tokens"], 3);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_timed_stall_delays_even_a_one_token_stream() {
    let (addr, _, path) = serve("stall-one", &[]).await;
    let body = streamed(1, "");
    let request = post("/v1/completions", "s1", &body).replacen(
        "\r\n\r\n",
        "\r\nx-tokenpipe-fault: stall=300\r\n\r\n",
        1,
    );
    let sent = std::time::Instant::now();
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    let mut buf = [0u8; 8192];
    while token_events(&events(&raw)) < 1 {
        let n = tokio::time::timeout(ENDS, conn.read(&mut buf))
            .await
            .expect("the token in time")
            .unwrap();
        assert!(n > 0, "closed early: {raw}");
        raw.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    // Due at 5 ms unstalled; the pause comes before the only token. A lower bound only: a busy
    // machine makes it later, never earlier.
    let waited = sent.elapsed();
    assert!(waited >= Duration::from_millis(305), "{waited:?}: {raw}");
    let (rest, close) = read_until_closed(&mut conn, ENDS).await;
    assert_eq!(close, Close::Closed);
    raw.push_str(&rest);
    let ev = events(&raw);
    assert!(ev[0].contains(r#""finish_reason":"length""#), "{raw}");
    assert_eq!(ev.last(), Some(&"[DONE]"), "{raw}");
    assert!(ends_cleanly(&raw), "{raw:?}");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn garbage_sends_an_event_that_is_not_json() {
    let (addr, _, path) = serve("garbage", &[]).await;
    let body = streamed(
        4,
        r#","tokenpipe_fault":"garbage","tokenpipe_fault_after":1"#,
    );
    let (response, close) = exchange(addr, &post("/v1/completions", "g", &body), ENDS).await;
    assert_eq!(close, Close::Closed);
    let ev = events(&response);
    let not_json: Vec<_> = ev
        .iter()
        .filter(|e| **e != "[DONE]" && serde_json::from_str::<serde_json::Value>(e).is_err())
        .collect();
    assert_eq!(not_json.len(), 1, "{response}");
    assert_eq!(
        ev.iter().position(|e| e == not_json[0]),
        Some(1),
        "after one token"
    );
    // The rest of the answer follows as usual.
    assert_eq!(token_events(&ev), 4, "{response}");
    assert_eq!(ev.last(), Some(&"[DONE]"));
    assert!(ends_cleanly(&response));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn error_sends_an_error_event_then_done() {
    let (addr, _, path) = serve("error", &[]).await;
    let body = r#"{"messages":[{"role":"user","content":"x"}],"max_tokens":5,"stream":true,
        "tokenpipe_fault":"error","tokenpipe_fault_after":2}"#;
    let (response, close) = exchange(addr, &post("/v1/chat/completions", "e", body), ENDS).await;
    assert_eq!(close, Close::Closed);
    let ev = events(&response);
    // role, two tokens, the error, [DONE]
    assert_eq!(ev.len(), 5, "{response}");
    assert!(ev[1].contains(r#""content":" the""#) && ev[2].contains(r#""content":" quick""#));
    let error: serde_json::Value = serde_json::from_str(ev[3]).unwrap();
    let object = error["error"].as_object().unwrap();
    for member in ["message", "type", "code"] {
        assert!(object.contains_key(member), "{error}");
    }
    assert_eq!(ev[4], "[DONE]");
    assert!(no_finish_reason(&ev), "{response}");
    assert!(ends_cleanly(&response));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn truncate_ends_the_body_cleanly_without_finish_reason_or_done() {
    let (addr, log, path) = serve("truncate", &[]).await;
    let body = streamed(
        6,
        r#","tokenpipe_fault":"truncate","tokenpipe_fault_after":3"#,
    );
    let (response, close) = exchange(addr, &post("/v1/completions", "t", &body), ENDS).await;
    assert_eq!(close, Close::Closed);
    let ev = events(&response);
    assert_eq!((token_events(&ev), ev.len()), (3, 3), "{response}");
    assert!(no_finish_reason(&ev), "{response}");
    assert!(!response.contains("[DONE]") && !response.contains("usage"));
    assert!(ends_cleanly(&response), "{response:?}");
    assert_eq!(stamp(&log, &path, "t").await["tokens"], 3);
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn bare_done_sends_done_without_finish_reason() {
    let (addr, _, path) = serve("bare-done", &[]).await;
    let body = streamed(4, r#","tokenpipe_fault":"bare-done""#);
    let (response, close) = exchange(addr, &post("/v1/completions", "b", &body), ENDS).await;
    assert_eq!(close, Close::Closed);
    let ev = events(&response);
    // Half of max_tokens by default, then [DONE].
    assert_eq!((token_events(&ev), ev.len()), (2, 3), "{response}");
    assert_eq!(ev[2], "[DONE]");
    assert!(no_finish_reason(&ev), "{response}");
    assert!(ends_cleanly(&response));
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn the_flag_fails_every_request_unless_the_body_says_otherwise() {
    let (addr, _, path) = serve("flag", &["truncate"]).await;
    let run = |extra: &'static str| async move {
        let body = streamed(4, extra);
        exchange(addr, &post("/v1/completions", "f", &body), ENDS)
            .await
            .0
    };
    // The flag: every request truncated after half its tokens.
    let response = run("").await;
    let ev = events(&response);
    assert_eq!(token_events(&ev), 2, "{response}");
    assert!(no_finish_reason(&ev) && !response.contains("[DONE]"));
    // Spared by its body.
    let response = run(r#","tokenpipe_fault":"none""#).await;
    let ev = events(&response);
    assert_eq!(token_events(&ev), 4, "{response}");
    assert!(
        !no_finish_reason(&ev) && ev.last() == Some(&"[DONE]"),
        "{response}"
    );
    // Its own fault instead of the flag's.
    let response = run(r#","tokenpipe_fault":"http=429""#).await;
    assert!(response.starts_with("HTTP/1.1 429 "), "{response}");
    // A bad member is the client's mistake: 400.
    let response = run(r#","tokenpipe_fault":"sometimes""#).await;
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
    assert!(response.contains("tokenpipe_fault"), "{response}");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn answers_that_are_not_streamed_fail_too() {
    let (addr, log, path) = serve("whole", &[]).await;
    let whole =
        |fault: &str| format!(r#"{{"prompt":"a","max_tokens":4,"tokenpipe_fault":"{fault}"}}"#);
    // reset: the connection closes with no answer at all.
    let (response, close) =
        exchange(addr, &post("/v1/completions", "wr", &whole("reset")), ENDS).await;
    assert_eq!((response.as_str(), close), ("", Close::Closed));
    assert_eq!(stamp(&log, &path, "wr").await["tokens"], 0);
    // truncate: 200 and a body that ends before its JSON does.
    let (response, _) = exchange(
        addr,
        &post("/v1/completions", "wt", &whole("truncate")),
        ENDS,
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200 "), "{response}");
    let json = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert!(json.starts_with('{'), "{response}");
    assert!(
        serde_json::from_str::<serde_json::Value>(json).is_err(),
        "{json}"
    );
    // stall: no answer, and the connection stays open.
    let (response, close) = exchange(
        addr,
        &post("/v1/completions", "ws", &whole("stall")),
        Duration::from_millis(300),
    )
    .await;
    assert_eq!((response.as_str(), close), ("", Close::Silent));
    let _ = std::fs::remove_file(&path);
}
