//! A thinking model's stream from a real vLLM: the tiny model's thinking variant (`think/` of
//! scripts/real/tiny_model.py: `<think>` and `</think>` as tokens, a template whose generation
//! prompt opens `<think>`), served with `--reasoning-parser deepseek_r1`, so that vLLM sends
//! what the model writes as `reasoning` (its name for the member since 0.11), and each request's
//! `thinking_token_budget` of 4 (fire's `--extra-body`) makes the engine force `</think>`, after
//! which the stream goes on in `content`.
//!
//! vLLM's usage counts reasoning tokens only between a `<think>` and a `</think>` the model
//! wrote, so with the thinking opened by the template it says 0: fire must not believe it, and
//! counts the reasoning events (docs/real-engines.md, "vLLM").
//!
//! Its own server, on a free port, beside the one `make test-real-vllm` starts (whose model has
//! no thinking tokens): the venv comes from `TOKENPIPE_REAL_DIR`, the model from
//! `TOKENPIPE_TINY_DIR`, which the make target sets.

use crate::common::real::*;
use serde_json::json;
use std::process::Command;
use std::time::Duration;

/// The thinking budget each request asks for.
const BUDGET: u64 = 4;

/// vLLM serving the thinking model with DeepSeek-R1's reasoning parser.
fn start() -> OwnServer {
    let var = |name: &str| {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: run `make test-real-vllm`"))
    };
    let mut command = Command::new(format!("{}/vllm-venv/bin/vllm", var("TOKENPIPE_REAL_DIR")));
    command
        .args(["serve", &format!("{}/think", var("TOKENPIPE_TINY_DIR"))])
        .args(["--served-model-name", "tiny", "--max-model-len", "4096"])
        .args(["--enforce-eager", "--reasoning-parser", "deepseek_r1"])
        .env("VLLM_CPU_KVCACHE_SPACE", "1");
    OwnServer::start(command, "thinking vLLM", Duration::from_secs(300))
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn a_thinking_model_streams_reasoning_before_the_answer() {
    let server = start();
    let mut real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    real.url = server.url.clone();

    // What vLLM sends, fetched with curl: the reasoning in `reasoning`, then `content`, and a
    // usage whose reasoning_tokens is 0.
    let body = json!({
        "model": "tiny",
        "messages": [{"role": "user", "content": "a question"}],
        "max_tokens": 16,
        "ignore_eos": true,
        "stream": true,
        "stream_options": {"include_usage": true},
        "thinking_token_budget": BUDGET,
    });
    let chunks = raw_stream(&real.url, "/chat/completions", &body);
    let deltas: Vec<&serde_json::Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0).map(|choice| &choice["delta"]))
        .collect();
    let reasoning = deltas.iter().filter(|d| d["reasoning"].is_string()).count() as u64;
    assert!((1..=BUDGET).contains(&reasoning), "{chunks:?}");
    assert!(
        deltas
            .iter()
            .any(|d| d["content"].as_str().is_some_and(|c| !c.is_empty())),
        "an answer after the reasoning: {chunks:?}"
    );
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(
        usage["completion_tokens_details"]["reasoning_tokens"], 0,
        "vLLM counted the reasoning this time: docs/real-engines.md must say so ({usage})"
    );

    let budget = format!("{{\"thinking_token_budget\":{BUDGET}}}");
    let run = thinking_run(&real, &["--extra-body", &budget]);
    check_reasoning_then_answer(&run, 4, BUDGET);
}
