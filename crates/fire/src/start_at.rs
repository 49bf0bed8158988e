//! `--start-at` and `--host`: the parts of one plan on several hosts start at one instant and
//! say where they ran (docs/fire/start.md). The wait runs after the network is ready and
//! before the run clock starts, so that the run's t = 0 is the instant itself.

use crate::error::Error;
use crate::stop::Stop;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokenpipe_format::clock;

/// The variable a `+DUR` start is counted from first: RFC 3339 or Unix seconds.
pub const BASE_VAR: &str = "TOKENPIPE_START_BASE";
/// The variable a `+DUR` start is counted from when [`BASE_VAR`] is not set: Unix seconds.
pub const SLURM_VAR: &str = "SLURM_JOB_START_TIME";

/// How far in the past an instant may be and still start the run (at once, with a warning).
pub const PAST_LIMIT: Duration = Duration::from_secs(60);
/// How far ahead an instant may be: further is a typo, not a plan.
pub const FUTURE_LIMIT: Duration = Duration::from_secs(24 * 3600);
/// How long before the instant the wait stops sleeping and spins on the monotonic clock: about
/// what a sleep overshoots by on a loaded machine; longer spins only crowd the other parts on
/// the same cores.
const SPIN: Duration = Duration::from_millis(1);
/// The longest single sleep, so that a stop is seen within it.
const POLL: Duration = Duration::from_millis(20);
/// How long before the instant fire opens its connections: time enough for its setup
/// (pre-connecting costs about 60 µs a stream, 0.6 s for 10,000), and short of the keep-alive
/// timeout after which a server closes an idle connection (uvicorn's, vLLM's front end: 5 s).
pub const SETUP_LEAD: Duration = Duration::from_secs(2);

/// Where and when the run starts: `--host` and `--start-at`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Start {
    /// The host label for the header (`--host`); the machine's host name when `None`.
    pub host: Option<String>,
    /// The instant the run starts at, in ns since the Unix epoch (`--start-at`).
    pub at_ns: Option<i128>,
}

/// Reads `--start-at`: an RFC 3339 instant, or `+DUR` after the reference `env` gives.
pub fn parse_start_at(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<i128, String> {
    let Some(dur) = text.strip_prefix('+') else {
        return clock::parse_rfc3339_ns(text).map_err(|e| e.to_string());
    };
    let after = tokenpipe_cli::parse_duration(dur)?;
    let (var, base) = match (env(BASE_VAR), env(SLURM_VAR)) {
        (Some(b), _) => (BASE_VAR, b),
        (None, Some(s)) => (SLURM_VAR, s),
        (None, None) => {
            return Err(format!(
                "`{text}` counts from a reference every host shares, and neither {BASE_VAR} nor {SLURM_VAR} is set; set {BASE_VAR} (e.g. `export {BASE_VAR}=$(date -u +%s.%N)` before starting the hosts) or give an RFC 3339 instant"
            ))
        }
    };
    let base_ns = parse_reference(&base).map_err(|why| format!("{var}={base:?}: {why}"))?;
    Ok(base_ns + after.as_nanos() as i128)
}

/// A reference instant: RFC 3339, or Unix seconds with an optional fraction.
fn parse_reference(text: &str) -> Result<i128, String> {
    let t = text.trim();
    if t.contains('T') || t.contains('t') || t.contains('-') {
        return clock::parse_rfc3339_ns(t).map_err(|e| e.to_string());
    }
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(frac.is_empty() || digits(frac)) || whole.len() > 12 {
        return Err("expected RFC 3339 or Unix seconds (1795813200 or 1795813200.25)".into());
    }
    let secs: i128 = whole
        .parse()
        .map_err(|_| "seconds out of range".to_string())?;
    let mut nanos: i128 = 0;
    for (i, d) in frac.bytes().take(9).enumerate() {
        nanos += i128::from(d - b'0') * 10i128.pow(8 - i as u32);
    }
    Ok(secs * 1_000_000_000 + nanos)
}

/// `--host`: a label, not empty, at most 255 bytes, with no control character.
pub fn parse_host(text: &str) -> Result<String, String> {
    if text.is_empty() || text.len() > 255 || text.chars().any(char::is_control) {
        return Err("a host label is 1 to 255 bytes with no control character".into());
    }
    Ok(text.to_string())
}

/// The wall clock now, in ns since the Unix epoch.
fn wall_now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The instant as RFC 3339 with nanoseconds.
pub fn rfc3339(at_ns: i128) -> String {
    let secs = at_ns.div_euclid(1_000_000_000) as i64;
    clock::rfc3339_nanos(secs, at_ns.rem_euclid(1_000_000_000) as u32)
}

/// What the wait does with an instant `ahead_ns` from now (negative: past).
#[derive(Debug, PartialEq)]
enum Plan {
    Wait(Duration),
    Late(Duration),
}

/// Judges an instant `ahead_ns` away against the limits; the error names the flag.
fn judge(at_ns: i128, ahead_ns: i128) -> Result<Plan, Error> {
    let at = rfc3339(at_ns);
    if ahead_ns > FUTURE_LIMIT.as_nanos() as i128 {
        return Err(Error::Flag(format!(
            "--start-at {at} is {:.0} h ahead, more than {} h: a typo, not a plan",
            ahead_ns as f64 / 3.6e12,
            FUTURE_LIMIT.as_secs() / 3600
        )));
    }
    if ahead_ns >= 0 {
        return Ok(Plan::Wait(Duration::from_nanos(ahead_ns as u64)));
    }
    let past = Duration::from_nanos(ahead_ns.unsigned_abs().min(u64::MAX as u128) as u64);
    if past > PAST_LIMIT {
        return Err(Error::Flag(format!(
            "--start-at {at} passed {:.1} s ago, more than {} s: the reference or this host's clock is wrong",
            past.as_secs_f64(),
            PAST_LIMIT.as_secs()
        )));
    }
    Ok(Plan::Late(past))
}

/// The part of a wait of `ahead` that comes before the setup: all but [`SETUP_LEAD`] of it.
fn before_setup(ahead: Duration) -> Option<Duration> {
    ahead.checked_sub(SETUP_LEAD).filter(|d| !d.is_zero())
}

/// Waits, before fire opens its connections, until [`SETUP_LEAD`] before `at_ns`: a part
/// started minutes early would otherwise hold connections the server has closed as idle by
/// the instant, and its first requests would pay for new ones. An instant judged bad is the
/// error [`wait`] gives; a stop ends the wait early.
pub(crate) fn wait_before_setup(at_ns: i128, stop: &Stop) -> Result<(), Error> {
    if let Plan::Wait(ahead) = judge(at_ns, at_ns - wall_now_ns())? {
        if let Some(early) = before_setup(ahead) {
            sleep_until(Instant::now() + early, Duration::ZERO, stop);
        }
    }
    Ok(())
}

/// Sleeps in steps of at most [`POLL`] until `margin` before `deadline`, or a stop.
fn sleep_until(deadline: Instant, margin: Duration, stop: &Stop) {
    loop {
        if stop.is_stopped() {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left <= margin {
            return;
        }
        std::thread::sleep((left - margin).min(POLL));
    }
}

/// Waits for `at_ns` on the wall clock: sleeps until [`SPIN`] before it, then spins on the
/// monotonic clock, yielding between looks. A stop ends the wait early (the run then ends as a stopped run). An instant
/// in the past within [`PAST_LIMIT`] is a warning and no wait.
pub(crate) fn wait(at_ns: i128, stop: &Stop) -> Result<(), Error> {
    let plan = judge(at_ns, at_ns - wall_now_ns())?;
    let ahead = match plan {
        Plan::Late(past) => {
            eprintln!(
                "fire: warning: --start-at {} passed {:.3} s ago; starting now",
                rfc3339(at_ns),
                past.as_secs_f64()
            );
            return Ok(());
        }
        Plan::Wait(ahead) => ahead,
    };
    let deadline = Instant::now() + ahead;
    sleep_until(deadline, SPIN, stop);
    if stop.is_stopped() {
        return Ok(());
    }
    // Yielding between looks lets the other parts on this machine (more parts than cores)
    // spin too, instead of one spinner keeping another from waking.
    while Instant::now() < deadline {
        std::thread::yield_now();
    }
    Ok(())
}

/// How late the run's t = 0 (`started_at`) was against the instant, in ms (never below 0).
pub fn late_ms(at_ns: i128, started_at: &str) -> Option<f64> {
    let started = clock::parse_rfc3339_ns(started_at).ok()?;
    Some(((started - at_ns).max(0)) as f64 / 1e6)
}

/// Writes what the header says of the start: `start_at` and `start_late_ms` (from the header's
/// own `started_at`) under `--start-at`, and the schedule's announced request count.
pub(crate) fn record(header: &mut tokenpipe_format::Header, start: &Start, requests: Option<u64>) {
    if let Some(at_ns) = start.at_ns {
        header.start_at = Some(rfc3339(at_ns));
        header.start_late_ms = header.started_at.as_deref().and_then(|s| late_ms(at_ns, s));
    }
    header.schedule_requests = requests;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_but_the_setup_lead_of_a_long_wait_comes_before_the_setup() {
        let s = Duration::from_secs;
        assert_eq!(before_setup(s(30)), Some(s(28)));
        assert_eq!(before_setup(s(2)), None);
        assert_eq!(before_setup(Duration::from_millis(500)), None);
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn instants_and_durations_after_a_shared_reference() {
        let none = env(&[]);
        let at = parse_start_at("2026-11-27T21:00:00.250Z", &none).unwrap();
        assert_eq!(at, 1_795_813_200_250_000_000);
        assert_eq!(rfc3339(at), "2026-11-27T21:00:00.250000000Z");
        let base = env(&[("TOKENPIPE_START_BASE", "1795813200.5")]);
        assert_eq!(
            parse_start_at("+5s", &base).unwrap(),
            1_795_813_205_500_000_000
        );
        let rfc = env(&[("TOKENPIPE_START_BASE", "2026-11-27T21:00:00Z")]);
        assert_eq!(
            parse_start_at("+1500ms", &rfc).unwrap(),
            1_795_813_201_500_000_000
        );
        let slurm = env(&[("SLURM_JOB_START_TIME", "1795813200")]);
        assert_eq!(
            parse_start_at("+2m", &slurm).unwrap(),
            1_795_813_320_000_000_000
        );
        let missing = parse_start_at("+5s", &none).unwrap_err();
        assert!(
            missing.contains("TOKENPIPE_START_BASE") && missing.contains("SLURM_JOB_START_TIME"),
            "{missing}"
        );
        let bad = env(&[("TOKENPIPE_START_BASE", "soon")]);
        assert!(parse_start_at("+5s", &bad)
            .unwrap_err()
            .contains("TOKENPIPE_START_BASE=\"soon\""));
        assert!(parse_start_at("21:00", &none).is_err());
        assert!(parse_start_at("+x", &base).is_err());
    }

    #[test]
    fn past_and_far_instants_are_judged() {
        let s = 1_000_000_000i128;
        assert_eq!(judge(0, 2 * s).unwrap(), Plan::Wait(Duration::from_secs(2)));
        assert_eq!(judge(0, -s).unwrap(), Plan::Late(Duration::from_secs(1)));
        let late = judge(0, -61 * s).unwrap_err().to_string();
        assert!(late.contains("passed 61.0 s ago"), "{late}");
        let far = judge(0, 25 * 3600 * s).unwrap_err().to_string();
        assert!(far.contains("25 h ahead"), "{far}");
    }

    #[test]
    fn hosts_and_lateness() {
        assert_eq!(parse_host("node-1").unwrap(), "node-1");
        assert!(parse_host("").is_err());
        assert!(parse_host("a\nb").is_err());
        assert!(parse_host(&"x".repeat(256)).is_err());
        let at = parse_start_at("2026-11-27T21:00:00Z", &env(&[])).unwrap();
        assert_eq!(late_ms(at, "2026-11-27T21:00:00.000250Z"), Some(0.25));
        assert_eq!(late_ms(at, "2026-11-27T20:59:59Z"), Some(0.0));
    }

    #[test]
    fn the_wait_ends_at_the_instant_or_on_a_stop() {
        let stop = Stop::default();
        let at = wall_now_ns() + 30_000_000;
        wait(at, &stop).unwrap();
        assert!(wall_now_ns() >= at);
        stop.trigger(crate::stop::StopReason::Interrupted);
        let t = Instant::now();
        wait(wall_now_ns() + 10 * 1_000_000_000, &stop).unwrap();
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
