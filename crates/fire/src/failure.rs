//! How a request failed, and the words its `done.error` says it in: the error kind a failure
//! maps to, an error's chain of causes, the checks that tell a connect timeout and a connection
//! closed before its answer from other I/O errors, and a printable excerpt of what a server
//! sent.
//!
//! It lives at the bottom of the crate, below everything that talks to a server: the client
//! (`http`), the requests before the run (`discover`, `scrape`) and the run's own requests
//! (`exchange`) describe errors the same way, so none of them has to reach into another for it.

use crate::limits::Expired;
use hyper::header::HeaderValue;
use hyper::Uri;
use std::error::Error;
use std::time::Duration;
use tokenpipe_format::ErrorKind;

/// Why a request failed: the `error_kind` and `error` of its `done`.
pub struct Failure {
    /// The `done.error_kind`.
    pub kind: ErrorKind,
    /// The `done.error`.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl From<Expired> for Failure {
    fn from(e: Expired) -> Self {
        Failure::new(e.kind, e.message())
    }
}

/// The failure of a connection not made within the connect limit (`--connect-timeout`), which
/// the connector enforces; `uri` names the server it was to.
pub fn connect_timeout(uri: &Uri, limit: Duration) -> Failure {
    Failure::new(
        ErrorKind::ConnectTimeout,
        format!(
            "no connection to {} within {:.3} s (--connect-timeout)",
            uri.authority().map(|a| a.as_str()).unwrap_or_default(),
            limit.as_secs_f64()
        ),
    )
}

/// The failure of a connection that could not be opened: `connect_timeout` when the connect
/// limit passed, `connect` otherwise.
pub fn not_connected(e: &(dyn Error + 'static), uri: &Uri, limit: Duration) -> Failure {
    if timed_out(e) {
        return connect_timeout(uri, limit);
    }
    Failure::new(ErrorKind::Connect, error_chain(e))
}

/// True when an error's cause is an I/O time-out (the connector's connect timeout).
pub fn timed_out(e: &(dyn Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cur = c.source();
    }
    false
}

/// Whether sending failed because the connection closed before the response head: hyper's
/// "closed before message completed" (or a request it could not even start), or the socket
/// reset or broken under the write.
pub fn closed_unanswered(e: &hyper::Error) -> bool {
    if e.is_incomplete_message() || e.is_canceled() || e.is_closed() {
        return true;
    }
    let mut source = Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            return matches!(
                io.kind(),
                K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof
            );
        }
        source = s.source();
    }
    false
}

/// An error and its sources, joined: hyper's top-level messages alone are vague.
pub fn error_chain(e: &dyn Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

/// The `error` of a non-2xx answer: the status, the server's `Retry-After` when it sent one
/// (a rate limiter's or an overloaded server's "come back in N seconds"), and the start of
/// the body.
pub fn http_error_message(
    status: hyper::StatusCode,
    retry_after: Option<&HeaderValue>,
    body: &[u8],
) -> String {
    match retry_after.and_then(|v| v.to_str().ok()) {
        Some(after) => format!(
            "HTTP {status} (retry-after: {}): {}",
            after.trim(),
            snippet(body)
        ),
        None => format!("HTTP {status}: {}", snippet(body)),
    }
}

/// A short, printable excerpt of server bytes for error messages.
pub fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.chars().count() > 300 {
        let cut: String = text.chars().take(300).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_error_names_its_retry_after() {
        let status = hyper::StatusCode::TOO_MANY_REQUESTS;
        let body = br#"{"error":{"message":"slow down"}}"#;
        let m = http_error_message(status, Some(&HeaderValue::from_static("2")), body);
        assert!(
            m.starts_with("HTTP 429 Too Many Requests (retry-after: 2): "),
            "{m}"
        );
        assert!(m.contains("slow down"), "{m}");
        let m = http_error_message(status, None, body);
        assert!(m.starts_with("HTTP 429 Too Many Requests: "), "{m}");
    }
}
