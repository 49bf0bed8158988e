//! Reads a stream line by line into typed records, with errors that name the line and field.
//!
//! Each line is parsed twice when it is well-formed: once for its `"type"` (borrowed, no
//! allocation) and once into the typed record. Only a line that fails is parsed a third time,
//! through `serde_path_to_error`, to name the offending field in the message.

use crate::records::{Header, Record};
use crate::FORMAT_MAJOR;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::{self, BufRead};

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
}

impl ReadError {
    /// True when the input itself is at fault (as opposed to an I/O failure).
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, ReadError::Io { .. })
    }
}

#[derive(Deserialize)]
struct TypeProbe<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
}

/// Known record types; lines of any other type are skipped.
const KNOWN_TYPES: &[&str] = &[
    "header", "schedule", "request", "sent", "token", "done", "summary",
];

/// Reads records from a buffered source, checking that the stream starts with a compatible
/// header and skipping unknown record types.
pub struct RecordReader<R> {
    inner: R,
    source_name: String,
    line: usize,
    buf: Vec<u8>,
    seen_header: bool,
}

impl<R: BufRead> RecordReader<R> {
    /// Wraps `inner`; `source_name` names the stream in error messages (`<stdin>`, a path).
    pub fn new(inner: R, source_name: impl Into<String>) -> Self {
        Self {
            inner,
            source_name: source_name.into(),
            line: 0,
            buf: Vec::with_capacity(4096),
            seen_header: false,
        }
    }

    /// The line number of the record last returned (1-based).
    pub fn line(&self) -> usize {
        self.line
    }

    /// The name given to this stream in messages.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Reads the header that must open the stream.
    pub fn read_header(&mut self) -> Result<Header, ReadError> {
        match self.next_record()? {
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

    /// The next known record, or `None` at the end of the stream. Blank lines and records of
    /// unknown type are skipped; the first record must be a header.
    pub fn next_record(&mut self) -> Result<Option<Record>, ReadError> {
        loop {
            self.buf.clear();
            let n = self
                .inner
                .read_until(b'\n', &mut self.buf)
                .map_err(|error| ReadError::Io {
                    source_name: self.source_name.clone(),
                    error,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            let text = trim_line(&self.buf);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let kind = match serde_json::from_slice::<TypeProbe>(text) {
                Ok(probe) => probe.kind,
                Err(e) => return Err(self.malformed(describe_json_error(&e, None))),
            };
            let Some(kind) = kind else {
                return Err(self.malformed("missing field \"type\"".into()));
            };
            if !self.seen_header && kind != "header" {
                return Err(ReadError::NoHeader {
                    source_name: self.source_name.clone(),
                    message: format!(
                        "line {}: expected a header record first, found type \"{kind}\" (is this a tokenpipe stream?)",
                        self.line
                    ),
                });
            }
            if !KNOWN_TYPES.contains(&kind.as_ref()) {
                continue;
            }
            let record = match serde_json::from_slice::<Record>(text) {
                Ok(r) => r,
                Err(_) => return Err(self.malformed(field_error(text))),
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
            return Ok(Some(record));
        }
    }

    fn malformed(&self, message: String) -> ReadError {
        ReadError::Malformed {
            source_name: self.source_name.clone(),
            line: self.line,
            message,
        }
    }
}

fn trim_line(buf: &[u8]) -> &[u8] {
    let mut end = buf.len();
    while end > 0 && (buf[end - 1] == b'\n' || buf[end - 1] == b'\r') {
        end -= 1;
    }
    &buf[..end]
}

/// Re-parses a line that failed, this time tracking the path, and names the field at fault.
/// Internally tagged enums lose the path, so the record body is parsed as its own type.
fn field_error(text: &[u8]) -> String {
    use crate::records::*;
    fn path_error<T: serde::de::DeserializeOwned>(text: &[u8]) -> String {
        let mut de = serde_json::Deserializer::from_slice(text);
        match serde_path_to_error::deserialize::<_, T>(&mut de) {
            Ok(_) => "invalid record".into(),
            Err(e) => {
                let path = e.path().to_string();
                let field = (path != "." && !path.is_empty()).then_some(path);
                describe_json_error(e.inner(), field.as_deref())
            }
        }
    }
    let kind = serde_json::from_slice::<TypeProbe>(text)
        .ok()
        .and_then(|p| p.kind)
        .unwrap_or_default();
    match kind.as_ref() {
        "header" => path_error::<Header>(text),
        "schedule" => path_error::<Schedule>(text),
        "request" => path_error::<Request>(text),
        "sent" => path_error::<Sent>(text),
        "token" => path_error::<Token>(text),
        "done" => path_error::<Done>(text),
        "summary" => path_error::<Summary>(text),
        _ => "invalid record".into(),
    }
}

/// Turns a serde_json error into `field "x": message` without serde_json's own
/// "at line 1 column N" suffix (every record is one line; the column is kept).
fn describe_json_error(e: &serde_json::Error, field: Option<&str>) -> String {
    let full = e.to_string();
    let msg = match full.rfind(" at line ") {
        Some(i) => &full[..i],
        None => full.as_str(),
    };
    let msg = msg.replace('`', "\"");
    match field {
        Some(f) => format!("field \"{f}\": {msg} (column {})", e.column()),
        None => format!("{msg} (column {})", e.column()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::*;

    const HEADER: &str =
        r#"{"type":"header","format_major":1,"tool":"t","tool_version":"0","run_id":"r"}"#;

    fn read_all(text: &str) -> Result<Vec<Record>, ReadError> {
        let mut r = RecordReader::new(text.as_bytes(), "<test>");
        let mut out = vec![];
        while let Some(rec) = r.next_record()? {
            out.push(rec);
        }
        Ok(out)
    }

    #[test]
    fn reads_known_and_skips_unknown() {
        let text = format!(
            "{HEADER}\n\n{{\"type\":\"future\",\"x\":1}}\n{{\"type\":\"token\",\"id\":3,\"at_ns\":10,\"tokens\":1,\"extra\":true}}\n"
        );
        let recs = read_all(&text).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(
            recs[1],
            Record::Token(Token {
                id: 3,
                at_ns: 10,
                tokens: 1
            })
        );
    }

    #[test]
    fn names_line_and_field() {
        let text =
            format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"at_ns\":\"x\",\"tokens\":1}}\n");
        let err = read_all(&text).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("field \"at_ns\""), "{err}");
    }

    #[test]
    fn names_missing_field() {
        let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"tokens\":1}}\n");
        let err = read_all(&text).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("at_ns"), "{err}");
    }

    #[test]
    fn rejects_bad_json_with_line() {
        let text = format!("{HEADER}\n{{\"type\":\"token\",\n");
        let err = read_all(&text).unwrap_err();
        assert!(err.is_bad_input());
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn rejects_newer_major() {
        let err = read_all(
            r#"{"type":"header","format_major":9,"tool":"t","tool_version":"0","run_id":"r"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("major version 9"), "{err}");
    }

    #[test]
    fn requires_header_first() {
        let err = read_all("{\"type\":\"token\",\"id\":1,\"at_ns\":1,\"tokens\":1}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("header"), "{err}");
        let mut r = RecordReader::new(&b""[..], "<test>");
        assert!(r
            .read_header()
            .unwrap_err()
            .to_string()
            .contains("empty input"));
    }

    #[test]
    fn truncated_stream_never_panics() {
        let full = format!(
            "{HEADER}\n{{\"type\":\"done\",\"id\":1,\"at_ns\":5,\"ok\":true,\"events\":2,\"error\":\"a\\\"b\"}}\n"
        );
        for cut in 0..full.len() {
            let _ = read_all(&full[..cut]);
        }
    }
}
