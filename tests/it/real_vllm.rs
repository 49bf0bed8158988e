//! The whole pipe against vLLM's CPU build serving the tiny model (docs/real-engines.md): both
//! APIs, a closed loop, a Poisson open loop and multi-turn sessions, with prompts of exact
//! lengths from the model's own `tokenizer.json`.
//!
//! Every request must succeed with exactly `max_tokens` output tokens (vLLM honours
//! `ignore_eos`), the prompt the server counted must be exactly what `arrivals` promised (plus
//! the chat template's tokens, counted here with the same tokenizer), a chat stream's role chunk
//! must not count as a token, and the client's TTFT and TPOT must agree with vLLM's own
//! `/metrics` histograms, in their means and in the bucket of their medians.
//!
//! These tests are ignored by `cargo test`: `make test-real-vllm` installs vLLM, makes the
//! model, starts the server and runs them with `--ignored`, passing `TOKENPIPE_VLLM_URL` (the
//! server's base URL, `…/v1`) and `TOKENPIPE_TINY_DIR` (the model directory).

mod reasoning;

use crate::common;
use crate::common::real;
use common::*;
use real::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// One run at a time: the server's histograms must see one run's requests only.
static SERVER: Mutex<()> = Mutex::new(());

impl Run {
    /// The run's observations of histogram `name` (seconds): each bucket's upper bound with the
    /// change of its cumulative count, `+Inf` left out, in increasing order.
    fn server_buckets(&self, name: &str) -> Vec<(f64, f64)> {
        let [before, after] = self.scrapes();
        let bucket = format!("{name}_bucket");
        let by_le = |s: &serde_json::Map<String, Value>| {
            let mut m: BTreeMap<String, f64> = BTreeMap::new();
            for (k, v) in s.iter().filter(|(k, _)| series_name(k) == bucket) {
                let le = series_label(k, "le").expect("a bucket's le");
                *m.entry(le.to_string()).or_default() += v.as_f64().unwrap();
            }
            m
        };
        let (before, after) = (by_le(before), by_le(after));
        let mut out: Vec<(f64, f64)> = after
            .iter()
            .filter(|(le, _)| le.as_str() != "+Inf")
            .map(|(le, n)| {
                let bound: f64 = le.parse().unwrap();
                (bound, n - before.get(le).copied().unwrap_or(0.0))
            })
            .collect();
        assert!(!out.is_empty(), "no buckets of {name}");
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// The bounds, in milliseconds, of the bucket of histogram `name` that holds the median of
    /// the run's observations (the lower bound of the first bucket is 0).
    fn server_median_bucket_ms(&self, name: &str) -> (f64, f64) {
        let count = self.server_delta(&format!("{name}_count"));
        assert!(count > 0.0, "no observations of {name}");
        let mut lower = 0.0;
        for (bound, cumulative) in self.server_buckets(name) {
            if cumulative >= count / 2.0 {
                return (lower * 1e3, bound * 1e3);
            }
            lower = bound;
        }
        (lower * 1e3, f64::INFINITY)
    }
}

/// Every request ended well, with exactly `max_tokens` output tokens in fire's records, in the
/// server's usage, in reduce's totals and in vLLM's counters, and its prompt counted as
/// `expected_prompt` says; vLLM's prompt counter equals reduce's input tokens.
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
        // vLLM sends one chunk per token, an empty one for a token whose text is held back
        // (part of a UTF-8 character) or skipped (a special token): fire's token records, empty
        // ones included, are one per chunk; those with text are its content events. When the
        // server's front end falls behind its engine (a busy CPU), vLLM merges the outputs not
        // yet sent into one chunk, so a few chunks may carry two tokens: never more records
        // than tokens, and usage stays exact.
        let tokens: Vec<&Value> = run
            .events
            .iter()
            .filter(|r| r["type"] == "token" && r["id"] == d["id"])
            .collect();
        let records = tokens.len() as u64;
        assert!(
            records <= max_tokens && records >= max_tokens * 9 / 10,
            "{records} token records for {max_tokens} tokens: {d}"
        );
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
        run.server_delta("vllm:generation_tokens_total"),
        output as f64
    );
    assert_eq!(s["server_generation_tokens"].as_u64(), Some(output), "{s}");
    assert_eq!(
        s["server_requests_succeeded"].as_u64(),
        Some(dones.len() as u64),
        "{s}"
    );
    // vLLM counts every prompt token, those its prefix cache held included.
    assert_eq!(s["server_prompt_tokens"], s["input_tokens"], "{s}");
}

/// The client's timing against vLLM's own histograms.
///
/// TPOT: vLLM observes, per request, the gap between consecutive outputs
/// (`vllm:inter_token_latency_seconds`, one per decode step, empty chunks included), so its
/// mean over a run whose requests all have one length is the client's mean TPOT: the client
/// reads each token a little after the server made it, and only a difference between that
/// delay on the first and on the last token separates the two. The bound is 10 % plus 50 ms
/// spread over the decode steps (on a busy machine the client may wait for a CPU just when a
/// first token arrives).
///
/// TTFT: vLLM measures from the moment its front end took the request to the first token's
/// hand-off; the client from its send to the first token's arrival, so the client's TTFT is the
/// larger by the HTTP handling and the stream's way back: at least the server's (less 1 %), at
/// most 25 % plus 25 ms more. On two cores the client sometimes waits hundreds of milliseconds
/// for a CPU while vLLM computes (seen: four requests in flight delayed by 200–800 ms, in runs
/// where fire also sent late); such a run's mean says nothing of the server, so when fire
/// reports that it did not keep up (`client_kept_up` false) only the lower bound and the
/// medians are checked.
///
/// Medians: vLLM's histograms (`vllm:time_to_first_token_seconds`,
/// `vllm:request_time_per_output_token_seconds`, with the finer buckets `scripts/real/vllm.sh`
/// asks for) place the server's median in one bucket. The client's median must lie in that
/// bucket or within one bucket width of it, and above it also by as much as the client's mean
/// exceeds the server's (HTTP, the chat template, tokenizing: each request's TTFT is the
/// server's plus such a delay, and a request that waited for a CPU makes the allowance larger,
/// never smaller).
fn check_timing(run: &Run) {
    let s = &run.summary;
    let n = run.requests.len() as f64;
    let steps = run.server_delta("vllm:generation_tokens_total") / n - 1.0;
    let f = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("no {k} in {s}"));
    let (client_tpot, server_itl) = (f("tpot_mean_ms"), f("server_itl_mean_ms"));
    let (client_ttft, server_ttft) = (f("ttft_mean_ms"), f("server_ttft_mean_ms"));
    let ttft_bucket = run.server_median_bucket_ms("vllm:time_to_first_token_seconds");
    let tpot_bucket = run.server_median_bucket_ms("vllm:request_time_per_output_token_seconds");
    let (ttft_p50, tpot_p50) = (f("ttft_p50_ms"), f("tpot_p50_ms"));
    let tpot_name = "vllm:request_time_per_output_token_seconds";
    let server_tpot = run.server_delta(&format!("{tpot_name}_sum"))
        / run.server_delta(&format!("{tpot_name}_count"))
        * 1e3;
    eprintln!(
        "{n} requests: TPOT client {client_tpot:.3} ms, server ITL {server_itl:.3} ms; TTFT \
         client {client_ttft:.2} ms, server {server_ttft:.2} ms; medians: TTFT client \
         {ttft_p50:.2} ms, server in {ttft_bucket:?} ms; TPOT client {tpot_p50:.3} ms, server in \
         {tpot_bucket:?} ms (its mean {server_tpot:.3} ms)"
    );
    let tolerance = 0.10 * server_itl + 50.0 / steps;
    assert!(
        (client_tpot - server_itl).abs() <= tolerance,
        "client TPOT {client_tpot:.3} ms, server inter-token latency {server_itl:.3} ms"
    );
    assert!(
        client_ttft >= 0.99 * server_ttft
            && (client_ttft <= 1.25 * server_ttft + 25.0 || s["client_kept_up"] == false),
        "client TTFT {client_ttft:.2} ms, server {server_ttft:.2} ms"
    );
    for (what, p50, offset, (lower, upper)) in [
        ("TTFT", ttft_p50, client_ttft - server_ttft, ttft_bucket),
        ("TPOT", tpot_p50, client_tpot - server_tpot, tpot_bucket),
    ] {
        let width = upper - lower;
        assert!(
            p50 >= lower - width && p50 <= upper + width + offset.max(0.0),
            "client median {what} {p50:.3} ms (the means differ by {offset:.3} ms); the \
             server's median is in ({lower}, {upper}] ms"
        );
    }
}

/// A plain prompt on the completions API is counted as arrivals promised.
fn completions_prompt(req: &Value, _: &Value) -> u64 {
    req["prompt_tokens"].as_u64().unwrap()
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn completions_closed_loop_exact_lengths_and_timing() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    let run = pipe(
        &real,
        "vllm",
        &[
            "--concurrency",
            "4",
            "-n",
            "12",
            "--input-tokens",
            "300",
            "--output-tokens",
            "64",
        ],
        &["--api", "completions"],
    );
    check_counts(&run, completions_prompt);
    check_timing(&run);
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn completions_one_at_a_time_ttft_and_tpot_agree_with_the_server() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    let run = pipe(
        &real,
        "vllm",
        &[
            "--concurrency",
            "1",
            "-n",
            "6",
            "--input-tokens",
            "2000",
            "--output-tokens",
            "48",
        ],
        &["--api", "completions"],
    );
    check_counts(&run, completions_prompt);
    check_timing(&run);
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn chat_poisson_open_loop_exact_lengths_and_timing() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    let run = pipe(
        &real,
        "vllm",
        &[
            "--rate",
            "4",
            "-n",
            "16",
            "--input-tokens",
            "200",
            "--output-tokens",
            "48",
        ],
        &["--api", "chat"],
    );
    let salt = run.salt();
    let overhead = real.chat_overhead();
    assert_eq!(
        overhead, 10,
        "ChatML around one user message in this vocabulary"
    );
    check_counts(&run, |req, _| {
        let promised = req["prompt_tokens"].as_u64().unwrap();
        let prompt = req["prompt"].as_str().unwrap();
        let rendered = real.count(&chatml(&[("user", &format!("{salt} {prompt}"))]));
        // The template's tokens add up with the message's: the count is promised + overhead.
        assert_eq!(rendered, promised + overhead, "{req}");
        rendered
    });
    check_timing(&run);
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn chat_multi_turn_prompts_carry_the_real_history() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    let run = pipe(&real, "vllm", &multi_turn_args(), &["--api", "chat"]);
    assert_eq!(run.requests.len(), 12);
    check_counts(&run, |req, _| run.chat_history_tokens(&real, req));
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn completions_multi_turn_prompts_carry_the_real_history() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    let run = pipe(&real, "vllm", &multi_turn_args(), &["--api", "completions"]);
    check_counts(&run, |req, _| run.completions_history_tokens(&real, req));
}

#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn chat_role_chunk_is_not_a_token() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    // Greedy decoding, one request: curl asks the same question and gets the same answer.
    let run = pipe(
        &real,
        "vllm",
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
        "model": "tiny",
        "messages": [{"role": "user", "content": format!("{} {}", run.salt(), req["prompt"].as_str().unwrap())}],
        "max_tokens": 40,
        "temperature": 0,
        "ignore_eos": true,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let chunks = raw_stream(&real.url, "/chat/completions", &body);
    // vLLM opens with a role chunk whose content is an empty string.
    let first = &chunks[0]["choices"][0]["delta"];
    assert_eq!(first["role"], "assistant", "{}", chunks[0]);
    assert_eq!(first["content"], "", "{}", chunks[0]);
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
    let tokens: Vec<&Value> = of_type(&run.events, "token");
    assert_eq!(
        tokens.len(),
        40,
        "one token record per token, none for the role chunk"
    );
    assert!(tokens[0]["at_ns"].as_u64() >= done["first_event_ns"].as_u64());
    // Usage comes in a chunk of its own, with no choices.
    let usage = chunks.last().unwrap();
    assert_eq!(
        usage["choices"].as_array().map(Vec::len),
        Some(0),
        "{usage}"
    );
    assert_eq!(usage["usage"]["completion_tokens"], 40);
}

/// What vLLM says of its prefix cache: `/metrics` counts lookups and hits in tokens (V1's
/// `vllm:prefix_cache_*_total`), a repeated prompt's whole 16-token blocks hit, and reduce's
/// server figures say so. The usage carries `cached_tokens` only with
/// `--enable-prompt-tokens-details` (`TOKENPIPE_VLLM_ARGS`); where it does, reduce's usage
/// figures must not exceed the server's.
#[test]
#[ignore = "needs a real vLLM: make test-real-vllm"]
fn a_repeated_prompt_hits_the_prefix_cache_in_the_servers_counters() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_VLLM_URL", "test-real-vllm");
    let run = pipe(
        &real,
        "vllm",
        &[
            "--concurrency",
            "1",
            "-n",
            "3",
            "--same-prompt",
            "--input-tokens",
            "300",
            "--output-tokens",
            "4",
        ],
        &["--api", "completions"],
    );
    let s = &run.summary;
    let queries = s["server_prefix_cache_queries"].as_u64().expect("queries");
    let hits = s["server_prefix_cache_hits"].as_u64().expect("hits");
    assert_eq!(Some(queries), s["input_tokens"].as_u64(), "{s}");
    // Only whole blocks are cached, and the CPU build's are 128 tokens (a GPU's 16): the second
    // and third requests find at least the first two blocks of the first one's 300 tokens.
    assert!(hits >= 2 * 256, "{s}");
    if let Some(cached) = s["cached_prompt_tokens"].as_u64() {
        assert!(cached <= hits && cached >= 2 * 256, "{s}");
    }
}
