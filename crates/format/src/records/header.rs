//! The `header` record: which tool made a run, from what, where and when.

use crate::clock::{host_name, RunClock};
use crate::{FORMAT_MAJOR, FORMAT_MINOR};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Says which tool made a run, from what, on which host and when, so that a final table knows
/// how its data was made. A header starts a run: every record up to the next header belongs to
/// it. Tools carry their upstream headers forward in `upstream`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    /// Major version of the stream format; readers refuse a higher one than they know.
    pub format_major: u32,
    /// Minor version of the stream format; additions only.
    #[serde(default)]
    pub format_minor: u32,
    /// The tool that wrote this run (`arrivals`, `fire`, `reduce`, `simserve`).
    pub tool: String,
    /// The writing tool's version.
    pub tool_version: String,
    /// Identifies this run; `reduce` and `table` use it to tell runs apart.
    pub run_id: String,
    /// The command line that produced this run.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The random seed, where the tool draws random numbers.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Wall-clock time of the run start (t = 0), RFC 3339 in UTC with nanoseconds, read
    /// together with `monotonic_origin_ns`: the anchor that lines up runs of several hosts. Null
    /// for pure generators such as `arrivals`, whose output depends on their arguments alone.
    #[serde(default)]
    pub started_at: Option<String>,
    /// `CLOCK_MONOTONIC` at the run start, in nanoseconds: lets processes on the same host line
    /// up their stamps with this run's `*_ns` times.
    #[serde(default)]
    pub monotonic_origin_ns: Option<u64>,
    /// The host name of the machine the run was measured on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Which part of a sharded run this is, when one schedule was split across processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// `fire --start-at`: the instant the run was to start at (RFC 3339 UTC, nanoseconds), so
    /// that the parts of a plan show they were started together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// `fire --start-at`: how late the run's t = 0 was against `start_at`, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_late_ms: Option<f64>,
    /// `fire`: the request count its schedule announced, so that a reader of a run cut short
    /// knows how many requests it owned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_requests: Option<u64>,
    /// Tool-specific settings worth keeping with the data (fire's url, api and model; arrivals'
    /// rate and burstiness).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
    /// The headers of the runs this one was made from, oldest first, each without its own
    /// `upstream`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<Header>,
}

/// One part of a run split across processes or hosts: part `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    /// This part, from 0.
    pub index: u32,
    /// How many parts the run was split into.
    pub count: u32,
}

impl Header {
    /// A header of the current format version for `tool`, with nothing else filled in: every
    /// tool starts from here so that the version fields are written in one place.
    pub fn new(tool: &str, run_id: String, argv: Vec<String>) -> Self {
        Header {
            format_major: FORMAT_MAJOR,
            format_minor: FORMAT_MINOR,
            tool: tool.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            run_id,
            argv,
            seed: None,
            started_at: None,
            monotonic_origin_ns: None,
            host: None,
            shard: None,
            start_at: None,
            start_late_ms: None,
            schedule_requests: None,
            params: BTreeMap::new(),
            upstream: Vec::new(),
        }
    }

    /// The header of a run measured on this host from `clock`'s start: `new` plus the
    /// wall-clock anchor, the monotonic origin and the host name, filled in one place for every
    /// tool that takes time stamps.
    pub fn measured(tool: &str, run_id: String, argv: Vec<String>, clock: &RunClock) -> Self {
        let mut header = Header::new(tool, run_id, argv);
        header.started_at = Some(clock.anchor());
        header.monotonic_origin_ns = Some(clock.origin_ns());
        header.host = host_name();
        header
    }

    /// The upstream list a tool should write when its input carried `input`: the input's own
    /// upstream chain followed by the input header itself.
    pub fn chain(input: &Header) -> Vec<Header> {
        let mut chain = input.upstream.clone();
        let mut me = input.clone();
        me.upstream.clear();
        chain.push(me);
        chain
    }

    /// Looks up a parameter in this header or, failing that, its upstream headers (newest first).
    pub fn param(&self, key: &str) -> Option<&serde_json::Value> {
        self.params
            .get(key)
            .or_else(|| self.upstream.iter().rev().find_map(|h| h.params.get(key)))
    }

    /// The nearest header in this one's chain (itself first) written by `tool`.
    pub fn find(&self, tool: &str) -> Option<&Header> {
        std::iter::once(self)
            .chain(self.upstream.iter().rev())
            .find(|h| h.tool == tool)
    }
}
