//! Model discovery: `GET {url}/models` before the run, for the `model` field of every request.
//!
//! Bounded by design: the connection by `--connect-timeout` (the client's connector), the whole
//! exchange by [`DISCOVERY_TIMEOUT`] (or `--timeout` when shorter), the answer read whole but
//! capped at [`MAX_MODELS_BYTES`], and a stop (Ctrl-C, SIGTERM) abandons it at once. A server
//! that cannot be connected to is [`Discovery::Unreachable`]: the caller stops before the run.
//! Any other failure is a warning: requests then go without a model name, which servers with
//! one model accept (and `--model` avoids the question).

use crate::failure::{error_chain, timed_out};
use crate::http::HttpClient;
use crate::stop::Stop;
use http_body_util::BodyExt;
use hyper::header::HeaderMap;
use hyper::Uri;
use std::time::Duration;

/// The most of a model list read: thousands of models' entries.
pub const MAX_MODELS_BYTES: usize = 1 << 20;
/// How long discovery may take.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// What discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// The first model listed.
    Found(String),
    /// The server answered but named no model (a warning was printed).
    Unknown,
    /// No connection could be made: the message says why.
    Unreachable(String),
    /// The run was stopped during discovery.
    Stopped,
}

/// Asks the server which model it serves.
pub async fn model(
    client: &HttpClient,
    models: Uri,
    headers: &HeaderMap,
    limit: Duration,
    stop: &Stop,
) -> Discovery {
    let found = tokio::select! {
        r = tokio::time::timeout(limit.min(DISCOVERY_TIMEOUT), ask(client, &models, headers)) => r,
        _ = stop.stopped() => return Discovery::Stopped,
    };
    let problem = match found {
        Ok(Ok(m)) => return Discovery::Found(m),
        Ok(Err(Problem::Unreachable(e))) => return Discovery::Unreachable(e),
        Ok(Err(Problem::Other(e))) => e,
        Err(_) => "no answer in time".to_string(),
    };
    eprintln!("fire: warning: GET {models}: {problem}; sending requests without a model name (use --model)");
    Discovery::Unknown
}

/// A hint for a 404 when the base URL does not end in `/v1`, the usual mistake.
pub fn v1_hint(base_url: &str) -> Option<String> {
    let base = base_url.trim_end_matches('/');
    (!base.ends_with("/v1")).then(|| format!("did you mean {base}/v1?"))
}

enum Problem {
    Unreachable(String),
    Other(String),
}

async fn ask(client: &HttpClient, models: &Uri, headers: &HeaderMap) -> Result<String, Problem> {
    let other = |e: String| Problem::Other(e);
    let mut req = hyper::Request::get(models.clone())
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .map_err(|e| other(e.to_string()))?;
    req.headers_mut().clone_from(headers);
    let resp = client.request(req).await.map_err(|e| {
        if !e.is_connect() {
            other(error_chain(&e))
        } else if timed_out(&e) {
            Problem::Unreachable("no connection within --connect-timeout".into())
        } else {
            Problem::Unreachable(error_chain(&e))
        }
    })?;
    let status = resp.status();
    if !status.is_success() {
        let base = models.to_string();
        let base = base.trim_end_matches("/models");
        let hint = match (status.as_u16(), v1_hint(base)) {
            (404, Some(h)) => format!(" ({h})"),
            _ => String::new(),
        };
        return Err(other(format!("HTTP {status}{hint}")));
    }
    let mut body = resp.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| other(error_chain(&e)))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_MODELS_BYTES {
                return Err(other(format!(
                    "the model list is larger than {} MiB, the most fire reads",
                    MAX_MODELS_BYTES >> 20
                )));
            }
            bytes.extend_from_slice(&data);
        }
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| other(e.to_string()))?;
    v.pointer("/data/0/id")
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .ok_or_else(|| other("no model listed".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v1_hint_only_when_v1_is_missing() {
        assert_eq!(
            v1_hint("http://h:8000/").as_deref(),
            Some("did you mean http://h:8000/v1?")
        );
        assert_eq!(v1_hint("http://h:8000/v1/"), None);
    }
}
