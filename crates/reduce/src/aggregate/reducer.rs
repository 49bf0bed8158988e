//! The aggregators of one run, driven together: the summary's own aggregator first, then every
//! extra one the command line asked for, each seeing the same events in the same order. The
//! reducer keeps the run's span ([`RunSpan`]) and hands it to each of them at the end.

use super::{Aggregator, RunSpan, SummaryAggregator, SummaryOptions};
use crate::error::RequestError;
use crate::request::RequestResult;
use tokenpipe_format::{Client, Record, Sent, ServerMetrics, Stall, Summary, Token};

/// The summary aggregator and the extras of one run.
#[derive(Default)]
pub struct RunReducer {
    /// Builds the summary record.
    pub summary: SummaryAggregator,
    /// Add fields to the summary or write records of their own, in this order.
    pub extras: Vec<Box<dyn Aggregator>>,
    /// The instants that bound the run, for every request and for the measured ones.
    span: RunSpan,
}

impl RunReducer {
    /// A reducer with the summary aggregator and `extras`.
    pub fn new(extras: Vec<Box<dyn Aggregator>>) -> Self {
        RunReducer {
            summary: SummaryAggregator::default(),
            extras,
            span: RunSpan::default(),
        }
    }

    /// The run's summary, with every extra's fields, and the extras' last records in `out`.
    pub fn finish_summary(
        &mut self,
        label: String,
        run_id: String,
        opts: &SummaryOptions,
        out: &mut Vec<Record>,
    ) -> Summary {
        let mut summary = self.summary.finish(&self.span, label, run_id, opts);
        for extra in &mut self.extras {
            extra.finish(&self.span, &mut summary, out);
        }
        summary
    }
}

impl Aggregator for RunReducer {
    fn sent(&mut self, sent: &Sent) {
        for extra in &mut self.extras {
            extra.sent(sent);
        }
    }

    fn token(&mut self, token: &Token) {
        self.span.token(token.at_ns);
        self.summary.token(token);
        for extra in &mut self.extras {
            extra.token(token);
        }
    }

    fn add(&mut self, result: &RequestResult) -> Result<(), RequestError> {
        // The measured window is one population for every figure: a request sent outside it
        // reaches only the aggregators of the run's clock (docs/metrics.md, "Windows").
        let admitted = self.summary.admit(result);
        self.span.request(result, admitted);
        if admitted {
            self.summary.add_admitted(result)?;
        }
        for extra in &mut self.extras {
            if admitted || extra.sees_whole_run() {
                extra.add(result)?;
            }
        }
        Ok(())
    }

    fn stall(&mut self, stall: &Stall) {
        self.summary.stall(stall);
        for extra in &mut self.extras {
            extra.stall(stall);
        }
    }

    fn client(&mut self, client: &Client) {
        self.summary.client(client);
        for extra in &mut self.extras {
            extra.client(client);
        }
    }

    fn server_metrics(&mut self, scrape: &ServerMetrics) {
        for extra in &mut self.extras {
            extra.server_metrics(scrape);
        }
    }

    fn drain(&mut self, out: &mut Vec<Record>) {
        for extra in &mut self.extras {
            extra.drain(out);
        }
    }
}
