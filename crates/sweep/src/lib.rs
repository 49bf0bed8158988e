//! `sweep`: runs a benchmark pipe over one load variable, the way hyperfine's
//! `--parameter-scan` runs a command, and finds the largest load that meets an SLO.
//!
//! A layer above the stages: it runs `arrivals | fire` (any command whose stdout is fire's
//! events) as a child process and reduces what it writes with reduce's library
//! ([`tokenpipe_reduce::reduce`]). `values` reads the variable's values and checks the
//! command's `{NAME}`; `slo` reads the SLO and holds the pass rule; `search` is `--find`'s
//! search as a state machine; `knee` the saturation knee; `point` runs and judges one value
//! (`process` starts the command, `signals` passes Ctrl-C on to it); `sweep` runs a
//! [`Config`] and writes the records; `cli` is the command line that builds the config.
//! docs/sweep.md states the rules.
//!
//! The public API is what is re-exported here: [`run`] with its [`Config`] (a [`Plan`], a
//! [`Domain`], the SLO's [`Bound`]s read by [`parse_bound`]), and [`Error`].

pub(crate) mod cli;
pub(crate) mod config;
pub(crate) mod error;
pub(crate) mod knee;
pub(crate) mod point;
pub(crate) mod process;
pub(crate) mod search;
pub(crate) mod signals;
pub(crate) mod slo;
pub(crate) mod sweep;
pub(crate) mod values;

pub use cli::main;
pub use config::{Config, Plan};
pub use error::Error;
pub use knee::DEFAULT_GAIN;
pub use slo::{parse_bound, Bound};
pub use sweep::run;
pub use values::Domain;
/// The readers of `--scan`, `--find`, `--resolution` and the command's `{NAME}`, public for the
/// fuzz targets (fuzz/) that feed them any text.
pub use values::{
    check_template, parse_find, parse_resolution, parse_scan, substitute, Spec, MAX_SCAN_VALUES,
};
