//! The client's account of itself at the end of a run: what it cost (CPU, memory), how many
//! requests ended which way, and whether it kept to its schedule. It becomes the `client`
//! record, last in the output, and one or two lines on stderr.
//!
//! The rule for `kept_up` (docs/fire/self-check.md says why these limits):
//! - at most 1 % of the requests sent (or a single one) more than [`LAG_LIMIT_NS`] (1 ms) late:
//!   dispatch lag p99 within 1 ms, once a run has a hundred requests; below that, one late
//!   request (typically the first, sent while the client was still starting) is let pass, and
//! - the network threads busy at most [`CPU_BUSY_LIMIT`] (90 %) of the run.

use crate::live::{Snapshot, LAG_LIMIT_NS};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use tokenpipe_format::Client;

/// CPU over wall time per network thread above this means the client ran out of CPU: a
/// thread that is always busy reads sockets late, so its stamps are late.
pub const CPU_BUSY_LIMIT: f64 = 0.9;

/// CPU time, in nanoseconds, of the network threads that have ended; each adds its own at its
/// end (a runtime's `on_thread_stop`), since only a thread can read its own CPU time.
#[derive(Default)]
pub struct ThreadCpu(AtomicU64);

impl ThreadCpu {
    /// Adds the calling thread's CPU time.
    pub fn add_current_thread(&self) {
        if let Some(ns) = thread_cpu_ns() {
            self.0.fetch_add(ns, Relaxed);
        }
    }

    /// The CPU time added so far.
    pub fn total_ns(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A callback for a runtime's `on_thread_stop` that adds each ending thread's CPU to `cpu`.
pub fn on_thread_stop(cpu: &Arc<ThreadCpu>) -> impl Fn() + Send + Sync + 'static {
    let cpu = cpu.clone();
    move || cpu.add_current_thread()
}

/// What the process used, from `getrusage`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// User-mode CPU of all threads.
    pub user_ns: u64,
    /// Kernel-mode CPU of all threads.
    pub system_ns: u64,
    /// Peak resident memory, when known.
    pub max_rss_bytes: Option<u64>,
}

fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer on success and nothing else.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    // SAFETY: zeroed is a valid rusage, and on success it was filled in.
    (rc == 0).then(|| unsafe { ru.assume_init() })
}

fn timeval_ns(t: libc::timeval) -> u64 {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u64::try_from(t.tv_usec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000)
        .saturating_add(micros.saturating_mul(1_000))
}

/// The whole process's CPU and peak memory so far.
pub fn process_usage() -> Usage {
    let Some(ru) = rusage(libc::RUSAGE_SELF) else {
        return Usage::default();
    };
    // Linux reports ru_maxrss in KiB.
    let rss = u64::try_from(ru.ru_maxrss).ok().filter(|kib| *kib > 0);
    Usage {
        user_ns: timeval_ns(ru.ru_utime),
        system_ns: timeval_ns(ru.ru_stime),
        max_rss_bytes: rss.map(|kib| kib.saturating_mul(1024)),
    }
}

/// The calling thread's CPU time (user and system), where the system can tell.
pub fn thread_cpu_ns() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let ru = rusage(libc::RUSAGE_THREAD)?;
        Some(timeval_ns(ru.ru_utime).saturating_add(timeval_ns(ru.ru_stime)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// CPU over wall time per network thread.
pub fn cpu_busy(network_cpu_ns: u64, wall_ns: u64, threads: u32) -> f64 {
    if wall_ns == 0 || threads == 0 {
        return 0.0;
    }
    network_cpu_ns as f64 / wall_ns as f64 / f64::from(threads)
}

/// Why the client did not keep up, one sentence per reason; empty when it did.
pub fn warnings(counts: &Snapshot, cpu_busy: f64, threads: u32) -> Vec<String> {
    let mut out = Vec::new();
    let too_many_late = counts.late >= 2 && counts.late.saturating_mul(100) > counts.lagged;
    if let (true, Some(p99)) = (too_many_late, counts.lag_p99_ns) {
        let max = counts.lag_max_ns.unwrap_or(p99);
        let behind = counts.dispatcher_behind_max_ns;
        // The dispatcher releases a request at its deadline, the send loop sends it: when the
        // dispatcher was itself about as late as the worst send, it is the bottleneck.
        let cause = if behind.saturating_mul(2) >= max {
            format!(
                "the dispatcher thread itself fell up to {} behind (reading or encoding the schedule)",
                ms(behind)
            )
        } else {
            "the network threads could not send in time (try more --threads)".to_string()
        };
        out.push(format!(
            "{} of {} requests ({:.1} %) left more than {} late (dispatch lag p99 {}, max {}), so the server saw a gentler load than scheduled; {cause}",
            counts.late,
            counts.lagged,
            counts.late as f64 * 100.0 / counts.lagged.max(1) as f64,
            ms(LAG_LIMIT_NS),
            ms(p99),
            ms(max),
        ));
    }
    if cpu_busy > CPU_BUSY_LIMIT {
        out.push(format!(
            "the network threads were busy {:.0} % of the run ({threads} thread(s)), over the {:.0} % limit: sockets were read late, so time stamps may be late (try more --threads)",
            cpu_busy * 100.0,
            CPU_BUSY_LIMIT * 100.0
        ));
    }
    out
}

fn ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

/// The `client` record of a run.
pub fn record(
    counts: &Snapshot,
    wall_ns: u64,
    network_cpu_ns: u64,
    threads: u32,
    usage: Usage,
) -> Client {
    let busy = cpu_busy(network_cpu_ns, wall_ns, threads);
    let warnings = warnings(counts, busy, threads);
    Client {
        wall_ns,
        cpu_user_ns: usage.user_ns,
        cpu_system_ns: usage.system_ns,
        cpu_busy: (busy * 1000.0).round() / 1000.0,
        threads,
        max_rss_bytes: usage.max_rss_bytes,
        sent: counts.sent,
        ok: counts.ok,
        failed: counts.failed(),
        cancelled: counts.cancelled(),
        not_sent: counts.not_sent(),
        peak_in_flight: counts.peak_in_flight,
        dispatch_lag_p50_ns: counts.lag_p50_ns,
        dispatch_lag_p99_ns: counts.lag_p99_ns,
        dispatch_lag_max_ns: counts.lag_max_ns,
        dispatcher_behind_max_ns: counts.dispatcher_behind_max_ns,
        kept_up: warnings.is_empty(),
        warnings,
        not_judged: None,
    }
}

/// The end-of-run line: `N requests: X ok, Y failed (kind: n, ...), Z cancelled, W not sent`,
/// the parts with nothing left out after `ok`.
pub fn counts_line(s: &Snapshot) -> String {
    let mut text = format!("{} requests: {} ok", s.ended(), s.ok);
    let failed = s.failed();
    if failed > 0 {
        let kinds: Vec<String> = s
            .failures()
            .map(|(k, n)| format!("{}: {n}", k.as_str()))
            .collect();
        text.push_str(&format!(", {failed} failed ({})", kinds.join(", ")));
    }
    for (n, what) in [
        (s.cancelled(), "cancelled"),
        (s.not_sent(), "not sent"),
        (s.resent, "sent again on a new connection"),
    ] {
        if n > 0 {
            text.push_str(&format!(", {n} {what}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::ErrorKind;

    fn lagging(late: u64, p99: u64, max: u64, behind: u64) -> Snapshot {
        Snapshot {
            lagged: 200,
            late,
            lag_p50_ns: Some(1_000),
            lag_p99_ns: Some(p99),
            lag_max_ns: Some(max),
            dispatcher_behind_max_ns: behind,
            ..Snapshot::default()
        }
    }

    #[test]
    fn kept_up_within_both_limits() {
        let c = record(
            &lagging(2, LAG_LIMIT_NS, 5_000_000, 0),
            1_000,
            900,
            1,
            Usage::default(),
        );
        assert!(c.kept_up, "{:?}", c.warnings);
        assert!(c.warnings.is_empty());
        assert_eq!(c.cpu_busy, 0.9);
        // No request with a scheduled instant: nothing to judge the lag by.
        assert!(warnings(&Snapshot::default(), 0.5, 1).is_empty());
    }

    #[test]
    fn lag_over_the_limit_names_where_it_was_lost() {
        let net = warnings(&lagging(3, LAG_LIMIT_NS + 1, 40_000_000, 100_000), 0.2, 1);
        assert_eq!(net.len(), 1);
        assert!(
            net[0].starts_with("3 of 200 requests (1.5 %) left more than 1.00 ms late (dispatch lag p99 1.00 ms, max 40.00 ms)"),
            "{}",
            net[0]
        );
        assert!(net[0].contains("--threads"), "{}", net[0]);
        let disp = warnings(&lagging(50, 8_000_000, 40_000_000, 30_000_000), 0.2, 1);
        assert!(
            disp[0].contains("dispatcher thread itself fell up to 30.00 ms"),
            "{}",
            disp[0]
        );
    }

    #[test]
    fn one_late_request_in_a_small_run_is_let_pass() {
        let mut s = lagging(1, 4_000_000, 4_000_000, 3_900_000);
        s.lagged = 30;
        assert!(warnings(&s, 0.1, 1).is_empty());
        s.late = 2;
        assert_eq!(warnings(&s, 0.1, 1).len(), 1);
    }

    #[test]
    fn a_saturated_network_thread_did_not_keep_up() {
        // 3.8 s of CPU over 2 s of wall on 2 threads: 95 % busy.
        let busy = cpu_busy(3_800_000_000, 2_000_000_000, 2);
        assert!((busy - 0.95).abs() < 1e-12);
        let c = record(
            &Snapshot::default(),
            2_000_000_000,
            3_800_000_000,
            2,
            Usage::default(),
        );
        assert!(!c.kept_up);
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].contains("busy 95 %"), "{}", c.warnings[0]);
        assert_eq!(cpu_busy(5, 0, 1), 0.0);
    }

    #[test]
    fn counts_keep_failures_apart_from_the_stopped_run() {
        let s = Snapshot {
            ok: 7,
            ended_by_kind: vec![
                (ErrorKind::Timeout, 3),
                (ErrorKind::Http, 1),
                (ErrorKind::Cancelled, 2),
                (ErrorKind::NotSent, 5),
            ],
            ..Snapshot::default()
        };
        assert_eq!(
            counts_line(&s),
            "18 requests: 7 ok, 4 failed (timeout: 3, http: 1), 2 cancelled, 5 not sent"
        );
        let c = record(&s, 1, 0, 1, Usage::default());
        assert_eq!((c.ok, c.failed, c.cancelled, c.not_sent), (7, 4, 2, 5));
        let again = Snapshot {
            ok: 3,
            resent: 2,
            ..Snapshot::default()
        };
        assert_eq!(
            counts_line(&again),
            "3 requests: 3 ok, 2 sent again on a new connection"
        );
        assert_eq!(
            counts_line(&Snapshot {
                ok: 2,
                ..Snapshot::default()
            }),
            "2 requests: 2 ok"
        );
    }

    #[test]
    fn this_process_has_used_cpu_and_memory() {
        let u = process_usage();
        assert!(u.user_ns + u.system_ns > 0);
        assert!(u.max_rss_bytes.is_some_and(|b| b > 1 << 20));
        let cpu = ThreadCpu::default();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        cpu.add_current_thread();
        assert!(cpu.total_ns() > 0);
    }
}
