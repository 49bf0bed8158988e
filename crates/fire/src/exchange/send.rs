//! Sending a request, up to its response head, over either transport: HTTP/1.1 on a connection
//! the request task drives itself (`http::direct`), sent once more on a new connection when a
//! reused one turns out closed, or hyper's pooled client (HTTP/2). A connection that could not
//! be had fails the same way on both (`failure::not_connected`); what the answer says is
//! `read`'s.

use super::Ctx;
use crate::failure::{closed_unanswered, error_chain, not_connected, Failure};
use crate::http::direct::{self, DirectPool, Lease};
use crate::limits::Watch;
use crate::stop::StopReason;
use crate::verdict::Backoff;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokenpipe_format::ErrorKind;

/// The `x-request-id` of a request: a UUID-shaped string whose first 16 hex digits identify
/// the run and last 16 the request id (some servers accept only UUIDs here).
pub fn request_uuid(run_hash: u64, id: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        run_hash >> 32,
        (run_hash >> 16) & 0xffff,
        run_hash & 0xffff,
        id >> 48,
        id & 0xffff_ffff_ffff
    )
}

/// The POST of request `id`: the run's headers with the request's own over them, a JSON
/// content type unless one was given, and its `x-request-id`.
pub(super) fn request(
    ctx: &Ctx,
    body: Bytes,
    own_headers: Vec<(HeaderName, HeaderValue)>,
    id: u64,
) -> Result<hyper::Request<Full<Bytes>>, Failure> {
    let mut req = hyper::Request::post(ctx.uri.clone())
        .body(Full::new(body))
        .map_err(|e| Failure::new(ErrorKind::Connect, e.to_string()))?;
    let headers = req.headers_mut();
    headers.clone_from(&ctx.headers);
    for (name, value) in own_headers {
        headers.insert(name, value);
    }
    if !headers.contains_key(CONTENT_TYPE) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if let Ok(id) = HeaderValue::from_str(&request_uuid(ctx.run_hash, id)) {
        headers.insert("x-request-id", id);
    }
    Ok(req)
}

/// Sends `req` and waits for the response head, within the limits of `watch`: over HTTP/1.1
/// with the connection it came on, which the body must be read through, or through the pooled
/// client (HTTP/2) with none.
pub(super) async fn send<'c>(
    ctx: &'c Ctx,
    watch: &mut Watch,
    req: hyper::Request<Full<Bytes>>,
) -> Result<(Option<Lease<'c>>, hyper::Response<Incoming>), Failure> {
    match ctx.client.direct() {
        Some(pool) => {
            let (lease, resp) = send_direct(ctx, pool, watch, req).await?;
            Ok((Some(lease), resp))
        }
        None => {
            let resp = watch
                .wait(false, ctx.client.request(req))
                .await?
                .map_err(|e| connect_failure(ctx, &e))?;
            Ok((None, resp))
        }
    }
}

/// Sends `req` on a pooled HTTP/1.1 connection and waits for the response head.
///
/// A kept-alive connection can be closed by the server just as a request is written on it: the
/// server advertised keep-alive but closes after each streamed response (llama.cpp's
/// `llama-server` does, docs/real-engines.md), and its close had not reached us when the
/// connection was taken from the pool. Such a request was never read, so when a reused
/// connection closes before any byte of an answer, the request is sent once more on a new
/// connection; its `sent_ns` stays the first attempt's, so the reconnect counts in its latency.
/// A server that did read it and then closed (it crashed, say) gets it twice; the end-of-run
/// line counts the requests sent again, so neither case passes unseen.
async fn send_direct<'p>(
    ctx: &Ctx,
    pool: &'p DirectPool,
    watch: &mut Watch,
    req: hyper::Request<Full<Bytes>>,
) -> Result<(Lease<'p>, hyper::Response<Incoming>), Failure> {
    let mut lease = watch
        .wait(false, pool.lease(&ctx.uri))
        .await?
        .map_err(|e| direct_connect_failure(ctx, e))?;
    let again = lease.reused().then(|| copy_request(&req));
    let sending = Box::pin(lease.send(req));
    let first = watch.wait(false, lease.drive(sending)).await?;
    let req = match (first, again) {
        (Ok(resp), _) => return Ok((lease, resp)),
        (Err(e), Some(again)) if closed_unanswered(&e) => again,
        (Err(e), _) => return Err(Failure::new(ErrorKind::Body, error_chain(&e))),
    };
    drop(lease);
    ctx.live.resent();
    let mut lease = watch
        .wait(false, pool.lease_new(&ctx.uri))
        .await?
        .map_err(|e| direct_connect_failure(ctx, e))?;
    let sending = Box::pin(lease.send(req));
    let resp = watch
        .wait(false, lease.drive(sending))
        .await?
        .map_err(|e| Failure::new(ErrorKind::Body, error_chain(&e)))?;
    Ok((lease, resp))
}

/// A copy of a request whose body is held whole, to send it again.
fn copy_request(req: &hyper::Request<Full<Bytes>>) -> hyper::Request<Full<Bytes>> {
    let mut copy = hyper::Request::new(req.body().clone());
    *copy.method_mut() = req.method().clone();
    *copy.uri_mut() = req.uri().clone();
    *copy.version_mut() = req.version();
    copy.headers_mut().clone_from(req.headers());
    copy
}

/// The failure of a request the client could not send: `connect_timeout` when the connector's
/// limit passed, `connect` for other connection failures, `body` when the connection broke
/// while the request or the response head was in transit.
fn connect_failure(ctx: &Ctx, e: &hyper_util::client::legacy::Error) -> Failure {
    if !e.is_connect() {
        return Failure::new(ErrorKind::Body, error_chain(e));
    }
    not_connected(e, &ctx.uri, ctx.connect_timeout)
}

/// The same classification for a direct HTTP/1.1 connection that could not be had.
fn direct_connect_failure(ctx: &Ctx, e: direct::ConnectError) -> Failure {
    match e {
        direct::ConnectError::Connect(e) => not_connected(&*e, &ctx.uri, ctx.connect_timeout),
        direct::ConnectError::Handshake(e) => Failure::new(ErrorKind::Connect, error_chain(&e)),
    }
}

/// Sending is paused (`--retry-connect`): tries a connection to the server after each of
/// [`Backoff`]'s waits, in a task of its own, and resumes sending when one opens (it is kept
/// for the next request); when none opens within `limit`, stops the run as the connect-failure
/// stop does. A pause that ended otherwise (a request in flight succeeded) ends the wait too.
/// Says on stderr when it starts waiting and how it ended.
pub(super) fn wait_for_server(ctx: &Arc<Ctx>, limit: Duration) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let Some(pause) = ctx.verdict.pause() else {
        return;
    };
    let ctx = ctx.clone();
    crate::live::say(&format!(
        "fire: {} requests failed to connect to {} since the last success; waiting up to {} s for it to come back (--retry-connect)",
        crate::verdict::STOP_AFTER,
        ctx.uri,
        limit.as_secs_f64()
    ));
    runtime.spawn(async move {
        let started = Instant::now();
        for wait in Backoff::new(limit) {
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = ctx.stop.stopped() => return,
            }
            if ctx.verdict.pause() != Some(pause) {
                return;
            }
            let opened = tokio::select! {
                r = ctx.client.probe(&ctx.uri) => r.is_ok(),
                () = ctx.stop.stopped() => return,
            };
            if opened && ctx.verdict.pause() == Some(pause) {
                crate::live::say(&format!(
                    "fire: {} is back after {:.1} s; sending again",
                    ctx.uri,
                    started.elapsed().as_secs_f64()
                ));
                ctx.verdict.resume();
                return;
            }
        }
        if ctx.verdict.pause() != Some(pause) {
            return;
        }
        ctx.verdict.give_up(limit);
        let why = ctx.verdict.not_sent_detail(&ctx.uri.to_string());
        ctx.stop.trigger_because(StopReason::Unreachable, Some(why));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_shape_and_round_trip() {
        let u = request_uuid(0x0123_4567_89ab_cdef, 42);
        assert_eq!(u, "01234567-89ab-cdef-0000-00000000002a");
        let hex: String = u.chars().filter(|c| *c != '-').collect();
        assert_eq!(u64::from_str_radix(&hex[16..], 16).unwrap(), 42);
    }
}
