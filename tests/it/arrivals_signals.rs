//! `arrivals` stopped by a signal while it writes a large schedule into a pipe: whatever it has
//! written ends after a whole record, it says why on stderr, and it exits 130 (SIGINT) or 143
//! (SIGTERM), so that `fire` downstream never reads half a line.

use crate::common;
use common::*;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Starts a schedule far too large to finish, reads its stdout `slowly` (4 KiB per
/// millisecond, so `arrivals` spends its time blocked on a full pipe) or at full speed, sends
/// `signal` 200 ms after the first bytes, and returns the output once the process has exited.
fn arrivals_stopped_by(signal: i32, slowly: bool) -> Output {
    let mut command = Command::new(bin("arrivals"));
    command.args(["--rate", "1000", "-n", "1000000", "--input-tokens", "64"]);
    // arrivals keeps a stop signal ignored if it was ignored when it started (a background
    // job's SIGINT), so the test gives it the default disposition whatever ran the tests.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start arrivals");
    let mut stdout = child.stdout.take().expect("arrivals stdout");
    let (started, first_bytes) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = vec![];
        let mut chunk = vec![0u8; 4096];
        loop {
            match stdout.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
            }
            let _ = started.send(());
            if slowly {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        all
    });
    // arrivals installs its handler before it writes, so once bytes arrive the signal is
    // handled rather than fatal, however slowly the process started.
    first_bytes
        .recv_timeout(Duration::from_secs(20))
        .expect("arrivals wrote nothing");
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let start = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("arrivals did not stop within 20 s of signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut out = child.wait_with_output().expect("wait");
    out.stdout = reader.join().expect("reader");
    out
}

/// Every line is a whole JSON record, and the requests are 0, 1, 2, ... with none missing:
/// the schedule was cut between records, never inside one.
fn assert_ends_after_a_whole_record(out: &Output) {
    assert!(!out.stdout.is_empty(), "nothing written before the signal");
    assert!(
        out.stdout.ends_with(b"\n"),
        "the last line is cut: {:?}",
        String::from_utf8_lossy(&out.stdout[out.stdout.len().saturating_sub(200)..])
    );
    let recs = records(&out.stdout);
    assert_eq!(recs[0]["type"], "header");
    let requests = of_type(&recs, "request");
    assert!(
        requests.len() < 1_000_000,
        "the whole schedule was written before the signal"
    );
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r["id"], i as u64, "{r}");
    }
}

#[test]
fn ctrl_c_while_blocked_on_a_slow_pipe_ends_after_a_whole_record() {
    let out = arrivals_stopped_by(libc::SIGINT, true);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "arrivals: interrupted\n"
    );
    assert_ends_after_a_whole_record(&out);
}

#[test]
fn sigterm_with_a_fast_reader_ends_after_a_whole_record() {
    let out = arrivals_stopped_by(libc::SIGTERM, false);
    assert_eq!(
        out.status.code(),
        Some(143),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "arrivals: terminated\n"
    );
    assert_ends_after_a_whole_record(&out);
}
