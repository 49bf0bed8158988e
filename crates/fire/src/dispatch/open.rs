//! Open loop: each request leaves at its schedule offset (`offset_ns`), whatever the server is
//! doing, so a slow server meets the load it was given instead of slowing the client down (no
//! coordinated omission). With a cap (`max_concurrency`), a request due while the cap is
//! reached waits for a slot; its `scheduled_ns` stays its offset, so the wait shows in its
//! queue time (`sent_ns − scheduled_ns`) rather than being hidden.

use super::{Dispatch, Pace, Policy, Release};
use tokenpipe_format::Request;

/// Sends every request at its `offset_ns`, with at most `cap` in flight.
pub struct Open {
    /// The most requests in flight, if capped.
    pub cap: Option<u64>,
}

impl Policy for Open {
    fn in_flight_limit(&self) -> Option<Dispatch> {
        self.cap.map(Dispatch::Cap)
    }

    fn release(&mut self, req: &Request, pace: &Pace) -> Result<Release, String> {
        let Some(offset) = req.offset_ns else {
            return Err("field \"offset_ns\": null in an open-loop schedule".into());
        };
        Ok(if pace.wait_until(offset) {
            Release::At(offset)
        } else {
            Release::Stopped
        })
    }
}
