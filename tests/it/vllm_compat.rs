//! `reduce --vllm-compatible`, `--from-vllm`, `--emit-events` and `--slo` through the real
//! binaries: a hand-made `vllm bench serve --save-detailed` result file
//! (tests/fixtures/vllm/detailed.json, its figures computed with numpy by make_detailed.py
//! beside it) must give back vLLM's own figures, and so must a run recorded from a real vLLM
//! 0.32 (tests/fixtures/vllm/real-0.32-seed0.json: `scripts/real/parity-vllm.sh` against the
//! tiny model, seed 0, 40 prompts at 2 requests/s); `arrivals --vllm-compatible` with that
//! seed schedules the requests where vLLM sent them; and a live chat run against `simserve`
//! shows where vLLM's definitions differ from ours.

use crate::common;
use common::*;
use serde_json::Value;
use tokenpipe_format::vllm::{self, Stat};

const FIXTURE: &str = "tests/fixtures/vllm/detailed.json";

fn fixture() -> Value {
    let text = std::fs::read_to_string(FIXTURE).expect("the fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

fn summary_of(out: &std::process::Output) -> Value {
    assert_ok(out, "reduce");
    let recs = records(&out.stdout);
    let summaries = of_type(&recs, "summary");
    assert_eq!(summaries.len(), 1, "one run");
    summaries[0].clone()
}

/// Every member of vLLM's figures in `want` is in `got`, equal within 0.1 % (exact integers).
fn same_figures(got: &Value, want: &Value, keys: &[String]) {
    for key in keys {
        let (g, w) = (&got[key.as_str()], &want[key.as_str()]);
        match (g.as_f64(), w.as_f64()) {
            (Some(g), Some(w)) => assert!(
                (g - w).abs() <= 1e-3 * w.abs().max(1e-9),
                "{key}: {g} against vLLM's {w}"
            ),
            _ => assert_eq!(g, w, "{key}"),
        }
        if w.is_u64() {
            assert_eq!(g, w, "{key} is a count");
        }
    }
}

/// vLLM's figures at its default `--metric-percentiles 99`, in the order of its result file:
/// the run-wide figures, then mean, median, std and p99 of each latency metric.
fn vllm_figures() -> Vec<String> {
    let mut keys: Vec<String> = vllm::FIGURES.iter().map(|k| k.to_string()).collect();
    for metric in vllm::METRICS {
        for stat in [Stat::Mean, Stat::Median, Stat::Std, Stat::Percentile(99.0)] {
            keys.push(vllm::latency_key(metric.name, stat));
        }
    }
    keys
}

#[test]
fn the_figures_are_those_of_a_file_vllm_wrote() {
    let file = fixture();
    let mut written: Vec<&str> = file
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| !vllm::SETTINGS.contains(k))
        .filter(|k| !file[*k].is_array())
        .collect();
    written.sort();
    let figures = vllm_figures();
    let mut ours: Vec<&str> = figures.iter().map(String::as_str).collect();
    ours.sort();
    assert_eq!(ours, written);
}

#[test]
fn a_vllm_result_file_gives_back_vllms_own_figures() {
    let out = run(
        &cmd("reduce", &["--vllm-compatible", "--from-vllm", FIXTURE]),
        b"",
    );
    let s = summary_of(&out);
    assert_eq!(s["definitions"], "vllm");
    let v = &s["vllm"];
    let figures = vllm_figures();
    same_figures(v, &fixture(), &figures);
    let keys = v.as_object().expect("an object").len();
    assert_eq!(keys, figures.len(), "exactly vLLM's keys: {v}");
    // The run is named by the model, and the header says where it came from.
    assert_eq!(s["label"], "tiny-llama");
    let recs = records(&out.stdout);
    let upstream = &recs[0]["upstream"][0];
    assert_eq!(upstream["tool"], "vllm bench serve");
    assert_eq!(upstream["params"]["request_rate"], 2.0);
    assert_eq!(upstream["params"]["duration_s"], 3.0);
    assert_eq!(upstream["params"]["max_concurrent_requests"], 3);
    // Our own figures beside them: duration from the first send (0.1 s) to the last chunk
    // (2.1 + 0.095 + 0.522 s).
    assert!(
        (s["duration_s"].as_f64().unwrap() - 2.617).abs() < 1e-9,
        "{s}"
    );
    assert_eq!(s["requests_ok"], 5);
    assert_eq!(s["requests_failed"], 1);
}

const RECORDED: &str = "tests/fixtures/vllm/real-0.32-seed0.json";

fn recorded() -> Value {
    let text = std::fs::read_to_string(RECORDED).expect("the recorded run");
    serde_json::from_str(&text).expect("recorded JSON")
}

#[test]
fn a_run_recorded_from_vllm_is_recomputed_to_a_thousandth() {
    let out = run(
        &cmd("reduce", &["--vllm-compatible", "--from-vllm", RECORDED]),
        b"",
    );
    let s = summary_of(&out);
    let v = &s["vllm"];
    same_figures(v, &recorded(), &vllm_figures());
    // vLLM's re-encoded prompts missed their 200 tokens twice (202 and 201): its own counts
    // are what the figures use.
    assert_eq!(v["total_input_tokens"], 8003);
    assert_eq!(s["requests_ok"], 40);
}

#[test]
fn vllm_compatible_arrivals_schedule_the_requests_where_vllm_sent_them() {
    // The recorded run's settings: seed 0, 2 requests/s, Poisson, 40 prompts of 200 tokens.
    let schedule = run(
        &cmd(
            "arrivals",
            &[
                "--vllm-compatible",
                "--seed",
                "0",
                "--rate",
                "2",
                "-n",
                "40",
                "--input-tokens",
                "200",
                "--output-tokens",
                "48",
            ],
        ),
        b"",
    );
    assert_ok(&schedule, "arrivals");
    let offsets: Vec<f64> = of_type(&records(&schedule.stdout), "request")
        .iter()
        .map(|r| r["offset_ns"].as_u64().unwrap() as f64 / 1e9)
        .collect();
    let starts: Vec<f64> = recorded()["start_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_f64().unwrap())
        .collect();
    assert_eq!(offsets.len(), starts.len());
    // Both from their first request: vLLM's sends are late by its own event loop's delay
    // (0.6 ms at the median here, 80 ms at worst), never by a gap drawn differently (half a
    // second on average at this rate).
    let mut late: Vec<f64> = offsets
        .iter()
        .zip(&starts)
        .map(|(o, s)| ((s - starts[0]) - (o - offsets[0])).abs())
        .collect();
    late.sort_by(f64::total_cmp);
    assert!(late[late.len() / 2] < 0.002, "median {:.4} s", late[20]);
    assert!(late[late.len() - 1] < 0.1, "worst {:.4} s", late[39]);
}

#[test]
fn percentiles_and_slos_follow_vllms_settings() {
    // python3 tests/fixtures/vllm/make_detailed.py 50,90,99 ttft=100 tpot=50
    // (vLLM's --metric-percentiles 50,90,99 --goodput ttft:100 tpot:50): two requests are
    // good (TTFT 50 and 80 ms with TPOT 22.5 and 0), so request_goodput = 2 / 3.0 s, and
    // p90_ttft_ms = 228.0, p90_tpot_ms = 163.08, p50_e2el_ms = 617.0, p90_e2el_ms = 764.8.
    let out = run(
        &cmd(
            "reduce",
            &[
                "--vllm-compatible",
                "--percentiles",
                "50,90,99",
                "--slo",
                "ttft=100ms,tpot=50ms",
                "--from-vllm",
                FIXTURE,
            ],
        ),
        b"",
    );
    let s = summary_of(&out);
    let want = serde_json::json!({
        "request_goodput": 0.6666666666666666,
        "p90_ttft_ms": 228.0,
        "p90_tpot_ms": 163.08000000000004,
        "p50_e2el_ms": 617.0,
        "p90_e2el_ms": 764.8000000000001,
        "p99_itl_ms": 578.9999999999999,
    });
    let keys: Vec<String> = want.as_object().unwrap().keys().cloned().collect();
    same_figures(&s["vllm"], &want, &keys);
    // Our own percentiles follow the same flag.
    assert!(s["ttft_p90_ms"].is_number(), "{s}");
}

#[test]
fn imported_events_go_through_a_pipe_and_reduce_the_same() {
    let emitted = run(
        &cmd("reduce", &["--from-vllm", FIXTURE, "--emit-events"]),
        b"",
    );
    assert_ok(&emitted, "reduce --emit-events");
    let events = records(&emitted.stdout);
    assert_eq!(events[0]["tool"], "vllm bench serve");
    assert_eq!(of_type(&events, "sent").len(), 6);
    // One token event per chunk: 5 + 6 + 0 + 1 + 11 + 4.
    assert_eq!(of_type(&events, "token").len(), 27);
    let dones = of_type(&events, "done");
    assert_eq!(dones.len(), 6);
    let failed: Vec<_> = dones.iter().filter(|d| d["ok"] == false).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["error_kind"], "server");
    assert_eq!(failed[0]["error"], "Bad Request");
    // Request 4 sent at 1.3 s: 11 chunks, 12 tokens by usage, the last chunk at 1.3 + 0.7 s.
    let four = dones.iter().find(|d| d["id"] == 4).unwrap();
    assert_eq!(four["completion_tokens"], 12);
    assert_eq!(four["at_ns"], 2_000_000_000u64);
    // The events on stdin of another reduce, through a pipe, as fire's output would come.
    let s = summary_of(&run(
        &cmd("reduce", &["--vllm-compatible"]),
        &emitted.stdout,
    ));
    same_figures(&s["vllm"], &fixture(), &vllm_figures());
}

#[test]
fn without_start_times_vllms_own_duration_and_peaks_are_used() {
    let mut file = fixture();
    let obj = file.as_object_mut().unwrap();
    obj.remove("start_times");
    // Figures our events cannot give back without send times: taken from the file as they are.
    obj.insert("max_output_tokens_per_s".into(), 17.0.into());
    obj.insert("max_concurrent_requests".into(), 4.into());
    let path = temp_path("vllm-no-start-times.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    let out = run(
        &cmd(
            "reduce",
            &["--vllm-compatible", "--from-vllm", path.to_str().unwrap()],
        ),
        b"",
    );
    let _ = std::fs::remove_file(&path);
    let v = summary_of(&out)["vllm"].clone();
    assert_eq!(v["max_output_tokens_per_s"], 17.0);
    assert_eq!(v["max_concurrent_requests"], 4);
    // Latencies do not need the send times.
    let figures = vllm_figures();
    same_figures(&v, &fixture(), &figures[..9]);
    same_figures(&v, &fixture(), &figures[11..]);
}

#[test]
fn a_result_without_per_request_arrays_asks_for_save_detailed() {
    let mut file = fixture();
    for key in ["ttfts", "itls", "input_lens", "output_lens", "errors"] {
        file.as_object_mut().unwrap().remove(key);
    }
    let path = temp_path("vllm-summary-only.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    let out = run(
        &cmd("reduce", &["--from-vllm", path.to_str().unwrap()]),
        b"",
    );
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--save-detailed"), "{stderr}");
    assert!(stderr.contains("vllm-summary-only.json"), "{stderr}");
}

#[test]
fn a_result_file_read_as_a_stream_says_to_use_from_vllm() {
    let out = run(&cmd("reduce", &[FIXTURE]), b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!("reduce: {FIXTURE} is a `vllm bench serve` result file, not a tokenpipe stream: read it with `reduce --from-vllm {FIXTURE}`, or give it to `table` as it is")
    );
    // The same file on one line, piped in.
    let one_line = serde_json::to_vec(&fixture()).unwrap();
    let out = run(&cmd("reduce", &[]), &one_line);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("read it with `reduce --from-vllm FILE`"),
        "{stderr}"
    );
}

/// A live chat run of 16 requests (4 at a time, 10 tokens each) against `server`, through
/// `reduce --vllm-compatible`: our summary, with vLLM's figures in `vllm`.
fn live_chat_run(server: &Server) -> serde_json::Value {
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--concurrency",
                    "4",
                    "--num-prompts",
                    "16",
                    "--input-tokens",
                    "8",
                    "--output-tokens",
                    "10",
                ],
            ),
            cmd("fire", &["--url", server.url.as_str(), "--api", "chat"]),
            cmd("reduce", &["--vllm-compatible", "--slo", "e2el=10s"]),
        ],
        None,
    );
    assert_ok(&outs[1], "fire");
    summary_of(&outs[2])
}

#[test]
fn a_live_chat_run_shows_vllms_ttft_at_the_role_chunk() {
    // simserve sends the role chunk with the first output, as vLLM does; here every answer
    // pauses 200 ms after that output (`stall=200` after no token), as an engine whose first
    // output carries no text.
    let flags = ["--ttft-ms", "50", "--itl-ms", "10"];
    let paused =
        Server::start(&[&flags[..], &["--fault", "stall=200", "--fault-after", "0"]].concat());
    let s = live_chat_run(&paused);
    let v = &s["vllm"];
    assert_eq!(v["completed"], 16);
    assert_eq!(v["failed"], 0);
    assert_eq!(v["total_output_tokens"], 160);
    // vLLM's TTFT stops at the role chunk, ours waits for text, and the wait moves into
    // vLLM's first ITL gap (10 gaps per request instead of our 9).
    let ours = s["ttft_p50_ms"].as_f64().unwrap();
    let theirs = v["median_ttft_ms"].as_f64().unwrap();
    assert!(ours >= 245.0, "our TTFT {ours}");
    assert!(
        theirs + 150.0 < ours,
        "vLLM's TTFT {theirs} against ours {ours}"
    );
    assert!(v["p99_itl_ms"].as_f64().unwrap() >= 150.0, "{v}");
    // vLLM's duration starts at the run start, ours at the first send.
    assert!(v["duration"].as_f64().unwrap() >= s["duration_s"].as_f64().unwrap());
    // Every request meets a 10 s bound.
    let goodput = v["request_goodput"].as_f64().unwrap();
    let throughput = v["request_throughput"].as_f64().unwrap();
    assert!((goodput - throughput).abs() < 1e-9, "{v}");
    let peak = v["max_concurrent_requests"].as_u64().unwrap();
    assert!((4..=16).contains(&peak), "{v}");

    // Without the pause the role chunk and the first token leave together: both TTFTs are the
    // prefill, and vLLM's extra gap (role chunk to first token) is near zero, so its mean ITL
    // is about 9/10 of the 10 ms between tokens.
    let s = live_chat_run(&Server::start(&flags));
    let v = &s["vllm"];
    let ours = s["ttft_p50_ms"].as_f64().unwrap();
    let theirs = v["median_ttft_ms"].as_f64().unwrap();
    assert!(
        theirs >= 45.0,
        "vLLM's TTFT {theirs} waits for the first output"
    );
    assert!(
        (theirs - ours).abs() < 5.0,
        "vLLM's TTFT {theirs} against ours {ours}"
    );
    let mean_itl = v["mean_itl_ms"].as_f64().unwrap();
    assert!((8.0..9.6).contains(&mean_itl), "{v}");
}
