//! The whole pipe against llama-cpp-python's own server (`python -m llama_cpp.server`) serving
//! the tiny model with its defaults (docs/real-engines.md): a hostile peer. It serves one
//! request at a time and, by default, cuts the stream in flight as soon as another request
//! arrives, ending it with a bare `data: [DONE]` and no `finish_reason` (and then closes the
//! connection without ending the chunked body). It ignores `stream_options` (no usage) and
//! `ignore_eos`, refuses any `x-request-id` that is not a UUID with an empty 400, and answers a
//! prompt beyond its context with a 200 and an empty stream.
//!
//! The tests check that fire reports every cut stream as failed (`incomplete`) with the tokens
//! it got kept, every request it calls ok has a `finish_reason`, nothing is dropped, fire counts
//! the tokens itself when no usage comes, and reduce counts all of it.
//!
//! These tests are ignored by `cargo test`: `make test-real-llama-cpp-python` installs the
//! server, makes the model, starts the server and runs them with `--ignored`, passing
//! `TOKENPIPE_LCP_URL` (the server's base URL, `…/v1`) and `TOKENPIPE_TINY_DIR` (the model
//! directory).

use crate::common;
use crate::common::real;
use common::*;
use real::*;
use serde_json::Value;
use std::sync::Mutex;

/// One run at a time: a request of another test would cut this one's streams.
static SERVER: Mutex<()> = Mutex::new(());

impl Run {
    /// The token records of one request.
    fn tokens(&self, id: &Value) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|r| r["type"] == "token" && &r["id"] == id)
            .collect()
    }

    /// The tokens those records stand for, empty ones included.
    fn token_count(&self, id: &Value) -> u64 {
        self.tokens(id)
            .iter()
            .map(|t| t["tokens"].as_u64().unwrap())
            .sum()
    }
}

/// Runs the pipe (no `/metrics` here); `fire_status` is the exit status fire must end with
/// (0: some request succeeded, 1: none did).
fn pipe(real: &Real, arrivals: &[&str], fire: &[&str], fire_status: i32) -> Run {
    let options = PipeOptions {
        label: "llama-cpp-python",
        seed: "11",
        server_metrics: false,
        fire_status,
    };
    pipe_with(real, &options, arrivals, fire)
}

/// One `done` per scheduled request, and none for anything else.
fn check_nothing_dropped(run: &Run) {
    let mut ids: Vec<u64> = run
        .dones()
        .iter()
        .map(|d| d["id"].as_u64().unwrap())
        .collect();
    ids.sort_unstable();
    let scheduled: Vec<u64> = run.requests.keys().copied().collect();
    assert_eq!(ids, scheduled, "one done per scheduled request");
    let s = &run.summary;
    let n = scheduled.len() as u64;
    assert_eq!(s["requests_scheduled"].as_u64(), Some(n), "{s}");
    assert_eq!(s["requests_sent"].as_u64(), Some(n), "{s}");
    assert_eq!(run.results.len() as u64, n);
}

/// The server sends no usage (it ignores `stream_options`): fire's `done` has no counts from
/// it, and reduce counts the output from fire's token records (`counted`). The count may pass
/// `max_tokens`: the server makes one token more when the last one is the first byte of a
/// UTF-8 character (seen: 9 chunks, 9 tokens for `max_tokens` 8).
fn check_counted(run: &Run) {
    for d in run.dones() {
        assert!(d["prompt_tokens"].is_null(), "no usage expected: {d}");
        assert!(d["completion_tokens"].is_null(), "no usage expected: {d}");
    }
    let (mut output, mut max_output) = (0, 0);
    for r in &run.results {
        if r["ok"] != true {
            continue;
        }
        assert_eq!(r["output_tokens_source"], "counted", "{r}");
        assert!(r["input_tokens_source"].is_null(), "{r}");
        let counted = run.token_count(&r["id"]);
        assert_eq!(r["output_tokens"].as_u64(), Some(counted), "{r}");
        let max_tokens = run.requests[&r["id"].as_u64().unwrap()]["max_tokens"]
            .as_u64()
            .unwrap();
        if r["finish_reason"] == "length" {
            assert!(counted >= max_tokens / 2, "{counted} tokens: {r}");
        }
        output += counted;
        max_output += max_tokens;
    }
    eprintln!("fire counted {output} output tokens for max_tokens {max_output} in all");
    assert_eq!(
        run.summary["output_tokens"].as_u64(),
        Some(output),
        "{}",
        run.summary
    );
    // Prompts are counted only from usage: a request without it adds none.
    assert_eq!(
        run.summary["input_tokens"].as_u64(),
        Some(0),
        "{}",
        run.summary
    );
}

/// Streams cut by a later request: each `done` fire calls ok has a finish reason; each stream
/// that ended without one is failed as `incomplete` (the bare `[DONE]`) after something arrived,
/// keeping the tokens it got as token records; at least one was cut; reduce counts them.
/// Returns the token records of the cut streams.
fn check_cuts(run: &Run) -> usize {
    check_nothing_dropped(run);
    let (mut ok, mut cut, mut cut_tokens) = (0, 0, 0);
    for d in run.dones() {
        assert_eq!(d["status"], 200, "{d}");
        let tokens = run.tokens(&d["id"]);
        let content = tokens.iter().filter(|t| t.get("empty").is_none()).count() as u64;
        assert_eq!(d["events"].as_u64(), Some(content), "{d}");
        if d["ok"] == true {
            ok += 1;
            assert!(d["error_kind"].is_null(), "{d}");
            let reason = d["finish_reason"].as_str().unwrap_or_default();
            assert!(reason == "length" || reason == "stop", "{d}");
        } else {
            cut += 1;
            cut_tokens += tokens.len();
            assert_eq!(d["error_kind"], "incomplete", "{d}");
            assert!(d["finish_reason"].is_null(), "{d}");
            assert!(
                d["first_event_ns"].is_u64(),
                "the server answered before it cut: {d}"
            );
            let error = d["error"].as_str().unwrap_or_default();
            assert!(error.contains("[DONE] without a finish_reason"), "{d}");
        }
    }
    assert!(cut > 0, "no stream was cut: the test could not fail");
    assert!(ok > 0, "the last request, alone, must end well");
    let client = of_type(&run.events, "client")[0];
    assert_eq!(client["ok"].as_u64(), Some(ok), "{client}");
    assert_eq!(client["failed"].as_u64(), Some(cut), "{client}");
    let s = &run.summary;
    assert_eq!(s["requests_ok"].as_u64(), Some(ok), "{s}");
    assert_eq!(s["requests_failed"].as_u64(), Some(cut), "{s}");
    assert_eq!(s["requests_failed_server"].as_u64(), Some(cut), "{s}");
    assert_eq!(s["errors"], serde_json::json!({ "incomplete": cut }), "{s}");
    for r in &run.results {
        if r["ok"] != true {
            assert_eq!(r["error_kind"], "incomplete", "{r}");
        }
    }
    check_counted(run);
    eprintln!(
        "{} requests: {ok} ended well, {cut} cut ({cut_tokens} token records kept)",
        run.requests.len()
    );
    cut_tokens
}

#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn completions_closed_loop_cut_streams_fail_as_incomplete() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    let run = pipe(
        &real,
        &[
            "--concurrency",
            "3",
            "-n",
            "12",
            "--input-tokens",
            "40",
            "--output-tokens",
            "48",
        ],
        &["--api", "completions"],
        0,
    );
    // A completions stream's first chunk is a token (an empty one, if its text is held back),
    // and the server cuts only after a chunk: every cut stream kept one at least.
    let cut = of_type(&run.events, "done")
        .iter()
        .filter(|d| d["ok"] == false)
        .count();
    assert!(check_cuts(&run) >= cut, "the cut streams' tokens are kept");
}

#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn chat_closed_loop_cut_streams_fail_as_incomplete() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    let run = pipe(
        &real,
        &[
            "--concurrency",
            "2",
            "-n",
            "10",
            "--input-tokens",
            "40",
            "--output-tokens",
            "48",
        ],
        &["--api", "chat"],
        0,
    );
    // The server looks for a waiting request after each chunk it sends, the chat role chunk
    // included: in a closed loop the next request is there already, so most cut streams end
    // right after their role chunk, with no token.
    check_cuts(&run);
}

#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn chat_open_loop_cut_streams_fail_as_incomplete() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    // Poisson arrivals at 10/s against answers of 128 tokens: requests overlap, and one that
    // arrives while another streams cuts it after the tokens sent so far. One that arrives
    // while another waits cuts that one right after its role chunk; on a busy machine, where
    // the server falls behind, all may be cut so, hence no bound on the tokens kept.
    let run = pipe(
        &real,
        &[
            "--rate",
            "10",
            "-n",
            "12",
            "--input-tokens",
            "40",
            "--output-tokens",
            "128",
        ],
        &["--api", "chat"],
        0,
    );
    check_cuts(&run);
}

/// One request at a time nothing is cut: every request ends with a finish reason, and with no
/// usage from the server fire's own count is what reduce reports.
#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn one_at_a_time_every_request_succeeds_and_fire_counts_the_tokens() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    for api in ["completions", "chat"] {
        let run = pipe(
            &real,
            &[
                "--concurrency",
                "1",
                "-n",
                "4",
                "--input-tokens",
                "60",
                "--output-tokens",
                "40",
            ],
            &["--api", api],
            0,
        );
        check_nothing_dropped(&run);
        for d in run.dones() {
            assert_eq!(d["ok"], true, "{api}: {d}");
            let reason = d["finish_reason"].as_str().unwrap_or_default();
            assert!(reason == "length" || reason == "stop", "{api}: {d}");
        }
        let s = &run.summary;
        assert_eq!(s["requests_ok"].as_u64(), Some(4), "{api}: {s}");
        assert_eq!(s["requests_failed"].as_u64(), Some(0), "{api}: {s}");
        assert!(s.get("errors").is_none(), "{api}: {s}");
        check_counted(&run);
    }
}

/// fire's count against the stream itself: one greedy request through fire, the same through
/// curl (the same answer). The server sends a chunk per token of the answer (an empty text for
/// one that decodes to nothing, one chunk for a character split over two tokens), then a
/// closing chunk with the finish reason and an empty text (completions) or delta (chat), which
/// is no token: fire's token records must be the answer's chunks, the closing one left out.
#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn fire_counts_one_token_per_chunk_of_the_answer() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    for (api, path) in [
        ("completions", "/completions"),
        ("chat", "/chat/completions"),
    ] {
        let run = pipe(
            &real,
            &[
                "--concurrency",
                "1",
                "-n",
                "1",
                "--input-tokens",
                "30",
                "--output-tokens",
                "96",
            ],
            &["--api", api, "--temperature", "0"],
            0,
        );
        let done = run.dones()[0];
        assert_eq!(done["ok"], true, "{done}");
        let header = &run.events[0];
        let salt = header["params"]["salt"].as_str().expect("fire's salt");
        let prompt = format!("{salt} {}", run.requests[&0]["prompt"].as_str().unwrap());
        let mut body = serde_json::json!({
            "model": "tiny",
            "max_tokens": 96,
            "temperature": 0,
            "stream": true,
        });
        let answer_key = if api == "chat" {
            body["messages"] = serde_json::json!([{"role": "user", "content": prompt}]);
            "content"
        } else {
            body["prompt"] = Value::String(prompt);
            "text"
        };
        let chunks = raw_stream(&real.url, path, &body);
        let answer: Vec<&str> = chunks
            .iter()
            .map(|c| &c["choices"][0])
            .filter(|c| c["finish_reason"].is_null())
            .filter_map(|c| c.get("delta").unwrap_or(c)[answer_key].as_str())
            .collect();
        let closing = &chunks.last().expect("chunks")["choices"][0];
        assert!(closing["finish_reason"].is_string(), "{closing}");
        assert_eq!(
            done["text"].as_str(),
            Some(answer.concat().as_str()),
            "{api}"
        );
        assert_eq!(
            run.token_count(&done["id"]),
            answer.len() as u64,
            "{api}: one token record per chunk of the answer"
        );
        let with_text = answer.iter().filter(|t| !t.is_empty()).count() as u64;
        assert_eq!(done["events"].as_u64(), Some(with_text), "{api}: {done}");
        eprintln!(
            "{api}: {} chunks for max_tokens 96, {} of them empty",
            answer.len(),
            answer.len() as u64 - with_text
        );
    }
}

/// The status and body of a POST made with curl, with extra headers.
fn curl_post(url: &str, body: &Value, headers: &[&str]) -> (u16, String) {
    let mut args = vec![
        "-sS".to_string(),
        "--max-time".into(),
        "60".into(),
        "-w".into(),
        "\n%{http_code}".into(),
        "-H".into(),
        "Content-Type: application/json".into(),
    ];
    for h in headers {
        args.push("-H".into());
        args.push(h.to_string());
    }
    args.push("-d".into());
    args.push(body.to_string());
    args.push(url.into());
    let out = std::process::Command::new("curl")
        .args(&args)
        .output()
        .expect("run curl (the real-engine tests need it)");
    assert_ok(&out, "curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').expect("curl's status line");
    (code.trim().parse().expect("an HTTP status"), body.into())
}

/// The server refuses an `x-request-id` that is not a UUID with an empty 400, on every route.
/// fire's own ids are UUID-shaped (the other tests' requests pass), and `-H` may not replace
/// them: fire refuses the header before it sends anything. Its other refusals reach fire as
/// HTTP errors: a body its schema refuses gets a 500 (its error handler turns the validation
/// error into an internal one), which fire and reduce count as `http`.
#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn request_ids_and_refused_bodies() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    let body = serde_json::json!({"prompt": "def f(x):", "max_tokens": 4, "stream": true});
    let completions = format!("{}/completions", real.url);
    let (status, text) = curl_post(&completions, &body, &["x-request-id: not-a-uuid"]);
    assert_eq!((status, text.as_str()), (400, ""));
    let (status, text) = curl_post(
        &completions,
        &body,
        &["x-request-id: 01234567-89ab-cdef-0000-00000000002a"],
    );
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("data: [DONE]"), "{text}");

    let refused = run(
        &cmd(
            "fire",
            &["--url", &real.url, "-H", "x-request-id: not-a-uuid"],
        ),
        b"",
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("x-request-id"), "{stderr}");

    let run = pipe(
        &real,
        &[
            "--concurrency",
            "2",
            "-n",
            "4",
            "--input-tokens",
            "20",
            "--output-tokens",
            "8",
        ],
        &[
            "--api",
            "completions",
            "--extra-body",
            r#"{"top_k": "many"}"#,
        ],
        1,
    );
    check_nothing_dropped(&run);
    for d in run.dones() {
        assert_eq!(d["ok"], false, "{d}");
        assert_eq!(d["error_kind"], "http", "{d}");
        assert_eq!(d["status"], 500, "{d}");
        assert!(d["error"].as_str().unwrap().contains("top_k"), "{d}");
    }
    let s = &run.summary;
    assert_eq!(s["requests_ok"].as_u64(), Some(0), "{s}");
    assert_eq!(s["requests_failed"].as_u64(), Some(4), "{s}");
    assert_eq!(s["requests_failed_server"].as_u64(), Some(4), "{s}");
    assert_eq!(s["errors"], serde_json::json!({"http": 4}), "{s}");
}

/// A prompt longer than the server's context (2,048 tokens by default) gets a 200 and a stream
/// that ends with no event at all (the server logs the error): fire reports it `incomplete`.
#[test]
#[ignore = "needs llama-cpp-python's server: make test-real-llama-cpp-python"]
fn a_prompt_beyond_the_context_gets_an_empty_stream() {
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let real = Real::from_env("TOKENPIPE_LCP_URL", "test-real-llama-cpp-python");
    let run = pipe(
        &real,
        &[
            "--concurrency",
            "1",
            "-n",
            "2",
            "--input-tokens",
            "2100",
            "--output-tokens",
            "8",
        ],
        &["--api", "completions"],
        1,
    );
    check_nothing_dropped(&run);
    for d in run.dones() {
        assert_eq!(d["ok"], false, "{d}");
        assert_eq!(d["status"], 200, "{d}");
        assert_eq!(d["error_kind"], "incomplete", "{d}");
        assert_eq!(d["events"], 0, "{d}");
        assert!(d.get("first_event_ns").is_none(), "{d}");
        let error = d["error"].as_str().unwrap_or_default();
        assert!(error.contains("end of the body"), "{d}");
    }
    assert_eq!(
        run.summary["errors"],
        serde_json::json!({"incomplete": 2}),
        "{}",
        run.summary
    );
}
