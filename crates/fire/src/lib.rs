//! `fire`: executes a schedule against an OpenAI-compatible streaming endpoint and writes one
//! record per sent request, per content event and per finished request.
//!
//! A run is three steps (see `run`): plan it from the flags and the schedule's head, start
//! everything, and report once every request has ended. Threads: signals (see [`signals`]), the
//! dispatcher (reads the schedule, decides send instants, see [`dispatch`]), the network runtime
//! (tokio + hyper; one task per request, see [`exchange`], over the client of [`http`]), and a
//! writer per output (see [`sink`]).
//! Times are stamped on `CLOCK_MONOTONIC` relative to the run start written in the header.
//!
//! Modules import only downward, never in a circle: `run` uses everything; `dispatch` uses
//! `exchange` and `session`; `exchange` uses `http`, `job` and the output; `http`, `discover` and
//! `scrape` describe errors with `failure`; and the helpers at the bottom (`failure`, `sync`,
//! `limits`, `stop`, `job`) import nothing above them.

pub mod api;
pub mod cli;
pub mod discover;
pub mod dispatch;
pub mod exchange;
mod failure;
pub mod headers;
pub mod http;
pub mod input;
pub mod job;
pub mod limits;
pub mod live;
mod run;
pub mod salt;
pub mod scrape;
pub mod selfcheck;
pub mod session;
pub mod signals;
pub mod sink;
pub mod sse_split;
pub mod stop;
mod sync;
pub mod verdict;

pub use cli::Args;

/// Parses the process arguments and runs.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::raise_fd_limit();
    run::run(args)
}
