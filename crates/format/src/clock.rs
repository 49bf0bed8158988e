//! Clocks: the monotonic nanosecond clock every `*_ns` field is measured on, and the wall-clock
//! anchor written into headers.
//!
//! `CLOCK_MONOTONIC` is shared by all processes on a host, so two tools (or the simulated server
//! and `fire`) can line up their stamps through the `monotonic_origin_ns` in their headers.

use std::time::{SystemTime, UNIX_EPOCH};

/// Reads `CLOCK_MONOTONIC` in nanoseconds: a vDSO call of a few tens of nanoseconds, cheap
/// enough to stamp every network read.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_MONOTONIC is always available.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// A run's time origin: `now_ns` returns nanoseconds since the run started, the unit of every
/// raw time in the stream.
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    origin_ns: u64,
}

impl RunClock {
    /// Starts the run clock now.
    pub fn start() -> Self {
        Self {
            origin_ns: monotonic_ns(),
        }
    }

    /// The run start on `CLOCK_MONOTONIC`, recorded in the header so that other processes on the
    /// same host can relate their stamps to this run.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// Nanoseconds since the run start.
    pub fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.origin_ns)
    }

    /// Converts a `CLOCK_MONOTONIC` reading into run time (saturating at 0 for earlier readings).
    pub fn to_run_ns(&self, monotonic: u64) -> u64 {
        monotonic.saturating_sub(self.origin_ns)
    }

    /// Converts run time back to `CLOCK_MONOTONIC`, for deadlines measured against the clock.
    pub fn to_monotonic_ns(&self, run_ns: u64) -> u64 {
        self.origin_ns + run_ns
    }
}

/// The current wall-clock time as RFC 3339 in UTC with microseconds, e.g.
/// `2026-11-21T10:57:03.123456Z`.
pub fn rfc3339_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs() as i64, since.subsec_micros())
}

/// Formats seconds since the Unix epoch (plus microseconds) as RFC 3339 UTC.
pub fn rfc3339(secs: i64, micros: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm: days since 1970-01-01 to (year, month, day) in the
/// proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(rfc3339(1_795_000_000, 0), "2026-11-18T11:06:40.000000Z");
    }

    #[test]
    fn run_clock_moves_forward() {
        let clock = RunClock::start();
        let a = clock.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = clock.now_ns();
        assert!(b >= a + 2_000_000, "{a} then {b}");
        assert_eq!(clock.to_run_ns(clock.to_monotonic_ns(42)), 42);
    }
}
