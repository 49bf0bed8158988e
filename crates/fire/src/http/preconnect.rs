//! Pre-connect: open the run's connections before its clock starts, all at once, so that the
//! first wave of N requests does not wait on N connects (and N TLS handshakes) made in a row by
//! the client's network thread.
//!
//! The connection pools (HTTP/1.1: [`super::direct`]; HTTP/2: hyper-util's legacy pool) fill only
//! from finished requests, so the connections are not put
//! in the pool: the connector keeps them ([`super::connector::Connector::open_ahead`]) and hands
//! them out when the pool asks it for a new connection, which it does for each request of the
//! first wave. Nothing is sent to the server ahead of the run; it sees N connections accepted.
//! On HTTP/2 the connection preface and settings still go out with the first request.

use super::HttpClient;
use crate::stop::Stop;
use hyper::Uri;
use std::time::{Duration, Instant};

/// How long pre-connecting may take before the run starts anyway.
pub const PRECONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What pre-connecting did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preconnected {
    /// Connections opened.
    pub opened: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// The first failure, if some connects failed (then fewer connections are ready).
    pub problem: Option<String>,
}

/// Opens `count` connections to the server of `uri` at once (on HTTP/2: one per connection of
/// `client`) and keeps them for the run's first requests.
pub async fn preconnect(client: &HttpClient, uri: &Uri, count: usize, stop: &Stop) -> Preconnected {
    let started = Instant::now();
    let before = client.connections_opened();
    let count = client.http2_connections().unwrap_or(count);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..count {
        let connector = client.connector.clone();
        let uri = uri.clone();
        tasks.spawn(async move { connector.open_ahead(uri).await });
    }
    let mut problem = None;
    let all = async {
        while let Some(done) = tasks.join_next().await {
            if let (None, Ok(Err(e))) = (&problem, done) {
                problem = Some(crate::failure::error_chain(&*e));
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
