//! table's input reader (summaries with or without their headers, and vLLM result files told
//! apart by their content) and its renderers, in the style and format the first byte picks: no
//! panic on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, input)) = data.split_first() else {
        return;
    };
    tokenpipe_fuzz::render(mode, input.to_vec());
});
