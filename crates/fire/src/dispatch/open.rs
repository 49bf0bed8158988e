//! Open loop: each request leaves at its schedule offset (`offset_ns`), whatever the server is
//! doing, so a slow server meets the load it was given instead of slowing the client down (no
//! coordinated omission). No in-flight limit.

use super::{Pace, Policy, Release};
use tokenpipe_format::Request;

/// Sends every request at its `offset_ns`.
pub struct Open;

impl Policy for Open {
    fn in_flight_limit(&self) -> Option<u64> {
        None
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
