//! The examples at the end of each tool's page ("With other tools" in docs/arrivals.md,
//! docs/fire.md, docs/reduce.md, docs/table.md, docs/simserve.md) run as written: each page's
//! `sh` blocks in one bash, in an empty directory, with this build's tools first on PATH and
//! `$URL` a `simserve` started for it, as the README's "Use" section sets it up.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The `sh` code blocks of the section headed `heading` (to the next `## `) of a Markdown file.
fn sh_blocks(markdown: &str, heading: &str) -> Vec<String> {
    let Some(section) = markdown.split("\n## ").find(|s| s.starts_with(heading)) else {
        return vec![];
    };
    let mut blocks = vec![];
    let mut current: Option<String> = None;
    for line in section.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), l) => {
                block.push_str(l);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// Runs `page`'s "With other tools" examples against a fresh `simserve`; returns stdout.
fn run_page(page: &str) -> String {
    let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{page}: {e}"));
    let blocks = sh_blocks(&text, "With other tools");
    assert!(
        !blocks.is_empty(),
        "{page} has no sh block under \"With other tools\""
    );
    let server = Server::start(&["--profile", "small-gpu"]);
    let mut script = format!("set -euo pipefail\nURL={}\n", server.url);
    for block in &blocks {
        script.push_str(block);
    }
    let name = page.replace('/', "-");
    let dir = temp_path(&format!("docs-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bins = Path::new(&bin("fire")).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let stderr_path = dir.join("stderr.log");
    let child = Command::new("setsid")
        .args(["bash", "-c", &script])
        .current_dir(&dir)
        .env("PATH", path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("run bash");
    let pid = child.id() as i32;
    let (out, timed_out) = read_until_exit(child, Duration::from_secs(120));
    send_signal(-pid, libc::SIGTERM);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!timed_out, "{page}: ran past 120 s\n{stdout}\n{stderr}");
    assert!(
        out.status.success(),
        "{page}: the examples failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    stdout
}

/// Whether `text` holds a ratio cell of `table --baseline` (`0.97x`).
fn has_ratio(text: &str) -> bool {
    text.as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_digit() && w[1] == b'x')
}

#[test]
fn arrivals_page() {
    let out = run_page("docs/arrivals.md");
    assert!(
        out.contains("\"n\":40") || out.contains("\"n\": 40"),
        "{out}"
    );
}

#[test]
fn fire_page() {
    let out = run_page("docs/fire.md");
    assert!(out.contains("\"kept_up\":"), "{out}");
    assert!(out.contains("completions") && out.contains("chat"), "{out}");
}

#[test]
fn reduce_page() {
    let out = run_page("docs/reduce.md");
    assert!(out.contains(" tok/s"), "{out}");
    assert!(
        out.contains("\"runs\":3"),
        "the group of three repeats: {out}"
    );
}

#[test]
fn table_page() {
    let out = run_page("docs/table.md");
    assert!(has_ratio(&out), "a baseline's ratio cells: {out}");
    assert!(out.contains("| before"), "the Markdown table: {out}");
}

#[test]
fn simserve_page() {
    let out = run_page("docs/simserve.md");
    assert!(out.contains("\"error_kind\":\"http\""), "{out}");
    assert!(out.contains("\"server_generation_tokens\":128"), "{out}");
}
