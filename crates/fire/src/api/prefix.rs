//! Reading the chunks of one stream with what its earlier chunks showed. Two repeats save
//! most of the scan:
//!
//! - A server repeats the same members before `choices` in every chunk of a stream (`id`,
//!   `object`, `created`, `model`: about half of a chunk's bytes, and half of the scanner's
//!   time). A chunk that begins with the same bytes as the kept one up to its `choices` key is
//!   scanned from there, in the state the scanner had there ([`scan::Resume`]).
//! - Around the answer string, the bytes are the same from one chunk to the next too
//!   (`…"delta":{"content":"` + text + `"},"logprobs":null,"finish_reason":null}]}`, or the
//!   completions API's `"text":"`). A chunk whose bytes before its answer string (up to its
//!   opening quote) and after it (from its closing quote) both match the kept chunk's differs
//!   from it only inside that string, so only the string is read ([`scan::string_at`]) and the
//!   rest of the answer is the kept chunk's. This is taken only when both strings are non-empty
//!   (the token count rules then read the same), and when the kept answer borrowed nothing else
//!   from its chunk (no finish reason, no error).
//!
//! Either way the answer is the one a whole scan gives (the tests below compare them). Any
//! other chunk is scanned whole and becomes the new reference.

use super::chunk::ChunkInfo;
use super::{reference, scan};

/// The longest chunk (or start of one) kept for the next: bounds what a stream holds.
const MAX_PREFIX: usize = 512;

/// A stream's last chunk (whole when its answer string may be read alone, else up to its
/// `choices` key), where its scan may resume, and what its answer string was.
#[derive(Debug, Default)]
pub struct ChunkPrefix {
    bytes: Vec<u8>,
    resume: Option<scan::Resume>,
    content: Option<Content>,
}

/// Where the kept chunk's answer string lies in it, and what its scan answered besides the
/// string (the members of [`ChunkInfo`] that do not borrow from the chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Content {
    /// Index of the string's opening quote.
    open: usize,
    /// Index of its closing quote.
    close: usize,
    empty_text: bool,
    finished_empty: bool,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    cached_tokens: Option<u64>,
}

impl Content {
    /// What may be reused from `info`, the whole scan's answer for `data`: `None` unless it
    /// holds an answer string and nothing else borrowed from `data`.
    fn of(info: &ChunkInfo, data: &[u8]) -> Option<Self> {
        let text = info.text?;
        if info.finish_reason.is_some() || info.error.is_some() || !info.has_content {
            return None;
        }
        // The scanner's `text` is a slice of `data`.
        let open = (text.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
        let close = open + text.len().checked_sub(1)?;
        (data.get(open..=close)? == text.as_bytes()).then_some(())?;
        Some(Self {
            open,
            close,
            empty_text: info.empty_text,
            finished_empty: info.finished_empty,
            prompt_tokens: info.prompt_tokens,
            completion_tokens: info.completion_tokens,
            reasoning_tokens: info.reasoning_tokens,
            cached_tokens: info.cached_tokens,
        })
    }
}

impl ChunkPrefix {
    /// The answer for `data` when it is the kept chunk with only its (non-empty) answer
    /// string changed to another non-empty one.
    fn same_but_the_string<'a>(&self, data: &'a [u8]) -> Option<ChunkInfo<'a>> {
        let c = self.content?;
        let (before, after) = (&self.bytes[..=c.open], &self.bytes[c.close..]);
        let close = data.len().checked_sub(after.len())?;
        if close < c.open + 2
            || !data
                .get(..before.len())
                .is_some_and(|d| same_bytes(d, before))
            || !same_bytes(&data[close..], after)
        {
            return None;
        }
        let text = scan::string_at(data, c.open, close)?;
        Some(ChunkInfo {
            has_content: true,
            text: Some(text),
            empty_text: c.empty_text,
            finished_empty: c.finished_empty,
            finish_reason: None,
            prompt_tokens: c.prompt_tokens,
            completion_tokens: c.completion_tokens,
            reasoning_tokens: c.reasoning_tokens,
            cached_tokens: c.cached_tokens,
            error: None,
        })
    }
}

/// `a == b`, compared 16 bytes at a time in line: a token's chunk is compared with the kept
/// one over a few hundred bytes, and the library's `memcmp` lies pages away from the rest of a
/// token's code.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |c: &[u8]| u128::from_ne_bytes(c.try_into().unwrap_or_default());
    let (mut x, mut y) = (a.chunks_exact(16), b.chunks_exact(16));
    x.by_ref().zip(y.by_ref()).all(|(p, q)| word(p) == word(q))
        && x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

/// [`super::read_chunk`] for the next event of the stream whose earlier chunks `prefix` keeps.
pub fn read_chunk_after<'a>(
    data: &'a [u8],
    prefix: &mut ChunkPrefix,
) -> Result<ChunkInfo<'a>, serde_json::Error> {
    if let Some(info) = prefix.same_but_the_string(data) {
        return Ok(info);
    }
    let kept = |r: &scan::Resume| prefix.bytes.get(..r.at);
    let from = prefix
        .resume
        .filter(|r| kept(r).is_some_and(|start| data.starts_with(start)));
    let (info, resume) = scan::scan_resumable(data, from);
    // A resumed chunk shares the kept bytes before `from`, so it may be resumed there too.
    let resume = from.or(resume);
    let content = info.as_ref().and_then(|info| Content::of(info, data));
    if let Some(content) = content.filter(|_| data.len() <= MAX_PREFIX) {
        prefix.bytes.clear();
        prefix.bytes.extend_from_slice(data);
        prefix.resume = resume;
        prefix.content = Some(content);
    } else if from.is_none() {
        prefix.bytes.clear();
        prefix.resume = None;
        prefix.content = None;
        if let Some(r) = resume.filter(|r| r.at <= MAX_PREFIX) {
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
mod tests;
