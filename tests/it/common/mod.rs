//! Helpers for the integration tests: run the real binaries, joined by real OS pipes, against
//! the real simulated server on a free loopback port.
#![allow(dead_code)]

pub mod pin;
pub mod real;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Path of one of the package's binaries.
pub fn bin(name: &str) -> String {
    match name {
        "arrivals" => env!("CARGO_BIN_EXE_arrivals"),
        "fire" => env!("CARGO_BIN_EXE_fire"),
        "reduce" => env!("CARGO_BIN_EXE_reduce"),
        "table" => env!("CARGO_BIN_EXE_table"),
        "simserve" => env!("CARGO_BIN_EXE_simserve"),
        "sweep" => env!("CARGO_BIN_EXE_sweep"),
        other => panic!("unknown binary {other}"),
    }
    .to_string()
}

/// A running `simserve`, killed on drop.
pub struct Server {
    child: Child,
    /// Base URL, e.g. `http://127.0.0.1:41234/v1`.
    pub url: String,
}

impl Server {
    /// Starts `simserve --port 0` with the given extra arguments and waits for its URL.
    pub fn start(extra: &[&str]) -> Server {
        let mut child = Command::new(bin("simserve"))
            .args(["--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start simserve");
        let stdout = child.stdout.take().expect("simserve stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read simserve url");
        let url = line.trim().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "simserve printed {url:?}"
        );
        Server { child, url }
    }

    /// Stops the server with SIGTERM and waits for it (so files it writes are flushed).
    pub fn stop(mut self) {
        // SAFETY: sending a signal to our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `stages` as one shell-less pipeline (`a | b | c`), each stage's stdout feeding the next
/// stage's stdin through an OS pipe; `input` goes to the first stage's stdin. Returns every
/// stage's output; only the last stage's stdout is captured.
pub fn pipeline(stages: &[Vec<String>], input: Option<&[u8]>) -> Vec<Output> {
    let mut children: Vec<Child> = Vec::new();
    for (i, argv) in stages.iter().enumerate() {
        let stdin = if i == 0 {
            if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            }
        } else {
            Stdio::from(children[i - 1].stdout.take().expect("previous stdout"))
        };
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {argv:?}: {e}"));
        children.push(child);
    }
    if let Some(bytes) = input {
        let mut stdin = children[0].stdin.take().expect("first stdin");
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    // Every stage is waited for at once: a stage that runs until its reader is gone (an endless
    // schedule) must not hold up the reading of the stages after it.
    let waits: Vec<_> = children
        .into_iter()
        .map(|c| std::thread::spawn(move || c.wait_with_output().expect("wait")))
        .collect();
    waits
        .into_iter()
        .map(|w| w.join().expect("a stage's waiter"))
        .collect()
}

/// Starts `stages` as a terminal starts a pipeline (`a | b | c`): joined by OS pipes, in one new
/// process group whose id is returned, so that a signal to the group reaches every stage as
/// Ctrl-C does. The first stage reads nothing and its stderr is dropped; the others' stderr and
/// the last stage's stdout are piped for the test to read.
pub fn spawn_group(stages: &[Vec<String>]) -> (Vec<Child>, i32) {
    use std::os::unix::process::CommandExt;
    let mut children: Vec<Child> = Vec::new();
    let mut group = 0;
    for (i, argv) in stages.iter().enumerate() {
        let (stdin, stderr) = match children.last_mut() {
            None => (Stdio::null(), Stdio::null()),
            Some(before) => (
                Stdio::from(before.stdout.take().expect("previous stdout")),
                Stdio::piped(),
            ),
        };
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(group)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {argv:?}: {e}"));
        if i == 0 {
            group = child.id() as i32;
        }
        children.push(child);
    }
    (children, group)
}

/// Waits for `child` to exit, killing it after `limit` (so a hang fails instead of blocking).
pub fn wait_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{:?} did not exit within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Reads `r` to its end on a thread of its own, so that a pipe never fills while the test
/// waits for something else.
pub fn read_all(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Runs one command with `input` on stdin and returns its output.
pub fn run(argv: &[String], input: &[u8]) -> Output {
    pipeline(&[argv.to_vec()], Some(input)).remove(0)
}

/// Builds an argv from a binary name and string arguments.
pub fn cmd(name: &str, args: &[&str]) -> Vec<String> {
    std::iter::once(bin(name))
        .chain(args.iter().map(|s| s.to_string()))
        .collect()
}

/// `arrivals` as a signal test runs it: a steady open loop (50 requests/s, 16 → 4 tokens) far
/// longer than any test, so that the pipe is mid-run whenever the signal comes.
pub fn endless_arrivals() -> Vec<String> {
    cmd(
        "arrivals",
        &[
            "--rate",
            "50",
            "-n",
            "100000",
            "--input-tokens",
            "16",
            "--output-tokens",
            "4",
        ],
    )
}

/// `arrivals`' closed loop of `n` requests all in flight at once (8-token prompts,
/// `output_tokens` each), with `edit` applied to every request record: how a test gives the
/// requests of one schedule their own lengths, headers or bodies.
pub fn closed_schedule(
    n: u64,
    output_tokens: u64,
    mut edit: impl FnMut(&mut serde_json::Value),
) -> Vec<u8> {
    let n = n.to_string();
    let tokens = output_tokens.to_string();
    let args = [
        "--concurrency",
        n.as_str(),
        "-n",
        n.as_str(),
        "--input-tokens",
        "8",
        "--output-tokens",
        tokens.as_str(),
    ];
    let out = run(&cmd("arrivals", &args), b"");
    assert_ok(&out, "arrivals");
    let mut text = Vec::new();
    for mut rec in records(&out.stdout) {
        if rec["type"] == "request" {
            edit(&mut rec);
        }
        serde_json::to_writer(&mut text, &rec).expect("encode a record");
        text.push(b'\n');
    }
    text
}

/// Parses NDJSON text into JSON values.
pub fn records(bytes: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(bytes)
        .expect("utf-8 output")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .collect()
}

/// Records of one type.
pub fn of_type<'a>(recs: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    recs.iter().filter(|r| r["type"] == t).collect()
}

/// Asserts a process succeeded, showing its stderr if not.
pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed with {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts a `fire` run exited 1 because no request it sent succeeded, showing its stderr if
/// not.
pub fn assert_none_succeeded(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(stderr.contains("succeeded"), "{what}: {stderr}");
}

/// A loopback port that nothing listens on (bound, then released).
pub fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Reads all of a child's stdout with a deadline (for tests that signal the child).
pub fn read_until_exit(mut child: Child, limit: Duration) -> (Output, bool) {
    let start = Instant::now();
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut v = vec![];
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let mut timed_out = false;
    while child.try_wait().expect("try_wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            timed_out = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = child.wait_with_output().expect("wait");
    out.stdout = reader.join().expect("reader");
    (out, timed_out)
}

/// A tiny HTTP server on a free loopback port that answers every request with the same fixed
/// bytes (whatever the path), then closes the connection; or, when silent, reads requests and
/// never answers. It lets tests provoke the failures a real server rarely shows (a cut body, a
/// broken stream) without depending on the simulated server's options.
pub struct RawServer {
    /// Base URL, e.g. `http://127.0.0.1:41234/v1`.
    pub url: String,
    addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl RawServer {
    /// Answers every request with `response` (status line, headers and body, as sent).
    pub fn start(response: impl Into<Vec<u8>>) -> RawServer {
        Self::spawn(Some(std::sync::Arc::new(response.into())))
    }

    /// Accepts connections and reads requests but never answers.
    pub fn silent() -> RawServer {
        Self::spawn(None)
    }

    fn spawn(response: Option<std::sync::Arc<Vec<u8>>>) -> RawServer {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind raw server");
        let addr = listener.local_addr().expect("raw server address");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let response = response.clone();
                let stopped = stopped.clone();
                std::thread::spawn(move || {
                    if read_request(&mut conn).is_none() {
                        return;
                    }
                    match response {
                        Some(bytes) => {
                            let _ = conn.write_all(&bytes);
                            let _ = conn.flush();
                        }
                        None => {
                            while !stopped.load(Ordering::SeqCst) {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                    }
                });
            }
        });
        RawServer {
            url: format!("http://{addr}/v1"),
            addr,
            stop,
        }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = std::net::TcpStream::connect(self.addr);
    }
}

/// Reads one request's head and its `Content-Length` body; `None` if the peer went away.
fn read_request(conn: &mut std::net::TcpStream) -> Option<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if conn.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    conn.read_exact(&mut body).ok()
}

/// An HTTP/1.1 200 response head for an event stream whose end is the connection's close.
pub const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";

/// Sends `sig` to a child (or, negated, to the process group) the test created.
pub fn send_signal(pid_or_group: i32, sig: i32) {
    // SAFETY: kill(2) with a pid this test owns; no memory is involved.
    unsafe {
        libc::kill(pid_or_group, sig);
    }
}

/// A loopback port free now, for a server a test starts on a port it must name.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("local address")
        .port()
}

/// A fresh path in the temporary directory for a test's file, unique per process and `name`.
pub fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("tokenpipe-{}-{name}", std::process::id()))
}

/// Replays sends and completions to find the most requests ever in flight.
pub fn peak_in_flight(events: &[serde_json::Value]) -> i32 {
    let mut edges: Vec<(u64, i32)> = vec![];
    for r in events {
        match r["type"].as_str() {
            Some("sent") => edges.push((r["sent_ns"].as_u64().unwrap(), 1)),
            Some("done") => edges.push((r["at_ns"].as_u64().unwrap(), -1)),
            _ => {}
        }
    }
    edges.sort_by_key(|&(t, d)| (t, d));
    let (mut now, mut peak) = (0, 0);
    for (_, d) in edges {
        now += d;
        peak = peak.max(now);
    }
    peak
}
