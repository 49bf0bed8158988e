//! simserve's engine flags through the real binary: profiles, the batching limits and costs,
//! the prefix cache, and the context-length guard. Timings are asserted as lower bounds (a
//! token is never early) or with wide margins, so a busy machine cannot fail them.

use crate::common;

use common::{bin, Server};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// Posts a non-streamed completion of `max_tokens` for `words` distinct words (a prompt
/// starting with `tag`); returns the status line and body, and how long it took.
fn complete(server: &Server, tag: &str, words: usize, max_tokens: u64) -> (String, Duration) {
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/v1");
    let prompt: Vec<String> = (0..words).map(|i| format!("{tag}{i}")).collect();
    let body =
        serde_json::json!({"prompt": prompt.join(" "), "max_tokens": max_tokens}).to_string();
    let started = Instant::now();
    let mut conn = TcpStream::connect(addr).expect("connect");
    write!(
        conn,
        "POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("read");
    (answer, started.elapsed())
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn the_spark_profile_takes_its_prefill_time() {
    let server = Server::start(&["--profile", "spark-gpt-oss-120b"]);
    let (answer, took) = complete(&server, "a", 1024, 1);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // 1,024 prompt tokens at about 3,500 t/s and one step: about 310 ms, never less.
    assert!(took >= ms(300), "{took:?}");
}

#[test]
fn a_shared_prefix_skips_its_prefill_unless_the_cache_is_off() {
    // 2,000 prompt tokens at 2,000 t/s: one second of prefill.
    let flags = ["--profile", "small-gpu", "--prefill-tps", "2000"];
    let server = Server::start(&flags);
    let (_, cold) = complete(&server, "p", 2000, 1);
    let (answer, warm) = complete(&server, "p", 2000, 1);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(cold >= ms(1000), "{cold:?}");
    assert!(
        warm < ms(500),
        "the cached prefix is not prefilled again: {warm:?}"
    );
    // Another prompt (a salt in front changes every block) prefills in full.
    let (_, salted) = complete(&server, "q", 2000, 1);
    assert!(salted >= ms(1000), "{salted:?}");
    let off = Server::start(&[&flags[..], &["--prefix-cache", "off"]].concat());
    let _ = complete(&off, "p", 2000, 1);
    let (_, again) = complete(&off, "p", 2000, 1);
    assert!(again >= ms(1000), "{again:?}");
}

#[test]
fn max_num_seqs_queues_and_the_decode_curve_sets_the_pace() {
    let server = Server::start(&[
        "--decode-step-ms",
        "50+0",
        "--prefill-tps",
        "1000000",
        "--max-num-seqs",
        "1",
    ]);
    let started = Instant::now();
    std::thread::scope(|s| {
        let a = s.spawn(|| complete(&server, "a", 10, 4));
        let b = s.spawn(|| complete(&server, "b", 10, 4));
        for h in [a, b] {
            let (answer, _) = h.join().expect("request thread");
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        }
    });
    // One at a time, four steps of 50 ms each: both done no sooner than 400 ms.
    assert!(started.elapsed() >= ms(400), "{:?}", started.elapsed());
}

#[test]
fn a_small_step_budget_prefills_in_chunks() {
    let server = Server::start(&[
        "--decode-step-ms",
        "10+0",
        "--prefill-tps",
        "1000000",
        "--max-num-batched-tokens",
        "100",
    ]);
    // 2,000 tokens in chunks of 100: twenty steps of at least 10 ms before the first token.
    let (answer, took) = complete(&server, "c", 2000, 1);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(took >= ms(200), "{took:?}");
}

#[test]
fn a_request_longer_than_the_context_gets_vllms_400() {
    let server = Server::start(&["--kv-cache-tokens", "100"]);
    let (answer, _) = complete(&server, "w", 90, 20);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("This model's maximum context length is 100 tokens. However, you requested 110 tokens (90 in the messages, 20 in the completion)."),
        "{answer}"
    );
    let (fits, _) = complete(&server, "w", 80, 20);
    assert!(fits.starts_with("HTTP/1.1 200"), "{fits}");
}

#[test]
fn mixed_or_unknown_engine_flags_are_refused() {
    for (args, says) in [
        (&["--profile", "h100"][..], "unknown profile `h100`"),
        (
            &["--profile", "spark-gpt-oss-120b", "--ttft-ms", "5"],
            "--ttft-ms",
        ),
        (&["--itl-ms", "3", "--max-num-seqs", "4"], "--max-num-seqs"),
        (&["--decode-step-ms", "8+x"], "`x`"),
        (&["--prefix-cache", "maybe"], "on or off"),
    ] {
        let out = Command::new(bin("simserve"))
            .args(["--port", "0"])
            .args(args)
            .output()
            .expect("run simserve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
