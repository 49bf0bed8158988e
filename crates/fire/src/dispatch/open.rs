//! Open loop: each request leaves at its schedule offset (`offset_ns`), whatever the server is
//! doing, so a slow server meets the load it was given instead of slowing the client down (no
//! coordinated omission). With a cap (`max_concurrency`), a request due while the cap is
//! reached waits for a slot; its `scheduled_ns` stays its offset, so the wait shows in its
//! queue time (`sent_ns − scheduled_ns`) rather than being hidden. A session's later turns are
//! requests like any other here: each waits for a slot under the cap.

use super::{Admit, Dispatch, Policy};
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

    fn admit(&self, req: &Request) -> Result<Admit, String> {
        match req.offset_ns {
            Some(offset) => Ok(Admit::At(offset)),
            None => Err("field \"offset_ns\": null in an open-loop schedule".into()),
        }
    }
}
