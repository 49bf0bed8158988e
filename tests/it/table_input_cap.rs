//! `table` holds no more of an input than the record reader's line cap (64 MiB): an input
//! without newlines is refused at the cap with the message every tool gives, naming the input
//! and the line, instead of being read whole first.

use crate::common;
use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// 1 GiB without a newline on stdin: exit 2, the line-too-long message, and a peak resident
/// size (the child's own, from wait4) far below the input's. table stops reading at the 64 MiB
/// cap, so the rest is never written; its peak stays a small multiple of the cap (a growing
/// buffer may be copied once as it doubles), where reading the input whole took twice its size.
#[test]
// The child is reaped by wait4 (which alone gives its own peak size), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn an_input_without_newlines_is_refused_at_the_cap_without_reading_it_whole() {
    const INPUT: usize = 1 << 30;
    let mut table = Command::new(bin("table"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = table.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..INPUT / chunk.len() {
            if stdin.write_all(&chunk).is_err() {
                break; // table refused the input and closed its end
            }
        }
    });
    let err = read_all(table.stderr.take().unwrap());
    let out = read_all(table.stdout.take().unwrap());
    let (code, max_rss_kib) = wait_with_rusage(table.id() as i32);
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    assert!(out.join().unwrap().is_empty());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("<stdin>: line 1: line is longer than 64 MiB; is this NDJSON?"),
        "{err}"
    );
    let max_rss = max_rss_kib as usize * 1024;
    assert!(
        max_rss < INPUT / 4,
        "table peaked at {max_rss} bytes resident for a {INPUT}-byte input"
    );
}

/// The same cap on a named file whose first line opens a JSON object (what table sniffs for a
/// `vllm bench serve` result): the error names the file and line 1.
#[test]
fn a_named_file_without_newlines_is_refused_naming_the_file() {
    let path = temp_path("table-no-newlines.json");
    let mut text = b"{\"completed\": 1, ".to_vec();
    text.resize((64 << 20) + 100, b' ');
    std::fs::write(&path, &text).unwrap();
    let out = run(&cmd("table", &[path.to_str().unwrap()]), b"");
    let _ = std::fs::remove_file(&path);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let expected = format!(
        "{}: line 1: line is longer than 64 MiB; is this NDJSON?",
        path.display()
    );
    assert!(err.contains(&expected), "{err}");
}

/// Waits for the child `pid` and returns its exit code and its own peak resident size in KiB.
fn wait_with_rusage(pid: i32) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid value; wait4 writes into both out-parameters.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4 failed");
    assert!(libc::WIFEXITED(status), "table died of a signal: {status}");
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}
