//! What the run is doing while it runs: shared [`Counters`] that the dispatcher and every
//! request update, and the [`Progress`] view that shows them on stderr. The same counts make
//! the end-of-run summary line and the `client` record (see `selfcheck`).

mod counters;
mod progress;

#[cfg(test)]
pub use counters::wave_limit_ns;
pub use counters::{Counters, Snapshot, LAG_LIMIT_NS, WAVE_TTFT_FRACTION};
pub use progress::{say, wanted, Progress};
