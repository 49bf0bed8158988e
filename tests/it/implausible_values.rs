//! Values no real run holds, through the real binaries (issue 24, item 5): a time or a count
//! past what the run can hold is bad input naming file, line and field (docs/format.md,
//! "Plausible values"); table writes huge figures in a few characters; arrivals refuses rates
//! it cannot schedule; a second `"type"` member is named with its column.

use crate::common;
use common::*;

/// A real run: 3 requests of 4 tokens from arrivals through fire against simserve.
fn fire_output() -> Vec<u8> {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let arrivals = ["--rate", "inf", "-n", "3", "--output-tokens", "4"];
    let fire = ["--url", server.url.as_str()];
    let outs = pipeline(&[cmd("arrivals", &arrivals), cmd("fire", &fire)], None);
    assert_ok(&outs[1], "fire");
    outs[1].stdout.clone()
}

/// `events` with one member of the first record of type `kind` set to `value` (raw JSON), or
/// without records of `drop`; returns the text and the line changed (1-based).
fn edit(events: &[u8], kind: &str, member: &str, value: &str, drop: &str) -> (String, usize) {
    let mut out = String::new();
    let mut changed = 0;
    let mut line = 0;
    for text in std::str::from_utf8(events).expect("utf-8").lines() {
        let mut rec: serde_json::Value = serde_json::from_str(text).expect("a record");
        if rec["type"] == drop {
            continue;
        }
        line += 1;
        let mut text = text.to_string();
        if changed == 0 && rec["type"] == kind {
            rec[member] = serde_json::Value::Null;
            text = serde_json::to_string(&rec).expect("encode").replace(
                &format!("\"{member}\":null"),
                &format!("\"{member}\":{value}"),
            );
            changed = line;
        }
        out.push_str(&text);
        out.push('\n');
    }
    assert!(changed > 0, "no {kind} record");
    (out, changed)
}

/// Runs reduce on `text` saved as a file; asserts exit 2 and that stderr names the file, the
/// line and the field.
fn assert_refused(name: &str, text: &str, line: usize, field: &str) -> String {
    let path = temp_path(name);
    std::fs::write(&path, text).expect("write the input");
    let p = path.to_string_lossy().to_string();
    let out = run(&cmd("reduce", &[p.as_str()]), b"");
    std::fs::remove_file(&path).ok();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    let want = format!("reduce: {p}: line {line}: field \"{field}\": ");
    assert!(err.starts_with(&want), "want {want:?}, got {err}");
    assert!(
        !out.stdout.windows(9).any(|w| w == b"\"summary\""),
        "no summary is written"
    );
    err
}

#[test]
fn reduce_refuses_times_and_counts_no_run_can_hold() {
    let events = fire_output();
    let ok = run(&cmd("reduce", &[]), &events);
    assert_ok(&ok, "reduce of the real run");

    let (text, line) = edit(&events, "done", "at_ns", "18446744073709551615", "");
    let err = assert_refused("max.ndjson", &text, line, "done.at_ns");
    assert!(err.contains("ten years"), "{err}");

    // Ten days on a run of milliseconds: past fire's client.wall_ns by more than the run.
    let (text, line) = edit(&events, "done", "at_ns", "864000000000000", "");
    let err = assert_refused("late.ndjson", &text, line, "done.at_ns");
    assert!(err.contains("client.wall_ns"), "{err}");

    // Without the client record (a killed fire), judged by the run's other records.
    let (text, line) = edit(&events, "done", "at_ns", "864000000000000", "client");
    let err = assert_refused("killed.ndjson", &text, line, "done.at_ns");
    assert!(err.contains("other records"), "{err}");

    let (text, line) = edit(
        &events,
        "done",
        "completion_tokens",
        "18446744073709551615",
        "",
    );
    let err = assert_refused("usage.ndjson", &text, line, "done.completion_tokens");
    assert!(err.contains("a billion tokens a second"), "{err}");

    let (text, line) = edit(&events, "token", "tokens", "4294967295", "");
    assert_refused("tokens.ndjson", &text, line, "token.tokens");
}

#[test]
fn a_second_type_member_is_named_with_line_and_column() {
    let events = fire_output();
    let header = std::str::from_utf8(&events)
        .expect("utf-8")
        .lines()
        .next()
        .expect("a header");
    let text =
        format!("{header}\n{{\"type\":\"sent\",\"type\":\"sent\",\"id\":0,\"sent_ns\":5}}\n");
    let out = run(&cmd("reduce", &[]), text.as_bytes());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("<stdin>: line 2: duplicate field \"type\" (column "),
        "{err}"
    );
}

/// The longest run of digits in `text`.
fn longest_digits(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn table_writes_huge_figures_in_a_few_characters() {
    let reduced = run(&cmd("reduce", &[]), &fire_output());
    assert_ok(&reduced, "reduce");
    let mut text = String::new();
    for mut rec in records(&reduced.stdout) {
        if rec["type"] == "summary" {
            rec["output_throughput_tokens_per_s"] = serde_json::json!(1e308);
            rec["ttft_p99_ms"] = serde_json::json!(1e308);
            rec["duration_s"] = serde_json::json!(5e-324);
        }
        text.push_str(&serde_json::to_string(&rec).expect("encode"));
        text.push('\n');
    }
    for args in [
        &["--format", "terminal"][..],
        &["--format", "markdown"],
        &["--format", "csv"],
        &["--format", "json"],
        &["--format", "html"],
        &["--format", "mermaid"],
        &["--style", "vllm"],
        &["--rows", "label", "--cols", "run_id"],
    ] {
        let out = run(&cmd("table", args), text.as_bytes());
        assert_ok(&out, &format!("table {args:?}"));
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(
            shown.contains("e308") || shown.contains("e+308"),
            "{args:?}: {shown}"
        );
        assert!(longest_digits(&shown) < 25, "{args:?}: {shown}");
        assert!(!shown.contains("inf"), "{args:?}: {shown}");
    }
}

#[test]
fn arrivals_refuses_rates_it_cannot_schedule() {
    for (flag, args) in [
        ("--rate", &["--rate", "5e-324"][..]),
        ("--rate", &["--rate", "1e308"]),
        ("--burstiness", &["--burstiness", "5e-324", "--rate", "1"]),
        (
            "--ramp-from",
            &["--ramp", "10s", "--ramp-from", "5e-324", "--ramp-to", "1"],
        ),
        // Once a panic: 1 / 5e-324 seconds is no duration.
        ("--fill", &["--concurrency", "2", "--fill", "5e-324/s"]),
    ] {
        let out = run(&cmd("arrivals", args), b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(err.contains("from 0.000001"), "{args:?}: {err}");
        assert!(longest_digits(&err) < 25, "{args:?}: {err}");
    }
    let out = run(
        &cmd("arrivals", &["--rate", "1", "--input-range", "1e300"]),
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("got 1e300"), "{err}");
}
