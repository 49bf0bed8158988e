//! The whole pipe against a real llama.cpp `llama-server` serving the tiny model
//! (docs/real-engines.md): both APIs, a closed loop, a Poisson open loop and multi-turn
//! sessions, with prompts of exact lengths from the model's own `tokenizer.json`.
//!
//! Every request must succeed with exactly `max_tokens` output tokens (llama-server honours
//! `ignore_eos`), the prompt the server counted must be exactly what `arrivals` promised (plus
//! the chat template's tokens, counted here with the same tokenizer), a chat stream's role chunk
//! must not count as a token, and the client's TPOT must agree with the server's own decode time
//! per token from its `/metrics` counters.
//!
//! These tests are ignored by `cargo test`: `make test-real-llama` builds the server, makes the
//! model, starts the server and runs them with `--ignored`, passing `TOKENPIPE_LLAMA_URL` (the
//! server's base URL, `…/v1`) and `TOKENPIPE_TINY_DIR` (the model directory).

mod reasoning;

use crate::common::real;
use real::*;
use serde_json::Value;
use std::sync::Mutex;

/// One run at a time: the server's counters must see one run's requests only.
static SERVER: Mutex<()> = Mutex::new(());

/// Every request ended well, with exactly `max_tokens` output tokens in fire's records, in the
/// server's usage and in reduce's totals, and its prompt counted as `expected_prompt` says.
fn check_counts(run: &Run, expected_prompt: impl Fn(&Value, &Value) -> u64) {
    let dones = run.dones();
    assert_eq!(dones.len(), run.requests.len());
    let mut output = 0;
    for d in &dones {
        let req = &run.requests[&d["id"].as_u64().unwrap()];
        assert_eq!(d["ok"], true, "{d}");
        assert_eq!(d["finish_reason"], "length", "{d}");
        let max_tokens = req["max_tokens"].as_u64().unwrap();
        assert_eq!(d["completion_tokens"].as_u64(), Some(max_tokens), "{d}");
        assert_eq!(
            d["prompt_tokens"].as_u64(),
            Some(expected_prompt(req, d)),
            "prompt tokens of {req}"
        );
        // One token record per content event; usage on the last chunk only means one token
        // each, and a merged UTF-8 character makes fewer events than tokens, never more.
        let tokens: Vec<&Value> = run
            .events
            .iter()
            .filter(|r| r["type"] == "token" && r["id"] == d["id"])
            .collect();
        let events = d["events"].as_u64().unwrap();
        assert!(events <= max_tokens && events >= max_tokens / 2, "{d}");
        assert_eq!(
            tokens.iter().filter(|t| t.get("empty").is_none()).count() as u64,
            events
        );
        output += max_tokens;
    }
    let s = &run.summary;
    assert_eq!(s["requests_ok"].as_u64(), Some(dones.len() as u64), "{s}");
    assert_eq!(s["requests_failed"].as_u64(), Some(0), "{s}");
    assert_eq!(s["output_tokens"].as_u64(), Some(output), "{s}");
    assert_eq!(
        run.server_delta("llamacpp:tokens_predicted_total"),
        output as f64
    );
    assert_eq!(s["server_generation_tokens"].as_u64(), Some(output), "{s}");
}

/// The client's timing against llama-server's own counters (it has no histograms).
///
/// TPOT: llama-server adds, per request, the time from its prompt's end to its last token
/// (`llamacpp:tokens_predicted_seconds_total`) and its tokens (`…tokens_predicted_total`);
/// the first token comes with the prompt, so a request of `n` tokens took `n − 1` decode steps.
/// All requests have the same length here, so the token-weighted server figure and the request
/// mean of the client's TPOT are the same quantity. The client reads each token a little after
/// the server made it; only a difference between that delay on the first and on the last token
/// separates the two figures. On a quiet machine they agree within 1 %; on a busy one the
/// client may wait tens of milliseconds for a CPU just when a first token arrives, so the bound
/// is 10 % plus 50 ms spread over the `n − 1` steps.
///
/// TTFT: `llamacpp:prompt_seconds_total` adds the wall time of the batches that computed
/// prompts. Each such batch lies inside the TTFT of a request whose prompt it computed, and the
/// batches do not overlap, so the server's prompt time per request is a lower bound of the
/// client's mean TTFT. One request at a time (`alone`), each batch is one request's prompt, and
/// the client's TTFT exceeds it by the HTTP, tokenizing and queueing around it: within 25 %
/// plus 25 ms.
fn check_timing(run: &Run, alone: bool) {
    let n = run.requests.len() as f64;
    let seconds = run.server_delta("llamacpp:tokens_predicted_seconds_total");
    let tokens = run.server_delta("llamacpp:tokens_predicted_total");
    let steps = tokens / n - 1.0;
    let server_tpot = seconds / (tokens - n) * 1e3;
    let client_tpot = run.summary["tpot_mean_ms"].as_f64().unwrap();
    let server_prompt = run.server_delta("llamacpp:prompt_seconds_total") / n * 1e3;
    let client_ttft = run.summary["ttft_mean_ms"].as_f64().unwrap();
    eprintln!(
        "{n} requests: TPOT client {client_tpot:.3} ms, server {server_tpot:.3} ms; TTFT client \
         {client_ttft:.2} ms, server prompt time {server_prompt:.2} ms"
    );
    let tolerance = 0.10 * server_tpot + 50.0 / steps;
    assert!(
        (client_tpot - server_tpot).abs() <= tolerance,
        "client TPOT {client_tpot:.3} ms, server decode time per token {server_tpot:.3} ms"
    );
    assert!(
        server_prompt <= client_ttft,
        "server prompt time {server_prompt:.2} ms, client TTFT {client_ttft:.2} ms"
    );
    if alone {
        assert!(
            client_ttft <= 1.25 * server_prompt + 25.0,
            "client TTFT {client_ttft:.2} ms, server prompt time {server_prompt:.2} ms"
        );
    }
}

/// A plain prompt on the completions API is counted as arrivals promised.
fn completions_prompt(req: &Value, _: &Value) -> u64 {
    req["prompt_tokens"].as_u64().unwrap()
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn completions_closed_loop_exact_lengths_and_timing() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    let run = pipe(
        &real,
        "llama-server",
        &[
            "--concurrency",
            "4",
            "-n",
            "16",
            "--input-tokens",
            "300",
            "--output-tokens",
            "128",
        ],
        &["--api", "completions"],
    );
    check_counts(&run, completions_prompt);
    assert_eq!(
        run.server_delta("llamacpp:prompt_tokens_total")
            + run.server_delta("llamacpp:prompt_tokens_cached_total"),
        run.summary["input_tokens"].as_f64().unwrap()
    );
    check_timing(&run, false);
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn completions_one_at_a_time_ttft_and_tpot_agree_with_the_server() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    let run = pipe(
        &real,
        "llama-server",
        &[
            "--concurrency",
            "1",
            "-n",
            "8",
            "--input-tokens",
            "2000",
            "--output-tokens",
            "64",
        ],
        &["--api", "completions"],
    );
    check_counts(&run, completions_prompt);
    check_timing(&run, true);
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn chat_poisson_open_loop_exact_lengths_and_timing() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    let run = pipe(
        &real,
        "llama-server",
        &[
            "--rate",
            "10",
            "-n",
            "24",
            "--input-tokens",
            "200",
            "--output-tokens",
            "96",
        ],
        &["--api", "chat"],
    );
    let salt = run.salt();
    let overhead = real.chat_overhead();
    check_counts(&run, |req, _| {
        let promised = req["prompt_tokens"].as_u64().unwrap();
        let prompt = req["prompt"].as_str().unwrap();
        let rendered = real.count(&chatml(&[("user", &format!("{salt} {prompt}"))]));
        // The template's tokens add up with the message's: the count is promised + overhead.
        assert_eq!(rendered, promised + overhead, "{req}");
        rendered
    });
    check_timing(&run, false);
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn chat_multi_turn_prompts_carry_the_real_history() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    let run = pipe(
        &real,
        "llama-server",
        &multi_turn_args(),
        &["--api", "chat"],
    );
    assert_eq!(run.requests.len(), 12);
    check_counts(&run, |req, _| run.chat_history_tokens(&real, req));
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn completions_multi_turn_prompts_carry_the_real_history() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    let run = pipe(
        &real,
        "llama-server",
        &multi_turn_args(),
        &["--api", "completions"],
    );
    check_counts(&run, |req, _| run.completions_history_tokens(&real, req));
}

#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn chat_role_chunk_is_not_a_token() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    // Greedy decoding, one request: curl asks the same question and gets the same answer.
    let run = pipe(
        &real,
        "llama-server",
        &[
            "--concurrency",
            "1",
            "-n",
            "1",
            "--input-tokens",
            "50",
            "--output-tokens",
            "40",
        ],
        &["--api", "chat", "--temperature", "0"],
    );
    let done = run.dones()[0];
    let req = &run.requests[&0];
    let body = serde_json::json!({
        "messages": [{"role": "user", "content": format!("{} {}", run.salt(), req["prompt"].as_str().unwrap())}],
        "max_tokens": 40,
        "temperature": 0,
        "ignore_eos": true,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let chunks = raw_stream(&real.url, "/chat/completions", &body);
    // llama-server opens with a role chunk whose content is null.
    let first = &chunks[0]["choices"][0]["delta"];
    assert_eq!(first["role"], "assistant", "{}", chunks[0]);
    assert!(first["content"].is_null(), "{}", chunks[0]);
    let content: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(done["text"].as_str(), Some(content.concat().as_str()));
    // One token record per chunk with content, the role chunk not among them.
    assert_eq!(
        done["events"].as_u64(),
        Some(content.len() as u64),
        "{done}"
    );
    let first_token = run
        .events
        .iter()
        .find(|r| r["type"] == "token")
        .expect("a token record");
    assert!(first_token["at_ns"].as_u64() >= done["first_event_ns"].as_u64());
    // Usage comes in a chunk of its own, with no choices.
    let usage = chunks.last().unwrap();
    assert_eq!(
        usage["choices"].as_array().map(Vec::len),
        Some(0),
        "{usage}"
    );
    assert_eq!(usage["usage"]["completion_tokens"], 40);
}

/// What llama-server says of its slot cache: every usage carries
/// `prompt_tokens_details.cached_tokens`, a repeated prompt is served from the cache but its
/// last token, and reduce's usage figures agree with the server's own counters.
#[test]
#[ignore = "needs a real llama-server: make test-real-llama"]
fn cached_tokens_of_a_repeated_prompt_agree_with_the_servers_counters() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LLAMA_URL", "test-real-llama");
    let run = pipe(
        &real,
        "llama-server",
        &[
            "--concurrency",
            "1",
            "-n",
            "3",
            "--same-prompt",
            "--input-tokens",
            "40",
            "--output-tokens",
            "3",
        ],
        &["--api", "chat"],
    );
    let dones = run.dones();
    for d in &dones[1..] {
        let prompt = d["prompt_tokens"].as_u64().unwrap();
        assert_eq!(d["cached_tokens"].as_u64(), Some(prompt - 1), "{d}");
    }
    let s = &run.summary;
    let cached: u64 = dones
        .iter()
        .map(|d| d["cached_tokens"].as_u64().expect("cached_tokens"))
        .sum();
    assert_eq!(s["cached_prompt_tokens"].as_u64(), Some(cached), "{s}");
    assert_eq!(s["server_prefix_cache_hits"].as_u64(), Some(cached), "{s}");
    assert_eq!(
        s["server_prefix_cache_queries"].as_u64(),
        s["input_tokens"].as_u64(),
        "{s}"
    );
    assert_eq!(
        s["cache_hit_ratio"], s["server_prefix_cache_hit_ratio"],
        "{s}"
    );
    // No reasoning from this model's template: none of the reasoning members.
    assert!(s.get("reasoning_tokens").is_none(), "{s}");
}
