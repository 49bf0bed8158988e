//! `fire`: executes a schedule against an OpenAI-compatible streaming endpoint and writes one
//! record per sent request, per content event and per finished request.
//!
//! The library's entry is [`run()`]: it takes a [`Config`] (plain values; `cli` builds one from
//! the flags, the only module that knows clap), reads the schedule it names and writes the
//! events to stdout, and ends with an [`Error`] whose `Ending` says which exit status it means.
//!
//! A run is three steps (see `run`): plan it from the settings and the schedule's head, start
//! everything, and report once every request has ended. Threads: signals (see `signals`), the
//! dispatcher (reads the schedule, decides send instants, see `dispatch`), the network runtime
//! (tokio + hyper; one task per request, see [`exchange`], over the client of `http`), and a
//! writer per output (see [`sink`]).
//! Times are stamped on `CLOCK_MONOTONIC` relative to the run start written in the header.
//!
//! Modules import only downward, never in a circle: `cli` builds a `config` for `run`, which
//! uses everything; `benchy` (llama-benchy's warm-up, adapt step and latency probes, run before
//! a batch schedule's first batch) uses `http`, `failure` and `stop`; `dispatch` uses `exchange`
//! and `session`; `exchange` uses `http`, `job` and
//! the output; `http`, `discover` and `scrape` describe failed requests with `failure`; and the
//! helpers at the bottom (`error`, `failure`, `sync`, `limits`, `stop`, `job`) import nothing
//! above them (`error` names only `api`'s `BodyError`).
//!
//! Public are [`main`] (the binary), the library's entry ([`run()`], [`Config`], [`Transport`],
//! [`Error`]) and what the benchmarks in `benches/` drive directly: [`api`], [`sink`],
//! [`sse_split`] and [`exchange::request_uuid`]; everything else is the crate's own.

pub mod api;
mod benchy;
mod cli;
mod config;
mod discover;
mod dispatch;
mod error;
pub mod exchange;
mod failure;
mod headers;
mod http;
mod input;
mod job;
mod limits;
mod live;
mod run;
mod salt;
mod scrape;
mod selfcheck;
mod server_clock;
mod session;
mod signals;
pub mod sink;
pub mod sse_split;
mod start_at;
mod stop;
mod sync;
mod userinfo;
mod verdict;

pub use cli::main;
pub use config::Config;
pub use error::{CaFileError, Error};
pub use http::Transport;
pub use run::run;
