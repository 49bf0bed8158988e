//! Reading the chunks of one stream with what its earlier chunks showed: a server repeats the
//! same members before `choices` in every chunk of a stream (`id`, `object`, `created`,
//! `model`: about half of a chunk's bytes, and half of the scanner's time). The bytes of the
//! last chunk up to its `choices` key are kept; a chunk that begins with the same bytes is
//! scanned from there, in the state the scanner had there ([`scan::Resume`]), so the answer is
//! the one a whole scan gives. Any other chunk is scanned whole and becomes the new reference.

use super::chunk::ChunkInfo;
use super::{reference, scan};

/// The longest start of a chunk kept for the next one: bounds what a stream holds.
const MAX_PREFIX: usize = 512;

/// A stream's last chunk up to its `choices` key, and where its scan may resume.
#[derive(Debug, Default)]
pub struct ChunkPrefix {
    bytes: Vec<u8>,
    resume: Option<scan::Resume>,
}

/// [`super::read_chunk`] for the next event of the stream whose earlier chunks `prefix` keeps.
pub fn read_chunk_after<'a>(
    data: &'a [u8],
    prefix: &mut ChunkPrefix,
) -> Result<ChunkInfo<'a>, serde_json::Error> {
    let from = prefix.resume.filter(|_| data.starts_with(&prefix.bytes));
    let (info, resume) = scan::scan_resumable(data, from);
    if let (None, Some(r)) = (from, resume) {
        prefix.bytes.clear();
        prefix.resume = None;
        if r.at <= MAX_PREFIX {
            prefix.bytes.extend_from_slice(&data[..r.at]);
            prefix.resume = Some(r);
        }
    }
    match info {
        Some(info) => Ok(info),
        None => reference::parse(data),
    }
}

#[cfg(test)]
mod tests {
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
        let info = read_chunk_after(STREAMS[1].as_bytes(), &mut prefix).unwrap();
        assert_eq!(info.text, Some("\" the\""));
        // Resumed: the reference stays that of the first chunk.
        assert_eq!(
            (prefix.bytes.as_slice(), prefix.resume.is_some()),
            (&kept[..], true)
        );
        // A start too long to keep is not kept.
        let long = format!(
            r#"{{"id":"{}","choices":[{{"text":"a"}}]}}"#,
            "x".repeat(600)
        );
        let mut prefix = ChunkPrefix::default();
        read_chunk_after(long.as_bytes(), &mut prefix).unwrap();
        assert!(prefix.bytes.is_empty() && prefix.resume.is_none());
    }
}
