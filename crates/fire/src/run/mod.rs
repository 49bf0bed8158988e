//! A whole run, in three steps, a file each. [`plan`] works out what to do from the flags and
//! the head of the schedule, before anything is started or sent, so that bad input fails
//! before a connection is opened or a byte written. [`start`] readies the network (client,
//! connections, model, first metrics scrape: [`network`]) while no clock runs, then starts the
//! clock, the output and the dispatcher. [`report`] runs the send loop until every request has
//! ended, then gives the run's account: the `client` record, the lines on stderr and the exit
//! status.

mod network;
mod plan;
mod report;
mod start;

use crate::config::Config;
use crate::error::Error;

/// Runs a whole benchmark: reads the schedule (`config.schedule`, or stdin), sends its requests
/// and writes the events to stdout, then says on stderr how the run went. Stdout and the
/// signals are the process's: Ctrl-C and SIGTERM stop the run, a second one ends the process.
pub fn run(config: Config) -> Result<(), Error> {
    let plan = plan::plan(config)?;
    let running = start::start(plan)?;
    report::report(running)
}
