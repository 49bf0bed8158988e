//! The SSE splitter: a body fed whole and fed cut where the input says give the same events,
//! the events a reference splitter written from the grammar gives, and each event's data goes
//! through the chunk readers (scanner against serde).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenpipe_fire::sse_split::SseSplitter;
use tokenpipe_fuzz::{check_chunk, reference_events};

/// The events of `pieces` fed one after the other to one splitter.
fn split<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> Vec<Vec<u8>> {
    let mut splitter = SseSplitter::new();
    let mut events = Vec::new();
    for piece in pieces {
        splitter
            .feed(piece, |e| {
                events.push(e.to_vec());
                true
            })
            .expect("a fuzz input is far below the cap on one event");
    }
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, body)) = data.split_first() else {
        return;
    };
    let whole = split(std::iter::once(body));
    assert_eq!(
        whole,
        reference_events(body),
        "the splitter and the grammar differ"
    );
    let step = usize::from(cut % 17) + 1;
    let cuts = split(body.chunks(step));
    assert_eq!(
        whole, cuts,
        "cutting the body every {step} bytes changed its events"
    );
    for event in &whole {
        check_chunk(event);
    }
});
