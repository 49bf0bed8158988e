//! A fast path for reading streamed chunks: walks the JSON once, looking only at the members
//! `fire` needs (`choices[].text`, `choices[].delta.{content,reasoning_content,reasoning}`,
//! `choices[].finish_reason`, `usage.{prompt,completion}_tokens`,
//! `usage.completion_tokens_details.reasoning_tokens`, `usage.prompt_tokens_details.cached_tokens`
//! (only a usage chunk has them, so the token chunks' fast path is untouched), `error`, and an `object` of
//! `"error"`, the shape of vLLM's error responses) and skipping the rest
//! byte by byte, without building anything.
//!
//! It answers only when the chunk is plain: whenever it meets something it does not fully
//! check (an escape in a key or a finish reason, a duplicate member, a type the serde parser
//! would refuse, a malformed token) it returns `None` and the caller falls back to the serde
//! parser in `reference`, which is the reference: for every chunk the scanner answers, the answer
//! equals serde's (a test checks this over a corpus, and every prefix of it).

use super::chunk::ChunkInfo;
use std::borrow::Cow;

/// Scans one event's data; `None` means "ask the full parser".
///
/// UTF-8 is checked where serde checks it, not over the whole chunk: every key and every value
/// that is read (serde borrows them as `str`), but not the strings of skipped members, which
/// serde's `IgnoredAny` skips unchecked too.
pub fn scan(data: &[u8]) -> Option<ChunkInfo<'_>> {
    scan_resumable(data, None).0
}

/// Where the scan of a chunk may begin in the next chunk of the same stream: at the key of
/// `choices`, when every top-level member before it was skipped unread (or was an `object`
/// that is not `"error"`). The scanner's state there depends only on the bytes before `at`, so
/// a chunk that begins with the same bytes may be scanned from `at` in that state (a server
/// repeats `id`, `object`, `created` and `model` in every chunk of a stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resume {
    /// Index of the opening quote of the `choices` key.
    pub at: usize,
    /// An `object` member came before it.
    object_seen: bool,
}

/// [`scan`], begun at `from` (see [`Resume`]; the caller checked that `data` starts with the
/// bytes before it), and where the next chunk of the stream may begin, if anywhere.
pub fn scan_resumable(
    data: &[u8],
    from: Option<Resume>,
) -> (Option<ChunkInfo<'_>>, Option<Resume>) {
    let mut s = Scanner {
        b: data,
        i: 0,
        depth: 0,
        key_at: 0,
    };
    let mut resume = None;
    let info = scan_members(&mut s, from, &mut resume);
    (info, resume)
}

/// The JSON string literal whose opening quote is at `open`, if it closes exactly at `close`:
/// checked as the scanner checks an answer string it reads (escapes, raw control characters,
/// UTF-8), and returned raw, quotes and escapes included, as in [`ChunkInfo::text`]. Lets a
/// chunk that differs from an earlier one only inside that string be read from the string alone
/// (see `prefix`).
pub fn string_at(data: &[u8], open: usize, close: usize) -> Option<&str> {
    if data.get(open) != Some(&b'"') {
        return None;
    }
    let mut s = Scanner {
        b: data,
        i: open,
        depth: 0,
        key_at: 0,
    };
    s.skip_string()?;
    (s.i == close + 1).then_some(())?;
    let raw = &data[open..s.i];
    // A token's text is mostly ASCII, valid UTF-8 as it is: checked in line, without the call
    // to the library's validation (whose code lies pages away from the rest of a token's).
    if raw.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(raw) });
    }
    std::str::from_utf8(raw).ok()
}

fn scan_members<'a>(
    s: &mut Scanner<'a>,
    from: Option<Resume>,
    resume: &mut Option<Resume>,
) -> Option<ChunkInfo<'a>> {
    let data = s.b;
    let mut info = ChunkInfo::default();
    let mut seen = [false; 4];
    let mut object_error = false;
    if let Some(from) = from {
        s.i = from.at;
        seen[3] = from.object_seen;
    }
    let member = |s: &mut Scanner<'a>, key: &[u8]| {
        let slot = match key {
            b"choices" => 0,
            b"usage" => 1,
            b"error" => 2,
            b"object" => 3,
            _ => return s.skip_value(),
        };
        if std::mem::replace(&mut seen[slot], true) {
            return None;
        }
        match slot {
            0 => {
                if !(seen[1] || seen[2] || object_error) {
                    let object_seen = seen[3];
                    *resume = Some(Resume {
                        at: s.key_at,
                        object_seen,
                    });
                }
                s.choices(&mut info)
            }
            1 => s.usage(&mut info),
            3 => {
                s.peek()?;
                let start = s.i;
                s.skip_value()?;
                let raw = &s.b[start..s.i];
                std::str::from_utf8(raw).ok()?;
                object_error = raw == b"\"error\"";
                Some(())
            }
            _ => {
                let start = s.i;
                if s.null()? {
                    return Some(());
                }
                s.skip_value()?;
                info.error = Some(std::str::from_utf8(&s.b[start..s.i]).ok()?);
                Some(())
            }
        }
    };
    match from {
        Some(_) => s.members(member)?,
        None => s.object(member)?,
    }
    s.ws();
    if s.i != s.b.len() {
        return None;
    }
    if object_error && info.error.is_none() {
        info.error = Some(std::str::from_utf8(data).ok()?);
    }
    Some(info)
}

/// What one choice said, gathered while its members are walked (they come in any order).
#[derive(Default)]
struct Choice<'a> {
    text: Option<&'a str>,
    content: Option<&'a str>,
    role: bool,
    finished: bool,
}

impl<'a> Choice<'a> {
    /// Adds this choice to the chunk's answer, by the rules in `ChunkInfo`.
    fn fold_into(self, info: &mut ChunkInfo<'a>) {
        let non_empty = |raw: &Option<&'a str>| raw.filter(|r| r.len() > 2);
        if let Some(answer) = non_empty(&self.text).or(non_empty(&self.content)) {
            info.has_content = true;
            info.text = Some(answer);
        }
        let empty = |raw: Option<&str>| raw.is_some_and(|r| r.len() == 2);
        if (empty(self.text) || empty(self.content)) && !self.role {
            if self.finished {
                info.finished_empty = true;
            } else {
                info.empty_text = true;
            }
        }
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    depth: u32,
    /// Where the key being read began (the top level's `choices` is where a scan may resume).
    key_at: usize,
}

/// Deeper nesting is left to serde, which refuses past 128 levels without using the stack.
const MAX_DEPTH: u32 = 100;

/// Index of the first `"`, `\\` or control character (forbidden raw in JSON strings) at or
/// after `i`. Eight bytes at a time (Mycroft's zero-byte test, as serde_json does): the ids and
/// model names of a chunk are 20–60 bytes long, and a byte-by-byte loop over them was most of
/// the scanner's time. `memchr2` alone would miss the control characters serde refuses.
fn string_stop(b: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGHS: u64 = ONES << 7;
    while let Some(word) = b.get(i..i + 8) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let chars = u64::from_le_bytes(bytes);
        let control = chars.wrapping_sub(ONES * 0x20) & !chars;
        let quote = chars ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = chars ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        // The lowest flagged byte is exact (a borrow only flags bytes above a true hit).
        let hits = (control | quote | backslash) & HIGHS;
        if hits != 0 {
            return Some(i + hits.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return Some(i);
        }
        i += 1;
    }
    None
}

impl<'a> Scanner<'a> {
    fn ws(&mut self) {
        while let Some(c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// Consumes `null` if it is next; errs on a malformed literal.
    fn null(&mut self) -> Option<bool> {
        if self.peek()? != b'n' {
            return Some(false);
        }
        self.literal(b"null")?;
        Some(true)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)?;
        self.delimited()
    }

    /// After a scalar, the next byte must end it.
    fn delimited(&self) -> Option<()> {
        match self.b.get(self.i) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b'}' | b']') => Some(()),
            _ => None,
        }
    }

    /// A string without escapes, returned as its contents (the scanner is at its `"`).
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i + 1;
        let end = string_stop(self.b, start)?;
        if self.b[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        Some(&self.b[start..end])
    }

    fn skip_string(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            let at = string_stop(self.b, self.i)?;
            if self.b[at] == b'"' {
                self.i = at + 1;
                return Some(());
            }
            if self.b[at] != b'\\' {
                return None;
            }
            match self.b.get(at + 1)? {
                b'u' => {
                    let hex = self.b.get(at + 2..at + 6)?;
                    hex.iter().all(u8::is_ascii_hexdigit).then_some(())?;
                    self.i = at + 6;
                }
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i = at + 2,
                _ => return None,
            }
        }
    }

    /// A number by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn skip_number(&mut self) -> Option<()> {
        let digits = |s: &mut Self| {
            let start = s.i;
            while s.b.get(s.i).is_some_and(u8::is_ascii_digit) {
                s.i += 1;
            }
            s.i - start
        };
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let first = *self.b.get(self.i)?;
        let n = digits(self);
        if n == 0 || (first == b'0' && n > 1) {
            return None;
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            (digits(self) > 0).then_some(())?;
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            (digits(self) > 0).then_some(())?;
        }
        self.delimited()
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => self.nested(|s| s.object(|s, _| s.skip_value())),
            b'[' => self.nested(|s| s.array(|s| s.skip_value())),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.skip_number(),
        }
    }

    fn nested(&mut self, walk: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let r = walk(self);
        self.depth -= 1;
        r
    }

    /// Walks an object, calling `member` with each key (escape-free, valid UTF-8 keys only:
    /// serde reads the keys of the objects it deserializes as `str`; for the objects it skips it
    /// does not, so this is stricter than needed there, and as cheap).
    fn object(&mut self, member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        self.members(member)
    }

    /// The members of an object from its next key on, to its closing brace.
    fn members(&mut self, mut member: impl FnMut(&mut Self, &[u8]) -> Option<()>) -> Option<()> {
        loop {
            self.ws();
            self.key_at = self.i;
            let key = self.plain_string()?;
            if !key.is_ascii() {
                std::str::from_utf8(key).ok()?;
            }
            self.eat(b':')?;
            self.peek()?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            element(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A value that is text when it is a string: returns the string's raw literal (quotes and
    /// escapes included), or `None` for any other value.
    fn text(&mut self) -> Option<Option<&'a str>> {
        if self.peek()? == b'"' {
            let start = self.i;
            self.skip_string()?;
            Some(Some(std::str::from_utf8(&self.b[start..self.i]).ok()?))
        } else {
            self.skip_value()?;
            Some(None)
        }
    }

    fn choices(&mut self, info: &mut ChunkInfo<'a>) -> Option<()> {
        if self.null()? {
            return Some(());
        }
        self.array(|s| {
            if s.peek()? != b'{' {
                return None;
            }
            let mut seen = [false; 3];
            let mut choice = Choice::default();
            s.object(|s, key| {
                let slot = match key {
                    b"text" => 0,
                    b"delta" => 1,
                    b"finish_reason" => 2,
                    _ => return s.skip_value(),
                };
                if std::mem::replace(&mut seen[slot], true) {
                    return None;
                }
                match slot {
                    0 => choice.text = s.text()?,
                    1 => {
                        if !s.null()? {
                            s.delta(info, &mut choice)?;
                        }
                    }
                    _ => {
                        if !s.null()? {
                            let reason = std::str::from_utf8(s.plain_string()?).ok()?;
                            info.finish_reason = Some(Cow::Borrowed(reason));
                            choice.finished = true;
                        }
                    }
                }
                Some(())
            })?;
            choice.fold_into(info);
            Some(())
        })
    }

    fn delta(&mut self, info: &mut ChunkInfo<'a>, choice: &mut Choice<'a>) -> Option<()> {
        if self.peek()? != b'{' {
            return None;
        }
        let mut seen = [false; 4];
        self.object(|s, key| {
            let slot = match key {
                b"content" => 0,
                b"reasoning_content" => 1,
                b"reasoning" => 2,
                b"role" => 3,
                _ => return s.skip_value(),
            };
            if std::mem::replace(&mut seen[slot], true) {
                return None;
            }
            match slot {
                0 => choice.content = s.text()?,
                3 => {
                    if !s.null()? {
                        let start = s.i;
                        s.skip_value()?;
                        std::str::from_utf8(&s.b[start..s.i]).ok()?;
                        choice.role = true;
                    }
                }
                _ => info.has_content |= s.text()?.is_some_and(|raw| raw.len() > 2),
            }
            Some(())
        })
    }

    fn usage(&mut self, info: &mut ChunkInfo<'a>) -> Option<()> {
        if self.null()? {
            return Some(());
        }
        if self.peek()? != b'{' {
            return None;
        }
        let mut seen = [false; 4];
        self.object(|s, key| {
            let slot = match key {
                b"prompt_tokens" => 0,
                b"completion_tokens" => 1,
                b"completion_tokens_details" => 2,
                b"prompt_tokens_details" => 3,
                _ => return s.skip_value(),
            };
            if std::mem::replace(&mut seen[slot], true) {
                return None;
            }
            match slot {
                0 => info.prompt_tokens = s.nullable_count()?,
                1 => info.completion_tokens = s.nullable_count()?,
                2 => info.reasoning_tokens = s.details(b"reasoning_tokens")?,
                _ => info.cached_tokens = s.details(b"cached_tokens")?,
            }
            Some(())
        })
    }

    /// A count or null.
    fn nullable_count(&mut self) -> Option<Option<u64>> {
        if self.null()? {
            Some(None)
        } else {
            Some(Some(self.count()?))
        }
    }

    /// A usage details object (or null), and its count member `wanted` (or none).
    fn details(&mut self, wanted: &[u8]) -> Option<Option<u64>> {
        if self.null()? {
            return Some(None);
        }
        if self.peek()? != b'{' {
            return None;
        }
        let mut seen = false;
        let mut value = None;
        self.object(|s, key| {
            if key != wanted {
                return s.skip_value();
            }
            if std::mem::replace(&mut seen, true) {
                return None;
            }
            value = s.nullable_count()?;
            Some(())
        })?;
        Some(value)
    }

    /// A non-negative integer that fits u64 (anything else is left to the full parser).
    fn count(&mut self) -> Option<u64> {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = &self.b[start..self.i];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        self.delimited()?;
        std::str::from_utf8(digits).ok()?.parse().ok()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::api::reference::parse as parse_full;

    pub(in crate::api) const CORPUS: &[&str] = &[
        r#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" hi","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
        r#"{"id":"c","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":null}"#,
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}"#,
        r#"{"choices":[{"delta":{"content":"\u00e9\n\"x\""}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_content":"hmm"}}],"usage":{"prompt_tokens":3,"completion_tokens":9,"total_tokens":12}}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":128,"total_tokens":138,"prompt_tokens_details":null}}"#,
        r#"{"choices":[{"index":0,"text":"a"},{"index":1,"text":"","finish_reason":"stop"}]}"#,
        r#" { "choices" : [ { "text" : "x" , "finish_reason" : "stop" } ] , "usage" : { "completion_tokens" : 1 } } "#,
        r#"{"error":{"message":"boom","type":"internal","code":500}}"#,
        r#"{"error":"plain"}"#,
        r#"{"error":null,"choices":null}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}],"x":[1,2.5,-3e4,true,false,null,{"a":[]}]}"#,
        r#"{"choices":[{"finish_reason":"st\u006fp"}]}"#,
        r#"{"choices":[{"text":"a","text":"b"}]}"#,
        r#"{"choices":5}"#,
        r#"{"choices":[5]}"#,
        r#"{"choices":[{"delta":"x"}]}"#,
        r#"{"choices":[{"finish_reason":7}]}"#,
        r#"{"usage":{"completion_tokens":-1}}"#,
        r#"{"usage":{"completion_tokens":1.5}}"#,
        r#"{"usage":{"completion_tokens":18446744073709551616}}"#,
        r#"{"usage":{"completion_tokens":007}}"#,
        r#"{"x":01}"#,
        r#"{"x":-0.5e+3,"y":-0,"z":1E9}"#,
        r#"{"x":-}"#,
        r#"{"x":1e}"#,
        r#"{"x":+1}"#,
        r#"{"x":1.}"#,
        r#"{"x":"\q"}"#,
        r#"{"x":tru}"#,
        r#"{"x":1}}"#,
        r#"{"x":1} x"#,
        r#"{"k\"ey":1,"choices":[{"text":"y"}]}"#,
        "{\"x\":\"a\nb\"}",
        "{\"choices\":[{\"text\":\"a\tb\"}]}",
        "{\"k\u{1}\":1}",
        "{\"x\":\"\u{1}u0041\"}",
        r#"{"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"role":null,"content":""}}]}"#,
        r#"{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"usage":{"completion_tokens":3,"prompt_tokens":9}}"#,
        r#"{"choices":[{"delta":{"content":"a","role":"assistant","role":"x"}}]}"#,
        r#"{"choices":[{"text":"a\"b"},{"delta":{"content":"c"}}]}"#,
        r#"{"choices":[{"text":"x","delta":{"content":"y"}}]}"#,
        r#"{}"#,
        r#"[]"#,
        r#"not json"#,
        "",
        r#"{"object":"error","message":"boom","type":"BadRequestError","param":null,"code":400}"#,
        r#"{"object":"text_completion","choices":[]}"#,
        r#"{"object": "error" ,"message":"x"}"#,
        r#"{"object":"err\u006fr","message":"x"}"#,
        r#"{"object":5}"#,
        r#"{"object":"error","object":"error"}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":16},"completion_tokens_details":{"reasoning_tokens":2,"accepted_prediction_tokens":0}}}"#,
        r#"{"choices":[],"usage":{"prompt_tokens_details":null,"completion_tokens_details":null}}"#,
        r#"{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":null,"audio_tokens":0}}}"#,
        r#"{"usage":{"prompt_tokens_details":{"cached_tokens":1,"cached_tokens":2}}}"#,
        r#"{"usage":{"prompt_tokens_details":{"cached_tokens":-1}}}"#,
        r#"{"usage":{"prompt_tokens_details":5}}"#,
        r#"{"usage":{"completion_tokens_details":{"reasoning_tokens":1.5}}}"#,
        r#"{"usage":{"completion_tokens_details":{},"completion_tokens_details":{}}}"#,
        r#"{"choices":[{"delta":{"reasoning":"r"}}]}"#,
        // llama-server's (llama.cpp of llama-cpp-python 0.3.36) usage chunk for a repeated prompt.
        r#"{"choices":[],"created":1795813829,"id":"chatcmpl-qjNeAkZjbAUhCJunS18tKnqM0D4T0oGq","model":"tiny","system_fingerprint":"b1-0c1e570","object":"chat.completion.chunk","usage":{"completion_tokens":3,"prompt_tokens":35,"total_tokens":38,"prompt_tokens_details":{"cached_tokens":34}},"timings":{"cache_n":34,"prompt_n":1,"prompt_ms":0.566,"prompt_per_token_ms":0.566,"prompt_per_second":1766.78445229682,"predicted_n":3,"predicted_ms":0.642,"predicted_per_token_ms":0.321,"predicted_per_second":3115.264797507788}}"#,
    ];

    /// The chunks at the corpus' end that exercise the usage details.
    const USAGE_DETAILS: usize = 10;

    pub(in crate::api) fn same(a: &ChunkInfo, b: &ChunkInfo) -> bool {
        a.agrees_with(b)
    }

    #[test]
    fn agrees_with_the_full_parser_whenever_it_answers() {
        for text in CORPUS {
            for end in 0..=text.len() {
                let Some(prefix) = text.get(..end) else {
                    continue;
                };
                if let Some(fast) = scan(prefix.as_bytes()) {
                    match parse_full(prefix.as_bytes()) {
                        Ok(full) => assert!(same(&fast, &full), "{prefix}: {fast:?} vs {full:?}"),
                        Err(e) => panic!("scanner accepted what serde refuses ({e}): {prefix}"),
                    }
                }
            }
        }
    }

    /// Chunks with bytes that are not UTF-8, where serde checks them (keys, values it reads)
    /// and where it does not (strings of members it skips).
    pub(in crate::api) const INVALID_UTF8: &[&[u8]] = &[
        b"{\"id\":\"\xff\xfe\",\"choices\":[{\"text\":\"a\"}]}",
        b"{\"model\":\"\xc3\",\"choices\":[{\"index\":0,\"logprobs\":\"\xc3\xa9\xff\",\"delta\":{\"content\":\"b\"}}]}",
        b"{\"usage\":{\"x\":\"\xff\",\"completion_tokens\":2},\"choices\":[]}",
        b"{\"choices\":[{\"delta\":{\"tool_calls\":[\"\xed\xa0\x80\"],\"content\":\"c\"}}]}",
        b"{\"x\":{\"\xff\":1},\"choices\":[{\"text\":\"d\"}]}",
        b"{\"\xff\":1}",
        b"{\"choices\":[{\"\xc3\xa9\":1,\"text\":\"e\"}]}",
        b"{\"choices\":[{\"text\":\"\xff\"}]}",
        b"{\"choices\":[{\"delta\":{\"content\":\"\xc3\"}}]}",
        b"{\"choices\":[{\"delta\":{\"role\":\"\xff\",\"content\":\"x\"}}]}",
        b"{\"choices\":[{\"delta\":{\"reasoning\":\"\xff\"}}]}",
        b"{\"choices\":[{\"finish_reason\":\"\xff\"}]}",
        b"{\"object\":\"\xff\"}",
        b"{\"error\":{\"message\":\"\xff\"}}",
        b"{\"x\":1}\xff",
        b"{\"x\":\xff}",
    ];

    #[test]
    fn agrees_with_the_full_parser_on_invalid_utf8_at_every_cut() {
        for bytes in INVALID_UTF8 {
            for end in 0..=bytes.len() {
                let prefix = &bytes[..end];
                if let Some(fast) = scan(prefix) {
                    match parse_full(prefix) {
                        Ok(full) => assert!(same(&fast, &full), "{prefix:?}: {fast:?} vs {full:?}"),
                        Err(e) => panic!("scanner accepted what serde refuses ({e}): {prefix:?}"),
                    }
                }
            }
        }
        // Skipped members are not checked, so these stay on the fast path.
        for bytes in &INVALID_UTF8[..4] {
            assert!(scan(bytes).is_some(), "fell back on {bytes:?}");
            assert!(parse_full(bytes).is_ok(), "serde refused {bytes:?}");
        }
        // What serde reads as text must be UTF-8: both refuse.
        for bytes in &INVALID_UTF8[7..] {
            assert!(
                scan(bytes).is_none() && parse_full(bytes).is_err(),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn string_ends_are_found_at_every_offset() {
        let mut text = b"{\"x\":\"".to_vec();
        for len in 0..40 {
            let body: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            for stop in [b'"', b'\\', b'\n'] {
                text.truncate(6);
                text.extend_from_slice(&body);
                text.push(stop);
                assert_eq!(
                    string_stop(&text, 6),
                    Some(6 + len),
                    "len {len}, stop {stop}"
                );
            }
            text.truncate(6);
            text.extend_from_slice(&body);
            text.extend_from_slice("é€".as_bytes());
            assert_eq!(string_stop(&text, 6), None, "len {len}");
        }
    }

    #[test]
    fn answers_the_common_shapes_itself() {
        for text in &CORPUS[..13] {
            assert!(scan(text.as_bytes()).is_some(), "fell back on {text}");
        }
        let c = scan(CORPUS[5].as_bytes()).unwrap();
        assert!(c.has_content);
        assert_eq!((c.prompt_tokens, c.completion_tokens), (Some(3), Some(9)));
        assert_eq!(
            scan(CORPUS[9].as_bytes())
                .unwrap()
                .error
                .map(|e| e.contains("boom")),
            Some(true)
        );
    }

    #[test]
    fn a_top_level_error_object_is_an_error() {
        // The error objects come before the usage-details chunks at the corpus' end.
        let n = CORPUS.len() - USAGE_DETAILS;
        let c = scan(CORPUS[n - 6].as_bytes()).unwrap();
        assert!(c.error.is_some_and(|e| e.contains("boom")), "{c:?}");
        assert!(scan(CORPUS[n - 5].as_bytes()).unwrap().error.is_none());
        assert!(scan(CORPUS[n - 4].as_bytes()).unwrap().error.is_some());
        assert!(parse_full(CORPUS[n - 6].as_bytes())
            .unwrap()
            .error
            .is_some());
    }

    #[test]
    fn reads_the_answer_text_and_empty_tokens() {
        let vllm_empty =
            scan(br#"{"choices":[{"index":0,"text":"","finish_reason":null}]}"#).unwrap();
        assert!(vllm_empty.empty_text && !vllm_empty.has_content);
        let role = scan(br#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#).unwrap();
        assert!(!role.empty_text && role.text.is_none());
        let last = scan(br#"{"choices":[{"text":"","finish_reason":"length"}]}"#).unwrap();
        assert!(!last.empty_text && last.finished_empty);
        let chat_last =
            scan(br#"{"choices":[{"delta":{"content":""},"finish_reason":"length"}]}"#).unwrap();
        assert!(!chat_last.empty_text && chat_last.finished_empty);
        let c =
            scan(br#"{"choices":[{"delta":{"content":"a\nb","reasoning_content":"r"}}]}"#).unwrap();
        assert_eq!(c.text, Some(r#""a\nb""#));
        let r = scan(br#"{"choices":[{"delta":{"reasoning_content":"r"}}]}"#).unwrap();
        assert!(r.has_content && r.text.is_none());
    }

    #[test]
    fn reads_reasoning_and_cached_counts_from_the_usage() {
        let n = CORPUS.len() - USAGE_DETAILS;
        let c = scan(CORPUS[n].as_bytes()).unwrap();
        assert_eq!((c.reasoning_tokens, c.cached_tokens), (Some(2), Some(16)));
        let c = scan(CORPUS[n + 1].as_bytes()).unwrap();
        assert_eq!((c.reasoning_tokens, c.cached_tokens), (None, None));
        assert_eq!(scan(CORPUS[n + 2].as_bytes()).unwrap().cached_tokens, None);
        for bad in &CORPUS[n + 3..n + 8] {
            assert!(scan(bad.as_bytes()).is_none(), "{bad}");
        }
        let r = scan(CORPUS[n + 8].as_bytes()).unwrap();
        assert!(r.is_reasoning());
        let llama = scan(CORPUS[n + 9].as_bytes()).unwrap();
        assert_eq!(
            (llama.prompt_tokens, llama.cached_tokens),
            (Some(35), Some(34))
        );
        let a = scan(br#"{"choices":[{"delta":{"content":"a","reasoning":"r"}}]}"#).unwrap();
        assert!(a.has_content && !a.is_reasoning());
    }

    #[test]
    fn deep_nesting_falls_back_instead_of_overflowing() {
        let deep = format!("{{\"x\":{}1{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(scan(deep.as_bytes()).is_none());
        // serde skips unknown values iteratively, so the fallback copes with any depth.
        assert!(!parse_full(deep.as_bytes()).unwrap().has_content);
    }

    #[test]
    fn invalid_utf8_is_left_to_the_full_parser() {
        assert!(scan(b"{\"choices\":[{\"text\":\"\xff\"}]}").is_none());
    }
}
