//! The reader's hand parser for fire's lines against serde, through a whole run: the same events
//! written in fire's exact shapes and with one space more (which sends every line to serde) give
//! the same summary, field for field.

use super::*;

/// Interleaved requests in fire's exact line shapes: usage, a failure, empty tokens, a null
/// schedule, an unknown error kind.
fn fire_lines() -> Vec<String> {
    let mut lines = vec![];
    for id in 0..4u64 {
        lines.push(format!(
            r#"{{"type":"sent","id":{id},"scheduled_ns":{},"sent_ns":{}}}"#,
            id * MS,
            id * MS + 1_000
        ));
    }
    lines.push(r#"{"type":"sent","id":4,"scheduled_ns":null,"sent_ns":5000000}"#.into());
    for step in 0..20u64 {
        for id in 0..3u64 {
            let empty = if step % 7 == 3 {
                r#","empty":true"#
            } else {
                ""
            };
            lines.push(format!(
                r#"{{"type":"token","id":{id},"at_ns":{},"tokens":{}{empty}}}"#,
                10 * MS + step * 3 * MS + id * 137_000 + step * step * 1_000,
                1 + step % 2
            ));
        }
    }
    for id in 0..3u64 {
        lines.push(format!(
            r#"{{"type":"done","id":{id},"at_ns":{},"ok":true,"status":200,"error_kind":null,"error":null,"prompt_tokens":{},"completion_tokens":30,"events":20,"finish_reason":"length","first_event_ns":{}}}"#,
            80 * MS + id,
            100 + id,
            9 * MS
        ));
    }
    lines.push(r#"{"type":"done","id":3,"at_ns":90000000,"ok":false,"status":500,"error_kind":"http","error":"HTTP 500: overloaded","prompt_tokens":null,"completion_tokens":null,"events":0,"finish_reason":null}"#.into());
    lines.push(r#"{"type":"done","id":4,"at_ns":91000000,"ok":false,"status":null,"error_kind":"from_the_future","error":"new","prompt_tokens":null,"completion_tokens":null,"events":0,"finish_reason":null}"#.into());
    lines
}

#[test]
fn fire_s_shapes_and_serde_s_give_the_same_summary() {
    let lines = fire_lines();
    let spaced: Vec<String> = lines.iter().map(|l| l.replacen('{', "{ ", 1)).collect();
    let fast = summary_of(&stream(&lines)).unwrap();
    let slow = summary_of(&stream(&spaced)).unwrap();
    assert_eq!(fast.requests_ok, 3);
    assert_eq!(fast.output_tokens, 90);
    assert_eq!(
        serde_json::to_value(&fast).unwrap(),
        serde_json::to_value(&slow).unwrap()
    );
}
