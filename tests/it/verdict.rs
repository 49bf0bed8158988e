//! The verdict in `table` (docs/verdict.md, docs/table.md "Comparable runs"): the Comparable row
//! and column, Failed as the server's failures with Cancelled and Not sent apart,
//! `--only-comparable`, and rankings that mark a run that is not comparable. Through the binary,
//! on summaries written for the purpose (`tests/fixtures/table/verdict.ndjson`: a run failing
//! 30 % written before format 1.7, so that table judges it, and one whose written verdict says
//! the server counted half of it; `stopped.ndjson`: a run stopped with Ctrl-C), and on a run
//! against simserve failing 30 % of its requests.

use crate::common;
use common::*;
use std::path::PathBuf;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/table")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `table ARGS` on no stdin: its stdout and stderr, after checking it exited 0.
fn table(args: &[&str]) -> (String, String) {
    let out = run(&cmd("table", args), b"");
    assert_ok(&out, "table");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The cells of the Markdown row named `name`, trimmed.
fn row<'a>(markdown: &'a str, name: &str) -> Vec<&'a str> {
    let line = markdown
        .lines()
        .find(|l| l.starts_with(&format!("| {name} ")))
        .unwrap_or_else(|| panic!("no row {name}:\n{markdown}"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

const FLAKY_REASON: &str = "incomplete: 30 of 100 failed (30.0 %: http: 30)";
const LOST_REASON: &str = "the server's counts disagree (requests: server 50, client 100)";

#[test]
fn the_comparable_row_says_no_with_the_reason_and_failed_counts_kinds() {
    let verdicts = fixture("verdict.ndjson");
    let (md, _) = table(&["--format", "markdown", &verdicts]);
    assert_eq!(
        row(&md, "Metric"),
        ["Metric", "fast", "flaky", "slow", "lost", "steady"]
    );
    assert_eq!(
        row(&md, "Comparable"),
        [
            "Comparable",
            "yes",
            "no: 30/100 failed",
            "yes",
            "no: server disagrees",
            "yes"
        ]
    );
    assert_eq!(
        row(&md, "Failed requests"),
        ["Failed requests", "0", "30", "0", "0", "0"]
    );
    assert_eq!(
        row(&md, "Failed: http"),
        ["Failed: http", "0", "30", "0", "0", "0"]
    );
    // The full reasons under the table: one worked out (format 1.6), one as written.
    assert!(
        md.contains(&format!("Not comparable: flaky: {FLAKY_REASON}")),
        "{md}"
    );
    assert!(
        md.contains(&format!("Not comparable: lost: {LOST_REASON}")),
        "{md}"
    );
    // A run whose requests all ended has no Cancelled or Not sent rows.
    assert!(
        !md.contains("Cancelled") && !md.contains("not sent"),
        "{md}"
    );

    // As rows, a Comparable column; for machines, a boolean and the reason.
    let (long, _) = table(&["--layout", "long", "--format", "markdown", &verdicts]);
    assert_eq!(
        row(&long, "flaky")[..4],
        ["flaky", "no: 30/100 failed", "70", "30"]
    );
    let (csv, _) = table(&["--format", "csv", &verdicts]);
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let flaky = csv.lines().find(|l| l.starts_with("flaky,")).unwrap();
    let cells: Vec<&str> = flaky.splitn(at("verdict.reason") + 1, ',').collect();
    assert_eq!(cells[at("verdict.comparable")], "false", "{csv}");
    // The reason holds no comma, so it is not quoted; the rest of the line follows it.
    assert!(
        cells[at("verdict.reason")].starts_with(&format!("{FLAKY_REASON},")),
        "{csv}"
    );
    let (json, _) = table(&[
        "--format",
        "json",
        "--columns",
        "comparable,verdict",
        &verdicts,
    ]);
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(rows[0]["comparable"], true);
    assert_eq!(rows[1]["comparable"], false);
    assert_eq!(rows[1]["verdict"], FLAKY_REASON);
}

#[test]
fn a_stopped_run_shows_cancelled_and_not_sent_and_failed_none() {
    // `errors: {cancelled: 2, not_sent: 87}`: once `OK 11, Failed 89`.
    let (md, _) = table(&["--format", "markdown", &fixture("stopped.ndjson")]);
    assert_eq!(row(&md, "Successful requests")[1], "11");
    assert_eq!(row(&md, "Failed requests")[1], "0");
    assert_eq!(row(&md, "Cancelled requests")[1], "2");
    assert_eq!(row(&md, "Requests not sent")[1], "87");
    assert!(!md.contains("Failed: "), "no failure kinds: {md}");
    assert_eq!(row(&md, "Comparable")[1], "no: 2 cancelled, 87 not sent");
    let (long, _) = table(&[
        "--layout",
        "long",
        "--format",
        "markdown",
        &fixture("stopped.ndjson"),
        &fixture("verdict.ndjson"),
    ]);
    assert_eq!(
        row(&long, "Label"),
        [
            "Label",
            "Comparable",
            "OK",
            "Failed",
            "Cancelled",
            "Not sent",
            "Output [tok/s]",
            "TTFT p50 [ms]",
            "TTFT p99 [ms]"
        ]
    );
    assert_eq!(row(&long, "stopped")[2..6], ["11", "0", "2", "87"]);

    // vLLM's block keeps its lines; Failed is the server's, and stderr names the verdict.
    let (block, stderr) = table(&["--style", "vllm", &fixture("stopped.ndjson")]);
    assert!(
        block.contains("\nFailed requests:                         0         \n"),
        "{block}"
    );
    assert!(!block.contains("Comparable") && !block.contains("Cancelled"));
    assert_eq!(
        stderr,
        "table: not comparable: stopped: incomplete: 2 cancelled, 87 not sent\n"
    );
}

#[test]
fn only_comparable_leaves_runs_out_of_pivots_rankings_and_charts_and_names_them() {
    let verdicts = fixture("verdict.ndjson");
    let named = |stderr: &str| {
        assert!(
            stderr.contains(&format!("table: left out flaky: {FLAKY_REASON}\n")),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("table: left out lost: {LOST_REASON}\n")),
            "{stderr}"
        );
    };
    let pivot = [
        "--rows", "model", "--cols", "profile", "--format", "markdown",
    ];
    let (all, _) = table(&[&pivot[..], &[verdicts.as_str()]].concat());
    assert!(all.contains("m-flaky") && all.contains("900.00 †"), "{all}");
    assert!(
        all.contains("† flaky (fire-flaky) is not comparable: incomplete: 30 of 100 failed"),
        "{all}"
    );
    // Machines get the number alone.
    let (csv, _) = table(&[
        "--rows", "model", "--cols", "profile", "--format", "csv", &verdicts,
    ]);
    assert!(csv.contains("\nm-flaky,900.0,\n"), "{csv}");
    let (md, stderr) = table(&[&pivot[..], &["--only-comparable", verdicts.as_str()]].concat());
    assert!(!md.contains("m-flaky") && !md.contains("m-lost"), "{md}");
    assert_eq!(row(&md, "m-fast"), ["m-fast", "500.00", "450.00"]);
    named(&stderr);

    let (top, stderr) = table(&["--top", "3", "--only-comparable", &verdicts]);
    assert!(top.contains("fast (500.00 tok/s)"), "{top}");
    assert!(!top.contains("flaky") && !top.contains('†'), "{top}");
    named(&stderr);

    // Bars best first rank too: marked, and why, unless left out.
    let (bars, stderr) = table(&[
        "--format", "mermaid", "--rows", "model", "--cols", "profile", &verdicts,
    ]);
    assert!(
        bars.contains(r#"x-axis ["m-flaky †", "m-fast", "m-slow"]"#),
        "{bars}"
    );
    assert!(
        stderr.contains(&format!(
            "table: chart p1: † flaky (fire-flaky) is not comparable: {FLAKY_REASON}"
        )),
        "{stderr}"
    );
    let (mermaid, stderr) = table(&["--format", "mermaid", "--only-comparable", &verdicts]);
    assert!(
        !mermaid.contains("flaky") && !mermaid.contains("lost"),
        "{mermaid}"
    );
    named(&stderr);

    // Nothing left is bad input, naming what was left out.
    let out = run(
        &cmd("table", &["--only-comparable", &fixture("stopped.ndjson")]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--only-comparable left out every run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("stopped: incomplete: 2 cancelled, 87 not sent"),
        "{stderr}"
    );
}

#[test]
fn a_ranking_marks_a_run_that_is_not_comparable() {
    let verdicts = fixture("verdict.ndjson");
    let (md, _) = table(&[
        "--rows", "model", "--cols", "profile", "--top", "2", "--format", "markdown", &verdicts,
    ]);
    assert_eq!(
        row(&md, "p1"),
        ["p1", "m-flaky (900.00 tok/s) †", "m-fast (500.00 tok/s)"]
    );
    assert_eq!(
        row(&md, "p2"),
        ["p2", "m-lost (800.00 tok/s) †", "m-fast (450.00 tok/s)"]
    );
    assert!(
        md.contains(&format!(
            "† flaky (fire-flaky) is not comparable: {FLAKY_REASON}"
        )),
        "{md}"
    );
    let (csv, _) = table(&["--top", "2", "--format", "csv", &verdicts]);
    assert_eq!(
        csv,
        "group,rank,label,output_tps,comparable\nall runs,1,flaky,900.0,false\nall runs,2,lost,800.0,false\n"
    );
}

#[test]
fn a_server_failing_30_percent_is_not_comparable_through_the_pipe() {
    let server = Server::start(&["--ttft-ms", "2", "--itl-ms", "1", "--fault", "http=500:0.3"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["--concurrency", "4", "-n", "40", "--output-tokens", "4"],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd("reduce", &["--label", "faulty"]),
        ],
        None,
    );
    assert_ok(&outs[2], "reduce");
    let summary = of_type(&records(&outs[2].stdout), "summary")[0].clone();
    let failed = summary["requests_failed_server"].as_u64().unwrap();
    assert!((4..=20).contains(&failed), "about 30 % of 40: {summary}");
    let out = run(&cmd("table", &["--format", "markdown"]), &outs[2].stdout);
    assert_ok(&out, "table");
    let md = String::from_utf8(out.stdout).unwrap();
    // The client check may add its own reason on a busy machine; the failures come first.
    assert!(
        row(&md, "Comparable")[1].starts_with(&format!("no: {failed}/40 failed")),
        "{md}"
    );
    assert_eq!(row(&md, "Failed requests")[1], failed.to_string());
    assert!(
        md.contains(&format!(
            "Not comparable: faulty: incomplete: {failed} of 40 failed ("
        )),
        "{md}"
    );
    let out = run(
        &cmd("table", &["--only-comparable", "--top", "1"]),
        &outs[2].stdout,
    );
    assert_eq!(out.status.code(), Some(2), "nothing comparable is left");
    assert!(String::from_utf8_lossy(&out.stderr).contains("faulty: incomplete:"));
}
