//! What `fire` says when something goes wrong, through the real binaries: each message names
//! what is actually wrong. A clean Ctrl-C of `arrivals | fire` warns of no cut-off line; a run
//! whose every request failed says which statuses or error kinds it got.

use crate::common;
use common::*;
use std::process::{Child, Output};
use std::time::Duration;

/// `arrivals | fire` in one process group, Ctrl-C to the group mid-run, twice over: `arrivals`
/// stops after a whole line, so fire must not warn that the writer was stopped mid-line.
#[test]
fn a_clean_ctrl_c_of_the_pipe_warns_of_no_cut_off_line() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "20"]);
    for round in 0..2 {
        let (children, group) =
            spawn_group(&[endless_arrivals(), cmd("fire", &["--url", &server.url])]);
        let [mut arrivals, mut fire]: [Child; 2] = children.try_into().unwrap();
        let out = read_all(fire.stdout.take().unwrap());
        let err = read_all(fire.stderr.take().unwrap());
        std::thread::sleep(Duration::from_millis(800));
        send_signal(-group, libc::SIGINT);
        let status = wait_within(&mut fire, Duration::from_secs(30));
        let _ = wait_within(&mut arrivals, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        let out = out.join().unwrap();
        assert_eq!(status.code(), Some(130), "round {round}: {err}");
        assert!(err.contains("fire: interrupted"), "round {round}: {err}");
        assert!(!err.contains("cut off"), "round {round}: {err}");
        let recs = records(&out);
        assert!(!of_type(&recs, "done").is_empty(), "round {round}: {err}");
    }
}

/// A server that answers every request with `status` and an HTML page.
fn html_server(status: &str) -> RawServer {
    let page = "<html><body><h1>Welcome to nginx!</h1></body></html>";
    RawServer::start(format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    ))
}

fn three_requests_to(url: &str) -> Output {
    let out = run(
        &cmd(
            "arrivals",
            &["--rate", "100", "-n", "3", "--output-tokens", "4"],
        ),
        b"",
    );
    assert_ok(&out, "arrivals");
    run(&cmd("fire", &["--url", url, "--model", "m"]), &out.stdout)
}

#[test]
fn a_run_whose_requests_all_failed_says_what_it_got() {
    let not_found = html_server("404 Not Found");
    let out = three_requests_to(&not_found.url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("fire: none of the 3 requests sent succeeded: 3 × HTTP 404 Not Found\n"),
        "{stderr}"
    );
    let page = html_server("200 OK");
    let out = three_requests_to(&page.url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "fire: none of the 3 requests sent succeeded: 3 × HTTP 200 OK but not an event stream\n"
        ),
        "{stderr}"
    );
}
