//! The names of the faults simserve can produce and what a request may ask for: the
//! vocabulary that the API layer parses out of a request body and the fault layer
//! ([`crate::fault`]) carries out. It sits below both, so neither imports the other's
//! vocabulary upward.

use serde_json::{Map, Value};
use std::fmt;

/// One way to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Answer this non-2xx status (400 to 599) with an OpenAI-style error body.
    Http(u16),
    /// Close the connection mid-stream without ending the chunked body.
    Reset,
    /// Stop sending mid-stream, keep the connection open.
    Stall,
    /// Send one SSE data event that is not JSON, then go on.
    Garbage,
    /// Send an in-stream error event, then `[DONE]`.
    Error,
    /// End the body cleanly mid-answer, without finish_reason or `[DONE]`.
    Truncate,
    /// End with `[DONE]` but no finish_reason.
    BareDone,
    /// Answer the whole JSON (`application/json`) even to a streaming request, as a server that
    /// ignores `stream: true` does.
    Json,
    /// Answer 200 with an HTML page at once, as a proxy or a login page in front of a server
    /// does.
    Html,
    /// Pause this many ms mid-stream, then go on: a GC pause, a preemption, a congested link.
    StallFor(u64),
    /// Hold the response head back this many ms, as a server slow to answer at all.
    SlowHeaders(u64),
    /// Never end the answer: a runaway generation only the client's timeout stops.
    Endless,
    /// Answer this many tokens whatever `max_tokens` asked, as a server that ignores it.
    Long(u64),
    /// Answer as asked, but leave the request out of `/metrics`: a server whose counters lost
    /// part of the traffic (a restart between two scrapes, a replica the scraper does not
    /// see), so that a client's cross-check of its counts against the server's can be shown to
    /// fail.
    Uncounted,
}

/// The status `http` answers when none is given.
pub const DEFAULT_HTTP_STATUS: u16 = 500;

/// The answer's length `long` gives when no length is named: the 10,000-token answer.
pub const DEFAULT_LONG_TOKENS: u64 = 10_000;

/// The longest answer `long=N` gives (a million tokens, about 6 MB of text when not streamed).
pub const MAX_LONG_TOKENS: u64 = 1_000_000;

/// The longest pause `stall=MS` and `slow-headers=MS` take: one hour.
pub const MAX_PAUSE_MS: u64 = 3_600_000;

/// Every kind's name, for messages and help.
pub const KIND_NAMES: &str = "http[=STATUS], reset, stall[=MS], garbage, error, truncate, \
bare-done, json, html, slow-headers=MS, endless, long[=N], uncounted";

impl FaultKind {
    /// Parses a kind's name, one of [`KIND_NAMES`] (`http=STATUS` takes 400 to 599).
    pub fn parse(name: &str) -> Result<Self, KindError> {
        let kind = match name {
            "http" => FaultKind::Http(DEFAULT_HTTP_STATUS),
            "reset" => FaultKind::Reset,
            "stall" => FaultKind::Stall,
            "garbage" => FaultKind::Garbage,
            "error" => FaultKind::Error,
            "truncate" => FaultKind::Truncate,
            "bare-done" => FaultKind::BareDone,
            "json" => FaultKind::Json,
            "html" => FaultKind::Html,
            "endless" => FaultKind::Endless,
            "long" => FaultKind::Long(DEFAULT_LONG_TOKENS),
            "uncounted" => FaultKind::Uncounted,
            _ => return Self::parse_valued(name),
        };
        Ok(kind)
    }

    /// Parses the kinds that carry a number: `http=STATUS`, `stall=MS`, `slow-headers=MS`,
    /// `long=N`.
    fn parse_valued(name: &str) -> Result<Self, KindError> {
        let unknown = || KindError::Unknown {
            name: name.to_owned(),
        };
        let (kind, value) = name.split_once('=').ok_or_else(unknown)?;
        let number = |lo: u64, hi: u64, what: &'static str| match value.parse::<u64>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(n),
            _ => Err(KindError::OutOfRange {
                name: name.to_owned(),
                what,
                lo,
                hi,
            }),
        };
        Ok(match kind {
            "http" => FaultKind::Http(number(400, 599, "the status")? as u16),
            "stall" => FaultKind::StallFor(number(0, MAX_PAUSE_MS, "MS")?),
            "slow-headers" => FaultKind::SlowHeaders(number(0, MAX_PAUSE_MS, "MS")?),
            "long" => FaultKind::Long(number(1, MAX_LONG_TOKENS, "N")?),
            _ => return Err(unknown()),
        })
    }
}

/// A fault's name that is not one of [`KIND_NAMES`], or whose number is out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    /// No kind has this name.
    #[error("unknown fault `{name}`; expected {KIND_NAMES}")]
    Unknown {
        /// The name as given.
        name: String,
    },
    /// The kind takes a number in `lo..=hi`, and this is not one.
    #[error("`{name}`: {what} must be a number from {lo} to {hi}")]
    OutOfRange {
        /// The name as given.
        name: String,
        /// What the number is (`the status`, `MS`, `N`).
        what: &'static str,
        /// The smallest accepted.
        lo: u64,
        /// The largest accepted.
        hi: u64,
    },
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::Http(status) => write!(f, "http={status}"),
            FaultKind::Reset => f.write_str("reset"),
            FaultKind::Stall => f.write_str("stall"),
            FaultKind::Garbage => f.write_str("garbage"),
            FaultKind::Error => f.write_str("error"),
            FaultKind::Truncate => f.write_str("truncate"),
            FaultKind::BareDone => f.write_str("bare-done"),
            FaultKind::Json => f.write_str("json"),
            FaultKind::Html => f.write_str("html"),
            FaultKind::StallFor(ms) => write!(f, "stall={ms}"),
            FaultKind::SlowHeaders(ms) => write!(f, "slow-headers={ms}"),
            FaultKind::Endless => f.write_str("endless"),
            FaultKind::Long(n) => write!(f, "long={n}"),
            FaultKind::Uncounted => f.write_str("uncounted"),
        }
    }
}

/// The body member that chooses a request's fault.
pub const MEMBER: &str = "tokenpipe_fault";

/// The body member that sets how many tokens a request sends before its fault.
pub const AFTER_MEMBER: &str = "tokenpipe_fault_after";

/// What a request's body asked of the fault layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Asked {
    /// `tokenpipe_fault`.
    pub choice: Choice,
    /// `tokenpipe_fault_after`.
    pub after: Option<u64>,
}

/// The request's own choice of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// No member (or null): the flags decide.
    #[default]
    Flags,
    /// `"none"`: no fault, whatever the flags say.
    Spared,
    /// This fault, whatever the flags say.
    Kind(FaultKind),
}

/// What is wrong with a request body's fault members, for its 400 answer; each names the member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberError {
    /// `tokenpipe_fault` names no kind.
    #[error("'{MEMBER}': {0}, or none")]
    Kind(KindError),
    /// `tokenpipe_fault` is not a string.
    #[error("'{MEMBER}' must be a string ({KIND_NAMES} or none), got {0}")]
    NotString(Value),
    /// `tokenpipe_fault_after` is not an integer from 0 to the most tokens a request may ask.
    #[error("'{AFTER_MEMBER}' must be an integer from 0 to {max}, got {value}")]
    After {
        /// The value given.
        value: Value,
        /// The largest accepted.
        max: u64,
    },
}

/// Reads the two members from a request body; an error names the member at fault.
pub fn asked(obj: &Map<String, Value>, max_after: u64) -> Result<Asked, MemberError> {
    let choice = match obj.get(MEMBER) {
        None | Some(Value::Null) => Choice::Flags,
        Some(Value::String(s)) if s == "none" => Choice::Spared,
        Some(Value::String(s)) => Choice::Kind(FaultKind::parse(s).map_err(MemberError::Kind)?),
        Some(v) => return Err(MemberError::NotString(v.clone())),
    };
    let after = match obj.get(AFTER_MEMBER) {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if n <= max_after => Some(n),
            _ => {
                return Err(MemberError::After {
                    value: v.clone(),
                    max: max_after,
                })
            }
        },
    };
    Ok(Asked { choice, after })
}
