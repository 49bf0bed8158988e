//! A thinking model's stream from a real `llama-server`: the tiny model served with a chat
//! template whose generation prompt opens `<think>` (tests/fixtures/real/thinking.jinja), so
//! llama.cpp's reasoning parser (`--reasoning-format deepseek`) sends what the model writes as
//! `reasoning_content`, and `--reasoning-budget 4` makes the server close the thinking after
//! four tokens, whatever the random model writes. The stream then goes on in `content`: a real
//! reasoning-then-answer stream, read by the whole pipe.
//!
//! Its own server, on a free port, beside the one `make test-real-llama` starts (whose answers
//! carry no reasoning); the binary and the model come from `TOKENPIPE_REAL_DIR` and
//! `TOKENPIPE_TINY_DIR`, which the make target sets.

use crate::common::real::*;
use crate::common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A llama-server with the thinking template, stopped when dropped.
struct ThinkingServer {
    child: Child,
    url: String,
}

impl Drop for ThinkingServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> ThinkingServer {
    let var = |name: &str| {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: run `make test-real-llama`"))
    };
    let bin = format!("{}/bin/llama-server", var("TOKENPIPE_REAL_DIR"));
    let model = format!("{}/tiny.gguf", var("TOKENPIPE_TINY_DIR"));
    let template = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/real/thinking.jinja"
    );
    let port = free_port().to_string();
    let child = Command::new(&bin)
        .args(["--host", "127.0.0.1", "--port", &port, "--model", &model])
        .args(["--alias", "tiny", "--ctx-size", "4096", "--parallel", "2"])
        .args(["--jinja", "--chat-template-file", template])
        .args(["--reasoning-format", "deepseek", "--reasoning-budget", "4"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let server = ThinkingServer {
        child,
        url: format!("http://127.0.0.1:{port}/v1"),
    };
    let started = Instant::now();
    loop {
        let up = Command::new("curl")
            .args(["-sf", "-o", "/dev/null", &format!("{}/models", server.url)])
            .status()
            .is_ok_and(|s| s.success());
        if up {
            return server;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the thinking llama-server did not answer in 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn a_thinking_template_streams_reasoning_before_the_answer() {
    let server = start();
    let mut real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    real.url = server.url.clone();
    let options = PipeOptions {
        label: "thinking",
        seed: "7",
        server_metrics: false,
        fire_status: 0,
    };
    let arrivals = [
        "--concurrency",
        "2",
        "-n",
        "4",
        "--input-tokens",
        "32",
        "--output-tokens",
        "16",
    ];
    let run = pipe_with(&real, &options, &arrivals, &["--api", "chat"]);
    let dones = run.dones();
    assert_eq!(dones.len(), 4);
    for d in &dones {
        assert_eq!(d["ok"], true, "{d}");
        // llama-server's usage has no reasoning_tokens: fire counts the reasoning events.
        let reasoning = d["reasoning_tokens"].as_u64().unwrap_or(0);
        assert!((1..=4).contains(&reasoning), "{d}");
        let completion = d["completion_tokens"].as_u64().unwrap();
        assert_eq!(
            d["answer_tokens"].as_u64(),
            Some(completion - reasoning),
            "{d}"
        );
        let kinds: Vec<bool> = run
            .events
            .iter()
            .filter(|r| r["type"] == "token" && r["id"] == d["id"])
            .map(|t| t["reasoning"] == Value::Bool(true))
            .collect();
        let thinking = kinds.iter().take_while(|&&r| r).count();
        assert_eq!(
            thinking as u64, reasoning,
            "reasoning events first: {kinds:?}"
        );
        assert!(
            kinds.len() > thinking,
            "an answer after the reasoning: {kinds:?}"
        );
        assert!(kinds[thinking..].iter().all(|&r| !r), "{kinds:?}");
    }
    let s = &run.summary;
    let ms = |key: &str| s[key].as_f64().unwrap_or_else(|| panic!("{key} in {s}"));
    assert!(ms("ttfa_p50_ms") > ms("ttft_p50_ms"), "{s}");
    assert!(ms("reasoning_duration_p50_ms") > 0.0, "{s}");
    let reasoning: u64 = dones
        .iter()
        .map(|d| d["reasoning_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(s["reasoning_tokens"].as_u64(), Some(reasoning), "{s}");
}
