//! The time limits inside one request, besides the whole-request `--timeout`: the first-token
//! limit (from the send to the first event with content) and the idle limit (silence between
//! two reads of the body, from its first byte on). Each wait of a request (for the response
//! head, for the next body frame) is bounded by whichever of them ends first, so a request that
//! breaks one fails with that limit's own error kind. The connect limit lives in the connector
//! (see `lib.rs`), the whole-request limit in `exchange::run`.

use std::future::Future;
use std::time::Duration;
use tokenpipe_format::ErrorKind;
use tokio::time::Instant;

/// The limits of every request of a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// From the send to the first content event (`--first-token-timeout`); none when off.
    pub first_token: Option<Duration>,
    /// Longest silence between two body reads (`--idle-timeout`); none when off.
    pub idle: Option<Duration>,
}

/// Which limit a wait broke, and how long that limit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expired {
    /// `first_token_timeout` or `idle_timeout`.
    pub kind: ErrorKind,
    /// The limit that passed.
    pub limit: Duration,
}

impl Expired {
    /// The `done.error` message.
    pub fn message(&self) -> String {
        let secs = self.limit.as_secs_f64();
        match self.kind {
            ErrorKind::FirstTokenTimeout => {
                format!("no content within {secs:.3} s of the send (--first-token-timeout)")
            }
            _ => format!("the stream was silent for {secs:.3} s (--idle-timeout)"),
        }
    }
}

/// One request's deadlines as it goes.
#[derive(Debug)]
pub struct Watch {
    limits: Limits,
    first_token_at: Option<Instant>,
    last_read: Option<Instant>,
}

impl Watch {
    /// Starts watching a request sent at `sent`.
    pub fn start(limits: Limits, sent: Instant) -> Self {
        Self {
            limits,
            first_token_at: limits.first_token.map(|d| sent + d),
            last_read: None,
        }
    }

    /// Notes a read of the body: the idle limit counts from here.
    pub fn read(&mut self, at: Instant) {
        self.last_read = Some(at);
    }

    /// The earliest deadline of the next wait, given whether content has come yet.
    fn deadline(&self, content_seen: bool) -> Option<(Instant, Expired)> {
        let first = self
            .first_token_at
            .filter(|_| !content_seen)
            .zip(self.limits.first_token)
            .map(|(at, limit)| {
                let kind = ErrorKind::FirstTokenTimeout;
                (at, Expired { kind, limit })
            });
        let idle = self.last_read.zip(self.limits.idle).map(|(last, limit)| {
            let kind = ErrorKind::IdleTimeout;
            (last + limit, Expired { kind, limit })
        });
        match (first, idle) {
            (Some(f), Some(i)) => Some(if i.0 < f.0 { i } else { f }),
            (f, i) => f.or(i),
        }
    }

    /// Awaits `fut` within the limits that apply now.
    pub async fn wait<F: Future>(&self, content_seen: bool, fut: F) -> Result<F::Output, Expired> {
        match self.deadline(content_seen) {
            None => Ok(fut.await),
            Some((at, expired)) => tokio::time::timeout_at(at, fut).await.map_err(|_| expired),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn each_wait_fails_with_the_limit_that_ends_first() {
        let limits = Limits {
            first_token: Some(Duration::from_millis(500)),
            idle: Some(Duration::from_millis(100)),
        };
        let slow = || tokio::time::sleep(Duration::from_secs(10));
        // Before the first byte only the first-token limit applies.
        let w = Watch::start(limits, Instant::now());
        let e = w.wait(false, slow()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::FirstTokenTimeout);
        assert!(e.message().contains("0.500 s"), "{}", e.message());
        // After a read, the idle limit ends first.
        let mut w = Watch::start(limits, Instant::now());
        w.read(Instant::now());
        let e = w.wait(false, slow()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::IdleTimeout);
        assert!(e.message().contains("0.100 s"), "{}", e.message());
        // Once content came, the first-token limit is done with.
        let relaxed = Limits {
            idle: Some(Duration::from_secs(60)),
            ..limits
        };
        let mut w = Watch::start(relaxed, Instant::now());
        w.read(Instant::now());
        let e = w.wait(false, slow()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::FirstTokenTimeout);
        assert!(w.wait(true, slow()).await.is_ok());
        let off = Watch::start(Limits::default(), Instant::now());
        assert!(off.wait(false, slow()).await.is_ok());
    }
}
