//! The chunks of a stream read after one another must read as each does alone.

use super::*;
use crate::api::read_chunk;
use crate::api::scan::tests::{same, CORPUS, INVALID_UTF8};

/// Chunks of streams whose starts repeat, and neighbours that share a start but not what
/// follows it (usage, an error, a second `object`, other whitespace).
const STREAMS: &[&str] = &[
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}"#,
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length"}]}"#,
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"delta":{"content":"x"}}],"object":"error"}"#,
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"delta":{"content":"y"}}],"choices":[]}"#,
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices" : [{"text":"z"}] , "error":null}"#,
    r#"{"id":"chatcmpl-1","object":"error","created":1,"model":"m","choices":[{"delta":{"content":"e"}}]}"#,
    r#"{"id":"cmpl-2","usage":null,"choices":[{"text":"a"}]}"#,
    r#"{"id":"cmpl-2","usage":null,"choices":[{"text":"b"}]}"#,
    r#"{"choices":[{"text":"c"}],"id":"cmpl-3"}"#,
    r#"{"choices":[{"text":"d"}],"id":"cmpl-3"}"#,
];

fn agree(earlier: &[u8], chunk: &[u8]) {
    let mut prefix = ChunkPrefix::default();
    let _ = read_chunk_after(earlier, &mut prefix);
    let shown = || String::from_utf8_lossy(chunk).into_owned();
    match (read_chunk_after(chunk, &mut prefix), read_chunk(chunk)) {
        (Ok(after), Ok(whole)) => assert!(same(&after, &whole), "{}", shown()),
        (Err(_), Err(_)) => {}
        (after, whole) => panic!("{}: {after:?} vs {whole:?}", shown()),
    }
}

#[test]
fn a_chunk_read_after_any_other_reads_as_it_does_alone() {
    let all: Vec<&[u8]> = CORPUS
        .iter()
        .chain(STREAMS)
        .map(|t| t.as_bytes())
        .chain(INVALID_UTF8.iter().copied())
        .collect();
    for earlier in &all {
        for chunk in &all {
            agree(earlier, chunk);
        }
        // Every cut of the chunks that share a start with the stream's.
        for chunk in STREAMS {
            for end in 0..=chunk.len() {
                agree(earlier, &chunk.as_bytes()[..end]);
            }
        }
    }
}

#[test]
fn a_stream_s_repeated_start_is_skipped_and_bounded() {
    let mut prefix = ChunkPrefix::default();
    read_chunk_after(STREAMS[0].as_bytes(), &mut prefix).unwrap();
    let kept = prefix.bytes.clone();
    assert!(kept.ends_with(b"\"model\":\"m\","), "{kept:?}");
    let resume = prefix.resume;
    let info = read_chunk_after(STREAMS[1].as_bytes(), &mut prefix).unwrap();
    assert_eq!(info.text, Some("\" the\""));
    // Resumed at the same point; the chunk, with an answer string, is now kept whole.
    assert!(resume.is_some() && prefix.resume == resume);
    assert!(prefix.bytes.starts_with(&kept) && prefix.bytes == STREAMS[1].as_bytes());
    // A start too long to keep is not kept.
    let long = format!(
        r#"{{"id":"{}","choices":[{{"text":"a"}}]}}"#,
        "x".repeat(600)
    );
    let mut prefix = ChunkPrefix::default();
    read_chunk_after(long.as_bytes(), &mut prefix).unwrap();
    assert!(prefix.bytes.is_empty() && prefix.resume.is_none());
}

/// Chunks with `{}` where their answer string's text goes, so that two of them differ only
/// inside it: the servers' shapes, and neighbours where the string is not the answer, or the
/// answer borrows more than it (a finish reason, an error), or the chunk is refused.
const TEMPLATES: &[&str] = &[
    r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"{}"},"logprobs":null,"finish_reason":null}]}"#,
    r#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"{}","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
    r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"{}"}}],"created":1,"id":"chatcmpl-Z","model":"g","object":"chat.completion.chunk"}"#,
    r#"{"id":"c","choices":[{"delta":{"content":"{}"}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
    r#"{"choices":[{"delta":{"role":"assistant","content":"{}"}}]}"#,
    r#"{"choices":[{"text":"","delta":{"content":"{}"}}]}"#,
    r#"{"choices":[{"text":"{}","delta":{"content":"c"}}]}"#,
    r#"{"choices":[{"text":"{}"},{"text":"b"}]}"#,
    r#"{"choices":[{"text":"a"},{"text":"{}"},{"text":""}]}"#,
    r#"{"choices":[{"delta":{"reasoning_content":"{}","content":"x"}}]}"#,
    r#"{"choices":[{"delta":{"content":"{}"},"finish_reason":"stop"}]}"#,
    r#"{"object":"error","choices":[{"text":"{}"}]}"#,
    r#"{"choices":[{"delta":{"content":"{}"}}],"object":"error"}"#,
    r#"{"choices":[{"text":"{}"}],"error":{"message":"m"}}"#,
    r#"{"choices":[{"text":"{}","text":"z"}]}"#,
    r#"{"choices":[{"text":"{}"}]}x"#,
    r#" { "choices" : [ { "text" : "{}" } ] } "#,
    r#"{"choices":[{"text":"{}"}]"#,
];

/// Texts put in the templates: plain, escaped, empty, and ones that end the string early, run
/// past its end, or are not JSON or not UTF-8.
const BODIES: &[&[u8]] = &[
    b"",
    b"a",
    b" the",
    b"\\n",
    b"\\u00e9",
    "é€".as_bytes(),
    b"a\\\"b",
    b"\\\\",
    b"\\",
    b"x\\",
    b"\\q",
    b"\\u00",
    b"\x01",
    b"a\"b",
    b"\"",
    br#"a"},"logprobs":null,"finish_reason":null}]}"#,
    br#"a","text":"b"#,
    b"\xff",
    b"\xc3",
    b"\xc3\xa9",
];

fn fill(template: &str, body: &[u8]) -> Vec<u8> {
    let (before, after) = template.split_once("{}").expect("a template has {}");
    [before.as_bytes(), body, after.as_bytes()].concat()
}

#[test]
fn a_chunk_that_differs_only_in_its_string_reads_as_it_does_alone() {
    for template in TEMPLATES {
        for earlier in BODIES {
            let earlier = fill(template, earlier);
            for body in BODIES {
                let chunk = fill(template, body);
                agree(&earlier, &chunk);
                // Two chunks before it: the second read resumed, or from its string alone.
                let mut prefix = ChunkPrefix::default();
                let _ = read_chunk_after(&earlier, &mut prefix);
                let _ = read_chunk_after(&fill(template, b"q"), &mut prefix);
                match (read_chunk_after(&chunk, &mut prefix), read_chunk(&chunk)) {
                    (Ok(after), Ok(whole)) => assert!(same(&after, &whole)),
                    (Err(_), Err(_)) => {}
                    (after, whole) => panic!("{chunk:?}: {after:?} vs {whole:?}"),
                }
            }
            // Every cut of the chunk, after one that differs only in its string.
            let chunk = fill(template, b" and");
            for end in 0..=chunk.len() {
                agree(&earlier, &chunk[..end]);
            }
        }
    }
}

#[test]
fn only_the_string_is_read_when_all_around_it_repeats() {
    let chunk = |text: &str| fill(TEMPLATES[0], text.as_bytes());
    let mut prefix = ChunkPrefix::default();
    read_chunk_after(&chunk(" the"), &mut prefix).unwrap();
    let kept = prefix.content;
    assert!(kept.is_some());
    let next = chunk(" \\u00e9 x");
    let info = prefix
        .same_but_the_string(&next)
        .expect("read from the string alone");
    assert_eq!(info.text, Some(r#"" \u00e9 x""#));
    assert!(info.has_content && !info.empty_text && !info.finished_empty);
    read_chunk_after(&next, &mut prefix).unwrap();
    assert_eq!(prefix.content, kept);
    // An empty string, or a finish reason after the string: scanned (resumed), and the chunk
    // with the finish reason is not kept (its answer borrows the reason).
    assert!(prefix.same_but_the_string(&chunk("")).is_none());
    let last = TEMPLATES[0].replace("\"finish_reason\":null", "\"finish_reason\":\"length\"");
    let last = fill(&last, b"x");
    assert!(prefix.same_but_the_string(&last).is_none());
    let info = read_chunk_after(&last, &mut prefix).unwrap();
    assert_eq!(info.finish_reason.as_deref(), Some("length"));
    assert_eq!(prefix.content, kept);
    assert!(prefix.same_but_the_string(&chunk("y")).is_some());
    // Scanned whole, a chunk whose answer cannot be reused leaves nothing of it kept.
    read_chunk_after(
        br#"{"choices":[{"text":"x","finish_reason":"stop"}]}"#,
        &mut prefix,
    )
    .unwrap();
    assert!(prefix.content.is_none() && prefix.resume.is_some());
}
