//! The dataset readers of `arrivals` (`--dataset sharegpt FILE`, `--dataset jsonl FILE`): no
//! panic on any file, and every prompt a file gives asks for an answer in range.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokenpipe_arrivals::prompts::{self, Ask, PromptSpec, Words, MAX_TOKENS};
use tokenpipe_fuzz::scratch_file;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    let fixed_output = (mode & 2 != 0).then_some(7);
    let spec = if mode & 1 == 0 {
        PromptSpec::ShareGpt {
            path: scratch_file("json", file),
            maker: Box::new(Words),
            fixed_output,
            needed: (mode & 4 != 0).then_some(u64::from(mode >> 4)),
            seed: u64::from(mode),
        }
    } else {
        PromptSpec::Jsonl {
            path: scratch_file("jsonl", file),
            maker: Box::new(Words),
            fixed_output,
            default_output: 16,
        }
    };
    let Ok(mut source) = prompts::build(spec) else {
        return;
    };
    // As many prompts as the file has lines, at most 16: asking more would only read it again
    // (with a note on stderr each time).
    let lines = file
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .count();
    let mut rng = ChaCha8Rng::seed_from_u64(u64::from(mode));
    for index in 0..lines.min(16) as u64 {
        let ask = Ask {
            index,
            ..Ask::default()
        };
        match source.next_prompt(&ask, &mut rng) {
            Ok(p) => assert!(
                (1..=MAX_TOKENS).contains(&p.max_tokens),
                "{} tokens",
                p.max_tokens
            ),
            Err(_) => break,
        }
    }
});
