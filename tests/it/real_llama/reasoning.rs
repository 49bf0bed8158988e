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
use std::process::Command;
use std::time::Duration;

/// A llama-server with the thinking template.
fn start() -> OwnServer {
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
    let mut command = Command::new(&bin);
    command
        .args(["--model", &model])
        .args(["--alias", "tiny", "--ctx-size", "4096", "--parallel", "2"])
        .args(["--jinja", "--chat-template-file", template])
        .args(["--reasoning-format", "deepseek", "--reasoning-budget", "4"]);
    OwnServer::start(command, "thinking llama-server", Duration::from_secs(60))
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn a_thinking_template_streams_reasoning_before_the_answer() {
    let server = start();
    let mut real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    real.url = server.url.clone();
    let run = thinking_run(&real, &[]);
    // llama-server's usage has no reasoning_tokens: fire counts the reasoning events.
    check_reasoning_then_answer(&run, 4, 4);
}
