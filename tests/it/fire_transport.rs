//! fire's transport end to end: https (trusted by --cacert, refused without it, accepted by
//! --insecure), HTTP/2 over h2c and over TLS, and pre-connect, against simserve serving TLS and
//! HTTP/2. Certificates are made at test time (a CA and a server certificate for 127.0.0.1).
//! simserve's --log-connections shows, from the server's side, how many connections fire
//! opened, with which protocol, and when (on the monotonic clock of fire's header).

use crate::common;
use common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

const TTFT_MS: f64 = 50.0;
const ITL_MS: f64 = 10.0;

/// A test CA and a server certificate it signed, as PEM files in a temporary directory.
struct Certs {
    dir: PathBuf,
}

impl Certs {
    fn make(name: &str) -> Certs {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};
        let dir = temp_path(&format!("transport-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, format!("tokenpipe test CA {name}"));
        let ca = ca.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let mut server = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        server
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let cert = server.signed_by(&key, &ca, &ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
        Certs { dir }
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }
}

impl Drop for Certs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A simserve with --log-connections, whose stderr lines are collected.
struct Sim {
    child: Child,
    url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Sim {
    fn start(extra: &[&str]) -> Sim {
        let mut child = Command::new(bin("simserve"))
            .args(["--port", "0", "--log-connections"])
            .args(["--ttft-ms", "50", "--itl-ms", "10"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start simserve");
        let mut url = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut url)
            .expect("read simserve url");
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = log.clone();
        let stderr = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        Sim {
            child,
            url: url.trim().to_string(),
            log,
        }
    }

    /// The accepted connections so far: (accept instant in monotonic ns, protocol).
    fn connections(&self) -> Vec<(u64, String)> {
        // The log thread may be a line behind the server: give it a moment.
        std::thread::sleep(std::time::Duration::from_millis(100));
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter_map(|l| {
                let rest = l.strip_prefix("simserve: connection ")?;
                let (_, after_at) = rest.split_once(" at ")?;
                let (ns, protocol) = after_at.split_once(" ns: ")?;
                Some((ns.parse().ok()?, protocol.to_string()))
            })
            .collect()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A closed-loop schedule: `n` requests of 10 tokens, `c` in flight.
fn schedule(c: usize, n: usize) -> Vec<u8> {
    let (c, n) = (c.to_string(), n.to_string());
    let out = run(
        &cmd(
            "arrivals",
            &["--concurrency", &c, "-n", &n, "--output-tokens", "10"],
        ),
        b"",
    );
    assert_ok(&out, "arrivals");
    out.stdout
}

/// Runs fire on `schedule` against `url` with `flags` (and `env`); returns its output.
fn fire(url: &str, flags: &[&str], env: &[(&str, &str)], schedule: &[u8]) -> std::process::Output {
    let mut argv = cmd("fire", &["--url", url, "--model", "m"]);
    argv.extend(flags.iter().map(|s| s.to_string()));
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fire");
    let mut stdin = child.stdin.take().expect("stdin");
    let bytes = schedule.to_vec();
    std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &bytes));
    child.wait_with_output().expect("wait for fire")
}

/// Asserts every request succeeded with all its 10 tokens; returns reduce's summary.
fn all_ok(out: &std::process::Output, n: usize) -> serde_json::Value {
    assert_ok(out, "fire");
    let events = records(&out.stdout);
    let done = of_type(&events, "done");
    assert_eq!(done.len(), n);
    for d in &done {
        assert_eq!(d["ok"], true, "{d}");
    }
    assert_eq!(of_type(&events, "token").len(), n * 10);
    let reduced = run(&cmd("reduce", &[]), &out.stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    of_type(&recs, "summary")[0].clone()
}

fn near(s: &serde_json::Value, field: &str, want: f64, tol: f64) {
    let got = s[field].as_f64().unwrap_or(f64::NAN);
    assert!(
        (got - want).abs() <= tol,
        "{field} = {got}, want {want} ± {tol}"
    );
}

fn tls_flags(certs: &Certs) -> [String; 4] {
    [
        "--tls-cert".into(),
        certs.path("cert.pem"),
        "--tls-key".into(),
        certs.path("key.pem"),
    ]
}

fn sim_tls(certs: &Certs) -> Sim {
    let flags = tls_flags(certs);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let sim = Sim::start(&flags);
    assert!(sim.url.starts_with("https://127.0.0.1:"), "{}", sim.url);
    sim
}

#[test]
fn https_is_trusted_with_cacert_and_refused_without_it() {
    let certs = Certs::make("trust");
    let other = Certs::make("other");
    let sim = sim_tls(&certs);
    let sched = schedule(4, 8);

    let trusted = fire(&sim.url, &["--cacert", &certs.path("ca.pem")], &[], &sched);
    let s = all_ok(&trusted, 8);
    near(&s, "ttft_p50_ms", TTFT_MS, 2.0);
    let header = &records(&trusted.stdout)[0];
    assert_eq!(header["params"]["transport"]["trust"], "cacert");

    // The "system" roots are another CA's (SSL_CERT_FILE), so the server's is unknown.
    let refused = fire(
        &sim.url,
        &[],
        &[
            ("SSL_CERT_FILE", &other.path("ca.pem")),
            ("SSL_CERT_DIR", "/nonexistent"),
        ],
        &sched,
    );
    let events = records(&refused.stdout);
    let done = of_type(&events, "done");
    assert_eq!(
        done.len(),
        8,
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    for d in done {
        assert_eq!(d["ok"], false);
        assert_eq!(d["error_kind"], "connect", "{d}");
        let message = d["error"].as_str().unwrap_or_default();
        assert!(
            message.contains("not trusted") && message.contains("--cacert"),
            "{message}"
        );
    }
    assert!(sim
        .connections()
        .iter()
        .any(|(_, p)| p.contains("TLS handshake failed")));
}

#[test]
fn insecure_accepts_a_self_signed_server_and_warns() {
    let certs = Certs::make("insecure");
    let sim = sim_tls(&certs);
    let out = fire(&sim.url, &["--insecure"], &[], &schedule(2, 4));
    all_ok(&out, 4);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: --insecure"), "{stderr}");
}

/// HTTP/2 carries every request on `connections` connections and keeps the server's timing.
fn http2_run(sim: &Sim, extra: &[&str], connections: usize, protocol: &str) {
    let mut flags = vec!["--http2"];
    flags.extend_from_slice(extra);
    let out = fire(&sim.url, &flags, &[], &schedule(16, 48));
    let s = all_ok(&out, 48);
    // 48 streams through one or two connections on a shared two-core machine: the median
    // first token is within a few ms of the server's 50 (it read 53 once while other builds
    // ran); a client that broke the timing would be tens of ms off.
    near(&s, "ttft_p50_ms", TTFT_MS, 5.0);
    near(&s, "itl_p50_ms", ITL_MS, 1.0);
    let seen = sim.connections();
    assert_eq!(seen.len(), connections, "{seen:?}");
    assert!(seen.iter().all(|(_, p)| p == protocol), "{seen:?}");
    let header = &records(&out.stdout)[0];
    assert_eq!(header["params"]["transport"]["http"], "2");
}

#[test]
fn http2_over_h2c_multiplexes_on_the_connections_asked_for() {
    http2_run(&Sim::start(&[]), &[], 1, "plain");
    http2_run(&Sim::start(&[]), &["--connections", "3"], 3, "plain");
}

#[test]
fn http2_over_tls_is_chosen_by_alpn() {
    let certs = Certs::make("h2");
    let ca = certs.path("ca.pem");
    http2_run(&sim_tls(&certs), &["--cacert", &ca], 1, "tls, alpn h2");
}

/// fire's run clock origin, on the monotonic clock (from its header).
fn origin_ns(out: &std::process::Output) -> u64 {
    records(&out.stdout)[0]["monotonic_origin_ns"]
        .as_u64()
        .expect("monotonic_origin_ns in fire's header")
}

#[test]
fn preconnect_opens_every_connection_before_the_clock_starts() {
    // Over TLS the order is causal: a handshake completes only after the server accepted the
    // connection, so a connection fire finished opening before its clock started was accepted
    // (and stamped by simserve) before that instant too. (A plain TCP connect completes in the
    // kernel's backlog, before the server's accept runs.)
    let certs = Certs::make("preconnect");
    let ca = certs.path("ca.pem");
    let n = 12;
    let sched = schedule(n, 2 * n);

    // A closed loop pre-connects by default: all N connections exist before the run starts,
    // and the run opens no other.
    let sim = sim_tls(&certs);
    let out = fire(&sim.url, &["--cacert", &ca], &[], &sched);
    all_ok(&out, 2 * n);
    let origin = origin_ns(&out);
    let seen = sim.connections();
    let before = seen.iter().filter(|(at, _)| *at < origin).count();
    assert_eq!(before, n, "origin {origin}, connections {seen:?}");
    assert_eq!(seen.len(), n, "{seen:?}");
    let header = &records(&out.stdout)[0];
    assert_eq!(header["params"]["transport"]["preconnected"], n as u64);

    // Without it, the first wave connects after the clock started.
    let sim = sim_tls(&certs);
    let out = fire(&sim.url, &["--cacert", &ca, "--no-preconnect"], &[], &sched);
    all_ok(&out, 2 * n);
    let origin = origin_ns(&out);
    let seen = sim.connections();
    assert!(seen.len() >= n, "{seen:?}");
    assert!(
        seen.iter().all(|(at, _)| *at > origin),
        "origin {origin}, {seen:?}"
    );
}

#[test]
fn simserve_refuses_a_key_that_is_not_pem() {
    let dir = Certs::make("badkey");
    let bogus = dir.dir.join("bogus.pem");
    std::fs::write(&bogus, "not a key\n").unwrap();
    let out = Command::new(bin("simserve"))
        .args([
            "--port",
            "0",
            "--tls-cert",
            &dir.path("cert.pem"),
            "--tls-key",
        ])
        .arg(Path::new(&bogus))
        .output()
        .expect("run simserve");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bogus.pem") && stderr.contains("--tls-key"),
        "{stderr}"
    );
}

/// A server that, like llama.cpp's llama-server, says keep-alive but closes the connection
/// after each streamed answer. It reads the next request before it closes, so a client that
/// reuses the connection always loses the race (the real server loses it now and then).
/// Returns its URL and the number of connections it accepted.
fn closes_after_each_stream() -> (String, Arc<Mutex<usize>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let accepted = Arc::new(Mutex::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            *count.lock().unwrap() += 1;
            std::thread::spawn(move || {
                let mut buf = [0u8; 65536];
                // One read holds the whole small request.
                if conn.read(&mut buf).unwrap_or(0) == 0 {
                    return;
                }
                let chunk = |s: &str| format!("{:x}\r\n{s}\r\n", s.len());
                let event = "data: {\"choices\":[{\"text\":\"hi\",\"index\":0,\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                     Transfer-Encoding: chunked\r\nKeep-Alive: timeout=5, max=100\r\n\r\n{}{}0\r\n\r\n",
                    chunk(event),
                    chunk("data: [DONE]\n\n")
                );
                let _ = conn.write_all(answer.as_bytes());
                // The next request on this connection is read, then the connection closed.
                let _ = conn.read(&mut buf);
            });
        }
    });
    (url, accepted)
}

#[test]
fn a_kept_alive_connection_the_server_closed_is_sent_on_again() {
    let (url, accepted) = closes_after_each_stream();
    let schedule = run(
        &cmd(
            "arrivals",
            &["--concurrency", "1", "-n", "4", "--output-tokens", "1"],
        ),
        b"",
    );
    assert_ok(&schedule, "arrivals");
    let out = fire(&url, &["--quiet"], &[], &schedule.stdout);
    assert_ok(&out, "fire");
    let events = records(&out.stdout);
    let done = of_type(&events, "done");
    assert_eq!(done.len(), 4);
    for d in &done {
        assert_eq!(d["ok"], true, "{d}");
    }
    // Requests 1 to 3 each found their connection closed and went on a new one.
    assert!(*accepted.lock().unwrap() >= 4);
}
