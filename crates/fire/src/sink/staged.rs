//! Token records as the network thread leaves them: a fixed 22-byte slot each, made into their
//! NDJSON lines by the writer threads, a buffer at a time.
//!
//! A token is most of what `fire` writes, and it is written at its frame's wake-up, between the
//! socket read and the next wait. Formatting its line there (three integers in decimal, the
//! keys) put the formatting code on every wake-up's path, which was then just larger than a
//! core's instruction cache: under callgrind at one stream, staging instead of formatting
//! halves the simulated I1 misses of a token (BENCHMARKS.md). A writer thread formats
//! thousands of slots in one loop, with that code hot.
//!
//! The buffer stays one ordered byte stream: a slot starts with a NUL byte, and every other
//! record in it is a JSON line, which holds no NUL (JSON escapes control characters), so
//! [`expand`] finds the slots with one `memchr` and copies the lines between them as they are.

use tokenpipe_format::writer::encode_token;
use tokenpipe_format::Token;

/// The first byte of a slot.
const TAG: u8 = 0;
/// A slot: the tag, `id` and `at_ns` (u64), `tokens` (u32), then the flags.
const SLOT: usize = 1 + 8 + 8 + 4 + 1;
const EMPTY: u8 = 1;
const REASONING: u8 = 2;

/// Appends `token` to `buf` as a slot, for [`expand`] to write as its record.
pub fn stage_token(buf: &mut Vec<u8>, token: &Token) {
    let mut slot = [0u8; SLOT];
    slot[0] = TAG;
    slot[1..9].copy_from_slice(&token.id.to_le_bytes());
    slot[9..17].copy_from_slice(&token.at_ns.to_le_bytes());
    slot[17..21].copy_from_slice(&token.tokens.to_le_bytes());
    slot[21] = (u8::from(token.empty) * EMPTY) | (u8::from(token.reasoning) * REASONING);
    buf.extend_from_slice(&slot);
}

/// Appends `staged` to `out` as NDJSON: each slot as its `token` line, the rest as it is. A
/// slot cut short (which only a buffer not made by this module could hold) ends the output.
pub fn expand(staged: &[u8], out: &mut Vec<u8>) {
    let mut rest = staged;
    while let Some(at) = memchr::memchr(TAG, rest) {
        out.extend_from_slice(&rest[..at]);
        let Some(slot) = rest.get(at..at + SLOT) else {
            return;
        };
        encode_token(out, &read_slot(slot));
        rest = &rest[at + SLOT..];
    }
    out.extend_from_slice(rest);
}

fn read_slot(slot: &[u8]) -> Token {
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&slot[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let mut tokens = [0u8; 4];
    tokens.copy_from_slice(&slot[17..21]);
    Token {
        id: u64_at(1),
        at_ns: u64_at(9),
        tokens: u32::from_le_bytes(tokens),
        empty: slot[21] & EMPTY != 0,
        reasoning: slot[21] & REASONING != 0,
    }
}

/// `staged` as the text the writers make of it, for tests.
#[cfg(test)]
pub fn expanded(staged: &[u8]) -> String {
    let mut out = Vec::new();
    expand(staged, &mut out);
    String::from_utf8(out).expect("records are UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::writer::encode_record;
    use tokenpipe_format::{Record, Stall};

    fn token(id: u64, at_ns: u64, tokens: u32, empty: bool, reasoning: bool) -> Token {
        Token {
            id,
            at_ns,
            tokens,
            empty,
            reasoning,
        }
    }

    #[test]
    fn slots_and_lines_come_out_in_order_as_the_records_would() {
        let tokens = [
            token(0, 0, 1, false, false),
            token(u64::MAX, u64::MAX, u32::MAX, true, true),
            // Bytes of a slot that are a newline, a brace or a NUL mean nothing to `expand`.
            token(10, 0x7b0a_007b, 0x0a00, false, true),
            token(3, 1, 2, true, false),
        ];
        let stall = Record::Stall(Stall {
            at_ns: 5,
            duration_ns: 6,
            buffered_bytes: 7,
        });
        let (mut staged, mut want) = (Vec::new(), Vec::new());
        for (i, t) in tokens.iter().enumerate() {
            if i % 2 == 1 {
                encode_record(&mut staged, &stall);
                encode_record(&mut want, &stall);
            }
            stage_token(&mut staged, t);
            encode_record(&mut want, &Record::Token(*t));
        }
        encode_record(&mut staged, &stall);
        encode_record(&mut want, &stall);
        assert_eq!(expanded(&staged), String::from_utf8(want).unwrap());
        assert_eq!(expanded(&[]), "");
    }

    #[test]
    fn a_slot_cut_short_ends_the_output_without_a_panic() {
        let mut staged = b"{\"type\":\"stall\"}\n".to_vec();
        stage_token(&mut staged, &token(1, 2, 3, false, false));
        for cut in 0..staged.len() {
            let text = expanded(&staged[..cut]);
            assert!(!text.contains("token"), "{cut}: {text}");
        }
    }
}
