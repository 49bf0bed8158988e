//! fire's account of itself, end to end: the `client` record that closes its output and agrees
//! with the `done` records, the end-of-run counts and the warnings on stderr, a run made to fall
//! behind its schedule, the progress view (off on a pipe unless asked for), and `reduce`
//! carrying the client's verdict into the summary.

use crate::common;
use common::*;

/// Runs `arrivals ARGS | fire --url URL FIRE_ARGS`, checks fire succeeded, and returns fire's
/// records and stderr.
fn fire_run(
    url: &str,
    arrivals: &[&str],
    fire_extra: &[&str],
) -> (Vec<serde_json::Value>, String, Vec<u8>) {
    let mut fire_args = vec!["--url", url, "--model", "m"];
    fire_args.extend_from_slice(fire_extra);
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire_args)], None);
    assert_ok(&outs[1], "fire");
    let stderr = String::from_utf8_lossy(&outs[1].stderr).into_owned();
    (records(&outs[1].stdout), stderr, outs[1].stdout.clone())
}

fn count(recs: &[serde_json::Value], f: impl Fn(&serde_json::Value) -> bool) -> u64 {
    recs.iter().filter(|r| f(r)).count() as u64
}

#[test]
fn the_last_record_is_the_client_and_its_counts_match_the_done_records() {
    let server = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "2",
        "--fault",
        "http=503:0.3",
        "--fault-seed",
        "7",
    ]);
    let (recs, stderr, stdout) = fire_run(
        &server.url,
        &[
            "--rate",
            "200",
            "-n",
            "40",
            "--input-tokens",
            "4",
            "--output-tokens",
            "3",
            "--seed",
            "1",
        ],
        &[],
    );
    let client = recs.last().expect("some output");
    assert_eq!(client["type"], "client", "last record: {client}");
    assert_eq!(count(&recs, |r| r["type"] == "client"), 1);
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 40);
    let ok = count(&recs, |r| r["type"] == "done" && r["ok"] == true);
    let failed = count(&recs, |r| r["type"] == "done" && r["error_kind"] == "http");
    assert!(
        failed > 0 && ok > 0,
        "the fault hit some, not all: {ok} ok, {failed} failed"
    );
    assert_eq!(
        client["sent"],
        count(&recs, |r| r["type"] == "sent"),
        "{client}"
    );
    assert_eq!(client["ok"], ok, "{client}");
    assert_eq!(client["failed"], failed, "{client}");
    assert_eq!(
        (client["cancelled"].as_u64(), client["not_sent"].as_u64()),
        (Some(0), Some(0))
    );
    let peak = client["peak_in_flight"].as_u64().unwrap();
    assert!((1..=40).contains(&peak), "{client}");
    assert_eq!(client["threads"], 1);
    let wall = client["wall_ns"].as_u64().unwrap();
    let last_done = done
        .iter()
        .map(|d| d["at_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(
        wall >= last_done,
        "wall {wall} before the last done {last_done}"
    );
    assert!(
        client["cpu_user_ns"].as_u64().unwrap() + client["cpu_system_ns"].as_u64().unwrap() > 0
    );
    assert!(
        client["max_rss_bytes"].as_u64().unwrap() > 1 << 20,
        "{client}"
    );
    let busy = client["cpu_busy"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&busy), "{client}");
    let lag_max = client["dispatch_lag_max_ns"].as_u64().unwrap();
    let lag_max_seen = of_type(&recs, "sent")
        .iter()
        .map(|s| s["sent_ns"].as_u64().unwrap() - s["scheduled_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    // The histogram keeps three significant digits.
    assert!(
        lag_max.abs_diff(lag_max_seen) <= lag_max_seen / 500 + 1,
        "{lag_max} vs {lag_max_seen}"
    );
    assert_eq!(
        client["kept_up"],
        client["warnings"].as_array().unwrap().is_empty()
    );

    // The counts on stderr, failures by kind; no progress view on a pipe.
    assert!(
        stderr.contains(&format!(
            "fire: 40 requests: {ok} ok, {failed} failed (http: {failed})"
        )),
        "{stderr}"
    );
    assert!(
        !stderr.contains("progress") && !stderr.contains('\r') && !stderr.contains('\x1b'),
        "{stderr}"
    );

    // reduce carries the verdict and the CPU into the summary.
    let reduced = run(&cmd("reduce", &[]), &stdout);
    assert_ok(&reduced, "reduce");
    let summary = of_type(&records(&reduced.stdout), "summary")[0].clone();
    assert_eq!(summary["client_kept_up"], client["kept_up"], "{summary}");
    assert!(summary["client_cpu_s"].as_f64().unwrap() > 0.0, "{summary}");
    assert_eq!(summary["requests_failed"], failed);
}

#[test]
fn a_schedule_far_beyond_one_thread_is_reported_as_not_kept_up() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    // 1,500 requests due within 15 ms: one network thread cannot open connections and send
    // that fast (let alone on a busy two-core machine), so most leave many ms late.
    let (recs, stderr, stdout) = fire_run(
        &server.url,
        &[
            "--rate",
            "100000",
            "-n",
            "1500",
            "--input-tokens",
            "2",
            "--output-tokens",
            "1",
            "--seed",
            "3",
        ],
        &["--threads", "1"],
    );
    let client = recs.last().unwrap();
    assert_eq!(client["type"], "client");
    assert_eq!(client["kept_up"], false, "{client}");
    let warnings = client["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("left more than 1.00 ms late")),
        "{client}"
    );
    assert!(
        client["dispatch_lag_p99_ns"].as_u64().unwrap() > 1_000_000,
        "{client}"
    );
    assert!(
        stderr.contains("fire: warning: the client did not keep up: "),
        "{stderr}"
    );
    let reduced = run(&cmd("reduce", &[]), &stdout);
    assert_ok(&reduced, "reduce");
    let summary = of_type(&records(&reduced.stdout), "summary")[0].clone();
    assert_eq!(summary["client_kept_up"], false, "{summary}");
    assert!(
        !summary["client_warnings"].as_array().unwrap().is_empty(),
        "{summary}"
    );
    assert!(String::from_utf8_lossy(&reduced.stderr).contains("the client did not keep up"));
    let table = run(&cmd("table", &[]), &reduced.stdout);
    assert_ok(&table, "table");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("Client kept up") && text.contains("no"),
        "{text}"
    );
}

#[test]
fn a_wait_for_a_capped_slot_is_queue_time_not_client_lag() {
    // 16 requests due within 80 ms, at most 2 in flight, each about 55 ms long: most wait
    // hundreds of ms for a slot. That wait is the cap's (arena 08's queue), not the client
    // falling behind, so the client's own lag stays small while the summary's queue time
    // shows the wait.
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "5"]);
    let (recs, stderr, stdout) = fire_run(
        &server.url,
        &[
            "--rate",
            "200",
            "-n",
            "16",
            "--max-concurrency",
            "2",
            "--input-tokens",
            "8",
            "--output-tokens",
            "10",
            "--seed",
            "1",
        ],
        &[],
    );
    let waits: Vec<u64> = of_type(&recs, "sent")
        .iter()
        .map(|s| s["sent_ns"].as_u64().unwrap() - s["scheduled_ns"].as_u64().unwrap())
        .collect();
    let longest = *waits.iter().max().unwrap();
    assert!(
        longest > 200_000_000,
        "the cap held requests back: {waits:?}"
    );
    let client = recs.last().unwrap();
    let lag_max = client["dispatch_lag_max_ns"].as_u64().unwrap();
    assert!(
        lag_max < longest / 4,
        "the client's own lag leaves out the wait for a slot: {client}"
    );
    if client["kept_up"] == false {
        // Only a lag of the client's own may be blamed, never the queue's length.
        assert!(lag_max > 1_000_000, "{client} {stderr}");
    }
    let reduced = run(&cmd("reduce", &[]), &stdout);
    assert_ok(&reduced, "reduce");
    let summary = of_type(&records(&reduced.stdout), "summary")[0].clone();
    let queue_max = summary["dispatch_lag_max_ms"].as_f64().unwrap();
    assert!(
        (queue_max * 1e6 - longest as f64).abs() < 1e6,
        "the summary's queue time keeps the wait: {summary}"
    );
}

#[test]
fn progress_is_forced_onto_a_pipe_and_quiet_silences_the_counts() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let sched = [
        "--rate",
        "100",
        "-n",
        "5",
        "--input-tokens",
        "2",
        "--output-tokens",
        "2",
    ];
    let (_, stderr, _) = fire_run(&server.url, &sched, &["--progress"]);
    // A plain line (no cursor movement) at the start and once a second.
    assert!(stderr.contains("fire: progress: sent "), "{stderr}");
    assert!(stderr.contains(" in flight "), "{stderr}");
    assert!(
        !stderr.contains('\r') && !stderr.contains('\x1b'),
        "{stderr}"
    );
    assert!(stderr.contains("fire: 5 requests: 5 ok"), "{stderr}");

    let (recs, stderr, _) = fire_run(&server.url, &sched, &["--quiet"]);
    assert_eq!(recs.last().unwrap()["type"], "client");
    assert!(
        !stderr.contains("requests:") && !stderr.contains("progress"),
        "{stderr}"
    );

    let both = run(
        &cmd("fire", &["--url", &server.url, "--progress", "--quiet"]),
        b"",
    );
    assert_eq!(
        both.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
}

/// The `client` record of a healthy run of `arrivals ARGS` that sends everything due at one
/// instant, with fire's stderr; checks it was judged, kept up and warned of nothing.
fn wave_kept_up(url: &str, arrivals: &[&str], fire: &[&str]) -> serde_json::Value {
    let (recs, stderr, stdout) = fire_run(url, arrivals, fire);
    let client = recs.last().unwrap().clone();
    assert_eq!(client["type"], "client");
    // The requests did leave one after another, most more than 1 ms after their instant on
    // a busy machine: what the rule for requests due alone would call a slow client.
    assert_eq!(client["kept_up"], true, "{client}\n{stderr}");
    assert!(
        client["warnings"].as_array().unwrap().is_empty(),
        "{client}"
    );
    assert!(client.get("not_judged").is_none(), "judged: {client}");
    assert!(!stderr.contains("did not keep up"), "{stderr}");
    let busy = client["cpu_busy"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&busy), "{client}");
    let reduced = run(&cmd("reduce", &[]), &stdout);
    assert_ok(&reduced, "reduce");
    let summary = of_type(&records(&reduced.stdout), "summary")[0].clone();
    assert_eq!(summary["verdict"]["client"]["ok"], true, "{summary}");
    client
}

#[test]
fn a_rate_inf_run_and_a_batch_run_send_their_waves_without_a_warning() {
    // A server 200 ms to a first token: a wave is sent in time within 200 ms, which 64
    // requests take far less than even on a busy machine.
    let server = Server::start(&["--ttft-ms", "200", "--itl-ms", "2"]);
    let tokens = ["--input-tokens", "8", "--output-tokens", "2", "--seed", "5"];
    let inf = [&["--rate", "inf", "-n", "64"][..], &tokens].concat();
    let client = wave_kept_up(&server.url, &inf, &[]);
    assert_eq!(client["sent"], 64);
    let batch = [
        &["--batch", "32", "--runs", "2", "--no-warmup"][..],
        &tokens,
    ]
    .concat();
    let client = wave_kept_up(&server.url, &batch, &["--api", "completions"]);
    assert_eq!(client["sent"], 64);
}

#[test]
fn a_closed_loops_first_wave_is_judged_as_a_wave() {
    // 64 streams, 64 requests: the slots open together and are filled one after another, the
    // last some ms after the first on a busy machine. That is one wave, judged against the
    // 200 ms TTFT rather than each request against 1 ms (the send loop's unit test sets the
    // timings exactly; here the run is judged and warns of nothing).
    let server = Server::start(&["--ttft-ms", "200", "--itl-ms", "2"]);
    let closed = [
        "--concurrency",
        "64",
        "-n",
        "64",
        "--input-tokens",
        "8",
        "--output-tokens",
        "2",
        "--seed",
        "5",
    ];
    let client = wave_kept_up(&server.url, &closed, &[]);
    assert_eq!(client["sent"], 64);
    assert_eq!(client["peak_in_flight"], 64, "{client}");
}

#[test]
fn a_run_of_three_requests_is_too_short_to_judge() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let (recs, stderr, stdout) = fire_run(
        &server.url,
        &[
            "--rate",
            "100",
            "-n",
            "3",
            "--input-tokens",
            "4",
            "--output-tokens",
            "2",
        ],
        // One thread: its own time, not the run's, is what cpu_busy divides by.
        &["--threads", "1"],
    );
    let client = recs.last().unwrap();
    assert_eq!(client["type"], "client");
    assert_eq!(client["kept_up"], true, "{client}");
    assert_eq!(
        client["not_judged"], "too short to judge: 3 request(s) sent on a schedule, fewer than 20",
        "{client}"
    );
    assert!(client["warnings"].as_array().unwrap().is_empty());
    let busy = client["cpu_busy"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&busy), "{client}");
    assert!(!stderr.contains("did not keep up"), "{stderr}");
    let reduced = run(&cmd("reduce", &[]), &stdout);
    assert_ok(&reduced, "reduce");
    let summary = of_type(&records(&reduced.stdout), "summary")[0].clone();
    assert_eq!(summary["verdict"]["client"]["ok"], serde_json::Value::Null);
    assert!(
        summary["verdict"]["client"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("too short to judge"),
        "{summary}"
    );
    assert_eq!(summary["verdict"]["comparable"], true, "{summary}");
}

#[test]
fn a_schedule_refused_at_line_3_writes_no_client_record() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let sched = "{\"type\":\"header\",\"format_major\":1,\"tool\":\"arrivals\",\"tool_version\":\"0\",\"run_id\":\"a\"}\n\
{\"type\":\"request\",\"id\":0,\"offset_ns\":0,\"prompt\":\"x\",\"prompt_tokens\":1,\"max_tokens\":1}\n\
{\"type\":\"request\",\"id\":0,\"offset_ns\":0,\"prompt\":\"y\",\"prompt_tokens\":1,\"max_tokens\":1}\n";
    let o = run(
        &cmd("fire", &["--url", &server.url, "--model", "m"]),
        sched.as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("line 3") && stderr.contains("appears twice"),
        "{stderr}"
    );
    let recs = records(&o.stdout);
    assert_eq!(recs[0]["type"], "header");
    assert!(
        recs.iter().all(|r| r["type"] != "client"),
        "no client record: {recs:?}"
    );
    assert!(
        !stderr.contains("busy") && !stderr.contains("did not keep up"),
        "{stderr}"
    );
}
