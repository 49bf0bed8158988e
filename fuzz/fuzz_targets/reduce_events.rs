//! reduce's event reader and everything it computes from fire's events, with the options the
//! first byte picks: no panic on any stream, what it writes reads back as records, and table
//! renders it without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, events)) = data.split_first() else {
        return;
    };
    tokenpipe_fuzz::reduce_and_render(mode, events.to_vec());
});
