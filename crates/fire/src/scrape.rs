//! `--server-metrics`: the server's Prometheus `/metrics` read once before the first request and
//! once after the last (or when the run is stopped), each kept as a `server_metrics` record so
//! that `reduce` can set the server's own counts and latencies beside the client's.
//!
//! A scrape is advice: one that fails (no route, no answer in [`SCRAPE_TIMEOUT`], a body past
//! [`MAX_METRICS_BYTES`]) is one warning on stderr and no record, never a failed run. Only the
//! `vllm:` samples are kept ([`tokenpipe_format::parse_exposition`]).

use crate::exchange::error_chain;
use crate::http::HttpClient;
use http_body_util::BodyExt;
use hyper::header::HeaderMap;
use hyper::Uri;
use std::collections::BTreeMap;
use std::time::Duration;
use tokenpipe_format::{parse_exposition, Record, ScrapePhase, ServerMetrics};

/// The longest a scrape may take.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a metrics page read (a real vLLM's is some tens of KiB).
pub const MAX_METRICS_BYTES: usize = 16 << 20;

/// The metrics URL: `given` if not empty, else the base URL without its `/v1`, then `/metrics`
/// (where vLLM serves it).
pub fn metrics_uri(base_url: &str, given: &str) -> anyhow::Result<Uri> {
    let text = if given.is_empty() {
        let base = base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/metrics")
    } else {
        given.to_string()
    };
    if !(text.starts_with("http://") || text.starts_with("https://")) {
        return Err(tokenpipe_cli::bad_input(format!(
            "--server-metrics {text}: expected an http:// or https:// URL"
        )));
    }
    text.parse::<Uri>()
        .map_err(|e| tokenpipe_cli::bad_input(format!("--server-metrics {text}: {e}")))
}

/// Scrapes `uri` and makes the record for `phase`, stamped by `now_ns` once the answer was
/// read; `None` (after one warning on stderr) if the scrape failed.
pub async fn scrape(
    client: &HttpClient,
    uri: &Uri,
    headers: &HeaderMap,
    phase: ScrapePhase,
    now_ns: impl FnOnce() -> u64,
) -> Option<Record> {
    let outcome = match tokio::time::timeout(SCRAPE_TIMEOUT, fetch(client, uri, headers)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("no answer within {} s", SCRAPE_TIMEOUT.as_secs())),
    };
    let which = match phase {
        ScrapePhase::Before => "before",
        ScrapePhase::After => "after",
    };
    match outcome {
        Ok(samples) => Some(Record::ServerMetrics(ServerMetrics {
            at_ns: now_ns(),
            phase,
            url: uri.to_string(),
            samples,
        })),
        Err(problem) => {
            eprintln!(
                "fire: warning: --server-metrics: GET {uri} {which} the run: {problem}; no server_metrics record"
            );
            None
        }
    }
}

async fn fetch(
    client: &HttpClient,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<BTreeMap<String, f64>, String> {
    let mut req = hyper::Request::get(uri.clone())
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .map_err(|e| e.to_string())?;
    req.headers_mut().clone_from(headers);
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
            if bytes.len() + data.len() > MAX_METRICS_BYTES {
                return Err(format!(
                    "the page is larger than {} MiB, the most fire reads",
                    MAX_METRICS_BYTES >> 20
                ));
            }
            bytes.extend_from_slice(&data);
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let samples = parse_exposition(&text, "vllm:");
    if samples.is_empty() {
        return Err("no vllm: metrics on the page".to_string());
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_url_is_the_base_without_v1() {
        let uri = |base: &str, given: &str| metrics_uri(base, given).unwrap().to_string();
        assert_eq!(uri("http://h:8000/v1", ""), "http://h:8000/metrics");
        assert_eq!(uri("http://h:8000/v1/", ""), "http://h:8000/metrics");
        assert_eq!(uri("https://h/api", ""), "https://h/api/metrics");
        assert_eq!(
            uri("http://h:8000/v1", "http://h:9000/metrics"),
            "http://h:9000/metrics"
        );
        assert!(metrics_uri("http://h/v1", "h:9000/metrics").is_err());
    }
}
