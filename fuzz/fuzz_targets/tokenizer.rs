//! The tokenizer prompt maker of `arrivals --tokenizer`, on the checked-in test tokenizer
//! (`tests/fixtures/arrivals/tokenizer.json`): every prompt it makes has exactly the asked
//! number of tokens by the tokenizer itself, whatever the length and seed; and counting any
//! text never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use tokenizers::Tokenizer;
use tokenpipe_arrivals::prompts::{Content, TokenMaker, TokenizerMaker};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/arrivals/tokenizer.json"
);

thread_local! {
    static MAKER: RefCell<TokenizerMaker> =
        RefCell::new(TokenizerMaker::open(FIXTURE.as_ref()).expect("the test tokenizer loads"));
    static TOKENIZER: Tokenizer = Tokenizer::from_file(FIXTURE).expect("the test tokenizer loads");
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let seed = u64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
    // Up to 63 tokens: the maker's rounds are the same at any length (lengths it corrects are
    // the short and the odd), and a longer prompt only costs time: the instrumented tokenizer
    // takes milliseconds per hundred tokens.
    let n = u64::from(u16::from_le_bytes([data[8], data[9]]) % 64);
    let text = String::from_utf8_lossy(&data[10..]);
    MAKER.with_borrow_mut(|maker| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let Content::Text(prompt) = maker.make(n, &mut rng) else {
            panic!("a tokenizer maker makes text");
        };
        let counted = TOKENIZER.with(|t| {
            t.encode(prompt.as_str(), false)
                .expect("a prompt encodes")
                .len() as u64
        });
        assert_eq!(counted, n, "{n} tokens asked, {counted} made: {prompt:?}");
        assert_eq!(maker.count(&prompt), n);
        let _ = maker.count(&text);
    });
});
