//! The instants that bound a run: its first send, its last `done` and its last event of any
//! kind. The [`RunReducer`](crate::RunReducer) keeps them once, for every request of the run and
//! for the requests its measured window admits, and hands them to each aggregator's `finish`, so
//! every figure divided by a duration divides by the same one.

use super::window::Window;
use crate::request::RequestResult;

/// The bounding instants of one population of requests, ns on the run clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bounds {
    /// The earliest `sent`.
    pub first_sent_ns: Option<u64>,
    /// The latest `done`.
    pub last_done_ns: Option<u64>,
    /// The latest stamp of any kind: a send, a `done`, a token, a request's last event.
    pub last_event_ns: Option<u64>,
}

impl Bounds {
    /// Takes in a request's stamps.
    pub fn request(&mut self, r: &RequestResult) {
        if let Some(sent) = r.sent_ns {
            self.first_sent_ns = Some(self.first_sent_ns.map_or(sent, |t| t.min(sent)));
            self.event(sent);
        }
        if let Some(done) = r.done_ns {
            self.last_done_ns = Some(self.last_done_ns.map_or(done, |t| t.max(done)));
            self.event(done);
        }
        if let Some(t) = r.last_event_ns {
            self.event(t);
        }
    }

    /// Takes in a stamp that ends nothing (a token).
    pub fn event(&mut self, at_ns: u64) {
        self.last_event_ns = Some(self.last_event_ns.map_or(at_ns, |t| t.max(at_ns)));
    }

    /// First send → last `done`, or 0 when either is missing.
    pub fn duration_ns(&self) -> u64 {
        match (self.first_sent_ns, self.last_done_ns) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        }
    }
}

/// A run's bounds, for the whole run and for its measured window's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunSpan {
    /// Every request and token of the run.
    pub whole: Bounds,
    /// The requests the measured window admits (all of them without a window).
    pub measured: Bounds,
}

impl RunSpan {
    /// Takes in a token's stamp.
    pub fn token(&mut self, at_ns: u64) {
        self.whole.event(at_ns);
    }

    /// Takes in a request that ended; `admitted` when the measured window holds it.
    pub fn request(&mut self, r: &RequestResult, admitted: bool) {
        self.whole.request(r);
        if admitted {
            self.measured.request(r);
        }
    }

    /// The stretch the run's throughputs are divided by: the window cut to the run's activity
    /// (from the later of its start and the first send to the earlier of its end and the last
    /// event), or without a window first send → last `done`. `None` when the run has no send.
    pub fn measured_span(&self, window: Option<&Window>) -> Option<(u64, u64)> {
        let first = self.whole.first_sent_ns?;
        let (start, end) = match window {
            None => (first, self.whole.last_done_ns.unwrap_or(first)),
            Some(w) => {
                let last = self.whole.last_event_ns.unwrap_or(first);
                (
                    w.start_ns.max(first),
                    w.end_ns.map_or(last, |end| end.min(last)),
                )
            }
        };
        Some((start, end.max(start)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start_ns: u64, end_ns: Option<u64>) -> Window {
        Window {
            name: "measure".into(),
            start_ns,
            end_ns,
            origin_ns: 0,
        }
    }

    #[test]
    fn a_run_without_a_send_has_no_span() {
        let mut span = RunSpan::default();
        span.token(5);
        assert_eq!(span.measured_span(None), None);
        assert_eq!(span.whole.duration_ns(), 0);
    }

    #[test]
    fn a_window_is_cut_to_the_runs_activity() {
        let span = RunSpan {
            whole: Bounds {
                first_sent_ns: Some(100),
                last_done_ns: Some(900),
                last_event_ns: Some(950),
            },
            measured: Bounds::default(),
        };
        assert_eq!(span.measured_span(None), Some((100, 900)));
        assert_eq!(span.measured_span(Some(&window(0, None))), Some((100, 950)));
        assert_eq!(
            span.measured_span(Some(&window(200, Some(500)))),
            Some((200, 500))
        );
        assert_eq!(
            span.measured_span(Some(&window(2000, Some(3000)))),
            Some((2000, 2000)),
            "a window after the run is empty, not negative"
        );
    }
}
