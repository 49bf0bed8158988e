//! When each token of a request is due: `received + ttft + (k − 1) · itl` for token k (1-based).
//!
//! Every deadline is computed from the same origin, never from the previous wake-up, so a late
//! wake-up delays one token and not all the ones after it.

use std::time::Duration;
use tokio::time::Instant;

/// The absolute timetable of one request's tokens.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// When the request body was fully read.
    pub received: Instant,
    /// From `received` to the first token.
    pub ttft: Duration,
    /// Between consecutive tokens.
    pub itl: Duration,
}

/// A deadline that cannot be represented is treated as "a year from the origin": never reached
/// in practice, and no panic on overflow.
const FAR: Duration = Duration::from_secs(365 * 24 * 3600);

impl Schedule {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_are_absolute() {
        let s = Schedule {
            received: Instant::now(),
            ttft: Duration::from_millis(50),
            itl: Duration::from_micros(2_500),
        };
        assert_eq!(s.offset(1), Duration::from_millis(50));
        assert_eq!(s.offset(0), Duration::from_millis(50));
        assert_eq!(s.offset(3), Duration::from_millis(55));
        assert_eq!(s.offset(1001), Duration::from_millis(2_550));
        assert_eq!(s.deadline(3) - s.received, Duration::from_millis(55));
        // No overflow panic for absurd counts.
        let _ = s.deadline(u64::MAX);
    }
}
