//! What `fire` reads from one streamed JSON chunk of the OpenAI API, as one type that both chunk
//! readers fill: the allocation-free scanner (`scan`) and the serde reference parser
//! (`reference`). Neither reader depends on the other; `api::read_chunk` tries the first and
//! falls back to the second.

use std::borrow::Cow;

/// What one chunk said.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ChunkInfo<'a> {
    /// Some choice carried non-empty generated text.
    pub has_content: bool,
    /// The answer text of the last choice that had some (`text`, else `delta.content`;
    /// reasoning is not part of the answer), as its raw JSON string literal, quotes and escapes
    /// included: borrowed, so reading it costs nothing; `append_text` decodes it for callers
    /// that keep the text.
    pub text: Option<&'a str>,
    /// Some choice held an empty `text` or `delta.content` string with no role and no finish
    /// reason: it stands for a token whose text is empty (vLLM sends one per such token).
    pub empty_text: bool,
    /// Some choice held an empty `text` or `delta.content` string, no role, and a finish
    /// reason. vLLM ends a stream so when its last token's text is empty (that chunk is a
    /// token); llama.cpp's closing chunk looks the same but carries the usage and is no token,
    /// and llama-cpp-python's, with no usage at all, is none either. The exchange tells them
    /// apart by the usage, in that chunk or after it.
    pub finished_empty: bool,
    /// The finish reason of the last choice that had one.
    pub finish_reason: Option<Cow<'a, str>>,
    /// `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`.
    pub completion_tokens: Option<u64>,
    /// `usage.completion_tokens_details.reasoning_tokens`: how many of the output tokens were
    /// reasoning (OpenAI's member; read only in a chunk that carries usage).
    pub reasoning_tokens: Option<u64>,
    /// `usage.prompt_tokens_details.cached_tokens`: prompt tokens served from the server's
    /// prefix cache (vLLM, llama.cpp, SGLang).
    pub cached_tokens: Option<u64>,
    /// The raw `error` member, when the server reported a failure in the stream.
    pub error: Option<&'a str>,
}

impl ChunkInfo<'_> {
    /// Whether two readers of one chunk agree on everything but the error's text, which each
    /// takes from its own place: what the scanner and the serde reference, and a resumed read
    /// and a whole one, must answer alike (their tests and the fuzz targets check it).
    pub fn agrees_with(&self, other: &ChunkInfo) -> bool {
        self.has_content == other.has_content
            && self.finish_reason.as_deref() == other.finish_reason.as_deref()
            && self.prompt_tokens == other.prompt_tokens
            && self.completion_tokens == other.completion_tokens
            && self.reasoning_tokens == other.reasoning_tokens
            && self.cached_tokens == other.cached_tokens
            && self.error.is_some() == other.error.is_some()
            && self.text == other.text
            && self.empty_text == other.empty_text
            && self.finished_empty == other.finished_empty
    }
}

impl ChunkInfo<'_> {
    /// The chunk's content was reasoning alone (`delta.reasoning_content` or `delta.reasoning`,
    /// no answer text): its token event is a reasoning one. A chunk with both is an answer's.
    pub fn is_reasoning(&self) -> bool {
        self.has_content && self.text.is_none()
    }
}

/// Appends the text of a JSON string literal (as in [`ChunkInfo::text`]) to `out`. Plain text is
/// copied; a literal with escapes is decoded by serde. A literal that is not valid JSON adds
/// nothing (both chunk readers only ever hand over valid ones).
pub fn append_text(raw: &str, out: &mut String) {
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or_default();
    if !inner.contains('\\') {
        out.push_str(inner);
    } else if let Ok(decoded) = serde_json::from_str::<std::borrow::Cow<str>>(raw) {
        out.push_str(&decoded);
    }
}

#[cfg(test)]
mod tests {
    use super::append_text;

    #[test]
    fn text_literals_are_decoded() {
        let mut out = String::new();
        append_text(r#""a b""#, &mut out);
        append_text(r#""\u00e9\n\"q\"""#, &mut out);
        assert_eq!(out, "a b\u{e9}\n\"q\"");
    }
}
