//! The flags for one plan on several hosts (`--start-at`, `--host`), under their own heading of
//! the help, and the plain [`Start`] they make (docs/fire/start.md).

use crate::start_at::{self, Start};

/// Where the run is measured and when it starts.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Several hosts")]
pub(super) struct StartArgs {
    /// Start the run at TIME: fire sleeps until 2 s before it, does its setup (runtime,
    /// client, model, --preconnect connections, the first scrape), then waits for the instant;
    /// the run's t = 0 is TIME, on every host given the same TIME. TIME is RFC 3339 (`2026-11-27T21:00:00.250Z`), or `+DUR` (`+5s`) after
    /// the reference in TOKENPIPE_START_BASE (RFC 3339 or Unix seconds), else
    /// SLURM_JOB_START_TIME. A TIME up to 60 s past is a warning and starts at once; further
    /// past, or more than 24 h ahead, is an error. The header records `start_at` and
    /// `start_late_ms`.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    start_at: Option<i128>,

    /// The host label in the header, which reduce names per part of a merged run
    /// [default: the machine's host name].
    #[arg(long, value_name = "NAME", value_parser = start_at::parse_host)]
    host: Option<String>,
}

/// `--start-at`, with the reference from the process's environment.
fn parse_start_at(text: &str) -> Result<i128, String> {
    let env = |name: &str| std::env::var(name).ok();
    start_at::parse_start_at(text, &env)
}

impl From<StartArgs> for Start {
    fn from(args: StartArgs) -> Self {
        Start {
            host: args.host,
            at_ns: args.start_at,
        }
    }
}
