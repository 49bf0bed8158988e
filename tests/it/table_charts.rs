//! End to end through the real binaries: `arrivals | fire | reduce --every 1s | table --format
//! html` (and `--format svg --chart ...`) against simserve, and a check that the HTML page
//! renders in headless Chromium.
//!
//! The Chromium check runs when `$CHROMIUM` names a browser or `chromium`, `chromium-browser`
//! or `google-chrome` is on PATH (Debian: `apt-get install chromium`); otherwise it prints that
//! it was skipped and passes. Run it alone with `cargo test --test table_charts`; it needs no
//! network, display or GPU (`--headless --disable-gpu`).

use crate::common;

use common::{assert_ok, cmd, pipeline, temp_path, Server};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `arrivals | fire | reduce --every 1s --label sim [reduce_extra] | table table_args`.
fn run_to_table(server: &Server, reduce_extra: &[&str], table_args: &[&str]) -> Vec<Output> {
    let mut reduce = vec!["--label", "sim", "--every", "1s"];
    reduce.extend_from_slice(reduce_extra);
    pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--rate",
                    "40",
                    "-n",
                    "30",
                    "--output-tokens",
                    "8",
                    "--seed",
                    "3",
                ],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd("reduce", &reduce),
            cmd("table", table_args),
        ],
        None,
    )
}

fn html_report(server: &Server) -> String {
    let outs = run_to_table(server, &[], &["--format", "html"]);
    for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce", "table"]) {
        assert_ok(o, what);
    }
    String::from_utf8(outs[3].stdout.clone()).unwrap()
}

#[test]
fn html_holds_the_table_and_every_chart_with_data() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let html = html_report(&server);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<meta charset=\"utf-8\">"));
    // One run: no load chart; TTFT and ITL distributions and the timeline.
    assert_eq!(html.matches("<svg").count(), 3, "{html}");
    assert!(html.contains("<th class=\"num\">sim</th>"), "{html}");
    assert!(html.contains("Output token throughput (tok/s)"));
    for external in ["src=", "href=", "@import", "<script"] {
        assert!(!html.contains(external), "refers outside: {external}");
    }
}

#[test]
fn svg_charts_and_the_errors_that_say_what_to_run() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let outs = run_to_table(&server, &[], &["--format", "svg", "--chart", "timeline"]);
    assert_ok(&outs[3], "table");
    let svg = String::from_utf8(outs[3].stdout.clone()).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("Requests in flight"));

    let outs = run_to_table(
        &server,
        &["--no-histograms"],
        &["--format", "svg", "--chart", "itl-cdf"],
    );
    assert_eq!(outs[3].status.code(), Some(2));
    let err = String::from_utf8_lossy(&outs[3].stderr);
    assert!(err.contains("--no-histograms"), "{err}");

    let outs = run_to_table(&server, &[], &["--chart", "load"]);
    assert_eq!(outs[3].status.code(), Some(2), "--chart needs --format svg");
}

/// The browser to render with, if one is installed.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Screenshots `url` at 1000×1400 into `png`; false when the browser did not finish in time.
fn screenshot(browser: &Path, url: &str, png: &Path, profile: &Path) -> bool {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1000,1400")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", browser.display()));
    let start = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24, "PNG too short");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: no chromium on PATH and $CHROMIUM unset");
        return;
    };
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let dir = temp_path("charts-chromium");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, html_report(&server)).unwrap();
    let empty = dir.join("empty.html");
    std::fs::write(&empty, "<!DOCTYPE html><html><body></body></html>").unwrap();

    let shot = dir.join("report.png");
    let blank = dir.join("empty.png");
    let url = |p: &Path| format!("file://{}", p.display());
    assert!(screenshot(
        &browser,
        &url(&page),
        &shot,
        &dir.join("profile-a")
    ));
    assert!(screenshot(
        &browser,
        &url(&empty),
        &blank,
        &dir.join("profile-b")
    ));

    let png = std::fs::read(&shot).expect("chromium wrote no screenshot");
    let blank_png = std::fs::read(&blank).expect("chromium wrote no blank screenshot");
    assert_eq!(png_size(&png), (1000, 1400));
    // A single-colour page compresses to almost nothing; tables and charts do not.
    assert!(png.len() > 20_000, "screenshot is {} bytes", png.len());
    assert!(
        png.len() > 5 * blank_png.len(),
        "screenshot ({} bytes) is not much more than a blank page ({} bytes)",
        png.len(),
        blank_png.len()
    );
    eprintln!("screenshot: {}", shot.display());
    if std::env::var_os("KEEP_SCREENSHOT").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `arrivals --concurrency C | fire | reduce --label sim --meta gpus=G` for each C, the
/// summaries of every run in one stream.
fn concurrency_sweep(server: &Server, loads: &[&str], gpus: &str) -> Vec<u8> {
    let meta = format!("gpus={gpus}");
    let mut stream = Vec::new();
    for c in loads {
        let outs = pipeline(
            &[
                cmd(
                    "arrivals",
                    &["--concurrency", c, "-n", "8", "--output-tokens", "8"],
                ),
                cmd("fire", &["--url", server.url.as_str()]),
                cmd("reduce", &["--label", "sim", "--meta", &meta]),
            ],
            None,
        );
        for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
            assert_ok(o, what);
        }
        stream.extend_from_slice(&outs[2].stdout);
    }
    stream
}

/// The x-axis tick labels of a chart plotters drew, in order: the numbers it centres below an
/// axis (`dy="0.76em" text-anchor="middle"`; captions are centred too, but are words).
fn x_ticks(svg: &str) -> Vec<String> {
    svg.split("<text ")
        .skip(1)
        .filter(|t| t.contains(r#"dy="0.76em" text-anchor="middle""#))
        .filter_map(|t| {
            let (_, rest) = t.split_once('>')?;
            Some(rest.split("</text>").next()?.trim().to_string())
        })
        .filter(|text| text.parse::<f64>().is_ok())
        .collect()
}

#[test]
fn pareto_and_load_charts_of_a_sweep_through_the_real_pipe() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let sweep = concurrency_sweep(&server, &["1", "2", "4"], "2");
    let out = common::run(
        &cmd("table", &["--format", "svg", "--chart", "pareto"]),
        &sweep,
    );
    assert_ok(&out, "table");
    let svg = String::from_utf8(out.stdout).unwrap();
    assert!(
        svg.contains("per GPU (tok/s/GPU)"),
        "--meta gpus=2: per GPU"
    );
    assert!(svg.contains("Pareto frontier"));
    for load in ["c1", "c2", "c4"] {
        assert!(
            svg.contains(&format!("\n{load}\n")),
            "{load} labelled: {svg}"
        );
    }

    // The load chart: a panel per metric over a log₂ axis (ticks at 1, 2, 4 only).
    let out = common::run(
        &cmd("table", &["--format", "svg", "--chart", "load"]),
        &sweep,
    );
    assert_ok(&out, "table");
    let svg = String::from_utf8(out.stdout).unwrap();
    for panel in [
        "Output throughput",
        "Time to first token",
        "Time per output token",
    ] {
        assert!(svg.contains(panel), "{panel}");
    }
    // The x axis' tick labels (centred below it, where the y axis' are right-aligned): the
    // loads themselves, in every panel, never a load between them.
    let ticks = x_ticks(&svg);
    assert_eq!(ticks.len(), 9, "{ticks:?}");
    for panel in ticks.chunks(3) {
        assert_eq!(panel, ["1", "2", "4"], "{ticks:?}");
    }

    // A GPU count that is not a number: the total stays whole, and stderr says why.
    let mut mixed = concurrency_sweep(&server, &["8"], "two");
    mixed.extend_from_slice(&sweep);
    let out = common::run(
        &cmd("table", &["--format", "svg", "--chart", "pareto"]),
        &mixed,
    );
    assert_ok(&out, "table");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("meta gpus=\"two\" is not a positive number"),
        "{err}"
    );
    assert!(err.contains("total throughput is not per GPU"), "{err}");
    let svg = String::from_utf8(out.stdout).unwrap();
    assert!(svg.contains("total output throughput (tok/s)"));
}
