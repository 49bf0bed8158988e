//! A parser for the three lines a run is made of (`token`, `sent`, `done`), written exactly as
//! `fire` writes them: members in fire's order, no whitespace, integers without sign, fraction or
//! exponent, strings without escapes. It reads the bytes in place, allocating only for the
//! strings of a `done`, and is many times faster than serde's internally tagged enum, which
//! buffers every line into an intermediate tree first.
//!
//! Anything else (another member, another order, an escape, a float, a number out of range, a
//! malformed line) gives `None` and the caller parses the line with serde as before, so every
//! accepted line gives the same record serde would, and every error keeps serde's message.

use crate::records::{Done, ErrorKind, Record, RecordType, Sent, Token};
use crate::OrOther;

/// The record on `text` when it has one of fire's hot shapes; `None` means "use serde".
pub(super) fn parse(record_type: RecordType, text: &[u8]) -> Option<Record> {
    let mut c = Cursor { text, at: 0 };
    let record = match record_type {
        RecordType::Token => Record::Token(token(&mut c)?),
        RecordType::Sent => Record::Sent(sent(&mut c)?),
        RecordType::Done => Record::Done(done(&mut c)?),
        _ => return None,
    };
    (c.at == text.len()).then_some(record)
}

fn token(c: &mut Cursor<'_>) -> Option<Token> {
    c.tag(b"{\"type\":\"token\",\"id\":")?;
    let id = c.u64()?;
    c.tag(b",\"at_ns\":")?;
    let at_ns = c.u64()?;
    c.tag(b",\"tokens\":")?;
    let tokens = u32::try_from(c.u64()?).ok()?;
    let empty = if c.tag(b",\"empty\":").is_some() {
        c.bool()?
    } else {
        false
    };
    let reasoning = if c.tag(b",\"reasoning\":").is_some() {
        c.bool()?
    } else {
        false
    };
    c.tag(b"}")?;
    Some(Token {
        id,
        at_ns,
        tokens,
        empty,
        reasoning,
    })
}

fn sent(c: &mut Cursor<'_>) -> Option<Sent> {
    c.tag(b"{\"type\":\"sent\",\"id\":")?;
    let id = c.u64()?;
    let scheduled_ns = if c.tag(b",\"scheduled_ns\":").is_some() {
        c.nullable(Cursor::u64)?
    } else {
        None
    };
    c.tag(b",\"sent_ns\":")?;
    let sent_ns = c.u64()?;
    c.tag(b"}")?;
    Some(Sent {
        id,
        scheduled_ns,
        sent_ns,
    })
}

fn done(c: &mut Cursor<'_>) -> Option<Done> {
    c.tag(b"{\"type\":\"done\",\"id\":")?;
    let id = c.u64()?;
    c.tag(b",\"at_ns\":")?;
    let at_ns = c.u64()?;
    c.tag(b",\"ok\":")?;
    let ok = c.bool()?;
    c.tag(b",\"status\":")?;
    let status = c.nullable(|c| u16::try_from(c.u64()?).ok())?;
    c.tag(b",\"error_kind\":")?;
    let error_kind = c.nullable(|c| c.str().map(error_kind))?;
    c.tag(b",\"error\":")?;
    let error = c.nullable(|c| c.str().map(str::to_owned))?;
    c.tag(b",\"prompt_tokens\":")?;
    let prompt_tokens = c.nullable(Cursor::u64)?;
    c.tag(b",\"completion_tokens\":")?;
    let completion_tokens = c.nullable(Cursor::u64)?;
    c.tag(b",\"events\":")?;
    let events = c.u64()?;
    c.tag(b",\"finish_reason\":")?;
    let finish_reason = c.nullable(|c| c.str().map(str::to_owned))?;
    let first_event_ns = if c.tag(b",\"first_event_ns\":").is_some() {
        c.nullable(Cursor::u64)?
    } else {
        None
    };
    let reasoning_tokens = optional_count(c, b",\"reasoning_tokens\":")?;
    let answer_tokens = optional_count(c, b",\"answer_tokens\":")?;
    let cached_tokens = optional_count(c, b",\"cached_tokens\":")?;
    // `text` and the grouping members (session, turn, batch, tags) are left to serde.
    c.tag(b"}")?;
    Some(Done {
        id,
        at_ns,
        ok,
        status,
        error_kind,
        error,
        prompt_tokens,
        completion_tokens,
        events,
        finish_reason,
        first_event_ns,
        reasoning_tokens,
        answer_tokens,
        cached_tokens,
        ..Done::default()
    })
}

/// A count member that fire writes only when it has a value: `Some(None)` when absent.
fn optional_count(c: &mut Cursor<'_>, tag: &[u8]) -> Option<Option<u64>> {
    if c.tag(tag).is_some() {
        c.nullable(Cursor::u64)
    } else {
        Some(None)
    }
}

/// An error kind as serde reads it: a known wire name, else the string kept as it is.
fn error_kind(name: &str) -> OrOther<ErrorKind> {
    match ErrorKind::ALL.iter().find(|k| k.as_str() == name) {
        Some(&kind) => OrOther::Known(kind),
        None => OrOther::Other(name.to_owned()),
    }
}

/// A position in a line being parsed.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// Steps over `expected` if the line goes on with exactly it.
    fn tag(&mut self, expected: &[u8]) -> Option<()> {
        let rest = self.text.get(self.at..)?;
        rest.starts_with(expected)
            .then(|| self.at += expected.len())
    }

    /// A JSON integer that fits in a `u64`: digits only, no leading zero (JSON forbids it), and
    /// not followed by a fraction or an exponent (the next member or the end must follow).
    fn u64(&mut self) -> Option<u64> {
        let rest = self.text.get(self.at..)?;
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || (digits > 1 && rest[0] == b'0') || digits > 20 {
            return None;
        }
        let mut value: u64 = 0;
        for &b in &rest[..digits] {
            value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        }
        if matches!(rest.get(digits), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        self.at += digits;
        Some(value)
    }

    fn bool(&mut self) -> Option<bool> {
        if self.tag(b"true").is_some() {
            Some(true)
        } else if self.tag(b"false").is_some() {
            Some(false)
        } else {
            None
        }
    }

    /// A string without escapes or control characters, borrowed from the line.
    fn str(&mut self) -> Option<&'a str> {
        self.tag(b"\"")?;
        let rest = self.text.get(self.at..)?;
        let len = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[len] != b'"' {
            return None;
        }
        let s = std::str::from_utf8(&rest[..len]).ok()?;
        self.at += len + 1;
        Some(s)
    }

    /// `null`, or a value `read` accepts. The outer `None` means the line is not a fast shape.
    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.tag(b"null").is_some() {
            Some(None)
        } else {
            read(self).map(Some)
        }
    }
}

#[cfg(test)]
mod tests;
