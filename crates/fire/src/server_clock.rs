//! This host's clock against the server's, from the `Date` header of the responses
//! (docs/fire/start.md): the bounds on the offset that `reduce` turns into the clock skew
//! between the hosts of a merged run. A `Date` has whole seconds, so one response bounds the
//! offset to a second and a few dozen responses at different fractions of a second narrow it.

use hyper::header::{HeaderMap, DATE};
use std::sync::atomic::{AtomicI64, Ordering};
use tokenpipe_format::clock::{self, RunClock};

const NS: i64 = 1_000_000_000;

/// The offset (server − this host, in ns) bounded by every response seen so far.
pub(crate) struct ServerClock {
    /// The run clock's start on the wall clock, in ns since the Unix epoch.
    anchor_ns: i64,
    lo: AtomicI64,
    hi: AtomicI64,
}

impl ServerClock {
    /// Bounds for a run on `clock`, none yet.
    pub(crate) fn new(clock: &RunClock) -> Self {
        let anchor_ns = clock::parse_rfc3339_ns(&clock.anchor())
            .ok()
            .and_then(|n| i64::try_from(n).ok())
            .unwrap_or(0);
        Self {
            anchor_ns,
            lo: AtomicI64::new(i64::MIN),
            hi: AtomicI64::new(i64::MAX),
        }
    }

    /// Takes one response's `Date` into the bounds: the server stamped it between `send_ns`
    /// and `head_ns` (run times of the send and of the response head) at a time in
    /// `[Date, Date + 1 s)`.
    pub(crate) fn observe(&self, headers: &HeaderMap, send_ns: u64, head_ns: u64) {
        let Some(date) = headers
            .get(DATE)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_imf_fixdate)
        else {
            return;
        };
        let wall = |run_ns: u64| self.anchor_ns.saturating_add(run_ns as i64);
        let server_ns = date.saturating_mul(NS);
        let lo = server_ns.saturating_sub(wall(head_ns));
        let hi = server_ns.saturating_add(NS).saturating_sub(wall(send_ns));
        self.lo.fetch_max(lo, Ordering::Relaxed);
        self.hi.fetch_min(hi, Ordering::Relaxed);
    }

    /// `[lo, hi]` in ms; `None` when no response carried a `Date`, or the bounds contradict
    /// each other (a clock stepped during the run).
    pub(crate) fn bounds_ms(&self) -> Option<[f64; 2]> {
        let (lo, hi) = (
            self.lo.load(Ordering::Relaxed),
            self.hi.load(Ordering::Relaxed),
        );
        (lo != i64::MIN && lo <= hi).then(|| [lo as f64 / 1e6, hi as f64 / 1e6])
    }
}

/// An HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's IMF-fixdate, the only form a
/// server may send) in seconds since the Unix epoch; `None` for anything else.
pub(crate) fn parse_imf_fixdate(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 29 || &b[3..5] != b", " || &b[25..] != b" GMT" {
        return None;
    }
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| text.get(8..11) == Some(*m))? as i64 + 1;
    let (day, year) = (num(5, 2)?, num(12, 4)?);
    let (h, m, s) = (num(17, 2)?, num(20, 2)?, num(23, 2)?);
    if b[7] != b' ' || b[11] != b' ' || b[16] != b' ' || b[19] != b':' || b[22] != b':' {
        return None;
    }
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn http_dates_are_read_and_others_refused() {
        assert_eq!(
            parse_imf_fixdate("Fri, 27 Nov 2026 21:00:00 GMT"),
            Some(1_795_813_200)
        );
        assert_eq!(parse_imf_fixdate("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        for bad in [
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Xyz 1994 08:49:37 GMT",
            "Sun, 36 Nov 1994 08:49:37 GMT",
            "",
        ] {
            assert_eq!(parse_imf_fixdate(bad), None, "{bad}");
        }
    }

    /// A clock started at exactly `anchor_ns` on the wall clock.
    fn at(anchor_ns: i64) -> ServerClock {
        ServerClock {
            anchor_ns,
            lo: AtomicI64::new(i64::MIN),
            hi: AtomicI64::new(i64::MAX),
        }
    }

    fn date(secs: i64) -> HeaderMap {
        let mut h = HeaderMap::new();
        let days = secs.div_euclid(86_400);
        assert_eq!(days, 20_419, "the test's dates are on 2025-11-27");
        let t = secs.rem_euclid(86_400);
        let text = format!(
            "Thu, 27 Nov 2025 {:02}:{:02}:{:02} GMT",
            t / 3600,
            t / 60 % 60,
            t % 60
        );
        h.insert(DATE, HeaderValue::from_str(&text).unwrap());
        h
    }

    #[test]
    fn responses_at_different_fractions_narrow_the_offset() {
        // The server's clock is 2.3 s ahead of this host's; responses take 2 ms.
        let day = 20_419 * 86_400;
        let c = at(day * NS);
        assert_eq!(c.bounds_ms(), None);
        let ahead = 2_300_000_000i64;
        for k in 0..40u64 {
            let send = k * 137_000_000;
            let head = send + 2_000_000;
            let server_at = day * NS + send as i64 + 1_000_000 + ahead;
            c.observe(&date(server_at.div_euclid(NS)), send, head);
        }
        let [lo, hi] = c.bounds_ms().unwrap();
        assert!(lo <= 2300.0 && 2300.0 <= hi, "[{lo}, {hi}]");
        assert!(hi - lo < 200.0, "[{lo}, {hi}] is too wide");
        // No Date, no bounds; a contradiction, none either.
        let none = at(0);
        none.observe(&HeaderMap::new(), 0, 1);
        assert_eq!(none.bounds_ms(), None);
        let stepped = at(day * NS);
        stepped.observe(&date(day), 0, 1_000_000);
        stepped.observe(&date(day + 5), 0, 1_000_000);
        assert_eq!(stepped.bounds_ms(), None);
    }
}
