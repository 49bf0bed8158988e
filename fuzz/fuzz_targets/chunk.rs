//! The chunk scanner against the serde reference parser, on one event's data: whatever the
//! scanner answers, serde answers the same (as `api::scan`'s own equality tests check on their
//! corpus), and neither panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tokenpipe_fuzz::check_chunk(data);
});
