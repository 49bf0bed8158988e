//! One request's timetable: when each of its tokens is due, `received + ttft + (k − 1) · itl`
//! for token k (1-based).
//!
//! Every deadline is computed from the same origin, never from the previous wake-up, so a late
//! wake-up delays one token and not all the ones after it. The origin is held on two clocks
//! read at the same moment: `CLOCK_MONOTONIC` nanoseconds for the precise timer (the same
//! reading as the stamps file's `received_ns`), and a tokio `Instant` for tokio's timer, which
//! follows paused virtual time in tests.

use std::time::Duration;
use tokio::time::Instant;

/// The absolute deadlines of one request's tokens.
#[derive(Debug, Clone, Copy)]
pub struct Timetable {
    /// When the request body was fully read, on tokio's clock.
    pub received: Instant,
    /// The same moment on `CLOCK_MONOTONIC`, in nanoseconds.
    pub received_ns: u64,
    /// From `received` to the first token.
    pub ttft: Duration,
    /// Between consecutive tokens.
    pub itl: Duration,
}

/// A deadline that cannot be represented is treated as "a year from the origin": never reached
/// in practice, and no panic on overflow.
const FAR: Duration = Duration::from_secs(365 * 24 * 3600);

impl Timetable {
    /// The time from `received` to token `k` (1-based; 0 is read as 1).
    pub fn offset(&self, k: u64) -> Duration {
        let gaps = u32::try_from(k.saturating_sub(1)).unwrap_or(u32::MAX);
        self.ttft.saturating_add(self.itl.saturating_mul(gaps))
    }

    /// The instant token `k` (1-based) is due.
    pub fn deadline(&self, k: u64) -> Instant {
        let offset = self.offset(k);
        self.received
            .checked_add(offset)
            .or_else(|| self.received.checked_add(FAR))
            .unwrap_or(self.received)
    }

    /// The `CLOCK_MONOTONIC` nanosecond token `k` (1-based) is due; saturates at `u64::MAX`
    /// (never reached) instead of overflowing.
    pub fn deadline_ns(&self, k: u64) -> u64 {
        let offset = u64::try_from(self.offset(k).as_nanos()).unwrap_or(u64::MAX);
        self.received_ns.saturating_add(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_are_absolute() {
        let s = Timetable {
            received: Instant::now(),
            received_ns: 1_000,
            ttft: Duration::from_millis(50),
            itl: Duration::from_micros(2_500),
        };
        assert_eq!(s.offset(1), Duration::from_millis(50));
        assert_eq!(s.offset(0), Duration::from_millis(50));
        assert_eq!(s.offset(3), Duration::from_millis(55));
        assert_eq!(s.offset(1001), Duration::from_millis(2_550));
        assert_eq!(s.deadline(3) - s.received, Duration::from_millis(55));
        assert_eq!(s.deadline_ns(1), 50_001_000);
        assert_eq!(s.deadline_ns(3), 55_001_000);
        // No overflow panic for absurd counts or origins.
        let _ = s.deadline(u64::MAX);
        assert!(s.deadline_ns(u64::MAX) > s.deadline_ns(1001));
        let late = Timetable {
            received_ns: u64::MAX - 5,
            ..s
        };
        assert_eq!(late.deadline_ns(2), u64::MAX);
    }
}
