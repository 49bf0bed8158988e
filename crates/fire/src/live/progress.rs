//! The progress view on stderr: what was sent, what ended and how, what is in flight, the
//! recent output rate and the dispatch lag. A thread of its own reads the [`Counters`] ten times
//! a second, so the view costs the network threads nothing.
//!
//! On a terminal it is one line redrawn in place (indicatif). Forced onto something else
//! (`--progress` with stderr to a file or a pipe) it writes a plain `fire: progress:` line once
//! a second, without cursor movement, which reads well in a log. It uses no colour, so
//! `NO_COLOR` holds by itself.

use super::counters::{Counters, Snapshot};
use crate::sync::lock;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::VecDeque;
use std::io::{self, IsTerminal};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the counts are read (and, on a terminal, at most how often the line is redrawn).
const TICK: Duration = Duration::from_millis(100);
/// The window of the "recent" output rate.
const RATE_WINDOW: Duration = Duration::from_secs(2);
/// Ticks between two plain lines (once a second).
const PLAIN_EVERY: u64 = 10;

/// The bar being shown, if any, so that messages printed meanwhile go above it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Prints one line on stderr without tearing the progress view: above it while it is shown,
/// plainly otherwise. Every message `fire` prints during a run should come through here.
pub fn say(line: &str) {
    let bar = lock(&ACTIVE).clone();
    match bar {
        Some(bar) => bar.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

/// Whether to show progress: `--quiet` wins, then `--progress`, else only on a terminal.
pub fn wanted(progress: bool, quiet: bool, stderr_is_terminal: bool) -> bool {
    !quiet && (progress || stderr_is_terminal)
}

/// The running view; [`Progress::finish`] takes it off the screen.
pub struct Progress {
    /// The redrawn line, on a terminal; `None` writes plain lines.
    bar: Option<ProgressBar>,
    stop: Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `counters`; `total` is the schedule's request count, when it says.
    pub fn start(counters: Arc<Counters>, total: Option<u64>) -> io::Result<Self> {
        let bar = io::stderr().is_terminal().then(|| terminal_bar(total));
        if let Some(bar) = &bar {
            *lock(&ACTIVE) = Some(bar.clone());
        }
        let (stop, stopped) = channel::<()>();
        let shown = bar.clone();
        let thread = std::thread::Builder::new()
            .name("fire-progress".into())
            .spawn(move || {
                let mut rate = RecentRate::default();
                for tick in 0u64.. {
                    let now = counters.snapshot();
                    let per_s = rate.push(Instant::now(), now.output_tokens);
                    match &shown {
                        Some(bar) => {
                            bar.set_position(now.ended());
                            bar.set_message(line(&now, per_s));
                        }
                        None if tick % PLAIN_EVERY == 0 => {
                            eprintln!("fire: progress: {}", line(&now, per_s));
                        }
                        None => {}
                    }
                    match stopped.recv_timeout(TICK) {
                        Err(RecvTimeoutError::Timeout) => continue,
                        _ => break,
                    }
                }
            });
        match thread {
            Ok(t) => Ok(Self {
                bar,
                stop,
                thread: Some(t),
            }),
            Err(e) => {
                *lock(&ACTIVE) = None;
                Err(e)
            }
        }
    }

    /// Stops the view and clears its line (the end-of-run counts follow).
    pub fn finish(mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        *lock(&ACTIVE) = None;
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The terminal's line: a bar when the schedule says how many requests it holds.
fn terminal_bar(total: Option<u64>) -> ProgressBar {
    let target = ProgressDrawTarget::stderr_with_hz(10);
    let (template, fallback) = match total {
        Some(_) => (
            "{elapsed:>4} [{bar:20}] {pos}/{len} {wide_msg}",
            ProgressStyle::default_bar(),
        ),
        None => ("{elapsed:>4} {wide_msg}", ProgressStyle::default_spinner()),
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or(fallback)
        .progress_chars("=> ");
    ProgressBar::with_draw_target(total, target).with_style(style)
}

/// The view's text: sent, done by outcome, in flight, recent output rate, dispatch lag p99.
fn line(s: &Snapshot, tokens_per_s: Option<f64>) -> String {
    let mut text = format!("sent {} · ok {}", s.sent, s.ok);
    let failures: Vec<String> = s
        .failures()
        .map(|(k, n)| format!("{}: {n}", k.as_str()))
        .collect();
    if !failures.is_empty() {
        text.push_str(&format!(
            " · failed {} ({})",
            s.failed(),
            failures.join(", ")
        ));
    }
    for (n, what) in [(s.cancelled(), "cancelled"), (s.not_sent(), "not sent")] {
        if n > 0 {
            text.push_str(&format!(" · {what} {n}"));
        }
    }
    text.push_str(&format!(" · in flight {}", s.in_flight));
    if let Some(r) = tokens_per_s {
        text.push_str(&format!(" · {r:.0} tok/s"));
    }
    if let Some(p99) = s.lag_p99_ns {
        text.push_str(&format!(" · lag p99 {:.2} ms", p99 as f64 / 1e6));
    }
    text
}

/// Output tokens per second over the last [`RATE_WINDOW`].
#[derive(Default)]
struct RecentRate {
    samples: VecDeque<(Instant, u64)>,
}

impl RecentRate {
    fn push(&mut self, at: Instant, tokens: u64) -> Option<f64> {
        self.samples.push_back((at, tokens));
        while self
            .samples
            .front()
            .is_some_and(|(t, _)| at.duration_since(*t) > RATE_WINDOW)
        {
            self.samples.pop_front();
        }
        let (t0, n0) = *self.samples.front()?;
        let dt = at.duration_since(t0).as_secs_f64();
        (dt > 0.0).then(|| tokens.saturating_sub(n0) as f64 / dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::ErrorKind;

    #[test]
    fn quiet_wins_then_the_flag_then_the_terminal() {
        assert!(!wanted(true, true, true));
        assert!(wanted(true, false, false));
        assert!(wanted(false, false, true));
        assert!(!wanted(false, false, false));
    }

    #[test]
    fn the_line_keeps_failures_apart_from_the_stopped_run() {
        let s = Snapshot {
            sent: 10,
            ok: 6,
            ended_by_kind: vec![
                (ErrorKind::Timeout, 2),
                (ErrorKind::Cancelled, 1),
                (ErrorKind::NotSent, 4),
            ],
            in_flight: 1,
            lag_p99_ns: Some(1_250_000),
            ..Snapshot::default()
        };
        assert_eq!(
            line(&s, Some(99.6)),
            "sent 10 · ok 6 · failed 2 (timeout: 2) · cancelled 1 · not sent 4 · in flight 1 · 100 tok/s · lag p99 1.25 ms"
        );
        assert_eq!(
            line(&Snapshot::default(), None),
            "sent 0 · ok 0 · in flight 0"
        );
    }

    #[test]
    fn the_rate_is_over_the_recent_window() {
        let mut r = RecentRate::default();
        let t = Instant::now();
        assert_eq!(r.push(t, 0), None);
        assert_eq!(r.push(t + Duration::from_secs(1), 100), Some(100.0));
        // 5 s later the first samples have left the window: only the last 2 s count.
        r.push(t + Duration::from_secs(4), 1_000);
        let rate = r.push(t + Duration::from_secs(5), 1_100).unwrap();
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
    }
}
