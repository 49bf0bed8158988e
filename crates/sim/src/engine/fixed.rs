//! The fixed engine: every request on its own, unaffected by the others. Token k (1-based) is
//! due at `arrival + ttft + (k − 1) · itl`.
//!
//! Every deadline is computed from the same origin, never from the previous wake-up, so a late
//! wake-up delays one token and not all the ones after it. The engine keeps no state: the
//! ticket carries the arrival instant, admission and departure are no-ops.

use super::{Admission, Departure, Due, Engine, Ticket};
use std::time::Duration;

/// `--ttft-ms` and `--itl-ms` as an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    /// From a request's arrival to its first token.
    pub ttft: Duration,
    /// Between consecutive tokens.
    pub itl: Duration,
}

impl Fixed {
    /// The time from arrival to token `k` (1-based; 0 is read as 1).
    pub fn offset(&self, k: u64) -> Duration {
        let gaps = u32::try_from(k.saturating_sub(1)).unwrap_or(u32::MAX);
        self.ttft.saturating_add(self.itl.saturating_mul(gaps))
    }

    /// The instant token `k` of a request that arrived at `arrival_ns` is due; saturates at
    /// `u64::MAX` (never reached) instead of overflowing.
    pub fn deadline_ns(&self, arrival_ns: u64, k: u64) -> u64 {
        let offset = u64::try_from(self.offset(k).as_nanos()).unwrap_or(u64::MAX);
        arrival_ns.saturating_add(offset)
    }
}

impl Engine for Fixed {
    fn admit(&self, admission: &Admission) -> Ticket {
        Ticket {
            slot: 0,
            arrival_ns: admission.arrival_ns,
        }
    }

    fn due(&self, ticket: &Ticket, k: u64, _now_ns: u64) -> Due {
        Due::At(self.deadline_ns(ticket.arrival_ns, k))
    }

    fn depart(&self, _ticket: &Ticket, _why: Departure) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_are_absolute() {
        let f = Fixed {
            ttft: Duration::from_millis(50),
            itl: Duration::from_micros(2_500),
        };
        assert_eq!(f.offset(1), Duration::from_millis(50));
        assert_eq!(f.offset(0), Duration::from_millis(50));
        assert_eq!(f.offset(3), Duration::from_millis(55));
        assert_eq!(f.offset(1001), Duration::from_millis(2_550));
        let ticket = f.admit(&Admission {
            arrival_ns: 1_000,
            prompt_tokens: 7,
            max_tokens: 3,
            prefix_blocks: Vec::new(),
        });
        assert_eq!(f.due(&ticket, 1, 0), Due::At(50_001_000));
        assert_eq!(f.due(&ticket, 3, u64::MAX), Due::At(55_001_000));
        // No overflow panic for absurd counts or origins.
        assert!(f.deadline_ns(1_000, u64::MAX) > f.deadline_ns(1_000, 1001));
        assert_eq!(f.deadline_ns(u64::MAX - 5, 2), u64::MAX);
        f.depart(&ticket, Departure::Finished);
    }
}
