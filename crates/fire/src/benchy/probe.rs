//! The requests llama-benchy 0.4 sends before its first batch (`client.py`): the two one-token
//! warm-up requests whose usage the adapt step reads, and the three probes whose mean is the
//! network latency its figures subtract. Each is bounded by [`PROBE_TIMEOUT`] and abandoned at
//! once on a stop (Ctrl-C, SIGTERM).

use crate::api::{Api, SEPARATOR};
use crate::failure::error_chain;
use crate::http::HttpClient;
use crate::stop::Stop;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE};
use hyper::Uri;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Longest a warm-up request or a latency probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// The most of an answer read: a one-token answer is far smaller.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// llama-benchy's warm-up text, `"Warmup " * 10`.
pub fn warmup_text() -> String {
    "Warmup ".repeat(10)
}

/// The user message of llama-benchy's system-only probe (`CONTEXT_LOAD_USER_MESSAGE`).
pub const PROBE_USER: &str = ".";

/// Where and how the probes go: the run's client, headers, model and stop.
pub struct Prober<'a> {
    /// The run's client.
    pub client: &'a HttpClient,
    /// The run's headers (`-H`, credentials, `--api-key`).
    pub headers: &'a HeaderMap,
    /// The headers of `GET {url}/models`: the same, with `--url`'s credentials rather than
    /// `--endpoint`'s.
    pub models_headers: &'a HeaderMap,
    /// The model every request names, where known.
    pub model: Option<&'a str>,
    /// The run's stop.
    pub stop: &'a Stop,
}

impl Prober<'_> {
    /// Sends llama-benchy's two warm-up requests to `uri`, where the run's requests go: the
    /// user-only one, then the system-and-probe one, each `max_tokens: 1`, not streamed. On
    /// the chat API they are llama-benchy's messages; on completions (`--api completions`, for
    /// a model without a chat template) the same texts as prompts, the system one joined to
    /// the probe as fire's completions dialect joins them. Gives each answer's
    /// `usage.prompt_tokens` (`None` where it has none); `Err` says why a request failed
    /// (llama-benchy stops then too).
    pub async fn warmup(&self, uri: &Uri, api: Api) -> Result<[Option<u64>; 2], String> {
        let text = warmup_text();
        let inputs = match api {
            Api::Chat => [
                json!({"messages": [{"role": "user", "content": text}]}),
                json!({"messages": [
                    {"role": "system", "content": text},
                    {"role": "user", "content": PROBE_USER},
                ]}),
            ],
            Api::Completions => [
                json!({"prompt": text}),
                json!({"prompt": format!("{text}{SEPARATOR}{PROBE_USER}")}),
            ],
        };
        let mut found = [None, None];
        for (slot, mut body) in found.iter_mut().zip(inputs) {
            body["max_tokens"] = json!(1);
            if let Some(m) = self.model {
                body["model"] = json!(m);
            }
            let (status, answer) = self.exchange(post(uri, &body, self.headers)?).await?;
            if !status.is_success() {
                let text = String::from_utf8_lossy(&answer);
                return Err(format!("HTTP {status}: {}", text.trim()));
            }
            let v: Value = serde_json::from_slice(&answer)
                .map_err(|e| format!("the answer is not JSON: {e}"))?;
            *slot = v.pointer("/usage/prompt_tokens").and_then(Value::as_u64);
        }
        Ok(found)
    }

    /// llama-benchy's `api` latency: three `GET {url}/models`, each timed from the send to the
    /// whole answer read; the mean of those that answered, in ms (`None` when none did, which
    /// llama-benchy counts as 0).
    pub async fn latency_api(&self, models: &Uri) -> Option<f64> {
        let mut taken = vec![];
        for _ in 0..3 {
            let start = Instant::now();
            let req = hyper::Request::get(models.clone()).body(Full::new(Bytes::new()));
            let Ok(mut req) = req else { continue };
            req.headers_mut().clone_from(self.models_headers);
            match self.exchange(req).await {
                Ok(_) => taken.push(start.elapsed()),
                Err(e) => eprintln!("fire: warning: measuring the latency: GET {models}: {e}"),
            }
        }
        mean_ms(&taken)
    }

    /// llama-benchy's `generation` latency: three streamed one-token requests (`hello`, a
    /// chat message or, on completions, the prompt) to `uri`, each timed from the send to the
    /// first piece of its body; the mean in ms.
    pub async fn latency_generation(&self, uri: &Uri, api: Api) -> Option<f64> {
        let mut body = match api {
            Api::Chat => json!({"messages": [{"role": "user", "content": "hello"}]}),
            Api::Completions => json!({"prompt": "hello"}),
        };
        body["max_tokens"] = json!(1);
        body["stream"] = json!(true);
        if let Some(m) = self.model {
            body["model"] = json!(m);
        }
        let mut taken = vec![];
        for _ in 0..3 {
            let start = Instant::now();
            let Ok(req) = post(uri, &body, self.headers) else {
                continue;
            };
            let first = async {
                let resp = self
                    .client
                    .request(req)
                    .await
                    .map_err(|e| error_chain(&e))?;
                let mut body = resp.into_body();
                let mut at = None;
                while let Some(frame) = body.frame().await {
                    let frame = frame.map_err(|e| error_chain(&e))?;
                    if frame.data_ref().is_some_and(|d| !d.is_empty()) && at.is_none() {
                        at = Some(start.elapsed());
                    }
                }
                at.ok_or_else(|| "an empty answer".to_string())
            };
            match self.bounded(first).await {
                Ok(t) => taken.push(t),
                Err(e) => eprintln!("fire: warning: measuring the latency: POST {uri}: {e}"),
            }
        }
        mean_ms(&taken)
    }

    /// Sends `req` and reads its whole answer (at most [`MAX_ANSWER_BYTES`]).
    async fn exchange(
        &self,
        req: hyper::Request<Full<Bytes>>,
    ) -> Result<(hyper::StatusCode, Vec<u8>), String> {
        self.bounded(async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| error_chain(&e))?;
            let status = resp.status();
            let mut body = resp.into_body();
            let mut bytes = Vec::new();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| error_chain(&e))?;
                if let Ok(data) = frame.into_data() {
                    if bytes.len() + data.len() > MAX_ANSWER_BYTES {
                        return Err("the answer is larger than 1 MiB".to_string());
                    }
                    bytes.extend_from_slice(&data);
                }
            }
            Ok((status, bytes))
        })
        .await
    }

    /// `work` within [`PROBE_TIMEOUT`], or abandoned on a stop.
    async fn bounded<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, String>>,
    ) -> Result<T, String> {
        tokio::select! {
            r = tokio::time::timeout(PROBE_TIMEOUT, work) => {
                r.map_err(|_| format!("no answer within {} s", PROBE_TIMEOUT.as_secs()))?
            }
            _ = self.stop.stopped() => Err("stopped".to_string()),
        }
    }
}

/// A JSON POST of `body` to `uri` with the run's headers.
fn post(
    uri: &Uri,
    body: &Value,
    headers: &HeaderMap,
) -> Result<hyper::Request<Full<Bytes>>, String> {
    let mut req = hyper::Request::post(uri.clone())
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| e.to_string())?;
    req.headers_mut().clone_from(headers);
    if !req.headers().contains_key(CONTENT_TYPE) {
        req.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    Ok(req)
}

/// The mean of `taken` in ms, as numpy's `mean` of seconds times 1000; `None` when empty.
pub fn mean_ms(taken: &[Duration]) -> Option<f64> {
    if taken.is_empty() {
        return None;
    }
    let sum: f64 = taken.iter().map(Duration::as_secs_f64).sum();
    Some(sum / taken.len() as f64 * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warmup_text_and_the_mean_are_llama_benchys() {
        assert_eq!(warmup_text().split(' ').count(), 11);
        assert!(warmup_text().starts_with("Warmup Warmup ") && warmup_text().ends_with("Warmup "));
        assert_eq!(mean_ms(&[]), None);
        let ms = |m| Duration::from_millis(m);
        let mean = mean_ms(&[ms(1), ms(2), ms(6)]).unwrap();
        assert!((mean - 3.0).abs() < 1e-9, "{mean}");
    }
}
