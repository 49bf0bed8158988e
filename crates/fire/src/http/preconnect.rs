//! Pre-connect: open the run's connections before its clock starts, all at once, so that the
//! first wave of N requests does not wait on N connects (and N TLS handshakes) made in a row by
//! the client's network thread.
//!
//! hyper-util's legacy pool fills only from finished requests, so the connections are opened by
//! requests: `count` concurrent `GET {url}/models` (the model-list route every OpenAI-compatible
//! server has; any answer will do, a 404 included). With an empty pool, each of them starts a
//! connect; a request that is answered early on a connection another one freed leaves its own
//! connect to finish in the background, and every connection ends in the pool, idle and ready.
//! On HTTP/2 one request per connection opens each of them.

use super::HttpClient;
use crate::stop::Stop;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderValue;
use hyper::Uri;
use std::time::{Duration, Instant};

/// How long pre-connecting may take before the run starts anyway.
pub const PRECONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an answer read for the connection to go back to the pool.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// What pre-connecting did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preconnected {
    /// Connections opened (from the connector's count).
    pub opened: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// The first failure, if some requests failed (then fewer connections are ready).
    pub problem: Option<String>,
}

/// Opens `count` connections to the server of `models` with as many concurrent GETs of it (on
/// HTTP/2: one per connection of `client`), then waits for all of them to be back in the pool.
pub async fn preconnect(
    client: &HttpClient,
    models: &Uri,
    auth: Option<&HeaderValue>,
    count: usize,
    stop: &Stop,
) -> Preconnected {
    let started = Instant::now();
    let before = client.connections_opened();
    let count = client.http2_connections().unwrap_or(count);
    let mut tasks = tokio::task::JoinSet::new();
    let mut problem = None;
    for _ in 0..count {
        let mut req = hyper::Request::get(models.clone());
        if let Some(auth) = auth {
            req = req.header(hyper::header::AUTHORIZATION, auth.clone());
        }
        match req.body(Full::new(Bytes::new())) {
            Ok(req) => {
                let answer = client.request(req);
                tasks.spawn(async move {
                    let resp = answer.await.map_err(|e| crate::exchange::error_chain(&e))?;
                    drain(resp.into_body()).await;
                    Ok::<(), String>(())
                });
            }
            Err(e) => {
                problem = Some(e.to_string());
                break;
            }
        }
    }
    let all = async {
        while let Some(done) = tasks.join_next().await {
            if let (None, Ok(Err(e))) = (&problem, done) {
                problem = Some(e);
            }
        }
    };
    let ended = tokio::select! {
        r = tokio::time::timeout(PRECONNECT_TIMEOUT, all) => r.map_err(|_| {
            format!("not done within {} s", PRECONNECT_TIMEOUT.as_secs())
        }),
        _ = stop.stopped() => Err("the run was stopped".to_string()),
    };
    if let Err(e) = ended {
        problem = Some(e);
    }
    Preconnected {
        opened: client.connections_opened() - before,
        elapsed: started.elapsed(),
        problem,
    }
}

/// Reads an answer to its end (up to a limit), which puts its HTTP/1.1 connection back in the
/// pool.
async fn drain(mut body: hyper::body::Incoming) {
    let mut read = 0;
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            read += data.len();
            if read > MAX_ANSWER_BYTES {
                return;
            }
        }
    }
}
