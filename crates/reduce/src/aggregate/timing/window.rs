//! The measured window of a run: which stretch of the run clock its summary reports on, chosen
//! from the phases `arrivals` marked or from reduce's `--warmup`/`--measure`, and the counts
//! its throughputs are computed from. docs/metrics.md ("Windows") states the straddle rule
//! this file implements: a request belongs to the window it was sent in, and is measured whole.

use super::span::RunSpan;
use crate::error::WindowError;
use crate::request::RequestResult;
use tokenpipe_format::vocab::WARMUP_BATCHES;
use tokenpipe_format::{Header, MeasuredWindow, Phase, Summary, Token};

const NS_PER_S: f64 = 1e9;

/// A stretch `[start_ns, end_ns)` of the run clock; `end_ns` `None` runs to the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The phase's name, or `manual` for `--warmup`/`--measure`.
    pub name: String,
    /// Where it begins, ns from the run start.
    pub start_ns: u64,
    /// Where it ends (exclusive).
    pub end_ns: Option<u64>,
    /// Where the run's own t = 0 lies on this clock: 0, except on the merged clock of a
    /// sharded run. Reported positions are taken from here.
    pub origin_ns: u64,
}

impl Window {
    /// The same window on a clock whose zero lies `ns` earlier (the merged clock of a sharded
    /// run).
    pub fn shifted(&self, ns: u64) -> Window {
        Window {
            name: self.name.clone(),
            start_ns: self.start_ns.saturating_add(ns),
            end_ns: self.end_ns.map(|e| e.saturating_add(ns)),
            origin_ns: self.origin_ns.saturating_add(ns),
        }
    }

    /// Whether a stamp falls inside.
    pub fn contains(&self, at_ns: u64) -> bool {
        at_ns >= self.start_ns && self.end_ns.is_none_or(|end| at_ns < end)
    }

    /// Whether a request belongs to the window: it was sent in it (a request never sent is
    /// placed by its `done`). Extras that want the summary's population ask this.
    pub fn admits(&self, r: &RequestResult) -> bool {
        r.sent_ns.or(r.done_ns).is_none_or(|t| self.contains(t))
    }
}

/// How the command line chose each run's window.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WindowChoice {
    /// The `measure` phase when the run marks one, else the whole run.
    #[default]
    Default,
    /// The whole run (`--phase all`).
    All,
    /// A phase the run must mark (`--phase NAME`).
    Phase(String),
    /// `--warmup`/`--measure`: from `warmup_ns` for `measure_ns` (to the end when `None`).
    Manual {
        /// Left out at the start.
        warmup_ns: u64,
        /// Measured after it.
        measure_ns: Option<u64>,
    },
}

impl WindowChoice {
    /// The window of the run that `header` starts, or `None` for the whole run. A phase the
    /// run does not mark, or unreadable phases, are an error naming what the run has.
    pub fn resolve(&self, header: &Header) -> Result<Option<Window>, WindowError> {
        match self {
            WindowChoice::All => Ok(None),
            WindowChoice::Manual {
                warmup_ns,
                measure_ns,
            } => Ok(Some(Window {
                name: "manual".into(),
                start_ns: *warmup_ns,
                end_ns: measure_ns.map(|m| warmup_ns.saturating_add(m)),
                origin_ns: 0,
            })),
            WindowChoice::Default => Ok(phases(header)?
                .into_iter()
                .find(|p| p.name == "measure")
                .map(from_phase)),
            WindowChoice::Phase(name) => {
                let phases = phases(header)?;
                if let Some(p) = phases.iter().find(|p| &p.name == name) {
                    return Ok(Some(from_phase(p.clone())));
                }
                let phase = name.clone();
                Err(if phases.is_empty() {
                    WindowError::NoPhases { phase }
                } else {
                    WindowError::NoSuchPhase {
                        phase,
                        marked: phases.into_iter().map(|p| p.name).collect(),
                    }
                })
            }
        }
    }
}

impl WindowChoice {
    /// The warm-up batches of the run that `header` starts (arrivals' `warmup_batches`
    /// parameter, the schedule's discarded llama-benchy run), left out of every figure unless
    /// `--phase all`; `None` when it has none. `origin_ns` is where the run's t = 0 lies on
    /// the clock its events are read on.
    pub fn warmup(&self, header: &Header, origin_ns: u64) -> Option<WarmupBatches> {
        let batches = header
            .param(WARMUP_BATCHES)
            .and_then(serde_json::Value::as_u64)
            .filter(|&n| n > 0)?;
        (*self != WindowChoice::All).then_some(WarmupBatches {
            batches,
            origin_ns,
            left_out: 0,
        })
    }
}

/// Leaves out the requests of a batch run's first batches, llama-benchy's discarded warm-up
/// run: a request of batch `b < batches` belongs to no figure. The rest is the measured window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarmupBatches {
    /// Batches `0..batches` are the warm-up.
    pub batches: u64,
    /// Where the run's own t = 0 lies on the clock its events are read on.
    pub origin_ns: u64,
    /// Requests left out so far.
    left_out: u64,
}

/// The window's name in the summary when the warm-up batches were left out.
pub const AFTER_WARMUP: &str = "after_warmup";

impl WarmupBatches {
    /// Whether `r` is a warm-up request (counted when it is).
    pub fn leaves_out(&mut self, r: &RequestResult) -> bool {
        let out = r.grouping.batch.is_some_and(|b| b < self.batches);
        self.left_out += u64::from(out);
        out
    }

    /// Records the measured window, from the first measured send to the last measured `done`,
    /// and counts the warm-up's requests among those outside it.
    pub fn apply(&self, span: &RunSpan, s: &mut Summary) {
        let at = |ns: Option<u64>| ns.unwrap_or(0).saturating_sub(self.origin_ns) as f64 / NS_PER_S;
        if s.window.is_none() {
            s.window = Some(MeasuredWindow {
                name: AFTER_WARMUP.into(),
                start_s: at(span.measured.first_sent_ns),
                end_s: at(span.measured.last_done_ns.or(span.measured.first_sent_ns)),
            });
        }
        let outside = s.requests_outside_window.unwrap_or(0);
        s.requests_outside_window = Some(outside.saturating_add(self.left_out));
    }
}

fn from_phase(p: Phase) -> Window {
    Window {
        name: p.name,
        start_ns: p.start_ns,
        end_ns: p.end_ns,
        origin_ns: 0,
    }
}

/// The phases in the header chain (arrivals' `phases` parameter); none when absent.
fn phases(header: &Header) -> Result<Vec<Phase>, WindowError> {
    match header.param("phases") {
        None | Some(serde_json::Value::Null) => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(WindowError::Phases),
    }
}

/// Follows the stamps of a run and lets its summary count only the window's requests. Keeps
/// counts, not requests.
#[derive(Debug)]
pub struct WindowCounter {
    window: Window,
    outside: u64,
    /// `tokens` of token events stamped in the window.
    tokens: u64,
    /// Requests whose ok `done` is stamped in the window, and their prompt tokens.
    ok_done: u64,
    ok_done_input_tokens: u64,
}

impl WindowCounter {
    /// A counter for `window`.
    pub fn new(window: Window) -> Self {
        WindowCounter {
            window,
            outside: 0,
            tokens: 0,
            ok_done: 0,
            ok_done_input_tokens: 0,
        }
    }

    /// Counts a token event toward the window's throughput when it is stamped inside.
    pub fn token(&mut self, t: &Token) {
        if self.window.contains(t.at_ns) {
            self.tokens = self.tokens.saturating_add(u64::from(t.tokens));
        }
    }

    /// Notes a request's `done`, and says whether its latencies and counts belong to the
    /// summary (sent in the window).
    pub fn admit(&mut self, r: &RequestResult) -> bool {
        if r.ok && r.done_ns.is_some_and(|d| self.window.contains(d)) {
            self.ok_done += 1;
            self.ok_done_input_tokens = self
                .ok_done_input_tokens
                .saturating_add(r.input_tokens.unwrap_or(0));
        }
        let inside = self.window.admits(r);
        if !inside {
            self.outside += 1;
        }
        inside
    }

    /// Replaces the summary's whole-run duration and throughputs with the window's, cut to the
    /// run's activity (`span`), and records the window.
    pub fn apply(&self, span: &RunSpan, s: &mut Summary) {
        let (start, end) = span
            .measured_span(Some(&self.window))
            .unwrap_or((self.window.start_ns, self.window.start_ns));
        let duration_ns = end - start;
        let per_s = |x: u64| {
            if duration_ns == 0 {
                0.0
            } else {
                x as f64 * NS_PER_S / duration_ns as f64
            }
        };
        s.duration_s = duration_ns as f64 / NS_PER_S;
        s.request_throughput_per_s = per_s(self.ok_done);
        s.output_throughput_tokens_per_s = per_s(self.tokens);
        s.total_throughput_tokens_per_s =
            per_s(self.tokens.saturating_add(self.ok_done_input_tokens));
        s.window = Some(MeasuredWindow {
            name: self.window.name.clone(),
            start_s: start.saturating_sub(self.window.origin_ns) as f64 / NS_PER_S,
            end_s: end.saturating_sub(self.window.origin_ns) as f64 / NS_PER_S,
        });
        s.requests_outside_window = Some(self.outside);
    }
}
