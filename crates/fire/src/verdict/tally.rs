//! What the failed requests of a run got, counted by status and error kind, so that a run whose
//! every request failed can say why in its last words (`none of the 3 requests sent succeeded:
//! 3 × HTTP 404 Not Found`) instead of leaving the user to dig through the records.

use crate::sync::lock;
use std::sync::Mutex;
use tokenpipe_format::ErrorKind;

/// How many of the most common answers the summary names; the rest are counted together.
const NAMED: usize = 3;

/// What one failed request got: its error kind, and the status it was answered with, if any.
type Got = (ErrorKind, Option<u16>);

/// The failures of a run, counted by what they got, in the order each was first seen. One
/// entry per kind and status, so it stays small however long the run.
#[derive(Debug, Default)]
pub struct Tally(Mutex<Vec<(Got, u64)>>);

impl Tally {
    /// Counts one failure.
    pub fn add(&self, kind: ErrorKind, status: Option<u16>) {
        let mut seen = lock(&self.0);
        match seen.iter_mut().find(|(got, _)| *got == (kind, status)) {
            Some((_, n)) => *n += 1,
            None => seen.push(((kind, status), 1)),
        }
    }

    /// The most common failures, most first (`3 × HTTP 404 Not Found, 1 × connect`), the
    /// others as one count (`and 2 more`); empty when none failed.
    pub fn summary(&self) -> String {
        let mut seen = lock(&self.0).clone();
        // Stable: equal counts keep the order they were first seen in.
        seen.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        let mut parts: Vec<String> = seen
            .iter()
            .take(NAMED)
            .map(|(got, n)| format!("{n} × {}", words(*got)))
            .collect();
        let rest: u64 = seen.iter().skip(NAMED).map(|(_, n)| n).sum();
        if rest > 0 {
            parts.push(format!("and {rest} more"));
        }
        parts.join(", ")
    }
}

/// A failure in words: the status where the server answered with one that says it, else the
/// error kind as records name it.
fn words((kind, status): Got) -> String {
    let status = status.map(|s| {
        let reason = hyper::StatusCode::from_u16(s)
            .ok()
            .and_then(|code| code.canonical_reason());
        match reason {
            Some(reason) => format!("HTTP {s} {reason}"),
            None => format!("HTTP {s}"),
        }
    });
    match (kind, status) {
        (ErrorKind::Http, Some(status)) => status,
        (ErrorKind::NotStream, Some(status)) => format!("{status} but not an event stream"),
        (ErrorKind::NotStream, None) => "not an event stream".into(),
        (kind, _) => kind.as_str().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_named_by_status_and_kind_most_common_first() {
        let t = Tally::default();
        assert_eq!(t.summary(), "");
        t.add(ErrorKind::Connect, None);
        for _ in 0..3 {
            t.add(ErrorKind::Http, Some(404));
        }
        assert_eq!(t.summary(), "3 × HTTP 404 Not Found, 1 × connect");
        t.add(ErrorKind::NotStream, Some(200));
        t.add(ErrorKind::Http, Some(599));
        t.add(ErrorKind::Http, Some(503));
        t.add(ErrorKind::Http, Some(503));
        assert_eq!(
            t.summary(),
            "3 × HTTP 404 Not Found, 2 × HTTP 503 Service Unavailable, 1 × connect, and 2 more"
        );
        let t = Tally::default();
        t.add(ErrorKind::NotStream, Some(200));
        t.add(ErrorKind::Http, Some(599));
        t.add(ErrorKind::Incomplete, Some(200));
        assert_eq!(
            t.summary(),
            "1 × HTTP 200 OK but not an event stream, 1 × HTTP 599, 1 × incomplete"
        );
    }
}
