//! fire's HTTP client: how it connects (TCP with Nagle off; TLS through rustls for https),
//! which protocol it speaks (HTTP/1.1, or HTTP/2 with `--http2`), how many connections it keeps,
//! and the pre-connect that opens them before the run's clock starts. docs/fire/transport.md
//! says the same for users.
//!
//! HTTP/1.1 carries one request at a time per connection, so a run opens as many connections
//! as it has requests in flight; the pool keeps at most that many idle ones (the closed loop's
//! N or the open loop's cap; unbounded for an uncapped open loop). HTTP/2 multiplexes: each of
//! the `connections` clients below holds exactly one connection (hyper-util's legacy pool opens
//! one per host for HTTP/2 and makes the others wait for it), and requests go to them in turn.
//!
//! HTTP/1.1 requests go through [`direct::DirectPool`], whose connections are driven by the
//! request task itself (no connection task, no hand-over per frame); the legacy client serves
//! HTTP/2 and the model discovery's one GET.
//!
//! Modules: [`tls`] (trust), [`connector`] (counting), [`refusal`] (TLS errors in words),
//! [`preconnect`], [`direct`].

mod connector;
pub mod direct;
mod gate;
pub mod preconnect;
mod refusal;
mod tls;
mod transport;

use bytes::Bytes;
use connector::Connector;
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::{Client, ResponseFuture};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use tls::Trust;
pub use transport::Transport;

/// How fire connects, decided from the flags and the schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Whose certificates are trusted over https.
    pub trust: Trust,
    /// Speak HTTP/2 only: h2c with prior knowledge on http://, ALPN `h2` on https://.
    pub http2: bool,
    /// HTTP/2 connections, requests spread over them in turn (1 for HTTP/1.1: unused).
    pub connections: usize,
    /// The most idle HTTP/1.1 connections kept: as many as can be in flight.
    pub max_idle: usize,
    /// The URL is https: load trust roots.
    pub https: bool,
    /// The longest a TCP connect may take (error kind `connect_timeout`).
    pub connect_timeout: Option<std::time::Duration>,
}

type Inner = Client<Connector, Full<Bytes>>;

/// Bytes each HTTP/1.1 connection reads at once, and the largest response head it accepts.
/// hyper's adaptive default starts at 8 KiB per connection and grows when reads fill it; a
/// streamed chunk is 200–400 bytes, so 4 KiB still takes a dozen events per read when the client
/// runs behind, and is the lever on memory per stream at 10,000 streams. Response heads of
/// inference servers are a few hundred bytes.
const READ_BUFFER: usize = 4096;

/// The client every request of a run goes through.
pub struct HttpClient {
    clients: Vec<Inner>,
    /// The connector all clients share, which keeps the connections opened ahead.
    connector: Connector,
    next: AtomicUsize,
    opened: Arc<AtomicU64>,
    http2: bool,
    /// HTTP/1.1 only: the connections request tasks drive themselves.
    direct: Option<direct::DirectPool>,
}

impl HttpClient {
    /// Builds the client; `Err` is bad input (an unreadable CA file, a system without roots).
    pub fn new(options: &Options) -> Result<Self, crate::error::Error> {
        let tls = tls::client_config(&options.trust, options.https)?;
        let mut tcp = HttpConnector::new();
        tcp.set_nodelay(true);
        tcp.enforce_http(false);
        tcp.set_connect_timeout(options.connect_timeout);
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http();
        // HTTP/1.1 sends no ALPN; --http2 offers `h2` alone, so that a server without it fails
        // the handshake instead of quietly measuring HTTP/1.1.
        let https = if options.http2 {
            builder.enable_http2().wrap_connector(connector::Tcp(tcp))
        } else {
            builder.enable_http1().wrap_connector(connector::Tcp(tcp))
        };
        let opened = Arc::new(AtomicU64::new(0));
        let connector = Connector::new(https, opened.clone(), options.trust.clone());
        let count = if options.http2 {
            options.connections.max(1)
        } else {
            1
        };
        let clients = (0..count)
            .map(|_| {
                let mut b = Client::builder(TokioExecutor::new());
                b.pool_timer(TokioTimer::new())
                    .timer(TokioTimer::new())
                    .pool_max_idle_per_host(options.max_idle)
                    .pool_idle_timeout(Duration::from_secs(90))
                    .http1_read_buf_exact_size(READ_BUFFER)
                    .http2_only(options.http2);
                b.build(connector.clone())
            })
            .collect();
        let direct = (!options.http2)
            .then(|| direct::DirectPool::new(connector.clone(), options.max_idle, READ_BUFFER));
        Ok(Self {
            clients,
            direct,
            connector,
            next: AtomicUsize::new(0),
            opened,
            http2: options.http2,
        })
    }

    /// Sends `req` on a pooled connection (HTTP/2: on the next connection in turn).
    pub fn request(&self, req: hyper::Request<Full<Bytes>>) -> ResponseFuture {
        let i = if self.clients.len() == 1 {
            0
        } else {
            self.next.fetch_add(1, Ordering::Relaxed) % self.clients.len()
        };
        self.clients[i].request(req)
    }

    /// The pool of connections a request drives itself (HTTP/1.1), or `None` where requests
    /// go through [`HttpClient::request`] (HTTP/2).
    pub fn direct(&self) -> Option<&direct::DirectPool> {
        self.direct.as_ref()
    }

    /// Opens a connection to the server of `uri` and keeps it for the next request that needs
    /// one: whether the server can be reached now (`--retry-connect` asks while it waits).
    /// `Err` is why not, in words.
    pub async fn probe(&self, uri: &hyper::Uri) -> Result<(), String> {
        self.connector
            .open_ahead(uri.clone())
            .await
            .map_err(|e| crate::failure::error_chain(&*e))
    }

    /// Connections opened so far (TCP connects that succeeded, TLS handshakes included).
    pub fn connections_opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// The HTTP/2 connections (one per client), or `None` on HTTP/1.1.
    pub fn http2_connections(&self) -> Option<usize> {
        self.http2.then_some(self.clients.len())
    }
}
