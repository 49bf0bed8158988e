//! Splits a byte stream into Server-Sent Events, whatever the network cut them into.
//!
//! Follows the SSE grammar: lines end in `\n`, `\r\n` or `\r`; `data:` lines (one optional space
//! after the colon) accumulate, joined by `\n`; a blank line dispatches the event; comments
//! (`:`) and other fields are ignored. Buffers are reused across events and requests, so a
//! steady stream allocates nothing.
//!
//! Almost every event an inference server sends is one `data: {...}\n\n` block inside a single
//! network read. Those are handed to the callback straight from the read buffer, without being
//! copied; anything else (split reads, `\r`, several data lines, other fields) takes the general
//! line-by-line path, which gives the same events.
//!
//! Bounded by design: a line or an event's data longer than [`MAX_EVENT_BYTES`] ends the body
//! with [`TooLong`] instead of growing without end, so a server that never sends a newline
//! costs at most that much memory per stream.

/// The longest line, and the most data one event may gather, before the body is refused: far
/// above any real chunk (a few hundred bytes), far below what would hurt with many streams.
pub const MAX_EVENT_BYTES: usize = 8 << 20;

/// A line or event passed [`MAX_EVENT_BYTES`]: the body is not a usable event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong;

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an SSE line or event passed {} MiB (the cap on one event) without ending; is this an event stream?",
            MAX_EVENT_BYTES >> 20
        )
    }
}

/// Incremental SSE parser for one response body.
#[derive(Debug, Default)]
pub struct SseSplitter {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    last_was_cr: bool,
}

impl SseSplitter {
    /// Creates an empty splitter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes of the body; `on_event` is called with the data of each complete
    /// event, in order. It returns `false` to stop early (the rest of `chunk` is dropped).
    /// `Err` when a line or an event's data passes [`MAX_EVENT_BYTES`]; the splitter is then
    /// not to be fed again.
    pub fn feed(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(&[u8]) -> bool,
    ) -> Result<(), TooLong> {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.is_between_events() {
                if let Some((data, len)) = whole_data_event(rest) {
                    if !on_event(data) {
                        return Ok(());
                    }
                    rest = &rest[len..];
                    continue;
                }
            }
            if self.last_was_cr {
                self.last_was_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match memchr::memchr2(b'\n', b'\r', rest) {
                None => {
                    if self.line.len() + rest.len() > MAX_EVENT_BYTES {
                        return Err(TooLong);
                    }
                    self.line.extend_from_slice(rest);
                    return Ok(());
                }
                Some(i) => {
                    self.last_was_cr = rest[i] == b'\r';
                    if self.line.len() + i > MAX_EVENT_BYTES {
                        return Err(TooLong);
                    }
                    let keep_going = if self.line.is_empty() {
                        self.end_line(&rest[..i], &mut on_event)?
                    } else {
                        let mut line = std::mem::take(&mut self.line);
                        line.extend_from_slice(&rest[..i]);
                        let r = self.end_line(&line, &mut on_event);
                        line.clear();
                        self.line = line;
                        r?
                    };
                    if !keep_going {
                        return Ok(());
                    }
                    rest = &rest[i + 1..];
                }
            }
        }
        Ok(())
    }

    fn end_line(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(&[u8]) -> bool,
    ) -> Result<bool, TooLong> {
        if line.is_empty() {
            if !self.has_data {
                return Ok(true);
            }
            self.has_data = false;
            let r = on_event(&self.data);
            self.data.clear();
            return Ok(r);
        }
        if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                return Err(TooLong);
            }
            if self.has_data {
                self.data.push(b'\n');
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        Ok(true)
    }

    fn is_between_events(&self) -> bool {
        self.line.is_empty() && !self.has_data && !self.last_was_cr
    }

    /// True when bytes of an unfinished event are buffered (a body that ends here was cut).
    pub fn has_partial(&self) -> bool {
        self.has_data || !self.line.is_empty()
    }
}

/// Recognises `data: VALUE\n\n` (or `data:VALUE\n\n`) at the start of `bytes`, with no `\r` in
/// it; returns VALUE and the length of the block. One pass over VALUE: the first `\n` or `\r`
/// must be the `\n` that ends it.
fn whole_data_event(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let after = bytes.strip_prefix(b"data:")?;
    let value_at = 5 + usize::from(after.first() == Some(&b' '));
    let end = value_at + memchr::memchr2(b'\n', b'\r', &bytes[value_at..])?;
    if bytes[end] != b'\n' || bytes.get(end + 1) != Some(&b'\n') {
        return None;
    }
    Some((&bytes[value_at..end], end + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut s = SseSplitter::new();
        let mut out = vec![];
        for c in chunks {
            s.feed(c, |e| {
                out.push(String::from_utf8_lossy(e).into_owned());
                true
            })
            .unwrap();
        }
        out
    }

    const BODY: &[u8] = b": comment\r\n\r\ndata: {\"a\":1}\n\nevent: x\ndata:{\"b\":2}\r\n\r\ndata: line1\ndata: line2\n\ndata: [DONE]\r\r";

    #[test]
    fn parses_whole_body() {
        assert_eq!(
            events(&[BODY]),
            vec!["{\"a\":1}", "{\"b\":2}", "line1\nline2", "[DONE]"]
        );
    }

    #[test]
    fn same_events_when_cut_at_every_byte() {
        let whole = events(&[BODY]);
        for i in 0..=BODY.len() {
            for j in i..=BODY.len() {
                let got = events(&[&BODY[..i], &BODY[i..j], &BODY[j..]]);
                assert_eq!(got, whole, "cut at {i} and {j}");
            }
        }
        let bytes: Vec<&[u8]> = BODY.chunks(1).collect();
        assert_eq!(events(&bytes), whole);
    }

    #[test]
    fn fast_path_and_general_path_agree() {
        let body: &[u8] = b"data: {\"a\":1}\n\ndata:{\"b\":2}\n\ndata: x\r\ny\n\ndata: two\ndata: lines\n\ndata: [DONE]\n\n";
        let whole = events(&[body]);
        assert_eq!(
            whole,
            vec!["{\"a\":1}", "{\"b\":2}", "x", "two\nlines", "[DONE]"]
        );
        for i in 0..=body.len() {
            assert_eq!(events(&[&body[..i], &body[i..]]), whole, "cut at {i}");
        }
    }

    #[test]
    fn partial_event_is_reported() {
        let mut s = SseSplitter::new();
        s.feed(b"data: {\"a\"", |_| true).unwrap();
        assert!(s.has_partial());
        s.feed(b":1}\n\n", |_| true).unwrap();
        assert!(!s.has_partial());
    }

    #[test]
    fn an_endless_line_is_refused_at_the_cap() {
        let mut s = SseSplitter::new();
        let piece = vec![b'x'; 64 * 1024];
        s.feed(b"data: ", |_| true).unwrap();
        let mut fed = 6;
        let err = loop {
            match s.feed(&piece, |_| true) {
                Ok(()) => fed += piece.len(),
                Err(e) => break e,
            }
            assert!(
                fed <= MAX_EVENT_BYTES,
                "accepted {fed} bytes without a newline"
            );
        };
        assert!(err.to_string().contains("8 MiB"), "{err}");
        assert!(s.line.len() <= MAX_EVENT_BYTES);
    }

    #[test]
    fn many_data_lines_are_capped_too() {
        let mut s = SseSplitter::new();
        let line = format!("data: {}\n", "y".repeat(1000));
        let mut events = 0;
        let mut result = Ok(());
        for _ in 0..(MAX_EVENT_BYTES / 1000 + 10) {
            result = s.feed(line.as_bytes(), |_| {
                events += 1;
                true
            });
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(TooLong));
        assert_eq!(events, 0);
        assert!(s.data.len() <= MAX_EVENT_BYTES);
    }

    #[test]
    fn an_event_just_under_the_cap_passes() {
        let mut s = SseSplitter::new();
        let value = vec![b'z'; MAX_EVENT_BYTES - 10];
        let mut got = 0;
        s.feed(b"data: ", |_| true).unwrap();
        for part in value.chunks(100_000) {
            s.feed(part, |_| true).unwrap();
        }
        s.feed(b"\n\n", |e| {
            got = e.len();
            true
        })
        .unwrap();
        assert_eq!(got, value.len());
    }
}
