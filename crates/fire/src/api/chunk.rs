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
    /// The finish reason of the last choice that had one.
    pub finish_reason: Option<Cow<'a, str>>,
    /// `usage.prompt_tokens`.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`.
    pub completion_tokens: Option<u64>,
    /// The raw `error` member, when the server reported a failure in the stream.
    pub error: Option<&'a str>,
}
