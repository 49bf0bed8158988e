//! The connector under fire's client: TCP (Nagle off) with TLS where the URL says https, which
//! counts the connections it opens, turns a refused TLS connection into a message that says what
//! to do about it (`refusal`), and hands out connections opened ahead of time ([`Connector::open_ahead`])
//! before it opens new ones.
//!
//! It never hands out a connection to itself: on loopback, a connect to a port in the ephemeral
//! range that nothing listens on can succeed as a TCP "simultaneous open" when the kernel picks
//! that same port as the connection's own, and the request would then read its own bytes. Such
//! a connection ([`Tcp`] sees its local and peer addresses equal) fails to connect instead.

use super::refusal;
use super::tls::Trust;
use crate::sync::lock;
use hyper::Uri;
use hyper_rustls::{HttpsConnector, MaybeHttpsStream};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::net::TcpStream;
use tower_service::Service as _;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a connection is: plain TCP or TLS over it.
pub type Stream = MaybeHttpsStream<TokioIo<TcpStream>>;

/// hyper-util's TCP connector, refusing a connection to itself.
#[derive(Clone)]
pub struct Tcp(pub HttpConnector);

impl tower_service::Service<Uri> for Tcp {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let connecting = self.0.call(dst);
        Box::pin(async move {
            let io = connecting.await?;
            refuse_itself(io.inner())?;
            Ok(io)
        })
    }
}

/// `Err` (connection refused) when `tcp` is connected to itself: nothing listens where it went.
fn refuse_itself(tcp: &TcpStream) -> std::io::Result<()> {
    match (tcp.local_addr(), tcp.peer_addr()) {
        (Ok(local), Ok(peer)) if local == peer => Err(connected_to_itself(peer)),
        _ => Ok(()),
    }
}

/// The error of a connection to itself, naming the address.
fn connected_to_itself(addr: SocketAddr) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!("connected to itself: nothing listens on {addr}"),
    )
}

/// hyper-rustls' connector, counting connections, explaining certificate errors, and keeping
/// the connections opened ahead of time.
#[derive(Clone)]
pub struct Connector {
    inner: HttpsConnector<Tcp>,
    opened: Arc<AtomicU64>,
    /// Connections opened ahead, with where they go; taken before any new one is opened.
    ready: Arc<Mutex<Vec<(Uri, Stream)>>>,
    /// Whom the TLS settings trust, for the remedy a refused certificate's message gives.
    trust: Arc<Trust>,
}

impl Connector {
    /// Wraps `inner`, whose TLS settings trust as `trust` says; every connection it opens adds
    /// one to `opened`.
    pub fn new(inner: HttpsConnector<Tcp>, opened: Arc<AtomicU64>, trust: Trust) -> Self {
        Self {
            inner,
            opened,
            ready: Arc::default(),
            trust: Arc::new(trust),
        }
    }

    /// Opens a connection to `dst` (TCP, and TLS for https) and keeps it for the next request
    /// that needs a new connection. `Err` is the connect's error, explained.
    pub async fn open_ahead(&self, dst: Uri) -> Result<(), BoxError> {
        let mut this = self.clone();
        let stream = this.connect(dst.clone()).await?;
        lock(&self.ready).push((dst, stream));
        Ok(())
    }

    /// A connection opened ahead to `dst` that the server has not closed meanwhile.
    fn take_ready(&self, dst: &Uri) -> Option<Stream> {
        let mut ready = lock(&self.ready);
        while let Some(i) = ready.iter().rposition(|(to, _)| same_origin(to, dst)) {
            let (_, stream) = ready.swap_remove(i);
            if still_open(&stream) {
                return Some(stream);
            }
        }
        None
    }

    fn connect(&mut self, dst: Uri) -> <Self as tower_service::Service<Uri>>::Future {
        let connecting = self.inner.call(dst.clone());
        let opened = self.opened.clone();
        let trust = self.trust.clone();
        Box::pin(async move {
            let stream = connecting
                .await
                .map_err(|e| refusal::explain(e, &dst, &trust))?;
            opened.fetch_add(1, Ordering::Relaxed);
            Ok(stream)
        })
    }
}

fn same_origin(a: &Uri, b: &Uri) -> bool {
    a.scheme() == b.scheme() && a.authority() == b.authority()
}

/// False when the server already closed the connection (an idle timeout while it waited): a
/// look at the socket without reading from it.
fn still_open(stream: &Stream) -> bool {
    let tcp: &TcpStream = match stream {
        MaybeHttpsStream::Http(io) => io.inner(),
        MaybeHttpsStream::Https(io) => io.inner().get_ref().0.inner().inner(),
    };
    let mut byte = [0u8; 1];
    let mut buf = tokio::io::ReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    // Pending: nothing to read, open. Data (a TLS session ticket): open. Zero bytes or an
    // error: closed.
    match tcp.poll_peek(&mut cx, &mut buf) {
        Poll::Pending => true,
        Poll::Ready(Ok(n)) => n > 0,
        Poll::Ready(Err(_)) => false,
    }
}

impl tower_service::Service<Uri> for Connector {
    type Response = Stream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Stream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        match self.take_ready(&dst) {
            Some(stream) => Box::pin(std::future::ready(Ok(stream))),
            None => self.connect(dst),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_connection_to_itself_is_refused() {
        // Connecting a socket to its own bound address is the simultaneous open the kernel can
        // produce by chance; here it is made on purpose.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = socket.local_addr().unwrap();
        let tcp = socket.connect(addr).await.unwrap();
        let e = refuse_itself(&tcp).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
        assert_eq!(
            e.to_string(),
            format!("connected to itself: nothing listens on {addr}")
        );
        // A connection to a listener is another socket's.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let tcp = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        assert!(refuse_itself(&tcp).is_ok());
    }

    #[tokio::test]
    async fn the_tcp_connector_refuses_itself_as_a_connect_failure() {
        let e = connected_to_itself("127.0.0.1:40000".parse().unwrap());
        let boxed: BoxError = Box::new(e);
        let f = crate::failure::not_connected(
            &*boxed,
            &"http://127.0.0.1:40000/v1".parse().unwrap(),
            std::time::Duration::from_secs(1),
        );
        assert_eq!(f.kind, tokenpipe_format::ErrorKind::Connect);
        assert!(f.message.contains("connected to itself"), "{}", f.message);
    }
}
