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
/// raw time in the stream. The origin is held on both clocks, read at the same moment: the
/// monotonic one for measuring, the wall clock for lining up hosts (see [`RunClock::anchor`]).
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    origin_ns: u64,
    wall_ns: u128,
}

impl RunClock {
    /// Starts the run clock now. The wall clock is read between two monotonic readings and the
    /// origin put at their midpoint, so the pair is off by at most half that span (tens of
    /// nanoseconds through the vDSO).
    pub fn start() -> Self {
        let before = monotonic_ns();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let after = monotonic_ns();
        Self {
            origin_ns: before + (after - before) / 2,
            wall_ns: wall,
        }
    }

    /// The run start on the wall clock, RFC 3339 UTC with nanoseconds: the header's
    /// `started_at`, the same instant as [`origin_ns`](Self::origin_ns).
    pub fn anchor(&self) -> String {
        let secs = (self.wall_ns / 1_000_000_000) as i64;
        rfc3339_nanos(secs, (self.wall_ns % 1_000_000_000) as u32)
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
    format!("{}.{micros:06}Z", rfc3339_seconds(secs))
}

/// Formats seconds since the Unix epoch (plus nanoseconds) as RFC 3339 UTC.
pub fn rfc3339_nanos(secs: i64, nanos: u32) -> String {
    format!("{}.{nanos:09}Z", rfc3339_seconds(secs))
}

fn rfc3339_seconds(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// This machine's host name, for the header's `host`; `None` if it cannot be read.
pub fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into a buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    (!name.is_empty()).then_some(name)
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

/// A time that is not RFC 3339, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an RFC 3339 time: {why}")]
pub struct TimeError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Reads a header's `started_at` back: RFC 3339 (`2026-11-18T11:06:40.123456789Z`, or with a
/// `+hh:mm`/`-hh:mm` offset) to nanoseconds since the Unix epoch, so that reduce can put runs of
/// several hosts on one clock. The error says what is wrong.
pub fn parse_rfc3339_ns(text: &str) -> Result<i128, TimeError> {
    let bad = |why: &'static str| TimeError {
        text: text.to_string(),
        why,
    };
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Result<i64, TimeError> {
        let part = b.get(from..from + len).ok_or_else(|| bad("too short"))?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad("expected digits"));
        }
        Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, want: &[u8]| -> Result<(), TimeError> {
        match b.get(at) {
            Some(c) if want.contains(c) => Ok(()),
            _ => Err(bad("misplaced separator")),
        }
    };
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    sep(4, b"-")?;
    sep(7, b"-")?;
    sep(10, b"Tt ")?;
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    sep(13, b":")?;
    sep(16, b":")?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month) || !(1..=month_days).contains(&day) || hour > 23 || minute > 59 {
        return Err(bad("a field is out of range"));
    }
    // Leap seconds (:60) are read as the next second, as most clocks smear them.
    if second > 60 {
        return Err(bad("a field is out of range"));
    }
    let mut at = 19;
    let mut nanos: i128 = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 9 {
                nanos = nanos * 10 + i128::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return Err(bad("no digits after the decimal point"));
        }
        for _ in (at - start)..9 {
            nanos *= 10;
        }
    }
    let offset_s = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == b.len() => {
            sep(at + 3, b":")?;
            let (oh, om) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
            if oh > 23 || om > 59 {
                return Err(bad("the offset is out of range"));
            }
            let minutes = oh * 60 + om;
            if *sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return Err(bad("expected `Z` or an offset such as `+02:00` at the end")),
    };
    let days = days_from_civil(year, month as u32, day as u32);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    Ok(i128::from(secs) * 1_000_000_000 + nanos)
}

/// The inverse of [`civil_from_days`]: a proleptic Gregorian date to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(rfc3339(1_795_000_000, 0), "2026-11-18T11:06:40.000000Z");
        assert_eq!(
            rfc3339_nanos(1_795_000_000, 123_456_789),
            "2026-11-18T11:06:40.123456789Z"
        );
    }

    #[test]
    fn rfc3339_refuses_days_and_offsets_that_do_not_exist() {
        assert!(
            parse_rfc3339_ns("2024-02-29T00:00:00Z").is_ok(),
            "a leap day"
        );
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-02-31T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00-05:60",
        ] {
            assert!(parse_rfc3339_ns(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn run_clock_moves_forward() {
        let clock = RunClock::start();
        let a = clock.now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = clock.now_ns();
        assert!(b >= a + 2_000_000, "{a} then {b}");
        assert_eq!(clock.to_run_ns(clock.to_monotonic_ns(42)), 42);
        let anchor = clock.anchor();
        assert!(anchor.len() == 30 && anchor.ends_with('Z'), "{anchor}");
        assert!(host_name().is_some());
    }

    #[test]
    fn rfc3339_reads_back_what_it_writes() {
        for (secs, nanos) in [(0i64, 0u32), (951_782_400, 5), (1_795_000_000, 123_456_789)] {
            let text = rfc3339_nanos(secs, nanos);
            let want = i128::from(secs) * 1_000_000_000 + i128::from(nanos);
            assert_eq!(parse_rfc3339_ns(&text), Ok(want), "{text}");
        }
        assert_eq!(
            parse_rfc3339_ns("2026-11-18T11:06:40.5Z"),
            Ok(1_795_000_000_500_000_000)
        );
        assert_eq!(
            parse_rfc3339_ns("2026-11-18T13:06:40+02:00"),
            Ok(1_795_000_000_000_000_000)
        );
        assert_eq!(parse_rfc3339_ns("1969-12-31T23:59:59Z"), Ok(-1_000_000_000));
        for bad in [
            "",
            "2026-11-18",
            "2026-13-01T00:00:00Z",
            "2026-11-18T11:06:40",
            "2026-11-18T11:06:40.Z",
            "x026-11-18T11:06:40Z",
        ] {
            let err = parse_rfc3339_ns(bad).unwrap_err();
            assert!(err.to_string().contains("RFC 3339"), "{bad}: {err}");
        }
    }
}
