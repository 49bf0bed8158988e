//! The answers a client must recognise as unusable, on the wire: a required API key (401), a
//! 200 that is not an event stream (`json`, `html` faults), and a response head held back
//! (`--headers-delay-ms`). The server runs inside the test; the client speaks raw HTTP/1.1.

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokenpipe_sim::access::Access;
use tokenpipe_sim::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn serve(access: Access) -> SocketAddr {
    let mut config = Config::from_ms("m", 5.0, 2.0).unwrap();
    config.access = access;
    let server = Server::bind(("127.0.0.1", 0), config, None).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run(std::future::pending()));
    addr
}

/// Sends one request (`METHOD PATH`, then these extra header lines) on a connection closed
/// after it, and reads the whole answer.
async fn send_with(addr: SocketAddr, line: &str, headers: &str, body: &str) -> String {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{line} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\nconnection: close\r\n\
         {headers}content-length: {}\r\n\r\n{body}",
        body.len(),
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), conn.read_to_end(&mut raw))
        .await
        .expect("an answer within 20 s")
        .unwrap();
    String::from_utf8_lossy(&raw).into_owned()
}

async fn send(addr: SocketAddr, line: &str, body: &str) -> String {
    send_with(addr, line, "", body).await
}

async fn with_key(addr: SocketAddr, line: &str, key: &str, body: &str) -> String {
    send_with(
        addr,
        line,
        &format!("authorization: Bearer {key}\r\n"),
        body,
    )
    .await
}

const STREAMED: &str = r#"{"prompt":"a b","max_tokens":3,"stream":true}"#;

#[tokio::test]
async fn a_required_key_is_checked_on_every_v1_route_but_health() {
    let addr = serve(Access {
        api_key: Some("sk-sim".into()),
        ..Access::default()
    })
    .await;
    let refused = send(addr, "POST /v1/completions", STREAMED).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(
        refused.contains(r#""error":{"message":"Incorrect API key"#),
        "{refused}"
    );
    assert!(send(addr, "GET /v1/models", "")
        .await
        .starts_with("HTTP/1.1 401"));
    assert!(send(addr, "GET /health", "")
        .await
        .starts_with("HTTP/1.1 200"));
    let wrong = with_key(addr, "GET /v1/models", "sk-other", "").await;
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
    let models = with_key(addr, "GET /v1/models", "sk-sim", "").await;
    assert!(models.starts_with("HTTP/1.1 200"), "{models}");
    let answer = with_key(addr, "POST /v1/completions", "sk-sim", STREAMED).await;
    assert!(answer.contains("text/event-stream"), "{answer}");
    assert!(answer.contains("data: [DONE]"), "{answer}");
}

#[tokio::test]
async fn json_and_html_faults_answer_200_without_a_stream() {
    let addr = serve(Access::default()).await;
    let json = send(
        addr,
        "POST /v1/completions",
        r#"{"prompt":"a b","max_tokens":3,"stream":true,"tokenpipe_fault":"json"}"#,
    )
    .await;
    assert!(json.starts_with("HTTP/1.1 200"), "{json}");
    assert!(json.contains("content-type: application/json"), "{json}");
    assert!(!json.contains("data:"), "{json}");
    let body = json.split("\r\n\r\n").nth(1).unwrap();
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "length", "{v}");
    let html = send(
        addr,
        "POST /v1/chat/completions",
        r#"{"messages":[{"role":"user","content":"x"}],"stream":true,"tokenpipe_fault":"html"}"#,
    )
    .await;
    assert!(html.starts_with("HTTP/1.1 200"), "{html}");
    assert!(html.contains("content-type: text/html"), "{html}");
    assert!(html.contains("<!DOCTYPE html>"), "{html}");
}

#[tokio::test]
async fn response_heads_wait_for_the_headers_delay() {
    let addr = serve(Access {
        headers_delay: Duration::from_millis(300),
        ..Access::default()
    })
    .await;
    let start = Instant::now();
    let answer = send(addr, "POST /v1/completions", STREAMED).await;
    // A lower bound only: a busy machine makes the wait longer, never shorter.
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert!(answer.contains("data: [DONE]"), "{answer}");
}
