//! How simserve speaks on a connection: plain TCP or TLS (`--tls-cert`, `--tls-key`), and
//! HTTP/1.1 or HTTP/2 on either.
//!
//! Every connection is served by hyper-util's `auto` builder, which reads the first bytes: the
//! HTTP/2 preface means HTTP/2 (h2c with prior knowledge on plain TCP, or what ALPN chose over
//! TLS, where `h2` and `http/1.1` are both offered), anything else HTTP/1.1 with keep-alive. One
//! port serves every client. HTTP/2 advertises no limit on concurrent streams, so a client's
//! one connection can carry every request it has in flight; each stream's body is its own task
//! in hyper, and each token's DATA frame is written and flushed as soon as the body yields it,
//! so token timing is the same as on HTTP/1.1.
//!
//! With `--log-connections` ([`TransportOptions::log_connections`]) each accepted connection is one line on stderr, stamped on the
//! monotonic clock that fire's header and the stamps file use, so a test (or a person) can see
//! how many connections a client opened and when.

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokenpipe_format::clock::monotonic_ns;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;

/// How the server speaks on its port, as plain values: TLS or not, and the connection log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransportOptions {
    /// Serve https with these files; plain TCP when `None`.
    pub tls: Option<TlsFiles>,
    /// Print one line on stderr per accepted connection: its number, peer, protocol, and
    /// accept instant on the monotonic clock (the one fire's header and stamps use).
    pub log_connections: bool,
}

/// A PEM certificate chain (the server's certificate first) and its private key (PKCS#8,
/// PKCS#1 or SEC1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key of the chain's first certificate.
    pub key: PathBuf,
}

/// Why the TLS files cannot serve https; each names the file (and the flag that gave it).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate file cannot be read, or is not PEM.
    #[error("{}: --tls-cert", path.display())]
    Cert {
        /// The file.
        path: PathBuf,
        /// What reading it found.
        source: pem::Error,
    },
    /// The certificate file holds no certificate.
    #[error("{}: --tls-cert: no PEM certificate in the file", path.display())]
    NoCert {
        /// The file.
        path: PathBuf,
    },
    /// The key file cannot be read, or holds no PEM private key.
    #[error("{}: --tls-key", path.display())]
    Key {
        /// The file.
        path: PathBuf,
        /// What reading it found.
        source: pem::Error,
    },
    /// rustls refuses its own default protocol versions (a build without them).
    #[error("TLS settings")]
    Settings(#[source] rustls::Error),
    /// The key is not the certificate's, or of a kind rustls cannot sign with.
    #[error("{}: --tls-key does not fit --tls-cert", path.display())]
    Mismatch {
        /// The key file.
        path: PathBuf,
        /// What rustls said.
        source: rustls::Error,
    },
}

/// Any stream hyper can serve: a TCP stream or a TLS stream over one.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// How connections are accepted and served: TLS or not, the HTTP settings, the connection log.
pub struct Transport {
    tls: Option<TlsAcceptor>,
    http: auto::Builder<TokioExecutor>,
    log_connections: bool,
    accepted: AtomicU64,
}

impl Default for Transport {
    fn default() -> Self {
        Self::plain()
    }
}

impl Transport {
    /// Plain TCP: HTTP/1.1, or HTTP/2 with prior knowledge (h2c).
    pub fn plain() -> Self {
        let mut http = auto::Builder::new(TokioExecutor::new());
        http.http1().keep_alive(true);
        // No stream limit: a simulator should not be the reason a client queues requests.
        http.http2().max_concurrent_streams(None);
        Self {
            tls: None,
            http,
            log_connections: false,
            accepted: AtomicU64::new(0),
        }
    }

    /// The transport `options` describe; `Err` names the file that could not be used.
    pub fn from_options(options: &TransportOptions) -> Result<Self, TlsError> {
        let mut transport = Self::plain();
        if let Some(files) = &options.tls {
            transport = transport.with_tls(tls_acceptor(&files.cert, &files.key)?);
        }
        transport.log_connections = options.log_connections;
        Ok(transport)
    }

    /// Serves TLS with `acceptor` (whose ALPN list decides the protocols offered).
    pub fn with_tls(mut self, acceptor: TlsAcceptor) -> Self {
        self.tls = Some(acceptor);
        self
    }

    /// The URL scheme clients use: `https` with TLS, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// Serves one accepted connection with `service` until it closes. A failed TLS handshake
    /// ends the connection (and is logged with --log-connections: a client that does not trust
    /// the certificate is an expected case, not an error of the server).
    pub async fn serve<S, B>(&self, stream: TcpStream, peer: SocketAddr, service: S)
    where
        S: hyper::service::Service<
                hyper::Request<hyper::body::Incoming>,
                Response = hyper::Response<B>,
            > + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let accepted_ns = monotonic_ns();
        let number = self.accepted.fetch_add(1, Ordering::Relaxed) + 1;
        // Each SSE event must leave at once, not wait for the previous one's ACK.
        let _ = stream.set_nodelay(true);
        let (io, protocol): (Box<dyn Io>, String) = match &self.tls {
            None => (Box::new(stream), "plain".into()),
            Some(acceptor) => match acceptor.accept(stream).await {
                Ok(tls) => {
                    let alpn = tls
                        .get_ref()
                        .1
                        .alpn_protocol()
                        .map(|p| String::from_utf8_lossy(p).into_owned());
                    let protocol = format!("tls, alpn {}", alpn.as_deref().unwrap_or("none"));
                    (Box::new(tls), protocol)
                }
                Err(e) => {
                    if self.log_connections {
                        eprintln!(
                            "simserve: connection {number} from {peer} at {accepted_ns} ns: TLS handshake failed: {e}"
                        );
                    }
                    return;
                }
            },
        };
        if self.log_connections {
            eprintln!("simserve: connection {number} from {peer} at {accepted_ns} ns: {protocol}");
        }
        // A client that goes away mid-stream is normal, and so is a simulated reset: nothing to
        // report.
        let _ = self.http.serve_connection(TokioIo::new(io), service).await;
    }
}

/// A TLS acceptor for a PEM certificate chain and key, offering h2 and http/1.1 by ALPN.
pub fn tls_acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, TlsError> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|source| TlsError::Cert {
            path: cert.to_path_buf(),
            source,
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCert {
            path: cert.to_path_buf(),
        });
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsError::Key {
        path: key.to_path_buf(),
        source,
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Settings)?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|source| TlsError::Mismatch {
            path: key.to_path_buf(),
            source,
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
