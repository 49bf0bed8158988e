//! Direct HTTP/1.1 connections, each driven by the request task that uses it.
//!
//! hyper-util's legacy pool spawns one task per connection, which decodes every frame and hands
//! it to the request task through hyper's body channel: two task wake-ups per token. Here the
//! request task holds the connection itself ([`Lease`]) and polls it together with whatever it
//! waits on (the response head, the next body frame): one task per request, and a task that
//! finds a whole read of events takes them all in one poll. hyper's body channel stays (its
//! dispatcher hands every frame over it, whoever polls), and taking a frame from it wakes the
//! connection's poller, which is this task: the connection is polled with a waker that holds
//! that wake back ([`super::gate`]), since the task polls the connection again anyway. So a
//! token costs one wake-up below saturation, and with thousands of streams on one network
//! thread half the CPU of the legacy client (BENCHMARKS.md). A connection whose response was
//! read to its end goes back to [`DirectPool`] for the next request; one dropped half-way (a
//! failure, a cancel) is closed with it.

use super::connector::{Connector, Stream};
use super::gate::GateWaker;
use crate::sync::lock;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Frame, Incoming};
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper::header::{HeaderValue, HOST};
use hyper::Uri;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use tower_service::Service as _;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One open HTTP/1.1 connection: the handle requests are sent through, and the connection's
/// own future, which does its reading and writing whenever it is polled.
struct Conn {
    sender: SendRequest<Full<Bytes>>,
    io: Connection<Stream, Full<Bytes>>,
    /// The connection's future finished (closed or failed): it must not be polled again.
    ended: bool,
    /// The waker the connection is polled with: the task's, but for what taking a frame out
    /// of hyper's channel wakes (see [`super::gate`]).
    gate: GateWaker,
}

impl Conn {
    /// Lets the connection read, decode and write, waking `task` when it has more to do; true
    /// once it has ended.
    fn poll_io(&mut self, task: &Waker) -> bool {
        if !self.ended {
            let mut cx = Context::from_waker(self.gate.waker(task));
            if Pin::new(&mut self.io).poll(&mut cx).is_ready() {
                self.ended = true;
            }
        }
        self.ended
    }

    /// [`Conn::take`] with the gate held: the wake it gives the connection (a frame taken
    /// frees hyper's channel) is held back. True beside the result when one was: the caller
    /// then polls the connection again before it waits.
    fn take_held<T>(&self, take: &mut impl FnMut(&mut Context<'_>) -> Poll<T>) -> (Poll<T>, bool) {
        self.gate.held(|| Self::take(take))
    }

    /// Polls `take`, which takes what the connection handed over, with a waker that does
    /// nothing: everything that makes it ready (the head, a frame, the end, an error) happens
    /// inside the connection's poll, which registers the task for the socket, and hyper's
    /// channel would otherwise wake the task again for what it is about to read anyway.
    fn take<T>(take: &mut impl FnMut(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
        take(&mut Context::from_waker(Waker::noop()))
    }
}

/// The idle HTTP/1.1 connections of a run, for requests to take and give back.
pub struct DirectPool {
    connector: Connector,
    builder: http1::Builder,
    /// Boxed so that a connection moves between the pool and a request as one pointer, and
    /// the vector's spare capacity holds pointers, not connections.
    #[allow(clippy::vec_box)]
    idle: Mutex<Vec<Box<Conn>>>,
    max_idle: usize,
}

/// Why a request got no connection.
#[derive(Debug)]
pub enum ConnectError {
    /// Opening the connection failed (TCP, TLS, or the connect limit; see
    /// [`crate::failure::timed_out`]).
    Connect(BoxError),
    /// The connection opened but hyper refused it.
    Handshake(hyper::Error),
}

impl DirectPool {
    /// A pool over `connector` (which also holds the connections opened ahead) that keeps at
    /// most `max_idle` idle connections; each reads `read_buffer` bytes at once.
    pub fn new(connector: Connector, max_idle: usize, read_buffer: usize) -> Self {
        let mut builder = http1::Builder::new();
        builder.read_buf_exact_size(Some(read_buffer));
        Self {
            connector,
            builder,
            idle: Mutex::new(Vec::new()),
            max_idle,
        }
    }

    /// A connection ready to send on to `uri`'s server: an idle one that is still open, or a
    /// new one (its connect bounded by the connector's limit).
    pub async fn lease(&self, uri: &Uri) -> Result<Lease<'_>, ConnectError> {
        while let Some(conn) = self.take_idle() {
            let mut lease = Lease {
                pool: self,
                conn: Some(conn),
                reused: true,
            };
            if lease.ready().await {
                return Ok(lease);
            }
        }
        self.lease_new(uri).await
    }

    /// A new connection to `uri`'s server, whatever is idle.
    pub async fn lease_new(&self, uri: &Uri) -> Result<Lease<'_>, ConnectError> {
        let stream = self
            .connector
            .clone()
            .call(uri.clone())
            .await
            .map_err(ConnectError::Connect)?;
        let (sender, io) = self
            .builder
            .handshake(stream)
            .await
            .map_err(ConnectError::Handshake)?;
        let mut lease = Lease {
            pool: self,
            conn: Some(Box::new(Conn {
                sender,
                io,
                ended: false,
                gate: GateWaker::new(),
            })),
            reused: false,
        };
        // A new connection is ready at once; this only lets hyper say so.
        lease.ready().await;
        Ok(lease)
    }

    fn take_idle(&self) -> Option<Box<Conn>> {
        lock(&self.idle).pop()
    }

    fn give_back(&self, conn: Box<Conn>) {
        let mut idle = lock(&self.idle);
        if idle.len() < self.max_idle {
            idle.push(conn);
        }
    }
}

/// A connection held by one request; dropping it closes the connection, [`Lease::release`]
/// gives it back to the pool.
pub struct Lease<'p> {
    pool: &'p DirectPool,
    /// Boxed: a connection's state is several KiB, and a request task's future would otherwise
    /// carry it (more than once, across its await points).
    conn: Option<Box<Conn>>,
    /// The connection carried an earlier request: the server may have closed it since.
    reused: bool,
}

impl Lease<'_> {
    /// Whether the connection carried an earlier request (it came from the idle pool).
    pub fn reused(&self) -> bool {
        self.reused
    }

    /// Waits until the connection can take a request; false when it closed meanwhile (the
    /// server's idle timeout), and then the lease holds nothing.
    async fn ready(&mut self) -> bool {
        let Some(conn) = &mut self.conn else {
            return false;
        };
        // The connection first: idle, it reads, and so sees a close by the server.
        let ok = std::future::poll_fn(|cx| {
            if conn.poll_io(cx.waker()) {
                return Poll::Ready(false);
            }
            conn.sender.poll_ready(cx).map(|r| r.is_ok())
        })
        .await;
        if !ok {
            self.conn = None;
        }
        ok
    }

    /// Sends `req` (absolute URI) in origin form with a `Host` header, as a proxy-less client
    /// must; the response comes from driving the returned future with [`Lease::drive`].
    pub fn send(
        &mut self,
        mut req: hyper::Request<Full<Bytes>>,
    ) -> impl Future<Output = hyper::Result<hyper::Response<hyper::body::Incoming>>> + 'static {
        let uri = req.uri().clone();
        if let Some(authority) = uri.authority() {
            if !req.headers().contains_key(HOST) {
                if let Ok(host) = HeaderValue::from_str(authority.as_str()) {
                    req.headers_mut().insert(HOST, host);
                }
            }
        }
        if let Some(path) = uri.path_and_query() {
            if let Ok(origin) = Uri::builder().path_and_query(path.clone()).build() {
                *req.uri_mut() = origin;
            }
        }
        let sending = self.conn.as_mut().map(|c| c.sender.send_request(req));
        async move {
            match sending {
                Some(f) => f.await,
                // Never: a lease is handed out holding a connection.
                None => std::future::pending().await,
            }
        }
    }

    /// Polls `fut` and the connection together, in this task, until `fut` is done; `fut`
    /// first, since it may hand the connection something (a request to send).
    pub fn drive<F: Future + Unpin>(&mut self, fut: F) -> Drive<'_, F> {
        Drive {
            conn: self.conn.as_deref_mut(),
            fut,
            fut_first: true,
        }
    }

    /// Gives the connection back to the pool for the next request, once hyper has it idle
    /// again (the response was read to its end).
    pub fn release(mut self) {
        if let Some(mut conn) = self.conn.take() {
            // Let the connection see the end of its response, so that it takes requests again.
            if !conn.poll_io(Waker::noop()) && !conn.sender.is_closed() {
                conn.gate.forget();
                self.pool.give_back(conn);
            }
        }
    }
}

/// A response body's next frame (`fut`) polled together with the connection of `lease`; with no
/// lease (HTTP/2), `fut` alone. The connection is polled first: only its poll hands a frame
/// over (hyper's body channel holds one, and the poll of `fut` right after takes it), so
/// polling `fut` before it would find nothing, twice per token.
///
/// A caller that gets a frame polls a new drive for the next one before it waits, or ends
/// with the body: the connection's poll that taking the frame called for (see `Conn::take_held`)
/// is that drive's first.
pub fn drive<'c, F: Future + Unpin>(lease: Option<&'c mut Lease<'_>>, fut: F) -> Drive<'c, F> {
    Drive {
        conn: lease.and_then(|l| l.conn.as_deref_mut()),
        fut,
        fut_first: false,
    }
}

/// A future polled together with the connection it waits on.
pub struct Drive<'c, F> {
    conn: Option<&'c mut Conn>,
    fut: F,
    /// Poll `fut` before the connection too: it may be ready without it, or hand it work.
    fut_first: bool,
}

impl<F: Future + Unpin> Future for Drive<'_, F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let fut = &mut this.fut;
        poll_driven(this.conn.as_deref_mut(), this.fut_first, cx, |cx| {
            Pin::new(&mut *fut).poll(cx)
        })
    }
}

/// The next frame of the response body `body`, polled together with the connection of `lease`
/// as [`drive`] does (for a caller that polls by hand rather than awaiting a future per frame).
pub fn poll_body(
    lease: Option<&mut Lease<'_>>,
    body: &mut Incoming,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
    let conn = lease.and_then(|l| l.conn.as_deref_mut());
    poll_driven(conn, false, cx, |cx| Pin::new(&mut *body).poll_frame(cx))
}

/// Polls what `take` takes from the connection `conn` (the task's waker in `cx` for the
/// connection, a waker that does nothing for `take`, see [`Conn::take`]) until `take` is
/// ready; with no connection, `take` alone. `take_first`: try `take` before the connection.
fn poll_driven<T>(
    conn: Option<&mut Conn>,
    take_first: bool,
    cx: &mut Context<'_>,
    mut take: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    let Some(conn) = conn.filter(|c| !c.ended) else {
        return take(cx);
    };
    if take_first {
        if let (Poll::Ready(out), missed) = conn.take_held(&mut take) {
            if missed {
                conn.poll_io(cx.waker());
            }
            return Poll::Ready(out);
        }
    }
    loop {
        let ended = conn.poll_io(cx.waker());
        match conn.take_held(&mut take) {
            (Poll::Ready(out), missed) => {
                // A body's caller polls the connection first thing next (see `drive`); a
                // send's may not.
                if missed && take_first {
                    conn.poll_io(cx.waker());
                }
                return Poll::Ready(out);
            }
            // The connection ended without a word for `take` (never, by hyper's channels):
            // wait for it the ordinary way.
            (Poll::Pending, _) if ended => return take(cx),
            // Taking woke the connection: it may have more to hand over.
            (Poll::Pending, true) => continue,
            (Poll::Pending, false) => return Poll::Pending,
        }
    }
}
