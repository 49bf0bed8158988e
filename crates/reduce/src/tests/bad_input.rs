//! Each rule of the stream, broken once, must name the source and the line.

use super::*;
use crate::Error;
use tokenpipe_cli::{message, Ending, ToolError};

/// Asserts that `lines` (after the header on line 1) are rejected as bad input at `line`.
fn assert_bad(lines: &[String], line: usize, needle: &str) {
    let err = summary_of(&stream(lines)).unwrap_err();
    let msg = message(&err);
    assert!(
        msg.starts_with(&format!("<test>: line {line}: ")),
        "wrong line: {msg}"
    );
    assert!(msg.contains(needle), "{msg}");
    assert!(
        matches!(err, Error::Order { line: l, .. } | Error::Request { line: l, .. } if l == line),
        "{err:?}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn token_after_done_is_bad_input() {
    let lines = [sent(1, 0, 0), done(1, 5, true, ""), token(1, 6, 1)];
    assert_bad(&lines, 4, "request 1: token record after its done");
}

#[test]
fn second_done_is_bad_input() {
    let lines = [sent(1, 0, 0), done(1, 5, false, ""), done(1, 6, false, "")];
    assert_bad(&lines, 4, "request 1: a second done record");
    // A done without sent, twice.
    let lines = [done(2, 5, false, ""), done(2, 6, false, "")];
    assert_bad(&lines, 3, "request 2: a second done record");
}

#[test]
fn token_never_sent_is_bad_input() {
    let lines = [sent(1, 0, 0), token(7, 3, 1)];
    assert_bad(
        &lines,
        3,
        "request 7: token record for a request that was never sent",
    );
}

#[test]
fn second_sent_is_bad_input() {
    let lines = [sent(1, 0, 0), sent(2, 0, 0), sent(1, 0, 4)];
    assert_bad(
        &lines,
        4,
        "request 1: a second sent record (the first is on line 2)",
    );
    let lines = [sent(1, 0, 0), done(1, 3, false, ""), sent(1, 0, 4)];
    assert_bad(&lines, 4, "request 1: sent record after its done");
}

#[test]
fn ok_done_never_sent_is_bad_input() {
    let lines = [done(3, 5, true, "")];
    assert_bad(&lines, 2, "never sent");
}

#[test]
fn time_going_backwards_is_bad_input() {
    let lines = [sent(1, 0, 100), token(1, 99, 1)];
    assert_bad(&lines, 3, "token at_ns 99 is earlier");
    let lines = [sent(1, 0, 100), token(1, 150, 1), done(1, 120, true, "")];
    assert_bad(&lines, 4, "done at_ns 120 is earlier");
}

#[test]
fn reader_errors_keep_their_line() {
    let lines = [sent(1, 0, 0), r#"{"type":"token","id":1}"#.to_string()];
    let err = summary_of(&stream(&lines)).unwrap_err();
    let Error::Read(read) = &err else {
        panic!("a read error: {err:?}")
    };
    assert!(read.is_bad_input());
    assert_eq!(err.ending(), Ending::BadInput);
    assert!(message(&err).contains("line 3"), "{err}");
}

#[test]
fn no_requests_is_bad_input() {
    let err = summary_of(&stream(&[])).unwrap_err();
    assert!(
        message(&err).contains("<test>: run run-1 (from fire) has no sent or done records"),
        "{err}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
    // Records reduce does not use are no requests either.
    let lines = [r#"{"type":"checkpoint","id":1}"#.to_string()];
    let err = summary_of(&stream(&lines)).unwrap_err();
    assert!(message(&err).contains("no sent or done"), "{err}");
}

#[test]
fn token_totals_past_u64_are_bad_input() {
    // Each count is plausible for a request of ten years (`plausible`); their sum is not.
    let ten_years = crate::plausible::MAX_RUN_NS;
    let lines: Vec<String> = (1..=62)
        .flat_map(|id| {
            [
                sent(id, 0, 0),
                done(
                    id,
                    ten_years,
                    true,
                    r#","completion_tokens":300000000000000000"#,
                ),
            ]
        })
        .collect();
    assert_bad(&lines, 125, "output token total passes 2^64");
}

/// Asserts that `lines` are refused as implausible at `line`, naming `field`.
fn assert_implausible(lines: &[String], line: usize, field: &str, needle: &str) {
    let err = summary_of(&stream(lines)).unwrap_err();
    let msg = message(&err);
    assert!(
        msg.starts_with(&format!("<test>: line {line}: field \"{field}\": ")),
        "{msg}"
    );
    assert!(msg.contains(needle), "{msg}");
    assert!(matches!(err, Error::Implausible { .. }), "{err:?}");
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn times_and_counts_no_run_can_hold_are_bad_input() {
    let max = u64::MAX;
    let lines = [sent(1, 0, 0), done(1, max, true, "")];
    assert_implausible(&lines, 3, "done.at_ns", "ten years");
    let lines = [sent(1, 0, max)];
    assert_implausible(&lines, 2, "sent.sent_ns", "ten years");
    // Past the run's end (its other records) by more than the run and a day.
    let day = 86_400_000_000_000;
    let lines = [sent(1, 0, 0), sent(2, 0, 5), done(1, 3 * day, false, "")];
    assert_implausible(&lines, 4, "done.at_ns", "by more than the run itself");
    let lines = [
        sent(1, 0, 0),
        done(1, 5, true, r#","prompt_tokens":18446744073709551615"#),
    ];
    assert_implausible(&lines, 3, "done.prompt_tokens", "a billion tokens a second");
    // A token's count adds to its request's: a billion at once is the most, a second billion
    // half a second later passes a billion a second over the request's life and a second.
    let lines = [
        sent(1, 0, 0),
        token(1, 5, 1_000_000_000),
        token(1, 500_000_000, 1_000_000_000),
    ];
    assert_implausible(&lines, 4, "token.tokens", "a billion tokens a second");
}
