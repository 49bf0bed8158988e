//! The log of generation requests as they arrive (`--log-requests FILE`): one JSON line per
//! request, `{"request_id": …, "headers": {name: value, …}, "body": <the JSON body as
//! received>}`, so that a test (or a person) can check exactly what a client sent: the messages
//! of a conversation's later turns, a system prompt, token-id prompts.
//!
//! Each line is written whole with one `write` on an unbuffered file as the request's body has
//! been read, so it can be read at once, even while the server runs. A body that is not JSON is
//! logged as a JSON string.

use hyper::HeaderMap;
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

/// The open log file.
pub struct RequestLog {
    out: Mutex<File>,
}

#[derive(Serialize)]
struct Line<'a> {
    request_id: Option<&'a str>,
    headers: BTreeMap<&'a str, &'a str>,
    body: Body<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Body<'a> {
    Json(&'a RawValue),
    Text(std::borrow::Cow<'a, str>),
}

impl RequestLog {
    /// Creates (truncates) the file.
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(Self {
            out: Mutex::new(File::create(path)?),
        })
    }

    /// Appends one request. Header values that are not text are left out; a write error is
    /// reported once on stderr and the log goes on.
    pub fn record(&self, request_id: Option<&str>, headers: &HeaderMap, body: &[u8]) {
        let headers = headers
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)))
            .collect();
        let body = match serde_json::from_slice::<&RawValue>(body) {
            Ok(raw) => Body::Json(raw),
            Err(_) => Body::Text(String::from_utf8_lossy(body)),
        };
        let Ok(mut line) = serde_json::to_vec(&Line {
            request_id,
            headers,
            body,
        }) else {
            return;
        };
        line.push(b'\n');
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = out.write_all(&line) {
            eprintln!("simserve: warning: writing the request log: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_request_with_headers_and_body() {
        let path = std::env::temp_dir().join(format!("simserve-log-{}.ndjson", std::process::id()));
        let log = RequestLog::create(&path).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert("x-request-id", "r1".parse().unwrap());
        log.record(Some("r1"), &headers, br#"{"prompt":"hi","max_tokens":2}"#);
        log.record(None, &HeaderMap::new(), b"not json");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["request_id"], "r1");
        assert_eq!(lines[0]["headers"]["x-request-id"], "r1");
        assert_eq!(lines[0]["body"]["prompt"], "hi");
        assert_eq!(lines[1]["body"], "not json");
        std::fs::remove_file(path).ok();
    }
}
