//! End to end over a real socket: the server on 127.0.0.1:0 inside the test, a client speaking
//! raw HTTP/1.1 over a `TcpStream`, so nothing of hyper's client side hides what goes on the wire.

use std::sync::Arc;
use std::time::Duration;
use tokenpipe_sim::{Config, Server, StampLog};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Sends `request` on a fresh connection and reads until the server closes it.
async fn exchange(addr: std::net::SocketAddr, request: &str) -> String {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut raw))
        .await
        .expect("server answered in time")
        .unwrap();
    String::from_utf8(raw).unwrap()
}

fn post(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n\
         x-request-id: req-7\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The SSE payloads (after `data: `) of a chunked response, in order.
fn events(response: &str) -> Vec<String> {
    response
        .split("data: ")
        .skip(1)
        .map(|e| e.split("\n\n").next().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_chat_and_completions_over_tcp() {
    let stamps_path =
        std::env::temp_dir().join(format!("simserve-e2e-{}.ndjson", std::process::id()));
    let stamps = Arc::new(StampLog::create(&stamps_path, Default::default()).unwrap());
    let config = Config::from_ms("sim-model", 20.0, 2.0).unwrap();
    let server = Server::bind(("127.0.0.1", 0), config, Some(stamps.clone()))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    assert!(server
        .base_url()
        .unwrap()
        .ends_with(&format!(":{}/v1", addr.port())));
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));

    // Chat, streamed, with usage.
    let body = r#"{"model":"any","messages":[{"role":"user","content":"one two three"}],
        "max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}"#;
    let started = std::time::Instant::now();
    let response = exchange(addr, &post("/v1/chat/completions", body)).await;
    let elapsed = started.elapsed();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let lower = response.to_ascii_lowercase();
    assert!(
        lower.contains("content-type: text/event-stream"),
        "{response}"
    );
    assert!(lower.contains("x-request-id: req-7"), "{response}");
    let ev = events(&response);
    // role + 5 tokens + usage + [DONE]
    assert_eq!(ev.len(), 8, "{response}");
    assert_eq!(ev.last().map(String::as_str), Some("[DONE]"));
    let mut text = String::new();
    for e in &ev[..7] {
        let v: serde_json::Value =
            serde_json::from_str(e).unwrap_or_else(|err| panic!("{e}: {err}"));
        assert_eq!(v["model"], "sim-model");
        if let Some(t) = v["choices"][0]["delta"]["content"].as_str() {
            text.push_str(t);
        }
    }
    assert_eq!(text, " the quick brown fox jumps");
    assert!(ev[6].contains(r#""prompt_tokens":3,"completion_tokens":5,"total_tokens":8"#));
    assert!(response.ends_with("0\r\n\r\n"), "chunked body ends cleanly");
    assert!(
        elapsed >= Duration::from_millis(28),
        "{elapsed:?}: 20 ms + 4 x 2 ms"
    );

    // Completions, streamed, without usage.
    let body = r#"{"prompt":[1,2,3],"max_tokens":3,"stream":true,"ignore_eos":true}"#;
    let response = exchange(addr, &post("/v1/completions", body)).await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let ev = events(&response);
    assert_eq!(ev.len(), 4, "{response}");
    assert!(ev[2].contains(r#""finish_reason":"length""#));
    assert_eq!(ev[3], "[DONE]");

    // Not streamed: the whole answer with usage.
    let response = exchange(
        addr,
        &post("/v1/completions", r#"{"prompt":"a b","max_tokens":2}"#),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let json = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["choices"][0]["text"], " the quick");
    assert_eq!(v["usage"]["total_tokens"], 4);

    // Errors and the other routes.
    let response = exchange(addr, &post("/v1/completions", "{not json")).await;
    assert!(response.starts_with("HTTP/1.1 400 "), "{response}");
    assert!(
        response.contains(r#""type":"invalid_request_error","code":400"#),
        "{response}"
    );
    let response = exchange(addr, &post("/v2/nothing", "{}")).await;
    assert!(response.starts_with("HTTP/1.1 404 "), "{response}");
    let get = |path: &str| format!("GET {path} HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n");
    let response = exchange(addr, &get("/v1/completions")).await;
    assert!(response.starts_with("HTTP/1.1 405 "), "{response}");
    let response = exchange(addr, &get("/v1/models")).await;
    assert!(response.starts_with("HTTP/1.1 200 "), "{response}");
    assert!(response.contains(r#"{"object":"list","data":[{"id":"sim-model","object":"model","created":0,"owned_by":"tokenpipe"}]}"#));
    let response = exchange(addr, &get("/health")).await;
    assert!(response.starts_with("HTTP/1.1 200 "), "{response}");

    let _ = stop.send(());
    serving.await.unwrap();
    stamps.flush().unwrap();
    let lines = std::fs::read_to_string(&stamps_path).unwrap();
    let _ = std::fs::remove_file(&stamps_path);
    let all: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(all[0]["type"], "header", "{lines}");
    assert_eq!(all[0]["tool"], "simserve", "{lines}");
    let stamps: Vec<&serde_json::Value> = all.iter().filter(|v| v["type"] == "stamp").collect();
    // Three generations and one bad request, in the order they ended.
    assert_eq!(stamps.len(), 4, "{lines}");
    let chat = &stamps[0];
    assert_eq!(chat["request_id"], "req-7");
    assert_eq!(chat["tokens"], 5);
    let received = chat["received_ns"].as_u64().unwrap();
    let first = chat["first_token_ns"].as_u64().unwrap();
    let last = chat["last_token_ns"].as_u64().unwrap();
    assert!(
        first >= received + 20_000_000,
        "first token not before its deadline"
    );
    assert!(
        last >= received + 28_000_000,
        "last token not before its deadline"
    );
    assert_eq!(stamps[3]["tokens"], 0);
    assert!(stamps[3]["first_token_ns"].is_null());
}

#[tokio::test]
async fn keep_alive_serves_several_streams_on_one_connection() {
    let config = Config::from_ms("m", 1.0, 1.0).unwrap();
    let server = Server::bind(("127.0.0.1", 0), config, None).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run(std::future::pending()));
    let mut conn = TcpStream::connect(addr).await.unwrap();
    let body = r#"{"prompt":"x","max_tokens":2,"stream":true}"#;
    let request = format!(
        "POST /v1/completions HTTP/1.1\r\nhost: t\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    for _ in 0..3 {
        conn.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        while !raw.ends_with(b"0\r\n\r\n") {
            let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut buf))
                .await
                .expect("answer in time")
                .unwrap();
            assert!(n > 0, "connection closed");
            raw.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8(raw).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert_eq!(events(&text).len(), 3, "{text}");
    }
}

#[tokio::test]
async fn a_client_that_leaves_mid_stream_gets_a_partial_stamp() {
    let path = std::env::temp_dir().join(format!("simserve-e2e-cut-{}.ndjson", std::process::id()));
    let stamps = Arc::new(StampLog::create(&path, Default::default()).unwrap());
    let config = Config::from_ms("m", 1.0, 50.0).unwrap();
    let server = Server::bind(("127.0.0.1", 0), config, Some(stamps.clone()))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run(std::future::pending()));
    let mut conn = TcpStream::connect(addr).await.unwrap();
    let body = r#"{"prompt":"x","max_tokens":100,"stream":true}"#;
    let request = format!(
        "POST /v1/completions HTTP/1.1\r\nhost: t\r\nx-request-id: cut\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&raw).contains("\"text\"") {
        let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut buf))
            .await
            .expect("first token in time")
            .unwrap();
        assert!(n > 0, "connection closed");
        raw.extend_from_slice(&buf[..n]);
    }
    drop(conn);
    // The server notices the closed socket while waiting for token 2 and writes the stamp.
    let mut line = String::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        stamps.flush().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        if let Some(stamp) = text.lines().find(|l| l.contains("\"type\":\"stamp\"")) {
            line = stamp.to_string();
            break;
        }
    }
    let _ = std::fs::remove_file(&path);
    let stamp: serde_json::Value =
        serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    assert_eq!(stamp["request_id"], "cut");
    let tokens = stamp["tokens"].as_u64().unwrap();
    assert!((1..100).contains(&tokens), "{stamp}");
}
