//! `/metrics` and `/tokenize` over a real socket: the prompt counts of `/tokenize`, of the
//! answers' `usage` and of `vllm:prompt_tokens_total` agree, and the exposition reads back.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokenpipe_format::{parse_exposition, sum_series};
use tokenpipe_sim::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn exchange(addr: SocketAddr, request: String) -> String {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut raw))
        .await
        .expect("server answered in time")
        .unwrap();
    String::from_utf8(raw).unwrap()
}

async fn post(addr: SocketAddr, path: &str, body: &str) -> String {
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(addr, request).await
}

/// The body of a response that is not chunked.
fn body(response: &str) -> &str {
    response.split("\r\n\r\n").nth(1).unwrap_or_default()
}

async fn scrape(addr: SocketAddr) -> (String, BTreeMap<String, f64>) {
    let response = exchange(
        addr,
        "GET /metrics HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n".into(),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response
            .to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{response}"
    );
    let text = body(&response).to_string();
    let samples = parse_exposition(&text, "vllm:");
    (text, samples)
}

fn total(samples: &BTreeMap<String, f64>, name: &str) -> f64 {
    sum_series(samples, name, |_| true).unwrap_or_else(|| panic!("no {name}"))
}

/// An in-process simserve of model `sim-model` (TTFT 5 ms, ITL 1 ms) serving until the test
/// ends.
async fn start() -> SocketAddr {
    let config = Config::from_ms("sim-model", 5.0, 1.0).unwrap();
    let server = Server::bind(("127.0.0.1", 0), config, None).await.unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.run(std::future::pending()));
    addr
}

/// `usage.prompt_tokens` of a streamed answer's usage chunk.
fn streamed_usage(response: &str) -> serde_json::Value {
    let usage = response
        .split("data: ")
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(e.split("\n\n").next()?).ok())
        .find(|v| !v["usage"].is_null())
        .unwrap_or_else(|| panic!("no usage in {response}"));
    usage["usage"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokenize_usage_and_metrics_agree() {
    let addr = start().await;

    let (_, empty) = scrape(addr).await;
    assert_eq!(total(&empty, "vllm:prompt_tokens_total"), 0.0);
    assert_eq!(total(&empty, "vllm:num_requests_running"), 0.0);

    let prompt = r#""one two  three four five""#;
    let messages =
        r#"[{"role":"system","content":"be brief"},{"role":"user","content":"hi there"}]"#;
    let mut expected_prompt = 0;
    for (path, field, value) in [
        ("/v1/completions", "prompt", prompt),
        ("/v1/chat/completions", "messages", messages),
    ] {
        let t = post(
            addr,
            "/tokenize",
            &format!(r#"{{"model":"m","{field}":{value}}}"#),
        )
        .await;
        assert!(t.starts_with("HTTP/1.1 200"), "{t}");
        let t: serde_json::Value = serde_json::from_str(body(&t)).unwrap();
        let count = t["count"].as_u64().unwrap();
        assert_eq!(t["tokens"].as_array().unwrap().len() as u64, count);
        assert!(t["max_model_len"].as_u64().unwrap() > 0);

        let streamed = format!(
            r#"{{"{field}":{value},"max_tokens":3,"stream":true,"stream_options":{{"include_usage":true}}}}"#
        );
        let usage = streamed_usage(&post(addr, path, &streamed).await);
        assert_eq!(usage["prompt_tokens"].as_u64(), Some(count), "{path}");
        assert_eq!(usage["completion_tokens"], 3);
        let whole = format!(r#"{{"{field}":{value},"max_tokens":2}}"#);
        let whole: serde_json::Value =
            serde_json::from_str(body(&post(addr, path, &whole).await)).unwrap();
        assert_eq!(
            whole["usage"]["prompt_tokens"].as_u64(),
            Some(count),
            "{path}"
        );
        expected_prompt += 2 * count;
    }
    assert_eq!(expected_prompt, 2 * 5 + 2 * 4);

    let (text, s) = scrape(addr).await;
    assert_eq!(
        total(&s, "vllm:prompt_tokens_total"),
        expected_prompt as f64
    );
    assert_eq!(total(&s, "vllm:generation_tokens_total"), 2.0 * (3.0 + 2.0));
    assert_eq!(
        total(&s, "vllm:request_prompt_tokens_sum"),
        expected_prompt as f64
    );
    let length = sum_series(&s, "vllm:request_success_total", |k| {
        k.contains("finished_reason=\"length\"")
    });
    assert_eq!(length, Some(4.0));
    assert_eq!(total(&s, "vllm:time_to_first_token_seconds_count"), 4.0);
    // Two streams of 3 tokens: 2 gaps each; answers sent whole add none.
    assert_eq!(total(&s, "vllm:inter_token_latency_seconds_count"), 4.0);
    assert_eq!(total(&s, "vllm:num_requests_running"), 0.0);
    assert!(text.contains("model_name=\"sim-model\""), "{text}");
    for family in ["gauge", "counter", "histogram"] {
        assert!(text.contains(&format!(" {family}\n")), "{family}");
    }

    let bad = post(addr, "/tokenize", r#"{"prompt":5}"#).await;
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    let wrong = exchange(
        addr,
        "GET /tokenize HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n".into(),
    )
    .await;
    assert!(wrong.starts_with("HTTP/1.1 405"), "{wrong}");
}

/// A stream with `header` (an `x-tokenpipe-fault` value) asking for `tokens` tokens.
async fn faulted(addr: SocketAddr, header: &str, tokens: u64) -> String {
    let body = format!(r#"{{"prompt":"a b c","max_tokens":{tokens},"stream":true}}"#);
    let request = format!(
        "POST /v1/completions HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n\
         x-tokenpipe-fault: {header}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(addr, request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_count_as_vllm_counts_them() {
    let addr = start().await;

    // Refused before the engine: counted nowhere.
    let refused = faulted(addr, "http=503", 5).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    // Reset after 3 tokens: its prompt and 3 tokens counted, an abort, no E2E.
    let _ = faulted(addr, "reset;after=3", 8).await;
    // A stall that ends: a whole answer, counted as finished by length.
    let _ = faulted(addr, "stall=30;after=1", 4).await;

    let (_, s) = scrape(addr).await;
    let reason = |r: &str| {
        let label = format!("finished_reason=\"{r}\"");
        sum_series(&s, "vllm:request_success_total", |k| k.contains(&label)).unwrap()
    };
    assert_eq!((reason("length"), reason("abort")), (1.0, 1.0));
    assert_eq!(total(&s, "vllm:prompt_tokens_total"), 6.0);
    assert_eq!(total(&s, "vllm:generation_tokens_total"), 3.0 + 4.0);
    assert_eq!(total(&s, "vllm:time_to_first_token_seconds_count"), 2.0);
    assert_eq!(total(&s, "vllm:e2e_request_latency_seconds_count"), 1.0);
    assert_eq!(total(&s, "vllm:request_generation_tokens_sum"), 4.0);
    // The stall is one of the finished stream's three gaps.
    assert_eq!(
        total(&s, "vllm:inter_token_latency_seconds_count"),
        2.0 + 3.0
    );
    let itl_sum = total(&s, "vllm:inter_token_latency_seconds_sum");
    assert!(itl_sum >= 0.030, "{itl_sum}");
    assert_eq!(total(&s, "vllm:num_requests_running"), 0.0);
}
