//! Where reduce's finished runs go: each run's summary is written at once (with the warnings
//! it calls for), the parts of a sharded plan are folded into one run (see [`crate::shard`]),
//! and at the end of the input the plans still open and the group summaries of repeated runs
//! (see [`crate::group`]) are written.

use crate::aggregate::{RunReducer, SummaryOptions};
use crate::error::Error;
use crate::group::{GroupOptions, Grouper};
use crate::run::RunEnd;
use crate::shard::{OpenPlan, ShardPlans};
use std::io::{self, BufRead, Write};
use tokenpipe_format::{Header, Record, RecordReader, RecordWriter, Summary};

/// What reduce does across runs, beyond each run's own summary.
#[derive(Debug, Clone, Copy)]
pub struct RunsOptions {
    /// Write a group summary for every configuration with two or more runs.
    pub groups: bool,
}

impl Default for RunsOptions {
    fn default() -> Self {
        RunsOptions { groups: true }
    }
}

/// Receives every run as it ends.
pub struct RunSink<'a> {
    labels: &'a [String],
    runs: usize,
    opts: &'a SummaryOptions,
    /// `opts` with histograms on: group summaries merge them even when the written summaries
    /// leave them out.
    built: SummaryOptions,
    argv: Vec<String>,
    grouper: Option<Grouper>,
    plans: ShardPlans,
    /// The run id of the last header written, so a plan whose parts are not consecutive says
    /// its header again before its next part's records.
    current: Option<String>,
}

impl<'a> RunSink<'a> {
    /// A sink for runs named by `labels` (in order) and summarised as `opts` says.
    pub fn new(
        labels: &'a [String],
        opts: &'a SummaryOptions,
        runs: RunsOptions,
        argv: Vec<String>,
    ) -> Self {
        RunSink {
            labels,
            runs: 0,
            opts,
            built: SummaryOptions {
                histograms: true,
                ..opts.clone()
            },
            argv,
            grouper: runs.groups.then(Grouper::default),
            plans: ShardPlans::default(),
            current: None,
        }
    }

    /// How summaries are built (always with histograms; they are left out when written if
    /// `--no-histograms` asked).
    pub fn build_options(&self) -> &SummaryOptions {
        &self.built
    }

    /// The label of the next run: `--label` in order (one label names them all), else its
    /// default.
    pub fn next_label(&mut self, header: &Header) -> String {
        let label = match self.labels {
            [only] => Some(only),
            all => all.get(self.runs),
        }
        .cloned()
        .unwrap_or_else(|| default_label(header));
        self.runs += 1;
        label
    }

    /// Writes the output header of a run that is not a shard: every such run starts with its
    /// own header, even one whose run id repeats the last one's.
    pub fn start_run<W: Write>(
        &mut self,
        out: &mut RecordWriter<W>,
        header: &Header,
    ) -> io::Result<()> {
        self.current = None;
        self.write_header(out, header)
    }

    /// Writes `header` (the output header of run `header.run_id`'s results) unless it is the
    /// last one written.
    fn write_header<W: Write>(
        &mut self,
        out: &mut RecordWriter<W>,
        header: &Header,
    ) -> io::Result<()> {
        if self.current.as_deref() != Some(header.run_id.as_str()) {
            out.write(&Record::Header(header.clone()))?;
            self.current = Some(header.run_id.clone());
        }
        Ok(())
    }

    /// Writes a finished run: the extras' last records, then its summary; files the summary
    /// for its group. `input` is the run's (first) input header.
    pub fn write_run<W: Write>(
        &mut self,
        out: &mut RecordWriter<W>,
        warn: &mut dyn Write,
        source: &str,
        input: &Header,
        summary: Summary,
        last: Vec<Record>,
    ) -> io::Result<()> {
        if summary.output_stalls > 0 {
            writeln!(
                warn,
                "reduce: {source}: run {}: fire's output was blocked {} times for {:.1} ms in all; token stamps taken then may be late",
                summary.run_id, summary.output_stalls, summary.output_stall_ms
            )?;
        }
        let outside = summary.requests_outside_window.unwrap_or(0);
        if summary.requests_ok + summary.requests_failed == 0 && outside > 0 {
            writeln!(
                warn,
                "reduce: {source}: run {}: the measured window holds none of its {outside} requests (see --phase, --warmup and --measure); its summary is empty",
                summary.run_id
            )?;
        }
        if summary.client_kept_up == Some(false) {
            writeln!(
                warn,
                "reduce: {source}: run {}: the client did not keep up, so its latencies may be distorted: {}",
                summary.run_id,
                summary.client_warnings.join("; ")
            )?;
        }
        for record in last {
            out.write(&record)?;
        }
        let mut written = summary;
        written.verdict = Some(tokenpipe_format::Verdict::of(&written));
        if let Some(grouper) = &mut self.grouper {
            grouper.add(input, written.clone());
        }
        if !self.opts.histograms {
            written.histograms.clear();
        }
        out.write(&Record::Summary(Box::new(written)))?;
        // A summary is the end of a run's work: let a consumer see it now.
        out.flush()?;
        Ok(())
    }

    /// Folds the shard that `header` starts into its plan (opening one when needed), and
    /// writes the plan's summary once it has every part. `reducer` makes a fresh reducer and
    /// `output` the output header for a new plan.
    #[allow(clippy::too_many_arguments)]
    pub fn fold_shard<R: BufRead, W: Write>(
        &mut self,
        reader: &mut RecordReader<R>,
        header: &Header,
        reducer: &dyn Fn() -> RunReducer,
        output: &dyn Fn(&Header) -> Header,
        out: &mut RecordWriter<W>,
        warn: &mut dyn Write,
    ) -> Result<RunEnd, Error> {
        let source = reader.source_name().to_string();
        let at = match self.plans.position(header) {
            Some(at) => at,
            None => {
                if let Some(done) = self.plans.displaced_by(header) {
                    self.close_plan(done, out, warn)?;
                }
                let label = self.next_label(header);
                let plan =
                    OpenPlan::new(header, output(header), label, reducer()).map_err(|fault| {
                        Error::Shard {
                            input: source.clone(),
                            run: header.run_id.clone(),
                            source: fault,
                        }
                    })?;
                self.plans.open(plan)
            }
        };
        let plan_header = self.plans.get(at).output.clone();
        self.write_header(out, &plan_header)?;
        let end = {
            let mut emit = |record: Record| out.write(&record);
            let keep_events = self.opts.keeps_events(header);
            self.plans
                .get(at)
                .fold(reader, header, keep_events, &mut emit)?
        };
        warn_unfinished(warn, &source, header, &end)?;
        if let Some(done) = self.plans.take_complete(header) {
            self.close_plan(done, out, warn)?;
        }
        Ok(end)
    }

    /// Writes the merged summary of `plan`, warning when parts are missing.
    fn close_plan<W: Write>(
        &mut self,
        mut plan: OpenPlan,
        out: &mut RecordWriter<W>,
        warn: &mut dyn Write,
    ) -> io::Result<()> {
        let missing = plan.missing();
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(u32::to_string).collect();
            writeln!(
                warn,
                "reduce: warning: sharded run {}: shard(s) {} of {} missing from the input; its summary covers the other {}",
                plan.header.run_id,
                list.join(", "),
                plan.count,
                plan.count as usize - missing.len()
            )?;
        }
        self.write_header(out, &plan.output.clone())?;
        let mut last = Vec::new();
        let summary = plan.finish(&self.built, &mut last);
        crate::shard::warn_lost(warn, &plan.header.run_id, &summary)?;
        let input = plan.header.clone();
        self.write_run(out, warn, "sharded run", &input, summary, last)
    }

    /// At the end of the input: the plans still open (parts missing), then the group
    /// summaries, then a warning for `--label` values no run used.
    pub fn end<W: Write>(
        mut self,
        out: &mut RecordWriter<W>,
        warn: &mut dyn Write,
    ) -> Result<(), Error> {
        for plan in std::mem::take(&mut self.plans).into_open() {
            self.close_plan(plan, out, warn)?;
        }
        if let Some(grouper) = self.grouper.take() {
            let opts = GroupOptions {
                percentiles: &self.opts.percentiles,
                histograms: self.opts.histograms,
                argv: self.argv.clone(),
            };
            for record in grouper.finish(&opts)? {
                out.write(&record)?;
            }
        }
        if self.labels.len() > self.runs {
            writeln!(
                warn,
                "reduce: warning: {} --label values for {} run(s); the extra ones were not used",
                self.labels.len(),
                self.runs
            )?;
        }
        Ok(())
    }
}

/// Warns that a run was cut short (requests without a `done`).
pub fn warn_unfinished(
    warn: &mut dyn Write,
    source: &str,
    header: &Header,
    end: &RunEnd,
) -> io::Result<()> {
    if end.unfinished > 0 {
        writeln!(
            warn,
            "reduce: {source}: run {}: {} requests had no done record; counted as failed",
            header.run_id, end.unfinished
        )?;
    }
    Ok(())
}

/// The label a run gets without `--label`: the model named in its header chain (fire's `model`
/// parameter), else its run id.
pub fn default_label(header: &Header) -> String {
    match header.param("model") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) if !v.is_null() && !v.is_string() => v.to_string(),
        _ => header.run_id.clone(),
    }
}
