//! Model discovery: `GET {url}/models` before the run, for the `model` field of every request.
//! Any failure is a warning, not an error: requests then go without a model name, which servers
//! with one model accept (and `--model` avoids the question).

use crate::exchange::{error_chain, HttpClient};
use http_body_util::BodyExt;
use hyper::header::HeaderValue;
use hyper::Uri;
use std::time::Duration;

/// How long discovery may take.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks the server which model it serves; `None` (with a warning) if it cannot tell us.
pub async fn model(client: &HttpClient, models: Uri, auth: Option<&HeaderValue>) -> Option<String> {
    let problem = match tokio::time::timeout(DISCOVERY_TIMEOUT, ask(client, &models, auth)).await {
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
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    v.pointer("/data/0/id")
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .ok_or_else(|| "no model listed".to_string())
}
