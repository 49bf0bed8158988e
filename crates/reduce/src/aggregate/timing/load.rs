//! How hard the run loaded the server: peak output tokens/s over 1 s, requests in flight (mean
//! and peak), and the closed-loop framework's server throughput derived from per-user rates.
//! All over the measured span (the window, else first send → last `done`); docs/metrics.md
//! defines each.

use super::concurrency::InFlightIntervals;
use super::peak::PeakTokens;
use super::span::RunSpan;
use super::window::Window;
use crate::aggregate::Aggregator;
use crate::error::RequestError;
use crate::request::RequestResult;
use tokenpipe_format::{vocab, Header, Record, StatName, Summary, Token};

const NS_PER_S: f64 = 1e9;

/// Adds `peak_output_tps`, `mean_concurrency`, `peak_concurrency` and `server_tps_from_users`
/// to a run's summary.
#[derive(Debug)]
pub struct LoadAggregator {
    window: Option<Window>,
    /// The closed loop's N, when the run is a closed loop.
    closed_loop_n: Option<u64>,
    peak: PeakTokens,
    in_flight: InFlightIntervals,
    /// Where the run's t = 0 lies on its clock (see `Window::origin_ns`).
    origin_ns: u64,
}

impl LoadAggregator {
    /// The aggregator of the run `header` starts, measured over `window` (the whole run when
    /// `None`), on a clock whose t = 0 is at `origin_ns`.
    pub fn new(header: &Header, window: Option<Window>, origin_ns: u64) -> Self {
        let closed = header.param("mode").and_then(|m| m.as_str()) == Some("closed");
        let in_flight = window
            .as_ref()
            .map_or_else(InFlightIntervals::default, |w| {
                InFlightIntervals::within(w.start_ns, w.end_ns.unwrap_or(u64::MAX))
            });
        LoadAggregator {
            window,
            closed_loop_n: header
                .param(vocab::CONCURRENCY.key)
                .and_then(|c| c.as_u64())
                .filter(|_| closed),
            peak: PeakTokens::default(),
            in_flight,
            origin_ns,
        }
    }
}

impl Aggregator for LoadAggregator {
    fn sees_whole_run(&self) -> bool {
        true
    }

    fn token(&mut self, t: &Token) {
        if self.window.as_ref().is_none_or(|w| w.contains(t.at_ns)) {
            self.peak.add(t.at_ns, t.tokens);
        }
    }

    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if let Some(sent) = r.sent_ns {
            // Still in flight at the end of the run: it ends with the run's last event, which
            // the span never passes.
            self.in_flight.push(sent, r.done_ns.unwrap_or(u64::MAX));
        }
        Ok(())
    }

    fn finish(&mut self, span: &RunSpan, s: &mut Summary, _out: &mut Vec<Record>) {
        let Some((start, end)) = span.measured_span(self.window.as_ref()) else {
            return;
        };
        if let Some(p) = self.peak.peak(start, end) {
            s.peak_output_tps = Some(p.tokens as f64);
            s.peak_output_tps_at_s =
                Some(p.start_ns.saturating_sub(self.origin_ns) as f64 / NS_PER_S);
        }
        let concurrency = self.in_flight.over(start, end);
        if let Some(c) = concurrency {
            s.mean_concurrency = Some(c.mean);
            s.peak_concurrency = Some(c.peak);
        }
        // The mean user rate is the summary's own `user_tps_mean_tps`, which the per-request
        // metrics (run before this aggregator, over the window's successful requests) wrote.
        let mean_user_tps = s.stat_in("user_tps", StatName::Mean, "tps");
        let n = match self.closed_loop_n {
            Some(n) => Some((n as f64, "closed_loop")),
            None => concurrency.map(|c| (c.mean, "mean_concurrency")),
        };
        if let (Some(tps), Some((n, source))) = (mean_user_tps, n) {
            s.server_tps_from_users = Some(tps * n);
            s.server_tps_concurrency = Some(source.into());
        }
    }
}
