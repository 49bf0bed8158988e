//! Credentials in a URL (`--url http://alice:s3cret@host/v1`, `--endpoint`, `--server-metrics`)
//! through the real binaries: they arrive as `Authorization: Basic` at that URL's host only,
//! `Host` is `host[:port]`, and the password reaches no output (records, stderr, a reduce
//! summary of fire's output).

use crate::common;
use crate::server_metrics::recording_metrics_server;
use common::*;

/// base64("alice:s3cret").
const ALICE: &str = "Basic YWxpY2U6czNjcmV0";

/// The URL of `server` with `user:pass@` before its host.
fn with_credentials(url: &str, user_pass: &str) -> String {
    url.replacen("://", &format!("://{user_pass}@"), 1)
}

#[test]
fn credentials_in_the_url_become_basic_auth_and_reach_no_output() {
    let log = temp_path("credentials-log");
    let log_arg = log.to_string_lossy().to_string();
    let server = Server::start(&[
        "--ttft-ms",
        "1",
        "--itl-ms",
        "1",
        "--log-requests",
        &log_arg,
    ]);
    let host = server.url["http://".len()..]
        .trim_end_matches("/v1")
        .to_string();
    let url = with_credentials(&server.url, "alice:s3cret");
    let shown = with_credentials(&server.url, "alice:***");
    let schedule = closed_schedule(2, 2, |_| {});
    // --api-key is given too: the URL's credentials win for their host.
    let fire = cmd(
        "fire",
        &["--url", &url, "--api-key", "sk-other", "--server-metrics"],
    );
    let out = run(&fire, &schedule);
    assert_ok(&out, "fire");
    server.stop();
    let logged = records(&std::fs::read(&log).expect("the request log"));
    let _ = std::fs::remove_file(&log);
    assert_eq!(logged.len(), 2);
    for line in &logged {
        assert_eq!(line["headers"]["authorization"], ALICE, "{line}");
        assert_eq!(line["headers"]["host"], host.as_str(), "{line}");
    }
    let events = records(&out.stdout);
    assert_eq!(of_type(&events, "done").len(), 2);
    assert_eq!(of_type(&events, "server_metrics").len(), 2);
    let header = &events[0];
    assert_eq!(header["params"]["url"], shown.as_str(), "{header}");
    assert!(
        header["argv"]
            .as_array()
            .expect("argv")
            .contains(&shown.as_str().into()),
        "{header}"
    );
    let reduced = run(&cmd("reduce", &[]), &out.stdout);
    assert_ok(&reduced, "reduce");
    for (what, bytes) in [
        ("fire's stdout", &out.stdout),
        ("fire's stderr", &out.stderr),
        ("reduce's summary", &reduced.stdout),
    ] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains("s3cret") && !text.contains("sk-other"),
            "{what}: {text}"
        );
    }
}

#[test]
fn the_metrics_urls_credentials_go_to_its_host_alone() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let (metrics_url, heads) = recording_metrics_server(2);
    let metrics_host = metrics_url["http://".len()..]
        .trim_end_matches("/metrics")
        .to_string();
    let elsewhere = format!(
        "--server-metrics={}",
        with_credentials(&metrics_url, "carol:pw3")
    );
    let url = with_credentials(&server.url, "alice:s3cret");
    let schedule = closed_schedule(1, 2, |_| {});
    let out = run(&cmd("fire", &["--url", &url, &elsewhere]), &schedule);
    assert_ok(&out, "fire");
    let heads = heads.join().expect("metrics server");
    assert_eq!(heads.len(), 2);
    for head in heads {
        // base64("carol:pw3"), lowercased as the server lowercases the head.
        assert!(
            head.contains("authorization: basic y2fyb2w6chcz\r\n"),
            "{head}"
        );
        assert!(
            head.contains(&format!("host: {metrics_host}\r\n")),
            "{head}"
        );
        assert!(
            !head.contains("ywxpy2u6czncy3jldg"),
            "alice's went elsewhere: {head}"
        );
    }
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains("pw3") && !text.contains("s3cret"), "{text}");
    assert!(text.contains("carol:***@"), "argv keeps the user: {text}");
}

#[test]
fn a_password_stays_out_of_the_error_messages() {
    let dead = format!("http://alice:s3cret@127.0.0.1:{}/v1", dead_port());
    let schedule = closed_schedule(1, 2, |_| {});
    let out = run(
        &cmd("fire", &["--url", &dead, "--connect-timeout", "2s"]),
        &schedule,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("alice:***@127.0.0.1"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    let bad = "http://alice:s3cret%zz@127.0.0.1:1/v1";
    let out = run(&cmd("fire", &["--url", bad]), &schedule);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("percent-encoded") && !stderr.contains("s3cret"),
        "{stderr}"
    );
    // A bad --server-metrics is refused before model discovery (nothing listens there).
    let bad = "--server-metrics=http://carol:pw3%zz@127.0.0.1:1/metrics";
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let out = run(&cmd("fire", &["--url", &url, bad]), &schedule);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--server-metrics") && !stderr.contains("pw3"),
        "{stderr}"
    );
}
