//! Memory and connections from one number: a count of requests in flight above the bound
//! (`MAX_IN_FLIGHT`, 1,000,000) is refused where it enters (arrivals' flags, fire's flag, a
//! schedule record), and fire opens no more connections ahead of the run than it can use.

use crate::common::*;

/// Stderr of a process, as text.
fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn arrivals_refuses_an_absurd_count_in_flight_naming_the_flag() {
    for (flag, extra) in [
        ("--concurrency", &["-n", "2"][..]),
        ("--batch", &[][..]),
        ("--max-concurrency", &["-n", "2"][..]),
    ] {
        let mut args = vec![flag, "4000000000"];
        args.extend_from_slice(extra);
        let out = run(&cmd("arrivals", &args), b"");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(out.stdout.is_empty(), "{flag}");
        for word in [flag, "4000000000", "1000000"] {
            assert!(err.contains(word), "{flag}: {word} not in {err}");
        }
    }
    // The bound itself is a valid run.
    let out = run(
        &cmd("arrivals", &["--concurrency", "1000000", "-n", "2"]),
        b"",
    );
    assert_ok(&out, "arrivals at the bound");
}

/// `arrivals`' schedule with its `schedule` record's `field` set to `value`.
fn with_schedule_field(args: &[&str], field: &str, value: u64) -> Vec<u8> {
    let out = run(&cmd("arrivals", args), b"");
    assert_ok(&out, "arrivals");
    let mut text = Vec::new();
    for mut rec in records(&out.stdout) {
        if rec["type"] == "schedule" {
            rec[field] = value.into();
        }
        serde_json::to_writer(&mut text, &rec).expect("encode a record");
        text.push(b'\n');
    }
    text
}

#[test]
fn fire_refuses_a_schedule_with_an_absurd_count_in_flight() {
    // Nothing listens: fire must refuse the schedule before it connects to anything.
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    for (args, field) in [
        (&["--concurrency", "2", "-n", "2"][..], "concurrency"),
        (&["--batch", "2", "--runs", "1"][..], "concurrency"),
        (
            &["--max-concurrency", "2", "-n", "2"][..],
            "max_concurrency",
        ),
    ] {
        let sched = with_schedule_field(args, field, 4_000_000_000);
        let out = run(&cmd("fire", &["--url", &url, "--model", "m"]), &sched);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for word in ["line 2", &format!("\"{field}\""), "4000000000", "1000000"] {
            assert!(err.contains(word), "{args:?}: {word} not in {err}");
        }
    }
    // fire's own --concurrency has the same bound.
    let sched = with_schedule_field(&["--concurrency", "2", "-n", "2"], "concurrency", 2);
    let out = run(
        &cmd("fire", &["--url", &url, "--concurrency", "4000000000"]),
        &sched,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--concurrency") && err.contains("4000000000"),
        "{err}"
    );
}

/// `arrivals`' closed loop of `requests` two-token requests over `slots` slots.
fn slots_schedule(slots: &str, requests: &str) -> Vec<u8> {
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--concurrency",
                slots,
                "-n",
                requests,
                "--input-tokens",
                "8",
                "--output-tokens",
                "2",
            ],
        ),
        b"",
    );
    assert_ok(&sched, "arrivals");
    sched.stdout
}

/// `arrivals --concurrency SLOTS -n REQUESTS` of 8 → 2 tokens, fired at `sim`: fire's records,
/// after asserting that every request succeeded, and its stderr.
fn fire_slots(sim: &Server, slots: &str, requests: &str) -> (Vec<serde_json::Value>, String) {
    let sched = slots_schedule(slots, requests);
    let out = run(&cmd("fire", &["--url", &sim.url, "--model", "m"]), &sched);
    assert_ok(&out, "fire");
    let recs = records(&out.stdout);
    let done = of_type(&recs, "done");
    assert_eq!(done.len().to_string(), requests);
    assert!(done.iter().all(|d| d["ok"] == true), "{done:?}");
    (recs, stderr(&out))
}

#[test]
fn fire_preconnects_no_more_connections_than_the_schedule_has_requests() {
    let sim = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let (recs, _) = fire_slots(&sim, "19000", "4");
    assert_eq!(
        recs[0]["params"]["transport"]["preconnected"], 4,
        "{}",
        recs[0]
    );
}

#[test]
fn fire_preconnects_no_more_connections_than_its_open_file_limit_leaves() {
    // 150 in flight under a limit of 200 open files: 200 less fire's reserve of 64 leaves 136
    // to open ahead; the other 14 connect as they are sent, and every request succeeds.
    use std::os::unix::process::CommandExt;
    let sim = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let sched = slots_schedule("150", "150");
    let mut fire = std::process::Command::new(bin("fire"));
    fire.args(["--url", &sim.url, "--model", "m"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; it runs in the child between fork and exec.
    unsafe {
        fire.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 200,
                rlim_max: 200,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = fire.spawn().expect("start fire");
    let mut stdin = child.stdin.take().expect("stdin");
    std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &sched));
    let out = child.wait_with_output().expect("wait for fire");
    assert_ok(&out, "fire");
    let recs = records(&out.stdout);
    assert_eq!(
        recs[0]["params"]["transport"]["preconnected"], 136,
        "{}",
        recs[0]
    );
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 150);
    assert!(done.iter().all(|d| d["ok"] == true), "{}", stderr(&out));
}

#[test]
fn a_million_slots_for_two_requests_cost_two_connections_and_no_warning() {
    // At the bound, with fewer requests than slots: fire opens what the two requests use, and
    // does not warn that a million requests in flight need more open files than it has.
    let sim = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let (recs, err) = fire_slots(&sim, "1000000", "2");
    assert_eq!(
        recs[0]["params"]["transport"]["preconnected"], 2,
        "{}",
        recs[0]
    );
    assert!(!err.contains("open files"), "{err}");
}

#[test]
fn under_a_256_mib_address_space_an_absurd_schedule_exits_2_and_the_bound_runs() {
    // `ulimit -v` turns an allocation sized by the input into an abort (exit 134) instead of
    // the OOM killer's; refusing the number before allocating anything keeps exit 2.
    let sim = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let absurd = with_schedule_field(
        &["--concurrency", "2", "-n", "2"],
        "concurrency",
        4_000_000_000,
    );
    let bound = with_schedule_field(&["--concurrency", "2", "-n", "2"], "concurrency", 1_000_000);
    for (schedule, want) in [(absurd, 2), (bound, 0)] {
        let path = temp_path("ulimit-schedule.ndjson");
        std::fs::write(&path, &schedule).expect("write the schedule");
        let out = under_256_mib(&format!(
            "{} --url {} < {}",
            bin("fire"),
            sim.url,
            path.display()
        ));
        assert_eq!(out.status.code(), Some(want), "{}", stderr(&out));
    }
    let out = under_256_mib(&format!(
        "{} --concurrency 4000000000 -n 2",
        bin("arrivals")
    ));
    assert_eq!(out.status.code(), Some(2), "arrivals: {}", stderr(&out));
}

/// Runs the shell command line `line` with its address space limited to 256 MiB.
fn under_256_mib(line: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .args(["-c", &format!("ulimit -v 262144 && exec {line}")])
        .output()
        .expect("run sh")
}
