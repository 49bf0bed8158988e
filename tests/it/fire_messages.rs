//! What `fire` says when something goes wrong, through the real binaries: each message names
//! what is actually wrong and the remedy that fits it. A clean Ctrl-C of `arrivals | fire` warns
//! of no cut-off line; a certificate refused while `--cacert` was given does not tell the user
//! to give `--cacert`; `https://` to a plain-HTTP port says to use `http://`; a run whose every
//! request failed says which statuses or error kinds it got.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// `arrivals | fire` in one process group, Ctrl-C to the group mid-run, twice over: `arrivals`
/// stops after a whole line, so fire must not warn that the writer was stopped mid-line.
#[test]
fn a_clean_ctrl_c_of_the_pipe_warns_of_no_cut_off_line() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "20"]);
    for round in 0..2 {
        let (children, group) =
            spawn_group(&[endless_arrivals(), cmd("fire", &["--url", &server.url])]);
        let [mut arrivals, mut fire]: [Child; 2] = children.try_into().unwrap();
        let out = read_all(fire.stdout.take().unwrap());
        let err = read_all(fire.stderr.take().unwrap());
        std::thread::sleep(Duration::from_millis(800));
        send_signal(-group, libc::SIGINT);
        let status = wait_within(&mut fire, Duration::from_secs(30));
        let _ = wait_within(&mut arrivals, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        let out = out.join().unwrap();
        assert_eq!(status.code(), Some(130), "round {round}: {err}");
        assert!(err.contains("fire: interrupted"), "round {round}: {err}");
        assert!(!err.contains("cut off"), "round {round}: {err}");
        let recs = records(&out);
        assert!(!of_type(&recs, "done").is_empty(), "round {round}: {err}");
    }
}

/// Certificates made for one test, as PEM files in a temporary directory.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    /// A CA (`ca.pem`) and a server certificate it signed for `names` (`cert.pem`, `key.pem`);
    /// `127.0.0.1` among the names is an IP address name.
    fn signed(tag: &str, names: &[&str]) -> Pki {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let pki = Pki::dir(tag);
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, format!("tokenpipe messages CA {tag}"));
        let ca = ca.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = leaf_params(names).signed_by(&key, &ca, &ca_key).unwrap();
        pki.write(&ca.pem(), &cert.pem(), &key.serialize_pem());
        pki
    }

    /// One self-signed certificate for 127.0.0.1 that is marked as a CA (what `openssl req
    /// -x509` makes by default), both the server's certificate and `ca.pem`.
    fn self_signed_ca(tag: &str) -> Pki {
        use rcgen::{BasicConstraints, IsCa, KeyPair};
        let pki = Pki::dir(tag);
        let key = KeyPair::generate().unwrap();
        let mut params = leaf_params(&["127.0.0.1"]);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        pki.write(&cert.pem(), &cert.pem(), &key.serialize_pem());
        pki
    }

    fn dir(tag: &str) -> Pki {
        let dir = temp_path(&format!("messages-{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        Pki { dir }
    }

    fn write(&self, ca: &str, cert: &str, key: &str) {
        std::fs::write(self.dir.join("ca.pem"), ca).unwrap();
        std::fs::write(self.dir.join("cert.pem"), cert).unwrap();
        std::fs::write(self.dir.join("key.pem"), key).unwrap();
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn leaf_params(names: &[&str]) -> rcgen::CertificateParams {
    use rcgen::{CertificateParams, SanType};
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    for name in names {
        params.subject_alt_names.push(match name.parse() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName((*name).try_into().unwrap()),
        });
    }
    params
}

/// simserve serving https with `pki`'s certificate; killed on drop.
struct TlsServer {
    child: Child,
    url: String,
}

impl TlsServer {
    fn start(pki: &Pki) -> TlsServer {
        let mut child = Command::new(bin("simserve"))
            .args(["--port", "0", "--ttft-ms", "1", "--itl-ms", "1"])
            .args(["--tls-cert", &pki.path("cert.pem")])
            .args(["--tls-key", &pki.path("key.pem")])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start simserve");
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .expect("read simserve url");
        let url = url.trim().to_string();
        assert!(url.starts_with("https://127.0.0.1:"), "{url}");
        TlsServer { child, url }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two requests, one at a time, of 4 tokens each.
fn two_requests() -> Vec<u8> {
    let out = run(
        &cmd(
            "arrivals",
            &["--concurrency", "1", "-n", "2", "--output-tokens", "4"],
        ),
        b"",
    );
    assert_ok(&out, "arrivals");
    out.stdout
}

/// fire on two requests against `url` (model given: no discovery) with `flags`; asserts every
/// request failed to connect and returns their `error`s with fire's stderr.
fn refused(url: &str, flags: &[&str]) -> (Vec<String>, String) {
    let mut argv = cmd("fire", &["--url", url, "--model", "m"]);
    argv.extend(flags.iter().map(|f| f.to_string()));
    let out = run(&argv, &two_requests());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_none_succeeded(&out, "fire");
    let recs = records(&out.stdout);
    let errors: Vec<String> = of_type(&recs, "done")
        .iter()
        .map(|d| {
            assert_eq!(d["error_kind"], "connect", "{d}");
            d["error"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(errors.len(), 2, "{stderr}");
    (errors, stderr)
}

#[test]
fn a_ca_certificate_served_as_its_own_is_named_even_with_cacert() {
    let pki = Pki::self_signed_ca("ca-as-leaf");
    let server = TlsServer::start(&pki);
    let (errors, stderr) = refused(&server.url, &["--cacert", &pki.path("ca.pem")]);
    for e in &errors {
        assert!(
            e.contains("presents a CA certificate as its own")
                && e.contains("serve a certificate signed by that CA"),
            "{e}"
        );
        assert!(!e.contains("give fire its CA"), "{e}");
    }
    assert!(stderr.contains("2 × connect"), "{stderr}");
}

#[test]
fn a_certificate_refused_under_cacert_says_what_the_file_lacks() {
    let server_pki = Pki::signed("server", &["127.0.0.1"]);
    let other = Pki::signed("other", &["127.0.0.1"]);
    let server = TlsServer::start(&server_pki);
    let ca = other.path("ca.pem");
    let (errors, _) = refused(&server.url, &["--cacert", &ca]);
    for e in &errors {
        assert!(
            e.contains(&format!("not signed by a CA in --cacert {ca}")),
            "{e}"
        );
        assert!(!e.contains("give fire its CA"), "{e}");
    }
}

#[test]
fn a_certificate_for_another_name_lists_the_names_it_has() {
    let pki = Pki::signed("name", &["gpu-1.example"]);
    let server = TlsServer::start(&pki);
    let (errors, _) = refused(&server.url, &["--cacert", &pki.path("ca.pem")]);
    for e in &errors {
        assert!(
            e.contains("is not valid for 127.0.0.1") && e.contains("gpu-1.example"),
            "{e}"
        );
        assert!(!e.contains("--cacert"), "{e}");
    }
}

#[test]
fn https_to_a_plain_http_port_says_to_use_http() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let https = server.url.replacen("http://", "https://", 1);
    let want = "this port speaks plain HTTP: use http://";
    // The model discovery's GET fails first, on stderr.
    let out = run(&cmd("fire", &["--url", &https]), &two_requests());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(want), "{stderr}");
    assert!(!stderr.contains("InvalidContentType"), "{stderr}");
    // With a model given, every request's `error` says it.
    let (errors, _) = refused(&https, &[]);
    for e in &errors {
        assert!(e.contains(want), "{e}");
        assert!(!e.contains("InvalidContentType"), "{e}");
    }
}

/// A server that answers every request with `status` and an HTML page.
fn html_server(status: &str) -> RawServer {
    let page = "<html><body><h1>Welcome to nginx!</h1></body></html>";
    RawServer::start(format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    ))
}

fn three_requests_to(url: &str) -> Output {
    let out = run(
        &cmd(
            "arrivals",
            &["--rate", "100", "-n", "3", "--output-tokens", "4"],
        ),
        b"",
    );
    assert_ok(&out, "arrivals");
    run(&cmd("fire", &["--url", url, "--model", "m"]), &out.stdout)
}

#[test]
fn a_run_whose_requests_all_failed_says_what_it_got() {
    let not_found = html_server("404 Not Found");
    let out = three_requests_to(&not_found.url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("fire: none of the 3 requests sent succeeded: 3 × HTTP 404 Not Found\n"),
        "{stderr}"
    );
    let page = html_server("200 OK");
    let out = three_requests_to(&page.url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "fire: none of the 3 requests sent succeeded: 3 × HTTP 200 OK but not an event stream\n"
        ),
        "{stderr}"
    );
}
