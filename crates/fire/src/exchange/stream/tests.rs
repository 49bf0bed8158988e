//! The stream rules against the streams real servers send (vLLM, llama.cpp, llama-cpp-python),
//! event by event, as the bytes each sends.

use super::*;
use crate::api::Api;

#[test]
fn events_become_tokens_and_usage() {
    let mut st = StreamState::new(7, Api::Completions.dialect());
    let mut out = vec![];
    st.on_event(
        br#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
        1,
        &mut out,
    )
    .ok()
    .unwrap();
    assert!(out.is_empty());
    st.on_event(br#"{"choices":[{"delta":{"content":"a"}}]}"#, 5, &mut out)
        .ok()
        .unwrap();
    st.on_event(
        br#"{"choices":[{"delta":{"content":"b"},"finish_reason":"length"}]}"#,
        9,
        &mut out,
    )
    .ok()
    .unwrap();
    st.on_event(
        br#"{"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
        9,
        &mut out,
    )
    .ok()
    .unwrap();
    st.on_event(b"[DONE]", 10, &mut out).ok().unwrap();
    assert_eq!(
        crate::sink::staged::expanded(&out),
        "{\"type\":\"token\",\"id\":7,\"at_ns\":5,\"tokens\":1}\n{\"type\":\"token\",\"id\":7,\"at_ns\":9,\"tokens\":1}\n"
    );
    assert_eq!(st.events, 2);
    assert_eq!((st.prompt_tokens, st.completion_tokens), (Some(4), Some(2)));
    assert_eq!(st.finish_reason.as_deref(), Some("length"));
    assert_eq!(st.done_marker_ns, Some(10));
    let mut st = StreamState::new(0, Api::Chat.dialect());
    assert!(matches!(
        st.on_event(b"{oops", 11, &mut vec![]).err().map(|f| f.kind),
        Some(ErrorKind::Parse)
    ));
    assert!(matches!(
        st.on_event(br#"{"error":{"message":"x"}}"#, 11, &mut vec![])
            .err()
            .map(|f| f.kind),
        Some(ErrorKind::Server)
    ));
}

#[test]
fn usage_on_the_last_event_only_is_not_a_delta() {
    let mut st = StreamState::new(0, Api::Chat.dialect());
    let mut out = vec![];
    for (data, at) in [
        (&br#"{"choices":[{"text":"a"}]}"#[..], 1),
        (br#"{"choices":[{"text":"b"}]}"#, 2),
        (br#"{"choices":[{"text":"c","finish_reason":"length"}],"usage":{"completion_tokens":3}}"#, 3),
    ] {
        st.on_event(data, at, &mut out).ok().unwrap();
    }
    let text = crate::sink::staged::expanded(&out);
    assert_eq!(text.matches("\"tokens\":1}").count(), 3, "{text}");
    assert_eq!(st.completion_tokens, Some(3));
}

#[test]
fn nothing_after_done_counts() {
    let mut st = StreamState::new(0, Api::Chat.dialect());
    let mut out = vec![];
    st.on_event(
        br#"{"choices":[{"text":"a","finish_reason":"stop"}]}"#,
        1,
        &mut out,
    )
    .ok()
    .unwrap();
    st.on_event(b"[DONE]", 2, &mut out).ok().unwrap();
    st.on_event(br#"{"choices":[{"text":"late"}]}"#, 50, &mut out)
        .ok()
        .unwrap();
    st.on_event(b"{not json", 51, &mut out).ok().unwrap();
    assert_eq!(st.events, 1);
    assert_eq!(st.done_marker_ns, Some(2));
    assert_eq!(crate::sink::staged::expanded(&out).lines().count(), 1);
}

#[test]
fn continuous_usage_counts_tokens_per_event() {
    let mut st = StreamState::new(0, Api::Chat.dialect());
    let mut out = vec![];
    st.on_event(
        br#"{"choices":[{"text":"ab"}],"usage":{"completion_tokens":2}}"#,
        1,
        &mut out,
    )
    .ok()
    .unwrap();
    st.on_event(
        br#"{"choices":[{"text":"c"}],"usage":{"completion_tokens":3}}"#,
        2,
        &mut out,
    )
    .ok()
    .unwrap();
    let text = crate::sink::staged::expanded(&out);
    assert!(text.contains("\"at_ns\":1,\"tokens\":2"), "{text}");
    assert!(text.contains("\"at_ns\":2,\"tokens\":1"), "{text}");
}

/// Feeds `events` (data, stamp) and returns the token records as (at_ns, empty).
fn tokens_of(st: &mut StreamState, events: &[(&str, u64)]) -> Vec<(u64, bool)> {
    let mut out = vec![];
    for (data, at) in events {
        st.on_event(data.as_bytes(), *at, &mut out).ok().unwrap();
    }
    crate::sink::staged::expanded(&out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["at_ns"].as_u64().unwrap(), v["empty"] == true)
        })
        .collect()
}

#[test]
fn vllm_completions_empty_text_tokens_count_but_are_marked() {
    let mut st = StreamState::new(0, Api::Completions.dialect()).keep_text();
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"index":0,"text":"a","finish_reason":null}]}"#,
                10,
            ),
            (
                r#"{"choices":[{"index":0,"text":"","finish_reason":null}]}"#,
                20,
            ),
            (
                r#"{"choices":[{"index":0,"text":"b","finish_reason":"length"}]}"#,
                30,
            ),
            (
                r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3}}"#,
                30,
            ),
            ("[DONE]", 31),
        ],
    );
    assert_eq!(toks, [(10, false), (20, true), (30, false)]);
    assert_eq!(st.events, 2);
    assert_eq!(st.first_event_ns, Some(10));
    assert_eq!(st.text.as_deref(), Some("ab"));
}

/// vLLM ends with the last token's chunk, finish reason included, and then usage alone: a
/// last token whose text is empty still counts (seen on the tiny model's random tokens).
#[test]
fn vllm_last_token_with_empty_text_counts() {
    let mut st = StreamState::new(0, Api::Completions.dialect()).keep_text();
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"index":0,"text":"a","finish_reason":null}],"usage":null}"#,
                10,
            ),
            (
                r#"{"choices":[{"index":0,"text":"","finish_reason":"length","stop_reason":null}],"usage":null}"#,
                20,
            ),
            (
                r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2}}"#,
                21,
            ),
            ("[DONE]", 22),
        ],
    );
    assert_eq!(toks, [(10, false), (20, true)]);
    assert_eq!(st.events, 1);
    assert_eq!(st.text.as_deref(), Some("a"));
    assert_eq!(st.finish_reason.as_deref(), Some("length"));
}

/// llama-cpp-python's server ignores `stream_options` and closes a completions stream with
/// an empty text and the finish reason, no usage: that chunk stands for no token (one that
/// decodes to nothing comes as an empty text without a finish reason, and counts).
#[test]
fn a_closing_chunk_without_usage_is_no_token() {
    let mut st = StreamState::new(0, Api::Completions.dialect());
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"text":" Map","index":0,"logprobs":null,"finish_reason":null}]}"#,
                10,
            ),
            (
                r#"{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":null}]}"#,
                20,
            ),
            (
                r#"{"choices":[{"text":"eq","index":0,"logprobs":null,"finish_reason":null}]}"#,
                30,
            ),
            (
                r#"{"choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"length"}]}"#,
                40,
            ),
            ("[DONE]", 41),
        ],
    );
    assert_eq!(toks, [(10, false), (20, true), (30, false)]);
    assert_eq!(st.events, 2);
    assert_eq!(st.finish_reason.as_deref(), Some("length"));
    // The same closing chunk followed by more of the answer did stand for a token.
    let mut st = StreamState::new(0, Api::Completions.dialect());
    let toks = tokens_of(
        &mut st,
        &[
            (r#"{"choices":[{"text":"","finish_reason":"length"}]}"#, 5),
            (r#"{"choices":[{"text":"z"}]}"#, 6),
        ],
    );
    assert_eq!(toks, [(5, true), (6, false)]);
}

/// A body that breaks after `[DONE]` (llama-cpp-python's, after a stream it cut) does not
/// fail the request; before `[DONE]` it is a `body` failure.
#[test]
fn a_body_broken_after_done_is_no_failure() {
    let broken = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed");
    let mut st = StreamState::new(0, Api::Completions.dialect());
    st.on_event(br#"{"choices":[{"text":"a"}]}"#, 1, &mut vec![])
        .ok()
        .unwrap();
    let failure = failed_body(&st, &broken).map(|f| (f.kind, f.message));
    assert!(
        matches!(&failure, Some((ErrorKind::Body, m)) if m.contains("closed")),
        "{:?}",
        failure.map(|f| f.1)
    );
    st.on_event(b"[DONE]", 2, &mut vec![]).ok().unwrap();
    assert!(failed_body(&st, &broken).is_none());
}

/// llama.cpp's completions close with an empty text, the finish reason and the usage: the
/// answer's tokens came before, and that chunk is none.
#[test]
fn llama_cpp_completions_closing_chunk_is_no_token() {
    let mut st = StreamState::new(0, Api::Completions.dialect());
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"index":0,"text":"a","finish_reason":null}]}"#,
                10,
            ),
            (
                r#"{"choices":[{"index":0,"text":"b","finish_reason":null}]}"#,
                11,
            ),
            (
                r#"{"choices":[{"text":"","index":0,"finish_reason":"length"}],"usage":{"completion_tokens":2,"prompt_tokens":3}}"#,
                12,
            ),
            ("[DONE]", 13),
        ],
    );
    assert_eq!(toks, [(10, false), (11, false)]);
    assert_eq!(st.completion_tokens, Some(2));
}

#[test]
fn vllm_chat_role_chunk_is_the_first_event_but_no_token() {
    let mut st = StreamState::new(0, Api::Chat.dialect());
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
                5,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}"#,
                9,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}"#,
                12,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":"y"},"finish_reason":"length"}]}"#,
                14,
            ),
        ],
    );
    assert_eq!(toks, [(9, false), (12, true), (14, false)]);
    assert_eq!(st.first_event_ns, Some(5));
    assert_eq!(st.text, None, "text is kept only when asked");
}

#[test]
fn llama_cpp_chat_null_role_chunk_and_usage_on_the_last_chunk() {
    let mut st = StreamState::new(0, Api::Chat.dialect()).keep_text();
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}"#,
                3,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
                7,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":null}]}"#,
                8,
            ),
            (
                r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":2}}"#,
                9,
            ),
            ("[DONE]", 9),
        ],
    );
    assert_eq!(toks, [(7, false), (8, false)]);
    assert_eq!(st.first_event_ns, Some(3));
    assert_eq!(st.text.as_deref(), Some("Hi there"));
    assert_eq!(st.completion_tokens, Some(2));
}

#[test]
fn continuous_usage_growth_without_text_is_an_empty_token() {
    let mut st = StreamState::new(0, Api::Chat.dialect());
    let toks = tokens_of(
        &mut st,
        &[
            (
                r#"{"choices":[{"delta":{"role":"assistant","content":""}}],"usage":{"completion_tokens":0}}"#,
                1,
            ),
            (
                r#"{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}"#,
                2,
            ),
            (
                r#"{"choices":[{"delta":{"content":""},"finish_reason":"length"}],"usage":{"completion_tokens":3}}"#,
                3,
            ),
            (r#"{"choices":[],"usage":{"completion_tokens":3}}"#, 4),
        ],
    );
    assert_eq!(toks, [(2, false), (3, true)]);
    let mut out = vec![];
    let mut st2 = StreamState::new(0, Api::Chat.dialect());
    st2.on_event(
        br#"{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}"#,
        2,
        &mut out,
    )
    .ok()
    .unwrap();
    st2.on_event(br#"{"choices":[{"delta":{"content":""},"finish_reason":"length"}],"usage":{"completion_tokens":3}}"#, 3, &mut out).ok().unwrap();
    assert!(crate::sink::staged::expanded(&out).contains("\"tokens\":2,\"empty\":true"));
}

/// A thinking model's stream: reasoning deltas (vLLM's `reasoning_content`, newer vLLM's and
/// llama.cpp's `reasoning`) are token events marked `reasoning`; the answer's are not; the
/// split comes from the usage's details when the server sends them, else from the events.
#[test]
fn reasoning_events_are_marked_and_split_from_the_answer() {
    let run = |usage: &[u8]| {
        let mut st = StreamState::new(3, Api::Chat.dialect());
        let mut out = vec![];
        for (data, at) in [
            (
                &br#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#[..],
                1,
            ),
            (br#"{"choices":[{"delta":{"reasoning_content":"hm"}}]}"#, 2),
            (br#"{"choices":[{"delta":{"reasoning":"m"}}]}"#, 3),
            (br#"{"choices":[{"delta":{"content":"a"}}]}"#, 4),
            (
                br#"{"choices":[{"delta":{"content":"b"},"finish_reason":"length"}]}"#,
                5,
            ),
            (usage, 6),
        ] {
            st.on_event(data, at, &mut out).ok().unwrap();
        }
        (crate::sink::staged::expanded(&out), st)
    };
    let (text, st) = run(br#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":8}}}"#);
    assert_eq!(
        text,
        "{\"type\":\"token\",\"id\":3,\"at_ns\":2,\"tokens\":1,\"reasoning\":true}\n\
         {\"type\":\"token\",\"id\":3,\"at_ns\":3,\"tokens\":1,\"reasoning\":true}\n\
         {\"type\":\"token\",\"id\":3,\"at_ns\":4,\"tokens\":1}\n\
         {\"type\":\"token\",\"id\":3,\"at_ns\":5,\"tokens\":1}\n"
    );
    assert_eq!(st.reasoning_split(), (Some(2), Some(2)));
    assert_eq!(st.cached_tokens, Some(8));
    // The server's own count wins (one event may have carried several reasoning tokens).
    let (_, st) = run(br#"{"choices":[],"usage":{"completion_tokens":6,"completion_tokens_details":{"reasoning_tokens":3}}}"#);
    assert_eq!(st.reasoning_split(), (Some(3), Some(3)));
    assert_eq!(st.cached_tokens, None);
    // No reasoning at all: no split, whatever a zero in the usage says.
    let mut st = StreamState::new(3, Api::Chat.dialect());
    for (data, at) in [
        (&br#"{"choices":[{"delta":{"content":"a"},"finish_reason":"length"}]}"#[..], 1),
        (br#"{"choices":[],"usage":{"completion_tokens":1,"completion_tokens_details":{"reasoning_tokens":0}}}"#, 2),
    ] {
        st.on_event(data, at, &mut vec![]).ok().unwrap();
    }
    assert_eq!(st.reasoning_split(), (None, None));
}
