//! The client's account of itself at the end of a run: what it cost (CPU, memory), how many
//! requests ended which way, and whether it kept to its schedule. It becomes the `client`
//! record, last in the output, and one or two lines on stderr.
//!
//! The rule for `kept_up` (docs/fire/self-check.md says why these limits):
//! - a run with fewer than [`MIN_JUDGED`] requests sent on a schedule, or with no request that
//!   succeeded, is not judged: `not_judged` says "too short to judge", `kept_up` stays true and
//!   nothing is printed;
//! - requests due alone: at most 1 % of them (or a single one) more than [`LAG_LIMIT_NS`]
//!   (1 ms) late;
//! - waves (requests due at one instant: a batch, `--rate inf`, a closed loop's first wave, its
//!   refills of slots that freed within 1 ms of each other):
//!   at most 1 % of them (none in a run of fewer than a hundred) took longer to send than
//!   [`WAVE_TTFT_FRACTION`] of the run's median TTFT (and at least 1 ms);
//! - the threads that ran the requests busy at most [`CPU_BUSY_LIMIT`] (75 %) of their time, and
//!   waiting for a CPU at most [`CPU_WAIT_LIMIT_NS`] on average each time they had work, both
//!   judged on runs of at least [`CPU_MIN_WALL_NS`].

use crate::live::{Snapshot, LAG_LIMIT_NS, WAVE_TTFT_FRACTION};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;
use tokenpipe_format::Client;

/// CPU over wall time of the threads that ran the requests above this means the client ran out
/// of CPU: a thread that is always busy reads sockets late, so its stamps are late.
pub const CPU_BUSY_LIMIT: f64 = 0.75;

/// Fewer requests sent on a schedule than this are too few to judge the client's pace by: one
/// hiccup would be a trend, and the first requests (sent while the client is still starting)
/// would weigh as much as the rest.
pub const MIN_JUDGED: u64 = 20;

/// CPU is judged only on runs at least this long: in a shorter one, the work around the first
/// and last requests (connections, TLS handshakes, the runtime's start and end) weighs on the
/// fraction as much as the run itself.
pub const CPU_MIN_WALL_NS: u64 = 1_000_000_000;

/// The threads that ran the requests waited longer than this for a CPU, on average, each time
/// they were given one: another process held the CPU while requests were due and tokens
/// arrived, so sends left late and stamps were taken late by about as much, and by several
/// milliseconds at worst (a busy process's time slice). Measured (docs/fire/self-check.md): 1–2 µs
/// with a CPU to spare, 0.75 ms with fire's CPU shared with three busy loops.
pub const CPU_WAIT_LIMIT_NS: u64 = 250_000;

thread_local! {
    /// When this thread started, and its CPU time then (a runtime's `on_thread_start`).
    static STARTED: Cell<Option<Span>> = const { Cell::new(None) };
    /// This thread ran the runtime's work: it parked as a worker does (the runtime's blocking
    /// pool, which resolves host names, never does).
    static WORKER: Cell<bool> = const { Cell::new(false) };
}

/// A thread's clock, CPU time and waits for a CPU at one moment, to account for it from there.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    at: Instant,
    cpu_ns: u64,
    waits: Option<Waits>,
}

impl Span {
    /// The calling thread's account starts now.
    pub fn now() -> Self {
        Self {
            at: Instant::now(),
            cpu_ns: thread_cpu_ns().unwrap_or(0),
            waits: thread_waits(),
        }
    }
}

/// How long a thread waited, runnable, for a CPU, and how many times it was given one: the
/// kernel's `/proc/thread-self/schedstat` (its second and third fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Waits {
    /// Time spent runnable on a run queue, waiting for a CPU.
    pub wait_ns: u64,
    /// Times the thread was put on a CPU.
    pub slices: u64,
}

/// The calling thread's waits for a CPU so far, where the system tells them (Linux with
/// scheduler statistics).
pub fn thread_waits() -> Option<Waits> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    parse_schedstat(&text)
}

fn parse_schedstat(text: &str) -> Option<Waits> {
    let mut fields = text.split_ascii_whitespace().skip(1);
    let wait_ns = fields.next()?.parse().ok()?;
    let slices = fields.next()?.parse().ok()?;
    Some(Waits { wait_ns, slices })
}

/// What the self-check reads of the threads that ran the requests.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cpu {
    /// CPU over lifetime, in [0, 1] ([`ThreadCpu::busy`]).
    pub busy: f64,
    /// The mean wait for a CPU each time a thread was given one ([`ThreadCpu::wait_per_slice_ns`]).
    pub wait_per_slice_ns: Option<u64>,
}

impl Cpu {
    /// Threads this busy, their waits unknown.
    #[cfg(test)]
    pub fn busy(busy: f64) -> Self {
        Self {
            busy,
            wait_per_slice_ns: None,
        }
    }
}

/// CPU time and lifetime, in nanoseconds, of the threads that ran the requests; each adds its
/// own at its end (a runtime's `on_thread_stop`), since only a thread can read its own CPU time.
/// Their quotient, [`ThreadCpu::busy`], lies in [0, 1]: no thread uses more CPU than it lives.
#[derive(Default)]
pub struct ThreadCpu {
    cpu_ns: AtomicU64,
    life_ns: AtomicU64,
    wait_ns: AtomicU64,
    slices: AtomicU64,
}

impl ThreadCpu {
    /// Adds the calling thread's CPU time and wall time since `since`.
    pub fn add_since(&self, since: Span) {
        let Some(cpu) = thread_cpu_ns() else {
            return;
        };
        let life = u64::try_from(since.at.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // Both clocks count in their own steps (µs for rusage): a thread's CPU is kept within
        // its life.
        let used = cpu.saturating_sub(since.cpu_ns).min(life);
        self.cpu_ns.fetch_add(used, Relaxed);
        self.life_ns.fetch_add(life, Relaxed);
        if let (Some(then), Some(now)) = (since.waits, thread_waits()) {
            self.wait_ns
                .fetch_add(now.wait_ns.saturating_sub(then.wait_ns), Relaxed);
            self.slices
                .fetch_add(now.slices.saturating_sub(then.slices), Relaxed);
        }
    }

    /// The threads' mean wait for a CPU each time one was given them; `None` where the system
    /// does not say, or they never ran.
    pub fn wait_per_slice_ns(&self) -> Option<u64> {
        let slices = self.slices.load(Relaxed);
        (slices > 0).then(|| self.wait_ns.load(Relaxed) / slices)
    }

    /// What the self-check reads of these threads.
    pub fn cpu(&self) -> Cpu {
        Cpu {
            busy: self.busy(),
            wait_per_slice_ns: self.wait_per_slice_ns(),
        }
    }

    /// The CPU time added so far.
    pub fn total_ns(&self) -> u64 {
        self.cpu_ns.load(Relaxed)
    }

    /// The lifetimes added so far.
    pub fn life_ns(&self) -> u64 {
        self.life_ns.load(Relaxed)
    }

    /// CPU over lifetime of the threads added, in [0, 1].
    pub fn busy(&self) -> f64 {
        cpu_busy(self.total_ns(), self.life_ns())
    }
}

/// A callback for a runtime's `on_thread_start`: the thread's account starts.
pub fn on_thread_start() -> impl Fn() + Send + Sync + 'static {
    || STARTED.with(|s| s.set(Some(Span::now())))
}

/// A callback for a runtime's `on_thread_park`: the thread is one of the runtime's workers.
pub fn on_thread_park() -> impl Fn() + Send + Sync + 'static {
    || WORKER.with(|w| w.set(true))
}

/// A callback for a runtime's `on_thread_stop` that adds each ending worker's CPU and lifetime
/// to `cpu` (a thread of the blocking pool, which never parks as a worker, is left out).
pub fn on_thread_stop(cpu: &Arc<ThreadCpu>) -> impl Fn() + Send + Sync + 'static {
    let cpu = cpu.clone();
    move || {
        if let (true, Some(since)) = (WORKER.with(Cell::get), STARTED.with(Cell::get)) {
            cpu.add_since(since);
        }
    }
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

/// CPU time over the time the threads lived, in [0, 1] (0 when they lived no time).
pub fn cpu_busy(cpu_ns: u64, life_ns: u64) -> f64 {
    if life_ns == 0 {
        return 0.0;
    }
    (cpu_ns as f64 / life_ns as f64).clamp(0.0, 1.0)
}

/// Why the run's pace cannot be judged, when it cannot: "too short to judge: …".
pub fn not_judged(counts: &Snapshot) -> Option<String> {
    if counts.ok == 0 {
        return Some("too short to judge: no request succeeded".into());
    }
    (counts.lagged < MIN_JUDGED).then(|| {
        format!(
            "too short to judge: {} request(s) sent on a schedule, fewer than {MIN_JUDGED}",
            counts.lagged
        )
    })
}

/// Why the client did not keep up, one sentence per reason; empty when it did. `cpu` is
/// judged only when `wall_ns` reaches [`CPU_MIN_WALL_NS`].
pub fn warnings(counts: &Snapshot, cpu: Cpu, threads: u32, wall_ns: u64) -> Vec<String> {
    let busy = cpu.busy;
    let mut out = Vec::new();
    let behind = counts.dispatcher_behind_max_ns;
    // The dispatcher releases a request at its deadline, the send loop sends it: when the
    // dispatcher was itself about as late as the worst send, it is the bottleneck.
    let cause = |max: u64| {
        if behind.saturating_mul(2) >= max {
            format!(
                "the dispatcher thread itself fell up to {} behind (reading or encoding the schedule)",
                ms(behind)
            )
        } else {
            "the network threads could not send in time (try more --threads)".to_string()
        }
    };
    let too_many_late =
        counts.alone_late >= 2 && counts.alone_late.saturating_mul(100) > counts.alone;
    if let (true, Some(p99)) = (too_many_late, counts.lag_p99_ns) {
        let max = counts.lag_max_ns.unwrap_or(p99);
        out.push(format!(
            "{} of {} requests ({:.1} %) left more than {} late (dispatch lag p99 {}, max {}), so the server saw a gentler load than scheduled; {}",
            counts.alone_late,
            counts.alone,
            counts.alone_late as f64 * 100.0 / counts.alone.max(1) as f64,
            ms(LAG_LIMIT_NS),
            ms(p99),
            ms(max),
            cause(max),
        ));
    }
    let waves_late = counts.waves_late >= 1 && counts.waves_late.saturating_mul(100) > counts.waves;
    if let (true, Some(worst)) = (waves_late, counts.wave_lag_max_ns) {
        let against = match counts.ttft_p50_ns {
            Some(t) => format!(
                "{:.0} % of the median TTFT, {}",
                WAVE_TTFT_FRACTION * 100.0,
                ms(t)
            ),
            None => "no request had a first token".to_string(),
        };
        out.push(format!(
            "{} of {} waves (requests due at one instant) took more than {} to send ({against}; the slowest {}), so the server saw each wave arrive spread out rather than at once; {}",
            counts.waves_late,
            counts.waves,
            ms(counts.wave_limit_ns),
            ms(worst),
            cause(worst),
        ));
    }
    if busy > CPU_BUSY_LIMIT && wall_ns >= CPU_MIN_WALL_NS {
        out.push(format!(
            "the network threads were busy {:.0} % of the run ({threads} thread(s)), over the {:.0} % limit: sockets were read late, so time stamps may be late (try more --threads)",
            busy * 100.0,
            CPU_BUSY_LIMIT * 100.0
        ));
    }
    match cpu.wait_per_slice_ns {
        Some(wait) if wait > CPU_WAIT_LIMIT_NS && wall_ns >= CPU_MIN_WALL_NS => out.push(format!(
            "the network threads waited {} on average for a CPU each time they had work, over the {} limit: another process held the CPU, so requests left and tokens were stamped late (give fire a core of its own)",
            ms(wait),
            ms(CPU_WAIT_LIMIT_NS)
        )),
        _ => {}
    }
    out
}

fn ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / 1e6)
}

/// The `client` record of a run; `busy` is the network threads' CPU over their lifetime
/// ([`ThreadCpu::busy`]). A run too short to judge keeps up, with `not_judged` saying why.
pub fn record(counts: &Snapshot, wall_ns: u64, cpu: Cpu, threads: u32, usage: Usage) -> Client {
    let not_judged = not_judged(counts);
    let warnings = match not_judged {
        Some(_) => Vec::new(),
        None => warnings(counts, cpu, threads, wall_ns),
    };
    let busy = cpu.busy;
    Client {
        wall_ns,
        cpu_user_ns: usage.user_ns,
        cpu_system_ns: usage.system_ns,
        cpu_busy: (busy * 1000.0).round() / 1000.0,
        cpu_wait_per_slice_ns: cpu.wait_per_slice_ns,
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
        not_judged,
        server_clock_offset_ms: None,
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

    const SECOND: u64 = 1_000_000_000;

    /// 200 requests due alone, all ok, `late` of them more than 1 ms late.
    fn lagging(late: u64, p99: u64, max: u64, behind: u64) -> Snapshot {
        Snapshot {
            ok: 200,
            lagged: 200,
            late,
            alone: 200,
            alone_late: late,
            lag_p50_ns: Some(1_000),
            lag_p99_ns: Some(p99),
            lag_max_ns: Some(max),
            dispatcher_behind_max_ns: behind,
            wave_limit_ns: LAG_LIMIT_NS,
            ..Snapshot::default()
        }
    }

    /// One wave of `n` requests (all ok) whose last left `worst` after its instant, against a
    /// median TTFT of 50 ms (a limit of 50 ms).
    fn wave(n: u64, worst: u64) -> Snapshot {
        let limit = crate::live::wave_limit_ns(Some(50_000_000));
        Snapshot {
            ok: n,
            lagged: n,
            late: n - 1,
            waves: 1,
            wave_requests: n,
            waves_late: u64::from(worst > limit),
            wave_lag_max_ns: Some(worst),
            wave_limit_ns: limit,
            ttft_p50_ns: Some(50_000_000),
            lag_p99_ns: Some(worst),
            lag_max_ns: Some(worst),
            ..Snapshot::default()
        }
    }

    #[test]
    fn kept_up_within_both_limits() {
        let c = record(
            &lagging(2, LAG_LIMIT_NS, 5_000_000, 0),
            2 * SECOND,
            Cpu::busy(CPU_BUSY_LIMIT),
            1,
            Usage::default(),
        );
        assert!(c.kept_up, "{:?}", c.warnings);
        assert!(c.warnings.is_empty());
        assert_eq!(c.not_judged, None);
        assert_eq!(c.cpu_busy, CPU_BUSY_LIMIT);
    }

    #[test]
    fn lag_over_the_limit_names_where_it_was_lost() {
        let net = warnings(
            &lagging(3, LAG_LIMIT_NS + 1, 40_000_000, 100_000),
            Cpu::busy(0.2),
            1,
            2 * SECOND,
        );
        assert_eq!(net.len(), 1);
        assert!(
            net[0].starts_with("3 of 200 requests (1.5 %) left more than 1.00 ms late (dispatch lag p99 1.00 ms, max 40.00 ms)"),
            "{}",
            net[0]
        );
        assert!(net[0].contains("--threads"), "{}", net[0]);
        let disp = warnings(
            &lagging(50, 8_000_000, 40_000_000, 30_000_000),
            Cpu::busy(0.2),
            1,
            2 * SECOND,
        );
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
        s.alone = 30;
        assert!(warnings(&s, Cpu::busy(0.1), 1, SECOND).is_empty());
        s.alone_late = 2;
        assert_eq!(warnings(&s, Cpu::busy(0.1), 1, SECOND).len(), 1);
    }

    #[test]
    fn a_wave_is_judged_by_its_sending_time_against_the_ttft() {
        // 64 requests due at once, the last leaving 40 ms after the instant: 63 of them more
        // than 1 ms late, which the rule for requests due alone would call a slow client. The
        // server takes 50 ms to a first token, so the whole wave reached it within the limit.
        let c = record(
            &wave(64, 40_000_000),
            2 * SECOND,
            Cpu::busy(0.3),
            1,
            Usage::default(),
        );
        assert!(c.kept_up, "{:?}", c.warnings);
        assert_eq!(c.not_judged, None);
        // 70 ms is over the limit: the server answered the first long before the last arrived.
        let c = record(
            &wave(64, 70_000_000),
            2 * SECOND,
            Cpu::busy(0.3),
            1,
            Usage::default(),
        );
        assert!(!c.kept_up);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].starts_with("1 of 1 waves (requests due at one instant) took more than 62.50 ms to send (125 % of the median TTFT, 50.00 ms; the slowest 70.00 ms)"),
            "{}",
            c.warnings[0]
        );
        // Waves and requests due alone together: each judged by its own rule.
        let mut both = wave(64, 40_000_000);
        both.alone = 100;
        both.alone_late = 2;
        both.lagged += 100;
        let w = warnings(&both, Cpu::busy(0.1), 1, SECOND);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("2 of 100 requests (2.0 %)"), "{}", w[0]);
        // More than a hundred waves: one slow wave in a hundred is let pass, two are not.
        let mut many = wave(2, 80_000_000);
        many.waves = 150;
        many.wave_requests = 300;
        many.lagged = 300;
        many.ok = 300;
        assert!(warnings(&many, Cpu::busy(0.1), 1, SECOND).is_empty());
        many.waves_late = 2;
        assert_eq!(warnings(&many, Cpu::busy(0.1), 1, SECOND).len(), 1);
    }

    #[test]
    fn too_few_requests_or_none_that_succeeded_are_not_judged() {
        // Three requests, all of them late, on a thread busy all the time: too short to judge.
        let mut s = lagging(3, 9_000_000, 9_000_000, 0);
        s.ok = 3;
        s.lagged = 3;
        s.alone = 3;
        let c = record(&s, 2 * SECOND, Cpu::busy(1.0), 1, Usage::default());
        assert!(c.kept_up);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(
            c.not_judged.as_deref(),
            Some("too short to judge: 3 request(s) sent on a schedule, fewer than 20")
        );
        s.lagged = MIN_JUDGED;
        s.alone = MIN_JUDGED;
        assert_eq!(not_judged(&s), None);
        assert!(!record(&s, 2 * SECOND, Cpu::busy(1.0), 1, Usage::default()).kept_up);
        // Many requests, none answered: nothing to judge the client's pace against.
        let mut failed = lagging(0, 1_000, 1_000, 0);
        failed.ok = 0;
        let c = record(&failed, 2 * SECOND, Cpu::busy(1.0), 1, Usage::default());
        assert!(c.kept_up && c.warnings.is_empty());
        assert_eq!(
            c.not_judged.as_deref(),
            Some("too short to judge: no request succeeded")
        );
    }

    #[test]
    fn a_saturated_network_thread_did_not_keep_up() {
        // 1.9 s of CPU over 2 s lived: 95 % busy.
        let busy = cpu_busy(1_900_000_000, 2_000_000_000);
        assert!((busy - 0.95).abs() < 1e-12);
        let c = record(
            &lagging(0, 1_000, 1_000, 0),
            2 * SECOND,
            Cpu::busy(busy),
            2,
            Usage::default(),
        );
        assert!(!c.kept_up);
        assert_eq!(c.warnings.len(), 1);
        assert!(c.warnings[0].contains("busy 95 %"), "{}", c.warnings[0]);
        // The same in a run shorter than a second is not judged on CPU.
        let short = record(
            &lagging(0, 1_000, 1_000, 0),
            SECOND / 2,
            Cpu::busy(busy),
            2,
            Usage::default(),
        );
        assert!(short.kept_up, "{:?}", short.warnings);
        assert_eq!(short.cpu_busy, 0.95);
        // A fraction of the threads' time by construction: never below 0 nor above 1.
        assert_eq!(cpu_busy(5, 0), 0.0);
        assert_eq!(cpu_busy(3_000, 1_000), 1.0);
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
        let c = record(&s, 1, Cpu::busy(0.0), 1, Usage::default());
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

    /// Keeps the calling thread busy for 30 ms of wall time.
    fn spin() {
        let until = Instant::now() + std::time::Duration::from_millis(30);
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
    }

    #[test]
    fn this_process_has_used_cpu_and_memory() {
        let u = process_usage();
        assert!(u.user_ns + u.system_ns > 0);
        assert!(u.max_rss_bytes.is_some_and(|b| b > 1 << 20));
        let cpu = ThreadCpu::default();
        let since = Span::now();
        spin();
        cpu.add_since(since);
        assert!(cpu.total_ns() > 0);
        assert!(cpu.total_ns() <= cpu.life_ns());
        assert!((0.0..=1.0).contains(&cpu.busy()) && cpu.busy() > 0.0);
    }

    #[test]
    fn only_the_runtime_workers_are_counted_each_over_its_own_life() {
        let cpu = Arc::new(ThreadCpu::default());
        let (start, park, stop) = (on_thread_start(), on_thread_park(), on_thread_stop(&cpu));
        let (start, park, stop) = (Arc::new(start), Arc::new(park), Arc::new(stop));
        // A worker: it parks, works, and ends; it is counted.
        let worker = {
            let (start, park, stop) = (start.clone(), park.clone(), stop.clone());
            std::thread::spawn(move || {
                start();
                park();
                spin();
                stop();
            })
        };
        worker.join().unwrap();
        let (worked, lived) = (cpu.total_ns(), cpu.life_ns());
        assert!(worked > 0 && worked <= lived, "{worked} {lived}");
        // A thread of the blocking pool never parks as a worker: left out, however long it
        // lived idle.
        std::thread::spawn(move || {
            start();
            std::thread::sleep(std::time::Duration::from_millis(20));
            stop();
        })
        .join()
        .unwrap();
        assert_eq!((cpu.total_ns(), cpu.life_ns()), (worked, lived));
        drop(park);
    }

    #[test]
    fn a_client_that_waited_for_a_cpu_did_not_keep_up() {
        let s = lagging(0, 10_000, 20_000, 0);
        let waited = |wait: u64| Cpu {
            busy: 0.4,
            wait_per_slice_ns: Some(wait),
        };
        assert!(warnings(&s, waited(CPU_WAIT_LIMIT_NS), 1, 2 * SECOND).is_empty());
        let w = warnings(&s, waited(3_000_000), 1, 2 * SECOND);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("the network threads waited 3.00 ms on average for a CPU"),
            "{}",
            w[0]
        );
        // Judged on runs long enough for start-up not to weigh, as the CPU is.
        assert!(warnings(&s, waited(3_000_000), 1, SECOND / 2).is_empty());
        assert_eq!(
            parse_schedstat("2217296 463319 17\n"),
            Some(Waits {
                wait_ns: 463_319,
                slices: 17
            })
        );
        assert_eq!(parse_schedstat("12"), None);
        let cpu = ThreadCpu::default();
        cpu.add_since(Span::now());
        #[cfg(target_os = "linux")]
        assert!(thread_waits().is_some());
        assert!(cpu.cpu().busy <= 1.0);
    }
}
