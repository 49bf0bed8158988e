//! Model discovery: `GET {url}/models` before the run, for the `model` field of every request.
//!
//! Bounded by design: the answer is read whole but capped at [`MAX_MODELS_BYTES`], the whole
//! exchange at [`DISCOVERY_TIMEOUT`], and a stop (Ctrl-C, SIGTERM) abandons it at once. Any
//! failure is a warning, not an error: requests then go without a model name, which servers
//! with one model accept (and `--model` avoids the question).

use crate::exchange::error_chain;
use crate::http::HttpClient;
use crate::stop::Stop;
use http_body_util::BodyExt;
use hyper::header::HeaderValue;
use hyper::Uri;
use std::time::Duration;

/// The most of a model list read: thousands of models' entries.
pub const MAX_MODELS_BYTES: usize = 1 << 20;
/// How long discovery may take.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks the server which model it serves; `None` (with a warning, unless the run was stopped)
/// if it cannot tell us.
pub async fn model(
    client: &HttpClient,
    models: Uri,
    auth: Option<&HeaderValue>,
    stop: &Stop,
) -> Option<String> {
    let found = tokio::select! {
        r = tokio::time::timeout(DISCOVERY_TIMEOUT, ask(client, &models, auth)) => r,
        _ = stop.stopped() => return None,
    };
    let problem = match found {
        Ok(Ok(m)) => return Some(m),
        Ok(Err(e)) => e,
        Err(_) => "timed out".to_string(),
    };
    eprintln!("fire: warning: GET {models}: {problem}; sending requests without a model name (use --model)");
    None
}

async fn ask(
    client: &HttpClient,
    models: &Uri,
    auth: Option<&HeaderValue>,
) -> Result<String, String> {
    let mut req = hyper::Request::get(models.clone());
    if let Some(auth) = auth {
        req = req.header(hyper::header::AUTHORIZATION, auth.clone());
    }
    let req = req
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .map_err(|e| e.to_string())?;
    let resp = client.request(req).await.map_err(|e| error_chain(&e))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let mut body = resp.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| error_chain(&e))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_MODELS_BYTES {
                return Err(format!(
                    "the model list is larger than {} MiB, the most fire reads",
                    MAX_MODELS_BYTES >> 20
                ));
            }
            bytes.extend_from_slice(&data);
        }
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    v.pointer("/data/0/id")
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .ok_or_else(|| "no model listed".to_string())
}
