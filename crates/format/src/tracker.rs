//! The ordering rules of a run's events, checked in one place for every tool that reads them:
//! a request is `sent` once, its `token`s come after its `sent` and never go back in time, and it
//! ends in exactly one `done`, after which nothing more about it may come. A request that was
//! never sent may end in a `done` only when it failed (`not_sent`, `connect`, ...).
//!
//! The tracker holds the caller's own state for each request in flight and hands it back at the
//! `done`, so that memory grows with the requests in flight, not with the run: finished ids are
//! kept as ranges in an [`IdSet`].

use crate::{Done, IdSet, IntMap, Sent, Token};

/// A record that breaks the ordering rules; the message names the request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TrackError(pub String);

struct Entry<S> {
    sent_line: usize,
    sent_ns: u64,
    last_ns: u64,
    state: S,
}

/// Follows each request of one run from `sent` to `done`, with the caller's state `S` for each.
pub struct RequestTracker<S> {
    in_flight: IntMap<u64, Entry<S>>,
    finished: IdSet,
}

impl<S> Default for RequestTracker<S> {
    fn default() -> Self {
        Self {
            in_flight: IntMap::default(),
            finished: IdSet::new(),
        }
    }
}

impl<S> RequestTracker<S> {
    /// A tracker for a run with no records yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A request was sent (`line` is where, for messages); `state` is kept until its `done`.
    pub fn sent(&mut self, s: &Sent, line: usize, state: S) -> Result<(), TrackError> {
        if let Some(prev) = self.in_flight.get(&s.id) {
            return Err(TrackError(format!(
                "request {}: a second sent record (the first is on line {})",
                s.id, prev.sent_line
            )));
        }
        if self.finished.contains(s.id) {
            return Err(TrackError(format!(
                "request {}: sent record after its done",
                s.id
            )));
        }
        self.in_flight.insert(
            s.id,
            Entry {
                sent_line: line,
                sent_ns: s.sent_ns,
                last_ns: s.sent_ns,
                state,
            },
        );
        Ok(())
    }

    /// A token arrived; returns its request's state, after checking that it is in flight and
    /// that the token is not earlier than the request's previous event.
    pub fn token(&mut self, t: &Token) -> Result<&mut S, TrackError> {
        let Some(entry) = self.in_flight.get_mut(&t.id) else {
            return Err(TrackError(if self.finished.contains(t.id) {
                format!("request {}: token record after its done", t.id)
            } else {
                format!(
                    "request {}: token record for a request that was never sent",
                    t.id
                )
            }));
        };
        if t.at_ns < entry.last_ns {
            return Err(TrackError(format!(
                "request {}: token at_ns {} is earlier than the request's previous event ({})",
                t.id, t.at_ns, entry.last_ns
            )));
        }
        entry.last_ns = t.at_ns;
        Ok(&mut entry.state)
    }

    /// A request ended; returns its state, or `None` for a failed request that was never sent.
    pub fn done(&mut self, d: &Done) -> Result<Option<S>, TrackError> {
        if !self.finished.insert(d.id) {
            return Err(TrackError(format!(
                "request {}: a second done record",
                d.id
            )));
        }
        let Some(entry) = self.in_flight.remove(&d.id) else {
            if d.ok {
                return Err(TrackError(format!(
                    "request {}: done record with ok true for a request that was never sent",
                    d.id
                )));
            }
            return Ok(None);
        };
        if d.at_ns < entry.last_ns {
            return Err(TrackError(format!(
                "request {}: done at_ns {} is earlier than the request's previous event ({})",
                d.id, d.at_ns, entry.last_ns
            )));
        }
        // The first event of the response (a role-only chunk included) came between the send
        // and the end.
        if let Some(first) = d.first_event_ns {
            if first < entry.sent_ns {
                return Err(TrackError(format!(
                    "request {}: done first_event_ns {first} is earlier than its sent_ns ({})",
                    d.id, entry.sent_ns
                )));
            }
            if first > d.at_ns {
                return Err(TrackError(format!(
                    "request {}: done first_event_ns {first} is later than its at_ns ({})",
                    d.id, d.at_ns
                )));
            }
        }
        Ok(Some(entry.state))
    }

    /// Requests currently between `sent` and `done`.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Ends the run: the states of requests that never got a `done` (a killed run).
    pub fn into_unfinished(self) -> impl Iterator<Item = (u64, S)> {
        self.in_flight.into_iter().map(|(id, e)| (id, e.state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(id: u64, at: u64) -> Sent {
        Sent {
            id,
            scheduled_ns: None,
            sent_ns: at,
        }
    }

    fn token(id: u64, at: u64) -> Token {
        Token {
            id,
            at_ns: at,
            tokens: 1,
            empty: false,
            reasoning: false,
        }
    }

    fn done(id: u64, at: u64, ok: bool) -> Done {
        Done {
            id,
            at_ns: at,
            ok,
            ..Done::default()
        }
    }

    #[test]
    fn follows_a_request_and_hands_back_its_state() {
        let mut t = RequestTracker::new();
        t.sent(&sent(1, 10), 2, 0u32).unwrap();
        *t.token(&token(1, 20)).unwrap() += 1;
        *t.token(&token(1, 20)).unwrap() += 1;
        assert_eq!(t.in_flight(), 1);
        assert_eq!(t.done(&done(1, 30, true)).unwrap(), Some(2));
        assert_eq!(t.in_flight(), 0);
        // Never sent: only a failure may end it.
        assert_eq!(t.done(&done(2, 30, false)).unwrap(), None);
    }

    #[test]
    fn every_rule_is_enforced() {
        let mut t = RequestTracker::new();
        t.sent(&sent(1, 10), 2, ()).unwrap();
        let msg = |r: Result<(), TrackError>| r.unwrap_err().0;
        assert!(msg(t.sent(&sent(1, 11), 3, ()))
            .contains("second sent record (the first is on line 2)"));
        assert!(msg(t.token(&token(1, 5)).map(|_| ())).contains("earlier than"));
        assert!(msg(t.token(&token(7, 50)).map(|_| ())).contains("never sent"));
        assert!(msg(t.done(&done(1, 9, true)).map(|_| ())).contains("earlier than"));
        let mut t = RequestTracker::new();
        t.sent(&sent(1, 10), 2, ()).unwrap();
        t.done(&done(1, 20, true)).unwrap();
        assert!(msg(t.token(&token(1, 25)).map(|_| ())).contains("after its done"));
        assert!(msg(t.done(&done(1, 25, true)).map(|_| ())).contains("second done"));
        assert!(msg(t.sent(&sent(1, 30), 9, ())).contains("sent record after its done"));
        assert!(msg(t.done(&done(5, 30, true)).map(|_| ())).contains("never sent"));
    }

    #[test]
    fn the_first_event_falls_between_the_send_and_the_end() {
        let with_first = |first: u64| Done {
            first_event_ns: Some(first),
            ..done(1, 30, true)
        };
        let msg = |first: u64| {
            let mut t = RequestTracker::new();
            t.sent(&sent(1, 10), 2, ()).unwrap();
            t.done(&with_first(first)).map(|_| ()).err().map(|e| e.0)
        };
        assert_eq!(msg(10), None);
        assert_eq!(msg(30), None);
        assert_eq!(
            msg(9).unwrap(),
            "request 1: done first_event_ns 9 is earlier than its sent_ns (10)"
        );
        assert_eq!(
            msg(31).unwrap(),
            "request 1: done first_event_ns 31 is later than its at_ns (30)"
        );
    }

    #[test]
    fn unfinished_requests_are_handed_back() {
        let mut t = RequestTracker::new();
        t.sent(&sent(1, 10), 2, "a").unwrap();
        t.sent(&sent(2, 10), 3, "b").unwrap();
        t.done(&done(1, 20, false)).unwrap();
        let left: Vec<_> = t.into_unfinished().collect();
        assert_eq!(left, [(2, "b")]);
    }
}
