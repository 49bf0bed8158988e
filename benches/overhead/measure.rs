//! One client run against its own `simserve --stamps --token-stamps`, and what it cost: CPU and
//! peak RSS from `wait4`, then the client's own output joined with the server's send stamps
//! request by request (first token) and token by token (`itl`).

use super::itl::{self, TokenTimes};
use super::stats::percentile;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;
use tokenpipe_format::{Record, RecordReader, RecordType};

/// The server every client meets: simserve's TTFT and inter-token latency.
pub const TTFT_MS: f64 = 50.0;
pub const ITL_MS: f64 = 10.0;

/// Which client ran.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Fire,
    Floor,
}

/// What one client run measured.
#[derive(Default)]
pub struct Figures {
    pub requests: usize,
    pub failed: usize,
    pub tokens: u64,
    pub cpu_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: i64,
    pub wall_s: f64,
    /// Client's first-token instant minus the server's first-token send stamp.
    pub ttft_err_ms: Vec<f64>,
    /// Client's first-token instant minus its own send instant.
    pub ttft_ms: Vec<f64>,
    /// `sent − scheduled`, in send order.
    pub lag_ms: Vec<f64>,
    /// Per token after the first: the client's gap, the server's, and their difference.
    pub itl: itl::Gaps,
}

impl Figures {
    pub fn cpu_per_m_tokens(&self) -> f64 {
        self.cpu_s / (self.tokens.max(1) as f64 / 1e6)
    }

    pub fn p(v: &[f64], q: f64) -> f64 {
        let mut v = v.to_vec();
        percentile(&mut v, q)
    }

    /// Dispatch lag p99 of the first `n` requests sent (a closed loop's first wave).
    pub fn first_wave_lag_p99(&self, n: usize) -> f64 {
        let mut v = self.lag_ms[..n.min(self.lag_ms.len())].to_vec();
        percentile(&mut v, 0.99)
    }
}

/// Runs `client` on `schedule` against a fresh simserve and measures it.
pub fn run(client: Client, schedule: &Path, dir: &Path) -> Figures {
    let stamps = dir.join("stamps.ndjson");
    let token_stamps = dir.join("token-stamps.jsonl");
    let out = dir.join("client.out");
    let cpus = cpus();
    let (mut server, url) = start_server(&stamps, &token_stamps, cpus.map(|(_, s)| s));
    let started = Instant::now();
    let mut cmd = match client {
        Client::Fire => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_fire"));
            c.args(["--url", &url, "--api", "chat"])
                .arg(schedule)
                .stdout(File::create(&out).expect("events file"));
            c
        }
        Client::Floor => {
            let mut c = Command::new(std::env::current_exe().expect("own path"));
            c.arg("--floor").arg(&url).arg(schedule).arg(&out);
            c
        }
    };
    if let Some((client_cpu, _)) = cpus {
        pin(&mut cmd, client_cpu);
    }
    let child = cmd.spawn().expect("start the client");
    let (user_s, sys_s, max_rss_kib) = wait_with_rusage(child);
    let wall_s = started.elapsed().as_secs_f64();
    // SAFETY: signalling our own child so it flushes its stamps.
    unsafe {
        libc::kill(server.id() as i32, libc::SIGTERM);
    }
    let _ = server.wait();
    let mut f = Figures {
        user_s,
        sys_s,
        cpu_s: user_s + sys_s,
        max_rss_kib,
        wall_s,
        ..Figures::default()
    };
    let (origin, server_first) = server_first_tokens(&stamps);
    let client_tokens = match client {
        Client::Fire => read_fire(&out, &server_first, &mut f),
        Client::Floor => {
            read_floor(&out, &server_first, &mut f);
            itl::read_floor(&out.with_extension("out.tokens"))
        }
    };
    let server_tokens = itl::read_server(&token_stamps, origin);
    f.itl = itl::gaps(&client_tokens, &server_tokens);
    f
}

fn start_server(stamps: &Path, token_stamps: &Path, cpu: Option<usize>) -> (Child, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_simserve"));
    cmd.args(["--port", "0", "--ttft-ms", &TTFT_MS.to_string()])
        .args(["--itl-ms", &ITL_MS.to_string()])
        .arg("--stamps")
        .arg(stamps)
        .arg("--token-stamps")
        .arg(token_stamps)
        .stdout(Stdio::piped());
    if let Some(cpu) = cpu {
        pin(&mut cmd, cpu);
    }
    let mut child = cmd.spawn().expect("start simserve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("simserve url");
    (child, line.trim().to_string())
}

/// The CPUs the client and the server run on: the first and the last this process may use,
/// when it may use two or more and `FIRE_BENCH_PIN` is not `0`. Pinned apart, each run of a
/// client meets the same placement (on a two-core box the scheduler otherwise moves the client
/// onto the server's core and back, which spreads one client's CPU time by ±10 %, more than
/// the differences measured).
fn cpus() -> Option<(usize, usize)> {
    if std::env::var("FIRE_BENCH_PIN").as_deref() == Ok("0") {
        return None;
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity fills it for this process.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return None;
    }
    let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    match allowed[..] {
        [first, .., last] => Some((first, last)),
        _ => None,
    }
}

/// Makes the command's process run on `cpu` only.
fn pin(cmd: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: sched_setaffinity is async-signal-safe, and the set is built before the fork.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    unsafe {
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Waits for the child and returns its user and system CPU seconds and peak RSS in KiB.
fn wait_with_rusage(child: Child) -> (f64, f64, i64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter; wait4 on our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4 failed");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime), ru.ru_maxrss)
}

/// The server run's origin, and request id (last 16 hex digits of `x-request-id`) to the
/// server's first-token send instant, on `CLOCK_MONOTONIC`.
fn server_first_tokens(stamps: &Path) -> (u64, HashMap<u64, u64>) {
    let mut out = HashMap::new();
    let mut input = RecordReader::new(
        BufReader::new(File::open(stamps).expect("stamps")),
        "stamps",
    )
    .keep(&[RecordType::Stamp]);
    let origin = input
        .read_header()
        .expect("simserve header")
        .monotonic_origin_ns
        .expect("server origin");
    while let Some(rec) = input.next_record().expect("stamp record") {
        let Record::Stamp(stamp) = rec else { continue };
        let (Some(rid), Some(first)) = (stamp.request_id, stamp.first_token_ns) else {
            continue;
        };
        if let Some(id) = itl::request_id(&rid) {
            out.insert(id, origin + first);
        }
    }
    (origin, out)
}

/// Reads fire's records into `f`; returns every token's instant per request (a token record
/// of `tokens` n stands for n tokens at its instant, as reduce counts them).
fn read_fire(events: &Path, server_first: &HashMap<u64, u64>, f: &mut Figures) -> TokenTimes {
    let mut reader = RecordReader::new(
        BufReader::new(File::open(events).expect("events")),
        "events",
    );
    let origin = reader
        .read_header()
        .expect("fire header")
        .monotonic_origin_ns
        .expect("origin");
    let mut sent_at: HashMap<u64, u64> = HashMap::new();
    let mut first_seen: HashMap<u64, u64> = HashMap::new();
    let mut tokens = TokenTimes::new();
    while let Some(rec) = reader.next_record().expect("record") {
        match rec {
            Record::Sent(s) => {
                if let Some(sch) = s.scheduled_ns {
                    f.lag_ms.push(s.sent_ns.saturating_sub(sch) as f64 / 1e6);
                }
                sent_at.insert(s.id, s.sent_ns);
            }
            Record::Token(t) => {
                f.tokens += u64::from(t.tokens);
                first_seen.entry(t.id).or_insert(t.at_ns);
                let times = tokens.entry(t.id).or_default();
                times.extend(std::iter::repeat_n(origin + t.at_ns, t.tokens as usize));
            }
            Record::Done(d) => {
                f.requests += 1;
                f.failed += usize::from(!d.ok);
            }
            _ => {}
        }
    }
    for (id, at) in &first_seen {
        if let Some(server) = server_first.get(id) {
            f.ttft_err_ms
                .push(((origin + at) as f64 - *server as f64) / 1e6);
        }
        if let Some(sent) = sent_at.get(id) {
            f.ttft_ms.push(at.saturating_sub(*sent) as f64 / 1e6);
        }
    }
    tokens
}

fn read_floor(out: &Path, server_first: &HashMap<u64, u64>, f: &mut Figures) {
    let text = std::fs::read_to_string(out).expect("floor output");
    let mut rows: Vec<[u64; 7]> = text
        .lines()
        .map(|l| {
            let mut v = [0u64; 7];
            for (slot, field) in v.iter_mut().zip(l.split(' ')) {
                *slot = field.parse().expect("floor output field");
            }
            v
        })
        .collect();
    rows.sort_by_key(|r| r[2]);
    for [id, scheduled, sent, first, _bytes, max_tokens, ok] in rows {
        f.requests += 1;
        if ok == 0 {
            f.failed += 1;
            continue;
        }
        f.tokens += max_tokens;
        f.lag_ms.push(sent.saturating_sub(scheduled) as f64 / 1e6);
        if first > 0 {
            f.ttft_ms.push(first.saturating_sub(sent) as f64 / 1e6);
            if let Some(server) = server_first.get(&id) {
                f.ttft_err_ms.push((first as f64 - *server as f64) / 1e6);
            }
        }
    }
}
