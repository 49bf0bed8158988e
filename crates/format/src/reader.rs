//! Reads a stream line by line into typed records, with errors that name the line and field.
//!
//! Bounded by design: a line longer than the reader's cap (64 MiB unless set) is refused as soon
//! as the cap is passed, so a stream without newlines never fills memory. A reader says which
//! record types it uses ([`RecordReader::keep`]); lines of other types are skipped after reading
//! their `"type"` alone, without a full parse, and types that mean the input is of the wrong kind
//! ([`RecordReader::reject`]) stop the read with a message that says what the input is and which
//! tool reads it. Lines of unknown type are always skipped (adding is never breaking).
//!
//! A stream may hold several runs: every `header` starts one and is returned like any record.
//! A last line without its newline that does not parse (a run killed mid-write) ends the stream
//! quietly; [`RecordReader::truncated_tail`] tells the caller so it can warn. Any other malformed
//! line is an error naming the line and, where one is at fault, the field.
//!
//! The lines of a run that come by the million (`token`, `sent`, `done`) are parsed by hand when
//! they have exactly the shape `fire` writes (`fast`), and by serde otherwise.

use crate::json_error::describe_json_error;
use crate::records::{Header, Record, RecordType};
use crate::FORMAT_MAJOR;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{self, BufRead};

/// The longest line read by default: a request with a prompt of a million tokens fits.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Why a stream could not be read. Everything but `Io` is bad input (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The underlying reader failed.
    #[error("reading {source_name}: {error}")]
    Io {
        /// Where the stream came from (`<stdin>` or a path).
        source_name: String,
        /// The I/O error.
        error: io::Error,
    },
    /// A line is not a valid record.
    #[error("{source_name}: line {line}: {message}")]
    Malformed {
        /// Where the stream came from.
        source_name: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, naming the field where one is at fault.
        message: String,
    },
    /// The stream was written by a newer, incompatible tool.
    #[error("{source_name}: line {line}: stream format major version {found} is newer than this tool supports ({supported}); upgrade tokenpipe")]
    Version {
        /// Where the stream came from.
        source_name: String,
        /// 1-based line number of the header.
        line: usize,
        /// The major version found.
        found: u32,
        /// The highest major version this build reads.
        supported: u32,
    },
    /// The stream is empty or does not start with a header.
    #[error("{source_name}: {message}")]
    NoHeader {
        /// Where the stream came from.
        source_name: String,
        /// What was found instead.
        message: String,
    },
    /// The stream is a tokenpipe stream, but not of the kind this tool reads.
    #[error("{source_name}: line {line}: this is not {wanted}: it holds \"{}\" records, which {} writes and {} reads", found.name(), found.writer(), found.reader())]
    WrongInput {
        /// Where the stream came from.
        source_name: String,
        /// 1-based line number of the first misplaced record.
        line: usize,
        /// What the reading tool expected, in words.
        wanted: &'static str,
        /// The record type that gave it away.
        found: RecordType,
    },
}

impl ReadError {
    /// True when the input itself is at fault (as opposed to an I/O failure).
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ReadError::Io { .. })
    }

    /// A line longer than `max_bytes`: the one message every tool gives for a stream without
    /// newlines, so that `table`'s own readers refuse it in the same words as this reader.
    pub fn line_too_long(source_name: impl Into<String>, line: usize, max_bytes: usize) -> Self {
        ReadError::Malformed {
            source_name: source_name.into(),
            line,
            message: format!(
                "line is longer than {} MiB; is this NDJSON?",
                max_bytes >> 20
            ),
        }
    }
}

#[derive(Deserialize)]
struct TypeProbe<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
}

/// The `"type"` of a line: read straight from the bytes when the line starts the way every
/// tokenpipe writer starts it, else by a probe that reads the whole line.
fn record_kind(text: &[u8]) -> Result<Option<Cow<'_, str>>, serde_json::Error> {
    const PREFIX: &[u8] = b"{\"type\":\"";
    if let Some(rest) = text.strip_prefix(PREFIX) {
        if let Some(end) = rest.iter().position(|&b| b == b'"' || b == b'\\') {
            if rest[end] == b'"' {
                if let Ok(kind) = std::str::from_utf8(&rest[..end]) {
                    return Ok(Some(Cow::Borrowed(kind)));
                }
            }
        }
    }
    serde_json::from_slice::<TypeProbe>(text).map(|p| p.kind)
}

enum Line {
    Eof,
    /// A line; `complete` is false for a last line without its newline.
    Read {
        complete: bool,
    },
    TooLong,
}

/// Reads records from a buffered source, checking that the stream starts with a compatible
/// header, skipping record types the caller does not use, and refusing input of the wrong kind.
pub struct RecordReader<R> {
    inner: R,
    source_name: String,
    line: usize,
    buf: Vec<u8>,
    seen_header: bool,
    headerless: bool,
    keep: u32,
    reject: u32,
    wanted: &'static str,
    max_line: usize,
    truncated_tail: Option<usize>,
}

impl<R: BufRead> RecordReader<R> {
    /// Wraps `inner`; `source_name` names the stream in error messages (`<stdin>`, a path).
    /// It returns every known record type until [`keep`](Self::keep) narrows that.
    pub fn new(inner: R, source_name: impl Into<String>) -> Self {
        Self {
            inner,
            source_name: source_name.into(),
            line: 0,
            buf: Vec::with_capacity(4096),
            seen_header: false,
            headerless: false,
            keep: u32::MAX,
            reject: 0,
            wanted: "",
            max_line: MAX_LINE_BYTES,
            truncated_tail: None,
        }
    }

    /// Returns only headers and records of these types; other lines are skipped after their
    /// type is read, without parsing the rest.
    pub fn keep(mut self, types: &[RecordType]) -> Self {
        self.keep = RecordType::Header.bit() | types.iter().fold(0, |m, t| m | t.bit());
        self
    }

    /// Refuses input holding records of these types, saying it is not `wanted` (e.g. "a
    /// schedule (what arrivals writes)") and naming the tool that reads what it found.
    pub fn reject(mut self, types: &[RecordType], wanted: &'static str) -> Self {
        self.reject = types.iter().fold(0, |m, t| m | t.bit());
        self.wanted = wanted;
        self
    }

    /// Accepts a stream that does not start with a header, e.g. summary lines picked out of a
    /// stream with `jq`.
    pub fn headerless(mut self) -> Self {
        self.headerless = true;
        self
    }

    /// Sets the longest line accepted.
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line = max;
        self
    }

    /// The line number of the record last returned (1-based).
    pub fn line(&self) -> usize {
        self.line
    }

    /// The name given to this stream in messages.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The line number of a cut-off last line that was dropped, once the stream has ended.
    pub fn truncated_tail(&self) -> Option<usize> {
        self.truncated_tail
    }

    /// Reads the header that must open the stream.
    pub fn read_header(&mut self) -> Result<Header, ReadError> {
        let first = self.next_record()?;
        self.header_of(first)
    }

    /// Reads the header that must open the stream, or `None` when the stream holds no record
    /// at all: a reader of several inputs can pass over an empty one (a part whose host never
    /// started) with a warning.
    pub fn read_header_or_empty(&mut self) -> Result<Option<Header>, ReadError> {
        match self.next_record()? {
            None => Ok(None),
            first => self.header_of(first).map(Some),
        }
    }

    /// The header `first` must be, or the error that says what it is instead.
    fn header_of(&self, first: Option<Record>) -> Result<Header, ReadError> {
        match first {
            Some(Record::Header(h)) => Ok(h),
            Some(other) => Err(ReadError::NoHeader {
                source_name: self.source_name.clone(),
                message: format!("expected a header record, found \"{}\"", other.type_name()),
            }),
            None => Err(ReadError::NoHeader {
                source_name: self.source_name.clone(),
                message: "empty input: expected a stream starting with a header record".into(),
            }),
        }
    }

    /// The next record the caller keeps, or `None` at the end of the stream. Blank lines,
    /// records of unknown type and records not kept are skipped; the first record must be a
    /// header unless the reader is [`headerless`](Self::headerless).
    pub fn next_record(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            let complete = match self.read_line()? {
                Line::Eof => return Ok(None),
                Line::TooLong => {
                    return Err(ReadError::line_too_long(
                        self.source_name.clone(),
                        self.line,
                        self.max_line,
                    ))
                }
                Line::Read { complete } => complete,
            };
            match self.parse_line() {
                Ok(Some(record)) => return Ok(Some(record)),
                Ok(None) => continue,
                Err(ReadError::Malformed { .. }) if !complete => {
                    self.truncated_tail = Some(self.line);
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads one line into `buf` without its terminator, never holding more than the cap.
    fn read_line(&mut self) -> Result<Line, ReadError> {
        self.buf.clear();
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    return Err(ReadError::Io {
                        source_name: self.source_name.clone(),
                        error,
                    })
                }
            };
            if available.is_empty() {
                if self.buf.is_empty() {
                    return Ok(Line::Eof);
                }
                self.line += 1;
                return Ok(Line::Read { complete: false });
            }
            let (take, found) = match memchr::memchr(b'\n', available) {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            if self.buf.len() + take > self.max_line {
                self.line += 1;
                return Ok(Line::TooLong);
            }
            self.buf.extend_from_slice(&available[..take]);
            self.inner.consume(take + usize::from(found));
            if found {
                self.line += 1;
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
                return Ok(Line::Read { complete: true });
            }
        }
    }

    /// Parses the line in `buf`: `None` for a line to skip.
    fn parse_line(&mut self) -> Result<Option<Record>, ReadError> {
        let text = &self.buf[..];
        if text.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let kind = match record_kind(text) {
            Ok(Some(kind)) => kind,
            Ok(None) => return Err(self.malformed("missing field \"type\"".into())),
            Err(e) => return Err(self.malformed(describe_json_error(&e, None))),
        };
        let record_type = RecordType::from_name(&kind);
        if !self.seen_header && !self.headerless && record_type != Some(RecordType::Header) {
            return Err(ReadError::NoHeader {
                source_name: self.source_name.clone(),
                message: format!(
                    "line {}: expected a header record first, found type \"{kind}\" (is this a tokenpipe stream?)",
                    self.line
                ),
            });
        }
        let Some(record_type) = record_type else {
            return Ok(None);
        };
        if self.reject & record_type.bit() != 0 {
            return Err(ReadError::WrongInput {
                source_name: self.source_name.clone(),
                line: self.line,
                wanted: self.wanted,
                found: record_type,
            });
        }
        if self.keep & record_type.bit() == 0 {
            return Ok(None);
        }
        // fire's own lines first, by hand; anything else (and every error) through serde.
        if let Some(record) = fast::parse(record_type, text) {
            return Ok(Some(record));
        }
        let record = match serde_json::from_slice::<Record>(text) {
            Ok(r) => r,
            Err(e) => return Err(self.malformed(record_type.field_error(text, &e))),
        };
        if let Record::Header(h) = &record {
            if h.format_major > FORMAT_MAJOR {
                return Err(ReadError::Version {
                    source_name: self.source_name.clone(),
                    line: self.line,
                    found: h.format_major,
                    supported: FORMAT_MAJOR,
                });
            }
            self.seen_header = true;
        }
        Ok(Some(record))
    }

    fn malformed(&self, message: String) -> ReadError {
        ReadError::Malformed {
            source_name: self.source_name.clone(),
            line: self.line,
            message,
        }
    }
}

mod fast;

#[cfg(test)]
mod tests;
