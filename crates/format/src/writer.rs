//! Writes records as NDJSON through one buffered writer. Flushing is the caller's choice (at the
//! end, or when a consumer needs to see progress); nothing here flushes per record.

use crate::records::{Record, Token};
use std::io::{self, Write};

/// Buffered NDJSON record writer.
pub struct RecordWriter<W: Write> {
    out: io::BufWriter<W>,
}

impl<W: Write> RecordWriter<W> {
    /// Wraps `out` in a 64 KiB buffer.
    pub fn new(out: W) -> Self {
        Self {
            out: io::BufWriter::with_capacity(64 * 1024, out),
        }
    }

    /// Writes one record and its newline.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, record).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }

    /// Flushes the buffer to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Encodes a token record onto `buf` by hand, without serde or allocation: it is the one record
/// written per streamed event, the hot path of `fire`. Byte-identical to the serde encoding.
pub fn encode_token(buf: &mut Vec<u8>, token: &Token) {
    let mut num = itoa::Buffer::new();
    buf.extend_from_slice(b"{\"type\":\"token\",\"id\":");
    buf.extend_from_slice(num.format(token.id).as_bytes());
    buf.extend_from_slice(b",\"at_ns\":");
    buf.extend_from_slice(num.format(token.at_ns).as_bytes());
    buf.extend_from_slice(b",\"tokens\":");
    buf.extend_from_slice(num.format(token.tokens).as_bytes());
    if token.empty {
        buf.extend_from_slice(b",\"empty\":true");
    }
    if token.reasoning {
        buf.extend_from_slice(b",\"reasoning\":true");
    }
    buf.extend_from_slice(b"}\n");
}

/// Encodes any record onto `buf` as one NDJSON line.
pub fn encode_record(buf: &mut Vec<u8>, record: &Record) {
    match record {
        Record::Token(t) => encode_token(buf, t),
        other => {
            // Serialising our own types into a Vec cannot fail.
            if serde_json::to_writer(&mut *buf, other).is_ok() {
                buf.push(b'\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_encoded_token_matches_serde() {
        for t in [
            Token {
                id: 0,
                at_ns: 0,
                tokens: 1,
                empty: false,
                reasoning: false,
            },
            Token {
                id: u64::MAX,
                at_ns: 123_456_789_012,
                tokens: u32::MAX,
                empty: false,
                reasoning: false,
            },
            Token {
                id: 3,
                at_ns: 4,
                tokens: 2,
                empty: true,
                reasoning: false,
            },
            Token {
                id: 5,
                at_ns: 6,
                tokens: 1,
                empty: false,
                reasoning: true,
            },
        ] {
            let mut fast = vec![];
            encode_token(&mut fast, &t);
            let mut slow = serde_json::to_vec(&Record::Token(t)).unwrap();
            slow.push(b'\n');
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                String::from_utf8(slow).unwrap()
            );
        }
    }
}
