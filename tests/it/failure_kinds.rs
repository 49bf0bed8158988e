//! Every way a request can fail that `fire` sees on its own, end to end: a server (the
//! simulated one, or a tiny raw one that answers with fixed bytes) misbehaves, `fire` ends each
//! request with a `done` of the right `error_kind`, and `reduce` counts it as failed.

use crate::common;
use common::*;

const N: usize = 3;

/// Sends `N` requests to `url` and returns fire's `done` records and stderr, after checking
/// that `reduce` counts every one as failed.
fn failed_runs(url: &str, fire_extra: &[&str]) -> (Vec<serde_json::Value>, String) {
    let mut fire_args = vec!["--url", url, "--model", "m"];
    fire_args.extend_from_slice(fire_extra);
    let n = N.to_string();
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["-n", &n, "--input-tokens", "3", "--output-tokens", "2"],
            ),
            cmd("fire", &fire_args),
        ],
        None,
    );
    assert_none_succeeded(&outs[1], "fire");
    let recs = records(&outs[1].stdout);
    let done: Vec<serde_json::Value> = of_type(&recs, "done").into_iter().cloned().collect();
    assert_eq!(done.len(), N, "one done per request: {done:?}");
    assert!(done.iter().all(|d| d["ok"] == false), "{done:?}");
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let s = of_type(&records(&reduced.stdout), "summary")[0].clone();
    assert_eq!(s["requests_failed"], N as u64, "{s}");
    assert_eq!(s["requests_ok"], 0, "{s}");
    (done, String::from_utf8_lossy(&outs[1].stderr).into_owned())
}

fn all_of_kind(done: &[serde_json::Value], kind: &str) {
    for d in done {
        assert_eq!(d["error_kind"], kind, "{d}");
        assert!(d["error"].as_str().is_some_and(|e| !e.is_empty()), "{d}");
    }
}

#[test]
fn a_slow_server_times_out() {
    let server = Server::start(&["--ttft-ms", "5000", "--itl-ms", "1"]);
    let (done, stderr) = failed_runs(&server.url, &["--timeout", "0.2"]);
    all_of_kind(&done, "timeout");
    assert!(stderr.contains("timeout: 3"), "{stderr}");
}

#[test]
fn a_body_cut_mid_chunk_is_a_body_error() {
    let server = RawServer::start(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n40\r\ndata: {\"choices\":[{\"te",
    );
    let (done, _) = failed_runs(&server.url, &[]);
    all_of_kind(&done, "body");
    assert!(done.iter().all(|d| d["status"] == 200), "{done:?}");
}

#[test]
fn data_that_is_not_json_is_a_parse_error() {
    let server = RawServer::start(format!("{SSE_HEAD}data: not json\n\n"));
    let (done, _) = failed_runs(&server.url, &[]);
    all_of_kind(&done, "parse");
    assert!(
        done[0]["error"].as_str().unwrap().contains("not json"),
        "{}",
        done[0]
    );
}

#[test]
fn done_without_a_finish_reason_is_incomplete() {
    let server = RawServer::start(format!(
        "{SSE_HEAD}data: {{\"choices\":[{{\"text\":\"a\"}}]}}\n\ndata: [DONE]\n\n"
    ));
    let (done, _) = failed_runs(&server.url, &[]);
    all_of_kind(&done, "incomplete");
    assert!(
        done.iter().all(|d| d["events"] == 1),
        "the content before [DONE] still counts: {done:?}"
    );
}

/// llama-cpp-python's server closes the connection without ending the chunked body after the
/// `[DONE]` of a stream it cut: the request is judged by what came before `[DONE]`, not failed
/// as a broken body.
#[test]
fn a_body_broken_after_done_is_judged_by_its_finish_reason() {
    let chunk = |s: &str| format!("{:x}\r\n{s}\r\n", s.len());
    let head =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    let cut = RawServer::start(format!(
        "{head}{}{}",
        chunk("data: {\"choices\":[{\"text\":\"a\"}]}\n\n"),
        chunk("data: [DONE]\n\n")
    ));
    let (done, _) = failed_runs(&cut.url, &[]);
    all_of_kind(&done, "incomplete");
    assert!(done.iter().all(|d| d["events"] == 1), "{done:?}");

    let whole = RawServer::start(format!(
        "{head}{}{}{}",
        chunk("data: {\"choices\":[{\"text\":\"a\"}]}\n\n"),
        chunk("data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}\n\n"),
        chunk("data: [DONE]\n\n")
    ));
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["-n", "3", "--input-tokens", "3", "--output-tokens", "2"],
            ),
            cmd("fire", &["--url", &whole.url, "--model", "m"]),
        ],
        None,
    );
    assert_ok(&outs[1], "fire");
    let recs = records(&outs[1].stdout);
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 3);
    for d in done {
        assert_eq!(d["ok"], true, "{d}");
        assert_eq!(d["finish_reason"], "length", "{d}");
    }
    // The closing chunk, with no usage after it, stands for no token.
    assert_eq!(of_type(&recs, "token").len(), 3);
}

#[test]
fn an_error_in_the_stream_is_a_server_error() {
    let server = RawServer::start(format!(
        "{SSE_HEAD}data: {{\"error\":{{\"message\":\"boom\"}}}}\n\n"
    ));
    let (done, _) = failed_runs(&server.url, &[]);
    all_of_kind(&done, "server");
    assert!(
        done[0]["error"].as_str().unwrap().contains("boom"),
        "{}",
        done[0]
    );
}

#[test]
fn an_endless_line_is_a_parse_error_naming_the_cap() {
    let mut response = format!("{SSE_HEAD}data: ").into_bytes();
    response.resize(response.len() + (9 << 20), b'x');
    let server = RawServer::start(response);
    let (done, _) = failed_runs(&server.url, &[]);
    all_of_kind(&done, "parse");
    for d in &done {
        assert!(d["error"].as_str().unwrap().contains("8 MiB"), "{d}");
    }
}

#[test]
fn an_oversized_model_list_is_refused_with_a_warning() {
    let body = format!("{{\"data\":[{{\"id\":\"{}\"}}]}}", "m".repeat(2 << 20));
    let server = RawServer::start(format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ));
    let sched = run(
        &cmd(
            "arrivals",
            &["-n", "1", "--input-tokens", "3", "--output-tokens", "2"],
        ),
        b"",
    );
    let out = run(&cmd("fire", &["--url", &server.url]), &sched.stdout);
    assert_none_succeeded(&out, "fire");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("larger than 1 MiB") && stderr.contains("--model"),
        "{stderr}"
    );
    let recs = records(&out.stdout);
    assert!(recs[0]["params"]["model"].is_null(), "{}", recs[0]);
    assert_eq!(of_type(&recs, "done").len(), 1);
}
