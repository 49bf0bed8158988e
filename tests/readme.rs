//! The README's examples run as written: every `sh` block of its "Use" section, in order, in one
//! bash, in an empty directory, with this build's tools first on PATH and the servers on free
//! ports. An example that no longer works fails here, not in a reader's terminal.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The `sh` code blocks of the section headed `heading` (to the next `## `) of a Markdown file.
fn sh_blocks(markdown: &str, heading: &str) -> Vec<String> {
    let section = markdown
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("no section {heading:?}"));
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

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_readme_examples_run_as_written() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let blocks = sh_blocks(&readme, "Use");
    assert!(blocks.len() >= 3, "the Use section's sh blocks: {blocks:?}");
    let mut script = String::from("set -euo pipefail\n");
    for block in &blocks {
        script.push_str(block);
    }
    // The servers' fixed ports, replaced by free ones.
    for port in ["8000", "8001"] {
        script = script.replace(
            &format!("--port {port}"),
            &format!("--port {}", free_port()),
        );
    }
    let dir = temp_path("readme");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bins = Path::new(&bin("fire")).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // stderr to a file: the servers the script starts in the background keep it open.
    let stderr_path = dir.join("stderr.log");
    let child = Command::new("setsid")
        .args(["bash", "-c", &script])
        .current_dir(&dir)
        .env("PATH", path)
        .env_remove("NO_COLOR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("run bash");
    let pid = child.id() as i32;
    let (out, timed_out) = read_until_exit(child, Duration::from_secs(240));
    // Whatever the script left running (its servers), by its process group.
    send_signal(-pid, libc::SIGTERM);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(
        !timed_out,
        "the examples ran past 240 s\n{stdout}\n{stderr}"
    );
    assert!(
        out.status.success(),
        "the README's examples failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    // What the tour promises: vLLM's block, live intervals, a baseline's ratios, llama-benchy's
    // tables, and the files it kept.
    assert!(stdout.contains("Serving Benchmark Result"), "{stdout}");
    assert!(stdout.contains(" tok/s, "), "{stdout}");
    assert!(
        stdout
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_digit() && w[1] == b'x'),
        "a baseline's ratio cells: {stdout}"
    );
    for file in [
        "run.ndjson",
        "plan.ndjson",
        "a.ndjson",
        "b.ndjson",
        "compare.html",
    ] {
        let meta = std::fs::metadata(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(meta.len() > 0, "{file} is empty");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
