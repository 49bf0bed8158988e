//! The documentation's examples run as written, so that none can rot: every `sh` block of the
//! README's "Use" section, in order, in one bash (it starts its own servers, whose fixed ports
//! are replaced by free ones), and the examples at the end of each tool's page ("With other
//! tools" in docs/arrivals.md, docs/fire.md, docs/reduce.md, docs/table.md, docs/simserve.md,
//! docs/sweep.md), each page in one bash with `$URL` a `simserve` started for it. Each script
//! runs in an empty directory with this build's tools first on PATH.

use crate::common;
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

/// Runs `script` under `set -euo pipefail` in a fresh directory named after `name`, in its own
/// process group (killed afterwards, with the servers it left running); returns stdout, and
/// fails the test with both outputs if the script fails or runs past `limit`.
fn run_script(name: &str, script: &str, limit: Duration) -> String {
    let dir = temp_path(&format!("examples-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bins = Path::new(&bin("fire")).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // stderr to a file: servers the script starts in the background keep it open.
    let stderr_path = dir.join("stderr.log");
    let child = Command::new("setsid")
        .args(["bash", "-c", &format!("set -euo pipefail\n{script}")])
        .current_dir(&dir)
        .env("PATH", path)
        .env_remove("NO_COLOR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("run bash");
    let pid = child.id() as i32;
    let (out, timed_out) = read_until_exit(child, limit);
    send_signal(-pid, libc::SIGTERM);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        !timed_out,
        "{name}: ran past {limit:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        out.status.success(),
        "{name}: the examples failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    stdout
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
    let script = format!("URL={}\n{}", server.url, blocks.concat());
    run_script(&page.replace('/', "-"), &script, Duration::from_secs(120))
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
    assert!(out.contains("{\"mean\":"), "{out}");
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
    assert!(out.contains("\"spec_acceptance_length\":"), "{out}");
    assert!(out.contains("\"power_w_mean\":2"), "{out}");
}

#[test]
fn sweep_page() {
    let out = run_page("docs/sweep.md");
    assert!(out.contains("capacity concurrency="), "{out}");
    assert!(out.contains("\"capacity\":"), "{out}");
}

#[test]
fn the_readme_examples_run_as_written() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let blocks = sh_blocks(&readme, "Use");
    assert!(blocks.len() >= 3, "the Use section's sh blocks: {blocks:?}");
    let mut script = blocks.concat();
    // The servers' fixed ports, replaced by free ones.
    for port in ["8000", "8001"] {
        script = script.replace(
            &format!("--port {port}"),
            &format!("--port {}", free_port()),
        );
    }
    let out = run_script("readme", &script, Duration::from_secs(240));
    // What the tour promises: vLLM's block, live intervals, a baseline's ratios.
    assert!(out.contains("Serving Benchmark Result"), "{out}");
    assert!(out.contains(" tok/s, "), "live intervals: {out}");
    assert!(has_ratio(&out), "a baseline's ratio cells: {out}");
    assert!(
        out.contains("Decode throughput, from llama_benchy.tg_tps"),
        "llama-benchy's tables: {out}"
    );
}
