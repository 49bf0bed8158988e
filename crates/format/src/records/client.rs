//! The `client` record: `fire`'s account of itself at the end of a run, so that a reader can
//! tell numbers the server produced from numbers the client distorted.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the client cost and how closely it kept its schedule; written once, last, by `fire`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Client {
    /// Run time from the header's origin to the end of the last request.
    pub wall_ns: u64,
    /// CPU time the client spent in user mode, all its threads.
    pub cpu_user_ns: u64,
    /// CPU time the client spent in the kernel, all its threads.
    pub cpu_system_ns: u64,
    /// CPU time of the threads that ran the requests over the time those threads lived, in
    /// [0, 1]: near 1 means the client was saturated.
    pub cpu_busy: f64,
    /// Network threads the client ran.
    pub threads: u32,
    /// How long the network threads waited, runnable, for a CPU each time they were given one,
    /// on average (Linux's scheduler statistics; omitted elsewhere): microseconds on a machine
    /// with CPU to spare, a large part of a millisecond when another process holds fire's CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_per_slice_ns: Option<u64>,
    /// Peak resident memory, when the system reports it.
    #[serde(default)]
    pub max_rss_bytes: Option<u64>,
    /// Requests sent.
    pub sent: u64,
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests the server or the network failed.
    pub failed: u64,
    /// Requests in flight when the run was stopped.
    pub cancelled: u64,
    /// Requests never sent because the run was stopped.
    pub not_sent: u64,
    /// Most requests in flight at once.
    pub peak_in_flight: u64,
    /// Dispatch lag (`sent_ns − scheduled_ns`) of the requests sent: median.
    #[serde(default)]
    pub dispatch_lag_p50_ns: Option<u64>,
    /// Dispatch lag, 99th percentile.
    #[serde(default)]
    pub dispatch_lag_p99_ns: Option<u64>,
    /// Dispatch lag, largest.
    #[serde(default)]
    pub dispatch_lag_max_ns: Option<u64>,
    /// How late the dispatcher thread released a request at its worst (open loop; 0 in a
    /// closed loop). Near `dispatch_lag_max_ns`, the dispatcher (reading and encoding the
    /// schedule) was the bottleneck; far below it, the network threads were.
    #[serde(default)]
    pub dispatcher_behind_max_ns: u64,
    /// True when the client kept up: requests due alone within 1 ms, waves (requests due at
    /// one instant) sent within the median TTFT, and CPU within the limits
    /// docs/fire/self-check.md gives, or the run was too short to judge (`not_judged`). False
    /// marks a run whose load or stamps the client may have distorted.
    pub kept_up: bool,
    /// Why `kept_up` is false, one sentence per reason (empty when it kept up).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Why the schedule was not judged although nothing says the client fell behind: a run
    /// too short to judge. Omitted when it was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
    /// `[lo, hi]`: bounds on the server's clock minus this host's, in ms, from the responses'
    /// `Date` headers (docs/fire/start.md), so that reduce can estimate the skew between the
    /// hosts of a merged run. Omitted when no response carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock_offset_ms: Option<[f64; 2]>,
}
