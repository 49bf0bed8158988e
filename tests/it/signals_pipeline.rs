//! SIGTERM to a whole pipeline (`kill -- -PGID`, `timeout`, a supervisor): every stage after
//! `arrivals` outlives it the way it outlives the first Ctrl-C, so the table of what was measured
//! is still printed, and each stage then ends with 143, as a script expects of a terminated run.

use crate::common;
use common::*;
use std::process::Child;
use std::time::Duration;

/// `arrivals | fire | reduce | table` in one process group, SIGTERM to the group mid-run: table
/// prints its table, and fire, reduce and table all exit 143.
#[test]
fn sigterm_on_the_whole_group_still_prints_the_table_and_every_stage_exits_143() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "20"]);
    let (children, group) = spawn_group(&[
        endless_arrivals(),
        cmd("fire", &["--url", &server.url]),
        cmd("reduce", &[]),
        cmd("table", &["--format", "markdown"]),
    ]);
    let [mut arrivals, mut fire, mut reduce, mut table]: [Child; 4] = children.try_into().unwrap();
    let shown = read_all(table.stdout.take().unwrap());
    let errs = [&mut fire, &mut reduce, &mut table].map(|c| read_all(c.stderr.take().unwrap()));
    std::thread::sleep(Duration::from_millis(800));
    send_signal(-group, libc::SIGTERM);
    let statuses = [&mut fire, &mut reduce, &mut table]
        .map(|c| wait_within(c, Duration::from_secs(30)).code());
    let _ = wait_within(&mut arrivals, Duration::from_secs(30));
    let errs = errs.map(|e| String::from_utf8_lossy(&e.join().unwrap()).into_owned());
    assert_eq!(
        statuses,
        [Some(143); 3],
        "stderr of fire, reduce, table: {errs:?}"
    );
    assert!(errs[1].contains("reduce: terminated"), "{}", errs[1]);
    let shown = String::from_utf8(shown.join().unwrap()).unwrap();
    assert!(shown.contains("TTFT"), "table printed no table: {shown:?}");
}

/// A second SIGTERM while `reduce` waits for the rest of its input quits at once with 143,
/// whatever upstream still holds open.
#[test]
fn a_second_sigterm_quits_reduce_at_once() {
    use std::process::{Command, Stdio};
    let mut reduce = Command::new(bin("reduce"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = reduce.stdin.take().unwrap();
    let err = read_all(reduce.stderr.take().unwrap());
    // Wait until the handler is in place (reduce prints nothing until then; give it time).
    std::thread::sleep(Duration::from_millis(500));
    send_signal(reduce.id() as i32, libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        reduce.try_wait().unwrap().is_none(),
        "reduce ended on the first SIGTERM while its input was still open"
    );
    send_signal(reduce.id() as i32, libc::SIGTERM);
    let status = wait_within(&mut reduce, Duration::from_secs(10));
    drop(stdin);
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(143), "{err}");
}
